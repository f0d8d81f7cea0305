/* The CUDA backend's reductions along an axis and fused ops (kernels/rows.cu
 * says each formulation; sdpa's products are torch.matmul's, through the GEMM
 * module: cuda_gemm.h).
 *
 * sdpa follows _scaled_dot_product_attention_math (attention.cpp) on q, k,
 * v as PyTorch holds them (views: a transposed q stays transposed): bf16
 * and fp16 q, k, v widened to float; q and k.transpose(-2, -1) each
 * multiplied by sqrt(scale) (scale: the op's or 1/sqrt(E), in double,
 * taken in float), each product laid out as TensorIterator lays it out
 * (bp_strided_like); scores = q k^T by torch.matmul (mm for matrices,
 * else bmm); the causal mask adds -inf above the diagonal; softmax
 * over the last dimension (the softmax op's kernel: the persistent one for
 * S <= 2048); rows masked throughout give 0 (_safe_softmax); out = p v,
 * rounded to the dtype.
 *
 * sum, mean, prod and var run in Reduce.cuh's order (bp_cuda_tree,
 * kernels/treereduce.cu, src/redcfg.c); BP_ATEN_REDUCE (redcfg.h's
 * bp_redcfg_flags) selects the older Reduce.cuh's rules, for checking which
 * ones a PyTorch build follows. */
#include "be_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"
#include "cuda_gemm.h"

static bp_status need_dev(const bp_buf_t *t, const char *which, bp_error_t *err)
{
    if (!t || !t->dev)
        return bp_error_set(err, BP_EINPUT, "operand %s is not on the device", which);
    return BP_OK;
}

/* outer, len, inner of a around op's axis (no axis: one row of all). */
static bp_status span(const bp_exec_t *x, bool all, int64_t *outer, int64_t *len,
                      int64_t *inner, bp_error_t *err)
{
    const bp_buf_t *a = x->a;
    *outer = *inner = 1;
    *len = (int64_t)a->numel;
    if ((!x->op->has_axis && all) || a->ndim == 0)
        return BP_OK;
    int ax;
    bp_status st = bp_axis_check(x->op->axis, a->ndim, &ax, err);
    if (st)
        return st;
    for (int d = 0; d < ax; d++)
        *outer *= a->shape[d];
    *len = a->shape[ax];
    for (int d = ax + 1; d < a->ndim; d++)
        *inner *= a->shape[d];
    return BP_OK;
}

/* A device temporary of n elements of dt. */
static bp_status temp(bp_backend_t *be, bp_buf_t *t, bp_dtype_t dt, int64_t n, bp_error_t *err)
{
    bp_status st = bp_buf_shape(t, dt, 1, &n, err);
    return st ? st : be->dev_alloc(be, t, err);
}

bp_status bp_cuda_op_softmax(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    int64_t outer, len, inner;
    bp_status st = need_dev(x->a, "a", err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (!st)
        st = span(x, false, &outer, &len, &inner, err);
    if (st)
        return st;
    /* An operand of another dtype (an integer tensor, or a probe's dtype:)
     * is converted to the result's first, as TensorIterator would. */
    const void *in = x->a->dev;
    if (x->a->dtype != x->out->dtype) {
        st = bp_cuda_finish(be, "bpk_cast",
                            bpk_cast(bp_cuda_stream(be), x->out->dev, (int)x->out->dtype,
                                     x->a->dev, (int)x->a->dtype, (int64_t)x->a->numel),
                            err);
        if (st)
            return st;
        in = x->out->dev; /* in place: each row is read before it is written */
    }
    bool log = x->op->kind == BP_OP_LOG_SOFTMAX;
    if (x->op->form == BP_FORM_FIXED)
        return bp_cuda_finish(be, "bpk_softmax_fixed",
                              bpk_softmax_fixed(bp_cuda_stream(be), x->out->dev, in,
                                                (int)x->out->dtype, outer, len, inner, log),
                              err);
    int rc = bpk_softmax(bp_cuda_stream(be), x->out->dev, in, (int)x->out->dtype,
                         outer, len, inner, log);
    return bp_cuda_finish(be, "bpk_softmax", rc, err);
}

/* Operand a in dtype dt: a itself, or a converted into the temporary t
 * (TensorIterator's cast of an input to the op's dtype; for an explicit
 * dtype: PyTorch's `op(a.to(dtype), ...)`).  *in is what the kernel then
 * reads; t, when given storage, is the caller's to free. */
static bp_status as_dtype(bp_backend_t *be, const bp_buf_t *a, bp_dtype_t dt, bp_buf_t *t,
                          const void **in, bp_error_t *err)
{
    *in = a->dev;
    if (a->dtype == dt)
        return BP_OK;
    bp_status st = temp(be, t, dt, (int64_t)a->numel, err);
    if (!st)
        st = bp_cuda_finish(be, "bpk_cast",
                            bpk_cast(bp_cuda_stream(be), t->dev, (int)dt, a->dev, (int)a->dtype,
                                     (int64_t)a->numel),
                            err);
    *in = t->dev;
    return st;
}

static void free_temps(bp_backend_t *be, bp_buf_t **tmp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tmp[i]->dev)
            be->dev_free(be, tmp[i]);
}

bp_status bp_cuda_tree(bp_backend_t *be, const bp_exec_t *x, int op, int64_t outer,
                       int64_t len, int64_t inner, double param, bp_error_t *err)
{
    bp_buf_t *out = x->out;
    bp_dtype_t adt = x->a->dtype;
    /* an empty result or an empty extent never reaches here: bp_backend_op */
    /* make_reduction: the input is converted to the result's dtype, but
     * for bf16/fp16 summed (or averaged, multiplied) into fp32, which the
     * kernel reads as it is (gpu_lowp_to_f32). */
    bool lowp = (adt == BP_BF16 || adt == BP_F16) && out->dtype == BP_F32 &&
                op != BPK_TREE_VAR;
    bp_dtype_t in_dt = lowp ? adt : out->dtype;
    int acc = bpk_tree_acc_bytes(op, (int)in_dt);
    if (!acc)
        return bp_error_set(err, BP_EINPUT, "the reduction has no kernel for %s",
                            bp_dtype_name(in_dt));
    bp_buf_t conv = {0}, stage = {0}, sem = {0};
    const void *in = NULL;
    bp_gpu_props_t props;
    bp_redcfg_t cfg;
    int scalar = (int)bp_dtype_info(in_dt)->size;
    int vt0 = op == BPK_TREE_VAR ? 2 : 4;
    /* sum_functor and mean_kernel_impl: 16-bit inputs ask for 8-wide vectors */
    int ivs = (op == BPK_TREE_SUM || op == BPK_TREE_MEAN) && scalar == 2 ? 8 : vt0;
    /* which of ATen's versions' orders (redcfg.h); an investigation aid */
    const char *spec = getenv("BP_ATEN_REDUCE");
    int flags = bp_redcfg_flags(spec);
    if (flags < 0)
        return bp_error_set(err, BP_EINPUT,
                            "BP_ATEN_REDUCE='%s': not a list of vec128=ge|gt, run=xy|yx, "
                            "shfl=desc|asc", spec);
    bp_status st = as_dtype(be, x->a, in_dt, &conv, &in, err);
    if (!st)
        st = bp_cuda_gpu_props(be, &props, err);
    if (!st && bp_redcfg_make(&cfg, outer, len, inner, scalar, acc, vt0, ivs,
                              (uint64_t)(uintptr_t)in, &props, (unsigned)flags))
        st = bp_error_set(err, BP_EINPUT,
                          "a reduction of %lld x %lld x %lld values exceeds 32-bit indexing",
                          (long long)outer, (long long)len, (long long)inner);
    if (!st && cfg.input_mult[2]) {
        if (!(st = temp(be, &stage, BP_U8, cfg.staging_elems * acc, err)) &&
            !(st = temp(be, &sem, BP_I32, cfg.grid_x, err)))
            st = bp_cuda_zero(be, sem.dev, (size_t)cfg.grid_x * sizeof(int32_t), err);
    }
    if (!st)
        st = bp_cuda_finish(be, "bpk_tree_reduce",
                            bpk_tree_reduce(bp_cuda_stream(be), op, out->dev, (int)out->dtype,
                                            in, (int)in_dt, &cfg, param, stage.dev,
                                            (int *)sem.dev),
                            err);
    bp_buf_t *tmp[] = {&conv, &stage, &sem};
    free_temps(be, tmp, sizeof tmp / sizeof *tmp);
    return st;
}

/* cumsum: the input in the result's dtype (impl_func_cum_ops), then
 * ScanUtils.cuh's scan_dim: a floating-point axis holding every element
 * goes to cub's inclusive_scan, any other to ATen's own kernels (integer
 * sums are exact in any order; a 0-d tensor is copied, as cub copies a
 * single value). */
static bp_status cumsum(bp_backend_t *be, const bp_exec_t *x, int64_t outer, int64_t len,
                        int64_t inner, bp_error_t *err)
{
    const bp_buf_t *a = x->a;
    bp_dtype_t dt = x->out->dtype;
    bp_buf_t conv = {0}, scratch = {0};
    const void *in = NULL;
    int ax = 0;
    bp_status st = bp_axis_check(x->op->axis, a->ndim ? a->ndim : 1, &ax, err);
    bool whole = outer * inner == 1 && (BP_DTYPES_ARITH & BP_DTYPE_BIT(dt)) &&
                 bp_dtype_info(dt)->is_float;
    bool innermost = a->ndim > 0 && ax == a->ndim - 1 && outer * inner != 1;
    size_t bytes = whole ? bpk_scan_whole_scratch((int)dt, len) : 0;
    if (!st)
        st = as_dtype(be, a, dt, &conv, &in, err);
    if (!st && bytes)
        st = temp(be, &scratch, BP_U8, (int64_t)bytes, err);
    if (!st && whole)
        st = bp_cuda_finish(be, "bpk_scan_whole",
                            bpk_scan_whole(bp_cuda_stream(be), x->out->dev, in, (int)dt, len,
                                           scratch.dev),
                            err);
    else if (!st)
        st = bp_cuda_finish(be, "bpk_scan",
                            bpk_scan(bp_cuda_stream(be), x->out->dev, in, (int)dt, outer, len,
                                     inner, innermost,
                                     bp_scan_log_threads_x((uint32_t)(outer * inner),
                                                           (uint32_t)len)),
                            err);
    bp_buf_t *tmp[] = {&conv, &scratch};
    free_temps(be, tmp, sizeof tmp / sizeof *tmp);
    return st;
}

/* logsumexp: PyTorch's composite (ReduceOps.cpp logsumexp_out_impl; the
 * steps around the sum in logsumexp.cu) with its sum_out in Reduce.cuh's
 * order (bp_cuda_tree over the exponentials, in the result's dtype). */
static bp_status logsumexp(bp_backend_t *be, const bp_exec_t *x, int64_t outer, int64_t len,
                           int64_t inner, bp_error_t *err)
{
    bp_dtype_t dt = x->out->dtype;
    int64_t n = outer * len * inner, rows = outer * inner;
    bp_buf_t e = {0}, m = {0};
    void *stream = bp_cuda_stream(be);
    bp_status st = temp(be, &e, dt, n > 0 ? n : 1, err);
    if (!st)
        st = temp(be, &m, dt, rows > 0 ? rows : 1, err);
    if (!st)
        st = bp_cuda_finish(be, "bpk_lse_exp",
                            bpk_lse_exp(stream, e.dev, m.dev, x->a->dev, (int)x->a->dtype,
                                        (int)dt, outer, len, inner),
                            err);
    if (!st) {
        e.numel = (size_t)n;
        bp_exec_t y = *x;
        y.a = &e;
        st = bp_cuda_tree(be, &y, BPK_TREE_SUM, outer, len, inner, 0, err);
    }
    if (!st)
        st = bp_cuda_finish(be, "bpk_lse_finish",
                            bpk_lse_finish(stream, x->out->dev, m.dev, (int)dt, rows), err);
    if (e.dev)
        be->dev_free(be, &e);
    if (m.dev)
        be->dev_free(be, &m);
    return st;
}

bp_status bp_cuda_op_reduce(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    int64_t outer, len, inner;
    bp_status st = need_dev(x->a, "a", err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (!st)
        st = span(x, op->kind != BP_OP_CUMSUM, &outer, &len, &inner, err);
    if (st)
        return st;
    int red;
    double param = 0;
    switch (op->kind) {
    case BP_OP_MEAN:
        if (op->form == BP_FORM_DEFAULT) {
            /* MeanOps's factor: outputs / inputs in factor_t (double for
             * fp64, else float) */
            double f = x->out->dtype == BP_F64
                           ? (double)x->out->numel / (double)x->a->numel
                           : (double)((float)x->out->numel / (float)x->a->numel);
            return bp_cuda_tree(be, x, BPK_TREE_MEAN, outer, len, inner, f, err);
        }
        red = BPK_RED_MEAN;
        param = (double)((float)x->out->numel / (float)x->a->numel);
        break;
    case BP_OP_VAR:
        return bp_cuda_tree(be, x, BPK_TREE_VAR, outer, len, inner,
                            op->has_correction ? op->correction : 1.0, err);
    case BP_OP_PROD:
        return bp_cuda_tree(be, x, BPK_TREE_PROD, outer, len, inner, 0, err);
    case BP_OP_CUMSUM:
        return cumsum(be, x, outer, len, inner, err);
    case BP_OP_AMAX:
    case BP_OP_AMIN:
        /* min_values_stub / max_values_stub: Reduce.cuh's order, which
         * decides the sign of a zero result (bool: the plain scan) */
        if (x->a->dtype != BP_BOOL)
            return bp_cuda_tree(be, x, op->kind == BP_OP_AMAX ? BPK_TREE_AMAX : BPK_TREE_AMIN,
                                outer, len, inner, 0, err);
        red = op->kind == BP_OP_AMAX ? BPK_RED_AMAX : BPK_RED_AMIN;
        break;
    case BP_OP_LOGSUMEXP:
        return logsumexp(be, x, outer, len, inner, err);
    default:
        return bp_error_set(err, BP_EINTERNAL, "not a reduction: %s", bp_op_name(op->kind));
    }
    int rc = bpk_reduce(bp_cuda_stream(be), red, x->out->dev, (int)x->out->dtype, x->a->dev,
                        (int)x->a->dtype, outer, len, inner, param,
                        op->form == BP_FORM_PAIRWISE);
    return bp_cuda_finish(be, "bpk_reduce", rc, err);
}

/* layer_norm, rms_norm: operands of another dtype than the result's (an
 * explicit dtype:) are converted to it first, as `F.layer_norm(x.to(dt),
 * ..., w.to(dt), b.to(dt))`; the kernel reads every operand in the
 * result's dtype: ATen's (layer_norm.cu), or rms_norm's fixed formulation
 * (bpk_rms_norm_fixed, the same file). */
bp_status bp_cuda_op_norm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bool rms = x->op->kind == BP_OP_RMS_NORM;
    const bp_buf_t *a = rms ? x->a : x->inputs[0];
    const bp_buf_t *w = rms ? x->b : x->ninputs > 1 ? x->inputs[1] : NULL;
    const bp_buf_t *b = !rms && x->ninputs > 2 ? x->inputs[2] : NULL;
    bp_dtype_t dt = x->out->dtype;
    bp_status st = need_dev(a, "x", err);
    if (!st && w)
        st = need_dev(w, "weight", err);
    if (!st && b)
        st = need_dev(b, "bias", err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (st)
        return st;
    bp_buf_t ta = {0}, tw = {0}, tb = {0};
    const void *in = NULL, *win = NULL, *bin = NULL;
    st = as_dtype(be, a, dt, &ta, &in, err);
    if (!st && w)
        st = as_dtype(be, w, dt, &tw, &win, err);
    if (!st && b)
        st = as_dtype(be, b, dt, &tb, &bin, err);
    int64_t cols = a->ndim ? a->shape[a->ndim - 1] : 1;
    int64_t rows = cols ? (int64_t)a->numel / cols : 0;
    if (!st && rms && x->op->form == BP_FORM_FIXED)
        st = bp_cuda_finish(be, "bpk_rms_norm_fixed",
                            bpk_rms_norm_fixed(bp_cuda_stream(be), x->out->dev, in, win,
                                               (int)dt, rows, cols,
                                               bp_op_norm_eps(x->op, dt)),
                            err);
    else if (!st)
        st = bp_cuda_finish(be, "bpk_layer_norm",
                            bpk_layer_norm(bp_cuda_stream(be), x->out->dev, in, win, bin,
                                           (int)dt, rows, cols, bp_op_norm_eps(x->op, dt),
                                           rms),
                            err);
    bp_buf_t *tmp[] = {&ta, &tw, &tb};
    free_temps(be, tmp, sizeof tmp / sizeof *tmp);
    return st;
}

/* x * s widened to wdt (dtype dt's values; s 1: x.to(float)), laid out as
 * TensorIterator lays the result out (bp_strided_like) in the fresh temp
 * t; *m then describes it.  A non-overlapping dense x keeps its strides:
 * the elements are scaled where they lie, in memory order.  Another is
 * gathered in row-major order, scaled, and placed in the result's order
 * (its dimensions by decreasing stride). */
static bp_status scaled_like(bp_backend_t *be, bp_dtype_t dt, bp_dtype_t wdt,
                             const bp_cuda_mat_t *x, double s, bp_buf_t *t, bp_cuda_mat_t *m,
                             bp_error_t *err)
{
    void *stream = bp_cuda_stream(be);
    bp_strided_t lg;
    bp_strided_like(&x->geo, &lg);
    int64_t n = bp_strided_numel(&x->geo);
    size_t es = bp_dtype_info(dt)->size;
    bp_status st = temp(be, t, wdt, n, err);
    if (!st && bp_strided_is_dense(&x->geo)) {
        st = bp_cuda_finish(be, "bpk_scale_widen",
                            bpk_scale_widen(stream, t->dev,
                                            (const char *)x->base + (size_t)x->geo.offset * es,
                                            (int)dt, n, s),
                            err);
    } else if (!st) {
        bp_buf_t c = {0}, w = {0};
        if (!(st = temp(be, &c, dt, n, err)) && !(st = temp(be, &w, wdt, n, err)) &&
            !(st = bp_cuda_copy_view(be, dt, x->base, &x->geo, c.dev, err)) &&
            !(st = bp_cuda_finish(be, "bpk_scale_widen",
                                  bpk_scale_widen(stream, w.dev, c.dev, (int)dt, n, s), err))) {
            /* w row-major; t in lg's order: w read with its own strides
             * through lg's dimensions, outermost (largest stride) first */
            bp_strided_t wg, v = {.ndim = lg.ndim};
            bp_strided_contiguous(lg.ndim, lg.shape, &wg);
            int perm[BP_MAXDIM];
            for (int d = 0; d < lg.ndim; d++) {
                int at = d;
                while (at > 0 && lg.strides[perm[at - 1]] < lg.strides[d]) {
                    perm[at] = perm[at - 1];
                    at--;
                }
                perm[at] = d;
            }
            for (int d = 0; d < lg.ndim; d++) {
                v.shape[d] = lg.shape[perm[d]];
                v.strides[d] = wg.strides[perm[d]];
            }
            st = bp_cuda_copy_view(be, wdt, w.dev, &v, t->dev, err);
        }
        bp_buf_t *tmp[] = {&c, &w};
        free_temps(be, tmp, 2);
    }
    m->base = t->dev;
    m->geo = lg;
    return st;
}

/* Input k of sdpa (q, k, v) as PyTorch holds it: its view; one of another
 * dtype than the result is converted into it first (contiguous). */
static bp_status sdpa_input(bp_backend_t *be, const bp_exec_t *x, int k, bp_dtype_t dt,
                            bp_buf_t *t, bp_cuda_mat_t *m, bp_error_t *err)
{
    static const char *const names[3] = {"q", "k", "v"};
    const bp_buf_t *b = x->inputs[k];
    bp_status st = bp_cuda_view_of(x, 2 + k, b, names[k], m, err);
    if (st || b->dtype == dt)
        return st;
    const void *in = NULL;
    if (m->geo.ndim && !bp_strided_is_contiguous(&m->geo))
        return bp_error_set(err, BP_EINPUT,
                            "sdpa's %s is a non-contiguous view of dtype %s and the result's "
                            "dtype is %s: converting a view in its layout is not modelled on "
                            "cuda (drop the dtype:, or make %s contiguous first)",
                            names[k], bp_dtype_name(b->dtype), bp_dtype_name(dt), names[k]);
    if (!(st = as_dtype(be, b, dt, t, &in, err))) {
        m->base = (void *)in;
        bp_strided_contiguous(b->ndim, b->shape, &m->geo);
    }
    return st;
}

bp_status bp_cuda_op_sdpa(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = need_dev(x->out, "out", err);
    if (st)
        return st;
    bp_dtype_t dt = x->out->dtype, wdt = dt == BP_F64 ? BP_F64 : BP_F32;
    bp_buf_t tq = {0}, tk = {0}, tv = {0};
    bp_buf_t qw = {0}, kw = {0}, vw = {0}, sc = {0}, p = {0}, o = {0};
    bp_cuda_mat_t q, k, v, qs, kts, vs;
    if ((st = sdpa_input(be, x, 0, dt, &tq, &q, err)) ||
        (st = sdpa_input(be, x, 1, dt, &tk, &k, err)) ||
        (st = sdpa_input(be, x, 2, dt, &tv, &v, err)))
        goto done;
    int nd = q.geo.ndim;
    if (nd < 2 || k.geo.ndim != nd || v.geo.ndim != nd) {
        st = bp_error_set(err, BP_EINPUT, "sdpa needs q, k, v of the same rank, at least 2");
        goto done;
    }
    int64_t L = q.geo.shape[nd - 2], E = q.geo.shape[nd - 1], S = k.geo.shape[nd - 2],
            Ev = v.geo.shape[nd - 1];
    int64_t B = L * E > 0 ? bp_strided_numel(&q.geo) / (L * E) : 0;
    double s = sqrt(fabs(bp_op_sdpa_scale(x->op, E)));
    double sq = x->op->has_scale && x->op->scale < 0 ? -s : s;
    void *stream = bp_cuda_stream(be);
    /* the math path: q * sqrt(scale) and k.transpose(-2, -1) * sqrt(scale)
     * (each laid out as its operand is), v itself (x.to(float) for bf16
     * and fp16); scores = q k^T (matmul), the mask, the softmax, p v */
    bp_cuda_mat_t kt = k;
    kt.geo.shape[nd - 2] = k.geo.shape[nd - 1];
    kt.geo.shape[nd - 1] = k.geo.shape[nd - 2];
    kt.geo.strides[nd - 2] = k.geo.strides[nd - 1];
    kt.geo.strides[nd - 1] = k.geo.strides[nd - 2];
    vs = v;
    int64_t ssh[BP_MAXDIM];
    memcpy(ssh, q.geo.shape, sizeof(int64_t) * (size_t)nd);
    ssh[nd - 1] = S;
    bp_cuda_mat_t pm = {0};
    if (!(st = scaled_like(be, dt, wdt, &q, sq, &qw, &qs, err)) &&
        !(st = scaled_like(be, dt, wdt, &kt, s, &kw, &kts, err)) &&
        !(st = dt == wdt ? BP_OK : scaled_like(be, dt, wdt, &v, 1.0, &vw, &vs, err)) &&
        !(st = temp(be, &sc, wdt, B * L * S, err)) && !(st = temp(be, &p, wdt, B * L * S, err)) &&
        !(st = temp(be, &o, wdt, B * L * Ev, err)) &&
        !(st = bp_cuda_matmul_nd(be, wdt, qs, kts, sc.dev, err)) &&
        !(st = x->op->is_causal
                   ? bp_cuda_finish(be, "bpk_sdpa_mask",
                                    bpk_sdpa_mask(stream, sc.dev, wdt == BP_F64, B, L, S), err)
                   : BP_OK) &&
        !(st = bp_cuda_finish(be, "bpk_softmax",
                              bpk_softmax(stream, p.dev, sc.dev, (int)wdt, B * L, S, 1, 0),
                              err)) &&
        !(st = bp_cuda_finish(be, "bpk_sdpa_safe",
                              bpk_sdpa_safe(stream, p.dev, sc.dev, wdt == BP_F64, B * L, S),
                              err))) {
        pm.base = p.dev;
        bp_strided_contiguous(nd, ssh, &pm.geo);
        if (!(st = bp_cuda_matmul_nd(be, wdt, pm, vs, o.dev, err)))
            st = bp_cuda_finish(be, "bpk_cast",
                                bpk_cast(stream, x->out->dev, (int)dt, o.dev, (int)wdt,
                                         B * L * Ev),
                                err);
    }
done:;
    bp_buf_t *tmp[] = {&tq, &tk, &tv, &qw, &kw, &vw, &sc, &p, &o};
    free_temps(be, tmp, sizeof tmp / sizeof *tmp);
    return st;
}
