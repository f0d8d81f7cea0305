# Shared helpers for the CLI tests: run the real binary, check exit status
# and output.  Each test sources this file; `fail` ends it with status 1.
set -u
: "${BITPROBE:?BITPROBE must point at the built binary}"
: "${top_srcdir:?}"
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

# out_has TEXT / err_has TEXT: fixed-string search in the last run's output.
out_has() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks '$1'"; }
err_has() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1'"; }
out_lacks() { ! grep -qF -- "$1" "$TMP/out" || fail "stdout has '$1'"; }

done_ok() { echo "$ntests passed, 0 failed"; exit 0; }
