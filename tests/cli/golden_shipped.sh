# The shipped goldens gate `make check`: every shipped probe on the CPU and
# on the oracle, against golden/, must give exit status 0 (no drift beyond
# the probes' policies) with every output of every dtype compared with its
# golden on both backends.  A change to the CPU backend's arithmetic or
# transcendentals, to the oracle, to a probe, or a golden re-blessed with
# other bits fails here.  (The cuda goldens: golden_shipped_cuda.sh.)
. "$top_srcdir/tests/cli/lib.sh"

set -- $(probe_outputs)
nexp=$1 nprobes=$2
nfiles=$(ls "$top_srcdir"/probes/*.yaml | wc -l)
[ "$nprobes" -eq "$nfiles" ] || fail "list shows $nprobes probes, probes/ holds $nfiles"
[ "$nexp" -gt 0 ] || fail "no probe outputs listed"

run 0 run -vv --device cpu,oracle
# count LABEL: the comparison lines of the last run with this label.
count() { grep -c "^  $1: " "$TMP/out"; }
for label in "cpu vs golden cpu-sleef" "oracle vs golden oracle"; do
    got=$(count "$label")
    [ "$got" -eq "$nexp" ] || fail "$got '$label' comparisons, expected $nexp"
done
grep -q "^passed: " "$TMP/out" || fail "the verdict is not passed"
out_lacks "DRIFT"
# The goldens of ATen's AVX512 capability (cpu-sleef-avx512): make check
# models AVX2 everywhere (ATEN_CPU_CAPABILITY=avx2 in its environment);
# these are checked where the CPU can run SLEEF's AVX-512 build.
if "$BITPROBE" run seed-div --device cpu --cpu-isa avx512 --no-golden >/dev/null 2>&1; then
    run 0 run -vv --device cpu --cpu-isa avx512
    got=$(count "cpu vs golden cpu-sleef-avx512")
    [ "$got" -eq "$nexp" ] || fail "$got 'cpu vs golden cpu-sleef-avx512' comparisons, expected $nexp"
    out_lacks "DRIFT"
else
    echo "no AVX-512 here: the cpu-sleef-avx512 goldens are not checked"
fi
echo "$nprobes probes, $nexp outputs x dtypes, each against its cpu and oracle golden"
done_ok
