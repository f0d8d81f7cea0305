#!/bin/sh
# The recorder's cost per op in instructions, which the machine's load does
# not change (wall and CPU times on a shared machine swing by half): the
# tiny Llama-style forward of bench/ledger_overhead.py (preset tiny, CPU)
# counted by valgrind (callgrind, over K forwards after a warm-up; the
# reference measured in the same run: the plain forward, and a dispatch
# mode that only calls each op, the floor of any recorder of its kind),
# then recorded by this tree's bitprobe_torch, and by OLD's where OLD names
# a directory holding another bitprobe_torch.py (and its
# libbitprobe_torch.so): before and after a change.  Needs valgrind and a
# Python with torch; exit 77 without.  A minute or two per run.
#   sh bench/ledger_instructions.sh
#   OLD=/tmp/main/python K=10 sh bench/ledger_instructions.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
bench_python torch
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
    { echo "SKIP: no valgrind (callgrind_control)"; exit 77; }
bench_header "bench/ledger_instructions.sh: the op ledger recorder in instructions per op"
K=${K:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ledger-ir.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
# count LABEL PYTHONPATH MODE: "LABEL IR OPS", IR the instructions of K forwards
count() {
    out=$(PYTHONPATH="$2" valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$TMP/cg.out" "$PY" "$HERE/ledger_instructions.py" "$3" "$K" 2>&1)
    ir=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -n 1)
    ops=$(echo "$out" | sed -n 's/^ops per forward: //p')
    [ -n "$ir" ] && [ -n "$ops" ] || { echo "FAIL: $1: $out" | tail -n 5; return 1; }
    echo "$1 $ir $ops"
}
rc=0
{
    count plain "$HERE/../python" plain || rc=1
    count null "$HERE/../python" null || rc=1
    count recorder "$HERE/../python" record || rc=1
    [ -n "${OLD:-}" ] && { count "recorder(OLD)" "$OLD" record || rc=1; }
} >"$TMP/counts"
awk -v k="$K" '
    { ir[$1] = $2 / k; ops = $3; name[NR] = $1 }
    END {
        printf "preset tiny, %d ATen ops per forward, %d forwards counted\n", ops, k
        for (i = 1; i <= NR; i++) {
            n = name[i]
            printf "%-14s %12.0f instructions per forward, %7.1f k per op", n, ir[n], ir[n] / ops / 1000
            if (n != "plain" && n != "null")
                printf ", %5.1f k per op over the null mode", (ir[n] - ir["null"]) / ops / 1000
            printf "\n"
        }
    }' "$TMP/counts"
exit $rc
