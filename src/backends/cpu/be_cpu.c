/* The CPU backend: PyTorch's CPU ATen kernels, bit for bit (see be_cpu.h
 * for the lane model; be_cpu_math.c for the transcendental functions and
 * pow; be_cpu_arith.c for arithmetic, arange, matmul and sum).
 *
 * This file holds the backend object, the helpers every op uses (operand
 * broadcasting and conversion, TensorIterator's inner-loop layout,
 * rounding and stores) and the ops that only move or convert values:
 * tensor literals, the counter-based generator, casts, neg, concat, slice
 * and rotate_half.  Conversions follow c10: float -> bf16/f16 rounds to
 * nearest even (dtype.h), double -> bf16/f16 goes through float (c10's
 * BFloat16 and Half are built from a float), int -> float rounds once,
 * float -> int truncates and gives x86's "integer indefinite" 0x80..0 for
 * NaN and out-of-range values, as cvttss2si/cvttsd2si do. */
#include "be_cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

#include "be_cpu_rows.h"
#include "layout.h"
#include "rng.h"
#include "rng_normal.h"

size_t bp_cpu_lanes(bp_dtype_t dt, int bytes)
{
    return (size_t)bytes / bp_dtype_info(dt)->size;
}

bool bp_cpu_opmath_f32(bp_dtype_t dt)
{
    return dt != BP_F64;
}

static int64_t to_i64(double v)
{
    if (isnan(v) || v >= 0x1p63 || v < -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

static int32_t to_i32(double v)
{
    if (isnan(v) || v >= 0x1p31 || v <= -0x1p31 - 1.0)
        return INT32_MIN;
    return (int32_t)v;
}

double bp_cpu_madd(bool fused, bool f32, double a, double b, double c)
{
    if (fused)
        return f32 ? (double)fmaf((float)a, (float)b, (float)c) : fma(a, b, c);
    return f32 ? (double)((float)((float)a * (float)b) + (float)c) : a * b + c;
}

double bp_cpu_round(bp_dtype_t dt, double v)
{
    switch (dt) {
    case BP_I64: return (double)to_i64(v);
    case BP_I32: return (double)to_i32(v);
    default: return bp_dtype_round(dt, v);
    }
}

void bp_cpu_store(bp_buf_t *out, size_t i, double v)
{
    uint64_t bits;
    switch (out->dtype) {
    case BP_F32:
    case BP_BF16:
    case BP_F16: /* through float, as bp_dtype_bits_from_double */
        bp_dtype_stf(out->dtype, out->data, i, (float)v);
        return;
    case BP_I64: bits = (uint64_t)to_i64(v); break;
    case BP_I32: bits = (uint32_t)to_i32(v); break;
    default: bits = bp_dtype_bits_from_double(out->dtype, v); break;
    }
    bp_dtype_store_bits(out->dtype, out->data, i, bits);
}

void bp_cpu_store_i64(bp_buf_t *out, size_t i, int64_t v)
{
    switch (out->dtype) {
    case BP_I64:
    case BP_I32: /* wraps: the store keeps the low 32 bits */
        bp_dtype_store_bits(out->dtype, out->data, i, (uint64_t)v);
        break;
    case BP_F32:
        bp_dtype_store_bits(out->dtype, out->data, i, bp_f32_bits((float)v));
        break;
    case BP_BF16:
        bp_dtype_store_bits(out->dtype, out->data, i,
                            bp_f32_to_bf16((float)v));
        break;
    case BP_F16:
        bp_dtype_store_bits(out->dtype, out->data, i, bp_f32_to_f16((float)v));
        break;
    case BP_F64:
        bp_dtype_store_bits(out->dtype, out->data, i, bp_f64_bits((double)v));
        break;
    default: /* bool: v != 0; fp8: through float, as c10's conversions */
        bp_dtype_store_bits(out->dtype, out->data, i,
                            bp_dtype_bits_from_double(out->dtype, (double)(float)v));
        break;
    }
}

static int64_t load_i64(const bp_buf_t *b, size_t i)
{
    uint64_t bits = bp_dtype_load_bits(b->dtype, b->data, i);
    if (b->dtype == BP_I32)
        return (int32_t)(uint32_t)bits;
    return (int64_t)bits;
}

/* Element i of b converted to dtype `as`, as a double. */
static double load_as(const bp_buf_t *b, size_t i, bp_dtype_t as)
{
    if (bp_dtype_is_int(b->dtype)) {
        int64_t x = load_i64(b, i);
        switch (as) {
        case BP_F32: return (float)x;
        case BP_BF16: return bp_bf16_to_f32(bp_f32_to_bf16((float)x));
        case BP_F16: return bp_f16_to_f32(bp_f32_to_f16((float)x));
        case BP_I32: return (double)(int32_t)(uint32_t)(uint64_t)x;
        default: return (double)x;
        }
    }
    double v = bp_buf_get(b, i);
    return b->dtype == as ? v : bp_cpu_round(as, v);
}

/* Strides (in elements) of src broadcast over out's dimensions: 0 where
 * src has no such dimension or has size 1 there. */
static bp_status bcast_strides(const bp_buf_t *src, const bp_buf_t *out,
                               int64_t *st, bp_error_t *err)
{
    if (bp_bcast_strides(src->ndim, src->shape, out->ndim, out->shape, st))
        return BP_OK;
    char a[96], b[96];
    bp_shape_format(src->ndim, src->shape, a, sizeof a);
    bp_shape_format(out->ndim, out->shape, b, sizeof b);
    return bp_error_set(err, BP_EINPUT,
                        "operand of shape %s does not broadcast to %s", a, b);
}

bp_status bp_cpu_walk_init(bp_cpu_walk_t *w, const bp_buf_t *src, const bp_buf_t *out,
                           bp_error_t *err)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    return bcast_strides(src, out, w->st, err);
}

bp_status bp_cpu_expand(const bp_buf_t *src, const bp_buf_t *out,
                        bp_dtype_t as, double **vals, bp_error_t *err)
{
    bp_cpu_walk_t w;
    bp_status s = bp_cpu_walk_init(&w, src, out, err);
    if (s)
        return s;
    double *v = malloc((out->numel ? out->numel : 1) * sizeof *v);
    if (!v)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if (src->numel == out->numel) /* as many elements: the same order */
        for (size_t i = 0; i < out->numel; i++)
            v[i] = load_as(src, i, as);
    else
        for (size_t i = 0; i < out->numel; i++, bp_cpu_walk_next(&w))
            v[i] = load_as(src, (size_t)w.pos, as);
    *vals = v;
    return BP_OK;
}

bp_status bp_cpu_expand_i64(const bp_buf_t *src, const bp_buf_t *out,
                            int64_t **vals, bp_error_t *err)
{
    bp_cpu_walk_t w;
    bp_status s = bp_cpu_walk_init(&w, src, out, err);
    if (s)
        return s;
    int64_t *v = malloc((out->numel ? out->numel : 1) * sizeof *v);
    if (!v)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    /* A float operand of an integer result converts as a cast does (x86's
     * truncation), never by its bits. */
    bool conv = !bp_dtype_is_int(src->dtype);
    for (size_t i = 0; i < out->numel; i++, bp_cpu_walk_next(&w)) {
        double f = conv ? bp_buf_get(src, (size_t)w.pos) : 0.0;
        v[i] = !conv                  ? load_i64(src, (size_t)w.pos)
               : out->dtype == BP_I32 ? to_i32(f)
                                      : to_i64(f);
    }
    *vals = v;
    return BP_OK;
}

bp_cpu_loop_t bp_cpu_loop(const bp_buf_t *out, const bp_buf_t *a,
                          const bp_buf_t *b)
{
    const bp_buf_t *ins[2] = {a, b};
    return bp_cpu_loop_n(out, ins, 2);
}

bp_cpu_loop_t bp_cpu_loop_n(const bp_buf_t *out, const bp_buf_t *const *ins, int count)
{
    bp_cpu_loop_t l = {1, true};
    int64_t st[BP_CPU_LOOP_MAXIN][BP_MAXDIM];
    int nin = 0;
    for (int k = 0; k < count && k < BP_CPU_LOOP_MAXIN; k++)
        if (ins[k] && bcast_strides(ins[k], out, st[nin], NULL) == BP_OK)
            nin++;
    if (out->ndim == 0)
        return l;
    /* TensorIterator's coalesce_dimensions, innermost first: (n, s) is the
     * merged inner dimension, extended while every operand's strides line
     * up; the output is contiguous. */
    int d = out->ndim - 1;
    size_t n = (size_t)out->shape[d];
    int64_t s[BP_CPU_LOOP_MAXIN];
    for (int k = 0; k < nin; k++)
        s[k] = st[k][d];
    for (d--; d >= 0; d--) {
        size_t m = (size_t)out->shape[d];
        if (m == 1)
            continue;
        if (n == 1) {
            n = m;
            for (int k = 0; k < nin; k++)
                s[k] = st[k][d];
            continue;
        }
        bool ok = true;
        for (int k = 0; k < nin; k++)
            ok = ok && s[k] * (int64_t)n == st[k][d];
        if (!ok)
            break;
        n *= m;
    }
    l.row = n;
    /* vectorized_loop runs when every input is contiguous along the inner
     * dimension, or exactly one of them is a broadcast scalar there. */
    int zero = 0, one = 0;
    for (int k = 0; k < nin; k++) {
        zero += s[k] == 0;
        one += s[k] == 1;
    }
    l.vec = one == nin || (zero == 1 && one == nin - 1) || n == 1;
    return l;
}

static bp_status need_tensor(const bp_buf_t *b, const char *what,
                             bp_error_t *err)
{
    if (!b || !b->data)
        return bp_error_set(err, BP_EINPUT, "%s must be a tensor", what);
    return BP_OK;
}

bp_status bp_cpu_op_tensor(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    (void)be;
    const bp_op_t *op = x->op;
    if (op->nvalues != x->out->numel && op->nvalues != 1)
        return bp_error_set(err, BP_EINPUT,
                            "%zu values for a tensor of %zu elements",
                            op->nvalues, x->out->numel);
    for (size_t i = 0; i < x->out->numel; i++)
        bp_cpu_store(x->out, i, op->values[op->nvalues == 1 ? 0 : i]);
    return BP_OK;
}

static bp_status op_load(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    return bp_op_load_host(x, err);
}

bp_status bp_cpu_op_uniform(bp_backend_t *be, const bp_exec_t *x,
                            bp_error_t *err)
{
    (void)be;
    (void)err;
    const bp_op_t *op = x->op;
    for (size_t i = 0; i < x->out->numel; i++)
        bp_cpu_store(x->out, i,
                     bp_rng_uniform(op->seed, op->stream, (uint64_t)i,
                                    (float)op->low, (float)op->high));
    return BP_OK;
}

/* randn, normal: the stream's double rounded once to the dtype (bf16 and
 * fp16 through float rounded to odd, which keeps that rounding single). */
static bp_status op_normal(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    (void)err;
    const bp_op_t *op = x->op;
    bp_dtype_t dt = x->out->dtype;
    for (size_t i = 0; i < x->out->numel; i++) {
        double v = bp_rng_normal(op->seed, op->stream, (uint64_t)i, op->mean, op->std);
        uint64_t bits = dt == BP_F64 ? bp_f64_bits(v)
                        : dt == BP_F32 ? bp_f32_bits((float)v)
                                       : bp_dtype_bits_from_double(dt, bp_normal_f32_odd(v));
        bp_dtype_store_bits(dt, x->out->data, i, bits);
    }
    return BP_OK;
}

/* Element i of src converted to out's dtype and stored at j. */
static void convert_one(const bp_buf_t *src, size_t i, bp_buf_t *out, size_t j)
{
    if (src->dtype == out->dtype) {
        bp_dtype_store_bits(out->dtype, out->data, j,
                            bp_dtype_load_bits(src->dtype, src->data, i));
        return;
    }
    if (bp_dtype_is_int(src->dtype))
        bp_cpu_store_i64(out, j, load_i64(src, i));
    else
        bp_cpu_store(out, j, bp_buf_get(src, i));
}

bp_status bp_cpu_op_cast(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_status s = need_tensor(x->a, "cast's input", err);
    if (s)
        return s;
    if (x->a->numel != x->out->numel)
        return bp_error_set(err, BP_EINTERNAL, "cast changes the size");
    size_t n = x->out->numel;
    const float *f = x->a->data;
    uint16_t *h = x->out->data;
    /* The common casts in typed loops (the same conversions as
     * convert_one's, without its per-element dispatch). */
    if (x->a->dtype == x->out->dtype && n)
        memcpy(x->out->data, x->a->data, n * bp_dtype_info(x->a->dtype)->size);
    else if (x->a->dtype == BP_F32 && x->out->dtype == BP_BF16)
        for (size_t i = 0; i < n; i++)
            h[i] = bp_f32_to_bf16(f[i]);
    else if (x->a->dtype == BP_F32 && x->out->dtype == BP_F16)
        for (size_t i = 0; i < n; i++)
            h[i] = bp_f32_to_f16(f[i]);
    else
        for (size_t i = 0; i < n; i++)
            convert_one(x->a, i, x->out, i);
    return BP_OK;
}

/* -v in out's dtype: a sign flip for floats (exact, NaN and zero included,
 * like ATen's xor with -0.0), wrapping negation for integers. */
static void store_neg(const bp_buf_t *src, size_t i, bp_buf_t *out, size_t j)
{
    if (bp_dtype_is_int(out->dtype)) {
        double f = bp_dtype_is_int(src->dtype) ? 0.0 : bp_buf_get(src, i);
        int64_t v = bp_dtype_is_int(src->dtype) ? load_i64(src, i)
                    : out->dtype == BP_I32      ? to_i32(f)
                                                : to_i64(f);
        bp_cpu_store_i64(out, j, (int64_t)(0 - (uint64_t)v));
        return;
    }
    convert_one(src, i, out, j);
    unsigned w = (unsigned)bp_dtype_info(out->dtype)->size * 8u;
    uint64_t bits = bp_dtype_load_bits(out->dtype, out->data, j);
    bp_dtype_store_bits(out->dtype, out->data, j, bits ^ (1ull << (w - 1)));
}

bp_status bp_cpu_op_neg(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_status s = need_tensor(x->a, "neg's input", err);
    if (s)
        return s;
    bp_cpu_walk_t w;
    if ((s = bp_cpu_walk_init(&w, x->a, x->out, err)))
        return s;
    for (size_t i = 0; i < x->out->numel; i++, bp_cpu_walk_next(&w))
        store_neg(x->a, (size_t)w.pos, x->out, i);
    return BP_OK;
}

static size_t span(const int64_t *shape, int from, int to)
{
    size_t n = 1;
    for (int d = from; d < to; d++)
        n *= (size_t)shape[d];
    return n;
}

bp_status bp_cpu_op_concat(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    int ax;
    if (!bp_axis_norm(x->op->has_axis ? x->op->axis : 0, out->ndim, &ax) ||
        x->ninputs < 1)
        return bp_error_set(err, BP_EINPUT, "concat axis %d out of range",
                            x->op->axis);
    size_t outer = span(out->shape, 0, ax);
    size_t inner = span(out->shape, ax + 1, out->ndim);
    int64_t total = 0;
    for (int k = 0; k < x->ninputs; k++) {
        const bp_buf_t *in = x->inputs[k];
        if (in->ndim != out->ndim)
            return bp_error_set(err, BP_EINPUT,
                                "concat input %d has %d dimensions, not %d", k,
                                in->ndim, out->ndim);
        total += in->shape[ax];
    }
    if (total != out->shape[ax])
        return bp_error_set(err, BP_EINTERNAL, "concat sizes do not add up");
    size_t j = 0;
    for (size_t o = 0; o < outer; o++)
        for (int k = 0; k < x->ninputs; k++) {
            const bp_buf_t *in = x->inputs[k];
            size_t chunk = (size_t)in->shape[ax] * inner;
            if (in->dtype == out->dtype) {
                size_t es = bp_dtype_info(in->dtype)->size;
                memcpy((char *)out->data + j * es, (const char *)in->data + o * chunk * es,
                       chunk * es);
                j += chunk;
                continue;
            }
            for (size_t e = 0; e < chunk; e++)
                convert_one(in, o * chunk + e, out, j++);
        }
    return BP_OK;
}

bp_status bp_cpu_op_slice(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    (void)be;
    bp_status s = need_tensor(x->a, "slice's input", err);
    if (s)
        return s;
    const bp_buf_t *in = x->a;
    bp_buf_t *out = x->out;
    int ax;
    if (!bp_axis_norm(x->op->has_axis ? x->op->axis : 0, in->ndim, &ax) ||
        out->ndim != in->ndim)
        return bp_error_set(err, BP_EINPUT, "slice axis %d out of range",
                            x->op->axis);
    int64_t dim = in->shape[ax], step = x->op->s_step, start = x->op->s_start;
    int64_t count = out->shape[ax];
    if (step < 1)
        return bp_error_set(err, BP_EINPUT, "slice step %lld is not positive",
                            (long long)step);
    if (start < 0)
        start = start + dim < 0 ? 0 : start + dim;
    if (start > dim)
        start = dim;
    if (count > 0 && start + (count - 1) * step >= dim)
        return bp_error_set(err, BP_EINTERNAL, "slice runs past the end");
    size_t outer = span(in->shape, 0, ax),
           inner = span(in->shape, ax + 1, in->ndim);
    size_t j = 0;
    for (size_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < count; c++) {
            size_t base =
                (o * (size_t)dim + (size_t)(start + c * step)) * inner;
            for (size_t e = 0; e < inner; e++)
                convert_one(in, base + e, out, j++);
        }
    return BP_OK;
}

bp_status bp_cpu_op_rotate_half(bp_backend_t *be, const bp_exec_t *x,
                                bp_error_t *err)
{
    (void)be;
    bp_status s = need_tensor(x->a, "rotate_half's input", err);
    if (s)
        return s;
    const bp_buf_t *in = x->a;
    bp_buf_t *out = x->out;
    if (in->numel != out->numel || in->ndim < 1 || out->ndim != in->ndim ||
        in->shape[in->ndim - 1] % 2)
        return bp_error_set(err, BP_EINPUT,
                            "rotate_half needs an even last dimension");
    size_t d = (size_t)in->shape[in->ndim - 1], h = d / 2;
    for (size_t r = 0; d && r < in->numel / d; r++)
        for (size_t j = 0; j < d; j++) {
            if (j < h)
                store_neg(in, r * d + j + h, out, r * d + j);
            else
                convert_one(in, r * d + j - h, out, r * d + j);
        }
    return BP_OK;
}

/* reshape, view, transpose, permute, unsqueeze, squeeze, expand,
 * index_select, embedding: each output element a copy of the source
 * element layout.c names (converted where a dtype asks). */
bp_status bp_cpu_op_gather(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    int64_t *src;
    bp_status s = bp_layout_map(x->op, x->a, x->b, x->out, &src, err);
    if (s)
        return s;
    const bp_buf_t *from = bp_layout_source(x->op, x->a, x->b);
    for (size_t i = 0; i < x->out->numel; i++)
        convert_one(from, (size_t)src[i], x->out, i);
    free(src);
    return BP_OK;
}

/* torch.where(cond, a, b) (TensorCompare.cpp where_self_out, then
 * where_kernel): a and b converted to the result dtype first (.to(), a
 * number as a wrapped double tensor), then each element copied from a or
 * b by cond; an operand already of the result dtype keeps its bits. */
bp_status bp_cpu_op_where(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    if (x->ninputs != 1 || x->inputs[0]->dtype != BP_BOOL)
        return bp_error_set(err, BP_EINTERNAL, "where needs a bool cond");
    const bp_buf_t *t[3] = {x->inputs[0], x->a, x->b};
    const bp_arg_t *arg[2] = {&x->op->a, &x->op->b};
    bp_cpu_walk_t w[3];
    bp_status s = BP_OK;
    for (int k = 0; k < 3 && !s; k++)
        if (t[k])
            s = bp_cpu_walk_init(&w[k], t[k], out, err);
    for (size_t i = 0; !s && i < out->numel; i++) {
        int k = bp_dtype_load_bits(BP_BOOL, t[0]->data, (size_t)w[0].pos) ? 1 : 2;
        if (t[k])
            convert_one(t[k], (size_t)w[k].pos, out, i);
        else if (bp_dtype_is_int(out->dtype))
            bp_cpu_store_i64(out, i, (int64_t)arg[k - 1]->value);
        else
            bp_cpu_store(out, i, arg[k - 1]->value);
        for (int j = 0; j < 3; j++)
            if (t[j])
                bp_cpu_walk_next(&w[j]);
    }
    return s;
}

const char *bp_cpu_simd_name(const bp_cpu_t *c)
{
    if (c->math == BP_CPU_MATH_LIBM)
        return "none (libm)";
    return c->isa == BP_CPU_ISA_AVX512 ? "avx512 (avx2 for kernels ATen has no AVX-512 build of)"
                                       : "avx2";
}

const bp_op_fn bp_cpu_ops[BP_OP_COUNT] = {
    [BP_OP_TENSOR] = bp_cpu_op_tensor,
    [BP_OP_LOAD] = op_load,
    [BP_OP_ARANGE] = bp_cpu_op_arange,
    [BP_OP_UNIFORM] = bp_cpu_op_uniform,
    [BP_OP_CAST] = bp_cpu_op_cast,
    [BP_OP_ADD] = bp_cpu_op_binary,
    [BP_OP_SUB] = bp_cpu_op_binary,
    [BP_OP_MUL] = bp_cpu_op_binary,
    [BP_OP_DIV] = bp_cpu_op_binary,
    [BP_OP_POW] = bp_cpu_op_pow,
    [BP_OP_RECIPROCAL] = bp_cpu_op_unary,
    [BP_OP_EXP] = bp_cpu_op_unary,
    [BP_OP_LOG] = bp_cpu_op_unary,
    [BP_OP_SIN] = bp_cpu_op_unary,
    [BP_OP_COS] = bp_cpu_op_unary,
    [BP_OP_TANH] = bp_cpu_op_unary,
    [BP_OP_SQRT] = bp_cpu_op_unary,
    [BP_OP_RSQRT] = bp_cpu_op_unary,
    [BP_OP_NEG] = bp_cpu_op_neg,
    [BP_OP_OUTER] = bp_cpu_op_outer,
    [BP_OP_CONCAT] = bp_cpu_op_concat,
    [BP_OP_SLICE] = bp_cpu_op_slice,
    [BP_OP_MATMUL] = bp_cpu_op_matmul,
    [BP_OP_SUM] = bp_cpu_op_sum,
    [BP_OP_ROTATE_HALF] = bp_cpu_op_rotate_half,
    [BP_OP_RESHAPE] = bp_cpu_op_gather,
    [BP_OP_VIEW] = bp_cpu_op_gather,
    [BP_OP_TRANSPOSE] = bp_cpu_op_gather,
    [BP_OP_PERMUTE] = bp_cpu_op_gather,
    [BP_OP_UNSQUEEZE] = bp_cpu_op_gather,
    [BP_OP_SQUEEZE] = bp_cpu_op_gather,
    [BP_OP_EXPAND] = bp_cpu_op_gather,
    [BP_OP_INDEX_SELECT] = bp_cpu_op_gather,
    [BP_OP_EMBEDDING] = bp_cpu_op_gather,
    [BP_OP_LT] = bp_cpu_op_compare,
    [BP_OP_LE] = bp_cpu_op_compare,
    [BP_OP_GT] = bp_cpu_op_compare,
    [BP_OP_GE] = bp_cpu_op_compare,
    [BP_OP_EQ] = bp_cpu_op_compare,
    [BP_OP_NE] = bp_cpu_op_compare,
    [BP_OP_WHERE] = bp_cpu_op_where,
    [BP_OP_SOFTMAX] = bp_cpu_op_softmax,
    [BP_OP_LOG_SOFTMAX] = bp_cpu_op_softmax,
    [BP_OP_MEAN] = bp_cpu_op_reduce,
    [BP_OP_VAR] = bp_cpu_op_reduce,
    [BP_OP_AMAX] = bp_cpu_op_reduce,
    [BP_OP_AMIN] = bp_cpu_op_reduce,
    [BP_OP_RMS_NORM] = bp_cpu_op_rms_norm,
    [BP_OP_LAYER_NORM] = bp_cpu_op_layer_norm,
    [BP_OP_BMM] = bp_cpu_op_bmm,
    [BP_OP_SDPA] = bp_cpu_op_sdpa,
    [BP_OP_LOGSUMEXP] = bp_cpu_op_reduce,
    [BP_OP_PROD] = bp_cpu_op_reduce,
    [BP_OP_CUMSUM] = bp_cpu_op_cumsum,
    [BP_OP_SIGMOID] = bp_cpu_op_act,
    [BP_OP_SILU] = bp_cpu_op_act,
    [BP_OP_GELU] = bp_cpu_op_act,
    [BP_OP_ERF] = bp_cpu_op_unary,
    [BP_OP_EXP2] = bp_cpu_op_act,
    [BP_OP_LOG1P] = bp_cpu_op_unary,
    [BP_OP_ABS] = bp_cpu_op_exact1,
    [BP_OP_SIGN] = bp_cpu_op_exact1,
    [BP_OP_FLOOR] = bp_cpu_op_exact1,
    [BP_OP_CEIL] = bp_cpu_op_exact1,
    [BP_OP_ROUND] = bp_cpu_op_exact1,
    [BP_OP_TRUNC] = bp_cpu_op_exact1,
    [BP_OP_MINIMUM] = bp_cpu_op_minmax,
    [BP_OP_MAXIMUM] = bp_cpu_op_minmax,
    [BP_OP_CLAMP] = bp_cpu_op_exact1,
    [BP_OP_FULL] = bp_cpu_op_full,
    [BP_OP_ZEROS] = bp_cpu_op_full,
    [BP_OP_ONES] = bp_cpu_op_full,
    [BP_OP_LINSPACE] = bp_cpu_op_linspace,
    [BP_OP_RANDN] = op_normal,
    [BP_OP_NORMAL] = op_normal,
    [BP_OP_CLAMP_TENSOR] = bp_cpu_op_clamp_tensor,
    [BP_OP_BADDBMM] = bp_cpu_op_baddbmm,
    [BP_OP_LINEAR] = bp_cpu_op_linear,
    [BP_OP_ADDMM] = bp_cpu_op_addmm,
/* op_list.h's BP_FN functions: the vml path (be_cpu_math.c's tables) */
#define BP_FN(ID, ...) [BP_OP_##ID] = bp_cpu_op_unary,
#include "op_list.h"
#undef BP_FN
#define BP_FN2(ID, ...) [BP_OP_##ID] = bp_cpu_op_fn2,
#include "op_list.h"
#undef BP_FN2
};

static void cpu_destroy(bp_backend_t *be)
{
    if (!be)
        return;
    json_decref(be->fingerprint);
    free(be->state);
    free(be);
}

static json_t *fingerprint(const bp_cpu_t *c)
{
    char sleef[32];
    snprintf(sleef, sizeof sleef, "%d.%d.%d", SLEEF_VERSION_MAJOR,
             SLEEF_VERSION_MINOR, SLEEF_VERSION_PATCHLEVEL);
#ifdef __VERSION__
    const char *cc = __VERSION__;
#else
    const char *cc = "unknown";
#endif
    const char *tr =
        c->math == BP_CPU_MATH_LIBM
            ? "glibc's libm per lane"
        : c->isa == BP_CPU_ISA_AVX512
            ? "SLEEF's AVX-512 entry points for exp, log, tanh and pow (kernels ATen "
              "builds for AVX-512), its AVX2 ones for sin and cos (ATen runs their "
              "AVX2 build); PyTorch's x86 wheels take fp32/fp64 sin, cos, exp, log, "
              "tanh and sqrt from MKL VML instead"
            : "SLEEF's AVX2 entry points (PyTorch's non-MKL path; x86 wheels take "
              "fp32/fp64 sin, cos, exp, log, tanh and sqrt from MKL VML)";
    json_t *fp = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s}", "cpu_math",
        bp_cpu_math_name(c->math), "sleef", sleef, "simd", bp_cpu_simd_name(c),
        "aten_cpu_capability", bp_cpu_isa_name(c->isa), "aten_cpu_capability_from",
        c->isa_source, "vector_bytes", c->vec_bytes, "vector_width_f32",
        (int)bp_cpu_lanes(BP_F32, c->vec_bytes), "aten_threads", BP_CPU_THREADS,
        "compiler", cc, "matmul",
        c->mkl == BP_MKL_AVX512
            ? "fp32 matmul in MKL's sgemm order (AVX-512 path, one thread) where fitted: "
              "'N','N' for M 2..64 (1: K <= 64), N 4..64 and 'T','N' for M 16..64 in K panels of "
              "384 (the last two balanced), 'T','N' for M 2..4, N <= 16 in 16 lanes (dot16); "
              "elsewhere fp32 accumulator, k ascending, one fmaf per product, start +0"
            : "fp32 accumulator, k ascending, one fmaf per product, start +0",
        "transcendentals", tr);
    if (fp) {
        json_object_set_new(fp, "formulations_from",
                            json_string("PyTorch 2.11.0's x86-64 CPU kernels (oneDNN v3.10.2, "
                                        "SLEEF 3.8/3.9 as bundled); probes/README.md names "
                                        "the rows taken from another version"));
        json_object_set_new(fp, "onednn_isa", json_string(bp_onednn_isa_name(c->onednn)));
        json_object_set_new(fp, "onednn_isa_from", json_string(c->onednn_source));
        json_object_set_new(fp, "mkl_isa", json_string(bp_mkl_isa_name(c->mkl)));
        json_object_set_new(fp, "mkl_isa_from", json_string(c->mkl_source));
        json_object_set_new(
            fp, "gelu_erf",
            json_string(c->onednn >= BP_ONEDNN_AVX512_CORE
                            ? "oneDNN v3.10's AVX-512 minimax polynomial (PyTorch 2.11) for "
                              "contiguous fp32, bf16 (and fp16 where the ISA has AVX512-FP16) "
                              "of more than one element; ATen's kernel otherwise"
                        : c->onednn >= BP_ONEDNN_SSE41
                            ? "oneDNN's Abramowitz-Stegun form with its own exp (PyTorch 2.11, "
                              "oneDNN v3.10) for contiguous fp32 (bf16, fp16 on avx2_vnni_2) "
                              "of more than one element; ATen's kernel otherwise"
                            : "ATen's kernel (mkldnn off)"));
    }
    if (fp && c->isa_ignored)
        json_object_set_new(fp, "aten_cpu_capability_ignored", json_string(c->isa_ignored));
    return fp;
}

bp_status bp_be_cpu_open(const bp_backend_opts_t *o, bp_backend_t **out,
                         bp_error_t *err)
{
    *out = NULL;
    if (o->cpu_math < BP_CPU_MATH_SLEEF_U10 || o->cpu_math > BP_CPU_MATH_LIBM)
        return bp_error_set(err, BP_EINPUT, "unknown CPU math library %d",
                            (int)o->cpu_math);
    bp_backend_t *be = calloc(1, sizeof *be);
    bp_cpu_t *c = calloc(1, sizeof *c);
    if (!be || !c) {
        free(be);
        free(c);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    bp_status st =
        bp_cpu_isa_resolve(o->cpu_isa, &c->isa, &c->isa_source, &c->isa_ignored, err);
    if (st) {
        free(be);
        free(c);
        return st;
    }
    st = bp_onednn_isa_resolve(o->onednn_isa, &c->onednn, &c->onednn_source, err);
    if (!st)
        st = bp_mkl_isa_resolve(o->mkl_isa, &c->mkl, &c->mkl_source, err);
    if (st) {
        free(be);
        free(c);
        return st;
    }
    /* ATen's DEFAULT build has no SLEEF: its Vectorized math is std:: per
     * lane, which libm mode models. */
    c->math = c->isa == BP_CPU_ISA_DEFAULT ? BP_CPU_MATH_LIBM : o->cpu_math;
    c->simd = c->isa != BP_CPU_ISA_DEFAULT;
    c->vec_bytes = c->isa == BP_CPU_ISA_AVX512 ? 64 : BP_CPU_VEC_BYTES;
    be->name = "cpu";
    be->dtypes = BP_DTYPES_COMPUTE;
    be->device = false;
    be->state = c;
    be->destroy = cpu_destroy;
    const char *key = c->math == BP_CPU_MATH_SLEEF_U10   ? "cpu-sleef"
                      : c->math == BP_CPU_MATH_SLEEF_U35 ? "cpu-sleef-u35"
                                                         : "cpu-libm";
    /* AVX-512 moves pow's vector/tail boundary and takes SLEEF's AVX-512
     * builds: other bits, other goldens. */
    snprintf(be->key, sizeof be->key, "%s%s", key,
             c->isa == BP_CPU_ISA_AVX512 ? "-avx512" : "");
    be->fingerprint = fingerprint(c);
    if (!be->fingerprint) {
        cpu_destroy(be);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    be->op = bp_cpu_ops;
    *out = be;
    return BP_OK;
}
