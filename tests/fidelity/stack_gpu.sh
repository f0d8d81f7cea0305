#!/bin/sh
# bitprobe stack on the GPU machine: the CUDA test suite of the stack, the
# Llama-2 acceptance commands (buffer level against bitprobe's and
# PyTorch's CPU caches, the per-layer drift with its plot, run-to-run
# identity with both cuBLAS settings) and the forward benchmark against
# PyTorch.  Logs and the plot go under $OUT (default ./gpu-out).
#   sh tests/fidelity/stack_gpu.sh        (after building with CUDA)
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
B=./src/bitprobe
D=tests/data/torch
log() { echo "== $*"; }
{
log check_stack_cuda
./tests/check_stack_cuda; echo "check_stack_cuda: exit $?"
log "buffers: sharded on cuda vs unsharded on cpu (expect ~329332 cos, ~324808 sin, max abs 2)"
$B stack --preset llama2-7b --device cuda --dtype bf16 --buffers-only; echo "exit $?"
log "buffers: vs PyTorch's CPU caches (expect exactly 329332 and 324808)"
$B stack --preset llama2-7b --device cuda --dtype bf16 --buffers-only \
    --unsharded-from $D/rope_cpu.safetensors.gz; echo "exit $?"
log "buffers: fp32 init, vs PyTorch's CPU caches (expect exactly 88 and 116, max abs 0.00390625)"
$B stack --preset llama2-7b --device cuda --dtype bf16 --init-dtype fp32 --buffers-only \
    --unsharded-from $D/rope_cpu.safetensors.gz; echo "exit $?"
log "llama2-7b forward, positions 600:900, with the plot"
t0=$(date +%s.%N)
$B stack --preset llama2-7b --device cuda --dtype bf16 --positions 600:900 \
    --plot "$OUT/drift.svg" --json "$OUT/stack-llama2.json"
echo "exit $?; wall $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo '?') s"
log "the same, --init-dtype fp32"
$B stack --preset llama2-7b --device cuda --dtype bf16 --init-dtype fp32 --positions 600:900 \
    --plot "$OUT/drift-fp32-init.svg" | sed -n '/^per layer/,$p'; echo "exit $?"
log "run to run: tiny and llama2-7b, both cuBLAS settings"
$B stack --preset tiny --device cuda --repeat 5 | grep -E "repeat|summary"; echo "exit $?"
$B stack --preset tiny --device cuda --repeat 5 --gemm default | grep -E "repeat|summary"; echo "exit $?"
$B stack --preset llama2-7b --device cuda --positions 600:900 --forward-only --repeat 3 \
    | grep -E "forward|repeat|summary"; echo "exit $?"
$B stack --preset llama2-7b --device cuda --positions 600:900 --forward-only --repeat 3 --gemm default \
    | grep -E "forward|repeat|summary"; echo "exit $?"
if [ "${BENCH:-0}" = 1 ]; then
  log "bench: forward vs PyTorch eager"
  BITPROBE=$B sh bench/stack_forward.sh; echo "bench: exit $?"
fi
} 2>&1 | tee "$OUT/stack-session.txt"
