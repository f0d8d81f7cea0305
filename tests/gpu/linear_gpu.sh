#!/bin/sh
# Linear layers on CUDA as PyTorch computes them, on the GPU machine (a
# configured, built tree with CUDA; python3 with torch).  One step per
# claim, each logged under ${OUT:-/tmp/out}; exit 1 listing the failed
# steps (steps.sh):
#   - the GEMM suites with the GPU required: the cuBLAS call per stride
#     case, the linear/addmm/matmul cases on cuda against hand-derived
#     values, the CUDA backend's and the stack's own;
#   - 25 linear layers (20 drawn, seed 20261201: M 1..4096, K and N
#     256..16384; 5 fixed) in fp32, bf16 and fp16, with and without bias,
#     written as `linear`, `addmm` and `transpose` + `matmul`, 2-D and 3-D
#     inputs (3-D ones that fold into [-1, K] and a transposed one that
#     goes through bmm): 0 elements differ from PyTorch's F.linear,
#     torch.addmm and x @ w.t() (a control with one flipped bit counts 1);
#   - edge cases where PyTorch 2.11's Lt rules are read from 2.10's code
#     and a call log of 2.11 (one row: the bias epilogue; one output
#     feature, K = 1, addmm's beta 0.5 / alpha 2 and a 2-D input: cuBLAS
#     with the input copied first), all dtypes, all forms;
#   - the same under the BLAS settings users change, on both sides:
#     allow_tf32, reduced-precision reductions off, cuBLASLt as the
#     preferred library, DISABLE_ADDMM_CUDA_LT;
#   - the invariance engine's torch.mm and the probe op `matmul` give the
#     same bits for the same call (cublas and cublaslt, M 1..513).
#   sh tests/gpu/linear_gpu.sh
# (under 4 minutes on one H200; STEPS=LO-HI runs a part, see steps.sh)
. "$(dirname "$0")/steps.sh"
B=${BITPROBE:-./src/bitprobe}
T="$(dirname "$0")/../refs/linear_torch.py"
PY=
for p in "${PYTHON3:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c "import torch" >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || PY=python3
if ! "$B" list 2>/dev/null | grep -q '^ *cuda *available'; then
    echo "SKIP: no CUDA device for bitprobe ($("$B" list 2>&1 | grep '^ *cuda'))"
    exit 77
fi
# the layers' inputs and PyTorch's results (up to a few hundred MB each)
# stay out of $OUT, in memory where there is a tmpfs
WORK=$(mktemp -d /dev/shm/bitprobe-linear.XXXXXX 2>/dev/null ||
       mktemp -d "${TMPDIR:-/tmp}/bitprobe-linear.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

step "environment" 0 "$B" env
gemm_suites() {
    env BP_REQUIRE_GPU=1 make check TESTS="tests/backends/check_gemm_plan tests/ops/check_strided tests/backends/check_rows_cuda tests/backends/cuda/check_be_cuda tests/cli/fingerprint_cuda.sh" && return 0
    for f in tests/backends/check_gemm_plan.log tests/ops/check_strided.log tests/backends/check_rows_cuda.log tests/backends/cuda/check_be_cuda.log tests/cli/fingerprint_cuda.sh.log; do
        echo "--- $f"; tail -n 25 "$f"
    done
    return 1
}
TAIL=30 step "GEMM suites, GPU required" 0 gemm_suites
TAIL=12 step "25 linear layers x fp32, bf16, fp16 x 8 forms: 0 elements differ from PyTorch" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/default"
TAIL=8 step "edge cases (one row, one output feature, K = 1; addmm with beta 0.5, alpha 2 and with a 2-D input): 0 differ" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/edge" --variants \
    --shape 7x512x1376 --shape 1x4096x4096 --shape 64x256x1 --shape 33x1x256
TAIL=8 step "allow_tf32 (fp32), 8 layers: 0 differ" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/tf32" --count 3 --dtypes fp32 \
    --setting allow_tf32=1
TAIL=8 step "reduced-precision reductions off (bf16, fp16), 8 layers: 0 differ" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/rpr" --count 3 --dtypes bf16,fp16 \
    --setting allow_bf16_reduced_precision_reduction=0 \
    --setting allow_fp16_reduced_precision_reduction=0
TAIL=8 step "preferred_blas_library=cublaslt, 8 layers: 0 differ" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/lt" --count 3 --dtypes fp32,bf16 \
    --setting preferred_blas_library=cublaslt
TAIL=8 step "DISABLE_ADDMM_CUDA_LT=1, 8 layers: 0 differ" 0 \
    "$PY" "$T" run --bitprobe "$B" --work "$WORK/nolt" --count 3 --dtypes bf16 \
    --setting DISABLE_ADDMM_CUDA_LT=1
TAIL=8 step "the invariance engine and the probe op: the same bits for the same call" 0 \
    "$PY" "$T" invariance --bitprobe "$B" --work "$WORK/inv" --dtypes fp32,bf16,fp16
finish
