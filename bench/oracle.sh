#!/bin/sh
# Oracle throughput: correctly rounded sin (MPFR) of 524288 fp32 elements on
# 1, 2, 4, ... N threads (N: online cores); the output's hash must be the
# same for every thread count.  Run by `make bench`; by hand:
#   BENCHDIR=bench BITPROBE=src/bitprobe sh bench/oracle.sh [ELEMENTS] [MAX_THREADS]
set -e
BENCHDIR=${BENCHDIR:-bench}
BITPROBE=${BITPROBE:-src/bitprobe}
echo "== bench/oracle.sh: oracle throughput (MPFR sin, fp32) by thread count"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sh "$(dirname "$0")/commit.sh" "$(dirname "$0")/.."
[ -x "$BITPROBE" ] && "$BITPROBE" env 2>/dev/null | grep -E '^(cpu|compiler|mpfr)'
"$BENCHDIR/oracle_throughput" "$@"
