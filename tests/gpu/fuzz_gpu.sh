#!/bin/sh
# The differential fuzzer on the GPU machine: random probes over bitprobe's
# whole op table (tests/refs/fuzz_torch.py), run by bitprobe on cuda and
# cpu, every op replayed in PyTorch on both devices from bitprobe's own
# inputs.  Requires at least $MIN_OPS (10000) replayed ops per device
# covering every op kind and dtype, 0 CUDA differences, CPU differences
# only in the ops PyTorch takes from MKL (counted apart).  Failures are
# minimised and written, with PyTorch's bits, under $OUT/regress for
# tests/regress/.
#
# Run from a configured and built tree (CUDA enabled), nothing is built:
#   OUT=/tmp/out SEED=12345 sh tests/gpu/fuzz_gpu.sh
# SEED (default: the time) decides every probe; PROBES (160) and OPS (40)
# size the run (about 85 ops replayed per probe and device: 160 probes
# give some 13000); the probes go BATCH (8) to a bitprobe run, JOBS
# batches at once (half the cores, at most 8), and a progress line follows
# every batch (probes done, ops replayed, differences so far); no batch
# starts after BUDGET_S (150) seconds (0: no limit), the probes not drawn
# are said, and MIN_OPS still applies; MINIMISE_S (120) bounds the time
# spent minimising failures;
# ISA=avx2 runs PyTorch with ATEN_CPU_CAPABILITY=avx2 and bitprobe with
# --cpu-isa avx2; DEVICES=cpu runs the CPU half alone (no GPU needed).
# Exit: 0 all identical as required, 1 a failure, 2 no bitprobe,
# 77 no GPU (or no PyTorch).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
SEED=${SEED:-$(date +%s)}
PROBES=${PROBES:-160}
OPS=${OPS:-40}
MIN_OPS=${MIN_OPS:-10000}
BATCH=${BATCH:-8}
ncpu=$(nproc 2>/dev/null || echo 2)
JOBS=${JOBS:-$(( ncpu / 2 > 8 ? 8 : (ncpu / 2 < 1 ? 1 : ncpu / 2) ))}
BUDGET_S=${BUDGET_S:-150}
DEVICES=${DEVICES:-cpu,cuda}
HERE=$(dirname "$0")
. "$HERE/torch_gpu.sh"
echo "fuzz_gpu: seed $SEED, $PROBES probes of about $OPS ops, devices $DEVICES," \
    "batches of $BATCH, $JOBS at once, budget $BUDGET_S s, output in $OUT"
"$B" env >"$OUT/fuzz-env.txt" 2>&1
case ",$DEVICES," in *,cuda,*) need_cuda ;; esac
set -- --bitprobe "$B" --seed "$SEED" --probes "$PROBES" --ops "$OPS" --devices "$DEVICES" \
    --out "${WORK:-${TMPDIR:-/tmp}/bitprobe-fuzz-$SEED}" --minimise --regress "$OUT/regress" \
    --require "$MIN_OPS" --minimise-s "${MINIMISE_S:-120}" --batch "$BATCH" --jobs "$JOBS" \
    --budget-s "$BUDGET_S"
if [ -n "${ISA:-}" ]; then
    set -- "$@" --aten-cpu-capability "$ISA" --bitprobe-arg=--cpu-isa --bitprobe-arg="$ISA"
fi
# the progress lines as they come (a run stopped from outside still shows
# how far it got), everything in fuzz.txt
rm -f "$OUT/fuzz.rc"
{ "$PY" "$HERE/../refs/fuzz_torch.py" run "$@" 2>&1; echo $? >"$OUT/fuzz.rc"; } | tee "$OUT/fuzz.txt" |
    grep --line-buffered '^progress: '
rc=$(cat "$OUT/fuzz.rc" 2>/dev/null || echo 1)
# the verdict lines (the table per op kind and dtype is in fuzz.txt)
grep -E '^(fuzz|cpu|cuda|FAIL|not drawn|never drawn|time|  saved)' "$OUT/fuzz.txt" | head -80
w=${WORK:-${TMPDIR:-/tmp}/bitprobe-fuzz-$SEED}
[ -f "$w/summary.json" ] && cp "$w/summary.json" "$OUT/fuzz-summary-$SEED.json"
[ -d "$OUT/regress" ] && echo "fuzz_gpu: minimised failures in $OUT/regress: $(ls "$OUT/regress" | grep -c '\.yaml$') probes"
echo "fuzz_gpu: exit $rc (seed $SEED)"
exit $rc
