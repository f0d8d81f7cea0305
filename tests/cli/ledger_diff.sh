# bitprobe diff on op ledgers (tests/ledger-good, written by
# tests/ledger-bad/make.py): identical ledgers exit 0 with one verdict line,
# a one-ulp division exits 1 naming the division and its module, the JSON
# report carries the same, a broken ledger exits 2 naming line and byte, a
# ledger against a tensor file exits 2.
. "$top_srcdir/tests/cli/lib.sh"
G="$top_srcdir/tests/ledger-good"
run 0 diff "$G/good.ledger" "$G/good.ledger"
out_has "identical: ledgers A and B agree bit for bit (3 ops paired one to one)"
[ "$(head -1 "$TMP/out")" = "identical: ledgers A and B agree bit for bit (3 ops paired one to one)" ] ||
    fail "verdict not first"
run 0 diff -q "$G/good.ledger" "$G/good.ledger"
[ ! -s "$TMP/out" ] || fail "diff -q of identical ledgers printed something"

run 1 diff "$G/good.ledger" "$G/good-b.ledger"
out_has "DIFFERENT: 1 introduced, 1 inherited, 0 absorbed, 1 identical, 0 not comparable (3 ops paired one to one)"
out_has "first introduced: A#1 B#1 aten::div.Tensor in module 'rope' (out[0] differs)"
out_has "A f1fdf75b8af73a3c  B 4d7568dd017937a5  differ"
out_has "bitprobe explain $G/good.ledger $G/good-b.ledger --op b1"
out_has "  A#2 B#2       aten::mul.Tensor             (no module)              in[1] differs (from B#1)"
out_has "  rope                          2         1          1         0        0      0  1/2 (50%)        A#1 B#1"

run 1 diff "$G/good.ledger" "$G/good-b.ledger" --json "$TMP/r.json"
if find_python; then
    "$PY" - "$TMP/r.json" <<'PY' || fail "JSON report"
import json, sys
r = json.load(open(sys.argv[1]))["ledger"]
assert r["counts"] == {"identical": 1, "introduced": 1, "inherited": 1, "absorbed": 0,
                       "not_comparable": 0}, r["counts"]
f = r["first_introduced"]
assert (f["a"], f["b"], f["op"], f["module"]) == (1, 1, "aten::div.Tensor", "rope"), f
assert f["differ"] == {"a": {"in": [], "out": [0]}, "b": {"in": [], "out": [0]}}, f
assert [e["status"] for e in r["entries"]] == ["introduced", "inherited"], r["entries"]
assert r["alignment"]["exact"] and r["a"]["ops"] == 3, r["alignment"]
assert [m["module"] for m in r["modules"]] == ["rope", ""], r["modules"]
PY
else
    skip_later "no Python to read the JSON report"
fi

run 1 diff "$G/good.ledger" "$G/good-b.ledger" --junit "$TMP/j.xml" --markdown "$TMP/m.md"
grep -q '<testsuites name="bitprobe diff" tests="2" failures="2" errors="0">' "$TMP/j.xml" ||
    fail "JUnit: $(cat "$TMP/j.xml")"
grep -q '<testcase classname="ledger" name="rope"><failure message="1 introduced; first at A#1 B#1 aten::div.Tensor; 1 of 2 outputs differ">' "$TMP/j.xml" ||
    fail "JUnit rope: $(cat "$TMP/j.xml")"
grep -q '^# bitprobe: op ledgers differ: 1 introduced, 1 inherited, 0 absorbed$' "$TMP/m.md" ||
    fail "Markdown title: $(head -2 "$TMP/m.md")"
grep -q '^## First introduced: A#1 B#1 `aten::div.Tensor` in module `rope`$' "$TMP/m.md" ||
    fail "Markdown: $(cat "$TMP/m.md")"
run 0 diff "$G/good.ledger" "$G/good.ledger" --junit "$TMP/j0.xml" --markdown "$TMP/m0.md"
grep -q 'tests="2" failures="0"' "$TMP/j0.xml" || fail "JUnit of identical ledgers"
grep -q '^# bitprobe: op ledgers bit-identical$' "$TMP/m0.md" || fail "Markdown of identical ledgers"

# explain: the division as a probe, A correctly rounded, B one ulp off at
# element 1 (make.py added one to its bits), bitprobe's CPU division gives A.
mkdir "$TMP/ex"
run 1 explain "$G/good.ledger" "$G/good-b.ledger" --out "$TMP/ex" --device cpu
out_has "explain A#1 B#1 aten::div.Tensor in module 'rope': introduced"
out_has "  cpu     reproduces A's bits"
out_has "  oracle  reproduces A's bits"
out_has "  A: F32 [4] f1fdf75b8af73a3c: correctly rounded: the oracle's bits, every element"
out_has "  B: F32 [4] 4d7568dd017937a5: 3 of 4 elements correctly rounded, at most 1 ulp from the oracle"
out_has "B      0.10000000894069671631     0x3dccccce"
out_has "verdict: A is correctly rounded, B is not; reproduced by bitprobe's formulations: A by cpu"
grep -q "^  - {out: y, op: div, a: x0, b: 10, dtype: fp32}$" "$TMP/ex/ledger-b1-div.yaml" ||
    fail "the probe: $(cat "$TMP/ex/ledger-b1-div.yaml")"
run 0 explain "$G/good.ledger" "$G/good-b.ledger" --out "$TMP/ex" --op a0 --device cpu
out_has "explain A#0 B#0 aten::arange in module 'rope': identical"
out_has "reproduces both (A and B agree)"
# Without B's captures: the verdict from the hashes alone; without any,
# nothing to load.
nocap() { sed 's/,"capture":"[^"]*"//g; s/"captures":"[^"]*"/"captures":null/; s/"captures":2/"captures":0/' "$1"; }
nocap "$G/good-b.ledger" >"$TMP/nocap-b.ledger"
nocap "$G/good.ledger" >"$TMP/nocap-a.ledger"
run 1 explain "$G/good.ledger" "$TMP/nocap-b.ledger" --out "$TMP/ex" --device cpu
out_has "  B: F32 [4] 4d7568dd017937a5: not the oracle's bits (not captured: record with --capture for per-element detail)"
out_has "verdict: A is correctly rounded, B is not"
run 2 explain "$TMP/nocap-a.ledger" "$TMP/nocap-b.ledger" --out "$TMP/ex"
err_has "input 0 of aten::div.Tensor (F32 [4], hash 9d64f72078a09752) was not captured in either ledger: record again with --capture 'aten::div.Tensor' or --reference OTHER.ledger"
run 2 explain "$G/good.ledger" "$G/good-b.ledger" --out "$TMP/ex" --op x2
err_has "--op takes an op of B (23, b23) or of A (a23), not 'x2'"
run 2 explain "$G/good.ledger" "$G/good-b.ledger" --out "$TMP/ex" --op b9
err_has "has no op 9"
run 2 explain "$G/good.ledger" "$G/good-b.ledger" --out "$TMP/absent"
err_has "--out '$TMP/absent' is not a directory"
run 2 explain "$top_srcdir/tests/ledger-bad/cap-hash.ledger" "$G/good-b.ledger" --out "$TMP/ex"
err_has "the captures do not belong to this ledger"

run 2 diff "$top_srcdir/tests/ledger-bad/seq-gap.ledger" "$G/good.ledger"
err_has "cannot read ledger '$top_srcdir/tests/ledger-bad/seq-gap.ledger': record 1 (line 3, byte 344): seq is 2, expected 1"
run 2 diff "$top_srcdir/tests/ledger-bad/truncated.ledger" "$G/good.ledger"
err_has "no end line after record 1: the recording was cut short"
run 2 diff "$G/good.ledger" "$G/good.ledger.safetensors"
err_has "is an op ledger and '$G/good.ledger.safetensors' is not"
# two ledgers without an op: nothing compared is an error, not a pass
printf '%s\n' '{"format":"bitprobe-ledger","version":1,"hash":"fmix64-sum/1","torch":"none"}' \
    '{"end":{"records":0,"captures":0,"status":"ok"}}' >"$TMP/empty.ledger"
run 2 diff "$TMP/empty.ledger" "$TMP/empty.ledger"
out_has "error: nothing compared: no op of A and B could be compared (0 ops paired one to one)"
done_ok
