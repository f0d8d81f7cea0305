#!/bin/sh
# The op ledger on a GPU machine (PyTorch with CUDA): the Llama-style block
# of tests/ledger_torch/llama_block.py recorded on the CPU and on CUDA, the
# two ledgers diffed, the first op that introduced a difference named
# (expected: the pow or a division of the RoPE frequencies, as bitprobe's
# own probes find), and that op turned into a probe whose inputs, run on
# bitprobe's cpu and cuda backends, give back each side's bits; then the
# recorder's overhead (hashes only; target at most 2x).  The block has a
# head dim of 128, as Llama's, so that RoPE has 64 frequencies.
#
# Builds nothing: run it from a configured and built tree with CUDA
#   sh tests/gpu/ledger_gpu.sh
# Logs go to ${OUT:-/tmp/out}/ledger/.  Exit 0 when every check holds, 1
# when one fails (each failure is listed at the end), 77 when this machine
# has no GPU for PyTorch or for bitprobe.
set -u
B=${BITPROBE:-./src/bitprobe}
OUT=${OUT:-/tmp/out}/ledger
mkdir -p "$OUT"
PY=${PYTHON3:-python3}
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
M=tests/ledger_torch/llama_block.py
fails=
fail() { echo "FAIL: $*"; fails="$fails
  $*"; }

"$PY" -c 'import torch' 2>/dev/null || { echo "SKIP: $PY has no torch"; exit 77; }
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' || {
    echo "SKIP: PyTorch sees no CUDA device here: the GPU steps (recording on cuda, bitprobe's cuda backend) need one"
    exit 77; }
"$B" list 2>/dev/null | grep -q '^ *cuda *available' || {
    echo "SKIP: bitprobe's cuda backend is not available: $("$B" list 2>&1 | grep -i cuda)"
    exit 77; }
"$PY" -c '
import torch
cap = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", lambda: "?")()
print("PyTorch", torch.__version__, "CUDA", torch.version.cuda, "on", torch.cuda.get_device_name(0) + ";",
      "CPU capability", cap + ", MKL", "yes" if torch.backends.mkl.is_available() else "no")' | tee "$OUT/env.txt"

echo "== the hash on the GPU: compiled kernel and torch ops against the Python reference; the recorder's caches against the bytes"
"$PY" tests/ledger_torch/hash_check.py --device cuda >"$OUT/hash_check.txt" 2>&1 ||
    fail "hash_check --device cuda (see $OUT/hash_check.txt)"
cat "$OUT/hash_check.txt"
"$PY" tests/ledger_torch/cache_check.py --device cuda >"$OUT/cache_check.txt" 2>&1 ||
    fail "cache_check --device cuda (see $OUT/cache_check.txt)"
tail -1 "$OUT/cache_check.txt"

echo "== recording: the block on the CPU (every tensor captured), then on CUDA (the ops that diverge captured)"
# Head dim 128 (dim 512 over 4 heads), as Llama's: RoPE has 64 frequencies,
# and bitprobe's goldens of probes/rope-llama2.yaml (the same formulation,
# head dim 128) differ in 4 of those 64 between cpu-sleef-avx512 and
# cuda-sm90.  (With a head dim of 16 the 8 frequencies agree: the first
# difference is then the CPU's cos.)
MODEL="--dim 512 --heads 4 --hidden 256 --layers 2 --seq 300 --vocab 64"
HALF=64   # head dim / 2: the length of the frequency vector
echo "model: $M $MODEL"
rm -f "$OUT"/cpu.ledger* "$OUT"/cuda.ledger*
"$PY" -m bitprobe_torch record -o "$OUT/cpu.ledger" --capture-bytes 256M $M $MODEL --device cpu \
    >"$OUT/record_cpu.txt" 2>&1 || fail "recording on the CPU (see $OUT/record_cpu.txt)"
"$PY" -m bitprobe_torch record -o "$OUT/cuda.ledger" --reference "$OUT/cpu.ledger" $M $MODEL \
    --device cuda >"$OUT/record_cuda.txt" 2>&1 || fail "recording on CUDA (see $OUT/record_cuda.txt)"
tail -1 "$OUT/record_cpu.txt"; tail -1 "$OUT/record_cuda.txt"
tail -1 "$OUT/cuda.ledger"; echo

echo "== bitprobe diff cpu.ledger cuda.ledger"
"$B" diff "$OUT/cpu.ledger" "$OUT/cuda.ledger" --json "$OUT/diff.json" >"$OUT/diff.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "diff exit $rc, expected 1 (the devices differ)"
head -12 "$OUT/diff.txt"
# op, module, id for explain, output shape and dtype (from the ledger that
# holds the op), e.g. "aten::pow.Scalar rope b64 64 F32"
first=$("$PY" -c '
import json, sys
f = json.load(open(sys.argv[1]))["ledger"]["first_introduced"]
if not f:
    print("none"); sys.exit(0)
side = "b" if f["b"] is not None else "a"
seq = f[side]
shape, dt = "?", "?"
for line in open(sys.argv[2] if side == "a" else sys.argv[3]):
    r = json.loads(line)
    if r.get("seq") == seq and r.get("out"):
        shape = "x".join(str(d) for d in r["out"][0]["shape"]) or "scalar"
        dt = r["out"][0]["dtype"]
        break
print(f["op"], f["module"] or "-", "%s%d" % (side, seq), shape, dt)' \
    "$OUT/diff.json" "$OUT/cpu.ledger" "$OUT/cuda.ledger" 2>"$OUT/first.err")
[ -n "$first" ] || fail "reading the first introduced op from $OUT/diff.json: $(cat "$OUT/first.err")"
set -- ${first:-none}
op=${1:-none} mod=${2:-} id=${3:-} shape=${4:-} dt=${5:-}
echo "first introduced: $op in module '$mod' ($id), out[0] $dt [$shape]"
# The RoPE frequencies are 1.0 / (base ** (arange(0, hd, 2).float() / hd)):
# aten::div (by hd), aten::pow (base ** ...: pow.Scalar, or pow.Tensor_Tensor
# where the base is lifted to a tensor), aten::reciprocal and aten::mul (by
# 1.0: Python's 1.0 / t is t.reciprocal() * 1.0), each with a [hd/2] fp32
# result in module rope.  The div by 128 and the mul by 1.0 are exact, so
# pow or reciprocal is expected; any of the four is that computation.
in_freq=no
case "$op" in
aten::pow.* | aten::reciprocal | aten::div.* | aten::true_divide* | aten::mul.*)
    [ "$mod" = rope ] && [ "$shape" = "$HALF" ] && [ "$dt" = F32 ] && in_freq=yes ;;
esac
if [ $in_freq = yes ]; then
    echo "PASS: the first introduced op is $op in the RoPE frequencies (module rope, F32 [$HALF])"
elif [ "$op" = none ]; then
    fail "diff found no introduced op (see $OUT/diff.txt)"
else
    fail "the first introduced op is $op in module '$mod' ($id, out[0] $dt [$shape]), not a pow or division in the RoPE frequencies (module rope, F32 [$HALF]): the frequencies agreed on both sides, unlike bitprobe's goldens of rope-llama2"
fi

echo "== bitprobe explain: the op as a probe, on the oracle, cpu and cuda"
rm -rf "$OUT/explain"; mkdir -p "$OUT/explain"
if [ -n "$id" ]; then
    "$B" explain "$OUT/cpu.ledger" "$OUT/cuda.ledger" --op "$id" --out "$OUT/explain" \
        --device cpu,cuda --json "$OUT/explain.json" >"$OUT/explain.txt" 2>&1
    rc=$?
else
    rc=none; : >"$OUT/explain.txt"
fi
[ "$rc" = 1 ] || fail "explain exit $rc, expected 1 (see $OUT/explain.txt)"
sed -n '1,12p' "$OUT/explain.txt"
# The CPU side's fp32/fp64 sin, cos, exp, log, tanh and sqrt come from MKL's
# VML where PyTorch is built with MKL (x86 wheels): bitprobe's cpu backend
# models SLEEF (probes/README.md), so its bits are not expected there.
mkl=$("$PY" -c 'import torch; print("yes" if torch.backends.mkl.is_available() else "no")' 2>/dev/null)
cpu_modelled=yes
case "$op" in
aten::sin | aten::cos | aten::exp | aten::log | aten::tanh | aten::sqrt)
    case "$dt" in F32 | F64) [ "$mkl" = yes ] && cpu_modelled=no ;; esac ;;
esac
if [ $cpu_modelled = yes ]; then
    grep -q '^  cpu     reproduces A.s bits$' "$OUT/explain.txt" &&
        echo "PASS: bitprobe's cpu backend reproduces the CPU side's bits of $op" ||
        fail "bitprobe's cpu backend does not reproduce the CPU side's bits of $op ($(grep '^  cpu ' "$OUT/explain.txt" | sed 's/^ *//' | grep . || echo "no line for cpu in $OUT/explain.txt"))"
else
    echo "NOTE: not checked: the CPU side's $dt ${op#aten::} is MKL VML's (this PyTorch has MKL), which bitprobe's cpu backend does not model ($(grep '^  cpu ' "$OUT/explain.txt" | sed 's/^ *//' | grep . || echo "no line for cpu in $OUT/explain.txt"))"
fi
grep -q '^  cuda    reproduces B.s bits$' "$OUT/explain.txt" &&
    echo "PASS: bitprobe's cuda backend reproduces the CUDA side's bits of $op" ||
    fail "bitprobe's cuda backend does not reproduce the CUDA side's bits of $op ($(grep '^  cuda ' "$OUT/explain.txt" | sed 's/^ *//' | grep . || echo "no line for cuda in $OUT/explain.txt"))"
grep '^verdict:' "$OUT/explain.txt" || fail "explain gave no verdict (see $OUT/explain.txt)"
ls "$OUT/explain"

echo "== the recorder's overhead (hashes only), at three sizes; the 2x target is judged on 'realistic'"
# tiny: tensors of a few hundred bytes (the recorder's cost per op: Python
# and launches); gpu: 4 layers of hidden 2048, 2 x 2048 tokens (a forward of
# ~15 ms on an H100); realistic: the same layers at batch 4 x seq 4096 bf16,
# a small Llama-style model at a realistic batch.
for preset in tiny gpu realistic; do
    rep=5; [ $preset = tiny ] && rep=21
    "$PY" bench/ledger_overhead.py --device cuda --preset $preset --repeat $rep \
        >"$OUT/overhead_$preset.txt" 2>&1 ||
        fail "bench/ledger_overhead.py --device cuda --preset $preset (see $OUT/overhead_$preset.txt)"
    echo "-- preset $preset"
    cat "$OUT/overhead_$preset.txt"
done
"$PY" bench/ledger_overhead.py --device cuda --preset gpu --no-cuda-kernel >"$OUT/overhead_gpu_torchops.txt" 2>&1 &&
    { echo "-- preset gpu, with torch ops instead of the kernel:"; grep -E "^(hash|forward)" "$OUT/overhead_gpu_torchops.txt"; }
ratio=$(sed -n 's/^forward, .*recorded [0-9.]* s: \([0-9.]*\)x.*/\1/p' "$OUT/overhead_realistic.txt" | head -n 1)
if [ -z "$ratio" ]; then
    fail "no overhead ratio in $OUT/overhead_realistic.txt"
elif "$PY" -c "import sys; sys.exit(0 if float('$ratio') <= 2.0 else 1)"; then
    echo "PASS: the recorder's overhead on preset realistic is ${ratio}x, within the 2x target"
else
    fail "the recorder's overhead on preset realistic is ${ratio}x, above the 2x target"
fi

echo "== summary"
cat "$OUT/env.txt"
echo "first introduced op: $op in module '$mod' ($id, out[0] $dt [$shape])"
grep '^verdict:' "$OUT/explain.txt"
for preset in tiny gpu realistic; do
    echo "overhead, preset $preset: $(grep '^forward' "$OUT/overhead_$preset.txt" | sed 's/^forward, //')"
done
echo "(the 2x target judged on preset realistic)"
if [ -n "$fails" ]; then
    echo "ledger_gpu: FAILED:$fails"
    exit 1
fi
echo "ledger_gpu: all checks passed"
