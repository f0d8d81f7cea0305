# bitprobe init-audit on a model written as transformers 4.36's Llama RoPE
# (tests/init_audit/llama2023.py: caches as buffers, positions from a float
# arange), built on the CPU and inside zero.Init (emulated: no DeepSpeed).
#
# What is right comes from elsewhere:
#  - the counts: PyTorch computes both caches here, by hand, from what
#    DeepSpeed's wrapper does (a float constructor's result cast to bf16 at
#    once: the positions; on PyTorch 1.x also the base of `base ** t`,
#    which Tensor.__rpow__ makes with torch.tensor), and counts the
#    elements whose bits differ;
#  - the positions: bf16 holds 256..511 in steps of 2, 512..1023 in steps
#    of 4, ... 2048..4095 in steps of 16, so the cast changes 4096 - 256 -
#    4 * 128 = 3328 of 4096, at most by 8 (2056 -> 2048), 257 -> 256 first;
#  - the oracle: the formula bitprobe writes from the model gives the bits
#    of the hand-written rope-llama2 probe's oracle golden.
# SKIP without a Python with torch.
. "$top_srcdir/tests/cli/lib.sh"
export BITPROBE_PYTHONPATH="$top_srcdir/python"
find_python torch || { echo "SKIP: no Python with torch (apt-get install python3-torch)"; exit 77; }
export PYTHON3="$PY"
# the counts below are the CPU's: zero.Init's tensors go to the GPU where
# there is one (tests/gpu/init_audit_gpu.sh checks those)
CUDA_VISIBLE_DEVICES=
export CUDA_VISIBLE_DEVICES
M="$top_srcdir/tests/init_audit"
O="$TMP/audit"

run 1 init-audit "$M/llama2023.py:float_arange" --ways cpu,zero-init -o "$O" --json "$TMP/r.json" \
    --markdown "$TMP/t.md" --effect --tokens 512
# On PyTorch 1.x inv_freq differs too (the base of `base ** t` is cast, see
# below); on PyTorch 2 it is bit-identical and only the caches differ.
legacy=0
"$PY" -c "import torch, sys; sys.exit(int(torch.__version__.split('.')[0]) < 2)" || legacy=1
if [ $legacy = 1 ]; then n=6 g=3; else n=4 g=2; fi
verdict=$(head -1 "$TMP/out")
[ "$verdict" = "init-audit drift: $n tensors ($g groups) differ from cpu in zero-init" ] ||
    fail "verdict line: $verdict"
out_has "zero-init against cpu: $n of 6 tensors: $n differ"
out_has "layers.*.self_attn.rotary_emb.cos_cached (2 buffers): F32 [4096, 128]: "
out_has "layers.*.self_attn.rotary_emb.sin_cached (2 buffers): F32 [4096, 128]: "
out_has "aten::arange [4096] in BF16: aten::_to_copy B#"
out_has "the cast fp32->bf16 changes 3328 of 4096 elements, at most by 8 (element 2056: 2056 -> 2048)"
out_has "zero-init  vs the oracle in F32: "
[ $legacy = 0 ] || out_has "cpu correctly rounded, zero-init not: cpu is right"
out_has "neither correctly rounded; cpu is closer (at most 1 ulp off"
out_has "use: cpu; the oracle sides with cpu on every RoPE tensor it computed"
out_has "avoid: zero-init: "
out_has "effect (--effect): a forward on 512 fixed token ids"
out_has "failures:"

# the counts, against PyTorch's own caches built by hand
"$PY" - "$TMP/r.json" <<'PY' || fail "the counts are not PyTorch's"
import json, sys
import torch
r = json.load(open(sys.argv[1]))
dim, P = 128, 4096
legacy = int(torch.__version__.split(".")[0]) < 2

def caches(base, t):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    fr = torch.outer(t, inv)
    emb = torch.cat((fr, fr), dim=-1)
    return {"inv_freq": inv, "cos_cached": emb.cos(), "sin_cached": emb.sin()}

ref = caches(10000, torch.arange(P, dtype=torch.float32))
base = torch.tensor(10000.0).to(torch.bfloat16) if legacy else 10000
zi = caches(base, torch.arange(P, dtype=torch.float32).to(torch.bfloat16))

def differ(a, b):
    bits = {torch.float32: torch.int32, torch.bfloat16: torch.int16}[a.dtype]
    return int((a.view(bits) != b.view(bits)).sum())

c = {c["way"]: c for c in r["comparisons"]}["zero-init"]
groups = {g["pattern"].rsplit(".", 1)[1]: g for g in c["groups"]}
for name in ("inv_freq", "cos_cached", "sin_cached"):
    want = differ(ref[name], zi[name])
    if not want:  # PyTorch 2: inv_freq's base is not cast
        g = groups.get(name)
        assert not legacy and name == "inv_freq" and (g is None or g["status"] == "identical"), \
            (name, g)
        print(name, "identical")
        continue
    g = groups[name]
    assert g["status"] == "differs" and g["count"] == 2, (name, g["status"], g["count"])
    assert g["diff"]["mismatched"] == want, (name, g["diff"]["mismatched"], want)
    wbf = differ(ref[name].to(torch.bfloat16), zi[name].to(torch.bfloat16))
    got = g["model_dtype"]["diff"]["mismatched"]
    assert g["model_dtype"]["dtype"] == "bf16" and got == wbf, (name, got, wbf)
    print(name, want, wbf)
# the introducing ops of the caches: the positions' cast, and on PyTorch 1.x
# the base's cast before it
g = groups["cos_cached"]
intro = [g["introduced"]] + g["introduced"]["also"]
ops = [(d["op"], d.get("source_op")) for d in intro]
assert ("aten::_to_copy", "aten::arange") in ops, ops
assert (("aten::_to_copy", "aten::lift_fresh") in ops) == legacy, ops
ex = [d for d in intro if d.get("source_op") == "aten::arange"][0]["explain"]["json"]
assert ex["op"] == "aten::_to_copy" and ex["cast_changes"] == {"elements": 3328, "of": 4096,
                                                              "max_abs": 8.0}, ex
assert ex["verdict"]["B"]["correctly_rounded"], ex["verdict"]
assert r["verdict"]["exit_status"] == 1 and r["recommendation"]["avoid"], r["verdict"]
# the oracle: cpu within 1 ulp of it, correctly rounded inv_freq
if legacy:
    o = groups["inv_freq"]["oracle"]
    assert o["reference"]["mismatched"] == 0 and o["way"]["mismatched"] > 0, o
o = groups["cos_cached"]["oracle"]
assert o["reference"]["max_ulp"]["value"] == 1 and not o.get("formula_mismatch"), o
# the effect: the reference against itself is nothing; the per-position
# figures add up
e = r["effect"]
assert e["status"] == "ok" and e["tokens"] == 512, e.get("why")
z = e["ways"]["zero-init"]
assert len(z["per_position_max_abs"]) == 512 and z["max_abs"] == max(z["per_position_max_abs"])
assert z["top1_flips"] == sum(z["per_position_flip"]) and z["max_abs"] > 0, z["top1_flips"]
PY
ntests=$((ntests + 1))

# the oracle's values are the hand-written probe's oracle golden, bit for bit
"$PY" - "$O/oracle/run" "$top_srcdir/golden/rope-llama2/oracle.safetensors.gz" "$M" <<'PY' ||
import os, sys
sys.path.insert(0, sys.argv[3])
from st_read import tensors
run = tensors(os.path.join(sys.argv[1], "init-rope-1", "oracle.safetensors.gz"))
gold = tensors(sys.argv[2])
for out in ("inv_freq.fp32", "cos.fp32", "sin.fp32", "cos.bf16", "sin.bf16"):
    assert gold[out] in run.values(), "the oracle's %s is not the golden's" % out
PY
    fail "the oracle's values differ from golden/rope-llama2's oracle"
ntests=$((ntests + 1))

# the bundles and ledgers it kept read with bitprobe's own commands
run 1 diff "$O/cpu" "$O/zero-init" --cast
out_has "init layers.0.self_attn.rotary_emb.cos_cached fp32 [4096, 128]: "
run 0 diff "$O/cpu" "$O/cpu-poisoned"
run 1 diff "$O/cpu/init.ledger" "$O/zero-init/init.ledger"
out_has "first introduced: B#"
# the ticket says which way to use
grep -q "^\*\*Which way to use:\*\* cpu" "$TMP/t.md" || fail "the ticket does not say which way"
grep -q "^## zero-init against cpu$" "$TMP/t.md" || fail "the ticket lacks the comparison"
[ "$(wc -c <"$TMP/t.md")" -lt 65536 ] || fail "the ticket is over 65536 bytes"
ntests=$((ntests + 1))

# run directly, the Python side gives what the command gives
run 1 init-audit "$M/llama2023.py:tiny" --ways cpu,zero-init -q
BITPROBE="$BITPROBE" PYTHONPATH="$top_srcdir/python" "$PY" -m bitprobe_torch init-audit \
    "$M/llama2023.py:tiny" --ways cpu,zero-init -q >"$TMP/direct.txt" 2>&1
[ $? -eq 1 ] || fail "python3 -m bitprobe_torch init-audit: not exit 1: $(cat "$TMP/direct.txt")"
cmp -s "$TMP/direct.txt" "$TMP/out" || fail "the two reports differ: $(diff "$TMP/out" "$TMP/direct.txt")"
ntests=$((ntests + 1))

# the fix transformers adopted: an int64 arange for the positions.  On
# PyTorch 1.x the base of `base ** t` is still cast (exit 1, nothing from
# arange); on PyTorch 2 every way agrees (exit 0).
run $legacy init-audit "$M/llama2023.py:int_arange" --ways cpu,cpu-bf16,zero-init --json "$TMP/i.json"
"$PY" - "$TMP/i.json" <<'PY' || fail "int_arange"
import json, sys, torch
r = json.load(open(sys.argv[1]))
legacy = int(torch.__version__.split(".")[0]) < 2
c = {c["way"]: c for c in r["comparisons"]}
assert all(g["status"] == "identical" for g in c["cpu-bf16"]["groups"]), c["cpu-bf16"]
zg = c["zero-init"]["groups"]
if legacy:
    for g in zg:
        ops = [d.get("source_op") for d in [g["introduced"]] + g["introduced"]["also"]]
        assert ops == ["aten::lift_fresh"], (g["pattern"], ops)
else:
    assert all(g["status"] == "identical" for g in zg), zg
PY
ntests=$((ntests + 1))
out_lacks "aten::arange [4096] in BF16"
if [ $legacy = 1 ]; then
    out_has "torch.tensor(10000) in BF16 (= 9984)"
else
    out_has "init-audit passed: every buffer of cpu-bf16, zero-init is bit-identical to cpu's"
fi
done_ok
