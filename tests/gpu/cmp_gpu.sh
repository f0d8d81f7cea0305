#!/bin/sh
# Comparisons, where, bool and fp8 casts and sum(dtype=) on the GPU:
#  1. check_semantics_cuda: the hand-derived cases (lt ... ne, where with
#     numbers and broadcasting, bool and fp8 casts at the edges, sum of
#     fp16 with and without dtype=fp32) on bitprobe's cuda backend;
#  2. the shipped probes rope-llama31-scaling, sum-fp32-accumulator and
#     fp8-round-trip blessed on cuda into $OUT/golden (copy the three
#     cuda-sm90 files into golden/ and commit them);
#  3. the same probes, op by op, bit for bit against PyTorch on CUDA and on
#     the CPU (fuzz_torch.py shipped): the fp8 casts on CUDA tell whether
#     this PyTorch build saturates e4m3fn (CUDA >= 13.2) or not;
#  4. the differential fuzzer on cuda and cpu, which draws the comparisons,
#     where, bool and fp8 casts and sum(dtype=fp32) among the whole table.
# Builds nothing: run it from a configured and built tree with CUDA, after
# `. .devdeps/env.sh`:
#   OUT=/tmp/out sh tests/gpu/cmp_gpu.sh
# Exit 0 when every step holds, 1 when one fails (listed at the end).
set -u
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
. tests/gpu/steps.sh
PROBES="rope-llama31-scaling sum-fp32-accumulator fp8-round-trip"
step "check_semantics_cuda" 0 env BP_REQUIRE_GPU=1 ./tests/backends/check_semantics_cuda
rm -rf "$OUT/golden" && cp -r golden "$OUT/golden"
# shellcheck disable=SC2086
step "bless cuda" 0 "$B" bless $PROBES --device cuda --require cuda --golden "$OUT/golden"
# shellcheck disable=SC2086
step "run against the new goldens" 0 "$B" run $PROBES --device cuda,cpu,oracle --golden "$OUT/golden"
set --
for p in $PROBES; do set -- "$@" --probe "$p"; done
step "shipped vs PyTorch (cuda, cpu)" 0 "$PY" tests/refs/fuzz_torch.py shipped \
    --bitprobe "$B" --devices cuda,cpu "$@"
step "fuzz (cuda, cpu)" 0 "$PY" tests/refs/fuzz_torch.py run --bitprobe "$B" --seed 1916 \
    --probes 120 --ops 30 --devices cuda,cpu --out "$OUT/fuzz"
mkdir -p "$OUT/cuda-goldens"
for p in $PROBES; do
    mkdir -p "$OUT/cuda-goldens/$p"
    cp "$OUT/golden/$p/cuda-sm90.safetensors.gz" "$OUT/cuda-goldens/$p/" 2>/dev/null || true
done
echo "cuda goldens for golden/: $OUT/cuda-goldens/<probe>/cuda-sm90.safetensors.gz"
finish
