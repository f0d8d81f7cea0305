# What run prints to do next is one command said once: the goldens missing
# for several probes and backends are blessed by one 'bitprobe bless'
# line that keeps the user's options (--probes, --golden, --cpu-math, and
# --dtype when only some dtypes are missing), and following it makes the
# run pass.  A golden file missing is one line per probe and backend.
. "$top_srcdir/tests/cli/lib.sh"
P="$TMP/p" G="$TMP/g"
mkdir -p "$P"
cp "$top_srcdir/probes/seed-div.yaml" "$top_srcdir/probes/sum-fp32-accumulator.yaml" "$P/"
opts="--probes $P --golden $G"

run 2 run $opts --device cpu,oracle
cmd="bitprobe bless seed-div sum-fp32-accumulator --device cpu,oracle --probes $P --golden $G"
out_has "hint: bless the missing goldens with '$cmd', or pass --missing=skip"
[ "$(grep -c 'bitprobe bless' "$TMP/out")" -eq 1 ] || fail "the bless command is said more than once: $(cat "$TMP/out")"
out_has "  sum-fp32-accumulator: oracle vs golden oracle: missing golden: "
out_has "(14 comparisons)"
[ "$(grep -c 'missing golden: ' "$TMP/out")" -le 8 ] || fail "one line per missing output: $(cat "$TMP/out")"
run 2 run $opts --device cpu,oracle --json "$TMP/r.json" --junit "$TMP/r.xml" --markdown "$TMP/r.md" --quiet
grep -qF "\"bless the missing goldens with '$cmd', or pass --missing=skip\"" "$TMP/r.json" ||
    fail "the JSON report's hints: $(grep -A2 hints "$TMP/r.json")"
grep -q '<property name="hint" value="bless the missing goldens' "$TMP/r.xml" || fail "JUnit's hint"
[ "$(grep -c 'bitprobe bless' "$TMP/r.md")" -eq 1 ] || fail "Markdown says the command once"
grep -q 'bless it with' "$TMP/r.json" && fail "a result's note still holds the command"
# following the hint
run 0 ${cmd#bitprobe }
run 0 run $opts --device cpu,oracle

# another CPU math library: its goldens are others; the hint keeps
# --cpu-math, so following it leaves the default's goldens alone
cp -r "$G" "$TMP/before"
run 2 run seed-div $opts --device cpu --cpu-math libm
out_has "--device cpu --cpu-math libm --probes $P"
line=$(grep '^hint: ' "$TMP/out" | sed "s/^hint: bless the missing goldens with '\([^']*\)'.*/\1/")
run 0 ${line#bitprobe }
run 0 run seed-div $opts --device cpu --cpu-math libm
diff -r "$TMP/before/seed-div" "$G/seed-div" | grep -v libm | grep -q . &&
    fail "following the hint changed another golden: $(diff -r "$TMP/before/seed-div" "$G/seed-div")"

# a golden file there, some dtypes missing: bless those (--dtype), keep
# the rest
rm -r "$G/seed-div"
run 0 bless seed-div $opts --device cpu --dtype fp32
run 2 run seed-div $opts --device cpu
out_has "hint: bless the missing goldens with 'bitprobe bless seed-div --device cpu --dtype bf16,fp16 --probes $P --golden $G'"
run 0 bless seed-div --device cpu --dtype bf16,fp16 $opts
out_lacks "y.fp32"
run 0 run seed-div $opts --device cpu
out_has "passed: 3 compared (3 identical)"

# --missing=skip: nothing to fix, no hint
rm -r "$G/sum-fp32-accumulator"
run 0 run $opts --device cpu --missing=skip
out_lacks "hint:"
done_ok
