# The shipped goldens gate `make check`: every shipped probe on the CPU and
# on the oracle, against golden/, must give exit status 0 with every output
# of every dtype compared with its golden on both backends, and every one
# of those comparisons bit-identical: a golden is what its own backend
# computes, so the probes' policies (matmul-fp32's abs/rel 1e-5), which
# judge one backend against another, do not excuse a difference here.  A
# change to the CPU backend's arithmetic or transcendentals, to the oracle,
# to a probe, or a golden re-blessed with other bits (one ulp included)
# fails here.  (The cuda goldens: golden_shipped_cuda.sh; the AVX-512 CPU
# goldens: golden_shipped_avx512.sh.)
. "$top_srcdir/tests/cli/lib.sh"

set -- $(probe_outputs)
nexp=$1 nprobes=$2
nfiles=$(ls "$top_srcdir"/probes/*.yaml | wc -l)
[ "$nprobes" -eq "$nfiles" ] || fail "list shows $nprobes probes, probes/ holds $nfiles"
[ "$nexp" -gt 0 ] || fail "no probe outputs listed"

run 0 run -vv --device cpu,oracle
for label in "cpu vs golden cpu-sleef" "oracle vs golden oracle"; do
    golden_identical "$label" "$nexp"
done
grep -q "^passed: " "$TMP/out" || fail "the verdict is not passed"
out_lacks "DRIFT"
echo "$nprobes probes, $nexp outputs x dtypes, each bit-identical to its cpu and oracle golden"
done_ok
