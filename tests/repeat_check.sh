#!/bin/sh
# make check N times in a row on this machine while another build runs
# beside it (a fresh clone of this repository configured and built again
# and again), keeping the log of every test that fails before the next run
# overwrites it.  From a configured and built tree:
#   sh tests/repeat_check.sh [N] [LOGDIR]      (default 10, ./repeat-check)
# Prints one line per run; exit 0 when all N passed, 1 otherwise.
set -u
n=${1:-10}
logs=${2:-repeat-check}
mkdir -p "$logs" || exit 2
logs=$(cd "$logs" && pwd)
: >>"$logs/side-builds.log"
top=$(pwd)
side=$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-side.XXXXXX") || exit 2
# the build beside, in a session of its own so that its whole process
# group can be stopped at the end
setsid sh -c '
    while :; do
        rm -rf "$1/b"
        git clone -q "$2" "$1/b" 2>/dev/null &&
            (cd "$1/b" && autoreconf -fi && ./configure && make -j2) >"$1/build.log" 2>&1
        echo "side build $(date -u +%T) rc=$?" >>"$3/side-builds.log"
    done' side "$side" "$top" "$logs" &
builder=$!
trap 'kill -TERM -$builder 2>/dev/null; sleep 1; rm -rf "$side"' EXIT
trap 'exit 130' INT TERM
failed=0
i=1
while [ $i -le "$n" ]; do
    s=$(date +%s)
    make -j2 check >"$logs/run$i.log" 2>&1
    rc=$?
    for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' "$logs/run$i.log"); do
        cp "${t%.sh}.log" "$logs/run$i-$(echo "$t" | tr / _).log" 2>/dev/null
    done
    echo "run $i: exit $rc, $(($(date +%s) - s)) s, load $(cut -d' ' -f1-3 /proc/loadavg)," \
        "$(grep -E '^# (PASS|SKIP|FAIL|ERROR)' "$logs/run$i.log" | tr -s ' ' | tr '\n' ' ')" \
        "$(sed -n 's/^\(FAIL\|ERROR\): //p' "$logs/run$i.log" | tr '\n' ' ')"
    [ $rc -eq 0 ] || failed=$((failed + 1))
    i=$((i + 1))
done
echo "repeat_check: $n runs, $failed failed ($(wc -l <"$logs/side-builds.log" 2>/dev/null || echo 0) builds beside)"
[ $failed -eq 0 ]
