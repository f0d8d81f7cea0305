# Shared helpers for the CLI tests: run the real binary, check exit status
# and output.  Each test sources this file; `fail` ends it with status 1.
set -u
: "${BITPROBE:?BITPROBE must point at the built binary}"
: "${top_srcdir:?}"
export top_srcdir
# The source tree's probes and goldens, wherever the build (and so the
# working directory) is: an out-of-tree build has no ./probes.
BITPROBE_PROBES="$top_srcdir/probes" BITPROBE_GOLDEN="$top_srcdir/golden"
export BITPROBE_PROBES BITPROBE_GOLDEN
# Tests decide for themselves whether they run as a GitHub Actions step.
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY GITHUB_WORKSPACE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ntests=0

fail() {
    echo "FAIL: $*" >&2
    [ -f "$TMP/out" ] && { echo "--- stdout"; cat "$TMP/out"; } >&2
    [ -f "$TMP/err" ] && { echo "--- stderr"; cat "$TMP/err"; } >&2
    exit 1
}

# run EXPECTED_STATUS ARGS...: runs bitprobe, keeps stdout/stderr in $TMP.
run() {
    want=$1
    shift
    ntests=$((ntests + 1))
    "$BITPROBE" "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "bitprobe $*: exit $got, expected $want"
}

# rel PATH: PATH as bitprobe's reports show it, relative to the working
# directory where it lies under it (the project: bp_report_rel_path).
rel() { case $1 in "$PWD"/*) printf '%s\n' "${1#"$PWD"/}" ;; *) printf '%s\n' "$1" ;; esac; }

# out_has TEXT / err_has TEXT: fixed-string search in the last run's output.
out_has() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks '$1'"; }
err_has() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1'"; }
out_lacks() { ! grep -qF -- "$1" "$TMP/out" || fail "stdout has '$1'"; }
err_lacks() { ! grep -qF -- "$1" "$TMP/err" || fail "stderr has '$1'"; }

# probe_outputs: "N K": the outputs x dtypes of every probe `bitprobe list`
# shows (its second and third columns), and the number of probes.
probe_outputs() {
    "$BITPROBE" list >"$TMP/list.txt" 2>&1 || fail "bitprobe list: $(cat "$TMP/list.txt")"
    awk '/^Probes in/ { p = 1; next } /^$/ { p = 0 }
         p && NF >= 3 { n += split($2, d, ",") * split($3, o, ","); k++ }
         END { print n + 0, k + 0 }' "$TMP/list.txt"
}

# golden_identical LABEL N: the last run (with -vv, which lists every
# result) compared exactly N outputs x dtypes
# under LABEL ("cpu vs golden cpu-sleef"), each of them bit-identical (a
# difference within a probe's policy is still a difference from the golden
# its own backend blessed).
golden_identical() {
    got=$(grep -c "^  $1: " "$TMP/out")
    [ "$got" -eq "$2" ] || fail "$got '$1' comparisons, expected $2"
    grep "^  $1: " "$TMP/out" | grep -v "^  $1: bit-identical (" >"$TMP/notident"
    [ -s "$TMP/notident" ] && fail "not bit-identical to the golden: $(cat "$TMP/notident")"
    return 0
}

# passed_identical N: the last run's verdict is "passed" with exactly N
# comparisons, every one bit-identical (the summary line the text report
# prints first).
passed_identical() {
    grep -qx "passed: $1 compared ($1 identical)" "$TMP/out" ||
        fail "the verdict is not 'passed: $1 compared ($1 identical)': $(head -1 "$TMP/out")"
    return 0
}

# ---- skips that say skip -------------------------------------------------
# A test that cannot check something here exits 77 (SKIP), never 0.  Parts
# that can run still run first: skip_later records why, and done_ok then
# exits 77 instead of 0.
skipped=
skip_later() { skipped="${skipped:+$skipped; }$*"; }

# within LIMIT STATUS ARGS...: bitprobe ARGS exits STATUS within LIMIT s (a hang
# guard for the scale tests; output in $TMP/out, $TMP/err)
within() {
    lim=$1
    want=$2
    shift 2
    ntests=$((ntests + 1))
    t0=$(date +%s)
    timeout "$lim" "$BITPROBE" "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    [ $got -ne 124 ] || fail "bitprobe $*: still running after $lim s"
    [ $got -eq "$want" ] || fail "bitprobe $*: exit $got, expected $want"
    echo "bitprobe $*: $(($(date +%s) - t0)) s"
}

# find_python MODULE...: sets PY to the first of $PYTHON3, python3 and
# /usr/bin/python3 that imports every MODULE (the standard library's json
# when none is named); returns 1 when none does.
find_python() {
    mods=$(printf '%s,' json "$@")
    for PY in "${PYTHON3:-}" python3 /usr/bin/python3; do
        [ -n "$PY" ] && command -v "$PY" >/dev/null 2>&1 &&
            "$PY" -c "import ${mods%,}" >/dev/null 2>&1 && return 0
    done
    PY=
    return 1
}
# py ARGS...: runs $PY; where find_python found none, reads its standard
# input and succeeds (the test has recorded the skip with skip_later).
py() { if [ -n "${PY:-}" ]; then "$PY" "$@"; else cat >/dev/null; fi; }

# The GPU rule, for every GPU test (tests/gpu_rule.h states it for the C
# suites): a GPU test skips only where this machine has no GPU at all: no
# NVIDIA device node, and bitprobe says it was built without CUDA, finds no
# CUDA driver, or finds no CUDA device.  Any other unavailability (a device
# node present, a driver too old, a failing CUDA call, a detection
# regression) fails.  BP_REQUIRE_GPU=1 (the GPU machine's sessions) makes
# every GPU skip a failure.
gpu_skip() {
    if [ "${BP_REQUIRE_GPU:-0}" = 1 ]; then
        echo "FAIL: BP_REQUIRE_GPU=1, but no GPU test can run here: $*" >&2
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}
# gpu_device_node: prints the first NVIDIA device node, if any (none counts
# where CUDA_VISIBLE_DEVICES hides every device on purpose).
gpu_device_node() {
    case "${CUDA_VISIBLE_DEVICES-unset}" in "" | -1 | NoDevFiles) return 1 ;; esac
    for n in /dev/nvidia[0-9]*; do
        [ -e "$n" ] && { echo "$n"; return 0; }
    done
    return 1
}
# need_gpu: returns when bitprobe's cuda backend is available; otherwise
# skips or fails by the rule above.
need_gpu() {
    "$BITPROBE" list >"$TMP/gpu.list" 2>&1 || fail "bitprobe list: $(cat "$TMP/gpu.list")"
    state=$(awk '$1 == "cuda" { sub(/^ *cuda +/, ""); print; exit }' "$TMP/gpu.list")
    case "$state" in
    available*) return 0 ;;
    "") fail "bitprobe list shows no cuda backend: $(cat "$TMP/gpu.list")" ;;
    esac
    why=${state#unavailable: }
    node=$(gpu_device_node) &&
        fail "a GPU device is present ($node), but bitprobe's cuda backend is unavailable: $why"
    case "$why" in
    *"built without CUDA"* | *"no CUDA driver"* | *"no CUDA device"*) gpu_skip "no GPU here ($why)" ;;
    esac
    fail "bitprobe's cuda backend is unavailable for a reason other than a missing GPU: $why"
}

# done_ok: the end of a test: 0, or 77 where skip_later recorded a part
# that could not run.
done_ok() {
    echo "$ntests passed, 0 failed"
    [ -z "$skipped" ] || { echo "SKIP: $skipped"; exit 77; }
    exit 0
}
