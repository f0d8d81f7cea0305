# bitprobe explain without a GPU: the CPU against the oracle, live and from
# saved runs.  tests/explain/seed-recip.yaml writes the seed repro's
# division as x * (1/10) on every backend; its bits are derived by hand in
# tests/explain/check_explain.c: the CPU's x[9] is 0x3f666667, the oracle's true
# quotient 0x3f666666, and y[9] (0x40fe2f60 against 0x40fe2f5e) inherits it.
. "$top_srcdir/tests/cli/lib.sh"
P="$top_srcdir/probes"
T="$top_srcdir/tests/explain"
PY="${PYTHON3:-python3}"

# The CPU's true division and SLEEF's powf give the oracle's bits at all
# ten positions of the seed repro in fp32: nothing to explain.
run 0 explain seed-inv-freq --probes "$P" --a cpu --b oracle
out_has "explain seed-inv-freq fp32: a = cpu, b = oracle"
out_has "summary: 0 output elements differ end to end"

run 1 explain seed-recip --probes "$T" --a cpu --b oracle --json "$TMP/recip.json"
out_has "1 ulp at x[9]"
out_has "introduced by op 1 div at x[9], with identical inputs:"
out_has "0.90000003576278686523     0x3f666667"
out_has "0.89999997615814208984     0x3f666666"
out_has "verdict: oracle correct"
out_has "0x40fe2f60"
out_has "the fp64 reference 7.943282347242815"
"$PY" - "$TMP/recip.json" <<'PY' || fail "seed-recip: JSON attribution"
import json, sys
x = json.load(open(sys.argv[1]))["explain"]
assert x["attribution"] == "isolated" and x["a"] == "cpu" and x["b"] == "oracle"
ops = {o["buffer"]: o for o in x["ops"]}
assert (ops["x"]["introduced"], ops["x"]["inherited"]) == (1, 0), ops["x"]
assert ops["x"]["max_ulp_introduced"] == 1 and ops["x"]["max_ulp_index"] == [9]
assert ops["x"]["verdicts"] == {"a_correct": 0, "b_correct": 1, "neither": 0,
                                "both_within_half_ulp": 0}
assert (ops["y"]["introduced"], ops["y"]["inherited"]) == (0, 1), ops["y"]
outs = {o["output"]: o for o in x["outputs"]}
(y9,) = outs["y"]["first"]
assert y9["flat"] == 9 and y9["ulp"] == 2
assert y9["a"]["hex"] == "0x40fe2f60" and y9["b"]["hex"] == "0x40fe2f5e"
o = y9["origin"]
assert (o["kind"], o["buffer"], o["flat"]) == ("div", "x", 9)
assert (o["a"]["hex"], o["b"]["hex"], o["oracle"]["hex"]) == ("0x3f666667", "0x3f666666", "0x3f666666")
assert (o["ulp_a"], o["ulp_b"], o["verdict"]) == (1, 0, "b")
# 10 ** 0.9 = 7.9432823472428150: 0x40fe2f5e is 0.461 ulp (2^-21) below it
e = y9["end"]
assert abs(e["reference"] - 7.943282347242815) < 1e-14
assert abs(e["reference_ulp_b"] - 0.4611) < 1e-3 and e["closer"] == "b"
assert outs["y"]["introduced_by"] == [{"op": 1, "buffer": "x", "kind": "div", "count": 1}]
PY

# RoPE in fp32: inv_freq, t, freqs and emb agree, so every cos/sin
# difference is made by cos/sin themselves (SLEEF against the correctly
# rounded value); the end-to-end counts must be the comparison engine's,
# as 'run' reports them.
run 0 run rope-llama2 --probes "$P" --dtype fp32 --device cpu,oracle --no-golden --json "$TMP/run.json"
run 1 explain rope-llama2 --probes "$P" --a cpu --b oracle --dtype fp32 --first 2 --json "$TMP/rope.json"
out_has "introduced by op 9 cos at cos_f32"
"$PY" - "$TMP/rope.json" "$TMP/run.json" <<'PY' || fail "rope-llama2: counts disagree"
import json, sys
x = json.load(open(sys.argv[1]))["explain"]
run = {r["output"]: r for r in json.load(open(sys.argv[2]))["results"]}
for o in x["ops"]:
    assert o["introduced"] + o["inherited"] == o["end_to_end"], o
    if "verdicts" in o:
        assert sum(o["verdicts"].values()) == o["introduced"], o
ops = {o["buffer"]: o for o in x["ops"]}
for b in ("inv_freq_f32", "freqs", "emb"):
    assert ops[b]["end_to_end"] == 0, b
for f in ("cos", "sin"):
    op = ops[f + "_f32"]
    assert op["end_to_end"] > 0 and op["introduced"] == op["end_to_end"], op
    # the oracle is b: b is always the correct side
    assert op["verdicts"]["b_correct"] == op["introduced"]
    assert ops[f]["introduced"] == 0 and ops[f]["inherited"] == op["end_to_end"]
for out in x["outputs"]:
    assert out["end_to_end"] == run[out["output"]]["mismatched"], out["output"]
    assert sum(i["count"] for i in out["introduced_by"]) == out["end_to_end"]
    if out["output"] in ("cos", "sin"):
        assert [i["kind"] for i in out["introduced_by"]] == [out["output"]]
PY

# Two saved runs: nothing can run on b, so attribution is by first
# divergence; for this probe it finds what the isolated runs found.
run 0 run seed-recip --probes "$T" --device cpu --no-golden --save "$TMP/a" --intermediates
run 0 run seed-recip --probes "$T" --device oracle --no-golden --save "$TMP/b" --intermediates
run 1 explain seed-recip --probes "$T" --a "$TMP/a" --b "$TMP/b" --json "$TMP/saved.json"
out_has "(first-divergence attribution)"
out_has "a = cpu-sleef (saved run $TMP/a), b = oracle (saved run $TMP/b)"
"$PY" - "$TMP/saved.json" "$TMP/recip.json" <<'PY' || fail "saved runs: attribution differs"
import json, sys
s = json.load(open(sys.argv[1]))["explain"]
i = json.load(open(sys.argv[2]))["explain"]
assert s["attribution"] == "first-divergence"
key = lambda o: (o["end_to_end"], o["introduced"], o["inherited"])
assert [key(o) for o in s["ops"]] == [key(o) for o in i["ops"]]
assert [o["introduced_by"] for o in s["outputs"]] == [o["introduced_by"] for o in i["outputs"]]
assert s["ops"][1]["verdicts"]["b_correct"] == 1
PY
# a saved a against a live b runs each op on b
run 1 explain seed-recip --probes "$T" --a "$TMP/a" --b oracle
out_has "Each op also ran alone on oracle with cpu-sleef's buffers as inputs"
# two runs of one backend are told apart
run 0 explain seed-recip --probes "$T" --a "$TMP/a" --b cpu
out_has "summary: 0 output elements differ"
run 0 explain seed-recip --probes "$T" --a cpu --b cpu
out_has "a = a:cpu, b = b:cpu"

# a saved run with several backend keys needs one named
run 0 run seed-recip --probes "$T" --device cpu,oracle --no-golden --save "$TMP/c" --intermediates
run 2 explain seed-recip --probes "$T" --a "$TMP/c" --b oracle
err_has "holds probe 'seed-recip' for several backend keys (cpu-sleef, oracle): name one with --a-key KEY"
run 1 explain seed-recip --probes "$T" --a "$TMP/c" --a-key cpu-sleef --b "$TMP/c" --b-key oracle
out_has "verdict: oracle correct"
run 2 explain seed-recip --probes "$T" --a "$TMP/c" --a-key cuda-sm90 --b oracle
err_has "holds probe 'seed-recip' for cpu-sleef, oracle, not for 'cuda-sm90'"
# without --intermediates a saved run lacks the inputs
run 0 run seed-recip --probes "$T" --device cpu --no-golden --save "$TMP/d"
run 2 explain seed-recip --probes "$T" --a "$TMP/d" --b oracle
err_has "has no buffer 'pos.fp32'"
# a saved run of another probe
run 2 explain seed-inv-freq --probes "$P" --a "$TMP/a" --b oracle
err_has "holds no buffers of probe 'seed-inv-freq'"

# usage and bad input
run 2 explain seed-recip --probes "$T" --a cpu
err_has "needs both --a and --b"
run 2 explain --a cpu --b oracle
err_has "needs one probe"
run 2 explain no-such-probe --probes "$T" --a cpu --b oracle
err_has "unknown probe 'no-such-probe'"
run 2 explain seed-recip --probes "$T" --a "$TMP/nowhere" --b oracle
err_has "is neither a backend (cpu, oracle, cuda) nor a saved run directory"
run 2 explain seed-recip --probes "$T" --a cpu --b oracle --dtype bf16
err_has "does not run in 'bf16'"
run 2 explain seed-recip --probes "$T" --a cpu --a-key cpu-sleef --b oracle
err_has "--a-key applies to a saved run"
run 2 explain seed-recip --probes "$T" --a cpu --b oracle --first many
err_has "needs a count"
done_ok
