# A cpu result computed through a GEMM (matmul, bmm, baddbmm, linear, addmm,
# sdpa) is not
# PyTorch's bits: PyTorch's x86 wheels take fp32 GEMMs from MKL's sgemm and
# bf16/fp16 from oneDNN, in orders bitprobe does not replay.  Every report
# says so on the result, and --agree does not judge it as drift; an output
# that does not go through a GEMM still does (exp: SLEEF against the
# oracle's correctly rounded value).  An fp32 matmul of a class whose MKL
# order bitprobe replays (MKL's AVX-512 path, --mkl-isa avx512) is
# PyTorch's bits, and so are linear and addmm making such a call: no
# status, judged as any op.
. "$top_srcdir/tests/cli/lib.sh"
mkdir -p "$TMP/p"
cat >"$TMP/p/gemm-exact.yaml" <<'YAML'
name: gemm-exact
description: "x @ w.t() + b then silu, exact policy; exp(x) beside it"
dtypes: [fp32]
ops:
  - {out: x, op: normal, shape: [8, 300], seed: 1, mean: 0, std: 1}
  - {out: w, op: normal, shape: [16, 300], seed: 2, mean: 0, std: 0.02}
  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}
  - {out: y, op: matmul, a: x, b: wt}
  - {out: h, op: silu, a: y}
  - {out: e, op: exp, a: x}
outputs:
  - {name: h}
  - {name: e}
YAML
note="cpu: not PyTorch's bits: MKL (fp32 sgemm) / oneDNN (bf16, fp16) order, not replayed (through matmul 'y')"
run 1 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree \
    --mkl-isa avx512 --json "$TMP/r.json" --junit "$TMP/r.xml" --markdown "$TMP/r.md"
grep -F "gemm-exact h fp32" "$TMP/out" | grep -qF "differs (informational); $note" ||
    fail "text: h lacks the status: $(grep -F 'gemm-exact h' "$TMP/out")"
grep -F "gemm-exact e fp32" "$TMP/out" | grep -qF "DRIFT" || fail "text: e is not drift"
grep -F "gemm-exact e fp32" "$TMP/out" | grep -qF "not PyTorch's bits" && fail "text: e has the status"
grep -qF "\"note\": \"$note\"" "$TMP/r.json" || fail "JSON lacks the note"
grep -qF "not PyTorch&apos;s bits: MKL (fp32 sgemm) / oneDNN (bf16, fp16) order" "$TMP/r.xml" || fail "JUnit lacks the note"
grep -qF "$note" "$TMP/r.md" || fail "Markdown lacks the note"
# without the exp output, --agree passes: the GEMM's difference is no drift
sed -i '/name: e}/d' "$TMP/p/gemm-exact.yaml"
run 0 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree
out_has "$note"
# 16 rows by a transposed weight: MKL's K panels, replayed on its AVX-512
# path, so h is judged (and drifts from the oracle's exact sums); on its
# AVX2 path (not fitted) h keeps the status
sed -i 's/shape: \[8, 300\]/shape: [16, 300]/' "$TMP/p/gemm-exact.yaml"
run 1 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx512
grep -F "gemm-exact h fp32" "$TMP/out" | grep -qF "DRIFT" || fail "replayed h is not judged"
out_lacks "not PyTorch's bits"
run 0 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx2
out_has "$note"
# linear and addmm are GEMMs too, and make the same sgemm call as the
# matmul of a transposed weight: replayed on MKL's AVX-512 path, the
# status on its AVX2 path
sed -i 's/{out: y, op: matmul, a: x, b: wt}/{out: y, op: linear, inputs: [x, w]}/' "$TMP/p/gemm-exact.yaml"
run 1 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx512
grep -F "gemm-exact h fp32" "$TMP/out" | grep -qF "DRIFT" || fail "replayed linear h is not judged"
out_lacks "not PyTorch's bits"
run 0 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx2
out_has "(through linear 'y')"
sed -i 's/{out: y, op: linear, inputs: \[x, w\]}/{out: y, op: addmm, inputs: [e0, x, wt]}/' "$TMP/p/gemm-exact.yaml"
sed -i 's/^ops:$/ops:\n  - {out: e0, op: zeros, shape: [16]}/' "$TMP/p/gemm-exact.yaml"
run 1 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx512
out_lacks "not PyTorch's bits"
run 0 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx2
out_has "(through addmm 'y')"
# 8 rows by a transposed weight is no fitted class: the status stays
sed -i 's/shape: \[16, 300\], seed: 1/shape: [8, 300], seed: 1/' "$TMP/p/gemm-exact.yaml"
run 0 run gemm-exact --probes "$TMP/p" --device cpu,oracle --no-golden --agree --mkl-isa avx512
out_has "(through addmm 'y')"
done_ok
