# bitprobe diff pairs saved runs by meaning: results by (probe, output,
# dtype), backends by key, then name, then one each whatever they are; the
# report names the fingerprint items that differ.
. "$top_srcdir/tests/cli/lib.sh"
P="seed-div div-by-3-and-7 rope-apply"

# default CPU math against libm: the keys differ (cpu-sleef, cpu-libm), the
# backend name does not: every output compared, nothing one-sided
run 0 run $P --device cpu,oracle --save "$TMP/a" --quiet
run 0 run $P --device cpu,oracle --cpu-math libm --missing=skip --save "$TMP/b" --quiet
run 1 diff "$TMP/a" "$TMP/b" --json "$TMP/d.json"
out_lacks "only in"
out_has "$TMP/a:cpu-sleef vs $TMP/b:cpu-libm: backend fingerprints differ in "
out_has "note:   cpu_math: sleef-u10 | libm"
out_has "$TMP/a:oracle vs $TMP/b:oracle: same backend fingerprint ("
out_has "$TMP/a vs $TMP/b: same host fingerprint ("
find_python || skip_later "no Python: the JSON checks"
py - "$TMP/d.json" "$TMP/a/manifest.json" <<'PY' || fail "not every output was compared"
import json, sys
rep = json.load(open(sys.argv[1]))
man = json.load(open(sys.argv[2]))
res = rep["results"]
assert all(r["compared"] for r in res), [r for r in res if not r["compared"]][:2]
# one comparison per output, dtype and backend of the run
want = sum(1 for r in man["results"] if r["kind"] == "cross") * 2
assert len(res) == want, (len(res), want)
assert {r["a"].rsplit(":", 1)[1] for r in res} == {"cpu-sleef", "oracle"}
assert {r["b"].rsplit(":", 1)[1] for r in res} == {"cpu-libm", "oracle"}
assert any(r["mismatched"] for r in res), "sleef and libm agree everywhere?"
# the fingerprints side by side: each pair of backends and the hosts, the
# items that differ with both values in full, as the manifests have them
fps = {(f["what"], f["a"], f["b"]): f for f in rep["fingerprints"]}
a, b = sys.argv[1].rsplit("/", 1)[0] + "/a", sys.argv[1].rsplit("/", 1)[0] + "/b"
cpu = fps[("backend", a + ":cpu-sleef", b + ":cpu-libm")]
fa = {x["key"]: x["fingerprint"] for x in man["backends"]}["cpu-sleef"]
mb = json.load(open(b + "/manifest.json"))
fb = {x["key"]: x["fingerprint"] for x in mb["backends"]}["cpu-libm"]
d = {x["item"]: (x["a"], x["b"]) for x in cpu["differ"]}
assert d["cpu_math"] == (fa["cpu_math"], fb["cpu_math"]) == ("sleef-u10", "libm"), d
assert all(fa.get(k) != fb.get(k) for k in d if "." not in k), d
assert cpu["same"] > 0
assert fps[("backend", a + ":oracle", b + ":oracle")]["differ"] == []
assert fps[("host", a, b)]["differ"] == []
PY
# hosts that differ: their items named, side by side, in the text, the
# JSON and the Markdown report
if [ -n "${PY:-}" ]; then
    cp -r "$TMP/b" "$TMP/h"
    py - "$TMP/h/manifest.json" <<'PY' || fail "cannot edit the manifest"
import json, sys
m = json.load(open(sys.argv[1]))
m["env"]["cpu"] = "Other CPU"
m["env"]["libs"]["sleef"] = "9.9"
json.dump(m, open(sys.argv[1], "w"))
PY
    run 1 diff "$TMP/a" "$TMP/h" --markdown "$TMP/h.md"
    out_has "$TMP/a vs $TMP/h: host fingerprints differ in 2 items ("
    out_has "): cpu, libs.sleef"
    out_has "note:   libs.sleef: $(py -c 'import json,sys; print(json.load(open(sys.argv[1]))["env"]["libs"]["sleef"])' "$TMP/a/manifest.json") | 9.9"
    grep -q '^## Fingerprints side by side' "$TMP/h.md" || fail "no fingerprint section in the Markdown report"
    grep -q '^| libs.sleef | `[0-9.]*` | `9.9` |$' "$TMP/h.md" || fail "libs.sleef not side by side in the Markdown report"
fi

# one backend on each side: paired whatever their names (a CPU run against
# the oracle's)
run 0 run $P --device cpu --save "$TMP/c" --quiet
run 0 run $P --device oracle --save "$TMP/o" --quiet
run 1 diff "$TMP/c" "$TMP/o"
out_lacks "only in"
out_has "$TMP/c:cpu-sleef vs $TMP/o:oracle: backend fingerprints differ in"

# --a / --b pick each side's backend by key or name
run 1 diff "$TMP/a" "$TMP/b" --a oracle --b cpu
out_lacks "only in"
out_lacks ":cpu-sleef"
out_has "$TMP/b:cpu-libm vs $TMP/a:oracle"
run 0 diff "$TMP/a" "$TMP/b" --a oracle --b oracle
run 2 diff "$TMP/a" "$TMP/b" --a cuda
err_has "--a cuda: saved run '$TMP/a' has no such backend (it has cpu-sleef, oracle)"
run 2 diff "$TMP/a" "$TMP/a/seed-div/oracle.safetensors.gz" --b cpu
err_has "--a and --b pick backends of saved runs"

# --map renames, whole names or prefixes (with '*'): x3 against x7
f="$TMP/a/div-by-3-and-7/cpu-sleef.safetensors.gz"
run 1 diff "$f" "$f" --map 'x3.*=x7.*'
out_has "x3.fp32 x7.fp32 fp32 [256]"
out_has "x3.bf16 x7.bf16 bf16 [256]"
out_has "only in a: $f"
out_has "only in b: $f"
run 1 diff "$f" "$f" --map 'x3.fp32=x7.fp32'
out_has "x3.fp32 x7.fp32 fp32 [256]"
out_lacks "x3.bf16 x7.bf16"
run 2 diff "$TMP/a" "$TMP/b" --map 'x*=y'
err_has "--map takes NAME_A=NAME_B or PREFIX_A*=PREFIX_B*"
done_ok
