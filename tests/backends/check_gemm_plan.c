/* Tests of PyTorch's cuBLAS call as gemm_plan.c decides it.  Every
 * expected flag, size, leading dimension, batch stride, entry point and
 * numeric setting is derived by hand from PyTorch's code, step by step in
 * the comments: prepare_matrix_for_cublas (a dense tensor's flag is
 * is_contiguous(); else stride 1 on one dimension with the other stride at
 * least the size; else a contiguous copy), cublasCommonArgs (a row-major
 * result computes C^T = B^T A^T: A is mat2, both flags flipped, m = n's of
 * the result, lda = stride(1 if the flag equals transpose_result else 0)),
 * _cublasAdjustLdLevel3, isInputCompliesAddmmCudaLt,
 * prepare_batch_matrix_for_cublas and baddbmm_out_cuda_impl, and
 * CUDABlas.cpp's helpers for the math mode and compute type.  The strides
 * of the views are PyTorch's (tests/ops/check_strided.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_plan.h"

static bp_strided_t g2(int64_t r, int64_t c, int64_t sr, int64_t sc, int64_t off)
{
    bp_strided_t g;
    memset(&g, 0, sizeof g);
    g.ndim = 2;
    g.shape[0] = r;
    g.shape[1] = c;
    g.strides[0] = sr;
    g.strides[1] = sc;
    g.offset = off;
    return g;
}

static bp_strided_t g3(int64_t b, int64_t r, int64_t c, int64_t sb, int64_t sr, int64_t sc)
{
    bp_strided_t g;
    memset(&g, 0, sizeof g);
    g.ndim = 3;
    g.shape[0] = b;
    g.shape[1] = r;
    g.shape[2] = c;
    g.strides[0] = sb;
    g.strides[1] = sr;
    g.strides[2] = sc;
    return g;
}

static bp_strided_t contig(int64_t r, int64_t c)
{
    return g2(r, c, c > 1 ? c : 1, 1, 0);
}

/* w [n, k] contiguous, as w.t(): [k, n] stride (1, k) */
static bp_strided_t wt(int64_t n, int64_t k)
{
    return g2(k, n, 1, k > 1 ? k : 1, 0);
}

static bp_blas_settings_t dflt(void)
{
    bp_blas_settings_t s;
    bp_blas_settings_default(&s);
    return s;
}

#define CC 9 /* an H100/H200 */

static bp_gemm_call_t mm(const bp_blas_settings_t *s, bp_dtype_t dt, bp_strided_t a,
                         bp_strided_t b)
{
    bp_gemm_call_t c;
    bp_error_t err = {0};
    ck_assert_msg(bp_gemm_plan_addmm(s, CC, dt, NULL, &a, &b, 0, 1, false, &c, &err) == BP_OK,
                  "%s", err.msg);
    return c;
}

static bp_gemm_call_t addmm(const bp_blas_settings_t *s, bp_dtype_t dt, bp_strided_t self,
                            bp_strided_t a, bp_strided_t b, double beta, double alpha)
{
    bp_gemm_call_t c;
    bp_error_t err = {0};
    ck_assert_msg(bp_gemm_plan_addmm(s, CC, dt, &self, &a, &b, beta, alpha, false, &c, &err) ==
                      BP_OK,
                  "%s", err.msg);
    return c;
}

static void gemm_is(const bp_gemm_call_t *c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    int64_t lda, int64_t ldb, int64_t ldc)
{
    char d[256];
    bp_gemm_call_describe(c, d, sizeof d);
    ck_assert_msg(c->transa == ta && c->transb == tb && c->m == m && c->n == n &&
                      c->k == k && c->lda == lda && c->ldb == ldb && c->ldc == ldc,
                  "got %s; want (%c, %c, m %lld, n %lld, k %lld, lda %lld, ldb %lld, "
                  "ldc %lld)", d, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n,
                  (long long)k, (long long)lda, (long long)ldb, (long long)ldc);
}

/* torch.mm(x [3, 5], b [5, 4]), both contiguous: the result [3, 4] is
 * contiguous, so transpose_result; mata = b (contiguous: flag true, flipped
 * to N), matb = x (N); m = b.size(1) = 4, k = 5, n = x.size(0) = 3; lda =
 * b.stride(0) = 4 (the flag, false, differs from transpose_result),
 * ldb = x.stride(0) = 5, ldc = result.stride(0) = 4. */
START_TEST(t_mm_contiguous)
{
    bp_blas_settings_t s = dflt();
    bp_gemm_call_t c = mm(&s, BP_F32, contig(3, 5), contig(5, 4));
    gemm_is(&c, false, false, 4, 3, 5, 4, 5, 4);
    ck_assert_int_eq(c.api, BP_GEMM_CUBLAS);
    ck_assert_int_eq(c.a_op, 1);
    ck_assert(!c.clone_a && !c.clone_b && !c.batched && !c.copy_self);
    ck_assert(c.alpha == 1 && c.beta == 0);
    /* gemm_internal_cublas<float>: cublasSgemm under the handle's mode */
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasSgemm");
    ck_assert(c.num.typed && c.num.math == BP_GEMM_MATH_DEFAULT);
    s.tf32 = true; /* allow_tf32: CUBLAS_TF32_TENSOR_OP_MATH on the handle */
    c = mm(&s, BP_F32, contig(3, 5), contig(5, 4));
    ck_assert(c.num.math == BP_GEMM_MATH_TF32);
    /* bf16: cublasGemmEx, CUDA_R_32F compute (CUBLAS_COMPUTE_32F),
     * CUBLAS_GEMM_DEFAULT_TENSOR_OP, CUBLAS_DEFAULT_MATH (reduced-precision
     * reductions allowed by default), TF32 not in the mode */
    c = mm(&s, BP_BF16, contig(3, 5), contig(5, 4));
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasGemmEx");
    ck_assert(!c.num.typed && c.num.tensor_op && c.num.compute == BP_GEMM_COMPUTE_32F);
    ck_assert_uint_eq(c.num.math, BP_GEMM_MATH_DEFAULT);
    s = dflt();
    s.bf16_rpr = false; /* ... | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION */
    c = mm(&s, BP_BF16, contig(3, 5), contig(5, 4));
    ck_assert_uint_eq(c.num.math, BP_GEMM_MATH_DEFAULT | BP_GEMM_MATH_NO_RRR);
    c = mm(&s, BP_F16, contig(3, 5), contig(5, 4)); /* fp16 has its own setting */
    ck_assert_uint_eq(c.num.math, BP_GEMM_MATH_DEFAULT);
    c = mm(&s, BP_F64, contig(3, 5), contig(5, 4));
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasDgemm");
    ck_assert(c.num.compute == BP_GEMM_COMPUTE_64F);
}
END_TEST

/* x [3, 5] @ w.t(), w [4, 5]: mata = w.t() [5, 4] stride (1, 5), dense but
 * not contiguous (flag false, flipped to T); m = 4, k = 5, n = 3;
 * lda = w.t().stride(1) = 5 (flag true equals transpose_result). */
START_TEST(t_mm_transposed)
{
    bp_blas_settings_t s = dflt();
    bp_gemm_call_t c = mm(&s, BP_F32, contig(3, 5), wt(4, 5));
    gemm_is(&c, true, false, 4, 3, 5, 5, 5, 4);
    ck_assert(!c.clone_a && !c.clone_b);
    /* the contiguous copy w.t().contiguous() is another call: (N, N), lda 4 */
    c = mm(&s, BP_F32, contig(3, 5), contig(5, 4));
    gemm_is(&c, false, false, 4, 3, 5, 4, 5, 4);
    /* x.t() for x stored [5, 3]: [3, 5] stride (1, 3), dense, not
     * contiguous: matb's flag false, flipped to T; ldb = stride(1) = 3 */
    c = mm(&s, BP_F32, g2(3, 5, 1, 3, 0), contig(5, 4));
    gemm_is(&c, false, true, 4, 3, 5, 4, 3, 4);
    /* both transposed: (T, T), lda 5, ldb 3 */
    c = mm(&s, BP_F32, g2(3, 5, 1, 3, 0), wt(4, 5));
    gemm_is(&c, true, true, 4, 3, 5, 5, 3, 4);
}
END_TEST

/* Views that are not dense: a leading dimension past the size, an offset,
 * and the copies PyTorch makes of what has no unit stride. */
START_TEST(t_mm_strided)
{
    bp_blas_settings_t s = dflt();
    /* x = big[3, 8][:, 2:7]: [3, 5] stride (8, 1), offset 2; stride(1) is 1
     * and stride(0) = 8 >= 5: flag true, flipped to N, ldb = 8 */
    bp_gemm_call_t c = mm(&s, BP_F32, g2(3, 5, 8, 1, 2), contig(5, 4));
    gemm_is(&c, false, false, 4, 3, 5, 4, 8, 4);
    ck_assert(!c.clone_b && c.b_off == 2 && c.a_off == 0);
    /* w = big[4, 8][:, :5], w.t(): [5, 4] stride (1, 8): stride(0) is 1 and
     * stride(1) = 8 >= 5: flag false, flipped to T, lda = 8 */
    c = mm(&s, BP_F32, contig(3, 5), g2(5, 4, 1, 8, 0));
    gemm_is(&c, true, false, 4, 3, 5, 8, 5, 4);
    /* x = big[3, 10][:, ::2]: [3, 5] stride (10, 2): no unit stride: a
     * contiguous copy (flag true, flipped to N), ldb its stride(0) = 5 */
    c = mm(&s, BP_F32, g2(3, 5, 10, 2, 0), contig(5, 4));
    gemm_is(&c, false, false, 4, 3, 5, 4, 5, 4);
    ck_assert(c.clone_b && !c.clone_a && c.b_off == 0);
    /* b = row.expand(5, 4): stride (0, 1), 0 < 4: copied */
    c = mm(&s, BP_F32, contig(3, 5), g2(5, 4, 0, 1, 0));
    gemm_is(&c, false, false, 4, 3, 5, 4, 5, 4);
    ck_assert(c.clone_a && !c.clone_b);
}
END_TEST

/* Size-1 dimensions, where _cublasAdjustLdLevel3 rewrites leading
 * dimensions cuBLAS checks anyway. */
START_TEST(t_mm_degenerate)
{
    bp_blas_settings_t s = dflt();
    /* k = 1: w [4, 1], w.t() [1, 4] stride (1, 1) is contiguous (its
     * size-1 dimension is skipped): flag true, flipped to N; lda =
     * stride(0) = 1, then N with k <= 1: lda = max(m, 1) = 4 */
    bp_gemm_call_t c = mm(&s, BP_F32, contig(3, 1), wt(4, 1));
    gemm_is(&c, false, false, 4, 3, 1, 4, 1, 4);
    /* one token: x [1, 5] @ w.t(): n = 1: ldc = max(m, 1) = 4, ldb (N,
     * n <= 1) = max(k, 1) = 5 */
    c = mm(&s, BP_F32, contig(1, 5), wt(4, 5));
    gemm_is(&c, true, false, 4, 1, 5, 5, 5, 4);
    /* one output feature: w [1, 5], w.t() [5, 1] stride (1, 5) is
     * contiguous: flag N, lda = stride(0) = 1 = max(m, 1); result [3, 1]
     * stride (1, 1): ldc = 1 */
    c = mm(&s, BP_F32, contig(3, 5), wt(1, 5));
    gemm_is(&c, false, false, 1, 3, 5, 1, 5, 1);
    /* one row of a wider matrix: x = X[:, :5], X [1, 7]: [1, 5] stride
     * (7, 1) is contiguous (the size-1 dimension skipped): flag N, ldb =
     * stride(0) = 7, then N with n <= 1: ldb = max(k, 1) = 5 */
    c = mm(&s, BP_F32, g2(1, 5, 7, 1, 0), contig(5, 4));
    gemm_is(&c, false, false, 4, 1, 5, 4, 5, 4);
    /* an empty result: nothing to call */
    c = mm(&s, BP_F32, contig(0, 5), contig(5, 4));
    ck_assert_int_eq(c.api, BP_GEMM_NONE);
    /* k = 0: zeros, without cuBLAS */
    c = mm(&s, BP_F32, contig(3, 0), contig(0, 4));
    ck_assert_int_eq(c.api, BP_GEMM_ZERO);
}
END_TEST

/* F.linear with a bias: addmm(bias, x, w.t()).  isInputCompliesAddmmCudaLt:
 * beta 1, a contiguous bias squeezing to 1-D of size n = 4, a fp32/fp16/
 * bf16/fp64 dtype, k and n > 1 (2.10 also wanted m > 1; PyTorch 2.11's
 * cuBLASLt log of F.linear on one row shows the epilogue): gemm_and_bias,
 * the bias pointer in the epilogue and beta 0 (no _cublasAdjustLdLevel3). */
START_TEST(t_addmm_lt)
{
    bp_blas_settings_t s = dflt();
    bp_strided_t bias = g2(4, 1, 1, 1, 0);
    bias.ndim = 1;
    bp_gemm_call_t c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert_int_eq(c.api, BP_GEMM_LT_BIAS);
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasLtMatmul (bias epilogue)");
    gemm_is(&c, true, false, 4, 3, 5, 5, 5, 4);
    ck_assert(c.bias && !c.copy_self && c.beta == 0 && c.alpha == 1);
    ck_assert(c.num.compute == BP_GEMM_COMPUTE_32F && !c.num.lt_mask);
    s.tf32 = true; /* cuBLASLt: CUBLAS_COMPUTE_32F_FAST_TF32 */
    c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.num.compute == BP_GEMM_COMPUTE_32F_FAST_TF32);
    /* bf16: compute 32F; reductions disallowed: the mask
     * COMPUTE_TYPE | NONE; split-K off too: NONE */
    s = dflt();
    c = addmm(&s, BP_BF16, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.num.compute == BP_GEMM_COMPUTE_32F && !c.num.lt_mask);
    s.bf16_rpr = false;
    c = addmm(&s, BP_BF16, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.num.lt_mask && c.num.lt_mask_value == 2);
    s.bf16_split = false;
    c = addmm(&s, BP_BF16, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.num.lt_mask && c.num.lt_mask_value == 0);
    /* a bias [1, 4] squeezes to 1-D: Lt, its pointer in the epilogue, but
     * not 1-D itself: self is copied into the result first (PyTorch's
     * use_bias_ptr_lt is false) */
    s = dflt();
    c = addmm(&s, BP_F32, g2(1, 4, 4, 1, 0), contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_LT_BIAS && c.bias && c.copy_self && c.beta == 0);
    /* one row, x [1, 5] (a decoding step): the epilogue, as PyTorch 2.11's
     * log shows for x [1, 4096]; Lt's leading dimensions unadjusted: ldb =
     * x.stride(0) = 5, ldc = 4 */
    c = addmm(&s, BP_F32, bias, contig(1, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_LT_BIAS && c.bias && !c.copy_self && c.beta == 0);
    gemm_is(&c, true, false, 4, 1, 5, 5, 5, 4);
    /* fp64 is among the Lt dtypes: CUBLAS_COMPUTE_64F */
    c = addmm(&s, BP_F64, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_LT_BIAS && c.num.compute == BP_GEMM_COMPUTE_64F);
}
END_TEST

/* Where isInputCompliesAddmmCudaLt says no: the self copied into the
 * result (expanded), then at::cuda::blas::gemm with beta. */
START_TEST(t_addmm_cublas)
{
    bp_blas_settings_t s = dflt();
    bp_strided_t bias = g2(4, 1, 1, 1, 0);
    bias.ndim = 1;
    /* one output feature (mat2.size(1) = 1, a bias [1]): cuBLAS, beta 1;
     * w [1, 5], w.t() [5, 1] contiguous: N, lda = max(m, 1) = 1; ldc
     * adjusted for n = 3 > 1: stays 1 */
    bp_strided_t one = g2(1, 1, 1, 1, 0);
    one.ndim = 1;
    bp_gemm_call_t c = addmm(&s, BP_F32, one, contig(3, 5), wt(1, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self && !c.bias && c.beta == 1);
    gemm_is(&c, false, false, 1, 3, 5, 1, 5, 1);
    /* a 2-D self [3, 4] (no activation): cuBLAS */
    c = addmm(&s, BP_F32, contig(3, 4), contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self && c.beta == 1);
    /* a bias [1] (broadcast over n = 4): its size is not n: cuBLAS */
    c = addmm(&s, BP_F32, one, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self && c.beta == 1);
    /* beta 0.5: cuBLAS with beta as float; beta 0: self not read */
    c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 0.5, 2);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self && c.beta == 0.5 && c.alpha == 2);
    c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 0, 0.1);
    ck_assert(c.api == BP_GEMM_CUBLAS && !c.copy_self && c.beta == 0);
    ck_assert(c.alpha == (double)0.1f); /* alpha.to<float>() */
    /* DISABLE_ADDMM_CUDA_LT=1, or the retry after a failed epilogue */
    s.addmm_lt_off = true;
    c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self && c.beta == 1);
    s = dflt();
    bp_error_t err = {0};
    bp_strided_t a = contig(3, 5), b = wt(4, 5);
    ck_assert(bp_gemm_plan_addmm(&s, CC, BP_F32, &bias, &a, &b, 1, 1, true, &c, &err) == BP_OK);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self);
    /* k = 0: self * beta, beta in the dtype (scalar_tensor(beta, dtype)):
     * bf16 0.1 is 0x3dcd = 0.10009765625 */
    a = contig(3, 0);
    b = contig(0, 4);
    c = addmm(&s, BP_BF16, bias, a, b, 0.1, 1);
    ck_assert(c.api == BP_GEMM_SCALE && c.copy_self && c.scale == 0.10009765625);
    c = addmm(&s, BP_BF16, bias, a, b, 0, 1);
    ck_assert(c.api == BP_GEMM_ZERO && !c.copy_self);
}
END_TEST

/* The preferred library cuBLASLt (TORCH_BLAS_PREFER_CUBLASLT=1): gemm
 * through bgemm_internal_cublaslt (leading dimensions adjusted as for
 * cuBLAS), cuBLAS when it fails; split-K off needs it. */
START_TEST(t_lt_preferred)
{
    bp_blas_settings_t s = dflt();
    s.lib = BP_BLAS_CUBLASLT;
    bp_gemm_call_t c = mm(&s, BP_F32, contig(3, 5), wt(4, 5));
    ck_assert_int_eq(c.api, BP_GEMM_LT);
    gemm_is(&c, true, false, 4, 3, 5, 5, 5, 4);
    ck_assert(c.num.compute == BP_GEMM_COMPUTE_32F && !c.num.lt_mask && !c.lt_fake_n2);
    s.bf16_rpr = s.bf16_split = false;
    c = mm(&s, BP_BF16, contig(3, 5), wt(4, 5));
    ck_assert(c.num.lt_mask && c.num.lt_mask_value == 0);
    /* n = 1 with mask NONE: the heuristic is asked for n = 2 on cc >= 10
     * only */
    c = mm(&s, BP_BF16, contig(1, 5), wt(4, 5));
    ck_assert(!c.lt_fake_n2);
    bp_error_t err = {0};
    bp_strided_t a = contig(1, 5), b = wt(4, 5);
    ck_assert(bp_gemm_plan_addmm(&s, 10, BP_BF16, NULL, &a, &b, 0, 1, false, &c, &err) ==
              BP_OK);
    ck_assert(c.lt_fake_n2);
    /* the cuBLAS backend refuses split-K off: TORCH_CHECK's message */
    s.lib = BP_BLAS_CUBLAS;
    ck_assert(bp_gemm_plan_addmm(&s, CC, BP_BF16, NULL, &a, &b, 0, 1, false, &c, &err) ==
              BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "allow_splitk=False) requires the cuBLASLt backend"), "%s",
                  err.msg);
    /* the pinned mode: cublasGemmEx, CUBLAS_PEDANTIC_MATH, 32F_PEDANTIC,
     * CUBLAS_GEMM_DEFAULT, whatever the library */
    s = dflt();
    s.pedantic = true;
    s.lib = BP_BLAS_CUBLASLT;
    c = mm(&s, BP_F32, contig(3, 5), contig(5, 4));
    ck_assert(c.api == BP_GEMM_CUBLAS && !c.num.typed && !c.num.tensor_op &&
              c.num.math == BP_GEMM_MATH_PEDANTIC &&
              c.num.compute == BP_GEMM_COMPUTE_32F_PEDANTIC);
    bp_strided_t bias = g2(4, 1, 1, 1, 0);
    bias.ndim = 1;
    c = addmm(&s, BP_F32, bias, contig(3, 5), wt(4, 5), 1, 1);
    ck_assert(c.api == BP_GEMM_CUBLAS && c.copy_self);
}
END_TEST

static bp_gemm_call_t bmm(const bp_blas_settings_t *s, bp_dtype_t dt, bp_strided_t a,
                          bp_strided_t b, const bp_strided_t *res)
{
    bp_gemm_call_t c;
    bp_error_t err = {0};
    ck_assert_msg(bp_gemm_plan_baddbmm(s, CC, dt, NULL, &a, &b, 0, 1, res, &c, &err) == BP_OK,
                  "%s", err.msg);
    return c;
}

static void strides_are(const bp_gemm_call_t *c, int64_t sa, int64_t sb, int64_t sc,
                        int64_t batch)
{
    ck_assert_msg(c->stridea == sa && c->strideb == sb && c->stridec == sc &&
                      c->batch == batch,
                  "strides %lld %lld %lld batch %lld", (long long)c->stridea,
                  (long long)c->strideb, (long long)c->stridec, (long long)c->batch);
}

/* torch.bmm (baddbmm_out_cuda_impl): the result [B, m, n] contiguous has
 * stride(2) = 1 and stride(1) = n >= n: transpose_result; m = n's 4,
 * n = 3, k = 5; batch1_ = prepare_batch(b [2, 5, 4]: fast dim 2 has stride
 * 1, lead stride 4 >= 4: no transpose, ld 4), batch2_ = a (ld 5). */
START_TEST(t_bmm)
{
    bp_blas_settings_t s = dflt();
    bp_gemm_call_t c = bmm(&s, BP_F32, g3(2, 3, 5, 15, 5, 1), g3(2, 5, 4, 20, 4, 1), NULL);
    gemm_is(&c, false, false, 4, 3, 5, 4, 5, 4);
    strides_are(&c, 20, 15, 12, 2);
    ck_assert(c.batched && c.a_op == 1 && c.api == BP_GEMM_CUBLAS);
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasSgemmStridedBatched");
    /* bf16 bgemm: cublasGemmStridedBatchedEx under the handle's mode, the
     * reduced-precision setting not applied (bgemm_internal_cublas's
     * bfloat16 helper sets no mode); TF32's mode where allowed */
    s.bf16_rpr = false;
    c = bmm(&s, BP_BF16, g3(2, 3, 5, 15, 5, 1), g3(2, 5, 4, 20, 4, 1), NULL);
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasGemmStridedBatchedEx");
    ck_assert_uint_eq(c.num.math, BP_GEMM_MATH_DEFAULT);
    ck_assert(c.num.tensor_op && c.num.compute == BP_GEMM_COMPUTE_32F);
    s.tf32 = true;
    c = bmm(&s, BP_BF16, g3(2, 3, 5, 15, 5, 1), g3(2, 5, 4, 20, 4, 1), NULL);
    ck_assert_uint_eq(c.num.math, BP_GEMM_MATH_TF32);
    /* one batch: at::cuda::blas::gemm, not bgemm */
    s = dflt();
    c = bmm(&s, BP_F32, g3(1, 3, 5, 15, 5, 1), g3(1, 5, 4, 20, 4, 1), NULL);
    ck_assert(!c.batched);
    ck_assert_str_eq(bp_gemm_entry_name(&c), "cublasSgemm");
}
END_TEST

/* q [2, 3, 5] @ k.transpose(-2, -1), k [2, 4, 5]: kT [2, 5, 4] stride
 * (20, 1, 5); batch1_ = prepare_batch(kT, m 4, k 5): fast dim 2 has stride
 * 5, lead dim 1 has stride 1 and the fast stride 5 >= k: transposed, ld 5;
 * batch2_ = q (ld 5). */
START_TEST(t_bmm_views)
{
    bp_blas_settings_t s = dflt();
    bp_gemm_call_t c = bmm(&s, BP_F32, g3(2, 3, 5, 15, 5, 1), g3(2, 5, 4, 20, 1, 5), NULL);
    gemm_is(&c, true, false, 4, 3, 5, 5, 5, 4);
    strides_are(&c, 20, 15, 12, 2);
    /* n = 1: the result [2, 3, 1] stride (3, 1, 1) has stride(1) = 1 and
     * size(2) = 1: not transposed; m = 3, n = 1, k = 5; batch1_ = a: fast
     * dim 1 stride 5 != 1, lead dim 2 stride 1 and 5 >= k: transposed,
     * ld 5; batch2_ = b [2, 5, 1] stride (5, 1, 1): fast dim 1 stride 1 but
     * lead stride 1 < k 5; lead dim 2 stride 1 and fast stride 1 >= n 1:
     * transposed, ld 1; ldc = stride(2) = 1, adjusted for n <= 1 to 3 */
    c = bmm(&s, BP_F32, g3(2, 3, 5, 15, 5, 1), g3(2, 5, 1, 5, 1, 1), NULL);
    gemm_is(&c, true, true, 3, 1, 5, 5, 1, 3);
    strides_are(&c, 15, 5, 3, 2);
    ck_assert_int_eq(c.a_op, 0);
    /* the stack's heads: p [2, 3, 3] @ v, v the view [heads 2, T 3, d 4]
     * of rows [3, 8] (stride (4, 8, 1)), into the same view of the output
     * rows (bmm's out=): result stride(2) = 1, stride(1) = 8 >= 4:
     * transposed; m = 4, n = 3, k = 3; batch1_ = v (ld 8), batch2_ = p
     * (ld 3); ldc = 8, batch strides 4, 9, 4 */
    bp_strided_t res = g3(2, 3, 4, 4, 8, 1);
    c = bmm(&s, BP_F32, g3(2, 3, 3, 9, 3, 1), g3(2, 3, 4, 4, 8, 1), &res);
    gemm_is(&c, false, false, 4, 3, 3, 8, 3, 8);
    strides_are(&c, 4, 9, 4, 2);
    /* a = x.transpose(1, 2), x [2, 5, 3]: a [2, 3, 5] stride (15, 1, 3);
     * the result is contiguous (transposed); m = 4, n = 3, k = 5;
     * batch1_ = prepare_batch(b, m 4, k 5): fast dim 2 stride 1, lead
     * stride 4 >= 4: ld 4; batch2_ = prepare_batch(a, k 5, n 3): fast dim 2
     * stride 3 != 1; lead dim 1 stride 1 and the fast stride 3 >= n 3 (not
     * k 5): transposed, ld 3, no copy */
    c = bmm(&s, BP_F32, g3(2, 3, 5, 15, 1, 3), g3(2, 5, 4, 20, 4, 1), NULL);
    gemm_is(&c, false, true, 4, 3, 5, 4, 3, 4);
    strides_are(&c, 20, 15, 12, 2);
    ck_assert(!c.clone_a && !c.clone_b);
    /* batched dot products [2, 1, 5] @ [2, 5, 1]: the result [2, 1, 1]
     * stride (1, 1, 1) has stride(1) = 1 and size(2) = 1: not transposed;
     * m = 1, n = 1, k = 5; batch1_ = prepare_batch(a, m 1, k 5): fast
     * dim 1 stride 5; lead dim 2 stride 1 and 5 >= k: transposed, ld 5;
     * batch2_ = prepare_batch(b, m 5, n 1): fast dim 1 stride 1 but lead
     * stride 1 < 5; lead stride 1 and fast stride 1 >= n 1: transposed,
     * ld 1; ldc = stride(2) = 1; adjusted: n <= 1: ldc = max(m, 1) = 1;
     * T with m <= 1: lda = max(k, 1) = 5; T with k 5: ldb stays 1 */
    c = bmm(&s, BP_F32, g3(2, 1, 5, 5, 5, 1), g3(2, 5, 1, 5, 1, 1), NULL);
    gemm_is(&c, true, true, 1, 1, 5, 5, 1, 1);
    strides_are(&c, 5, 5, 1, 2);
    /* outer products, k = 1: a = x.transpose(1, 2), x [2, 1, 3]: a
     * [2, 3, 1] stride (3, 1, 3); the result [2, 3, 4] is contiguous
     * (transposed); m = 4, n = 3, k = 1; batch1_ = prepare_batch(b
     * [2, 1, 4], m 4, k 1): fast stride 1, lead stride 4 >= 4: N, ld 4;
     * batch2_ = prepare_batch(a, m 1, n 3): fast dim 2 stride 3; lead dim 1
     * stride 1 and 3 >= n 3: T, ld 3; adjusted: N with k <= 1: lda =
     * max(m, 1) = 4; T with k <= 1: ldb = max(n, 1) = 3 */
    c = bmm(&s, BP_F32, g3(2, 3, 1, 3, 1, 3), g3(2, 1, 4, 4, 4, 1), NULL);
    gemm_is(&c, false, true, 4, 3, 1, 4, 3, 4);
    strides_are(&c, 4, 3, 12, 2);
    /* an expanded batch (stride 0 on the batch) is read as is */
    c = bmm(&s, BP_F32, g3(2, 3, 5, 0, 5, 1), g3(2, 5, 4, 20, 4, 1), NULL);
    strides_are(&c, 20, 0, 12, 2);
    ck_assert(!c.clone_a && !c.clone_b);
    /* an operand with no unit stride in its matrices: a contiguous copy
     * (the batch stride of the copy) */
    c = bmm(&s, BP_F32, g3(2, 3, 5, 30, 10, 2), g3(2, 5, 4, 20, 4, 1), NULL);
    ck_assert(c.clone_b && !c.clone_a);
    strides_are(&c, 20, 15, 12, 2);
}
END_TEST

/* torch.baddbmm: self copied into the result unless beta is 0; k = 0:
 * result.mul_(beta), beta as opmath (float), not rounded to the dtype. */
START_TEST(t_baddbmm)
{
    bp_blas_settings_t s = dflt();
    bp_strided_t self = g3(2, 3, 4, 12, 4, 1), a = g3(2, 3, 5, 15, 5, 1),
                 b = g3(2, 5, 4, 20, 4, 1), a0 = g3(2, 3, 0, 0, 1, 1),
                 b0 = g3(2, 0, 4, 4, 4, 1);
    bp_gemm_call_t c;
    bp_error_t err = {0};
    ck_assert(bp_gemm_plan_baddbmm(&s, CC, BP_F32, &self, &a, &b, 0.5, 2, NULL, &c, &err) ==
              BP_OK);
    ck_assert(c.copy_self && c.beta == 0.5 && c.alpha == 2 && c.api == BP_GEMM_CUBLAS);
    ck_assert(bp_gemm_plan_baddbmm(&s, CC, BP_F32, &self, &a, &b, 0, 2, NULL, &c, &err) ==
              BP_OK);
    ck_assert(!c.copy_self && c.beta == 0);
    ck_assert(bp_gemm_plan_baddbmm(&s, CC, BP_BF16, &self, &a0, &b0, 0.1, 1, NULL, &c, &err) ==
              BP_OK);
    ck_assert(c.api == BP_GEMM_SCALE && c.copy_self && c.scale == (double)0.1f);
    s.lib = BP_BLAS_CUBLASLT;
    ck_assert(bp_gemm_plan_baddbmm(&s, CC, BP_F32, &self, &a, &b, 1, 1, NULL, &c, &err) ==
              BP_OK);
    ck_assert(c.api == BP_GEMM_LT && c.batched);
}
END_TEST

static const char *env_a(const char *name)
{
    static const char *const kv[][2] = {{"CUBLAS_WORKSPACE_CONFIG", ":4096:2:16:8"},
                                        {"CUBLASLT_WORKSPACE_SIZE", "2048"},
                                        {"DISABLE_ADDMM_CUDA_LT", "1"},
                                        {"TORCH_BLAS_PREFER_CUBLASLT", "1"},
                                        {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (strcmp(name, kv[i][0]) == 0)
            return kv[i][1];
    return NULL;
}

static const char *env_none(const char *name)
{
    (void)name;
    return NULL;
}

static const char *env_bad(const char *name)
{
    return strcmp(name, "CUBLAS_WORKSPACE_CONFIG") == 0 ? "4096:8"
           : strcmp(name, "DISABLE_ADDMM_CUDA_LT") == 0 ? "true" /* only "1" counts */
                                                        : NULL;
}

/* The settings: PyTorch's defaults, its environment variables, the
 * --cuda-blas list, and the workspaces they give. */
START_TEST(t_settings)
{
    bp_blas_settings_t s = dflt();
    ck_assert(!s.tf32 && s.bf16_rpr && s.fp16_rpr && s.lib == BP_BLAS_CUBLAS &&
              !s.addmm_lt_off);
    /* CublasHandlePool.cpp: 4096 KiB * 8 on Hopper, :4096:2:16:8 elsewhere */
    ck_assert_uint_eq(bp_blas_workspace(&s, 9), (size_t)32 << 20);
    ck_assert_uint_eq(bp_blas_workspace(&s, 8), (size_t)4096 * 1024 * 2 + 16 * 1024 * 8);
    ck_assert_uint_eq(bp_blas_lt_workspace(&s, 9), (size_t)1 << 20);
    bp_blas_settings_env(&s, env_none);
    ck_assert_uint_eq(bp_blas_workspace(&s, 9), (size_t)32 << 20);
    bp_blas_settings_env(&s, env_a);
    ck_assert(s.tf32 && s.addmm_lt_off && s.lib == BP_BLAS_CUBLASLT);
    ck_assert_uint_eq(bp_blas_workspace(&s, 9), (size_t)4096 * 1024 * 2 + 16 * 1024 * 8);
    /* CUBLASLT_WORKSPACE_SIZE 2048 KiB, unified: at most the cuBLAS one */
    ck_assert_uint_eq(bp_blas_lt_workspace(&s, 9), (size_t)2048 * 1024);
    s = dflt();
    bp_blas_settings_env(&s, env_bad); /* unparsable: the default, as PyTorch warns */
    ck_assert_uint_eq(bp_blas_workspace(&s, 9), (size_t)32 << 20);
    ck_assert(!s.addmm_lt_off);
    bp_error_t err = {0};
    s = dflt();
    ck_assert(bp_blas_settings_parse(&s, "allow_tf32=1,preferred_blas_library=cublaslt,"
                                         "CUBLAS_WORKSPACE_CONFIG=:4096:8,"
                                         "allow_fp16_reduced_precision_reduction=false",
                                     &err) == BP_OK);
    ck_assert(s.tf32 && s.lib == BP_BLAS_CUBLASLT && !s.fp16_rpr && s.fp16_split);
    ck_assert_uint_eq(bp_blas_workspace(&s, 9), (size_t)32 << 20);
    ck_assert_int_eq(bp_blas_rpr(&s, BP_F16), BP_RPR_DISALLOW);
    ck_assert_int_eq(bp_blas_rpr(&s, BP_BF16), BP_RPR_ALLOW);
    ck_assert(bp_blas_settings_parse(&s, "allow_fp16_reduced_precision_reduction_split_k=0",
                                     &err) == BP_OK);
    ck_assert_int_eq(bp_blas_rpr(&s, BP_F16), BP_RPR_DISALLOW_NO_SPLIT);
    /* refused: unknown keys, values, the pair PyTorch refuses */
    s = dflt();
    ck_assert(bp_blas_settings_parse(&s, "allow_tf31=1", &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "unknown BLAS setting 'allow_tf31'"), "%s", err.msg);
    ck_assert(bp_blas_settings_parse(&s, "allow_tf32=maybe", &err) == BP_EINPUT);
    ck_assert(bp_blas_settings_parse(&s, "preferred_blas_library=ck", &err) == BP_EINPUT);
    ck_assert(bp_blas_settings_parse(&s, "CUBLASLT_WORKSPACE_SIZE=-1", &err) == BP_EINPUT);
    ck_assert(bp_blas_settings_parse(&s, "allow_tf32", &err) == BP_EINPUT);
    s = dflt();
    ck_assert(bp_blas_settings_parse(&s, "allow_bf16_reduced_precision_reduction_split_k=0",
                                     &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "allow_splitk=False is not supported"), "%s", err.msg);
    /* the fingerprint's record */
    s = dflt();
    json_t *j = bp_blas_settings_json(&s, 9);
    ck_assert_ptr_nonnull(j);
    ck_assert(json_is_false(json_object_get(j, "allow_tf32")));
    ck_assert_str_eq(json_string_value(json_object_get(j, "preferred_blas_library")), "cublas");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "workspace_bytes")), 32 << 20);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gemm_plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_mm_contiguous);
    tcase_add_test(tc, t_mm_transposed);
    tcase_add_test(tc, t_mm_strided);
    tcase_add_test(tc, t_mm_degenerate);
    tcase_add_test(tc, t_addmm_lt);
    tcase_add_test(tc, t_addmm_cublas);
    tcase_add_test(tc, t_lt_preferred);
    tcase_add_test(tc, t_bmm);
    tcase_add_test(tc, t_bmm_views);
    tcase_add_test(tc, t_baddbmm);
    tcase_add_test(tc, t_settings);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
