#!/bin/sh
# The reductions along an axis and the fused ops (softmax ... sdpa) on the
# GPU: check_rows_cuda's hand-derived values, the fidelity fuzzer on the
# whole op table with these ops counted (on CUDA, softmax and log_softmax
# over a last axis of <= 2048 values and amax/amin must be bit-identical to
# PyTorch; the pinned orders are reported), the shipped probes that use
# them against PyTorch, and with BLESS=1 their cuda goldens written into
# the tree and archived as $OUT/golden-cuda-rows.tgz (with the new
# tests/data/golden_pairs.txt) to commit.
#
# Run from a configured and built tree with CUDA (`. .devdeps/env.sh`
# done):  OUT=/tmp/out [BLESS=1] sh tests/gpu/rows_gpu.sh
# One log per step under $OUT; exit 1 when a step failed (listed at the
# end).
. tests/gpu/steps.sh
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
PROBES="rmsnorm-llama softmax-bf16-scores layernorm sdpa-causal"

step "check_rows_cuda" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/backends/check_rows_cuda
step "fuzz cpu,cuda (seed 16)" 0 "$PY" tests/refs/fuzz_torch.py run --bitprobe "$B" \
    --seed 16 --probes 80 --ops 30 --devices cpu,cuda --out "$OUT/fuzz-rows"
shipped() {
    a=
    for p in $PROBES; do a="$a --probe $p"; done
    # shellcheck disable=SC2086
    "$PY" tests/refs/fuzz_torch.py shipped --bitprobe "$B" $a --devices cpu,cuda
}
step "shipped probes vs PyTorch" 0 shipped
if [ "${BLESS:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    step "bless cuda" 0 "$B" bless $PROBES --device cuda
    step "golden_pairs.txt" 0 env BP_PAIRS_WRITE=tests/data/golden_pairs.txt make check \
        TESTS=tests/backends/cpu/check_golden_pairs
    step "archive" 0 sh -c "tar czf '$OUT/golden-cuda-rows.tgz' tests/data/golden_pairs.txt \
        $(for p in $PROBES; do printf 'golden/%s/cuda-*.safetensors.gz ' "$p"; done)"
    # shellcheck disable=SC2086
    step "goldens hold" 0 "$B" run $PROBES --device cuda
fi
finish
