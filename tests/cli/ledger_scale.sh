#!/bin/sh
# Op ledgers of real models' size, diffed correctly in time linear or
# n log n in their length (tests/hostile_ledger.py writes them): two
# streams whose ops never pair (their alignment's replaced block is all of
# both: pairing by base name once scanned B for each op of A), a stream
# with one cast inserted and every 1000th output changed, and a ledger of
# 5N captured tensors (each capture name was once looked up in a list of
# all).  N is 100000 (BP_SLOW=1, as `make check-slow` runs it: 1000000).
# The time limit is a hang guard, not a speed claim: 10k unpaired ops took
# 2.7 s, 40k 35 s, 160k captures 20 s before, so N = 100000 would have
# taken many minutes.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python"; exit 77; }
N=100000 lim=120
[ "${BP_SLOW:-0}" = 1 ] && N=1000000 lim=900
"$PY" "$top_srcdir/tests/hostile_ledger.py" "$TMP" $N || fail "cannot write the ledgers"

within $lim 1 diff "$TMP/a.ledger" "$TMP/b.ledger"
out_has "DIFFERENT: 2 introduced, $((2 * N - 2)) inherited, 0 absorbed, 0 identical, 0 not comparable (0 ops paired, $N only in A, $N only in B)"
k=$((N / 1000))
within $lim 1 diff "$TMP/a.ledger" "$TMP/c.ledger"
out_has "DIFFERENT: $k introduced, 1 inherited, $((k - 1)) absorbed, $((N - 2 * k + 1)) identical, 0 not comparable ($N ops paired, 0 only in A, 1 only in B)"
grep -qE "^  B#$((N / 2)) +aten::_to_copy " "$TMP/out" || fail "the inserted cast B#$((N / 2)) is not listed"
within $lim 0 diff "$TMP/caps.ledger" "$TMP/caps.ledger"
out_has "identical: ledgers A and B agree bit for bit ($((5 * N / 4)) ops paired one to one)"
done_ok
