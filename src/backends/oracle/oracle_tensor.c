/* The oracle's whole-tensor ops (see oracle_tensor.h). */
#include "oracle_tensor.h"

#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "oracle_mpfr.h"

/* Operands summed by one mpfr_sum call before an exact accumulation. */
#define SUM_BLOCK 4096

/* ---- copies: concat, slice, rotate_half ---- */

typedef struct {
    bp_op_kind_t kind;
    bp_buf_t *out;
    const bp_buf_t *const *inputs; /* concat */
    int ninputs;
    const bp_buf_t *a;
    size_t outer, inner, dim;      /* dim: the output's extent on the axis */
    int64_t offs[65];              /* concat: where input k starts */
    size_t src_dim, start, step;   /* slice */
} copy_ctx_t;

/* Where output element i comes from, and whether it is negated. */
static const bp_buf_t *copy_source(const copy_ctx_t *c, size_t i, size_t *src,
                                   bool *neg)
{
    size_t in = i % c->inner, t = i / c->inner, ax = t % c->dim,
           out = t / c->dim;
    *neg = false;
    if (c->kind == BP_OP_CONCAT) {
        int k = 0;
        while (k + 1 < c->ninputs && (int64_t)ax >= c->offs[k + 1])
            k++;
        size_t d = (size_t)(c->offs[k + 1] - c->offs[k]);
        *src = (out * d + (ax - (size_t)c->offs[k])) * c->inner + in;
        return c->inputs[k];
    }
    if (c->kind == BP_OP_SLICE) {
        *src = (out * c->src_dim + c->start + ax * c->step) * c->inner + in;
        return c->a;
    }
    size_t half = c->dim / 2; /* rotate_half: cat(-x2, x1), inner == 1 */
    *neg = ax < half;
    *src = out * c->dim + (ax < half ? ax + half : ax - half);
    return c->a;
}

static bp_status copy_kernel(bp_oracle_ws_t *ws, const void *vctx,
                             size_t begin, size_t end, bp_error_t *err)
{
    (void)err;
    const copy_ctx_t *c = vctx;
    bp_dtype_t dt = c->out->dtype;
    const bp_dtype_info_t *info = bp_dtype_info(dt);
    unsigned w = (unsigned)info->size * 8u;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    for (size_t i = begin; i < end; i++) {
        size_t src;
        bool neg;
        const bp_buf_t *b = copy_source(c, i, &src, &neg);
        uint64_t bits;
        if (b->dtype == dt) {
            /* Same dtype: the value itself (NaN payloads kept); negation
             * is exact, a sign flip or a two's complement wrap. */
            bits = bp_dtype_load_bits(dt, b->data, src);
            if (neg)
                bits = info->is_float ? bits ^ (1ull << (w - 1))
                                      : (~bits + 1) & mask;
        } else {
            bp_oracle_load(ws->x, b->dtype, b->data, src);
            int inex = neg ? mpfr_neg(ws->r, ws->x, ws->rnd)
                           : mpfr_set(ws->r, ws->x, ws->rnd);
            bits = bp_oracle_round(ws, inex);
        }
        bp_dtype_store_bits(dt, c->out->data, i, bits);
    }
    return BP_OK;
}

/* ---- gathers: the layout ops of layout.c ---- */

typedef struct {
    const bp_buf_t *from;
    bp_buf_t *out;
    const int64_t *src;
} gather_ctx_t;

static bp_status gather_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                               size_t end, bp_error_t *err)
{
    (void)err;
    const gather_ctx_t *c = vctx;
    bp_dtype_t dt = c->out->dtype;
    for (size_t i = begin; i < end; i++) {
        size_t s = (size_t)c->src[i];
        uint64_t bits;
        if (c->from->dtype == dt) { /* the value itself, NaN payloads kept */
            bits = bp_dtype_load_bits(dt, c->from->data, s);
        } else {
            bp_oracle_load(ws->x, c->from->dtype, c->from->data, s);
            bits = bp_oracle_round(ws, mpfr_set(ws->r, ws->x, ws->rnd));
        }
        bp_dtype_store_bits(dt, c->out->data, i, bits);
    }
    return BP_OK;
}

bp_status bp_oracle_gather(int threads, const bp_exec_t *x, bp_error_t *err)
{
    int64_t *src;
    bp_status st = bp_layout_map(x->op, x->a, x->b, x->out, &src, err);
    if (st)
        return st;
    gather_ctx_t c = {bp_layout_source(x->op, x->a, x->b), x->out, src};
    st = bp_oracle_map(threads, 16 * BP_ORACLE_GRAIN, x->out->dtype, x->out->numel,
                       gather_kernel, &c, err);
    free(src);
    return st;
}

/* Splits shape around axis: outer (before), inner (after). */
static void split_axis(const bp_buf_t *b, int axis, size_t *outer,
                       size_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= (size_t)b->shape[d];
    for (int d = axis + 1; d < b->ndim; d++)
        *inner *= (size_t)b->shape[d];
}

/* Same shape as out except on axis. */
static bool fits_around(const bp_buf_t *b, const bp_buf_t *out, int axis)
{
    if (b->ndim != out->ndim)
        return false;
    for (int d = 0; d < b->ndim; d++)
        if (d != axis && b->shape[d] != out->shape[d])
            return false;
    return true;
}

bp_status bp_oracle_copy(int threads, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    copy_ctx_t c = {.kind = op->kind, .out = out, .a = x->a};
    int axis = 0;
    char s1[128], s2[128];
    bp_shape_format(out->ndim, out->shape, s2, sizeof s2);
    if (op->kind == BP_OP_CONCAT) {
        if (x->ninputs < 1 || x->ninputs > 64)
            return bp_error_set(err, BP_EINPUT,
                                "concat needs 1 to 64 inputs, not %d",
                                x->ninputs);
        bp_status st = bp_axis_check(op->has_axis ? op->axis : 0, out->ndim,
                                 &axis, err);
        if (st)
            return st;
        c.inputs = x->inputs;
        c.ninputs = x->ninputs;
        c.offs[0] = 0;
        for (int k = 0; k < x->ninputs; k++) {
            const bp_buf_t *in = x->inputs[k];
            if (!fits_around(in, out, axis)) {
                bp_shape_format(in->ndim, in->shape, s1, sizeof s1);
                return bp_error_set(err, BP_EINPUT,
                                    "concat input %d of shape %s does not fit "
                                    "the output %s on axis %d", k, s1, s2,
                                    axis);
            }
            c.offs[k + 1] = c.offs[k] + in->shape[axis];
        }
        if (c.offs[x->ninputs] != out->shape[axis])
            return bp_error_set(err, BP_EINPUT,
                                "concat inputs add up to %lld on axis %d, the "
                                "output has %lld",
                                (long long)c.offs[x->ninputs], axis,
                                (long long)out->shape[axis]);
    } else {
        if (!x->a)
            return bp_error_set(err, BP_EINPUT, "operand a is missing");
        bp_shape_format(x->a->ndim, x->a->shape, s1, sizeof s1);
        /* slice acts on axis 0 unless told (as x[a:b] does); rotate_half
         * on the last. */
        int want = op->kind == BP_OP_ROTATE_HALF ? -1
                   : op->has_axis               ? op->axis
                                                : 0;
        bp_status st = bp_axis_check(want, out->ndim, &axis, err);
        if (st)
            return st;
        if (!fits_around(x->a, out, axis))
            return bp_error_set(err, BP_EINPUT,
                                "input of shape %s does not fit the output %s",
                                s1, s2);
    }
    split_axis(out, axis, &c.outer, &c.inner);
    c.dim = (size_t)out->shape[axis];
    if (op->kind == BP_OP_SLICE) {
        int64_t n = x->a->shape[axis], s = op->s_start;
        if (op->s_step <= 0)
            return bp_error_set(err, BP_EINPUT,
                                "slice step must be positive, not %lld",
                                (long long)op->s_step);
        s = s < 0 ? s + n : s;
        s = s < 0 ? 0 : s > n ? n : s;
        if (c.dim && s + ((int64_t)c.dim - 1) * op->s_step >= n)
            return bp_error_set(err, BP_EINPUT,
                                "slice of %zu elements from %lld step %lld "
                                "runs past the input's %lld", c.dim,
                                (long long)s, (long long)op->s_step,
                                (long long)n);
        c.src_dim = (size_t)n;
        c.start = (size_t)s;
        c.step = (size_t)op->s_step;
    } else if (op->kind == BP_OP_ROTATE_HALF) {
        if (!bp_buf_same_shape(x->a, out) || out->ndim < 1 || c.dim % 2)
            return bp_error_set(err, BP_EINPUT,
                                "rotate_half needs an even last dimension and "
                                "an output of the input's shape (%s, %s)",
                                s1, s2);
    }
    return bp_oracle_map(threads, 16 * BP_ORACLE_GRAIN, out->dtype,
                         out->numel, copy_kernel, &c, err);
}

/* ---- reductions: sum and matmul, exact then rounded once ---- */

typedef struct {
    bp_buf_t *out;
    const bp_buf_t *a, *b;
    size_t outer, len, inner; /* sum: a viewed as [outer, len, inner] */
    size_t m, k, n;           /* matmul */
    mpfr_prec_t exact_prec;   /* sum: a precision at which partials are exact */
} red_ctx_t;

/* Bits for any sum of up to n values of dt to be exact: from the least
 * subnormal (or 1 for integers) up to n times the largest magnitude. */
static mpfr_prec_t exact_sum_prec(bp_dtype_t dt, size_t n)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    long span;
    if (in->is_float) {
        long bias = (1L << (in->exp_bits - 1)) - 1, p = in->man_bits + 1;
        span = (bias + 1) - (2 - bias - p);
    } else {
        span = (long)in->size * 8;
    }
    long lg = 0;
    while (lg < 64 && ((size_t)1 << lg) <= n)
        lg++;
    return (mpfr_prec_t)(span + lg + 2);
}

static bp_status sum_kernel(bp_oracle_ws_t *ws, const void *vctx,
                            size_t begin, size_t end, bp_error_t *err)
{
    const red_ctx_t *c = vctx;
    size_t blk = c->len < SUM_BLOCK ? c->len : SUM_BLOCK;
    bp_status st = bp_oracle_ws_reserve(ws, blk ? blk : 1, err);
    if (st)
        return st;
    if (c->len > SUM_BLOCK) {
        mpfr_set_prec(ws->acc, c->exact_prec);
        mpfr_set_prec(ws->part, c->exact_prec);
    }
    bp_dtype_t dt = c->a->dtype;
    for (size_t o = begin; o < end; o++) {
        size_t base = (o / c->inner) * c->len * c->inner + o % c->inner;
        int inex;
        if (c->len <= SUM_BLOCK) {
            for (size_t j = 0; j < c->len; j++)
                bp_oracle_load(ws->va[j], dt, c->a->data, base + j * c->inner);
            inex = mpfr_sum(ws->r, ws->pa, c->len, ws->rnd);
        } else {
            for (size_t j0 = 0; j0 < c->len; j0 += SUM_BLOCK) {
                size_t nb = c->len - j0 < SUM_BLOCK ? c->len - j0 : SUM_BLOCK;
                for (size_t j = 0; j < nb; j++)
                    bp_oracle_load(ws->va[j], dt, c->a->data,
                                   base + (j0 + j) * c->inner);
                int e = mpfr_sum(j0 ? ws->part : ws->acc, ws->pa, nb,
                                 MPFR_RNDN);
                if (j0)
                    e |= mpfr_add(ws->acc, ws->acc, ws->part, MPFR_RNDN);
                if (e)
                    return bp_error_set(err, BP_EINTERNAL,
                                        "inexact partial sum at element %zu",
                                        o);
            }
            inex = mpfr_set(ws->r, ws->acc, ws->rnd);
        }
        bp_dtype_store_bits(c->out->dtype, c->out->data, o,
                            bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

bp_status bp_oracle_sum(int threads, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    red_ctx_t c = {.out = x->out, .a = x->a};
    if (!x->a)
        return bp_error_set(err, BP_EINPUT, "sum needs a tensor operand");
    if (op->has_axis && x->a->ndim > 0) {
        int axis = 0;
        bp_status st = bp_axis_check(op->axis, x->a->ndim, &axis, err);
        if (st)
            return st;
        split_axis(x->a, axis, &c.outer, &c.inner);
        c.len = (size_t)x->a->shape[axis];
    } else {
        c.outer = c.inner = 1;
        c.len = x->a->numel;
    }
    if (x->out->numel != c.outer * c.inner)
        return bp_error_set(err, BP_EINPUT,
                            "sum gives %zu elements, the output has %zu",
                            c.outer * c.inner, x->out->numel);
    if (c.inner == 0) /* an empty output: nothing to compute */
        return BP_OK;
    c.exact_prec = exact_sum_prec(x->a->dtype, c.len);
    size_t grain = c.len ? BP_ORACLE_GRAIN * 16 / c.len : BP_ORACLE_GRAIN;
    return bp_oracle_map(threads, grain ? grain : 1, x->out->dtype,
                         x->out->numel, sum_kernel, &c, err);
}

static bp_status matmul_kernel(bp_oracle_ws_t *ws, const void *vctx,
                               size_t begin, size_t end, bp_error_t *err)
{
    const red_ctx_t *c = vctx;
    bp_status st = bp_oracle_ws_reserve(ws, c->k ? c->k : 1, err);
    if (st)
        return st;
    for (size_t o = begin; o < end; o++) {
        size_t i = o / c->n, j = o % c->n;
        if (ws->row != (int64_t)i) {
            for (size_t l = 0; l < c->k; l++)
                bp_oracle_load(ws->va[l], c->a->dtype, c->a->data,
                               i * c->k + l);
            ws->row = (int64_t)i;
        }
        for (size_t l = 0; l < c->k; l++)
            bp_oracle_load(ws->vb[l], c->b->dtype, c->b->data, l * c->n + j);
#if MPFR_VERSION >= MPFR_VERSION_NUM(4, 1, 0) && !defined(BP_ORACLE_NO_DOT)
        int inex = mpfr_dot(ws->r, ws->pa, ws->pb, c->k, ws->rnd);
#else
        /* Products of 64-bit operands are exact in vb's 128 bits. */
        for (size_t l = 0; l < c->k; l++)
            mpfr_mul(ws->vb[l], ws->va[l], ws->vb[l], MPFR_RNDN);
        int inex = mpfr_sum(ws->r, ws->pb, c->k, ws->rnd);
#endif
        bp_dtype_store_bits(c->out->dtype, c->out->data, o,
                            bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

bp_status bp_oracle_matmul(int threads, const bp_exec_t *x, bp_error_t *err)
{
    const bp_buf_t *a = x->a, *b = x->b;
    if (!a || !b || a->ndim < 1 || b->ndim < 1 || b->ndim > 2)
        return bp_error_set(err, BP_EINPUT,
                            "matmul needs a [..., k] and b of 1 or 2 dimensions");
    /* [k] @ [k, n] is [1, k] @ [k, n]; [m, k] @ [k] is [m, k] @ [k, 1]; a's
     * leading dimensions fold into m, as torch.matmul folds them. */
    red_ctx_t c = {.out = x->out, .a = a, .b = b};
    c.k = (size_t)a->shape[a->ndim - 1];
    c.m = 1;
    for (int d = 0; d + 1 < a->ndim; d++)
        c.m *= (size_t)a->shape[d];
    c.n = b->ndim == 2 ? (size_t)b->shape[1] : 1;
    if ((size_t)b->shape[0] != c.k || x->out->numel != c.m * c.n) {
        char sa[128], sb[128];
        bp_shape_format(a->ndim, a->shape, sa, sizeof sa);
        bp_shape_format(b->ndim, b->shape, sb, sizeof sb);
        return bp_error_set(err, BP_EINPUT,
                            "matmul of %s and %s: inner dimensions or output "
                            "size (%zu elements) do not match", sa, sb,
                            x->out->numel);
    }
    size_t grain = c.k ? BP_ORACLE_GRAIN * 16 / c.k : BP_ORACLE_GRAIN;
    return bp_oracle_map(threads, grain ? grain : 1, x->out->dtype,
                         x->out->numel, matmul_kernel, &c, err);
}
