#!/bin/sh
# sum, mean, var, prod and cumsum on the GPU against PyTorch's CUDA kernels
# (Reduce.cuh's order: kernels/treereduce.cu, src/core/redcfg.c; ScanUtils.cuh's
# scans: kernels/scan.cu):
#  1. check_redcfg and check_rows_cuda: the host's configuration and the
#     hand-derived values on bitprobe's cuda backend;
#  2. reduce_torch.py: every op over 88 shapes (1-D lengths 1 to 2^20 and
#     around 1 to 4 of cub's scan tiles, 2-D and 3-D over each axis,
#     keepdim, empty, a reduced axis of 1) in fp32,
#     fp64, bf16, fp16 (sum and mean also with dtype=fp32), i32 and i64,
#     bit for bit against PyTorch from bitprobe's own inputs: one line per
#     output, then "reduce: N outputs checked on cuda, 0 differ, ...";
#     a whole-tensor floating-point cumsum is required up to 3 of cub's
#     tiles, beyond printed "(not required: cub's look-back ...)";
#     when outputs differ, the same again under each older Reduce.cuh rule
#     (BP_ATEN_REDUCE, src/core/redcfg.h), whose totals tell which rules this
#     PyTorch follows;
#  3. the shipped probes whose cuda goldens these kernels change
#     (rmsnorm-llama, sum-fp32-accumulator, sum-order) op by op against
#     PyTorch, then blessed on cuda into $OUT/golden (copy
#     $OUT/golden/<probe>/cuda-sm90.safetensors.gz into golden/ and commit).
# Builds nothing: run it from a configured and built tree with CUDA, after
# `. .devdeps/env.sh`:
#   OUT=/tmp/out sh tests/gpu/reduce_gpu.sh
# Exit 0 when every step holds, 1 when one fails (listed at the end).
set -u
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
. tests/gpu/steps.sh
PROBES="rmsnorm-llama sum-fp32-accumulator sum-order"
step "check_redcfg, check_rows_cuda" 0 env BP_REQUIRE_GPU=1 make check \
    TESTS="tests/core/check_redcfg tests/backends/check_rows_cuda"
if ! step "reduce vs PyTorch (cuda)" 0 "$PY" tests/refs/reduce_torch.py --bitprobe "$B" \
    --out "$OUT/reduce"; then
    grep -v ': identical' "$OUT"/*-reduce_vs_PyTorch*.txt | head -n 40
    # Reduce.cuh's order changed between PyTorch versions (src/core/redcfg.h):
    # which of the older rules this PyTorch follows, one at a time and all
    # together; the totals say which variant is PyTorch's
    for v in run=yx shfl=asc vec128=gt run=yx,shfl=asc vec128=gt,run=yx,shfl=asc; do
        step "variant $v" "0|1" env BP_ATEN_REDUCE="$v" "$PY" tests/refs/reduce_torch.py \
            --bitprobe "$B" --out "$OUT/reduce-$v"
    done
fi
set --
for p in $PROBES; do set -- "$@" --probe "$p"; done
step "shipped vs PyTorch (cuda)" 0 "$PY" tests/refs/fuzz_torch.py shipped \
    --bitprobe "$B" --devices cuda "$@"
rm -rf "$OUT/golden" && cp -r golden "$OUT/golden"
# shellcheck disable=SC2086
step "bless cuda" 0 "$B" bless $PROBES --device cuda --require cuda --golden "$OUT/golden"
# shellcheck disable=SC2086
step "run against the new goldens" 0 "$B" run $PROBES --device cuda,cpu,oracle --golden "$OUT/golden"
finish
