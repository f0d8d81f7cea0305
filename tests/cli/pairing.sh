# Pairing means one thing everywhere: diff --consensus pairs runs as plain
# diff does (backend keys by key, then by name: cpu-sleef with cpu-libm;
# single tensors whatever their names), and nothing compared exits 2 in
# every command with its reason ("no tensor in common", "one-sided", "not
# comparable"); a dtype bitprobe does not read is named.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python to write the files"; exit 77; }

# --- two runs with different CPU keys: consensus compares what diff does ---
run 0 run unary-sweep seed-div --device cpu --no-golden --save "$TMP/ra" --quiet
run 0 run unary-sweep seed-div --device cpu --cpu-math libm --no-golden --save "$TMP/rb" --quiet
ka=$(ls "$TMP/ra/seed-div") kb=$(ls "$TMP/rb/seed-div")
[ "$ka" != "$kb" ] || fail "the two runs have one key ($ka)"
run 1 diff "$TMP/ra" "$TMP/rb"
n=$(head -1 "$TMP/out" | sed -n 's/^drift: \([0-9]*\) of \([0-9]*\) compared beyond policy.*/\1 \2/p')
[ -n "$n" ] || fail "plain diff's verdict: $(head -1 "$TMP/out")"
set -- $n
run 1 diff --consensus "$TMP/ra" "$TMP/rb" --json "$TMP/c.json"
head -1 "$TMP/out" | grep -qF "consensus: DIFFER: no majority in $1 of $2 tensors" ||
    fail "consensus verdict: $(head -1 "$TMP/out"), plain diff: $1 of $2"
out_lacks "missing from some runs"
py - "$TMP/c.json" "$1" "$2" <<'PY' || fail "consensus JSON"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["tally"]
assert d["verdict"] == "differ" and d["exit_status"] == 1, d["verdict"]
assert t["split"] == int(sys.argv[2]) and t["partial"] == 0, t
assert t["items"] == int(sys.argv[3]), t
PY
# a copy agrees; the third run pairs with the first as the second does
cp -r "$TMP/ra" "$TMP/ra2"
run 0 diff --consensus "$TMP/ra" "$TMP/ra2"
out_has "consensus: AGREE: 2 runs, $2 tensors, each bit-identical in every run that has it"
cp -r "$TMP/rb" "$TMP/rc"
run 1 diff --consensus "$TMP/ra" "$TMP/rb" "$TMP/rc"
out_has "1 of 3 runs is an outlier in $1 of $2 tensors"

# --- nothing in common: exit 2 with the reason, in diff and consensus ---
run 0 run seed-div --device cpu --no-golden --save "$TMP/s1" --quiet
run 0 run seed-inv-freq --device cpu --no-golden --save "$TMP/s2" --quiet
run 2 diff --consensus "$TMP/s1" "$TMP/s2" --json "$TMP/n.json"
out_has "consensus: error: nothing compared (no tensor in common)"
grep -qF '"verdict": "error"' "$TMP/n.json" || fail "consensus JSON verdict"
run 2 diff "$TMP/s1" "$TMP/s2"
head -1 "$TMP/out" | grep -qF "error: nothing compared (no tensor in common); 3 only in a; 6 only in b" ||
    fail "diff verdict: $(head -1 "$TMP/out")"

py - "$TMP" <<'PY' || fail "cannot write the files"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "cli"))
from tensorfile import st, npy
d = sys.argv[1]
for sub in ("da", "db"):
    os.makedirs(os.path.join(d, sub))
one = struct.pack("<f", 1.0)
st(d + "/da/x.safetensors", [("w", "F32", [1], one)])
st(d + "/da/y.safetensors", [("w", "F32", [1], one)])
st(d + "/db/z.safetensors", [("w", "F32", [1], one)])
# a tensor of a dtype bitprobe does not read, alone in its file
st(d + "/q8a.safetensors", [("w", "Q8", [4], b"\x01\x02\x03\x04")])
st(d + "/q8b.safetensors", [("w", "Q8", [4], b"\x01\x02\x03\x05")])
st(d + "/empty.safetensors", [])
# .npy files are one tensor each, named after the file: paired whatever
# their names, as diff pairs them
npy(d + "/host1.npy", "<f4", [0x3f800000, 0x40000000], "I")
npy(d + "/host2.npy", "<f4", [0x3f800000, 0x40000000], "I")
npy(d + "/host3.npy", "<f4", [0x3f800000, 0x40000001], "I")
PY
# two directories, as diff -r, without a file in common
run 2 diff "$TMP/da" "$TMP/db" --json "$TMP/dd.json" --junit "$TMP/dd.xml"
head -1 "$TMP/out" | grep -qF "error: nothing compared (no tensor in common); 2 only in a; 1 only in b" ||
    fail "diff -r verdict: $(head -1 "$TMP/out")"
grep -qF '"nothing_compared": "no tensor in common"' "$TMP/dd.json" || fail "JSON reason"
grep -qF 'errors="1"' "$TMP/dd.xml" || fail "JUnit: nothing compared is an error: $(sed -n 2p "$TMP/dd.xml")"
# one side empty
run 2 diff "$TMP/da/x.safetensors" "$TMP/empty.safetensors"
head -1 "$TMP/out" | grep -qF "error: nothing compared (one-sided); 1 only in a" ||
    fail "one-sided verdict: $(head -1 "$TMP/out")"
# the only tensor of an unknown dtype: not comparable, named, exit 2
run 2 diff "$TMP/q8a.safetensors" "$TMP/q8b.safetensors" --json "$TMP/q.json"
head -1 "$TMP/out" | grep -qF "error: nothing compared (not comparable); 1 not comparable" ||
    fail "Q8 verdict: $(head -1 "$TMP/out")"
out_has "not comparable: unknown dtype Q8: Q8 [4] in A, Q8 [4] in B"
grep -qF '"dtype": "Q8"' "$TMP/q.json" || fail "JSON names the dtype"
# a single tensor each: consensus pairs them as diff does
run 0 diff "$TMP/host1.npy" "$TMP/host2.npy"
run 0 diff --consensus "$TMP/host1.npy" "$TMP/host2.npy"
out_has "consensus: AGREE: 2 runs, 1 tensor, bit-identical in every run that has it"
run 1 diff --consensus "$TMP/host1.npy" "$TMP/host2.npy" "$TMP/host3.npy"
out_has "1 of 3 runs is an outlier in 1 of 1 tensor"
out_has "$TMP/host3.npy: 1 of 2 differ, max 1 ulp, first at [1]"
done_ok
