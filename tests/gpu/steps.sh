# Steps of a GPU session script, sourced by the scripts beside it: each
# step runs one command and checks its exit status; a failing step is
# logged and recorded, the session goes on (GPU time is scarce: one run
# shows every failure), and `finish` lists the failures and exits 1 when
# there was any, 0 otherwise.  A script reads:
#   . tests/gpu/steps.sh
#   step "make check" 0 make check
#   step "explain seed-inv-freq" 1 ./src/bitprobe explain ...
#   finish
# Every step's output goes to $OUT/NN-name.txt and its last lines to the
# terminal with the seconds it took; $OUT defaults to /tmp/out.
# STEPS=LO-HI runs only the steps numbered LO to HI (the numbers the
# output shows), so a session too long for one call runs in parts; the
# other steps are listed as not run.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" || exit 2
: >"$OUT/failed"
nstep=0

# step NAME WANT CMD...: runs CMD, wants exit status WANT (a number, or
# "0|1" for either); returns 1 when it got another (`step build 0 make ||
# finish` ends the session at a failed build).
step() {
    name=$1 want=$2
    shift 2
    nstep=$((nstep + 1))
    log="$OUT/$(printf %02d $nstep)-$(echo "$name" | tr -c 'A-Za-z0-9_.\n-' '_').txt"
    if [ -n "${STEPS:-}" ] && { [ "$nstep" -lt "${STEPS%-*}" ] || [ "$nstep" -gt "${STEPS#*-}" ]; }; then
        echo "== $nstep. $name: not run (STEPS=$STEPS)"
        return 0
    fi
    echo "== $nstep. $name"
    t0=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    tail -n "${TAIL:-5}" "$log"
    case "|$want|" in
    *"|$rc|"*) echo "   ok (exit $rc, $(($(date +%s) - t0)) s)" ;;
    *)
        echo "FAIL: $name: exit $rc, expected $want (log: $log)"
        echo "$name: exit $rc, expected $want ($log)" >>"$OUT/failed"
        return 1
        ;;
    esac
}

# check NAME CMD...: a step whose command is a shell test, e.g.
#   check "329332 cos" grep -q "cos 329332" "$OUT/05-stack.txt"
check() {
    name=$1
    shift
    step "$name" 0 "$@"
}

finish() {
    if [ -s "$OUT/failed" ]; then
        echo "== $(wc -l <"$OUT/failed") of $nstep steps FAILED:"
        sed 's/^/  /' "$OUT/failed"
        exit 1
    fi
    echo "== all $nstep steps passed (logs under $OUT)"
    exit 0
}
