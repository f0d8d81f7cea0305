# The shipped cuda goldens (golden/*/cuda-sm90) on a GPU: every shipped
# probe on CUDA must give exit status 0, every output of every dtype
# compared with its golden and bit-identical to it (golden_shipped.sh says
# why a policy does not excuse a difference from a golden).  SKIP (77)
# only where the machine has no GPU (need_gpu in lib.sh); BP_REQUIRE_GPU=1
# turns the skip into a failure.
. "$top_srcdir/tests/cli/lib.sh"
need_gpu
set -- $(probe_outputs)
nexp=$1
[ "$nexp" -gt 0 ] || fail "no probe outputs listed"
run 0 run -vv --device cuda
key=$(sed -n 's/^  cuda vs golden \([^:]*\): .*/\1/p' "$TMP/out" | sort -u)
[ "$(echo "$key" | wc -l)" -eq 1 ] || fail "golden keys: $key"
golden_identical "cuda vs golden $key" "$nexp"
passed_identical "$nexp"
echo "$nexp outputs x dtypes, each bit-identical to its golden $key"
done_ok
