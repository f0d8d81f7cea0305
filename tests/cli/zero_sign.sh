# Bits are bits: +0 against -0 is a difference of its own class in every
# command and every report, counted in the "+0/-0" bin; a policy key
# (zero_sign: ignore, in a probe or --policy) or --zero-sign ignore excuses
# it, and the reports say how many they excused.  The dumps are written
# here bit by bit (0x80000000 is -0.0f, 0x00000000 +0.0f; fp16 0x8000,
# bf16 0x8000); the probe's -0 comes from torch.maximum's scalar tail
# (std::max gives its first operand, -0, where the vector lanes give +0:
# PyTorch 1.13 and 2.x, 40 elements, the last 8 in the tail).
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python to write the files"; exit 77; }
py - "$TMP" <<'PY' || fail "cannot write the files"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "cli"))
from tensorfile import st, npy
d = sys.argv[1]
# one fp32 element: -0.0 in a, +0.0 in b; the other tensors equal
st(d + "/a.safetensors", [("x", "F32", [1], struct.pack("<I", 0x80000000)),
                          ("same", "F32", [2], struct.pack("<2I", 0x3f800000, 0x80000000))])
st(d + "/b.safetensors", [("x", "F32", [1], struct.pack("<I", 0x00000000)),
                          ("same", "F32", [2], struct.pack("<2I", 0x3f800000, 0x80000000))])
# .npy fp16 and fp64: a zero's sign and one ulp
npy(d + "/h_a.npy", "<f2", [0x8000, 0x3c00], "H")
npy(d + "/h_b.npy", "<f2", [0x0000, 0x3c01], "H")
npy(d + "/d_a.npy", "<f8", [0x0000000000000000, 0x8000000000000000], "Q")
npy(d + "/d_b.npy", "<f8", [0x8000000000000000, 0x8000000000000000], "Q")
PY
a="$TMP/a.safetensors" b="$TMP/b.safetensors"

# --- diff: exit 1, one element counted, in every format ---
run 1 diff "$a" "$b" --json "$TMP/d.json" --junit "$TMP/d.xml" --markdown "$TMP/d.md"
head -1 "$TMP/out" | grep -qxF "drift: 1 of 2 compared beyond policy (1 identical)" ||
    fail "verdict: $(head -1 "$TMP/out")"
out_has "x fp32 [1]: $b vs $a: 1 of 1 differ (100%), in the sign of a zero only: DRIFT (policy exact)"
py - "$TMP/d.json" <<'PY' || fail "the JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 3
r = {x["probe"]: x for x in d["results"]}
x = r["x"]
assert (x["status"], x["mismatched"], x["zero_sign_diffs"], x["zero_sign_excused"],
        x["beyond_policy"]) == ("drift", 1, 1, 0, 1), x
assert x["histogram"] == {"+0/-0": 1}, x["histogram"]
assert x["first"][0]["ulp"] == 0 and x["first"][0]["a"]["hex"] == "0x80000000", x["first"]
assert x["first"][0]["b"]["hex"] == "0x00000000"
assert r["same"]["status"] == "identical"
assert d["summary"]["excused"] == {"zero_sign": 0, "nan_payload": 0}, d["summary"]
PY
grep -qF '<testsuites name="bitprobe" tests="2" failures="1" errors="0" skipped="0">' "$TMP/d.xml" ||
    fail "JUnit counts: $(sed -n 2p "$TMP/d.xml")"
grep -qF 'message="1 of 1 element differs (100%), in the sign of a zero only; 1 beyond policy exact"' \
    "$TMP/d.xml" || fail "JUnit message: $(grep failure "$TMP/d.xml")"
grep -qF '[0] sign of zero' "$TMP/d.xml" || fail "JUnit detail"
grep -qF '| sign of zero | **DRIFT** |' "$TMP/d.md" || fail "Markdown summary row"
grep -qF '| +0/-0 | 1 | 100 |' "$TMP/d.md" || fail "Markdown histogram"
grep -qF '1 element differs in the sign of a zero only (+0 against -0).' "$TMP/d.md" ||
    fail "Markdown note"
run 1 diff "$a" "$b" --github
out_has "::error title=bitprobe drift%3A x fp32%3A $b vs $a::x fp32: $b vs $a: 1 of 1 element differs (100%25), in the sign of a zero only; 1 beyond policy exact"
# the verbose detail shows the bits and names the class
run 1 diff "$a" "$b" -v
out_has "ulp histogram: +0/-0:1"
out_has "0x00000000 0 00000000 00000000000000000000000  (sign of zero)"

# --- excused: by the diff policy or the flag, exit 0, counted as excused ---
for how in "--policy zero_sign=ignore" "--zero-sign ignore" "--policy exact,zero_sign=ignore"; do
    # shellcheck disable=SC2086
    run 0 diff "$a" "$b" $how --json "$TMP/e.json"
    head -1 "$TMP/out" | grep -qxF "passed: 2 compared (1 identical, 1 within policy); excused: 1 sign of a zero" ||
        fail "$how: verdict $(head -1 "$TMP/out")"
    out_has "1 of 1 differ (100%), in the sign of a zero only (excused): within policy"
    py - "$TMP/e.json" <<'PY' || fail "$how: the JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
x = [r for r in d["results"] if r["probe"] == "x"][0]
assert (x["status"], x["zero_sign_diffs"], x["zero_sign_excused"], x["beyond_policy"]) == \
    ("within_policy", 1, 1, 0), x
assert d["summary"]["excused"]["zero_sign"] == 1, d["summary"]
PY
done
run 2 diff "$a" "$b" --zero-sign maybe
err_has "--zero-sign takes count or ignore, not 'maybe'"
run 2 diff "$a" "$b" --policy zero_sign=maybe
err_has "zero_sign wants ignore or count, got 'maybe'"
# --nan-payload does not make the sign of a zero count: it counts already
run 1 diff "$a" "$b" --nan-payload

# --- .npy fp16 and fp64 ---
run 1 diff "$TMP/h_a.npy" "$TMP/h_b.npy" -v
out_has "2 of 2 differ (100%), max 1 ulp, max abs 0.000976562 at [1], 1 in the sign of a zero: DRIFT"
out_has "ulp histogram: +0/-0:1 1:1"
run 1 diff "$TMP/d_a.npy" "$TMP/d_b.npy"
out_has "1 of 2 differ (50%), in the sign of a zero only: DRIFT"

# --- report reads the counts back, and so does a schema 2 report ---
run 1 report "$TMP/d.json"
out_has "1 of 1 differ (100%), in the sign of a zero only: DRIFT (policy exact)"
run 0 report "$TMP/e.json"
out_has "excused: 1 sign of a zero"

# --- a probe: cpu and oracle differ only in the sign of a zero ---
mkdir -p "$TMP/p"
sed 's/^dtypes: .*/dtypes: [fp32]/' "$top_srcdir/tests/data/max-zero.yaml" >"$TMP/p/max-zero.yaml"
run 0 run "$TMP/p/max-zero.yaml" --device cpu,oracle --no-golden
out_has "max-zero m fp32 [40]: oracle vs cpu: 8 of 40 differ (20%), in the sign of a zero only: differs (informational)"
run 1 run "$TMP/p/max-zero.yaml" --device cpu,oracle --no-golden --agree -vv
out_has "oracle vs cpu: 8 of 40 differ (20%) DRIFT, in the sign of a zero only; policy exact"
out_has "ulp histogram: 0:32 +0/-0:8"
out_lacks "bit-identical"
run 0 run "$TMP/p/max-zero.yaml" --device cpu,oracle --no-golden --agree --zero-sign ignore
out_has "excused: 8 signs of zeros"
# a probe's policy excuses it by name, and that changes the probe's hash
sed 's/  - {name: m}/  - {name: m, policy: {zero_sign: ignore}}/' "$TMP/p/max-zero.yaml" \
    >"$TMP/p/max-zero-ok.yaml"
sed -i 's/^name: max-zero/name: max-zero-ok/' "$TMP/p/max-zero-ok.yaml"
run 0 run "$TMP/p/max-zero-ok.yaml" --device cpu,oracle --no-golden --agree
out_has "max-zero-ok m fp32 [40]: oracle vs cpu: 8 of 40 differ (20%), in the sign of a zero only (excused): within policy (policy exact,zero_sign=ignore)"
head -1 "$TMP/out" | grep -qxF "passed: 1 compared (1 within policy); excused: 8 signs of zeros" ||
    fail "verdict: $(head -1 "$TMP/out")"
mkdir -p "$TMP/q"
sed "s/zero_sign: ignore/zero_sign: maybe/; s/^name: max-zero-ok/name: bad/" "$TMP/p/max-zero-ok.yaml" \
    >"$TMP/q/bad.yaml"
run 2 run "$TMP/q/bad.yaml" --device cpu --no-golden
out_has "bad.yaml:14:35: "
out_has "zero_sign must be ignore or count, got maybe"
# explain names the op that introduced them and the side that is right
run 1 explain max-zero --probes "$TMP/p" --a cpu --b oracle
out_has "output m: 8 of 40 differ end to end; introduced by op 2 maximum (m): 8"
out_has "verdict: oracle correct"
run 0 explain max-zero --probes "$TMP/p" --a cpu --b oracle --zero-sign ignore
done_ok
