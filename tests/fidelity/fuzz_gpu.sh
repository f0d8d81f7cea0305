#!/bin/sh
# The differential fuzzer on the GPU machine: random probes over bitprobe's
# whole op table (tests/fidelity/fuzz_torch.py), run by bitprobe on cuda and
# cpu, every op replayed in PyTorch on both devices from bitprobe's own
# inputs.  Requires at least $MIN_OPS (20000) replayed ops per device
# covering every op kind and dtype, 0 CUDA differences, CPU differences
# only in the ops PyTorch takes from MKL (counted apart).  Failures are
# minimised and written, with PyTorch's bits, under $OUT/regress for
# tests/fidelity/regress/.
#
# Run from a configured and built tree (CUDA enabled), nothing is built:
#   OUT=/tmp/out SEED=12345 sh tests/fidelity/fuzz_gpu.sh
# SEED (default: the time) decides every probe; PROBES and OPS size the
# run; MINIMISE_S (120) bounds the time spent minimising failures;
# ISA=avx2 runs PyTorch with ATEN_CPU_CAPABILITY=avx2 and bitprobe with
# --cpu-isa avx2; DEVICES=cpu runs the CPU half alone (no GPU needed).
# Exit: 0 all identical as required, 1 a failure, 2 no bitprobe,
# 77 no GPU (or no PyTorch).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
SEED=${SEED:-$(date +%s)}
PROBES=${PROBES:-300}
OPS=${OPS:-40}
MIN_OPS=${MIN_OPS:-20000}
DEVICES=${DEVICES:-cpu,cuda}
HERE=$(dirname "$0")
. "$HERE/torch_gpu.sh"
echo "fuzz_gpu: seed $SEED, $PROBES probes of about $OPS ops, devices $DEVICES, output in $OUT"
"$B" env >"$OUT/fuzz-env.txt" 2>&1
case ",$DEVICES," in *,cuda,*) need_cuda ;; esac
set -- --bitprobe "$B" --seed "$SEED" --probes "$PROBES" --ops "$OPS" --devices "$DEVICES" \
    --out "${WORK:-${TMPDIR:-/tmp}/bitprobe-fuzz-$SEED}" --minimise --regress "$OUT/regress" \
    --require "$MIN_OPS" --minimise-s "${MINIMISE_S:-120}"
if [ -n "${ISA:-}" ]; then
    set -- "$@" --aten-cpu-capability "$ISA" --bitprobe-arg=--cpu-isa --bitprobe-arg="$ISA"
fi
"$PY" "$HERE/fuzz_torch.py" run "$@" >"$OUT/fuzz.txt" 2>&1
rc=$?
# the verdict lines (the table per op kind and dtype is in fuzz.txt)
grep -E '^(fuzz|cpu|cuda|FAIL|not drawn|never drawn|time|  saved)' "$OUT/fuzz.txt" | head -80
w=${WORK:-${TMPDIR:-/tmp}/bitprobe-fuzz-$SEED}
[ -f "$w/summary.json" ] && cp "$w/summary.json" "$OUT/fuzz-summary-$SEED.json"
[ -d "$OUT/regress" ] && echo "fuzz_gpu: minimised failures in $OUT/regress: $(ls "$OUT/regress" | grep -c '\.yaml$') probes"
echo "fuzz_gpu: exit $rc (seed $SEED)"
exit $rc
