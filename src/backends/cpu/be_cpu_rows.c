/* Reductions along an axis on the CPU, as ATen's CPU kernels compute them
 * (PyTorch 2.x; what is pinned instead is said where it is).
 *
 * softmax, log_softmax (native/cpu/SoftMaxKernel.cpp, LogSoftmaxKernelImpl.h;
 *   registered for AVX-512 too, so V is the capability's float lanes):
 *   - last axis, fp32/fp64 (_vec_softmax_lastdim, _vec_log_softmax_lastdim):
 *     m = reduce_all(max), e = exp(x - m) through SLEEF's vector exp for
 *     every element; softmax: s = reduce_all(+) of e, out = e * (1 / s);
 *     log_softmax: s = map_reduce_all of e, out = (x - m) - log(s).
 *     reduce_all keeps V lane accumulators (lane k takes x[k], x[k + V],
 *     ...; a partial last register only its first lanes), then folds them
 *     in a butterfly (lanes V/2 apart, then V/4, ... : vec_reduce_all's
 *     shuffles); fewer than V values are folded one by one.
 *   - last axis, bf16/fp16 softmax: values widened into a float buffer;
 *     the max over whole 2V blocks in V lanes, butterfly, then the tail
 *     one by one; the sum over whole V blocks of vector exp in V lanes from
 *     0, butterfly, then the tail with libm's expf one by one; out =
 *     dt(e * (1 / s)).  log_softmax: reduce_all over bf16 in float (two
 *     V-lane halves, combined, butterfly; under 2V values sequential), the
 *     sum stored in the dtype, its log in the dtype, out = dt((x - m) - ls).
 *   - other axes (_vec_softmax, _vec_logsoftmax): softmax per position of
 *     the inner dimensions, V (bf16/fp16: 2V) positions at a time while
 *     they fit: max, then s = 0 + e_0 + e_1 ... with vector exp, out = e / s;
 *     the positions left over take libm's expf (bf16/fp16: the float e
 *     summed, e rounded to the dtype before the division).  log_softmax in chunks of CHUNK positions
 *     (128 KiB / len / sizeof, a multiple of the register): max from -inf,
 *     sum from 0, vector exp for the chunk's whole registers, libm for its
 *     tail, out = (x - m) - log(s).
 *   - formulation fixed (the layer stack's and invariance's), any axis: in
 *     opmath, m = the row's maximum, s = exp(x - m) summed left to right
 *     from +0, softmax exp(x - m) / s (a division), log_softmax (x - m) -
 *     log(s); exp and log SLEEF's scalar build (u10) for every element.
 * mean: the sum in ATen's CPU order (be_cpu_sum.c; bf16/fp16 summed in
 *   float, as mean_out asks sum for a float result), then sum / n in float
 *   (div_), rounded to the dtype; `sequential` and `pairwise` sum in those
 *   pinned orders instead.
 * var (ReduceOps.cpp std_var_out): one output element of fp32/fp64
 *   (std_var_all_cpu): the mean as above, then sum (x - mean)^2 in double
 *   left to right, / max(0, n - correction); otherwise Welford in double
 *   (WelfordOps: mean += delta / n, m2 += delta * (x - mean), not fused:
 *   PyTorch 2.11's x86 build rounds the product, tests/refs/cpu_open_cases.py).
 * amax, amin: exact, NaN if any element is NaN (the first); which zero of
 *   +0 and -0 survives as ATen's order decides it, see minmax_line.
 * logsumexp (ReduceOps.cpp logsumexp_out_impl): m = amax (an infinite m
 *   taken as 0, in x - m as well: masked_fill_ writes through the view),
 *   exp(x - m), its sum in the dtype (sum_out: cascade_sum of that dtype,
 *   bf16/fp16 read as float register halves, be_cpu_sum.c), log, + m,
 *   each step rounded to the dtype.
 * prod (ReduceOpsKernel.cpp prod_kernel_impl, binary_kernel_reduce_vec):
 *   in the dtype itself (bf16/fp16 products rounded to it one by one),
 *   a contiguous row in four registers of V lanes (the AVX2 build: V = 8
 *   floats, 4 doubles, 16 bf16/fp16; REGISTER_DISPATCH only), see prod_row;
 *   integers in int64, wrapping (exact whatever the order).
 * cumsum (ReduceOpsKernel.cpp cumsum_cpu_kernel): left to right from 0 in
 *   acc_type<T, false>: double for fp32/fp64, float for bf16/fp16, int64;
 *   a 0-d tensor is copied (impl_func_cum_ops' fill_: -0.0 stays). */
#include "be_cpu_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rnd(bool f32, double v)
{
    return f32 ? (double)(float)v : v;
}

bp_status bp_cpu_span(const bp_exec_t *x, bool all, bp_cpu_span_t *s, bp_error_t *err)
{
    const bp_buf_t *a = x->a ? x->a : (x->ninputs ? x->inputs[0] : NULL);
    if (!a)
        return bp_error_set(err, BP_EINPUT, "%s needs a tensor operand",
                            bp_op_name(x->op->kind));
    s->outer = 1;
    s->inner = 1;
    s->len = a->numel;
    s->lastdim = true;
    if (!x->op->has_axis && all)
        return BP_OK;
    int ax;
    if (!bp_axis_norm(x->op->axis, a->ndim ? a->ndim : 1, &ax))
        return bp_error_set(err, BP_EINPUT, "%s axis %d out of range",
                            bp_op_name(x->op->kind), x->op->axis);
    if (a->ndim == 0)
        return BP_OK;
    s->lastdim = ax == a->ndim - 1;
    s->outer = 1;
    for (int d = 0; d < ax; d++)
        s->outer *= (size_t)a->shape[d];
    s->len = (size_t)a->shape[ax];
    for (int d = ax + 1; d < a->ndim; d++)
        s->inner *= (size_t)a->shape[d];
    return BP_OK;
}

/* ---- ATen's vector reductions (cpu/vec/functional_base.h) ---- */

enum { RED_ADD, RED_MAX };

/* vec::maximum: NaN if either is; else _mm256_max_ps (b on ties). */
static double vmax(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? a : b;
}

static double fun(int op, bool f32, double a, double b)
{
    return op == RED_ADD ? rnd(f32, a + b) : vmax(a, b);
}

/* vec_reduce_all of a full register: for float the AVX2/AVX-512 butterfly
 * (VecReduceAllSIMD<float>); double, and ATen's DEFAULT build, fold the
 * lanes one by one. */
static double fold(const bp_cpu_t *c, int op, bool f32, double *acc, int V)
{
    if (!c->simd || !f32) {
        double r = acc[0];
        for (int k = 1; k < V; k++)
            r = fun(op, f32, r, acc[k]);
        return r;
    }
    double t[16];
    for (int off = V / 2; off > 0; off /= 2) {
        for (int k = 0; k < V; k++)
            t[k] = fun(op, f32, acc[k], acc[k ^ off]);
        memcpy(acc, t, (size_t)V * sizeof *acc);
    }
    return acc[0];
}

static double seq(int op, bool f32, const double *d, int64_t n)
{
    double r = n ? d[0] : 0;
    for (int64_t i = 1; i < n; i++)
        r = fun(op, f32, r, d[i]);
    return r;
}

/* vec::reduce_all / map_reduce_all over n values (already mapped). */
static double reduce_all(const bp_cpu_t *c, int op, bool f32, const double *d,
                         int64_t n, int V)
{
    if (n < V)
        return seq(op, f32, d, n);
    double acc[16];
    for (int k = 0; k < V; k++)
        acc[k] = d[k];
    int64_t i = V;
    for (; i < n - n % V; i += V)
        for (int k = 0; k < V; k++)
            acc[k] = fun(op, f32, acc[k], d[i + k]);
    for (int k = 0; i + k < n; k++)
        acc[k] = fun(op, f32, acc[k], d[i + k]);
    return fold(c, op, f32, acc, V);
}

/* The same over bf16/fp16 values in float (functional_bfloat16.h): two
 * V-lane halves of a 2V register. */
static double reduce_all_lp(const bp_cpu_t *c, int op, const double *d, int64_t n, int V)
{
    double a0[16] = {0}, a1[16] = {0};
    if (n < 2 * V) {
        for (int k = 0; k < V && k < n; k++)
            a0[k] = d[k];
        if (n <= V)
            return seq(op, true, a0, n);
        for (int k = 0; V + k < n; k++)
            a0[k] = fun(op, true, a0[k], d[V + k]);
        return seq(op, true, a0, V);
    }
    for (int k = 0; k < V; k++) {
        a0[k] = d[k];
        a1[k] = d[V + k];
    }
    int64_t i = 2 * V;
    for (; i < n - n % (2 * V); i += 2 * V)
        for (int k = 0; k < V; k++) {
            a0[k] = fun(op, true, a0[k], d[i + k]);
            a1[k] = fun(op, true, a1[k], d[i + V + k]);
        }
    if (n - i > V) {
        for (int k = 0; k < V; k++)
            a0[k] = fun(op, true, a0[k], d[i + k]);
        for (int k = 0; i + V + k < n; k++)
            a1[k] = fun(op, true, a1[k], d[i + V + k]);
    } else {
        for (int k = 0; i + k < n; k++)
            a0[k] = fun(op, true, a0[k], d[i + k]);
    }
    for (int k = 0; k < V; k++)
        a0[k] = fun(op, true, a0[k], a1[k]);
    return fold(c, op, true, a0, V);
}

/* SLEEF's vector exp or log (the configured library) over v[0..n). */
static void vmap(const bp_cpu_t *c, bp_op_kind_t k, bool f32, double *v, size_t n)
{
    if (!n)
        return;
    if (!f32) {
        bp_cpu_map_f64(c, k, v, n);
        return;
    }
    float *t = malloc(n * sizeof *t);
    if (!t) { /* keeps going in libm rather than failing: never reached */
        for (size_t i = 0; i < n; i++)
            v[i] = k == BP_OP_EXP ? expf((float)v[i]) : logf((float)v[i]);
        return;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = (float)v[i];
    bp_cpu_map_f32(c, k, t, n);
    for (size_t i = 0; i < n; i++)
        v[i] = t[i];
    free(t);
}

/* libm's exp in opmath (std::exp of a float is expf). */
static double sexp(bool f32, double v)
{
    return f32 ? (double)expf((float)v) : exp(v);
}

static void softmax_lastdim(const bp_cpu_t *c, bool log, bp_dtype_t dt, const double *x,
                            int64_t n, double *o)
{
    bool f32 = dt != BP_F64, lp = dt == BP_BF16 || dt == BP_F16;
    int V = c->vec_bytes / (f32 ? 4 : 8);
    double *e = o; /* e is written where the result goes */
    if (!lp || log) {
        double m = lp ? reduce_all_lp(c, RED_MAX, x, n, V)
                      : reduce_all(c, RED_MAX, f32, x, n, V);
        for (int64_t i = 0; i < n; i++)
            e[i] = rnd(f32, x[i] - m);
        vmap(c, BP_OP_EXP, f32, e, (size_t)n);
        double s = lp ? reduce_all_lp(c, RED_ADD, e, n, V)
                      : reduce_all(c, RED_ADD, f32, e, n, V);
        if (log) {
            s = lp ? bp_cpu_round(dt, s) : s; /* tmp_sum_scalar is scalar_t */
            vmap(c, BP_OP_LOG, f32, &s, 1);
            s = bp_cpu_round(dt, s);
            for (int64_t i = 0; i < n; i++)
                o[i] = rnd(f32, rnd(f32, x[i] - m) - s);
            return;
        }
        double r = rnd(f32, 1.0 / s);
        for (int64_t i = 0; i < n; i++)
            o[i] = rnd(f32, e[i] * r);
        return;
    }
    /* bf16/fp16 softmax: _vec_softmax_lastdim for reduced floats. */
    double acc[16];
    for (int k = 0; k < V; k++)
        acc[k] = -INFINITY;
    int64_t d = 0;
    for (; d < n - n % (2 * V); d += 2 * V)
        for (int k = 0; k < 2 * V; k++)
            acc[k % V] = vmax(acc[k % V], x[d + k]);
    double m = fold(c, RED_MAX, true, acc, V);
    for (; d < n; d++)
        m = m < x[d] ? x[d] : m;
    int64_t nv = n - n % V;
    for (int64_t i = 0; i < nv; i++)
        e[i] = rnd(true, x[i] - m);
    vmap(c, BP_OP_EXP, true, e, (size_t)nv);
    for (int k = 0; k < V; k++)
        acc[k] = 0;
    for (int64_t i = 0; i < nv; i++)
        acc[i % V] = rnd(true, acc[i % V] + e[i]);
    double s = fold(c, RED_ADD, true, acc, V);
    for (int64_t i = nv; i < n; i++) {
        e[i] = sexp(true, rnd(true, x[i] - m));
        s = rnd(true, s + e[i]);
    }
    double r = rnd(true, 1.0 / s);
    for (int64_t i = 0; i < n; i++)
        o[i] = rnd(true, e[i] * r);
}

static void softmax_inner(const bp_cpu_t *c, bp_dtype_t dt, const double *x,
                          const bp_cpu_span_t *s, double *o)
{
    bool f32 = dt != BP_F64, lp = dt == BP_BF16 || dt == BP_F16;
    size_t V = (size_t)c->vec_bytes / (f32 ? 4 : 8) * (lp ? 2 : 1), len = s->len;
    size_t inner = s->inner;
    double *e = malloc((len ? len : 1) * sizeof *e);
    if (!e)
        return;
    for (size_t ob = 0; ob < s->outer; ob++)
        for (size_t i = 0; i < inner; i++) {
            const double *xi = x + ob * len * inner + i;
            double *oi = o + ob * len * inner + i;
            bool vec = i < inner - inner % V;
            double m = xi[0];
            for (size_t d = 1; d < len; d++)
                m = vec ? vmax(m, xi[d * inner]) : (m < xi[d * inner] ? xi[d * inner] : m);
            for (size_t d = 0; d < len; d++)
                e[d] = rnd(f32, xi[d * inner] - m);
            if (vec)
                vmap(c, BP_OP_EXP, f32, e, len);
            double sum = 0;
            for (size_t d = 0; d < len; d++) {
                if (!vec)
                    e[d] = sexp(f32, e[d]);
                sum = rnd(f32, sum + e[d]);
                /* bf16/fp16 tail: the float exp is summed, the dtype's
                 * rounding of it (stored in the output) is divided */
                if (!vec && lp)
                    e[d] = bp_cpu_round(dt, e[d]);
            }
            for (size_t d = 0; d < len; d++)
                oi[d * inner] = rnd(f32, e[d] / sum);
        }
    free(e);
}

static void log_softmax_inner(const bp_cpu_t *c, bp_dtype_t dt, const double *x,
                              const bp_cpu_span_t *s, double *o)
{
    bool f32 = dt != BP_F64, lp = dt == BP_BF16 || dt == BP_F16;
    size_t es = bp_dtype_info(dt)->size, len = s->len, inner = s->inner;
    size_t V = (size_t)c->vec_bytes / (f32 ? 4 : 8) * (lp ? 2 : 1);
    size_t chunk = (131072 / (len ? len : 1) / es);
    if (chunk < V)
        chunk = V;
    chunk = chunk / V * V;
    if (chunk > inner)
        chunk = inner;
    double *e = malloc((len ? len : 1) * sizeof *e);
    if (!e || !chunk) {
        free(e);
        return;
    }
    for (size_t ob = 0; ob < s->outer; ob++)
        for (size_t i = 0; i < inner; i++) {
            size_t start = i / chunk * chunk, size = inner - start < chunk ? inner - start : chunk;
            bool vec = i - start < size - size % V;
            const double *xi = x + ob * len * inner + i;
            double *oi = o + ob * len * inner + i;
            double m = -INFINITY, sum = 0;
            for (size_t d = 0; d < len; d++)
                m = xi[d * inner] > m ? xi[d * inner] : m;
            for (size_t d = 0; d < len; d++)
                e[d] = rnd(f32, xi[d * inner] - m);
            if (vec)
                vmap(c, BP_OP_EXP, f32, e, len);
            for (size_t d = 0; d < len; d++)
                sum = rnd(f32, sum + (vec ? e[d] : sexp(f32, e[d])));
            vmap(c, BP_OP_LOG, f32, &sum, 1);
            for (size_t d = 0; d < len; d++)
                oi[d * inner] = rnd(f32, rnd(f32, xi[d * inner] - m) - sum);
        }
    free(e);
}

/* The fixed formulation over the rows of x (opmath values). */
static void softmax_fixed(const bp_cpu_t *c, bool log, bool f32, const double *x,
                          const bp_cpu_span_t *s, double *o)
{
    size_t n = s->len, st = s->inner;
    for (size_t ob = 0; ob < s->outer; ob++)
        for (size_t i = 0; i < st; i++) {
            const double *xi = x + ob * n * st + i;
            double *oi = o + ob * n * st + i;
            if (!f32) {
                double m = -INFINITY, sum = 0.0;
                for (size_t d = 0; d < n; d++)
                    m = xi[d * st] > m ? xi[d * st] : m;
                for (size_t d = 0; d < n; d++) { /* each exp kept in o: computed once */
                    oi[d * st] = bp_cpu_scalar(c, BP_OP_EXP, xi[d * st] - m);
                    sum = sum + oi[d * st];
                }
                double ls = log ? bp_cpu_scalar(c, BP_OP_LOG, sum) : 0.0;
                for (size_t d = 0; d < n; d++)
                    oi[d * st] = log ? (xi[d * st] - m) - ls : oi[d * st] / sum;
                continue;
            }
            float m = -INFINITY, sum = 0.0f;
            for (size_t d = 0; d < n; d++) {
                float v = (float)xi[d * st];
                m = v > m ? v : m;
            }
            for (size_t d = 0; d < n; d++) { /* each exp kept in o: computed once */
                float e = bp_cpu_scalarf(c, BP_OP_EXP, (float)xi[d * st] - m);
                oi[d * st] = e;
                sum = sum + e;
            }
            float ls = log ? bp_cpu_scalarf(c, BP_OP_LOG, sum) : 0.0f;
            for (size_t d = 0; d < n; d++) {
                float v = (float)xi[d * st];
                oi[d * st] = log ? (v - m) - ls : (float)oi[d * st] / sum;
            }
        }
}

void bp_cpu_softmax_rows(const bp_cpu_t *c, bool log, bp_dtype_t dt, const double *x,
                         const bp_cpu_span_t *s, double *out)
{
    if (s->inner == 1 && s->outer * s->len > 0 && s->len > 0 && s->lastdim) {
        for (size_t r = 0; r < s->outer; r++)
            softmax_lastdim(c, log, dt, x + r * s->len, (int64_t)s->len, out + r * s->len);
        return;
    }
    if (log)
        log_softmax_inner(c, dt, x, s, out);
    else
        softmax_inner(c, dt, x, s, out);
}

bp_status bp_cpu_op_softmax(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    bp_cpu_span_t s;
    bp_status st = bp_cpu_span(x, false, &s, err);
    if (st)
        return st;
    bp_dtype_t dt = x->out->dtype;
    double *v, *o = malloc((x->out->numel ? x->out->numel : 1) * sizeof *o);
    if (!o)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if ((st = bp_cpu_expand(x->a, x->a, dt, &v, err))) {
        free(o);
        return st;
    }
    if (x->op->form == BP_FORM_FIXED)
        softmax_fixed(c, x->op->kind == BP_OP_LOG_SOFTMAX, dt != BP_F64, v, &s, o);
    else
        bp_cpu_softmax_rows(c, x->op->kind == BP_OP_LOG_SOFTMAX, dt, v, &s, o);
    for (size_t i = 0; i < x->out->numel; i++)
        bp_cpu_store(x->out, i, o[i]);
    free(v);
    free(o);
    return BP_OK;
}

/* ---- mean, var, amax, amin, logsumexp, prod ---- */

/* a's elements as integers of the result's dtype (a float converted as a
 * cast to that dtype does). */
static bp_status expand_int(const bp_exec_t *x, int64_t **iv, bp_error_t *err)
{
    bp_buf_t as = *x->a;
    as.dtype = x->out->dtype;
    return bp_cpu_expand_i64(x->a, &as, iv, err);
}

/* The sums over len of v per output in formulation f (opmath). */
static void sums(bp_form_t f, bool f32, const double *v, const bp_cpu_span_t *s,
                 double *out)
{
    if (f == BP_FORM_DEFAULT) {
        bp_cpu_cascade_sum(v, s->outer, s->len, s->inner, f32 ? BP_F32 : BP_F64, out);
        return;
    }
    double *row = malloc((s->len ? s->len : 1) * sizeof *row);
    if (!row)
        return;
    for (size_t o = 0; o < s->outer; o++)
        for (size_t i = 0; i < s->inner; i++) {
            for (size_t t = 0; t < s->len; t++)
                row[t] = v[(o * s->len + t) * s->inner + i];
            out[o * s->inner + i] =
                bp_cpu_sum_vals(row, s->len, f == BP_FORM_PAIRWISE, f32);
        }
    free(row);
}

/* op's fold of n values `stride` apart from init in binary_kernel_reduce_vec's
 * order (native/cpu/Reduce.h): a contiguous row (stride 1) of at least 4V
 * values in four V-lane accumulators (acc[j] = x[jV..jV+V), op'd with each
 * further block of 4V in the lanes), folded as (acc0 acc1)(acc2 acc3), its
 * lanes in order, then the tail one by one; otherwise left to right.  op's
 * `vec` says whether a vector lane (vop) or the scalar op combines. */
typedef double (*fold_op)(const void *ctx, bool vec, double acc, double e);

static double reduce_vec_row(fold_op op, const void *ctx, size_t V, const double *x,
                             size_t stride, size_t n, double init)
{
    double out = init;
    size_t k = 0;
    if (stride == 1 && n >= 4 * V) {
        size_t count = n / (4 * V);
        double acc[4][16];
        for (size_t j = 0; j < 4; j++)
            for (size_t l = 0; l < V; l++)
                acc[j][l] = x[j * V + l];
        for (size_t b = 1; b < count; b++)
            for (size_t j = 0; j < 4; j++)
                for (size_t l = 0; l < V; l++)
                    acc[j][l] = op(ctx, true, acc[j][l], x[(b * 4 + j) * V + l]);
        for (size_t l = 0; l < V; l++)
            acc[0][l] = op(ctx, true, op(ctx, true, acc[0][l], acc[1][l]),
                           op(ctx, true, acc[2][l], acc[3][l]));
        double f = acc[0][0];
        for (size_t l = 1; l < V; l++)
            f = op(ctx, false, f, acc[0][l]);
        out = op(ctx, false, out, f);
        k = count * 4 * V;
    }
    for (; k < n; k++)
        out = op(ctx, false, out, x[k * stride]);
    return out;
}

/* The value kept by max (min) of acc and e, both not NaN, on a tie (equal
 * values: +0 and -0) the one that vector instructions and std::max (std::min)
 * keep: vmaxps/vminps give their second operand e, std::max(acc, e) its
 * first, acc. */
static double keep(const void *max_p, bool vec, double acc, double e)
{
    bool max = *(const bool *)max_p;
    if (vec)
        return (max ? acc > e : acc < e) ? acc : e;
    return (max ? acc < e : e < acc) ? e : acc;
}

/* amax/amin of n values `stride` apart, none NaN, in binary_kernel_reduce_vec's
 * order (native/cpu/Reduce.h, the AVX2 build: REGISTER_DISPATCH only): which
 * of +0 and -0 survives depends on it.  A contiguous row of at least 4V
 * values in four V-lane registers, vec::maximum (vmaxps) with each further
 * block of 4V, folded as (acc0 acc1)(acc2 acc3), then its lanes and the tail
 * by max_impl (std::max) one by one from the output's -inf.  A column
 * (stride > 1) among the first inner / 4V * 4V of the `inner` columns is
 * reduced in a lane of vectorized_outer_reduction: vec::maximum down the
 * column from its first value; the other columns, and shorter rows, by
 * std::max from -inf. */
static double minmax_line(bool max, size_t V, const double *x, size_t stride, size_t n,
                          bool column_lane)
{
    double init = max ? -INFINITY : INFINITY;
    if (column_lane && n) {
        double out = x[0];
        for (size_t k = 1; k < n; k++)
            out = keep(&max, true, out, x[k * stride]);
        return out;
    }
    return reduce_vec_row(keep, &max, V, x, stride, n, init);
}

static void reduce_minmax(const bp_exec_t *x, const bp_cpu_span_t *s, const double *v,
                          const int64_t *iv, bool max)
{
    size_t V = bp_cpu_lanes(x->out->dtype, BP_CPU_VEC_BYTES);
    size_t lane_cols = s->inner > 1 ? s->inner / (4 * V) * (4 * V) : 0;
    for (size_t o = 0; o < s->outer; o++)
        for (size_t i = 0; i < s->inner; i++) {
            size_t j = o * s->inner + i;
            if (iv) {
                int64_t r = max ? INT64_MIN : INT64_MAX;
                for (size_t t = 0; t < s->len; t++) {
                    int64_t e = iv[(o * s->len + t) * s->inner + i];
                    r = max ? (e > r ? e : r) : (e < r ? e : r);
                }
                bp_cpu_store_i64(x->out, j, r);
                continue;
            }
            const double *line = v + o * s->len * s->inner + i;
            double r = NAN;
            size_t t = 0;
            while (t < s->len && !isnan(line[t * s->inner]))
                t++;
            if (t < s->len)
                r = line[t * s->inner]; /* NaN if any element is */
            else
                r = minmax_line(max, V, line, s->inner, s->len, i < lane_cols);
            bp_cpu_store(x->out, j, r);
        }
}

static double welford_var(const double *v, size_t stride, size_t n, double corr)
{
    double mean = 0, m2 = 0;
    for (size_t k = 0; k < n; k++) {
        double x = v[k * stride], delta = x - mean;
        mean = mean + delta / (double)(k + 1);
        m2 = m2 + delta * (x - mean); /* two roundings (PyTorch 2.11's build) */
    }
    double div = (double)n > corr ? (double)n - corr : 0;
    return m2 / div;
}

/* a * b in the dtype: the product of two values of dt is exact in double
 * (fp32: 48 bits), so one rounding; bf16/fp16 round every product to the
 * dtype (Vectorized<BFloat16>'s operator* and c10's scalar one alike). */
static double dmul(bp_dtype_t dt, double a, double b)
{
    return bp_cpu_round(dt, a * b);
}

/* prod of n values `stride` apart, in binary_kernel_reduce_vec's order
 * (native/cpu/Reduce.h): a contiguous row (stride 1) of at least 4V values
 * in four V-lane accumulators (acc[j] = x[jV..jV+V), times each further
 * block of 4V), folded as (acc0 acc1)(acc2 acc3), its lanes in order, then
 * the tail one by one; otherwise (shorter rows, columns) left to right
 * from 1 (vectorized_outer_reduction's columns start from the first row
 * and end times the output's 1: the same products). */
static double prod_op(const void *dt, bool vec, double acc, double e)
{
    (void)vec;
    return dmul(*(const bp_dtype_t *)dt, acc, e);
}

static double prod_row(bp_dtype_t dt, const double *x, size_t stride, size_t n)
{
    size_t V = dt == BP_F64 ? 4 : dt == BP_F32 ? 8 : 16;
    return reduce_vec_row(prod_op, &dt, V, x, stride, n, 1);
}

bp_status bp_cpu_op_reduce(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    const bp_op_t *op = x->op;
    bp_cpu_span_t s;
    bp_status st = bp_cpu_span(x, true, &s, err);
    if (st)
        return st;
    if (x->out->numel != s.outer * s.inner)
        return bp_error_set(err, BP_EINTERNAL, "%s output has %zu elements, not %zu",
                            bp_op_name(op->kind), x->out->numel, s.outer * s.inner);
    bp_dtype_t dt = x->out->dtype;
    bool isint = bp_dtype_is_int(dt), f32 = dt != BP_F64;
    size_t nout = x->out->numel;
    if (isint && (op->kind == BP_OP_AMAX || op->kind == BP_OP_AMIN || op->kind == BP_OP_PROD)) {
        int64_t *iv;
        if ((st = expand_int(x, &iv, err)))
            return st;
        if (op->kind == BP_OP_PROD)
            for (size_t o = 0; o < s.outer; o++)
                for (size_t i = 0; i < s.inner; i++) {
                    uint64_t p = 1;
                    for (size_t t = 0; t < s.len; t++)
                        p *= (uint64_t)iv[(o * s.len + t) * s.inner + i];
                    bp_cpu_store_i64(x->out, o * s.inner + i, (int64_t)p);
                }
        else
            reduce_minmax(x, &s, NULL, iv, op->kind == BP_OP_AMAX);
        free(iv);
        return BP_OK;
    }
    double *v, *r = malloc((nout ? nout : 1) * sizeof *r);
    if (!r)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    /* mean to fp16/bf16 sums the input as fp32, not cast to the result's
     * dtype first (ReduceOps.cpp mean_out's CPU branch: sum_out in Float,
     * div_, then to the dtype): mean(fp32 x, dtype=fp16) of 2^25 and -2^24
     * is -inf there, not inf + -inf.  Only PyTorch's own (default)
     * formulation: the others convert first, as every op given a dtype
     * does (mean(fp32 [-2^26, 2^26], dtype=fp16), sequential: NaN). */
    bp_dtype_t vdt = op->kind == BP_OP_MEAN && op->form == BP_FORM_DEFAULT &&
                             (dt == BP_F16 || dt == BP_BF16) ? BP_F32 : dt;
    if ((st = bp_cpu_expand(x->a, x->a, vdt, &v, err))) {
        free(r);
        return st;
    }
    double n = (double)s.len;
    switch (op->kind) {
    case BP_OP_AMAX:
    case BP_OP_AMIN:
        reduce_minmax(x, &s, v, NULL, op->kind == BP_OP_AMAX);
        goto done;
    case BP_OP_MEAN:
        sums(op->form, f32, v, &s, r);
        for (size_t j = 0; j < nout; j++)
            r[j] = rnd(f32, r[j] / rnd(f32, n));
        break;
    case BP_OP_VAR: {
        double corr = op->has_correction ? op->correction : 1.0;
        if (nout == 1 && (dt == BP_F32 || dt == BP_F64)) {
            double mean;
            bp_cpu_cascade_sum(v, 1, x->a->numel, 1, dt, &mean);
            mean = rnd(f32, mean / rnd(f32, (double)x->a->numel));
            double acc = 0;
            for (size_t k = 0; k < x->a->numel; k++)
                acc += (v[k] - mean) * (v[k] - mean);
            double div = (double)x->a->numel - corr;
            r[0] = acc / (div > 0 ? div : 0);
            break;
        }
        for (size_t o = 0; o < s.outer; o++)
            for (size_t i = 0; i < s.inner; i++)
                r[o * s.inner + i] =
                    welford_var(v + o * s.len * s.inner + i, s.inner, s.len, corr);
        break;
    }
    case BP_OP_LOGSUMEXP: {
        /* amax, masked to 0 where infinite; exp(x - m) in the dtype; sum;
         * log; + m. */
        double *m = malloc((nout ? nout : 1) * sizeof *m);
        if (!m) {
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t o = 0; o < s.outer; o++)
            for (size_t i = 0; i < s.inner; i++) {
                double mx = -INFINITY;
                for (size_t t = 0; t < s.len; t++) {
                    double e = v[(o * s.len + t) * s.inner + i];
                    mx = isnan(mx) || isnan(e) ? NAN : e > mx ? e : mx;
                }
                /* masked_fill_ on a view of the maxima: x - m uses the
                 * masked value too */
                m[o * s.inner + i] = isinf(mx) ? 0 : (s.len ? mx : 0);
                for (size_t t = 0; t < s.len; t++) {
                    double *e = &v[(o * s.len + t) * s.inner + i];
                    *e = bp_cpu_round(dt, *e - m[o * s.inner + i]);
                }
            }
        vmap(c, BP_OP_EXP, f32, v, x->a->numel);
        for (size_t k = 0; k < x->a->numel; k++)
            v[k] = bp_cpu_round(dt, v[k]);
        bp_cpu_cascade_sum(v, s.outer, s.len, s.inner, dt, r);
        for (size_t j = 0; j < nout; j++)
            r[j] = bp_cpu_round(dt, r[j]);
        vmap(c, BP_OP_LOG, f32, r, nout);
        for (size_t j = 0; j < nout; j++)
            r[j] = rnd(f32, bp_cpu_round(dt, r[j]) + m[j]);
        free(m);
        break;
    }
    case BP_OP_PROD:
        for (size_t o = 0; o < s.outer; o++)
            for (size_t i = 0; i < s.inner; i++)
                r[o * s.inner + i] =
                    prod_row(dt, v + o * s.len * s.inner + i, s.inner, s.len);
        break;
    default:
        st = bp_error_set(err, BP_EINTERNAL, "not a reduction: %s", bp_op_name(op->kind));
        goto done;
    }
    for (size_t j = 0; j < nout; j++)
        bp_cpu_store(x->out, j, r[j]);
done:
    free(v);
    free(r);
    return st;
}

bp_status bp_cpu_op_cumsum(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_cpu_span_t s;
    bp_status st = bp_cpu_span(x, false, &s, err);
    if (st)
        return st;
    bp_dtype_t dt = x->out->dtype;
    if (bp_dtype_is_int(dt)) {
        int64_t *iv;
        if ((st = expand_int(x, &iv, err)))
            return st;
        for (size_t o = 0; o < s.outer; o++)
            for (size_t i = 0; i < s.inner; i++) {
                uint64_t acc = 0;
                for (size_t t = 0; t < s.len; t++) {
                    size_t k = (o * s.len + t) * s.inner + i;
                    acc += (uint64_t)iv[k];
                    bp_cpu_store_i64(x->out, k, (int64_t)acc);
                }
            }
        free(iv);
        return BP_OK;
    }
    double *v;
    if ((st = bp_cpu_expand(x->a, x->a, dt, &v, err)))
        return st;
    bool facc = dt == BP_BF16 || dt == BP_F16; /* float; else double */
    if (x->a->ndim == 0) { /* impl_func_cum_ops: result.fill_(self), -0.0 kept */
        bp_cpu_store(x->out, 0, v[0]);
        free(v);
        return BP_OK;
    }
    for (size_t o = 0; o < s.outer; o++)
        for (size_t i = 0; i < s.inner; i++) {
            double acc = 0;
            for (size_t t = 0; t < s.len; t++) {
                size_t k = (o * s.len + t) * s.inner + i;
                acc = rnd(facc, acc + v[k]);
                bp_cpu_store(x->out, k, acc);
            }
        }
    free(v);
    return BP_OK;
}
