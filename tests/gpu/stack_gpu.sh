#!/bin/sh
# bitprobe stack on the GPU machine: the CUDA test suite of the stack
# (which pins the Llama-2 buffer counts: 329332 cos and 324808 sin against
# PyTorch's CPU caches, 88 and 116 with fp32 init), the Llama-2 acceptance
# commands (the per-layer drift with its plot, run-to-run identity with
# both cuBLAS settings) and, with BENCH=1, the forward benchmark against
# PyTorch.  One log per step and the plots under $OUT (default /tmp/out);
# exit 1 when any step fails.
#   sh tests/gpu/stack_gpu.sh        (after building with CUDA)
. tests/gpu/steps.sh
B=./src/bitprobe
D=tests/data/torch
step check_stack_cuda 0 env BP_REQUIRE_GPU=1 ./tests/stack/check_stack_cuda
step "buffers: sharded cuda vs unsharded cpu" 0 \
    $B stack --preset llama2-7b --device cuda --dtype bf16 --buffers-only
step "buffers: vs PyTorch's CPU caches" 0 \
    $B stack --preset llama2-7b --device cuda --dtype bf16 --buffers-only --unsharded-from $D/rope_cpu.safetensors.gz
step "buffers: fp32 init, vs PyTorch's CPU caches" 0 \
    $B stack --preset llama2-7b --device cuda --dtype bf16 --init-dtype fp32 --buffers-only \
    --unsharded-from $D/rope_cpu.safetensors.gz
TAIL=20 step "llama2-7b forward, positions 600:900, with the plot" 0 \
    $B stack --preset llama2-7b --device cuda --dtype bf16 --positions 600:900 \
    --plot "$OUT/drift.svg" --json "$OUT/stack-llama2.json"
TAIL=20 step "the same, --init-dtype fp32" 0 \
    $B stack --preset llama2-7b --device cuda --dtype bf16 --init-dtype fp32 --positions 600:900 \
    --plot "$OUT/drift-fp32-init.svg"
step "repeat: tiny" 0 $B stack --preset tiny --device cuda --repeat 5
step "repeat: tiny, --gemm default" 0 $B stack --preset tiny --device cuda --repeat 5 --gemm default
step "repeat: llama2-7b" 0 \
    $B stack --preset llama2-7b --device cuda --positions 600:900 --forward-only --repeat 3
step "repeat: llama2-7b, --gemm default" 0 \
    $B stack --preset llama2-7b --device cuda --positions 600:900 --forward-only --repeat 3 --gemm default
if [ "${BENCH:-0}" = 1 ]; then
    TAIL=20 step "bench: forward vs PyTorch eager" 0 env BITPROBE=$B sh bench/stack_forward.sh
fi
finish
