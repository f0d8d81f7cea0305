#!/bin/sh
# The op ledger on a GPU machine (PyTorch with CUDA): the Llama-style block
# of tests/ledger_torch/llama_block.py recorded on the CPU and on CUDA, the
# two ledgers diffed, the first op that introduced a difference named
# (expected: the pow or a division of the RoPE frequencies, as bitprobe's
# own probes find), and that op turned into a probe whose inputs, run on
# bitprobe's cpu and cuda backends, give back each side's bits; then the
# recorder's overhead on a larger forward (hashes only; target at most 2x).
#
# Builds nothing: run it from a configured and built tree with CUDA
#   sh tests/fidelity/ledger_gpu.sh
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
"$PY" -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda, "on", torch.cuda.get_device_name(0))' | tee "$OUT/env.txt"

echo "== the hash on the GPU: compiled kernel and torch ops against the Python reference"
"$PY" tests/ledger_torch/hash_check.py --device cuda >"$OUT/hash_check.txt" 2>&1 ||
    fail "hash_check --device cuda (see $OUT/hash_check.txt)"
cat "$OUT/hash_check.txt"

echo "== recording: the block on the CPU (every tensor captured), then on CUDA (the ops that diverge captured)"
rm -f "$OUT"/cpu.ledger* "$OUT"/cuda.ledger*
"$PY" -m bitprobe_torch record -o "$OUT/cpu.ledger" --capture-bytes 256M $M --device cpu \
    >"$OUT/record_cpu.txt" 2>&1 || fail "recording on the CPU (see $OUT/record_cpu.txt)"
"$PY" -m bitprobe_torch record -o "$OUT/cuda.ledger" --reference "$OUT/cpu.ledger" $M \
    --device cuda >"$OUT/record_cuda.txt" 2>&1 || fail "recording on CUDA (see $OUT/record_cuda.txt)"
tail -1 "$OUT/record_cpu.txt"; tail -1 "$OUT/record_cuda.txt"
tail -1 "$OUT/cuda.ledger"; echo

echo "== bitprobe diff cpu.ledger cuda.ledger"
"$B" diff "$OUT/cpu.ledger" "$OUT/cuda.ledger" --json "$OUT/diff.json" >"$OUT/diff.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "diff exit $rc, expected 1 (the devices differ)"
head -12 "$OUT/diff.txt"
first=$("$PY" -c '
import json, sys
f = json.load(open(sys.argv[1]))["ledger"]["first_introduced"]
print("%s %s %s" % (f["op"], f["module"], ("b%d" % f["b"]) if f["b"] is not None else ("a%d" % f["a"])) if f else "none")' "$OUT/diff.json" 2>/dev/null)
echo "first introduced: $first"
set -- $first
case "${1:-}" in
aten::pow* | aten::div*) [ "${2:-}" = rope ] || fail "the first introduced op $1 is in module '${2:-}', not rope" ;;
*) fail "the first introduced op is '${1:-none}', not a pow or division in the RoPE frequencies" ;;
esac

echo "== bitprobe explain: the op as a probe, on the oracle, cpu and cuda"
mkdir -p "$OUT/explain"
"$B" explain "$OUT/cpu.ledger" "$OUT/cuda.ledger" --op "${3:-b0}" --out "$OUT/explain" \
    --device cpu,cuda --json "$OUT/explain.json" >"$OUT/explain.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "explain exit $rc, expected 1 (see $OUT/explain.txt)"
sed -n '1,12p' "$OUT/explain.txt"
grep '^verdict:' "$OUT/explain.txt"
grep -q '^  cpu     reproduces A.s bits$' "$OUT/explain.txt" ||
    fail "bitprobe's cpu backend does not reproduce the CPU side's bits"
grep -q '^  cuda    reproduces B.s bits$' "$OUT/explain.txt" ||
    fail "bitprobe's cuda backend does not reproduce the CUDA side's bits"
ls "$OUT/explain"

echo "== the recorder's overhead (hashes only)"
"$PY" bench/ledger_overhead.py --device cuda >"$OUT/overhead_cuda.txt" 2>&1 ||
    fail "bench/ledger_overhead.py --device cuda (see $OUT/overhead_cuda.txt)"
cat "$OUT/overhead_cuda.txt"
"$PY" bench/ledger_overhead.py --device cuda --no-cuda-kernel >"$OUT/overhead_cuda_torchops.txt" 2>&1 &&
    { echo "-- with torch ops instead of the kernel:"; grep -E "^(hash|forward)" "$OUT/overhead_cuda_torchops.txt"; }
ratio=$(sed -n 's/.*recorded [0-9.]* s: \([0-9.]*\)x.*/\1/p' "$OUT/overhead_cuda.txt")
[ -n "$ratio" ] && "$PY" -c "import sys; sys.exit(0 if float('$ratio') <= 2.0 else 1)" ||
    echo "NOTE: overhead ${ratio:-?}x is above the 2x target"

echo "== summary"
cat "$OUT/env.txt"
echo "first introduced op: $first"
grep '^verdict:' "$OUT/explain.txt"
grep '^forward' "$OUT/overhead_cuda.txt"
if [ -n "$fails" ]; then
    echo "ledger_gpu: FAILED:$fails"
    exit 1
fi
echo "ledger_gpu: all checks passed"
