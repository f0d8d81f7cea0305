#!/bin/sh
# The whole suite as CI runs it, timed from outside (wall, CPU, peak RSS).
#  CPU part (always): `bitprobe run --device cpu,oracle`, every shipped probe
#    with golden comparison, SUITE_RUNS times (default 3); the same run with
#    the memo off (BP_NO_MEMO=1) as the reference; the oracle's elements per
#    second from --timing; peak RSS against the startup RSS and the buffers.
#  GPU part (where `bitprobe env` shows a device and torch imports):
#    `bitprobe run --device cpu,cuda,oracle`, every probe, goldens compared
#    (a GPU without shipped goldens: noted, not fatal), one process, against bench/suite_torch.py (the same probes with PyTorch
#    on CPU and CUDA, torch.equal per output; the whole Python process,
#    `import torch` included), interleaved, SUITE_RUNS times each; the ratio
#    of the best wall times (target: bitprobe at least 10x faster; beside
#    it, bitprobe's wall when it waits for the GPU's teardown before it
#    exits, BP_CUDA_WAIT_EXIT=1, as the script's process does), each
#    side's CUDA start, peak RSS, and what ran where; the cuda backend's open
#    with the one GPU it uses visible (bitprobe's default) and with every GPU
#    visible (BP_CUDA_ALL_DEVICES=1).  Skipped (said, status 77 in the last
#    line) without a GPU or torch.  The figures also as bench/gpu.sh's
#    "figure:" lines.
# Run by `make bench`; on the GPU machine, from the built tree:
#   sh bench/suite.sh        (PYTHON3=... picks the Python that has torch)
set -u
BITPROBE=${BITPROBE:-src/bitprobe}
PY=${PYTHON3:-python3}
RUNS=${SUITE_RUNS:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bp-suite.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
RU="$PY $SRC/bench/rusage.py"
. "$SRC/bench/lib.sh"
opts="--probes $SRC/probes --golden $SRC/golden --quiet"
unset BP_NO_MEMO

echo "== bench/suite.sh: the whole suite, bitprobe against the PyTorch script"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sh "$SRC/bench/commit.sh" "$SRC"
echo "host: $(uname -n), $(nproc) online cores"
"$BITPROBE" env

# best FILE FIELD: the least value of FIELD=... over the lines of FILE.
best() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | sort -g | head -1; }
most() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | sort -g | tail -1; }

# run_bp LABEL OUTFILE JSON ARGS...: one timed bitprobe run; drift (exit 1)
# is a finding, anything else a failure of the bench.
run_bp() {
    label=$1 out=$2 json=$3
    shift 3
    $RU -l "$label" -o /dev/null -e "$TMP/err" "$BITPROBE" run "$@" --timing --json "$json" \
        >>"$out"
    rc=$(sed -n 's/.* rc=\([0-9]*\)$/\1/p' "$out" | tail -1)
    tail -1 "$out"
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        echo "bench/suite.sh: bitprobe run failed (exit $rc):"
        cat "$TMP/err"
        exit 2
    fi
}

# timing JSON BACKEND: the backend's line from run --timing's JSON.
timing() {
    $PY - "$1" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timing"]
for b in t["backends"]:
    if b["name"] == sys.argv[2] and b["opened"]:
        eps = b.get("elements_per_second", 0)
        print(f"  {b['name']}: open {b['open']:.3f} s (context start {b['context_start']:.3f} s), "
              f"runs {b['run']:.3f} s, golden load {b['golden_load']:.3f} s, "
              f"golden compare {b['golden_compare']:.3f} s, {b['elements']} elements computed "
              f"+ {b['reused']} reused, {eps:.4g} elements/s")
PY
}

# buffers JSON: the most buffer bytes one probe and dtype takes while it runs
# (every backend, intermediates included) and the most result bytes the
# backends' lanes held at once, computed and not yet compared, in MiB.
buffers() {
    $PY - "$1" <<'PY'
import json, sys
from collections import defaultdict
t = json.load(open(sys.argv[1]))["timing"]
at_once = defaultdict(int)
for r in t["runs"]:
    at_once[(r["probe"], r["dtype"])] += r["bytes"]
(p, d), b = max(at_once.items(), key=lambda kv: kv[1])
print(f"{b / 2**20:.1f} {p} {d} {t['held_peak_bytes'] / 2**20:.1f}")
PY
}

echo
echo "== CPU part: bitprobe run --device cpu,oracle, every shipped probe, goldens compared"
$RU -l "startup (bitprobe help)" -o /dev/null "$BITPROBE" help >"$TMP/startup"
cat "$TMP/startup"
: >"$TMP/cpu"
i=1
while [ "$i" -le "$RUNS" ]; do
    run_bp "bitprobe run cpu,oracle, run $i" "$TMP/cpu" "$TMP/cpu.json" --device cpu,oracle $opts
    i=$((i + 1))
done
: >"$TMP/nomemo"
export BP_NO_MEMO=1
run_bp "reference: the same, memo off (BP_NO_MEMO=1)" "$TMP/nomemo" "$TMP/nomemo.json" \
    --device cpu,oracle $opts
unset BP_NO_MEMO
w=$(best "$TMP/cpu" wall) c=$(best "$TMP/cpu" cpu) rss=$(most "$TMP/cpu" maxrss_mib)
wn=$(best "$TMP/nomemo" wall) cn=$(best "$TMP/nomemo" cpu)
rss0=$(best "$TMP/startup" maxrss_mib)
echo "suite, cpu + oracle: best of $RUNS: wall $w s, CPU $c s; memo off: wall $wn s, CPU $cn s" \
     "($(echo "$cn $c" | awk '{printf "%.2f", $1 / $2}')x the CPU time)"
echo "bitprobe's own timing (last run):"
timing "$TMP/cpu.json" cpu
timing "$TMP/cpu.json" oracle
set -- $(buffers "$TMP/cpu.json")
echo "peak RSS $rss MiB; at startup (libraries) $rss0 MiB; the rest" \
     "$(echo "$rss $rss0" | awk '{printf "%.1f", $1 - $2}') MiB for: results held at once" \
     "(computed, not yet compared) at most $4 MiB; the largest probe's buffers while it runs" \
     "$1 MiB ($2 $3, every backend, intermediates included); the memo's copy, the oracle's" \
     "kept results and the goldens"

echo
echo "== GPU part: bitprobe run --device cpu,cuda,oracle against bench/suite_torch.py"
if ! "$BITPROBE" env 2>/dev/null | grep -q '^gpu [0-9]'; then
    echo "SKIP (77): no CUDA device here (bitprobe env)"
    exit 0
fi
if ! $PY -c 'import torch, yaml; assert torch.cuda.is_available()' >/dev/null 2>&1; then
    echo "SKIP (77): $PY cannot import torch and yaml with CUDA available (set PYTHON3)"
    exit 0
fi
$PY -c 'import torch; print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")'
: >"$TMP/bp" ; : >"$TMP/bpw" ; : >"$TMP/pt"
i=1
while [ "$i" -le "$RUNS" ]; do
    run_bp "bitprobe run cpu,cuda,oracle, run $i" "$TMP/bp" "$TMP/gpu.json" \
        --device cpu,cuda,oracle $opts --missing=skip
    export BP_CUDA_WAIT_EXIT=1 # the reference: the GPU's teardown inside the process
    run_bp "bitprobe run cpu,cuda,oracle, BP_CUDA_WAIT_EXIT=1, run $i" "$TMP/bpw" \
        "$TMP/gpuw.json" --device cpu,cuda,oracle $opts --missing=skip
    unset BP_CUDA_WAIT_EXIT
    $RU -l "python3 suite_torch.py, run $i" -o "$TMP/pt.out" -e "$TMP/pt.err" \
        $PY "$SRC/bench/suite_torch.py" --probes "$SRC/probes" >>"$TMP/pt"
    tail -1 "$TMP/pt"
    rc=$(sed -n 's/.* rc=\([0-9]*\)$/\1/p' "$TMP/pt" | tail -1)
    [ "$rc" = 0 ] || { echo "suite_torch.py failed (exit $rc):"; cat "$TMP/pt.out" "$TMP/pt.err"; exit 2; }
    i=$((i + 1))
done
tail -1 "$TMP/pt.out"
cat "$TMP/pt.err"
bw=$(best "$TMP/bp" wall) pw=$(best "$TMP/pt" wall) bww=$(best "$TMP/bpw" wall)
echo "bitprobe's own timing (last run):"
timing "$TMP/gpu.json" cuda
timing "$TMP/gpu.json" oracle
timing "$TMP/gpu.json" cpu
echo "peak RSS: bitprobe $(most "$TMP/bp" maxrss_mib) MiB, suite_torch.py $(most "$TMP/pt" maxrss_mib) MiB"
ratio=$(echo "$pw $bw" | awk '{printf "%.1f", $1 / $2}')
echo "wall, best of $RUNS: bitprobe $bw s (CPU $(best "$TMP/bp" cpu) s), PyTorch script $pw s" \
     "(CPU $(best "$TMP/pt" cpu) s): bitprobe ${ratio}x faster (target: 10x)"
ratiow=$(echo "$pw $bww" | awk '{printf "%.1f", $1 / $2}')
echo "the same with BP_CUDA_WAIT_EXIT=1 (bitprobe waits for the GPU's teardown," \
     "as the script does): bitprobe $bww s, ${ratiow}x"
# The cuda backend's open with every GPU visible, against the default (the
# one GPU it uses visible): what CUDA's start costs per device.
opened() {
    $PY - "$1" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["timing"]["backends"]:
    if b["name"] == "cuda" and b["opened"]:
        print("%.3f %.3f" % (b["open"], b.get("driver_init", 0)))
PY
}
"$BITPROBE" run seed-div $opts --device cuda --missing=skip --timing --json "$TMP/one.json" \
    >/dev/null 2>&1
BP_CUDA_ALL_DEVICES=1 "$BITPROBE" run seed-div $opts --device cuda --missing=skip --timing \
    --json "$TMP/all.json" >/dev/null 2>&1
set -- $(opened "$TMP/one.json") $(opened "$TMP/all.json")
ngpu=$("$BITPROBE" env 2>/dev/null | grep -c '^gpu [0-9]')
echo "cuda open: ${1:-?} s (driver start ${2:-?} s) with the one GPU it uses visible;" \
     "${3:-?} s (driver start ${4:-?} s) with all $ngpu visible"
bench_figure "suite: PyTorch script / bitprobe run --device cpu,cuda,oracle, best walls" \
    "${ratio}x ($pw s / $bw s)" ">= 10x" "$(echo "$ratio" | awk '{print ($1 >= 10)}')"
bench_figure "suite, BP_CUDA_WAIT_EXIT=1 (the GPU's teardown before bitprobe exits)" \
    "${ratiow}x ($pw s / $bww s)" "-" -
bench_figure "cuda backend open, one GPU visible (default) / all $ngpu visible" \
    "${1:-?} s / ${3:-?} s" "-" -
