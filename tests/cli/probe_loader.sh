# The Python probe reader every bench and replay uses
# (tests/refs/probe_spec.py: bench/suite_torch.py, torch_probe.py, the
# fuzzer's regressions) reads what bitprobe reads: every scalar of every
# shipped, regression, kept and semantics probe, typed and valued bit for
# bit as tests/ops/probe_values (src/ops/probe_yaml.c, bp_yaml_number, the loaded
# probe's operands) gives them, and a table of number spellings.  PyYAML's
# own reading (safe_load, what the PyTorch bench read probes with when
# fp8-round-trip's 0x1p-9 and 1e6 broke it) must be told apart.  No GPU,
# no torch: Python with PyYAML (else SKIP).
. "$top_srcdir/tests/cli/lib.sh"
VALUES=${PROBE_VALUES:-$(dirname "$BITPROBE")/../tests/ops/probe_values}
[ -x "$VALUES" ] || fail "no tests/ops/probe_values at $VALUES (make check builds it)"
find_python yaml || { echo "no python3 with PyYAML: SKIP"; exit 77; }
CHECK="$top_srcdir/tests/refs/probe_spec_check.py"
T="$top_srcdir/tests"
set -- "$top_srcdir"/probes/*.yaml "$T"/regress/*.yaml "$T"/refs/fuzzkept/*.yaml "$T"/gpu/semantics/*.yaml
[ $# -ge 20 ] || fail "only $# probe files found"

ntests=$((ntests + 1))
"$PY" "$CHECK" "$VALUES" "$@" >"$TMP/out" 2>"$TMP/err" ||
    fail "probe_spec reads the probes otherwise than bitprobe"
tail -1 "$TMP/out"
grep -q "^probe_spec reader: $# files, .* 0 differ$" "$TMP/out" ||
    fail "not every file compared"

# the check can fail: PyYAML's YAML 1.1 reading differs (0x1p-9, 1e6 as
# strings; the formulation true as a bool; 1_000 as an integer)
ntests=$((ntests + 1))
"$PY" "$CHECK" "$VALUES" --reader pyyaml "$top_srcdir"/probes/*.yaml >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "PyYAML's reading passed the check (exit $rc)"
for d in "fp8-round-trip.yaml.ops[0].values[19]: bitprobe reads the float 0x1p-9" \
         "fp8-round-trip.yaml.ops[0].values[15]: bitprobe reads the float 1e6" \
         "number '1_000': bitprobe reads the string '1_000', the reader int 1000"; do
    grep -qF -- "$d" "$TMP/out" || fail "PyYAML's difference not found: $d"
done

# the loader's own messages: file, line and column, as bitprobe's
printf 'name: x\nops: [{a: 1e999}]\n' >"$TMP/x.yaml"
ntests=$((ntests + 1))
"$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import probe_spec
try:
    probe_spec.read(sys.argv[2])
except probe_spec.ProbeError as e:
    print(e); sys.exit(0)
sys.exit(1)' "$T/refs" "$TMP/x.yaml" >"$TMP/out" 2>&1 || fail "1e999 read without an error"
grep -qF "x.yaml:2:11: number 1e999 is out of range of a double" "$TMP/out" ||
    fail "message: $(cat "$TMP/out")"
done_ok
