# The CPU goldens of ATen's AVX512 capability (golden/*/cpu-sleef-avx512):
# every shipped probe on the CPU with --cpu-isa avx512 must give exit
# status 0, every output of every dtype bit-identical to its golden.
# The oneDNN ISA beside it is avx512_core_fp16 (an AVX512-FP16 host, as
# Sapphire Rapids and later Xeons: fp16 gelu goes to oneDNN too), whatever this
# CPU has: bitprobe computes oneDNN's lanes in plain C.
# make check models AVX2 elsewhere (ATEN_CPU_CAPABILITY=avx2,
# ONEDNN_MAX_CPU_ISA=avx2); this test
# needs a CPU that runs SLEEF's AVX-512 build and is a SKIP (77) on one
# that does not.
. "$top_srcdir/tests/cli/lib.sh"

set -- $(probe_outputs)
nexp=$1
[ "$nexp" -gt 0 ] || fail "no probe outputs listed"
"$BITPROBE" run -vv --device cpu --cpu-isa avx512 --onednn-isa avx512_core_fp16 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "capability avx512 (from --cpu-isa) needs .*, which this CPU lacks" "$TMP/err"; then
    echo "SKIP: this CPU cannot run the AVX-512 capability: $(cat "$TMP/err")"
    exit 77
fi
[ $rc -eq 0 ] || fail "bitprobe run --device cpu --cpu-isa avx512: exit $rc, expected 0"
ntests=1
golden_identical "cpu vs golden cpu-sleef-avx512" "$nexp"
passed_identical "$nexp"
echo "$nexp outputs x dtypes, each bit-identical to its cpu-sleef-avx512 golden"
done_ok
