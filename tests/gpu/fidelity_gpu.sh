#!/bin/sh
# Fidelity to PyTorch on the GPU machine, in one call (issue 15's
# acceptance), from a configured and built tree (CUDA enabled; nothing is
# built):
#   1. the ATen CPU capability, the shipped probes op by op against
#      PyTorch on cpu and cuda, x / 0.001, the div-by-decimal cuda golden
#      (cpu_isa_gpu.sh, logs under $OUT/isa, golden under $OUT/isa/golden);
#   2. the differential fuzzer on cpu and cuda at PyTorch's capability:
#      $PROBES random probes from $SEED, at least $MIN_OPS ops replayed per
#      device over every op kind and dtype, 0 CUDA differences, CPU
#      differences only in MKL ops (fuzz_gpu.sh, under $OUT/fuzz);
#   3. the fuzzer's CPU half again with ATEN_CPU_CAPABILITY=avx2 and
#      --cpu-isa avx2 (seed $SEED + 1, under $OUT/fuzz-avx2);
#   4. the regression probes of tests/regress: PyTorch's bits on
#      this machine's cuda and cpu written beside a copy of them
#      ($OUT/regress-bits), then bitprobe checked against every stored
#      file there;
#   5. $OUT/fuzz-account.md: the block of probes/README.md that says what
#      steps 2 and 3 checked (tests/refs/fuzz_account.py).
# Differences found are minimised and written, with PyTorch's bits, under
# $OUT/fuzz/regress and $OUT/fuzz-avx2/regress: copy them into
# tests/regress/ with the fix that makes them pass.
#   OUT=/tmp/out sh tests/gpu/fidelity_gpu.sh
# SEED, PROBES and MIN_OPS size the fuzzer's runs (BUDGET_S, JOBS and
# BATCH reach fuzz_gpu.sh, which says what they do); DEVICES=cpu leaves
# out step 1 and the cuda halves (a dry run where there is no GPU);
# STEPS=LO-HI runs some of the steps (steps.sh).
# Exit: 0 every step as required, 1 a failing step (listed at the end),
# 2 no bitprobe, 77 no GPU.
set -u
HERE=$(dirname "$0")
. "$HERE/torch_gpu.sh"
DEVICES=${DEVICES:-cpu,cuda}
case ",$DEVICES," in *,cuda,*) need_cuda ;; esac
SEED=${SEED:-20261123}
PROBES=${PROBES:-160}
MIN_OPS=${MIN_OPS:-10000}
. "$HERE/steps.sh"
case ",$DEVICES," in *,cuda,*)
    TAIL=14 step "ATen capability, shipped probes, x / 0.001 (cpu_isa_gpu.sh)" 0 \
        env -u STEPS OUT="$OUT/isa" sh "$HERE/cpu_isa_gpu.sh" ;;
esac
TAIL=30 step "fuzz $DEVICES: seed $SEED, $PROBES probes, >= $MIN_OPS ops per device" 0 \
    env OUT="$OUT/fuzz" SEED="$SEED" PROBES="$PROBES" MIN_OPS="$MIN_OPS" DEVICES="$DEVICES" \
    WORK="${TMPDIR:-/tmp}/bp-fuzz-$SEED" sh "$HERE/fuzz_gpu.sh"
TAIL=12 step "fuzz cpu with ATEN_CPU_CAPABILITY=avx2 and --cpu-isa avx2: seed $((SEED + 1))" 0 \
    env OUT="$OUT/fuzz-avx2" SEED=$((SEED + 1)) PROBES=$((PROBES / 3)) MIN_OPS=$((MIN_OPS / 4)) \
    DEVICES=cpu ISA=avx2 MINIMISE_S=60 WORK="${TMPDIR:-/tmp}/bp-fuzz-$((SEED + 1))" sh "$HERE/fuzz_gpu.sh"
rm -rf "$OUT/regress-bits"
cp -r "$HERE/../regress" "$OUT/regress-bits"
TAIL=3 step "regressions: PyTorch's bits on $DEVICES written" 0 \
    "$PY" "$HERE/../refs/fuzz_torch.py" regress --bitprobe "$B" --dir "$OUT/regress-bits" \
    --devices "$DEVICES" --write
TAIL=6 step "regressions: bitprobe against every stored file" 0 \
    "$PY" "$HERE/../refs/fuzz_torch.py" regress --bitprobe "$B" --dir "$OUT/regress-bits" \
    --devices "$DEVICES"
rm -rf "${TMPDIR:-/tmp}/bp-fuzz-$SEED" "${TMPDIR:-/tmp}/bp-fuzz-$((SEED + 1))"
TAIL=3 step "the fuzz account for probes/README.md: $OUT/fuzz-account.md" 0 \
    sh -c "'$PY' '$HERE/../refs/fuzz_account.py' '$OUT'/fuzz*/fuzz-summary-*.json > '$OUT/fuzz-account.md'"
finish
