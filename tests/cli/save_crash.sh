#!/bin/sh
# run --save DIR over a saved bundle, killed (SIGKILL) at the commit that
# puts the new bundle in DIR's place: DIR is a whole bundle, the old or the
# new, at every instant (one renameat2 RENAME_EXCHANGE), and what the kill
# left beside DIR (DIR.partial.PID, here holding the old bundle) is removed
# by the next save, as stages of dead processes are, never a live one's.
# The kill is placed with strace: the first system call of the commit (the
# first rename family call naming DIR itself) is held 4 s at its exit, and
# the run is killed once DIR has changed (another inode) or gone.  Before:
# DIR was moved aside, then the stage renamed in, and a kill between the
# two left no DIR (5 of 5 trials).
. "$top_srcdir/tests/cli/lib.sh"
if ! command -v strace >/dev/null 2>&1 || ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "SKIP: no strace (or no ptrace here)"
    exit 77
fi
B="$TMP/b"
save() { "$BITPROBE" run seed-div unary-sweep --device cpu --no-golden --quiet --save "$B" "$@"; }
run 0 run seed-div unary-sweep --device cpu --no-golden --quiet --save "$B"
# whole BUNDLE: manifest.json and every file it lists, readable by diff
whole() {
    [ -f "$1/manifest.json" ] || fail "$1: no manifest.json: $(ls -la "$(dirname "$1")")"
    "$BITPROBE" diff "$1" "$1" >/dev/null 2>"$TMP/err" || fail "$1 is not a whole bundle: $(cat "$TMP/err")"
}
whole "$B"
echo old >"$B/mark" # the old bundle, told apart

# LeakSanitizer cannot run under ptrace (the sanitizer build): the traced
# runs leave leak checking to the other tests
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
# the commit's first call: which of the rename family, and which call of
# that one (strace counts each system call's calls apart)
strace -f -qq -e trace=rename,renameat,renameat2 -o "$TMP/trial" \
    "$BITPROBE" run seed-div unary-sweep --device cpu --no-golden --quiet --save "$B" >/dev/null ||
    fail "the trial run"
call=$(grep "\"$B\"" "$TMP/trial" | head -1 | sed 's/^[0-9]* *\([a-z0-9]*\)(.*/\1/')
[ -n "$call" ] || fail "no rename of $B in the trial: $(cat "$TMP/trial")"
k=$(grep -E "^[0-9]+ +$call\(" "$TMP/trial" | grep -n "\"$B\"" | head -1 | cut -d: -f1)
whole "$B"
echo old >"$B/mark"
ino=$(stat -c %i "$B")

strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \
    -e inject=$call:delay_exit=4000000:when=$k \
    "$BITPROBE" run seed-div unary-sweep --device cpu --no-golden --quiet --save "$B" \
    >/dev/null 2>&1 &
tracer=$!
i=0
while [ $i -lt 400 ] && [ "$(stat -c %i "$B" 2>/dev/null)" = "$ino" ]; do
    sleep 0.05
    i=$((i + 1))
done
pid=$(pgrep -P $tracer | head -1)
[ -n "$pid" ] || fail "the run had ended before its commit was held"
kill -9 "$pid"
wait $tracer 2>/dev/null
whole "$B"
[ ! -f "$B/mark" ] || fail "the old bundle is in place: the commit was not reached"
ntests=$((ntests + 1))
left=$(ls -d "$B".partial.* "$B".old.* 2>/dev/null | wc -l)
echo "killed in the commit: $B is the new bundle; $left staging directories left beside it"
# the next save removes what the dead run left (a stage of a live process
# would stay)
sleep 30 &
live=$!
mkdir "$B.partial.$live"
run 0 run seed-div --device cpu --no-golden --quiet --save "$B"
whole "$B"
[ "$(ls -d "$B".partial.* "$B".old.* 2>/dev/null)" = "$B.partial.$live" ] ||
    fail "left beside $B: $(ls -d "$B".partial.* "$B".old.* 2>/dev/null)"
kill $live
done_ok
