# Reports from real runs: JUnit parsed with Python's ElementTree, Markdown,
# JSON decimals, GitHub annotations and step summary, stdout conflicts.
# The drift comes from PyTorch's own RoPE caches (tests/data/torch) and from
# goldens blessed here and then changed by one element (CRC kept valid).
. "$top_srcdir/tests/cli/lib.sh"
data="$top_srcdir/tests/data/torch"
cpu="$data/rope_cpu.safetensors.gz"
zero="$data/rope_cuda_zero.safetensors.gz"
# Python (the standard library) parses the reports; without one the test
# still runs everything else and ends in SKIP, not PASS.
have_py=true
find_python || { have_py=false; skip_later "no Python 3: JUnit, JSON and Markdown not parsed"; }
# md_tables FILE...: every table row has its header's cell count (a '|' left
# unescaped in a cell would add one) and every code fence is closed.
md_tables() {
    $have_py || return 0
    py - "$@" <<'PY' || fail "broken Markdown table or fence"
import re, sys
for path in sys.argv[1:]:
    fence, width = None, None
    for n, l in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        m = re.match(r"^(`{3,})", l)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None:
            fence = None if l == fence else fence
        elif l.startswith("|"):
            cells = len(re.findall(r"(?<!\\)\|", l)) - 1
            width = cells if width is None else width
            assert cells == width, "%s:%d: %d cells, header has %d" % (path, n, cells, width)
        else:
            width = None
    assert fence is None, path + ": unclosed fence"
PY
}

# --- diff: JUnit, Markdown, JSON ---
run 1 diff "$cpu" "$zero" --junit "$TMP/d.xml" --markdown "$TMP/d.md" --json "$TMP/d.json" --first 3
out_has "329332 of 524288 differ"
if $have_py; then
    py - "$TMP/d.xml" "$(rel "$cpu")" "$(rel "$zero")" <<'PY' || fail "diff JUnit is not what was expected"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
a, b = sys.argv[2], sys.argv[3]
assert root.tag == "testsuites", root.tag
assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "3", "0"), root.attrib
suites = root.findall("testsuite")
assert [s.get("name") for s in suites] == ["bitprobe.inv_freq", "bitprobe.cos", "bitprobe.sin"]
cases = root.findall("testsuite/testcase")
assert len(cases) == 3
want = {"cos": "329332 of 524288", "sin": "324808 of 524288", "inv_freq": "4 of 64"}
for s, c in zip(suites, cases):
    t = s.get("name").split(".", 1)[1]
    assert c.get("classname") == "bitprobe." + t, c.attrib
    assert c.get("name") == "%s.%s.%s vs %s" % (t, "fp32" if t == "inv_freq" else "bf16", b, a), c.get("name")
    f = c.find("failure")
    assert f is not None and f.get("type") == "drift"
    msg = f.get("message")
    assert f.text.split("\n")[0] == msg, (f.text, msg)
    assert msg.startswith(want[t] + " elements differ"), msg
    if t != "inv_freq":
        assert "max abs 2 at" in msg, msg
    assert "first mismatches:" in f.text
PY
    py - "$TMP/d.json" <<'PY' || fail "diff JSON values lack the decimal forms"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["probe"]: x for x in d["results"]}
assert r["cos"]["mismatched"] == 329332 and r["sin"]["mismatched"] == 324808
assert r["cos"]["max_abs"]["value"] == 2.0 and r["sin"]["max_abs"]["value"] == 2.0
v = r["inv_freq"]["first"][0]["a"]
assert v == {"hex": "0x3d2cba15", "decimal": "0.0421696491539478302001953125",
             "g20": "0.0421696491539478302", "shortest": "0.04216965",
             "fields": "0 01111010 01011001011101000010101"}, v
assert len(d["env"]["sides"]) == 2
PY
fi
for s in "# bitprobe drift: 3 of 3 compared beyond policy (none identical)" "## Reproduce" \
         "## Environment" "| 329332 / 524288 | 62.82 |" "| 324808 / 524288 | 61.95 |" \
         "| 2 at [2235, 3] |" "| 16385-32768 | 41730 |" \
         '| [22] | a | `0.0421696491539478302001953125` | `0x3d2cba15` | `0 01111010 01011001011101000010101` | 1 |'; do
    grep -qF -- "$s" "$TMP/d.md" || fail "Markdown lacks: $s"
done
grep -qF -- "--markdown $TMP/d.md" "$TMP/d.md" || fail "Markdown lacks the command"
md_tables "$TMP/d.md"

# A file against itself: identical, JUnit without failures.
run 0 diff "$cpu" "$cpu" --junit -
out_lacks "<failure"
out_lacks "summary:"
if $have_py; then
    py -c 'import sys, xml.etree.ElementTree as ET; r = ET.parse(sys.argv[1]).getroot(); assert (r.get("tests"), r.get("failures")) == ("3", "0"), r.attrib' "$TMP/out" ||
        fail "diff --junit - is not a clean JUnit document"
fi
run 0 diff "$cpu" "$cpu" --markdown -
head -1 "$TMP/out" | grep -qF "# bitprobe passed: 3 compared (3 identical)" || fail "markdown on stdout"

# Only one report may take stdout.
run 2 diff "$cpu" "$zero" --json - --junit -
err_has "only one of --json, --junit and --markdown"
run 2 run seed-div --device oracle --no-golden --markdown - --junit -
err_has "only one of --json, --junit and --markdown"

# --- run against goldens with three planted differences ---
cd "$top_srcdir" || fail "cannot cd to $top_srcdir"
run 0 bless seed-div seed-inv-freq --device oracle --golden "$TMP/g"
if $have_py; then
    # 10^0.9 as CUDA computes it (2 ulp), one bf16 ulp, a class change.
    tamper="$top_srcdir/tests/tamper.py"
    py "$tamper" "$TMP/g/seed-inv-freq/oracle.safetensors.gz" y.fp32 9 40fe2f60 &&
    py "$tamper" "$TMP/g/seed-inv-freq/oracle.safetensors.gz" y.bf16 3 3fff &&
    py "$tamper" "$TMP/g/seed-div/oracle.safetensors.gz" y.fp16 0 fc00 ||
        fail "cannot plant the differences"
    printf 'earlier step\n' >"$TMP/summary.md"
    # As in a GitHub job: annotation paths relative to the workspace.
    export GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$TMP/summary.md" GITHUB_WORKSPACE="$top_srcdir"
    run 1 run seed-div seed-inv-freq arange-step --device oracle --golden "$TMP/g" \
        --missing=skip --quiet --junit "$TMP/r.xml" --markdown "$TMP/r.md"
    unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY GITHUB_WORKSPACE
    py - "$TMP/r.xml" <<'PY' || fail "run JUnit is not what was expected"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("12", "3", "3"), root.attrib
names = [s.get("name") for s in root.findall("testsuite")]
assert names == ["bitprobe.seed-div", "bitprobe.seed-inv-freq", "bitprobe.arange-step"], names
for s in root.findall("testsuite"):
    for c in s.findall("testcase"):
        assert c.get("classname") == s.get("name"), c.attrib
failed = {c.get("name"): c for c in root.iter("testcase") if c.find("failure") is not None}
assert sorted(failed) == ["y.bf16.oracle vs golden oracle", "y.fp16.oracle vs golden oracle",
                          "y.fp32.oracle vs golden oracle"], sorted(failed)
f = failed["y.fp32.oracle vs golden oracle"].find("failure")
assert f.text.split("\n")[0] == f.get("message")
assert "7.9432830810546875 0x40fe2f60" in f.text and "7.94328212738037109375 0x40fe2f5e" in f.text, f.text
assert failed["y.fp32.oracle vs golden oracle"].get("file").endswith("probes/seed-inv-freq.yaml")
sk = [c for c in root.iter("testcase") if c.find("skipped") is not None]
assert len(sk) == 3 and all(c.get("classname") == "bitprobe.arange-step" for c in sk)
assert "no golden" in sk[0].find("skipped").get("message")
PY
    # Annotations: worst first (a class change in 1 of 1, then 2 ulp, then 1 ulp).
    grep '^::' "$TMP/out" >"$TMP/ann"
    [ "$(wc -l <"$TMP/ann")" -eq 3 ] || fail "expected 3 annotations"
    sed -n 1p "$TMP/ann" | grep -q '^::error file=probes/seed-div.yaml,line=[0-9][0-9]*,title=bitprobe drift%3A seed-div y fp16%3A oracle vs golden oracle::seed-div y fp16: oracle vs golden oracle: 1 of 1 element differs (100%25), max class change' ||
        fail "first annotation: $(sed -n 1p "$TMP/ann")"
    sed -n 2p "$TMP/ann" | grep -qF 'seed-inv-freq y fp32: oracle vs golden oracle: 1 of 10 elements differ (10%25), max 2 ulp at [9]' ||
        fail "second annotation: $(sed -n 2p "$TMP/ann")"
    sed -n 3p "$TMP/ann" | grep -qF 'seed-inv-freq y bf16' || fail "third annotation"
    # The step summary is appended to, not replaced.
    [ "$(head -1 "$TMP/summary.md")" = "earlier step" ] || fail "step summary overwritten"
    grep -qF "### bitprobe: drift" "$TMP/summary.md" || fail "step summary heading"
    grep -qF '| `seed-div` | `y` | fp16 | `oracle` vs `golden oracle` | 1 / 1 | 100 | class change | `exact` | **DRIFT** |' "$TMP/summary.md" ||
        fail "step summary row"
    grep -qF "drift: 3 of 9 compared beyond policy (6 identical); 3 missing golden." "$TMP/summary.md" ||
        fail "step summary counts"
    # Markdown: the probe definition and the planted value with its bits.
    grep -qE '^### `([^`]*/)?probes/seed-inv-freq.yaml`' "$TMP/r.md" || fail "Markdown lacks the probe file"
    grep -qF 'name: seed-inv-freq' "$TMP/r.md" || fail "Markdown lacks the probe text"
    grep -qF '| [9] | a | `7.9432830810546875` | `0x40fe2f60` | `0 10000001 11111100010111101100000` | 2 |' "$TMP/r.md" ||
        fail "Markdown lacks the mismatch row"
    md_tables "$TMP/r.md" "$TMP/summary.md"
    # An absolute probe path is made relative to the workspace.
    export GITHUB_WORKSPACE="$top_srcdir"
    run 1 run seed-inv-freq --device oracle --golden "$TMP/g" --probes "$top_srcdir/probes" --quiet --github
    unset GITHUB_WORKSPACE
    out_has "::error file=probes/seed-inv-freq.yaml,line="
    # A step summary that cannot be written is trouble.
    export GITHUB_STEP_SUMMARY="$TMP/no/such/dir/summary.md"
    run 2 run seed-inv-freq --device oracle --golden "$TMP/g" --quiet --github
    unset GITHUB_STEP_SUMMARY
    err_has "cannot append to \$GITHUB_STEP_SUMMARY '$TMP/no/such/dir/summary.md'"
    # Errors are errors, not failures: a probe that does not load beside
    # the drift; each suite's counts and the document's are its elements'.
    mkdir -p "$TMP/pe"
    cp "$top_srcdir/probes/seed-div.yaml" "$top_srcdir/probes/seed-inv-freq.yaml" "$TMP/pe/"
    printf 'name: broken\ndescription: d\ndtypes: [fp32]\nops: []\n' >"$TMP/pe/broken.yaml"
    run 2 run --probes "$TMP/pe" --device oracle --golden "$TMP/g" --missing=skip --quiet \
        --junit "$TMP/e.xml"
    py - "$TMP/e.xml" <<'PY' || fail "JUnit with an error is not what was expected"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
def n(el, tag):
    return sum(1 for c in el.iter("testcase") if c.find(tag) is not None)
for el in [root] + root.findall("testsuite"):
    assert int(el.get("failures")) == n(el, "failure"), (el.get("name"), el.attrib)
    assert int(el.get("errors")) == n(el, "error"), (el.get("name"), el.attrib)
    assert int(el.get("tests")) == len(list(el.iter("testcase"))), el.attrib
assert (root.get("errors"), root.get("failures")) == ("1", "3"), root.attrib
(err,) = [c for c in root.iter("testcase") if c.find("error") is not None]
assert err.get("classname") == "bitprobe.broken" and err.find("failure") is None, err.attrib
PY
fi
done_ok
