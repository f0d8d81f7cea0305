#!/bin/sh
# The full M = 1..1024 invariance map of one GEMM shape, a [M, 4096] x
# b [4096, 4096] in bf16 through cuBLAS exactly as torch.mm calls it
# (`bitprobe invariance --engine cublas`), including the cuBLASLt algorithm
# of every configuration and the oracle's arbitration of every boundary:
# target at most 30 s, wall time of the whole command (process start, CUDA
# context, inputs, 1024 configurations, oracle, reports).  Next to it, in
# the same run on the same GPU and the same inputs, the same sweep written
# with PyTorch (`torch.mm(a[:M], b)[:1]` against `torch.mm(a[:1], b)`,
# tests/refs/invariance_torch.py), and the check that PyTorch's result
# groups, boundaries and bits are bitprobe's: both maps are printed.
# GPU machine only (a configured, built tree with CUDA; python3 with torch):
# exit 77 elsewhere, 1 when the maps differ or a step fails.  By hand:
#   BITPROBE=src/bitprobe sh bench/invariance.sh
# Logs and the map (JSON, SVG) under ${OUT:-/tmp/out}.
set -u
BITPROBE=${BITPROBE:-src/bitprobe}
HERE=$(dirname "$0")
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" || exit 2
SHAPE=${SHAPE:-4096x4096}
M=${M:-1:1024}
. "$HERE/lib.sh"
bench_header "bench/invariance.sh: $SHAPE bf16, M $M, cuBLAS as torch.mm calls it"
bench_python torch
if ! "$BITPROBE" list 2>/dev/null | grep -q '^ *cuda *available'; then
    echo "SKIP: no CUDA device for bitprobe"
    exit 77
fi
"$BITPROBE" env | grep -iE "gpu|cuda|cublas|driver" | head -8
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-inv.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
now() { "$PY" -c 'import time; print("%.3f" % time.time())'; }

# the inputs, once (not timed): a [1024, 4096] with the probed row first, b
"$BITPROBE" invariance --engine cublas --shape "$SHAPE" --m 1024 --no-oracle \
    --save-inputs "$WORK/inputs.safetensors" >/dev/null 2>"$OUT/inv-bench-inputs.err" ||
    { cat "$OUT/inv-bench-inputs.err"; echo "FAIL: --save-inputs"; exit 1; }

t0=$(now)
"$BITPROBE" invariance --engine cublas --shape "$SHAPE" --m "$M" --dtype bf16 \
    --json "$OUT/inv-bench.json" --svg "$OUT/inv-bench.svg" >"$OUT/inv-bench.txt" 2>&1
rc=$?
t1=$(now)
[ $rc -le 1 ] || { cat "$OUT/inv-bench.txt"; echo "FAIL: bitprobe invariance: exit $rc"; exit 1; }
bp=$("$PY" -c "print('%.2f' % ($t1 - $t0))")
echo "-- bitprobe's map (exit $rc: 0 invariant, 1 boundaries found)"
sed -n '1,60p' "$OUT/inv-bench.txt"

echo "-- PyTorch's map on the same inputs"
t2=$(now)
"$PY" "$HERE/../tests/refs/invariance_torch.py" gemm \
    "$WORK/inputs.safetensors" "$OUT/inv-bench.json" --dtype bf16 --engine cublas \
    >"$OUT/inv-bench-torch.txt" 2>&1
trc=$?
t3=$(now)
cat "$OUT/inv-bench-torch.txt"
[ $trc -eq 77 ] && exit 77
pt=$("$PY" -c "print('%.2f' % ($t3 - $t2))")
sweep=$(sed -n 's/^pytorch sweep: .* in \([0-9.]*\) s$/\1/p' "$OUT/inv-bench-torch.txt")
echo "-- figures"
echo "bitprobe invariance (whole command, oracle included): $bp s (target <= 30 s: $("$PY" -c "print('met' if $bp <= 30 else 'NOT met')"))"
echo "pytorch script (import, load, sweep): $pt s; the sweep alone: ${sweep:-?} s"
echo "| $SHAPE bf16, M $M, cuBLAS default | bitprobe $bp s (map, algorithms, oracle) | PyTorch sweep ${sweep:-?} s (bits only) | maps equal: $([ $trc -eq 0 ] && echo yes || echo NO) |"
bench_figure "invariance map $SHAPE bf16, M $M (whole command)" "$bp s" "<= 30 s" \
    "$("$PY" -c "print(int($bp <= 30))")"
bench_figure "invariance map: PyTorch's groups, boundaries and bits equal bitprobe's" \
    "$([ $trc -eq 0 ] && echo equal || echo "differ (exit $trc)")" "equal" "$([ $trc -eq 0 ] && echo 1 || echo 0)"
[ $trc -eq 0 ] || { echo "FAIL: PyTorch's map is not bitprobe's (exit $trc)"; exit 1; }
exit 0
