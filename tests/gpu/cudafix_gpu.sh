#!/bin/sh
# CUDA operands of another dtype than the op's (an explicit dtype:), on the
# GPU:
#   0. check_rows_cuda (layer_norm, rms_norm and sdpa with an explicit
#      dtype among its hand-derived cases);
#   1. the fuzzer's regressions on CUDA (tests/regress: layer_norm
#      and rms_norm of fp64 or bf16 operands with dtype fp32/bf16 among
#      them) against PyTorch's stored bits;
#   2. the whole fuzzer probes of tests/refs/fuzzkept (sdpa of fp64
#      operands into fp32 and bf16, which wrote past its buffers; a bf16
#      layer_norm of fp64 operands with an inf in the row), every op
#      replayed in PyTorch on CUDA;
#   3. those probes and the three norm regressions under compute-sanitizer
#      memcheck (every buffer its own allocation: BP_CUDA_DEBUG=1; padding
#      after each where the sanitizer offers it), then racecheck and
#      synccheck.
# Run from a configured and built tree with CUDA, after `. .devdeps/env.sh`
# (python3: PyTorch with CUDA):
#   OUT=/tmp/out sh tests/gpu/cudafix_gpu.sh
# Logs under $OUT; exit 1 when a step fails.  Each sanitizer run stops
# after SAN_TIMEOUT seconds (150); STEPS=LO-HI runs a part (steps.sh).
. tests/gpu/steps.sh
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
TAIL=3 step "check_rows_cuda" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/backends/check_rows_cuda
TAIL=3 step "regressions on cuda against PyTorch's bits" 0 \
    "$PY" tests/refs/fuzz_torch.py regress --bitprobe "$B" --dir tests/regress \
    --devices cuda
check "  regress: 0 failed" grep -q "^regress: [1-9][0-9]* checked, 0 failed" "$log"
TAIL=4 step "fuzzkept probes on cuda, every op replayed in PyTorch" 0 \
    "$PY" tests/refs/fuzz_torch.py shipped --bitprobe "$B" --probes tests/refs/fuzzkept \
    --devices cuda
grep "^FAIL" "$log"
check "  cuda differences by op: none" grep -q "^cuda differences by op: none" "$log"
S="$OUT/san-probes"
rm -rf "$S" && mkdir -p "$S" || exit 2
cp tests/refs/fuzzkept/*.yaml "$S/"
for n in fz777-0020-layer-norm-fp32-cuda fz777-0044-rms-norm-fp32-cuda \
         fz777-0059-layer-norm-bf16-cuda; do
    cp "tests/regress/$n.yaml" "$S/"
done
if command -v compute-sanitizer >/dev/null 2>&1; then
    pad=
    compute-sanitizer --help 2>&1 | grep -q -- "--padding" && pad="--padding 4096"
    for tool in memcheck racecheck synccheck; do
        # shellcheck disable=SC2086
        TAIL=3 step "compute-sanitizer $tool: fuzzkept + norm regressions" "0|1" \
            env BP_CUDA_DEBUG=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool \
            $([ $tool = memcheck ] && echo "$pad") --error-exitcode 9 \
            "$B" run --probes "$S" --device cuda --no-golden --quiet
        check "  $tool: 0 errors" grep -qE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" "$log"
    done
else
    echo "compute-sanitizer not on PATH: the sanitizer steps not run"
fi
finish
