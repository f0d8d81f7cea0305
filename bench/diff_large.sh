#!/bin/sh
# bitprobe diff on two large plain safetensors files (1 GiB of fp32 each by
# default, a few thousand one-ulp flips) against NumPy on np.memmap and
# cmp -l, cold and warm page cache, best of 3, with the machine's memcpy
# bandwidth, all in the same run (bench/diff_large.py says how).  Targets:
# wall time at most NumPy's, peak RSS at most 128 MiB whatever the size.
# Needs a Python with NumPy (PYTHON3, python3, then /usr/bin/python3); exit
# 77 without one.  Run by `make bench`; by hand:
#   BITPROBE=src/bitprobe sh bench/diff_large.sh [--gib 1 4] [--flips N] [--dir DIR]
set -u
HERE=$(dirname "$0")
BITPROBE=${BITPROBE:-src/bitprobe}
. "$HERE/lib.sh"
bench_python numpy
bench_header "bench/diff_large.sh: diff of large safetensors files against NumPy and cmp"
[ -x "$BITPROBE" ] && "$BITPROBE" env 2>/dev/null | grep -E '^(cpu|compiler)'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
"$PY" "$HERE/diff_large.py" --bitprobe "$BITPROBE" "$@"
rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
exit $rc
