# Every bad probe under tests/probes-bad is refused by the real commands with
# exit status 2 and a "FILE:LINE:COL: what" message (the exact messages are
# checked in check_probe; run reports it as the probe's error result); an
# unknown probe name is refused the same way.
. "$top_srcdir/tests/cli/lib.sh"
for f in "$top_srcdir"/tests/probes-bad/*.yaml; do
    b=$(basename "$f")
    rm -rf "$TMP/p"
    mkdir -p "$TMP/p"
    cp "$f" "$TMP/p/"
    run 2 list --probes "$TMP/p"
    grep -qE "$b:[0-9]+:[0-9]+: " "$TMP/err" || fail "$b: no FILE:LINE:COL in: $(cat "$TMP/err")"
    # run: an error result of its own (stdout), the verdict error
    run 2 run --probes "$TMP/p" --device cpu --no-golden
    grep -qE "$b:[0-9]+:[0-9]+: " "$TMP/out" || fail "run $b: no FILE:LINE:COL"
done
# a few messages, end to end
cp "$top_srcdir/tests/probes-bad/unknown-op.yaml" "$TMP/p/"
run 2 list --probes "$TMP/p"
err_has "unknown op"
run 2 run no-such-probe --device cpu
err_has "unknown probe 'no-such-probe'"
run 2 list --probes "$TMP/does-not-exist"
err_has "does-not-exist"
done_ok
