#!/bin/sh
# Every GPU bench in one call, on the GPU host, from the built tree:
#   make bench-gpu            (or: sh bench/gpu.sh; PYTHON3=... picks the Python with torch)
# runs, one after the other within BENCH_BUDGET_S seconds in all (default
# 600), each with what is left of it:
#   bench/suite.sh            bitprobe run --device cpu,cuda,oracle, every probe, goldens
#                             compared, against the PyTorch script (>= 10x); the cuda
#                             open with one GPU visible and with all
#   bench/ledger_overhead.sh  DEVICE=cuda: the recorder on preset gpu (<= 2x the plain
#                             forward) and on preset tiny (<= 25 us per op)
#   bench/invariance.sh       the 4096x4096 bf16 map (<= 30 s), PyTorch's map equal
#   bench/stack_forward.sh    the llama2-7b forward (bitprobe <= 1.25x PyTorch)
#   bench/init_audit.sh       init-audit of Llama-2-7B's config, parameters on meta:
#                             each way's process (cpu, meta, zero-init, cuda) <= 60 s
# each told what is left in BENCH_BUDGET_S (less a margin: a bench that
# reads it, init_audit.sh, stops in time and reports what it measured), and
# keeps each bench's whole output under $OUT (default /tmp/out), and prints
# one table: every figure, its target, met or MISSED.  A bench that cannot
# run (no GPU, no torch: its SKIP), fails, runs out of time or prints none
# of its figures is a failure, not a skip.  Exit 0 when every bench ran and
# every target was met, 1 otherwise.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
BITPROBE=${BITPROBE:-src/bitprobe}
case $BITPROBE in /*) ;; *) BITPROBE=$(pwd)/$BITPROBE ;; esac
export BITPROBE
OUT=${OUT:-/tmp/out}
export OUT
BUDGET=${BENCH_BUDGET_S:-600}
mkdir -p "$OUT" || exit 2
. "$HERE/lib.sh"
bench_header "bench/gpu.sh: every GPU bench, one table"
echo "host: $(uname -n), $(nproc) online cores; logs under $OUT"
"$BITPROBE" env 2>&1 | grep -iE "^(bitprobe|gpu|cuda|cublas|driver)" | head -8
T0=$(date +%s)
: >"$OUT/bench-gpu-figures.txt"
: >"$OUT/bench-gpu-failures.txt"

# one LOG WANT CMD...: runs a bench with what is left of the budget; WANT:
# how many figure lines it must print.
one() {
    log=$1 want=$2
    shift 2
    left=$((BUDGET - ($(date +%s) - T0)))
    echo "-- $* (at most ${left} s left)"
    if [ "$left" -le 5 ]; then
        echo "$*: not run: the ${BUDGET} s budget is spent" >>"$OUT/bench-gpu-failures.txt"
        return
    fi
    s0=$(date +%s)
    timeout -k 10 "$left" env BENCH_BUDGET_S=$((left > 30 ? left - 15 : left / 2)) "$@" \
        >"$OUT/$log" 2>&1
    rc=$?
    took=$(($(date +%s) - s0))
    grep '^figure: ' "$OUT/$log" | sed 's/^figure: //' >"$OUT/$log.figures"
    got=$(wc -l <"$OUT/$log.figures")
    cat "$OUT/$log.figures" >>"$OUT/bench-gpu-figures.txt"
    echo "   exit $rc in ${took} s, $got figure(s); output in $OUT/$log"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "$*: ran out of time (${left} s left of the budget)" >>"$OUT/bench-gpu-failures.txt"
    elif [ $rc -ne 0 ]; then
        echo "$*: exit $rc$([ $rc -eq 77 ] && echo ' (SKIP: cannot run here)'): $(tail -3 "$OUT/$log" | tr '\n' ' ')" \
            >>"$OUT/bench-gpu-failures.txt"
    elif [ "$got" -lt "$want" ]; then
        echo "$*: $got of its $want figures printed: $(tail -2 "$OUT/$log" | tr '\n' ' ')" \
            >>"$OUT/bench-gpu-failures.txt"
    fi
}

one bench-suite.txt 2 env SUITE_RUNS="${SUITE_RUNS:-3}" sh "$HERE/suite.sh"
one bench-ledger.txt 2 env DEVICE=cuda sh "$HERE/ledger_overhead.sh"
one bench-invariance.txt 2 sh "$HERE/invariance.sh"
one bench-stack.txt 1 sh "$HERE/stack_forward.sh"
one bench-init-audit.txt 5 sh "$HERE/init_audit.sh"

echo
echo "== the table ($(($(date +%s) - T0)) s in all, budget ${BUDGET} s)"
awk -F ' [|] ' '
    { n++; fig[n] = $1; val[n] = $2; tgt[n] = $3; met[n] = $4
      if (length($1) > w) w = length($1); if (length($2) > v) v = length($2) }
    END {
        printf "| %-*s | %-*s | %-8s | %s\n", w, "figure", v, "value", "target", "met"
        for (i = 1; i <= n; i++)
            printf "| %-*s | %-*s | %-8s | %s\n", w, fig[i], v, val[i], tgt[i], met[i]
    }' "$OUT/bench-gpu-figures.txt"
rc=0
if [ -s "$OUT/bench-gpu-failures.txt" ]; then
    echo "benches that failed or did not run (each a failure):"
    sed 's/^/  /' "$OUT/bench-gpu-failures.txt"
    rc=1
fi
missed=$(grep -c '| MISSED$' "$OUT/bench-gpu-figures.txt")
[ "$missed" -eq 0 ] || { echo "$missed target(s) missed"; rc=1; }
[ $rc -eq 0 ] && echo "every bench ran, every target met"
exit $rc
