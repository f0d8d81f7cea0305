/* explain's element maps: which input elements one output element reads
 * (see explain.h), and distances in fractional ulps. */
#include "explain.h"

#include <math.h>

#include "layout.h"

static size_t prod(const bp_meta_t *m, int from, int to)
{
    size_t n = 1;
    for (int d = from; d < to; d++)
        n *= (size_t)m->shape[d];
    return n;
}

/* The op's axis, checked by inference before explain runs. */
static int norm_axis(int axis, int ndim)
{
    int ax = 0;
    bp_axis_norm(axis, ndim, &ax);
    return ax;
}

static void concat_dep(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                       bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    const bp_meta_t *out = &metas[i];
    int ax = norm_axis(op->has_axis ? op->axis : 0, out->ndim);
    size_t inner = prod(out, ax + 1, out->ndim), len = (size_t)out->shape[ax];
    size_t o = e / (len * inner), c = (e / inner) % len, r = e % inner, off = 0;
    for (int k = 0; k < op->ninputs; k++) {
        size_t s = (size_t)metas[op->inputs[k]].shape[ax];
        if (c < off + s) {
            fn(ctx, op->inputs[k], (o * s + (c - off)) * inner + r);
            return;
        }
        off += s;
    }
}

static void slice_dep(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                      bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    const bp_meta_t *in = &metas[op->a.buf], *out = &metas[i];
    int ax = norm_axis(op->has_axis ? op->axis : 0, in->ndim);
    int64_t first, len;
    bp_slice_resolve(op, in->shape[ax], &first, &len);
    size_t inner = prod(out, ax + 1, out->ndim), olen = (size_t)out->shape[ax];
    size_t ilen = (size_t)in->shape[ax];
    size_t o = e / (olen * inner), c = (e / inner) % olen, r = e % inner;
    size_t src = (size_t)first + c * (size_t)op->s_step;
    fn(ctx, op->a.buf, (o * ilen + src) * inner + r);
}

static void matmul_deps(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                        bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    const bp_meta_t *a = &metas[op->a.buf], *o = &metas[i];
    size_t k = (size_t)a->shape[a->ndim - 1], n = (size_t)o->shape[o->ndim - 1];
    size_t row = e / n, col = e % n;
    for (size_t t = 0; t < k; t++)
        if (!fn(ctx, op->a.buf, row * k + t) || !fn(ctx, op->b.buf, t * n + col))
            return;
}

/* linear: row r of x and row j of the weight, and the bias element
 * broadcast to e; addmm: the input element broadcast to e, row r of mat1
 * and column j of mat2. */
static void linear_deps(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                        bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    bool lin = op->kind == BP_OP_LINEAR;
    int x = op->inputs[lin ? 0 : 1], w = op->inputs[lin ? 1 : 2];
    int bias = lin ? (op->ninputs > 2 ? op->inputs[2] : -1) : op->inputs[0];
    const bp_meta_t *o = &metas[i];
    size_t n = (size_t)o->shape[o->ndim - 1], k = (size_t)metas[x].shape[metas[x].ndim - 1];
    size_t row = e / n, col = e % n;
    if (bias >= 0) {
        const bp_meta_t *in = &metas[bias];
        int64_t st[BP_MAXDIM];
        if (bp_bcast_strides(in->ndim, in->shape, o->ndim, o->shape, st) &&
            !fn(ctx, bias, bp_layout_offset(o->ndim, o->shape, st, e)))
            return;
    }
    for (size_t t = 0; t < k; t++)
        if (!fn(ctx, x, row * k + t) || !fn(ctx, w, lin ? col * k + t : t * n + col))
            return;
}

static void sum_deps(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                     bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    const bp_meta_t *in = &metas[op->a.buf];
    if (!op->has_axis) {
        size_t n = prod(in, 0, in->ndim);
        for (size_t t = 0; t < n; t++)
            if (!fn(ctx, op->a.buf, t))
                return;
        return;
    }
    int ax = norm_axis(op->axis, in->ndim);
    size_t inner = prod(in, ax + 1, in->ndim), len = (size_t)in->shape[ax];
    size_t o = e / inner, r = e % inner;
    for (size_t t = 0; t < len; t++)
        if (!fn(ctx, op->a.buf, (o * len + t) * inner + r))
            return;
}

void bp_explain_deps(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                     bp_explain_dep_fn fn, void *ctx)
{
    const bp_op_t *op = &p->ops[i];
    switch (op->kind) {
    case BP_OP_OUTER: {
        size_t m = (size_t)metas[i].shape[1];
        if (fn(ctx, op->a.buf, e / m))
            fn(ctx, op->b.buf, e % m);
        return;
    }
    case BP_OP_CONCAT:
        concat_dep(p, metas, i, e, fn, ctx);
        return;
    case BP_OP_SLICE:
        slice_dep(p, metas, i, e, fn, ctx);
        return;
    case BP_OP_ROTATE_HALF: {
        const bp_meta_t *m = &metas[i];
        size_t d = (size_t)m->shape[m->ndim - 1], h = d / 2, c = e % d;
        fn(ctx, op->a.buf, c < h ? e + h : e - h);
        return;
    }
    case BP_OP_MATMUL:
        matmul_deps(p, metas, i, e, fn, ctx);
        return;
    case BP_OP_LINEAR:
    case BP_OP_ADDMM:
        linear_deps(p, metas, i, e, fn, ctx);
        return;
    case BP_OP_SUM:
        sum_deps(p, metas, i, e, fn, ctx);
        return;
    default:
        if (bp_layout_is_view(op->kind)) { /* the one element it copies */
            const bp_meta_t *in = &metas[op->a.buf], *o = &metas[i];
            int64_t st[BP_MAXDIM];
            bp_layout_view_strides(op, in->ndim, in->shape, o->ndim, o->shape, st);
            fn(ctx, op->a.buf, bp_layout_offset(o->ndim, o->shape, st, e));
            return;
        }
        break;
    }
    /* Elementwise: each tensor operand's element broadcast to e.  An op of
     * another kind without its own map above reads, for all explain can
     * tell, every element of every operand. */
    int reads[BP_OP_MAXREADS];
    int n = bp_op_reads(op, reads); /* none for the creation ops */
    const bp_meta_t *out = &metas[i];
    bool elementwise = bp_op_info(op->kind)->kind == BP_KIND_ELEMWISE;
    for (int r = 0; r < n; r++) {
        const bp_meta_t *in = &metas[reads[r]];
        int64_t st[BP_MAXDIM];
        if (elementwise &&
            bp_bcast_strides(in->ndim, in->shape, out->ndim, out->shape, st)) {
            size_t off = 0, rest = e;
            for (int d = out->ndim - 1; d >= 0; d--) {
                off += (rest % (size_t)out->shape[d]) * (size_t)st[d];
                rest /= (size_t)out->shape[d];
            }
            if (!fn(ctx, reads[r], off))
                return;
            continue;
        }
        for (size_t t = 0; t < prod(in, 0, in->ndim); t++)
            if (!fn(ctx, reads[r], t))
                return;
    }
}

double bp_explain_frac_ulp(bp_dtype_t dt, double v, double ref)
{
    if (v == ref || (isnan(v) && isnan(ref)))
        return 0.0;
    if (!isfinite(v) || !isfinite(ref))
        return INFINITY;
    const bp_dtype_info_t *di = bp_dtype_info(dt);
    if (!di->is_float)
        return fabs(v - ref);
    int emin = 2 - (1 << (di->exp_bits - 1)); /* f32: -126 */
    int e = ref == 0 ? emin : ilogb(ref);
    if (e < emin)
        e = emin;
    return fabs(v - ref) / ldexp(1.0, e - di->man_bits);
}
