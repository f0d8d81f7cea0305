# run --timing: the figures on stderr and under "timing" in the JSON report;
# bless refuses it.  The memo (on by default) changes no bit: a run with
# BP_NO_MEMO=1 saves the same tensors, every buffer included.
. "$top_srcdir/tests/cli/lib.sh"
P="$TMP/probes"
mkdir -p "$P"
cp "$top_srcdir/probes/seed-div.yaml" "$top_srcdir/probes/rope-apply.yaml" "$P/"
opts="--probes $P --no-golden --device cpu,oracle"

run 0 run seed-div $opts --timing --json "$TMP/r.json" --quiet
err_has "timing (wall seconds, CLOCK_MONOTONIC):"
err_has "seed-div                 bf16"
err_has "total "
err_has "CPU (user "
"${PYTHON3:-python3}" - "$TMP/r.json" <<'PY' || fail "JSON timing incomplete"
import json, sys
t = json.load(open(sys.argv[1]))["timing"]
names = [b["name"] for b in t["backends"]]
assert names == ["cpu", "oracle"], names
for b in t["backends"]:
    assert b["opened"] and b["elements"] > 0 and b["elements_per_second"] > 0, b
    assert b["open"] >= 0 and b["run"] > 0 and b["context_start"] == 0 and b["driver_init"] == 0, b
runs = {(r["probe"], r["dtype"], r["backend"]) for r in t["runs"]}
assert runs == {("seed-div", d, b) for d in ("fp32", "bf16", "fp16")
                for b in ("cpu", "oracle")}, runs
assert t["total"] > 0 and t["user"] >= 0 and "report" not in t
PY

run 0 run seed-div $opts --json "$TMP/plain.json" --quiet
"${PYTHON3:-python3}" -c 'import json,sys; assert "timing" not in json.load(open(sys.argv[1]))' \
    "$TMP/plain.json" || fail "timing in the JSON report without --timing"

run 2 bless seed-div --probes "$P" --golden "$TMP/g" --timing
err_has "unknown option '--timing'"

# Memo on and off: the same bits in every saved buffer of every dtype; the
# timing says what was reused.
run 0 run rope-apply $opts --save "$TMP/memo" --intermediates --timing --json "$TMP/m.json" --quiet
BP_NO_MEMO=1 "$BITPROBE" run rope-apply $opts --save "$TMP/nomemo" --intermediates \
    --timing --json "$TMP/n.json" --quiet >"$TMP/out" 2>"$TMP/err" ||
    fail "run with BP_NO_MEMO=1 failed"
"${PYTHON3:-python3}" - "$TMP" <<'PY' || fail "memo changed bits, or reused nothing"
import gzip, json, struct, sys
d = sys.argv[1]
def tensors(d):
    out = {}
    for f in json.load(open(d + "/manifest.json"))["files"]:
        raw = gzip.open(d + "/" + f).read()
        n = struct.unpack("<Q", raw[:8])[0]
        hdr = json.loads(raw[8:8 + n])
        hdr.pop("__metadata__", None)
        for name, t in hdr.items():
            b, e = t["data_offsets"]
            out[f + ":" + name] = (t["dtype"], t["shape"], raw[8 + n + b:8 + n + e])
    return out
a, b = tensors(d + "/memo"), tensors(d + "/nomemo")
assert a.keys() == b.keys() and len(a) > 40, (len(a), len(b))
bad = [k for k in a if a[k] != b[k]]
assert not bad, bad[:5]
m = json.load(open(d + "/m.json"))["timing"]["backends"]
n = json.load(open(d + "/n.json"))["timing"]["backends"]
for x, y in zip(m, n):
    assert x["reused"] > 0 and y["reused"] == 0, (x, y)
    assert x["elements"] + x["reused"] == y["elements"], (x, y)
PY
done_ok
