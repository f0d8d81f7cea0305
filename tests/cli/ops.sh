# bitprobe list --ops: every op of the op table, in text and JSON, agreeing
# with each other, with probes/README.md's op table and with the probe
# fuzzer's dictionary; --ops reads no probes; an unknown op in a probe
# names the valid ones and the nearest.
. "$top_srcdir/tests/cli/lib.sh"
run 0 list --ops
out_has "Ops ("
out_has "  div          elementwise  a:T|S b:T|S [formulation=true|reciprocal]"
out_has "  arange       creation     [start] end [step]"
out_lacks "Probes in"
cp "$TMP/out" "$TMP/text"
run 0 list --ops --json
"${PYTHON3:-python3}" - "$TMP/out" "$TMP/text" "$top_srcdir/probes/README.md" \
    "$top_srcdir/tests/fuzz/probe.dict" <<'PY' || fail "list --ops disagrees"
import json, re, sys
ops = json.load(open(sys.argv[1]))["ops"]
text = open(sys.argv[2]).read()
readme = open(sys.argv[3]).read()
fuzz_dict = open(sys.argv[4]).read()
n = int(re.search(r"Ops \((\d+)\)", text).group(1))
assert n == len(ops) > 0, (n, len(ops))
names = [o["name"] for o in ops]
assert len(set(names)) == len(names), names
for o in ops:
    assert re.search(r"^  %s +%s " % (re.escape(o["name"]), o["kind"]), text, re.M), o["name"]
    # every op is documented in the probe schema's op table
    assert re.search(r"^\|[^|\n]*`%s`" % re.escape(o["name"]), readme, re.M), \
        "probes/README.md documents no op '%s'" % o["name"]
    # the probe fuzzer's dictionary knows it (tests/fuzz/make_corpus.py)
    assert '"%s"' % o["name"] in fuzz_dict, "tests/fuzz/probe.dict lacks '%s'" % o["name"]
    keys = {k["name"]: k for k in o["keys"]}
    assert "dtype" in keys and not keys["dtype"]["required"] or o["name"] in ("cast", "load"), o
    # gelu names its formulation `approximate`, as PyTorch does
    assert ("formulation" in keys or "approximate" in keys) == bool(o["formulations"]), o
    assert set(o["backends"]) >= {"cpu", "oracle"}, o
    for k in o["keys"]:
        assert k["type"] in ("buffer", "buffer|number", "buffers", "number", "numbers",
                             "integer", "integers", "shape", "dtype", "formulation", "bool"), k
div = ops[names.index("div")]
assert div["flags"] == ["float_fn"] and div["dtype_rule"] == "promote", div
assert [k["type"] for k in div["keys"] if k["name"] == "a"] == ["buffer|number"], div
s = ops[names.index("sum")]
assert s["kind"] == "reduction" and s["formulations"] == ["sequential", "pairwise"], s
PY
run 2 list --ops --probes "$TMP"
err_has "--ops lists the ops"
mkdir -p "$TMP/p"
cat >"$TMP/p/t.yaml" <<'YAML'
name: t
description: d
dtypes: [fp32]
ops:
  - {out: a, op: arange, end: 4}
  - {out: g, op: divide, a: a, b: 2}
outputs:
  - {name: g}
YAML
run 2 list --probes "$TMP/p"
err_has "t.yaml:6:18: unknown op 'divide'; did you mean 'div'? (ops: tensor, arange,"
done_ok
