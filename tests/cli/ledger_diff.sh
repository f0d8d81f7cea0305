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

run 2 diff "$top_srcdir/tests/ledger-bad/seq-gap.ledger" "$G/good.ledger"
err_has "cannot read ledger '$top_srcdir/tests/ledger-bad/seq-gap.ledger': record 1 (line 3, byte 344): seq is 2, expected 1"
run 2 diff "$top_srcdir/tests/ledger-bad/truncated.ledger" "$G/good.ledger"
err_has "no end line after record 1: the recording was cut short"
run 2 diff "$G/good.ledger" "$G/good.ledger.safetensors"
err_has "is an op ledger and '$G/good.ledger.safetensors' is not"
done_ok
