#!/bin/sh
# PyTorch's tensor semantics on the GPU: broadcasting, keepdim and the
# layout ops (reshape ... embedding) on bitprobe's cuda backend, checked
# (1) against the hand-derived values of check_semantics_cuda and (2) bit
# for bit against PyTorch on CUDA, op by op, with torch_probe.py over the
# probes of tests/gpu/semantics/ (broadcast arithmetic, HF
# LlamaRMSNorm as written with the mean as sum / 256, every layout op).
#
# Builds nothing: run it from a configured and built tree with CUDA
#   sh tests/gpu/semantics_gpu.sh
# Logs go to ${OUT:-/tmp/out}/semantics/.  Exit 0 when every check holds,
# 1 when one fails (listed at the end), 77 where there is no GPU.
set -u
B=${BITPROBE:-./src/bitprobe}
OUT=${OUT:-/tmp/out}/semantics
P=tests/gpu/semantics
PY=${PYTHON3:-python3}
mkdir -p "$OUT"
fails=
fail() { echo "FAIL: $*"; fails="$fails
  $*"; }

"$PY" -c 'import torch, yaml' 2>/dev/null || { echo "SKIP: $PY lacks torch or yaml"; exit 77; }
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' || {
    echo "SKIP: PyTorch sees no CUDA device: this check needs one"; exit 77; }
"$B" list 2>/dev/null | grep -q '^ *cuda *available' || {
    echo "SKIP: bitprobe's cuda backend is not available here"; exit 77; }

echo "== check_semantics_cuda (hand-derived values)"
[ -x tests/backends/check_semantics_cuda ] || make tests/backends/check_semantics_cuda >"$OUT/build_check_semantics_cuda.txt" 2>&1 ||
    fail "building tests/backends/check_semantics_cuda (log: $OUT/build_check_semantics_cuda.txt)"
BP_REQUIRE_GPU=1 ./tests/backends/check_semantics_cuda >"$OUT/check_semantics_cuda.txt" 2>&1 ||
    fail "check_semantics_cuda (log: $OUT/check_semantics_cuda.txt)"
tail -n 2 "$OUT/check_semantics_cuda.txt"

echo "== bitprobe run: cuda, cpu, oracle on $P"
"$B" run --probes "$P" --device cuda,cpu,oracle --no-golden --save "$OUT/bundle" \
    --intermediates >"$OUT/run.txt" 2>&1 || fail "bitprobe run (log: $OUT/run.txt)"
tail -n 2 "$OUT/run.txt"

echo "== torch_probe.py: every buffer against PyTorch on CUDA"
"$PY" tests/refs/torch_probe.py "$OUT/bundle" --probes "$P" >"$OUT/torch_probe.txt" 2>&1 ||
    fail "torch_probe.py (log: $OUT/torch_probe.txt)"
tail -n 5 "$OUT/torch_probe.txt"

if [ -n "$fails" ]; then
    echo "failed:$fails"
    exit 1
fi
echo "semantics_gpu: every check held"
