# bench/init_audit.sh's workings, on llama2023.py's tiny model (the
# numbers are the bench's business, not this test's): each way's figure is
# the wall time the audit's own report gives it (kept under OUT, read here
# with json), beside the reference; a progress line for every build of the
# audit, in its order; over the target a way is MISSED and the bench exits
# 1; when its budget (BENCH_BUDGET_S) or a SIGTERM ends it, it stops the
# audit with every process under it, leaves nothing behind and prints every
# way MISSED with what it saw, exit 1; a bench that cannot run (no bitprobe,
# a model that does not build) exits 2, never 0 or 77.
# SKIP without a Python with torch.
. "$top_srcdir/tests/cli/lib.sh"
find_python torch || { echo "SKIP: no Python with torch (apt-get install python3-torch)"; exit 77; }
export PYTHON3="$PY"
CUDA_VISIBLE_DEVICES=
export CUDA_VISIBLE_DEVICES
TMPDIR=$TMP/t
export TMPDIR
mkdir -p "$TMPDIR"
BENCH="$top_srcdir/bench/init_audit.sh"
TINY="$top_srcdir/tests/init_audit/llama2023.py:tiny"

# bench EXPECTED_STATUS LIMIT ENV...: the bench with ENV, within LIMIT s
# (a hang guard, not a timing), its output in $TMP/out
bench() {
    want=$1 lim=$2
    shift 2
    ntests=$((ntests + 1))
    env "$@" timeout "$lim" sh "$BENCH" >"$TMP/out" 2>"$TMP/err"
    got=$?
    [ $got -ne 124 ] || fail "bench/init_audit.sh $*: still running after $lim s"
    [ $got -eq "$want" ] || fail "bench/init_audit.sh $*: exit $got, expected $want"
}
# nothing left: no process of the bench's audit, no temporary directory
left_nothing() {
    sleep 1
    ps -eo args | grep -F "$TMPDIR/bench-init-audit-" | grep -v grep >"$TMP/ps" &&
        fail "processes left behind: $(cat "$TMP/ps")"
    ls "$TMPDIR" | grep . && fail "files left in \$TMPDIR"
    :
}

bench 0 300 MODEL="$TINY" WAYS=cpu,meta OUT="$TMP/keep"
"$PY" - "$TMP/out" "$TMP/keep/init-audit-bench.json" <<'PY' || fail "the figures"
import json, re, sys
out = open(sys.argv[1]).read()
rep = json.load(open(sys.argv[2]))
secs = {w["name"]: w["seconds"] for w in rep["ways"]}
assert set(secs) == {"cpu", "meta"}, secs
ref = re.search(r"^progress: .* reference \(a fresh process .*\): ([0-9.]+) s \(construction",
                out, re.M)
assert ref, out
figs = re.findall(r"^figure: (.*)$", out, re.M)
assert len(figs) == 3, figs
for w, f in zip(("cpu", "meta"), figs):
    # the audit's own seconds, not the bench's
    want = ("init-audit llama2023.py:tiny, parameters on meta, way %s: wall of its process | "
            "%.2f s (reference %s s) | <= 60 s | met" % (w, secs[w], ref.group(1)))
    assert f == want, (f, want)
assert re.match(r"init-audit llama2023.py:tiny, parameters on meta: the whole audit \(4 builds, "
                r"the oracle, the comparisons, explain\) \| [0-9.]+ s \| - \| \(no target\)$",
                figs[2]), figs[2]
built = re.findall(r"^progress: \[ *[0-9.]+ s\] built (.*): [0-9.]+ s \(ok\)$", out, re.M)
assert built == ["cpu (the reference way)", "cpu's poisoned twin", "meta",
                 "meta's poisoned twin"], built
assert out.index("built meta's poisoned twin") < out.index("the audit ended: exit 1") < \
    out.index("figure: "), out
assert "target: every way at most 60 s: met" in out, out
PY
out_has "audit's verdict: init-audit drift: "
[ -s "$TMP/keep/init-audit-bench.report.txt" ] || fail "the audit's text was not kept"
left_nothing

# over the target: MISSED, exit 1
ntests=$((ntests + 1))
"$PY" "$top_srcdir/bench/init_audit.py" "$TINY" --bitprobe "$BITPROBE" \
    --python-dir "$top_srcdir/python" --ways cpu,meta --target 0.01 >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] || fail "a way over the target: not exit 1"
grep -q "^figure: init-audit llama2023.py:tiny, parameters on meta, way cpu: wall of its process | [0-9.]* s (reference [0-9.]* s) | <= 0 s | MISSED$" \
    "$TMP/out" || fail "no MISSED figure over the target"
out_has "target: every way at most 0 s: MISSED by cpu, meta"

# the budget: spent during the reference or the audit, the bench stops in
# time and reports every way MISSED
bench 1 60 MODEL="$TINY" WAYS=cpu,meta BENCH_BUDGET_S=3
[ "$(grep -c '^figure: .*, way \(cpu\|meta\): .* | <= 60 s | MISSED$' "$TMP/out")" -eq 2 ] ||
    fail "the budget spent: not every way MISSED"
out_has "the 3 s budget is spent"
left_nothing

# a SIGTERM (bench/gpu.sh's timeout) ends the budget: what was seen is reported
# (sent once the audit has started, so that a fast machine cannot finish
# first)
ntests=$((ntests + 1))
PYTHONUNBUFFERED=1 "$PY" "$top_srcdir/bench/init_audit.py" "$TINY" --bitprobe "$BITPROBE" \
    --python-dir "$top_srcdir/python" --ways cpu,meta >"$TMP/out" 2>"$TMP/err" &
pid=$!
i=0
while ! grep -q '^audit: ' "$TMP/out" && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -TERM $pid
wait $pid
[ $? -eq 1 ] || fail "SIGTERM: not exit 1"
[ "$(grep -c '^figure: .*, way \(cpu\|meta\): .*stopped by SIGTERM.* | <= 60 s | MISSED$' "$TMP/out")" -eq 2 ] ||
    fail "SIGTERM: not every way MISSED"
left_nothing

# cannot run: a failure, not a skip
bench 2 60 BITPROBE="$TMP/none"
out_has "cannot run the audit: no bitprobe at '$TMP/none'"
bench 2 60 MODEL="$TMP/none.py:f"
out_has "the reference (a bare build of $TMP/none.py:f) failed, exit 1: "
bench 2 60 MODEL="$TINY" WAYS=cpu,cuda
out_has "the audit failed (exit 2): bitprobe init-audit: way 'cuda' cannot run here"
grep -q "^figure: .*, way cuda: wall of its process | not built (the audit failed); reference [0-9.]* s | <= 60 s | MISSED$" \
    "$TMP/out" || fail "no MISSED figure for a way the audit did not build"
left_nothing
done_ok
