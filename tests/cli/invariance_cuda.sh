# bitprobe invariance on a GPU: every CUDA engine sweeps a small GEMM,
# records the cuBLASLt algorithm of every configuration, repeats bit for
# bit in the same process and in a fresh one, and writes a map whose
# verdict matches the exit status.  The pedantic engine and the CPU engine
# are compared on the same inputs (their batch-invariance is what the map
# states; cuBLAS's default is allowed to vary: exit 0 or 1).
. "$top_srcdir/tests/cli/lib.sh"
need_gpu

for e in cublas cublas-pedantic cublaslt; do
    "$BITPROBE" invariance --engine $e --shape 256x192 --m 1:80 --place all \
        --dtype fp32,bf16,fp16 --repeat 2 --processes 1 --json "$TMP/$e.json" \
        >"$TMP/out" 2>"$TMP/err"
    rc=$?
    ntests=$((ntests + 1))
    [ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "$e: exit $rc"
    head -1 "$TMP/out" | grep -q '^invariance: ' || fail "$e: no verdict first"
    # run to run: identical in the same process and in a fresh one
    grep -q 'differ from run to run' "$TMP/out" && fail "$e: run-to-run differences"
    # every configuration names its algorithm
    grep -q '"algo_id"' "$TMP/$e.json" || fail "$e: no cuBLASLt algorithm recorded"
    if [ $rc -eq 1 ]; then
        grep -q '^FAILED:' "$TMP/out" || fail "$e: exit 1 without failures listed"
    fi
done

# tf32 through the cublas engine (cublasSgemm under TF32 math); pedantic
# math refuses TF32: a note saying so (not an error, when other engines
# run), and no map of the pedantic engine
run_any() { "$BITPROBE" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; ntests=$((ntests + 1)); }
run_any invariance --engine cublas,cublas-pedantic --dtype tf32 --shape 128x128 --m 1:16
[ $rc -le 1 ] || fail "tf32: exit $rc"
grep -qF 'note: cublas-pedantic matmul tf32 skipped: pedantic math excludes TF32' "$TMP/out" ||
    fail "tf32: pedantic not noted"
grep -q '^    cublas-pedantic ' "$TMP/out" && fail "tf32: a map of the pedantic engine"
grep -q '^    cublas ' "$TMP/out" || fail "tf32: no map of the cublas engine"

# the oracle arbitrates: with -v every map gets the exact result's distances
run_any invariance --engine cublas --shape 512x64 --m 1:64 --dtype bf16 -v
[ $rc -le 1 ] || fail "-v: exit $rc"
grep -q 'correctly rounded' "$TMP/out" || fail "-v: no oracle verdict"
done_ok
