#!/bin/sh
# A report of 100,000 results written back as text, Markdown and JUnit in
# time n log n (results grouped by cause and by probe once, not each
# against all: 40k results took 19 s, 100k 78 s as text, Markdown longer),
# with the groups right: not-compared results of one cause on one line with
# their count, one JUnit suite per probe holding each of its results (the
# XML parsed), the Markdown within its size.  The time limit is a hang
# guard, not a speed claim.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python"; exit 77; }
"$PY" - "$TMP/r.json" <<'PY' || fail "cannot write the report"
import json, sys
base = {"tool": "bitprobe", "version": "0.1.0", "command": "bitprobe diff a b",
        "env": {}, "notes": [], "values": []}
drift = {"output": "", "dtype": "fp32", "kind": "diff", "a": "a", "b": "b",
         "policy": "exact", "compared": True, "counts": True, "pass": False,
         "shape": [2], "total": 2, "mismatched": 1, "beyond_policy": 1,
         "class_changes": 0, "zero_sign_diffs": 0,
         "max_abs": {"value": 1.0, "index": [1]}, "max_rel": {"value": 0.5, "index": [1]},
         "max_ulp": {"value": 4194304, "index": [1]}, "histogram": {"0": 1, "4194305-8388608": 1},
         "first": []}
missing = {"output": "y", "dtype": "fp32", "kind": "golden", "a": "golden cpu-sleef",
           "b": "cpu", "policy": "exact", "compared": False, "counts": True,
           "status": "missing_golden", "note": "no golden"}
res = []
for i in range(50000):          # 50,000 probes with one drift each
    r = dict(drift); r["probe"] = "t%05d" % i; res.append(r)
for i in range(50000):          # 50,000 missing goldens of 500 probes, 100 each
    r = dict(missing); r["probe"] = "p%03d" % (i % 500); res.append(r)
base["results"] = res
json.dump(base, open(sys.argv[1], "w"))
PY

within 300 2 report "$TMP/r.json"
out_has "  t49999 fp32 [2]: b vs a: 1 of 2 differ (50%)"
out_has "  p499: cpu vs golden cpu-sleef: missing golden: no golden (100 comparisons)"
[ "$(grep -c '^  p[0-9]*: cpu vs golden cpu-sleef: missing golden: no golden (100 comparisons)$' "$TMP/out")" -eq 500 ] ||
    fail "not one line per cause (500)"
within 300 2 report "$TMP/r.json" -q
[ "$(grep -c '^  p[0-9]*: cpu vs golden cpu-sleef: missing golden' "$TMP/out")" -eq 500 ] ||
    fail "-q: not one line per cause"
within 300 2 report "$TMP/r.json" --markdown "$TMP/r.md" --junit "$TMP/r.xml" -q
[ "$(wc -c <"$TMP/r.md")" -le 65536 ] || fail "the Markdown is over its limit"
"$PY" - "$TMP/r.xml" <<'PY' || fail "the JUnit suites"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = root.findall("testsuite")
assert len(suites) == 50500, len(suites)
n = {s.get("name"): len(s.findall("testcase")) for s in suites}
assert n["bitprobe.t00000"] == 1 and n["bitprobe.p123"] == 100, (n["bitprobe.p123"],)
assert sum(n.values()) == 100000
PY
done_ok
