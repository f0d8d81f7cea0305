#!/bin/sh
# Golden load: inflate throughput of bp_st_read on a gzip'd golden against
# zlib's own gzread of the same file, in the same run.  Run by `make bench`.
set -e
BENCHDIR=${BENCHDIR:-bench}
BITPROBE=${BITPROBE:-src/bitprobe}
echo "== bench/golden_load.sh: golden load (inflate) throughput"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sh "$(dirname "$0")/commit.sh" "$(dirname "$0")/.."
[ -x "$BITPROBE" ] && "$BITPROBE" env 2>/dev/null | grep -E '^(cpu|compiler|zlib)'
"$BENCHDIR/golden_load" "$@"
