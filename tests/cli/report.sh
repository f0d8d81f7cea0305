# bitprobe report: reports read back and rendered again.  Round trips
# against the writing command's own output (text, JUnit, Markdown, JSON and
# GitHub byte for byte, the exit status too), a hand-written report whose
# text is derived by hand (tests/report-good), and every bad input under
# tests/report-bad refused with exit status 2 and its exact message.
. "$top_srcdir/tests/cli/lib.sh"
data="$top_srcdir/tests/data/torch"
cpu="$data/rope_cpu.safetensors.gz"
zero="$data/rope_cuda_zero.safetensors.gz"
good="$top_srcdir/tests/report-good"

# same A B WHAT: the two files are identical.
same() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ: $(diff "$1" "$2" | head -20)"; }

# --- usage ---
run 0 report --help
out_has "usage: bitprobe report FILE"
run 2 report
err_has "needs one report file, got 0"
run 2 report a.json --json - --junit -
err_has "only one of --json, --junit and --markdown"
run 2 report "$good/minimal.json" --first many
err_has "--first needs a count, not 'many'"

# --- a hand-written report: minimal.txt was written by hand from the rules
# in rep_text.c, not by bitprobe ---
run 1 report "$good/minimal.json"
same "$TMP/out" "$good/minimal.txt" "minimal report text"
# --quiet: the verdict and the failing result's line (lines 1-2).
run 1 report "$good/minimal.json" --quiet
sed -n '1,2p' "$good/minimal.txt" >"$TMP/want"
same "$TMP/out" "$TMP/want" "minimal report --quiet"
# --first 0: no mismatch lines (9-10), "... 1 more" instead.
run 1 report "$good/minimal.json" --first 0
sed '9,10d' "$good/minimal.txt" | sed '8a\    ... 1 more' >"$TMP/want"
same "$TMP/out" "$TMP/want" "minimal report --first 0"
# JUnit: one failure, one skipped, with the original command line.
run 1 report "$good/minimal.json" --junit -
out_has '<testsuites name="bitprobe" tests="2" failures="1" errors="0" skipped="1">'
out_has '<property name="command" value="bitprobe run tiny --device cpu,oracle"/>'
out_has '<skipped message="no golden"/>'

# --- round trip: run's own reports, from its JSON ---
# A deliberately drifting golden set: the shipped goldens, except that
# arange-step's CPU golden is the oracle's (the CPU's arange differs from
# the correctly rounded one at 79, 78 and 54 elements of fp32, bf16 and
# fp16), so the run has drift to report (exit 1, 3 drifting comparisons)
# beside all the others.  (golden_shipped.sh checks the shipped goldens.)
mkdir "$TMP/golden" "$TMP/golden/arange-step" || fail "mkdir"
for d in "$top_srcdir"/golden/*; do
    [ "$(basename "$d")" = arange-step ] || ln -s "$d" "$TMP/golden/" || fail "ln $d"
done
for k in oracle cpu-sleef; do
    cp "$top_srcdir/golden/arange-step/oracle.safetensors.gz" \
        "$TMP/golden/arange-step/$k.safetensors.gz" || fail "cp"
done
cd "$top_srcdir" || fail "cannot cd to $top_srcdir"
"$BITPROBE" run --device cpu,oracle --probes probes --golden "$TMP/golden" --json "$TMP/a.json" \
    --junit "$TMP/a.xml" --markdown "$TMP/a.md" >"$TMP/a.txt" 2>"$TMP/a.err"
want=$?
[ "$want" -eq 1 ] || fail "run on the drifting goldens: exit $want, expected 1: $(cat "$TMP/a.err")"
grep -q "^drift: 3 of [0-9]* compared beyond policy" "$TMP/a.txt" ||
    fail "run on the drifting goldens: $(tail -1 "$TMP/a.txt")"
run "$want" report "$TMP/a.json" --junit "$TMP/b.xml" --markdown "$TMP/b.md"
same "$TMP/out" "$TMP/a.txt" "run text"
same "$TMP/b.xml" "$TMP/a.xml" "run JUnit"
same "$TMP/b.md" "$TMP/a.md" "run Markdown"
run "$want" report "$TMP/a.json" --json "$TMP/c.json"
same "$TMP/c.json" "$TMP/a.json" "run JSON"
# The command line the reports carry is run's, not report's.
grep -qF '<property name="command" value="bitprobe run --device cpu,oracle --probes probes' \
    "$TMP/b.xml" || fail "JUnit lost run's command line"
grep -qxF 'bitprobe run --device cpu,oracle --probes probes --golden '"$TMP/golden"' --json '"$TMP/a.json"' --junit '"$TMP/a.xml"' --markdown '"$TMP/a.md" \
    "$TMP/b.md" || fail "Markdown lost run's command line"
# From standard input, quiet.
"$BITPROBE" run --device cpu,oracle --probes probes --golden "$TMP/golden" --quiet >"$TMP/q.txt" 2>/dev/null
"$BITPROBE" report - --quiet <"$TMP/a.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq "$want" ] || fail "report - : exit status"
same "$TMP/out" "$TMP/q.txt" "run --quiet text"

# --- round trip: a diff with drift (exit 1 must come back) ---
run 1 diff "$cpu" "$zero" --first 3 --json "$TMP/d.json" --junit "$TMP/d.xml" \
    --markdown "$TMP/d.md"
cp "$TMP/out" "$TMP/d.txt"
run 1 report "$TMP/d.json" --json "$TMP/e.json" --junit "$TMP/e.xml" --markdown "$TMP/e.md"
same "$TMP/out" "$TMP/d.txt" "diff text"
for x in json xml md; do same "$TMP/e.$x" "$TMP/d.$x" "diff $x"; done
run 1 diff "$cpu" "$zero" --first 3 --quiet
cp "$TMP/out" "$TMP/d.txt"
run 1 report "$TMP/d.json" --quiet
same "$TMP/out" "$TMP/d.txt" "diff --quiet text"
run 1 report "$TMP/d.json" --first 1 -v
out_has "... 329331 more"
# A policy with a mismatch allowance: "N allowed" comes from the policy and
# the total (0.7 of 524288), the elements beyond it from the histogram
# (329332 differ, 54444 of them by 1 ulp); JUnit shows it.
run 0 diff "$cpu" "$zero" --policy ulp=1,fraction=0.7 --json "$TMP/f.json" --junit "$TMP/f.xml"
run 0 report "$TMP/f.json" --junit "$TMP/g.xml"
same "$TMP/g.xml" "$TMP/f.xml" "JUnit with an allowance"
grep -qF "274888 beyond policy ulp&lt;=1,fraction&lt;=0.7, 367001 allowed" "$TMP/g.xml" ||
    fail "JUnit lacks the allowance"
# GitHub's annotations and step summary.
export GITHUB_STEP_SUMMARY="$TMP/s1.md"
run 1 diff "$cpu" "$zero" --first 3 --github
cp "$TMP/out" "$TMP/g1.txt"
GITHUB_STEP_SUMMARY="$TMP/s2.md"
run 1 report "$TMP/d.json" --github
unset GITHUB_STEP_SUMMARY
same "$TMP/out" "$TMP/g1.txt" "GitHub annotations"
same "$TMP/s2.md" "$TMP/s1.md" "GitHub step summary"
out_has "::error"
# Tensors on one side only: nothing compared, an error (exit 2) with its
# reason, from diff and from report alike.
run 2 diff "$cpu" "$top_srcdir/tests/st-good/meta.safetensors" --json "$TMP/o.json"
run 2 report "$TMP/o.json"
out_has "only in a: $(rel "$cpu")"
out_has "error: nothing compared (one-sided); 3 only in a"

# --- a bundle: its manifest carries the report ---
run 0 run seed-div --device cpu,oracle --save "$TMP/bun" --json "$TMP/s.json"
cp "$TMP/out" "$TMP/s.txt"
run 0 report "$TMP/bun" --json "$TMP/t.json"
run 0 report "$TMP/bun"
same "$TMP/out" "$TMP/s.txt" "bundle text"
# The manifest keeps its keys sorted: the same JSON, in another order.
if find_python; then
    "$PY" - "$TMP/s.json" "$TMP/t.json" <<'PY' || fail "bundle JSON differs from run's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
else
    skip_later "no Python 3: the bundle's JSON not compared with run's"
fi

# --- bad input: exit 2 and exactly this message, for every file ---
bad() {
    f=$1
    shift
    (cd "$top_srcdir/tests/report-bad" && "$BITPROBE" report "$f") >"$TMP/out" 2>"$TMP/err"
    got=$?
    ntests=$((ntests + 1))
    [ "$got" -eq 2 ] || fail "report $f: exit $got, expected 2"
    printf 'bitprobe: %s\n' "$*" >"$TMP/want"
    same "$TMP/err" "$TMP/want" "message for $f"
    [ -s "$TMP/out" ] && fail "report $f wrote to stdout"
    echo "$f" >>"$TMP/checked"
}
: >"$TMP/checked"
bad malformed.json "malformed.json:4:10: invalid JSON: '}' expected near '\"results\"'"
bad duplicate-key.json "duplicate-key.json:3:7: invalid JSON: duplicate object key near '\"tool\"'"
bad truncated.json "truncated.json:44:7: invalid JSON: premature end of input near '\"out'"
bad empty.json "empty.json: empty, not a JSON report"
bad probe.yaml "probe.yaml: not a JSON report (it does not begin with '{')"
bad tensors.safetensors "tensors.safetensors: not a JSON report (it does not begin with '{')"
bad no-tool.json 'no-tool.json: not a bitprobe report (no "tool": "bitprobe")'
bad no-results.json 'no-results.json: bitprobe JSON without "results", not a report (list, env and fingerprint write other documents)'
bad fingerprint.json 'fingerprint.json: bitprobe JSON without "results", not a report (list, env and fingerprint write other documents)'
bad no-manifest "no-manifest: a directory without manifest.json, not a bundle (run --save DIR writes one)"
bad manifest-no-report 'manifest-no-report/manifest.json: bitprobe JSON without "results", not a report (list, env and fingerprint write other documents)'
bad missing-field.json "missing-field.json: results[0].max_ulp.value: missing (a value)"
bad wrong-type.json "wrong-type.json: results[0].total: expected a count (an integer), found a string"
bad wrong-type-bool.json "wrong-type-bool.json: results[0].compared: expected true or false, found an integer"
bad result-not-object.json "result-not-object.json: results[1]: expected a result (an object), found a string"
bad note-not-string.json "note-not-string.json: notes[0]: expected a string, found an integer"
bad unknown-kind.json "unknown-kind.json: results[0].kind: unknown result kind 'golden-ish' (cross, golden, repeat, diff)"
bad unknown-dtype.json "unknown-dtype.json: results[0].dtype: unknown dtype 'fp8'"
bad bad-policy.json "bad-policy.json: results[0].policy: invalid policy 'ulp<=two': ulp wants a non-negative integer, got 'two'"
bad negative-count.json "negative-count.json: results[0].beyond_policy: negative count (-1)"
bad mismatched-over-total.json "mismatched-over-total.json: results[0].mismatched: 3 is more than total (2)"
bad total-not-shape.json "total-not-shape.json: results[0].total: 3, but shape [2] holds 2 elements"
bad too-many-dims.json "too-many-dims.json: results[0].shape: 9 dimensions, at most 8"
bad negative-size.json "negative-size.json: results[0].shape[0]: negative size (-2)"
bad index-outside.json "index-outside.json: results[0].max_abs.index[0]: 2 is outside shape [2]"
bad index-rank.json "index-rank.json: results[0].max_rel.index: 2 indices for shape [2]"
bad index-not-flat.json "index-not-flat.json: results[0].first[0].index: names flat position 1, but flat is 0"
bad first-too-many.json "first-too-many.json: results[0].first: 2 mismatches, but mismatched is 1"
bad histogram-sum.json "histogram-sum.json: results[0].histogram: counts 3 elements, but total is 2"
bad histogram-label.json 'histogram-label.json: results[0].histogram."1-2": not an ulp range (0, +0/-0, 1, 2, 3-4, 5-8, ..., inf/nan)'
bad bad-hex.json "bad-hex.json: results[0].first[0].b.hex: '0x4000001' is not fp32 bits (0x and 8 hex digits)"
bad bad-ulp.json 'bad-ulp.json: results[0].max_ulp.value: expected an ulp distance (an integer or "class change"), found another string'
bad too-many-values.json "too-many-values.json: values[0].values: 17 values, at most 16"
bad summary-drift.json "summary-drift.json: summary.drift: 0, but the results give 1"
bad summary-exit.json "summary-exit.json: summary.exit_status: 0, but the results give 1"
bad summary-verdict.json "summary-verdict.json: summary.verdict: 'passed', but the results give 'drift'"
bad unknown-status.json "unknown-status.json: results[0].status: unknown status 'fine'"
bad status-contradicts.json "status-contradicts.json: results[0].status: 'identical', but the comparison gives 'drift'"
bad status-not-compared.json "status-not-compared.json: results[1].status: 'within_policy' for a result that was not compared"
bad schema-future.json "schema-future.json: schema_version: 4 is not a schema this bitprobe reads (1 to 3)"
# Every file of the corpus has its message checked above.
for f in "$top_srcdir"/tests/report-bad/*; do
    b=$(basename "$f")
    [ "$b" = make.py ] && continue
    grep -qxF "$b" "$TMP/checked" || fail "tests/report-bad/$b has no expected message"
done
# Over 256 MiB (sparse; refused before it is read), and a missing file.
truncate -s 300M "$TMP/big.json" 2>/dev/null || dd if=/dev/null of="$TMP/big.json" bs=1M seek=300 2>/dev/null
run 2 report "$TMP/big.json"
err_has "bitprobe: $TMP/big.json: larger than 268435456 bytes, the most a report may have"
run 2 report "$TMP/nope.json"
err_has "bitprobe: cannot read '$TMP/nope.json': No such file or directory"
# A destination that cannot be written.
run 2 report "$good/minimal.json" --junit "$TMP/no/such/dir/x.xml"
err_has "--junit '$TMP/no/such/dir/x.xml': directory '$TMP/no/such/dir' does not exist"
done_ok
