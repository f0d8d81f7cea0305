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
out_has "$TMP/a:cpu-sleef vs $TMP/b:cpu-libm: fingerprints differ in cpu_math (sleef-u10 | libm)"
out_has "$TMP/a:oracle vs $TMP/b:oracle: same fingerprint"
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
PY

# one backend on each side: paired whatever their names (a CPU run against
# the oracle's)
run 0 run $P --device cpu --save "$TMP/c" --quiet
run 0 run $P --device oracle --save "$TMP/o" --quiet
run 1 diff "$TMP/c" "$TMP/o"
out_lacks "only in"
out_has "$TMP/c:cpu-sleef vs $TMP/o:oracle: fingerprints differ in"

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
