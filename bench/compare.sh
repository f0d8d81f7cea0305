#!/bin/sh
# Comparison engine throughput (targets: equal buffers within 2x of memcmp, different ones at 1 GB/s or more): equal
# 1 GiB f32 tensors against memcmp on the same buffers, then fully
# different ones with full statistics.  Run by `make bench`; by hand:
#   BENCHDIR=bench BITPROBE=src/bitprobe sh bench/compare.sh [MiB]
set -e
BENCHDIR=${BENCHDIR:-bench}
BITPROBE=${BITPROBE:-src/bitprobe}
echo "== bench/compare.sh: comparison engine throughput"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sh "$(dirname "$0")/commit.sh" "$(dirname "$0")/.."
if [ -x "$BITPROBE" ]; then
    "$BITPROBE" env 2>/dev/null | grep -i -E 'cpu|compiler|host|os' || true
else
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
fi
"$BENCHDIR/compare_throughput" "$@"
