# Ctrl-C: SIGINT (and SIGTERM) during run --save, at several points, ends
# with "interrupted" and exit 130 (SIGTERM: 143, 128 + the signal, as a
# shell reports a process the signal killed), leaves no temporary file, and
# leaves the
# bundle absent or complete (a bundle saved before stays whole, old or
# new).  Writes are slowed (BP_TEST_SLOW_WRITE) so that signals land
# while containers and the manifest are being written.
. "$top_srcdir/tests/cli/lib.sh"
# A background job of a script ignores SIGINT; env gives it back its default.
env --default-signal=INT true 2>/dev/null || { echo "env lacks --default-signal: SKIP"; exit 77; }

# check_bundle DIR: absent, or a manifest whose every file exists.
check_bundle() {
    [ -e "$1" ] || return 0
    [ -f "$1/manifest.json" ] || fail "$1 exists without manifest.json: $(ls -R "$1")"
    for f in $(sed -n 's/^ *"\([^"]*\.safetensors\.gz\)",\{0,1\}$/\1/p' "$1/manifest.json"); do
        [ -f "$1/$f" ] || fail "$1/manifest.json names $f, which is missing"
    done
}
# no_temporaries: nothing half-written anywhere under $TMP.
no_temporaries() {
    left=$(find "$TMP" -name '*.tmp.*' -o -name '*.partial.*' -o -name '*.old.*' | head -5)
    [ -z "$left" ] || fail "left behind: $left"
}

# caught PID SIG: wait (up to 5 s) until PID catches SIG, as /proc shows
# (SigCgt), so that the delays below count from bitprobe's handler: a
# signal before it (exec and dynamic loading can take 50 ms on a loaded
# machine) kills the process by default before it writes anything, which
# is not what is tested here.  Without /proc, or once PID is gone, at once.
caught() {
    n=0
    while [ $n -lt 500 ]; do
        m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
        [ -n "$m" ] || return 0
        m=${m#"${m%????????}"} # the low 32 bits: signals 1 to 32
        case $2 in INT) bit=1 ;; *) bit=14 ;; esac
        [ $(((0x$m >> bit) & 1)) -eq 1 ] && return 0
        sleep 0.01
        n=$((n + 1))
    done
}

interrupted=0
for sig in INT TERM; do
    case $sig in INT) want=130 ;; TERM) want=143 ;; esac
    for t in 0.05 0.2 0.4 0.7 1.0 1.5; do
        rm -rf "$TMP/b"
        BP_TEST_SLOW_WRITE=20000 env --default-signal=INT "$BITPROBE" run seed-div seed-inv-freq \
            --device cpu,oracle --save "$TMP/b" >"$TMP/out" 2>"$TMP/err" &
        pid=$!
        caught "$pid" "$sig"
        sleep "$t"
        kill -s "$sig" "$pid" 2>/dev/null
        wait "$pid"
        rc=$?
        ntests=$((ntests + 1))
        case $rc in
        0) ;;
        "$want") interrupted=$((interrupted + 1))
             grep -qx "bitprobe: interrupted" "$TMP/err" || fail "SIG$sig at ${t}s: no message: $(cat "$TMP/err")" ;;
        *) fail "SIG$sig at ${t}s: exit $rc, expected 0 or $want" ;;
        esac
        check_bundle "$TMP/b"
        no_temporaries
    done
done
[ "$interrupted" -ge 4 ] || fail "only $interrupted of 12 runs were interrupted"

# A bundle saved before: an interrupted run leaves it as it was.
"$BITPROBE" run seed-div --device cpu,oracle --save "$TMP/keep" >/dev/null 2>&1 || fail "save"
cp "$TMP/keep/manifest.json" "$TMP/manifest.before"
for t in 0.1 0.5; do
    BP_TEST_SLOW_WRITE=20000 env --default-signal=INT "$BITPROBE" run seed-div seed-inv-freq \
        --device cpu,oracle --save "$TMP/keep" >/dev/null 2>&1 &
    pid=$!
    caught "$pid" INT
    sleep "$t"
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    ntests=$((ntests + 1))
    check_bundle "$TMP/keep"
    no_temporaries
    if [ "$rc" -eq 130 ]; then
        cmp -s "$TMP/keep/manifest.json" "$TMP/manifest.before" ||
            fail "an interrupted run changed the bundle saved before"
    fi
done
# --save into a directory that is not a bundle: refused before any work.
mkdir -p "$TMP/mine"
: >"$TMP/mine/notes.txt"
run 2 run seed-div --device cpu --save "$TMP/mine"
err_has "holds something other than a bundle"
[ -f "$TMP/mine/notes.txt" ] || fail "--save removed the user's file"
# Report files are written whole: into a temporary beside the target,
# renamed over it when complete (a new inode), so an interrupted or failed
# report leaves the old file; a device or a FIFO is written in place.
"$BITPROBE" run seed-div --device cpu,oracle --no-golden --json "$TMP/r.json" >/dev/null 2>&1 ||
    fail "run --json: exit $?"
ino1=$(ls -i "$TMP/r.json" | cut -d' ' -f1)
"$BITPROBE" run seed-div --device cpu,oracle --no-golden --json "$TMP/r.json" >/dev/null 2>&1 ||
    fail "run --json (again): exit $?"
ino2=$(ls -i "$TMP/r.json" | cut -d' ' -f1)
[ "$ino1" != "$ino2" ] || fail "the JSON report was rewritten in place, not renamed over the old one"
grep -q '"schema_version"' "$TMP/r.json" || fail "the JSON report is incomplete"
"$BITPROBE" run seed-div --device cpu,oracle --no-golden --json /dev/null >/dev/null 2>&1 ||
    fail "run --json /dev/null: exit $?"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
if mkfifo "$TMP/fifo" 2>/dev/null; then
    cat "$TMP/fifo" >"$TMP/from-fifo" &
    reader=$!
    "$BITPROBE" run seed-div --device cpu,oracle --no-golden --json "$TMP/fifo" >/dev/null 2>&1 ||
        fail "run --json FIFO: exit $?"
    wait $reader
    grep -q '"schema_version"' "$TMP/from-fifo" || fail "nothing came through the FIFO"
fi
no_temporaries
done_ok
