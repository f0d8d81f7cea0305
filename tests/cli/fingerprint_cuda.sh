# bitprobe fingerprint on a GPU: PyTorch's CUDA kernels divide a tensor by
# a number as x * (1/b) (BinaryDivTrueKernel.cu), by a tensor truly; nvcc
# contracts arange's start + step*i into an fma (RangeFactories.cu,
# -fmad=true) in float; no FTZ without --use_fast_math; cuBLAS runs
# PyTorch's calls on PyTorch's handle, CUBLAS_DEFAULT_MATH (no TF32 unless
# allow_tf32), and the fingerprint records the BLAS settings (--cuda-blas
# allow_tf32=1 shows as TF32).  SKIP (77) only where the machine has no
# GPU (need_gpu in lib.sh).
. "$top_srcdir/tests/cli/lib.sh"
need_gpu
# The JSON checks need a Python 3 (standard library); without one the
# rest runs and the test ends in SKIP.
find_python || skip_later "no Python 3: the JSON checks"
run 0 fingerprint --device cuda
out_has "tensor / scalar            reciprocal         9 / 10 -> 0x3f666667"
out_has "FMA contraction of a*b+c   on"
out_has "flush to zero              kept"
out_has "CUBLAS_DEFAULT_MATH"
run 0 fingerprint --device cuda --cuda-blas allow_tf32=1
out_has "CUBLAS_TF32_TENSOR_OP_MATH"
run 0 fingerprint --device cuda --json
cp "$TMP/out" "$TMP/fp.json"
py - "$TMP/fp.json" <<'PY' || fail "CUDA fingerprint"
import json, sys
(b,) = json.load(open(sys.argv[1]))["backends"]
v = {k: x["verdict"] for k, x in b["behaviour"].items()}
assert v["div_scalar"] == "reciprocal" and v["div_tensor"] == "true", v
assert v["fma"] == "on" and v["subnormals"] == "kept", v
assert v["matmul_fp32"] == "fp32" and v["matmul_bf16"] == "fp32-accumulate", v
assert v["nan_bf16"] == "canonical-7fff" and v["arange"] == "float", v
PY
run 0 run seed-div --device cuda --cuda-blas allow_bf16_reduced_precision_reduction=0 \
    --no-golden --save "$TMP/bundle" --json "$TMP/run.json"
py - "$TMP/run.json" <<'PY' || fail "the BLAS settings in the run's fingerprint"
import json, sys
(b,) = json.load(open(sys.argv[1]))["env"]["backends"]
blas = b["fingerprint"]["blas"]
assert blas["allow_tf32"] is False and blas["preferred_blas_library"] == "cublas", blas
assert blas["allow_bf16_reduced_precision_reduction"] == "false", blas
PY
done_ok
