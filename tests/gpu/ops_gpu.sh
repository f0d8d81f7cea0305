#!/bin/sh
# The ops added last to the table, on the GPU: randn and normal (bitprobe's
# own normal stream: the CUDA kernel must give the CPU's and the oracle's
# bits, and the written statement's, tests/rng_normal_ref.py),
# clamp_tensor (torch.clamp with tensor bounds) against PyTorch on both
# devices, through the fuzzer focused on it, and baddbmm: check_rows_cuda's
# hand-derived cases, then the fuzzer's replays against PyTorch (unpinned
# as bmm: bitprobe's cuBLAS call is pedantic, so the counts are reported,
# not required identical).
#
# Run from a configured and built tree with CUDA (`. .devdeps/env.sh`
# done):  OUT=/tmp/out sh tests/gpu/ops_gpu.sh
# One log per step under $OUT; exit 1 when a step failed (listed at the
# end).  Expected: every step "ok"; step 1's log ends "100%: Checks: N,
# Failures: 0, Errors: 0"; step 3 shows "cuda's run included" and
# "cuda-sm90.safetensors.gz [0 0 z z64]: 5994 elements identical to the
# stream" (6006 for normal); step 4 "cuda differences by op: none" and
# "cpu differences by op: none" with clamp_tensor lines replayed on both;
# step 6 (check_rows_cuda) PASS; step 7 "cuda differences by op: none" (its
# baddbmm line: "N/M unpinned K", the identical count N worth noting).
. tests/gpu/steps.sh
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
step "check_be_cuda (randn/normal cuda vs cpu, clamp_tensor)" 0 \
    env BP_REQUIRE_GPU=1 ./tests/backends/cuda/check_be_cuda
step "randn.sh (every backend vs the written stream)" 0 \
    env BP_REQUIRE_GPU=1 make check TESTS=tests/cli/randn.sh
step "randn.sh log" 0 cat tests/cli/randn.log
step "fuzz clamp_tensor cpu,cuda vs PyTorch (seed 16)" 0 "$PY" tests/refs/fuzz_torch.py run \
    --bitprobe "$B" --seed 16 --each-op 40 --focus-ops clamp_tensor --ops 10 \
    --devices cpu,cuda --jobs 4 --batch 10 --out "$OUT/fuzz-clamp"
check "clamp_tensor replayed on cuda" grep -q "^  cuda *clamp_tensor" "$OUT/04-fuzz_clamp_tensor_cpu_cuda_vs_PyTorch__seed_16_.txt"
step "check_rows_cuda (baddbmm cases)" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/backends/check_rows_cuda
step "fuzz baddbmm cpu,cuda vs PyTorch (seed 17)" 0 "$PY" tests/refs/fuzz_torch.py run \
    --bitprobe "$B" --seed 17 --each-op 40 --focus-ops baddbmm --ops 6 \
    --devices cpu,cuda --jobs 4 --batch 10 --out "$OUT/fuzz-baddbmm"
check "baddbmm replayed on cuda" grep -q "^  cuda *baddbmm" "$OUT/07-fuzz_baddbmm_cpu_cuda_vs_PyTorch__seed_17_.txt"
finish
