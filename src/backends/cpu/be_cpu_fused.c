/* The fused ops on the CPU, as PyTorch's CPU code composes them.
 *
 * rms_norm (native/layer_norm.cpp rms_norm_symint -> _fused_rms_norm, on
 *   the CPU rms_norm_composite): x widened to opmath, v = x*x, mean over
 *   the last dimension (ATen's CPU sum order, / H in float), + eps (a
 *   double taken in float; default std::numeric_limits<opmath>::epsilon()),
 *   r = 1 / sqrt(v) (CPU rsqrt: two roundings), y = x * r in opmath,
 *   y * w in opmath (the weight widened), then one rounding to dt
 *   (".type_as(input)" of the upcasted result).
 * rms_norm, formulation fixed (the layer stack's and invariance's:
 *   transformers' LlamaRMSNorm as eager ops compose it): in opmath, the
 *   squares x*x (each rounded) summed left to right from +0, r = 1 /
 *   sqrt(ss / H + eps) (two roundings, the CPU's rsqrt), y = x * r rounded
 *   to dt (".to(input_dtype)"), out = w * y rounded to dt.
 * layer_norm (native/cpu/layer_norm_kernel.cpp LayerNormKernelImplInternal):
 *   each row's mean and biased variance from RowwiseMoments in opmath
 *   (be_cpu_moments.c), rstd = 1 / sqrt(var + eps) (eps a double taken in
 *   opmath; F.layer_norm's default 1e-5), then
 *   - fp32/fp64 (LayerNormSecondPass): y = fma((x + (-mean)) * rstd, w, b),
 *     the product chain rounded, the last multiply-add contracted, as GCC
 *     contracts 1.13's second pass, (x * rstd + bias) * w + b into two
 *     fmas (checked against Debian's 1.13 on 600 rows); a missing w is 1
 *     and b is 0 (the scalar loop, the same formula);
 *   - bf16/fp16 (layer_norm_kernel_mixed_type, weight and bias of the
 *     input's dtype, widened): scale = rstd, bias = -rstd * mean in float,
 *     y = dt(fma(fma(x, scale, bias), w, b)) in float.
 *   PyTorch 2.11's y matches this on 150 of 150 rows of fp32, fp64 and bf16
 *   (tests/refs/layer_norm_cases.py, on its own mean and rstd).  ATen's
 *   DEFAULT build (--cpu-isa default) has no fma: every multiply-add above
 *   rounds twice (tests/regress/ln-tail-layer-norm-*).
 * bmm: per batch, matmul's fixed order (acc = fma(a, b, acc) for k
 *   ascending, from +0, in opmath, rounded once); PyTorch calls MKL/oneDNN.
 * baddbmm: batch1 @ batch2 in bmm's order, then baddbmm_cpu_kernel's
 *   combine (native/LinearAlgebra.cpp) in opmath with alpha and beta as
 *   opmath (Scalar::to<opmath_t>): alpha * acc where beta is 0 (input not
 *   read: NaN ignored), else input * beta + alpha * acc, the two products
 *   and the sum each rounded (LinearAlgebra.cpp is built without FMA
 *   contraction); one rounding to dt.  PyTorch takes that kernel only for
 *   small products and MKL/oneDNN's gemm otherwise: bmm's order is the
 *   pinned one.
 * linear, addmm (LinearAlgebra.cpp addmm_impl_cpu_: the bias or input
 *   expanded and copied into the result where beta is not 0, then
 *   CPUBlas.cpp gemm -> sgemm with alpha and beta; F.linear is
 *   addmm(bias, x, weight.t()) on x flattened to 2-D, or without a bias
 *   matmul's mm): fp32 where that sgemm call falls in a class whose MKL
 *   order was fitted (alpha 1, beta 0 or 1), MKL's order with C holding
 *   the bias first (bp_cpu_mkl_gemm).  Elsewhere x @ weight^T (mat1 @
 *   mat2) in the one CPU GEMM's order, x's leading dimensions folded,
 *   then baddbmm's combine with the bias (input) broadcast to the
 *   result, beta and alpha 1 for linear; without a bias, the product
 *   rounded once: not PyTorch's order (MKL/oneDNN).
 * sdpa (native/transformers/attention.cpp _scaled_dot_product_attention_math):
 *   bf16/fp16 q, k, v widened to float; s = sqrt(scale or 1/sqrt(E)) in
 *   double; q' = q * s, k' = k * s (each rounded to float); scores =
 *   q' k'^T in bmm's order; is_causal adds -inf above the diagonal
 *   (tril(ones(L, S)) as convert_boolean_attn_mask writes it); softmax
 *   over the last dimension as the softmax op (a row that is all -inf gives
 *   0: _safe_softmax); out = dt(p v) in bmm's order. */
#include "be_cpu_rows.h"
#include "cpu_gemm.h"

#include <math.h>
#include <stdlib.h>

static double rnd(bool f32, double v)
{
    return f32 ? (double)(float)v : v;
}

/* [rows, h] split of x: h its last dimension. */
static void rows_of(const bp_buf_t *x, size_t *rows, size_t *h)
{
    *h = x->ndim ? (size_t)x->shape[x->ndim - 1] : 1;
    *rows = *h ? x->numel / *h : 0;
}

/* rms_norm's fixed formulation over rows of h values v (exact in dt), weight
 * wv, in opmath: float arithmetic for every dtype but fp64. */
static void rms_norm_fixed(const double *v, const double *wv, size_t rows, size_t h,
                           double eps, bp_buf_t *out)
{
    bp_dtype_t dt = out->dtype;
    for (size_t r = 0; r < rows; r++) {
        const double *xr = v + r * h;
        if (dt == BP_F64) {
            double ss = 0.0;
            for (size_t j = 0; j < h; j++)
                ss = ss + xr[j] * xr[j];
            double rs = 1.0 / sqrt(ss / (double)h + eps);
            for (size_t j = 0; j < h; j++)
                bp_cpu_store(out, r * h + j, wv[j] * (xr[j] * rs));
            continue;
        }
        float ss = 0.0f;
        for (size_t j = 0; j < h; j++) {
            float sq = (float)xr[j] * (float)xr[j];
            ss = ss + sq;
        }
        float rs = 1.0f / sqrtf(ss / (float)h + (float)eps);
        for (size_t j = 0; j < h; j++) {
            float y = (float)bp_cpu_round(dt, (float)xr[j] * rs);
            bp_cpu_store(out, r * h + j, (float)wv[j] * y);
        }
    }
}

bp_status bp_cpu_op_rms_norm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    const bp_buf_t *a = x->a, *w = x->b;
    bp_dtype_t dt = x->out->dtype;
    bool f32 = dt != BP_F64;
    size_t rows, h;
    rows_of(a, &rows, &h);
    if (x->op->form == BP_FORM_FIXED) {
        double *v, *wv;
        bp_status st = bp_cpu_expand(a, a, dt, &v, err);
        if (st)
            return st;
        if ((st = bp_cpu_expand(w, w, dt, &wv, err))) {
            free(v);
            return st;
        }
        rms_norm_fixed(v, wv, rows, h, bp_op_norm_eps(x->op, dt), x->out);
        free(v);
        free(wv);
        return BP_OK;
    }
    double eps = rnd(f32, bp_op_norm_eps(x->op, dt));
    double *v, *wv, *sq = malloc((a->numel ? a->numel : 1) * sizeof *sq),
                    *ms = malloc((rows ? rows : 1) * sizeof *ms);
    bp_status st = BP_OK;
    if (!sq || !ms) {
        free(sq);
        free(ms);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    if ((st = bp_cpu_expand(a, a, dt, &v, err)))
        goto out;
    if ((st = bp_cpu_expand(w, w, dt, &wv, err))) {
        free(v);
        goto out;
    }
    for (size_t i = 0; i < a->numel; i++)
        sq[i] = rnd(f32, v[i] * v[i]);
    bp_cpu_cascade_sum(sq, rows, h, 1, f32 ? BP_F32 : BP_F64, ms);
    for (size_t r = 0; r < rows; r++) {
        double m = rnd(f32, ms[r] / rnd(f32, (double)h));
        double rs = rnd(f32, 1.0 / rnd(f32, sqrt(rnd(f32, m + eps))));
        for (size_t j = 0; j < h; j++) {
            double y = rnd(f32, v[r * h + j] * rs);
            bp_cpu_store(x->out, r * h + j, rnd(f32, y * wv[j]));
        }
    }
    free(v);
    free(wv);
out:
    free(sq);
    free(ms);
    return st;
}

bp_status bp_cpu_op_layer_norm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bool fused = ((const bp_cpu_t *)be->state)->simd;
    const bp_buf_t *a = x->inputs[0];
    const bp_buf_t *w = x->ninputs > 1 ? x->inputs[1] : NULL,
                   *b = x->ninputs > 2 ? x->inputs[2] : NULL;
    bp_dtype_t dt = x->out->dtype;
    bool f32 = dt != BP_F64, lp = dt == BP_BF16 || dt == BP_F16;
    size_t rows, h;
    rows_of(a, &rows, &h);
    double eps = rnd(f32, bp_op_norm_eps(x->op, dt));
    double *v = NULL, *wv = NULL, *bv = NULL;
    bp_status st = bp_cpu_expand(a, a, dt, &v, err);
    if (!st && w)
        st = bp_cpu_expand(w, w, dt, &wv, err);
    if (!st && b)
        st = bp_cpu_expand(b, b, dt, &bv, err);
    for (size_t r = 0; !st && r < rows; r++) {
        const double *xr = v + r * h;
        double mean, var;
        bp_cpu_row_moments(xr, (int64_t)h, dt, fused, &mean, &var);
        double rstd = rnd(f32, 1.0 / rnd(f32, sqrt(rnd(f32, var + eps))));
        double bias = lp ? rnd(true, -rstd * mean) : -mean;
        for (size_t j = 0; j < h; j++) {
            double g = wv ? wv[j] : 1.0, be_ = bv ? bv[j] : 0.0, t;
            if (lp)
                t = bp_cpu_madd(fused, true, xr[j], rstd, bias);
            else
                t = rnd(f32, rnd(f32, xr[j] + bias) * rstd);
            double y = bp_cpu_madd(fused, f32, t, g, be_);
            bp_cpu_store(x->out, r * h + j, y);
        }
    }
    free(v);
    free(wv);
    free(bv);
    return st;
}

/* c[m, n] = a[m, k] b[k, n] for `batch` matrices, the one CPU GEMM's
 * order (cpu_gemm.h), values in opmath (float when f32), results in
 * opmath. */
static bp_status bmm_vals(const double *a, const double *b, size_t batch, size_t m, size_t k,
                          size_t n, bool f32, double *c, bp_error_t *err)
{
    bp_status st = BP_OK;
    for (size_t t = 0; !st && t < batch; t++)
        st = bp_cpu_gemm_vals(m, n, k, a + t * m * k, b + t * k * n, false, f32,
                              c + t * m * n, err);
    return st;
}

/* a [B, m, k] @ b [B, k, n] in bmm's order, in opmath, into *c (out's
 * numel values, the caller frees). */
static bp_status bmm_of(const bp_buf_t *a, const bp_buf_t *b, const bp_buf_t *out,
                        double **c, bp_error_t *err)
{
    bp_dtype_t dt = out->dtype;
    if (!a || !b || a->ndim != 3 || b->ndim != 3)
        return bp_error_set(err, BP_EINPUT, "%s needs [B, m, k] and [B, k, n] tensors",
                            bp_op_name(BP_OP_BMM));
    size_t B = (size_t)a->shape[0], m = (size_t)a->shape[1], k = (size_t)a->shape[2],
           n = (size_t)b->shape[2];
    double *av, *bv;
    bp_status st;
    if (!(*c = malloc((out->numel ? out->numel : 1) * sizeof **c)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if ((st = bp_cpu_expand(a, a, dt, &av, err))) {
        free(*c);
        return st;
    }
    if ((st = bp_cpu_expand(b, b, dt, &bv, err))) {
        free(av);
        free(*c);
        return st;
    }
    st = bmm_vals(av, bv, B, m, k, n, dt != BP_F64, *c, err);
    free(av);
    free(bv);
    if (st)
        free(*c);
    return st;
}

/* baddbmm_cpu_kernel's combine in opmath, each product and the sum
 * rounded: alpha * acc where beta is 0 or there is no input (in NULL),
 * else in * beta + alpha * acc; then one rounding to out's dtype. */
static void combine(bp_buf_t *out, const double *c, const double *in, double beta,
                    double alpha)
{
    bool f32 = out->dtype != BP_F64;
    double al = rnd(f32, alpha), be = rnd(f32, beta);
    for (size_t i = 0; i < out->numel; i++) {
        double ac = rnd(f32, al * c[i]);
        bp_cpu_store(out, i, be == 0 || !in ? ac : rnd(f32, rnd(f32, in[i] * be) + ac));
    }
}

bp_status bp_cpu_op_bmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    double *c;
    bp_status st = bmm_of(x->a, x->b, x->out, &c, err);
    if (st)
        return st;
    for (size_t i = 0; i < x->out->numel; i++)
        bp_cpu_store(x->out, i, c[i]);
    free(c);
    return BP_OK;
}

bp_status bp_cpu_op_baddbmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    if (x->ninputs != 3)
        return bp_error_set(err, BP_EINPUT, "baddbmm takes inputs [input, batch1, batch2]");
    bp_dtype_t dt = x->out->dtype;
    double *c, *in = NULL;
    bp_status st = bmm_of(x->inputs[1], x->inputs[2], x->out, &c, err);
    if (st)
        return st;
    if ((st = bp_cpu_expand(x->inputs[0], x->out, dt, &in, err))) {
        free(c);
        return st;
    }
    combine(x->out, c, in, x->op->beta, x->op->alpha);
    free(c);
    free(in);
    return BP_OK;
}

/* x [..., k] @ w [n, k]^T (linear) or mat1 [m, k] @ mat2 [k, n] (addmm)
 * in the one CPU GEMM's order, then combined with the input (bias)
 * broadcast to the result as baddbmm's kernel does: beta and alpha 1 for
 * linear; no input: the product alone, rounded once. */
static bp_status gemm_op(const bp_exec_t *x, bool lin, bp_error_t *err)
{
    const bp_buf_t *a = x->inputs[lin ? 0 : 1], *b = x->inputs[lin ? 1 : 2];
    const bp_buf_t *in = lin ? (x->ninputs > 2 ? x->inputs[2] : NULL) : x->inputs[0];
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    bool f32 = dt != BP_F64;
    if (a->ndim < 1 || b->ndim != 2 || (!lin && a->ndim != 2))
        return bp_error_set(err, BP_EINPUT, "%s needs %s", bp_op_name(x->op->kind),
                            lin ? "x [..., k] and weight [n, k]"
                                : "mat1 [m, k] and mat2 [k, n]");
    size_t k = (size_t)a->shape[a->ndim - 1], n = (size_t)b->shape[lin ? 0 : 1];
    size_t m = k ? a->numel / k : (n ? out->numel / n : 0);
    double *av = NULL, *bv = NULL, *iv = NULL, *c = malloc((out->numel ? out->numel : 1) *
                                                            sizeof *c);
    bp_status st = c ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = bp_cpu_expand(a, a, dt, &av, err);
    if (!st)
        st = bp_cpu_expand(b, b, dt, &bv, err);
    if (!st && in)
        st = bp_cpu_expand(in, out, dt, &iv, err);
    if (!st)
        st = bp_cpu_gemm_vals(m, n, k, av, bv, lin, f32, c, err);
    if (!st)
        combine(out, c, iv, lin ? 1.0 : x->op->beta, lin ? 1.0 : x->op->alpha);
    free(av);
    free(bv);
    free(iv);
    free(c);
    return st;
}

/* MKL's order where PyTorch's sgemm call was fitted, else gemm_op. */
static bp_status gemm_mkl_or_own(const bp_backend_t *be, const bp_exec_t *x, bool lin,
                                 bp_error_t *err)
{
    const bp_buf_t *a = x->inputs[lin ? 0 : 1], *b = x->inputs[lin ? 1 : 2];
    const bp_buf_t *in = bp_cpu_gemm_input(x->op, x->inputs, x->ninputs);
    bp_mkl_order_t o = bp_cpu_mkl_order(be->state, x->op, x->gemm_layout, a, b, in, x->out);
    return o != BP_MKL_UNFITTED ? bp_cpu_mkl_gemm(o, x, a, b, err) : gemm_op(x, lin, err);
}

bp_status bp_cpu_op_linear(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    if (x->ninputs != 2 && x->ninputs != 3)
        return bp_error_set(err, BP_EINPUT, "linear takes inputs [x, weight] or "
                            "[x, weight, bias]");
    return gemm_mkl_or_own(be, x, true, err);
}

bp_status bp_cpu_op_addmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    if (x->ninputs != 3)
        return bp_error_set(err, BP_EINPUT, "addmm takes inputs [input, mat1, mat2]");
    return gemm_mkl_or_own(be, x, false, err);
}

bp_status bp_cpu_op_sdpa(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    const bp_buf_t *q = x->inputs[0], *k = x->inputs[1], *v = x->inputs[2];
    bp_dtype_t dt = x->out->dtype;
    bool f32 = dt != BP_F64;
    bp_dtype_t acc_dt = f32 ? BP_F32 : BP_F64;
    int nd = q->ndim;
    size_t L = (size_t)q->shape[nd - 2], E = (size_t)q->shape[nd - 1],
           S = (size_t)k->shape[nd - 2], Ev = (size_t)v->shape[nd - 1];
    size_t B = L * E > 0 ? q->numel / (L * E) : 0;
    double sf = rnd(f32, sqrt(fabs(bp_op_sdpa_scale(x->op, (int64_t)E))));
    if (x->op->has_scale && x->op->scale < 0)
        sf = -sf; /* q * (0 - s): the sign on q only */
    double sk = rnd(f32, sqrt(fabs(bp_op_sdpa_scale(x->op, (int64_t)E))));
    double *qv = NULL, *kv = NULL, *vv = NULL, *kt = NULL, *sc = NULL, *p = NULL, *o = NULL;
    bp_status st = bp_cpu_expand(q, q, acc_dt, &qv, err);
    if (!st)
        st = bp_cpu_expand(k, k, acc_dt, &kv, err);
    if (!st)
        st = bp_cpu_expand(v, v, acc_dt, &vv, err);
    size_t nsc = B * L * S;
    if (!st) {
        kt = calloc(B * S * E > 0 ? B * S * E : 1, sizeof *kt);
        sc = malloc((nsc ? nsc : 1) * sizeof *sc);
        p = malloc((nsc ? nsc : 1) * sizeof *p);
        o = malloc((x->out->numel ? x->out->numel : 1) * sizeof *o);
        if (!kt || !sc || !p || !o)
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    if (st)
        goto done;
    for (size_t i = 0; i < q->numel; i++)
        qv[i] = rnd(f32, qv[i] * sf);
    for (size_t t = 0; t < B; t++) /* k' transposed: [E, S] */
        for (size_t j = 0; j < S; j++)
            for (size_t e = 0; e < E; e++)
                kt[(t * E + e) * S + j] = rnd(f32, kv[(t * S + j) * E + e] * sk);
    if ((st = bmm_vals(qv, kt, B, L, E, S, f32, sc, err)))
        goto done;
    for (size_t t = 0; t < B; t++)
        for (size_t i = 0; i < L; i++)
            for (size_t j = 0; j < S; j++)
                if (x->op->is_causal) /* attn.add_(mask): +inf or NaN masked is NaN */
                    sc[(t * L + i) * S + j] += j > i ? -INFINITY : 0.0;
    bp_cpu_span_t sp = {B * L, S, 1, true};
    bp_cpu_softmax_rows(c, false, acc_dt, sc, &sp, p);
    for (size_t r = 0; r < B * L; r++) {
        bool all = S > 0;
        for (size_t j = 0; j < S && all; j++)
            all = sc[r * S + j] == -INFINITY;
        for (size_t j = 0; all && j < S; j++)
            p[r * S + j] = 0;
    }
    if ((st = bmm_vals(p, vv, B, L, S, Ev, f32, o, err)))
        goto done;
    for (size_t i = 0; i < x->out->numel; i++)
        bp_cpu_store(x->out, i, o[i]);
done:
    free(qv);
    free(kv);
    free(vv);
    free(kt);
    free(sc);
    free(p);
    free(o);
    return st;
}
