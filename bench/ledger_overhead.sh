#!/bin/sh
# bitprobe_torch's overhead on a Llama-style forward, against the same
# forward without it, in one process (bench/ledger_overhead.py), and on the
# same forward with tiny tensors (the cost per op that does not grow with
# the bytes: Python, kernel launches, the host hash's torch calls): on the CPU
# here, and on CUDA where a GPU is (hashes only; target at most 2x wall
# time there).  Needs a Python with torch (PYTHON3, python3, then
# /usr/bin/python3); exit 77 without one.  By hand:
#   sh bench/ledger_overhead.sh            # cpu, and cuda when present
#   DEVICE=cuda sh bench/ledger_overhead.sh
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"
bench_python torch
bench_header "bench/ledger_overhead.sh: the op ledger recorder on a Llama-style forward"
devs=${DEVICE:-}
if [ -z "$devs" ]; then
    devs=cpu
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' &&
        devs="cpu cuda"
fi
rc=0
tiny=$(mktemp "${TMPDIR:-/tmp}/ledger-tiny.XXXXXX")
trap 'rm -f "$tiny"' EXIT
for d in $devs; do
    echo "-- $d"
    "$PY" "$HERE/ledger_overhead.py" --device "$d" ${REPEAT:+--repeat "$REPEAT"} || rc=1
    echo "-- $d, preset tiny (the cost per op that does not grow with the bytes)"
    "$PY" "$HERE/ledger_overhead.py" --device "$d" --preset tiny --repeat 21 >"$tiny" || rc=1
    grep -E "^(hash:|forward,|CPU time,|reference:|figure:)" "$tiny"
done
exit $rc
