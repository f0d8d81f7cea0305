#!/bin/sh
# Verdicts on a GPU machine: bits are bits there too.
#   - every shipped probe on cuda against its goldens and the CPU suite's
#     goldens, with the sign of a zero counted (golden_shipped*.sh);
#   - the CLI tests of the signed zero, pairing, goldens and tickets with
#     the GPU present (BP_REQUIRE_GPU=1: a GPU test that skips fails);
#   - torch.maximum(-0, +0) on cuda, cpu and the oracle: which zeros each
#     gives (CUDA's fmaxf against the CPU's vector lanes and scalar tail),
#     the count the verdict gives for each pair;
#   - a cuda run against a cpu run by plain diff and by --consensus: the
#     same differing tensors;
#   - screen and run --device cuda end to end (the no-GPU messages do not
#     appear), and screen's JSON row with a verdict;
#   - explain of the signed-zero probe against cuda.
# Logs under $OUT (default /tmp/out); exit 1 when a step fails, 77 without
# a GPU.   sh tests/gpu/verdicts_gpu.sh    (after building with CUDA)
. tests/gpu/steps.sh
B=./src/bitprobe
"$B" env --json 2>/dev/null | grep -q '"devices"' || { echo "no GPU here: SKIP"; exit 77; }
step "environment" 0 "$B" env
export BP_REQUIRE_GPU=1
step "shipped goldens, cuda and cpu" 0 make check \
    TESTS='tests/cli/golden_shipped.sh tests/cli/golden_shipped_cuda.sh'
step "verdict tests with a GPU" 0 make check \
    TESTS='tests/cli/zero_sign.sh tests/cli/pairing.sh tests/cli/golden_place.sh tests/cli/ticket.sh tests/cli/nogpu.sh tests/cli/explain_cuda.sh'
P="$OUT/probes"
mkdir -p "$P"
cp tests/data/max-zero.yaml "$P/"
TAIL=12 step "maximum(-0, +0): cuda, cpu, oracle" "0|1" "$B" run "$P/max-zero.yaml" \
    --device cpu,cuda,oracle --no-golden --agree -vv
step "cuda run saved" 0 "$B" run --device cuda --no-golden --save "$OUT/run-cuda" --quiet
step "cpu run saved" 0 "$B" run --device cpu --no-golden --save "$OUT/run-cpu" --quiet
TAIL=3 step "diff cuda cpu" 1 "$B" diff "$OUT/run-cuda" "$OUT/run-cpu"
D=$log
TAIL=3 step "consensus cuda cpu" 1 "$B" diff --consensus "$OUT/run-cuda" "$OUT/run-cpu"
C=$log
# consensus compares bits: the tensors diff excuses for their NaN payloads
# alone are among those it finds differing
n=$(sed -n 's/^drift: \([0-9]*\) of \([0-9]*\) compared.*/\1 \2/p' "$D")
x=$(sed -n 's/^drift: .*excused: \([0-9]*\) NaN payloads*$/\1/p' "$D")
c=$(sed -n 's/.*no majority in \([0-9]*\) of \([0-9]*\) tensors.*/\1 \2/p' "$C")
check "consensus differs where diff does ($n; consensus $c; ${x:-0} NaN payloads excused)" \
    test "${c#* }" = "${n#* }" -a "${c% *}" -ge "${n% *}" -a "${c% *}" -le "$((${n% *} + ${x:-0}))"
TAIL=3 step "screen --json" 0 "$B" screen --json "$OUT/screen.json"
check "screen's row has a verdict" grep -q '"verdict": "pass"' "$OUT/screen.json"
TAIL=20 step "explain max-zero, cpu against cuda" "0|1" "$B" explain max-zero --probes "$P" \
    --a cpu --b cuda
finish
