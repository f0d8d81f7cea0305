# Failures stay local and probes are found where users put them: a probe
# file that does not load is one error result (FILE:LINE:COL) while the
# others run; .yml files are probes; a path runs that file; an unknown
# name gets the nearest one; an empty or missing directory says why.
. "$top_srcdir/tests/cli/lib.sh"
mkdir -p "$TMP/p" "$TMP/empty" "$TMP/yml"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/p/"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/yml/seed-div.yml"
printf 'name: zz-bad\nops: [\n  - x: {\n' >"$TMP/p/zz-bad.yaml"

# --- a broken file fails only its probe ---
run 0 run seed-div --probes "$TMP/p" --device cpu,oracle --no-golden
out_has "passed: 3 compared (3 identical)"
run 2 run --probes "$TMP/p" --device cpu,oracle --no-golden
head -1 "$TMP/out" | grep -q "^error: 3 compared (3 identical); 1 error$" ||
    fail "verdict: $(head -1 "$TMP/out")"
out_has "zz-bad: error: $TMP/p/zz-bad.yaml:3:"
run 2 run zz-bad --probes "$TMP/p" --device cpu,oracle --no-golden
out_has "zz-bad: error: $TMP/p/zz-bad.yaml:3:"
run 2 run --probes "$TMP/p" --device cpu,oracle --no-golden --junit -
out_has 'errors="1"'
run 2 list --probes "$TMP/p"
out_has "seed-div"
err_has "bitprobe: $TMP/p/zz-bad.yaml:3:"
run 2 bless --probes "$TMP/p" --golden "$TMP/g" --device cpu
err_has "not blessed: $TMP/p/zz-bad.yaml:3:"
[ -d "$TMP/g/seed-div" ] || fail "bless skipped the probes that load"

# --- .yml probes, and probes named by path ---
run 0 run --probes "$TMP/yml" --device cpu,oracle --no-golden
out_has "passed: 3 compared (3 identical)"
run 0 run "$TMP/yml/seed-div.yml" --probes "$TMP/empty" --device cpu,oracle --no-golden
out_has "passed: 3 compared (3 identical)"
run 0 run "$TMP/p/seed-div.yaml" --probes "$TMP/none" --device cpu,oracle --no-golden
run 2 run "$TMP/p/nope.yaml" --device cpu
err_has "no probe file '$TMP/p/nope.yaml'"

# --- an empty directory, an unknown name ---
run 2 run --probes "$TMP/empty" --device cpu
out_has "error: nothing compared (no probe files (*.yaml, *.yml) in $TMP/empty)"
run 2 run seed-dvi --probes "$TMP/p" --device cpu
err_has "unknown probe 'seed-dvi' in $TMP/p; did you mean 'seed-div'?"
run 2 list --probes "$TMP/none"
err_has "cannot open probe directory '$TMP/none'"
err_has "(from --probes)"
# Outside a project (no ./probes, nothing in the environment): where it
# looked and how to point elsewhere, unless an installed set exists.
(
    cd "$TMP/empty" || exit 1
    unset BITPROBE_PROBES BITPROBE_GOLDEN
    if ! "$BITPROBE" list >"$TMP/out" 2>"$TMP/err"; then
        grep -qF "or pass --probes DIR" "$TMP/err" || fail "list outside a project: $(cat "$TMP/err")"
    fi
) || exit 1
done_ok
