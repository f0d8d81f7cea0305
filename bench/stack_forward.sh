#!/bin/sh
# The llama2-7b forward of `bitprobe stack` (one init, 4096 positions, bf16)
# against the same shapes in PyTorch eager bf16 (bench/stack_torch.py), on
# the same GPU in the same run.  Each side runs the forward REPEAT times
# (default 3); the first is a warm-up, the figure is the median of the
# rest.  bitprobe runs with both cuBLAS settings: pedantic (its default:
# no tensor cores) and default (tensor cores, as PyTorch); the target is
# bitprobe no slower than 1.25x PyTorch with the same settings (default).
# GPU machine only: exit 77 elsewhere.  By hand:
#   BITPROBE=src/bitprobe sh bench/stack_forward.sh
set -u
BITPROBE=${BITPROBE:-src/bitprobe}
HERE=$(dirname "$0")
PY=${PYTHON3:-python3}
REPEAT=${REPEAT:-3}
POS=${POSITIONS:-4096}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-bench.XXXXXX")
. "$HERE/lib.sh"
trap 'rm -rf "$TMP"' EXIT
echo "== bench/stack_forward.sh: llama2-7b forward, $POS positions, bf16"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sh "$(dirname "$0")/commit.sh" "$(dirname "$0")/.."
if ! "$BITPROBE" env --json 2>/dev/null | "$PY" -c '
import json, sys
e = json.load(sys.stdin)
sys.exit(0 if e.get("gpu", {}).get("devices") else 1)'; then
    echo "SKIP: no CUDA device for bitprobe"
    exit 77
fi
med() { "$PY" -c '
import json, statistics, sys
t = json.load(open(sys.argv[1]))
t = t["stack"]["timings"]["forward_s"] if "stack" in t else t["forward_s"]
t = t[1:] if len(t) > 1 else t
print("%.4f" % statistics.median(t))' "$1"; }
for g in pedantic default; do
    "$BITPROBE" stack --preset llama2-7b --device cuda --dtype bf16 \
        --positions "0:$POS" --forward-only --repeat "$REPEAT" --gemm "$g" \
        --quiet --json "$TMP/bp-$g.json" >"$TMP/bp-$g.txt" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        cat "$TMP/bp-$g.txt"
        echo "bitprobe stack (--gemm $g) failed: exit $rc"
        exit 1
    fi
    grep -E "device:|forward:|repeat:" "$TMP/bp-$g.txt"
done
"$PY" "$HERE/stack_torch.py" --positions "$POS" --repeat "$REPEAT" >"$TMP/torch.json"
rc=$?
[ $rc -eq 77 ] && { cat "$TMP/torch.json"; exit 77; }
[ $rc -eq 0 ] || { cat "$TMP/torch.json"; echo "stack_torch.py failed: exit $rc"; exit 1; }
cat "$TMP/torch.json"
tt=$(med "$TMP/torch.json")
tp=$(med "$TMP/bp-pedantic.json")
td=$(med "$TMP/bp-default.json")
echo "pytorch eager bf16:          $tt s"
echo "bitprobe --gemm default:     $td s  ($("$PY" -c "print('%.2fx' % ($td / $tt))") PyTorch; target <= 1.25x)"
echo "bitprobe --gemm pedantic:    $tp s  ($("$PY" -c "print('%.2fx' % ($tp / $tt))") PyTorch)"
r=$("$PY" -c "print('%.2f' % ($td / $tt))")
bench_figure "stack forward llama2-7b bf16, bitprobe --gemm default / PyTorch eager" \
    "${r}x ($td s / $tt s)" "<= 1.25x" "$("$PY" -c "print(int($td / $tt <= 1.25))")"
