# Reductions on order-sensitive values against the installed PyTorch's CPU
# (tests/refs/order_torch.py), where a python3 with torch is installed
# (else SKIP): every sum, mean, logsumexp, layer_norm, prod, var and
# rms_norm of 12 probes must be bit-identical or a known difference of that
# PyTorch's version (fuzz_check.py's verdicts).  The ISA is AVX2's, as
# ATen's capability is taken from ATEN_CPU_CAPABILITY=avx2.
. "$top_srcdir/tests/cli/lib.sh"
find_python torch || { echo "no python3 with torch: SKIP"; exit 77; }
"$PY" "$top_srcdir/tests/refs/order_torch.py" --bitprobe "$BITPROBE" --seed 7 --probes 12 \
    --aten-cpu-capability avx2 --bitprobe-arg=--cpu-isa --bitprobe-arg=avx2 \
    --out "$TMP/o" >"$TMP/out" 2>"$TMP/err"
rc=$?
ntests=1
[ "$rc" -eq 0 ] || fail "order_torch.py: exit $rc: $(grep -v '^  ' "$TMP/out" | head -5) $(tail -3 "$TMP/err")"
out_has "order_torch: seed 7, 12 probes"
out_has "  cpu  sum "
echo "$(tail -1 "$TMP/out")"
done_ok
