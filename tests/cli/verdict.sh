# Every report agrees with the exit status: one-sided tensors, missing
# goldens, skipped backends and nothing compared are results or verdicts,
# in the text, JSON, JUnit, Markdown and GitHub output alike.
. "$top_srcdir/tests/cli/lib.sh"
find_python || skip_later "no Python 3: the JSON summary not parsed"

# --- nothing compared is not a pass ---
mkdir -p "$TMP/empty"
run 2 run --probes "$TMP/empty" --device cpu
out_has "error: nothing compared (no probe files (*.yaml, *.yml) in $TMP/empty)"
run 2 run seed-div --device cpu --no-golden
out_has "error: nothing compared (one backend and --no-golden: nothing to compare with)"
run 2 run seed-div --device cpu --no-golden --junit -
out_has '<testsuites name="bitprobe" tests="1" failures="0" errors="1" skipped="0">'
out_has '<error message="error: nothing compared (one backend and --no-golden: nothing to compare with)" type="nothing compared"/>'
run 2 run seed-div --device cpu --no-golden --json -
out_has '"exit_status": 2'
out_has '"nothing_compared": "one backend and --no-golden: nothing to compare with"'
# ... unless the run is saved for a diff.
run 0 run seed-div --device cpu --no-golden --save "$TMP/a"
out_has "passed: nothing compared (one backend and --no-golden: saved for diff)"

# --- a diff whose only difference is a one-sided tensor: exit 1 everywhere ---
run 0 run seed-div seed-inv-freq --device cpu --no-golden --save "$TMP/b"
run 1 diff "$TMP/a" "$TMP/b" --json "$TMP/d.json" --junit "$TMP/d.xml" --markdown "$TMP/d.md"
out_has "only in b: $TMP/b"
head -1 "$TMP/out" | grep -qxF "drift: 3 compared (3 identical); 6 only in b" ||
    fail "verdict line: $(head -1 "$TMP/out")"
grep -q '^# bitprobe drift: 3 compared (3 identical); 6 only in b$' "$TMP/d.md" ||
    fail "Markdown title: $(head -1 "$TMP/d.md")"
grep -qF '**only in b**' "$TMP/d.md" || fail "Markdown table lacks the one-sided rows"
grep -qF '<testsuites name="bitprobe" tests="9" failures="6" errors="0" skipped="0">' "$TMP/d.xml" ||
    fail "JUnit counts: $(sed -n 2p "$TMP/d.xml")"
# (saved runs: the side's label names the backend too, "path:key")
grep -qF '<failure message="'"$TMP/b"':cpu-sleef" type="only in b"/>' "$TMP/d.xml" || fail "JUnit failure"
py - "$TMP/d.json" <<'PY' || fail "JSON summary"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert d["schema_version"] == 3
assert (s["verdict"], s["exit_status"], s["statuses"]["only_in_b"], s["drift"]) == ("drift", 1, 6, 6), s
assert sorted(set(r["status"] for r in d["results"])) == ["identical", "only_in_b"]
PY
# report gives the same verdict again, from the JSON and as GitHub output.
run 1 report "$TMP/d.json" --github
out_has "::error title=bitprobe%3A seed-inv-freq x fp32%3A "
# The same sides the other way round.
run 1 diff "$TMP/b" "$TMP/a" --quiet
out_has "6 only in a"
# Identical bundles pass.
run 0 diff "$TMP/a" "$TMP/a"

# --- a missing golden counts as an error (exit 2), the rest still runs ---
mkdir -p "$TMP/p"
cp "$top_srcdir/probes/seed-div.yaml" "$top_srcdir/probes/seed-inv-freq.yaml" "$TMP/p/"
run 0 bless seed-div --device cpu --probes "$TMP/p" --golden "$TMP/g"
run 2 run --device cpu --probes "$TMP/p" --golden "$TMP/g"
out_has "error: 3 compared (3 identical); 6 missing golden"
out_has "hint: bless the missing goldens with 'bitprobe bless seed-inv-freq --device cpu --probes $TMP/p --golden $TMP/g'"
run 2 run --device cpu --probes "$TMP/p" --golden "$TMP/g" --junit -
out_has 'errors="6"'
out_has 'type="missing golden"'
run 0 run --device cpu --probes "$TMP/p" --golden "$TMP/g" --missing=skip
out_has "passed: 3 compared (3 identical); 6 missing golden"
# Following the hint fixes it.
run 0 bless seed-inv-freq --device cpu --probes "$TMP/p" --golden "$TMP/g"
run 0 run --device cpu --probes "$TMP/p" --golden "$TMP/g"
done_ok
