# Each result names the run it comes from: an output kept in fp32 in the
# bf16 and the fp16 run of a probe (sum-fp32-accumulator's t_f32) is two
# results whose titles differ by the run's dtype in the text, JSON, JUnit,
# Markdown and GitHub output, each shows its own run's values, and a diff
# of two saved runs names the run as well.
. "$top_srcdir/tests/cli/lib.sh"
opts="sum-fp32-accumulator --device cpu,oracle --no-golden"

# -vv: every result, identical ones too (which of them differ depends on
# the CPU's summation order)
run 0 run $opts -vv
out_has "sum-fp32-accumulator t_f32 fp32 (bf16 run) []"
out_has "sum-fp32-accumulator t_f32 fp32 (fp16 run) []"
# an output in its run's own dtype needs no more
out_lacks "t bf16 (bf16 run)"
# no two result lines alike
dups=$(grep '^sum-fp32' "$TMP/out" | sort | uniq -d)
[ -z "$dups" ] || fail "result lines that name the same thing: $dups"
# each one-element result shows two values (cpu, oracle) of its own run,
# not the four of both runs
awk '/^sum-fp32-accumulator t_f32 fp32 \(fp16 run\)/ {on = 1; next}
     /^sum-fp32/ {on = 0} on && /^(  \[  0\] |        )(cpu|oracle) / {n++}
     END {exit n == 2 ? 0 : 1}' "$TMP/out" ||
    fail "the fp16 run's t_f32 shows other than its two values: $(cat "$TMP/out")"

run 0 run $opts --json "$TMP/r.json" --junit "$TMP/r.xml" --markdown "$TMP/r.md" --quiet
grep -q 'name="t_f32.fp32 (bf16 run).oracle vs cpu"' "$TMP/r.xml" ||
    fail "JUnit names the run: $(grep t_f32 "$TMP/r.xml")"
grep -q 'name="t_f32.fp32 (fp16 run).oracle vs cpu"' "$TMP/r.xml" ||
    fail "JUnit names the run: $(grep t_f32 "$TMP/r.xml")"
grep -qF '| `sum-fp32-accumulator` | `t_f32` | fp32 (bf16 run) |' "$TMP/r.md" ||
    fail "Markdown names the run: $(grep t_f32 "$TMP/r.md")"
grep -qF '`sum-fp32-accumulator` `t_f32` fp32 (fp16 run)' "$TMP/r.md" ||
    fail "Markdown names the run of an identical result: $(grep t_f32 "$TMP/r.md")"
GITHUB_STEP_SUMMARY="$TMP/gh.md" run 0 run $opts --github
grep -qF '| `sum-fp32-accumulator` | `t_f32` | fp32 (bf16 run) |' "$TMP/gh.md" ||
    fail "the step summary names the run: $(grep t_f32 "$TMP/gh.md")"
if find_python; then
    py - "$TMP/r.json" <<'PY' || fail "the JSON results name their run"
import json, sys
d = json.load(open(sys.argv[1]))
t = [(r["run_dtype"], r["dtype"]) for r in d["results"] if r["output"] == "t_f32"]
assert sorted(t) == [("bf16", "fp32"), ("fp16", "fp32")], t
v = [(v["run_dtype"], v["side"]) for v in d["values"] if v["output"] == "t_f32"]
assert sorted(v) == [("bf16", "cpu"), ("bf16", "oracle"), ("fp16", "cpu"), ("fp16", "oracle")], v
PY
fi
# the report read back keeps the runs apart
run 0 report "$TMP/r.json" -vv
out_has "sum-fp32-accumulator t_f32 fp32 (fp16 run) []"

# saved runs: the tensor's name carries its run's dtype
run 0 run sum-fp32-accumulator --device cpu --no-golden --save "$TMP/a" --quiet
run 0 run sum-fp32-accumulator --device cpu --no-golden --cpu-math libm --save "$TMP/b" --quiet
run 0 diff "$TMP/a" "$TMP/b" -vv
out_has "sum-fp32-accumulator t_f32 fp32 (bf16 run) []"
out_has "sum-fp32-accumulator t_f32 fp32 (fp16 run) []"
done_ok
