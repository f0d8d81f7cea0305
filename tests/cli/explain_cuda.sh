# bitprobe explain on a GPU: the seed repro and Llama-2's RoPE cache, the
# CPU against CUDA.  SKIP (77) only where the machine has no GPU
# (need_gpu in lib.sh).
#  - seed-inv-freq fp32: CUDA computes pos / 10 as pos * (1/10), which is
#    0x3f666667 at index 9 (the correctly rounded 9/10 is the CPU's
#    0x3f666666, derived in tests/explain/check_explain.c), and its powf differs
#    from SLEEF's at index 4; y[9] is closer to 10 ** 0.9 on the CPU
#    (0.461 ulp, against 1.539 for CUDA's 7.94328308105).
#  - rope-llama2 fp32: every inv_freq difference comes from pow; cos/sin
#    differences are either made by cos/sin or inherited from inv_freq.
. "$top_srcdir/tests/cli/lib.sh"
P="$top_srcdir/probes"
need_gpu
# The JSON checks need a Python 3 (standard library); without one the
# rest runs and the test ends in SKIP.
find_python || skip_later "no Python 3: the JSON checks"

run 1 explain seed-inv-freq --probes "$P" --a cpu --b cuda --json "$TMP/seed.json"
out_has "introduced by op 1 div at x[9], with identical inputs:"
out_has "introduced by op 2 pow at y[4], with identical inputs:"
out_has "verdict: cpu correct"
py - "$TMP/seed.json" <<'PY' || fail "seed-inv-freq on CUDA: attribution"
import json, sys
x = json.load(open(sys.argv[1]))["explain"]
outs = {o["output"]: o for o in x["outputs"]}
y = {e["flat"]: e for e in outs["y"]["first"]}
assert y[4]["origin"]["kind"] == "pow" and y[4]["origin"]["flat"] == 4, y[4]["origin"]
o = y[9]["origin"]
assert (o["kind"], o["buffer"], o["flat"]) == ("div", "x", 9), o
assert (o["a"]["hex"], o["b"]["hex"], o["oracle"]["hex"]) == ("0x3f666666", "0x3f666667", "0x3f666666"), o
assert (o["ulp_a"], o["ulp_b"], o["verdict"]) == (0, 1, "a"), o
# 7.94328212738037109375 and 7.9432830810546875
assert (y[9]["a"]["hex"], y[9]["b"]["hex"]) == ("0x40fe2f5e", "0x40fe2f60"), y[9]
e = y[9]["end"]
assert e["closer"] == "a" and abs(e["reference_ulp_a"] - 0.4611) < 1e-3, e
for op in x["ops"]:
    assert op["introduced"] + op["inherited"] == op["end_to_end"], op
PY

run 1 explain rope-llama2 --probes "$P" --a cpu --b cuda --dtype fp32 --json "$TMP/rope.json"
py - "$TMP/rope.json" <<'PY' || fail "rope-llama2 on CUDA: attribution"
import json, sys
x = json.load(open(sys.argv[1]))["explain"]
ops = {o["buffer"]: o for o in x["ops"]}
for o in x["ops"]:
    assert o["introduced"] + o["inherited"] == o["end_to_end"], o
outs = {o["output"]: o for o in x["outputs"]}
inv = outs["inv_freq"]
assert inv["end_to_end"] > 0
assert [i["kind"] for i in inv["introduced_by"]] == ["pow"], inv["introduced_by"]
for f in ("cos", "sin"):
    op = ops[f + "_f32"]
    assert op["inherited"] > 0, op
    kinds = {i["kind"] for i in outs[f]["introduced_by"]}
    assert "pow" in kinds and kinds <= {"pow", f}, kinds
PY
out_has "cos_f32"
done_ok
