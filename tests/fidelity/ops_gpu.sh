#!/bin/sh
# The ops added last to the table, on the GPU: randn and normal (bitprobe's
# own normal stream: the CUDA kernel must give the CPU's and the oracle's
# bits, and the written statement's, tests/rng_normal_ref.py).
#
# Run from a configured and built tree with CUDA (`. .devdeps/env.sh`
# done):  OUT=/tmp/out sh tests/fidelity/ops_gpu.sh
# One log per step under $OUT; exit 1 when a step failed (listed at the
# end).  Expected: every step "ok"; step 1's log ends "100%: Checks: N,
# Failures: 0, Errors: 0", step 2's says "cuda's run included" and
# "cuda-sm90.safetensors.gz [...]: 5994 elements identical to the stream"
# (6006 for normal).
. tests/fidelity/steps.sh
step "check_be_cuda data (randn, normal: cuda vs cpu)" 0 \
    env BP_REQUIRE_GPU=1 CK_RUN_CASE=data ./tests/check_be_cuda
step "randn.sh (every backend vs the written stream)" 0 \
    env BP_REQUIRE_GPU=1 make check TESTS=tests/cli/randn.sh
step "randn.sh log" 0 cat tests/cli/randn.log
finish
