# Crash safety of bless.  A bless is killed with SIGKILL at 100 points
# spread over its run, each reached by waiting for what the writer shows
# (its temporary file's size, the renamed golden), not by timing
# (BP_TEST_SLOW_WRITE stretches the write of the golden so that the waits
# see it, see src/core/atomicfile.h); after every kill the golden must hold the
# old content or the new, byte for byte: never a mix, never a truncated
# file.  A later bless tidies the temporaries the kills left.  Two bless
# processes writing different contents to one golden at once both succeed
# and leave one of the two contents (the lock serialises them: without it
# each would delete the other's temporary file), and no lock file: its
# holder removes it (a killed one's stays until the next bless).  On a
# loaded machine a writer may finish before the poller sees its kill
# point: each such miss doubles the pause per KiB written (up to 50 ms),
# so that the polling keeps up.
. "$top_srcdir/tests/cli/lib.sh"
P1="$TMP/p1" P2="$TMP/p2" G="$TMP/golden"
mkdir -p "$P1" "$P2"
cp "$top_srcdir/probes/rope-apply.yaml" "$P1/"
sed 's/seed: 21,/seed: 22,/' "$P1/rope-apply.yaml" >"$P2/rope-apply.yaml"
cmp -s "$P1/rope-apply.yaml" "$P2/rope-apply.yaml" && fail "could not edit the probe"
gold="$G/rope-apply/cpu-sleef.safetensors.gz"
opts="--golden $G --device cpu"
slow=3000 # microseconds after each KiB written: ~90 ms for this golden

# The two contents: old from the first definition, new from the second.
run 0 bless rope-apply --probes "$P1" $opts
cp "$gold" "$TMP/old.gz"
run 0 bless rope-apply --probes "$P2" $opts
cp "$gold" "$TMP/new.gz"
cmp -s "$TMP/old.gz" "$TMP/new.gz" && fail "old and new goldens are the same"

# A slow bless left to finish writes the same bytes.
cp "$TMP/old.gz" "$gold"
BP_TEST_SLOW_WRITE=$slow "$BITPROBE" bless rope-apply --probes "$P2" $opts >/dev/null 2>&1 ||
    fail "slow bless failed"
cmp -s "$gold" "$TMP/new.gz" || fail "the slow bless wrote other bytes"

# Kill points, each reached by waiting for an observable event (never by
# sleeping a guessed time): right after the start (before any write), when
# the temporary file has reached a given size (spread over the write), and
# when the golden already holds the new bytes (after the rename).
size=$(wc -c <"$TMP/new.gz")
tmpsize() { # bytes in the writer's temporary file, -1 while there is none
    for f in "$G"/rope-apply/*.tmp.*; do
        [ -e "$f" ] && { wc -c <"$f" 2>/dev/null || echo -1; return; }
    done
    echo -1
}
# running: the writer ($pid) has not exited (an exited, unreaped child
# still answers kill -0: its state in /proc says Z).
running() {
    kill -0 $pid 2>/dev/null || return 1
    st=$(sed 's/.*) //' /proc/$pid/stat 2>/dev/null) || return 0
    [ "${st%% *}" != Z ]
}
# wait_for CONDITION...: polls until CONDITION holds; returns 1 when the
# writer exited first.
wait_for() {
    until "$@"; do
        running || "$@" || return 1
        sleep 0.001
    done
}
tmp_reached() { [ "$(tmpsize)" -ge "$1" ]; }
renamed() { cmp -s "$gold" "$TMP/new.gz"; }

nold=0 nnew=0 ntorn=0 nmissed=0
i=1
while [ $i -le 100 ]; do
    cp "$TMP/old.gz" "$gold"
    BP_TEST_SLOW_WRITE=$slow "$BITPROBE" bless rope-apply --probes "$P2" $opts \
        >/dev/null 2>&1 &
    pid=$!
    if [ $i -le 5 ]; then
        what="at once"
        reached=true
    elif [ $i -le 95 ]; then
        want=$((size * (i - 5) / 91)) # from 0 to just below the whole file
        what="at $want of $size bytes written"
        wait_for tmp_reached "$want" && reached=true || reached=false
    else
        what="after the rename"
        wait_for renamed && reached=true || reached=false
    fi
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    if ! $reached; then
        # The writer finished before the event was seen (a stalled
        # machine): the kill point is tried again with a slower writer, a
        # bounded number of times.
        cmp -s "$gold" "$TMP/new.gz" || fail "a bless that ran to its end wrote other bytes"
        nmissed=$((nmissed + 1))
        [ $nmissed -le 50 ] || fail "50 writers finished before their kill point was seen"
        [ $slow -ge 50000 ] || slow=$((slow * 2))
        continue
    fi
    if ls "$G/rope-apply" | grep -q '\.tmp\.'; then
        ntorn=$((ntorn + 1)) # killed while writing its temporary file
    fi
    if cmp -s "$gold" "$TMP/old.gz"; then
        nold=$((nold + 1))
    elif cmp -s "$gold" "$TMP/new.gz"; then
        nnew=$((nnew + 1))
    else
        cp "$gold" "$TMP/broken.gz"
        fail "kill $i ($what) left a golden that is neither old nor new ($(wc -c <"$gold") bytes)"
    fi
    rm -f "$G"/rope-apply/*.tmp.*
    i=$((i + 1))
done
ntests=$((ntests + 100))
echo "100 kills: $nold left the old golden, $nnew the new one; $ntorn were mid-write;" \
    "$nmissed kill points retried (pause per KiB at the end: $slow us)"
[ $nold -gt 0 ] && [ $nnew -gt 0 ] && [ $ntorn -gt 0 ] ||
    fail "the kills did not straddle the write and the replacement"

# The survivors verify: the old golden against the first definition, the
# new one against the second.
cp "$TMP/old.gz" "$gold"
run 0 run rope-apply --probes "$P1" $opts
cp "$TMP/new.gz" "$gold"
run 0 run rope-apply --probes "$P2" $opts

# Temporaries of killed writers are removed by the next bless (under the
# lock nobody else can be writing one).
# (One more kill, as soon as the temporary file shows, makes sure there is
# one to tidy.)
cp "$TMP/old.gz" "$gold"
BP_TEST_SLOW_WRITE=$slow "$BITPROBE" bless rope-apply --probes "$P2" $opts \
    >/dev/null 2>&1 &
pid=$!
polls=0
until ls "$G/rope-apply" | grep -q '\.tmp\.'; do
    polls=$((polls + 1))
    [ $polls -lt 2000 ] && kill -0 $pid 2>/dev/null ||
        fail "no temporary file appeared while a slow bless ran"
    sleep 0.002
done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
ls "$G/rope-apply" | grep -q '\.tmp\.' || fail "the killed bless left no temporary file"
cp "$TMP/old.gz" "$gold"
run 0 bless rope-apply --probes "$P2" $opts
ls "$G/rope-apply" | grep -q '\.tmp\.' && fail "temporary files survive a bless"
ls "$G/rope-apply" | grep -q '\.lock$' && fail "a lock file survives a bless"
cmp -s "$gold" "$TMP/new.gz" || fail "bless after the kills wrote other bytes"

# Two writers at once, five times over, each with the other definition.
k=1
while [ $k -le 5 ]; do
    cp "$TMP/old.gz" "$gold"
    BP_TEST_SLOW_WRITE=$slow "$BITPROBE" bless rope-apply --probes "$P2" $opts \
        >"$TMP/a.out" 2>&1 &
    a=$!
    BP_TEST_SLOW_WRITE=$slow "$BITPROBE" bless rope-apply --probes "$P1" $opts \
        >"$TMP/b.out" 2>&1 &
    b=$!
    wait $a || { cat "$TMP/a.out" >&2; fail "concurrent bless (new) failed"; }
    wait $b || { cat "$TMP/b.out" >&2; fail "concurrent bless (old) failed"; }
    cmp -s "$gold" "$TMP/old.gz" || cmp -s "$gold" "$TMP/new.gz" ||
        fail "concurrent blesses left a golden that is neither old nor new"
    ls "$G/rope-apply" | grep -q '\.tmp\.' && fail "concurrent blesses left a temporary file"
    ls "$G/rope-apply" | grep -q '\.lock$' && fail "concurrent blesses left a lock file"
    ntests=$((ntests + 1))
    k=$((k + 1))
done
# Eight at once: each waiter whose lock file its holder removed takes the
# new one (no two writers at once: each rename is of its own whole file).
cp "$TMP/old.gz" "$gold"
pids=
for w in 1 2 3 4 5 6 7 8; do
    case $w in *[1357]) p=$P1 ;; *) p=$P2 ;; esac
    BP_TEST_SLOW_WRITE=1000 "$BITPROBE" bless rope-apply --probes "$p" $opts >"$TMP/w$w.out" 2>&1 &
    pids="$pids $!"
done
for p in $pids; do
    wait $p || fail "one of eight concurrent blesses failed: $(cat "$TMP"/w*.out)"
done
cmp -s "$gold" "$TMP/old.gz" || cmp -s "$gold" "$TMP/new.gz" ||
    fail "eight concurrent blesses left a golden that is neither old nor new"
[ -z "$(ls "$G/rope-apply" | grep -E '\.tmp\.|\.lock$')" ] ||
    fail "eight concurrent blesses left: $(ls "$G/rope-apply")"
ntests=$((ntests + 1))
done_ok
