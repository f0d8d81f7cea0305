/* explain: per-op attribution of the differences between two sides, with
 * the oracle's verdicts (contract in explain.h). */
#include "explain.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const bp_probe_t *p;
    bp_dtype_t dt;
    const bp_explain_opts_t *o;
    bp_buf_t *A, *B;     /* end to end, each side */
    bp_buf_t *iso;       /* op i on b with a's inputs (isolated mode) */
    bp_buf_t *orc;       /* op i on the oracle with a's inputs */
    bp_buf_t *end, *ref; /* the oracle end to end: same dtype, fp64 */
    int32_t **oop;       /* per buffer: origin op * 2 + via_reduction */
    size_t **oidx;       /* per buffer: origin index */
    bp_explain_t *x;
} ctx_t;

static bool differs(const bp_buf_t *a, const bp_buf_t *b, size_t i, const bp_explain_opts_t *o)
{
    uint64_t x = bp_buf_bits(a, i), y = bp_buf_bits(b, i);
    if (bp_dtype_bits_equal(a->dtype, x, y, o->nan_payload))
        return false;
    /* +0 against -0 (0 ulp apart, not NaN), when excused */
    return !(o->zero_sign_ignore && !bp_dtype_bits_isnan(a->dtype, x) &&
             bp_ulp_distance(a->dtype, x, y) == 0);
}

/* Which side is correctly rounded: has the oracle's bits o (a zero of the
 * other sign is not, though 0 ulp away). */
static bp_verdict_t verdict_of(bp_dtype_t dt, uint64_t a, uint64_t b, uint64_t o)
{
    bool ea = bp_dtype_bits_equal(dt, a, o, false), eb = bp_dtype_bits_equal(dt, b, o, false);
    return ea && eb ? BP_VERDICT_BOTH : ea ? BP_VERDICT_A : eb ? BP_VERDICT_B : BP_VERDICT_NEITHER;
}

static bp_buf_t *bufs_new(size_t n)
{
    return calloc(n ? n : 1, sizeof(bp_buf_t));
}

static void bufs_del(bp_buf_t *b, size_t n)
{
    bp_backend_bufs_free(b, n);
    free(b);
}

/* A side's buffers: run on its backend, or checked against the metas. */
static bp_status side_bufs(ctx_t *c, const bp_explain_side_t *s, bp_buf_t **out,
                           bp_error_t *err)
{
    const bp_probe_t *p = c->p;
    *out = bufs_new(p->nops);
    if (!*out)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if (s->be)
        return bp_backend_run(s->be, p, c->dt, *out, err);
    for (size_t i = 0; i < p->nops; i++) {
        const bp_meta_t *m = &c->x->metas[i];
        const bp_buf_t *g = &s->bufs[i];
        bool ok = g->data && g->dtype == m->dtype && g->ndim == m->ndim;
        for (int d = 0; ok && d < m->ndim; d++)
            ok = g->shape[d] == m->shape[d];
        if (!ok) {
            char want[96], got[96];
            bp_shape_format(m->ndim, m->shape, want, sizeof want);
            bp_shape_format(g->ndim, g->shape, got, sizeof got);
            return bp_error_set(err, BP_EINPUT,
                                "%s: buffer '%s' is %s %s, the probe makes it %s %s",
                                s->label, p->ops[i].out,
                                g->data ? bp_dtype_name(g->dtype) : "missing",
                                g->data ? got : "", bp_dtype_name(m->dtype), want);
        }
        bp_status st = bp_buf_copy(&(*out)[i], g, err);
        if (st)
            return st;
    }
    return BP_OK;
}

typedef struct {
    ctx_t *c;
    bool any, via;
    int best;
    size_t best_idx;
} dep_acc_t;

static bool dep_visit(void *vctx, int buf, size_t idx)
{
    dep_acc_t *d = vctx;
    ctx_t *c = d->c;
    if (!differs(&c->A[buf], &c->B[buf], idx, c->o))
        return true;
    int32_t packed = c->oop[buf][idx];
    int org = packed >> 1;
    size_t oi = c->oidx[buf][idx];
    if (!d->any || org < d->best || (org == d->best && oi < d->best_idx)) {
        d->best = org;
        d->best_idx = oi;
        d->via = packed & 1;
    }
    d->any = true;
    return true;
}

/* The oracle's value of op i on a's inputs, reusing a side that is the
 * oracle. */
static bp_status oracle_op(ctx_t *c, const bp_explain_side_t *a, const bp_explain_side_t *b,
                           size_t i, bp_error_t *err)
{
    bp_backend_t *o = c->o->oracle;
    if (b->be == o && c->iso[i].data)
        return bp_buf_copy(&c->orc[i], &c->iso[i], err);
    if (a->be == o)
        return bp_buf_copy(&c->orc[i], &c->A[i], err);
    return bp_backend_run_op(o, c->p, i, c->dt, c->A, &c->orc[i], err);
}

static void verdicts(ctx_t *c, size_t i)
{
    bp_explain_op_t *r = &c->x->ops[i];
    const bp_buf_t *bv = c->iso[i].data ? &c->iso[i] : &c->B[i];
    bp_dtype_t dt = c->A[i].dtype;
    r->verdicts_done = true;
    for (size_t e = 0; e < c->A[i].numel; e++) {
        bool d = differs(&c->A[i], &c->B[i], e, c->o);
        bool intro = c->iso[i].data ? differs(&c->A[i], bv, e, c->o)
                                    : d && c->oop[i][e] >> 1 == (int32_t)i &&
                                          c->oidx[i][e] == e;
        if (!d || !intro)
            continue;
        uint64_t o = bp_buf_bits(&c->orc[i], e), xa = bp_buf_bits(&c->A[i], e),
                 xb = bp_buf_bits(bv, e);
        uint64_t ua = bp_ulp_distance(dt, xa, o), ub = bp_ulp_distance(dt, xb, o);
        r->verdicts[verdict_of(dt, xa, xb, o)]++;
        if (ua > r->max_ulp_a)
            r->max_ulp_a = ua;
        if (ub > r->max_ulp_b)
            r->max_ulp_b = ub;
    }
}

/* Counts and origins of op i's mismatches. */
static bp_status attribute(ctx_t *c, size_t i, bool *need_oracle, bp_error_t *err)
{
    const bp_probe_t *p = c->p;
    bp_explain_op_t *r = &c->x->ops[i];
    const bp_buf_t *A = &c->A[i], *B = &c->B[i], *I = c->iso[i].data ? &c->iso[i] : NULL;
    r->total = A->numel;
    *need_oracle = false;
    for (size_t e = 0; e < A->numel; e++) {
        bool d = differs(A, B, e, c->o);
        bool id = I && differs(A, I, e, c->o);
        if (!d) {
            r->masked += id;
            continue;
        }
        if (!c->oop[i]) {
            c->oop[i] = malloc(A->numel * sizeof *c->oop[i]);
            c->oidx[i] = malloc(A->numel * sizeof *c->oidx[i]);
            if (!c->oop[i] || !c->oidx[i])
                return bp_error_set(err, BP_ENOMEM, "out of memory");
        }
        dep_acc_t acc = {.c = c};
        bp_explain_deps(p, c->x->metas, i, e, dep_visit, &acc);
        if (acc.any) {
            c->oop[i][e] = (int32_t)(acc.best * 2 +
                                     (acc.via ||
                                      bp_op_info(p->ops[i].kind)->kind == BP_KIND_REDUCTION));
            c->oidx[i][e] = acc.best_idx;
        } else {
            c->oop[i][e] = (int32_t)(i * 2);
            c->oidx[i][e] = e;
            *need_oracle = true;
        }
        r->e2e++;
        bool intro = I ? id : !acc.any;
        if (!intro) {
            r->inherited++;
            continue;
        }
        r->introduced++;
        *need_oracle = true;
        uint64_t u = bp_ulp_distance(A->dtype, bp_buf_bits(A, e), bp_buf_bits(I ? I : B, e));
        if (r->introduced == 1 || u > r->max_ulp) {
            r->max_ulp = u;
            r->max_ulp_idx = e;
        }
    }
    return BP_OK;
}

/* Whether running p in fp64 changes some op other than a cast: only then
 * does the fp64 reference say more than the oracle's own end result. */
static bool ref_useful(ctx_t *c, const bp_probe_t *p64, bp_meta_t *m64)
{
    bp_error_t err = {0};
    if (bp_probe_infer(p64, BP_F64, m64, &err))
        return false;
    for (size_t i = 0; i < c->p->nops; i++)
        if (c->p->ops[i].kind != BP_OP_CAST && m64[i].dtype != c->x->metas[i].dtype)
            return true;
    return false;
}

static bp_status end_results(ctx_t *c, const bp_explain_side_t *a,
                             const bp_explain_side_t *b, bp_error_t *err)
{
    bp_backend_t *o = c->o->oracle;
    const bp_probe_t *p = c->p;
    bp_status st = BP_OK;
    if (!o)
        return BP_OK;
    c->end = bufs_new(p->nops);
    if (!c->end)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    const bp_buf_t *same = a->be == o ? c->A : b->be == o ? c->B : NULL;
    for (size_t i = 0; same && !st && i < p->nops; i++)
        st = bp_buf_copy(&c->end[i], &same[i], err);
    if (!same)
        st = bp_backend_run(o, p, c->dt, c->end, err);
    if (st)
        return st;
    c->x->has_end = true;
    bp_meta_t *m64 = calloc(p->nops ? p->nops : 1, sizeof *m64);
    if (!m64)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    /* The same definition, allowed to run in fp64 (a shallow copy). */
    bp_probe_t p64 = *p;
    p64.dtypes |= 1u << BP_F64;
    if (ref_useful(c, &p64, m64)) {
        c->ref = bufs_new(p->nops);
        if (!c->ref)
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
        else
            st = bp_backend_run(o, &p64, BP_F64, c->ref, err);
        c->x->has_ref = !st;
    }
    free(m64);
    return st;
}

static void closeness(ctx_t *c, size_t j, size_t e, bp_explain_elem_t *el)
{
    bp_dtype_t dt = c->A[j].dtype;
    el->closer = -1;
    if (c->x->has_end) {
        el->has_end = true;
        el->end = bp_buf_bits(&c->end[j], e);
        el->end_ulp_a = bp_ulp_distance(dt, el->a, el->end);
        el->end_ulp_b = bp_ulp_distance(dt, el->b, el->end);
        el->closer = el->end_ulp_a < el->end_ulp_b ? 0 : el->end_ulp_b < el->end_ulp_a ? 1 : 2;
        /* at one distance, the side with the end result's bits (the sign
         * of its zero) is closer */
        if (el->closer == 2)
            el->closer = verdict_of(dt, el->a, el->b, el->end) == BP_VERDICT_A   ? 0
                         : verdict_of(dt, el->a, el->b, el->end) == BP_VERDICT_B ? 1
                                                                                 : 2;
    }
    if (c->x->has_ref) {
        el->has_ref = true;
        el->ref = bp_buf_get(&c->ref[j], e);
        el->ref_ulp_a = bp_explain_frac_ulp(dt, bp_buf_get(&c->A[j], e), el->ref);
        el->ref_ulp_b = bp_explain_frac_ulp(dt, bp_buf_get(&c->B[j], e), el->ref);
        el->closer = el->ref_ulp_a < el->ref_ulp_b ? 0 : el->ref_ulp_b < el->ref_ulp_a ? 1 : 2;
    }
}

static bp_status outputs(ctx_t *c, bp_error_t *err)
{
    const bp_probe_t *p = c->p;
    bp_explain_t *x = c->x;
    size_t cap = 0;
    for (size_t oi = 0; oi < p->noutputs; oi++) {
        int j = p->outputs[oi].buf;
        bp_explain_out_t *out = &x->outs[oi];
        out->buf = j;
        out->total = c->A[j].numel;
        out->first = x->nelems;
        out->by_origin = calloc(p->nops ? p->nops : 1, sizeof *out->by_origin);
        if (!out->by_origin)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        bp_cmp_opts_t co;
        bp_cmp_opts_init(&co);
        co.first_k = c->o->first_k;
        co.nan_payload = c->o->nan_payload;
        co.zero_sign_ignore = c->o->zero_sign_ignore;
        bp_status st = bp_compare(&c->A[j], &c->B[j], &p->outputs[oi].policy, &co,
                                  &out->cmp, err);
        if (st)
            return st;
        for (size_t e = 0; e < c->A[j].numel; e++) {
            if (!differs(&c->A[j], &c->B[j], e, c->o))
                continue;
            bp_explain_elem_t el = {.output = (int)oi, .index = e};
            el.a = bp_buf_bits(&c->A[j], e);
            el.b = bp_buf_bits(&c->B[j], e);
            el.ulp = bp_ulp_distance(c->A[j].dtype, el.a, el.b);
            el.origin = c->oop[j][e] >> 1;
            el.via_reduction = c->oop[j][e] & 1;
            el.origin_index = c->oidx[j][e];
            out->e2e++;
            out->by_origin[el.origin]++;
            closeness(c, (size_t)j, e, &el);
            if (el.closer >= 0)
                out->closer[el.closer]++;
            if (out->nfirst >= c->o->first_k)
                continue;
            size_t k = (size_t)el.origin, oe = el.origin_index;
            el.oa = bp_buf_bits(&c->A[k], oe);
            el.ob = bp_buf_bits(c->iso[k].data ? &c->iso[k] : &c->B[k], oe);
            if (c->orc[k].data) {
                bp_dtype_t odt = c->A[k].dtype;
                el.has_oracle = true;
                el.oo = bp_buf_bits(&c->orc[k], oe);
                el.ulp_a = bp_ulp_distance(odt, el.oa, el.oo);
                el.ulp_b = bp_ulp_distance(odt, el.ob, el.oo);
                el.verdict = verdict_of(odt, el.oa, el.ob, el.oo);
            }
            if (x->nelems == cap) {
                size_t nc = cap ? cap * 2 : 16;
                bp_explain_elem_t *ne = realloc(x->elems, nc * sizeof *ne);
                if (!ne)
                    return bp_error_set(err, BP_ENOMEM, "out of memory");
                x->elems = ne;
                cap = nc;
            }
            x->elems[x->nelems++] = el;
            out->nfirst++;
        }
    }
    return BP_OK;
}

static bp_status explain_all(ctx_t *c, const bp_explain_side_t *a, const bp_explain_side_t *b,
                             bp_error_t *err)
{
    const bp_probe_t *p = c->p;
    bp_status st = side_bufs(c, a, &c->A, err);
    if (!st)
        st = side_bufs(c, b, &c->B, err);
    for (size_t i = 0; !st && i < p->nops; i++) {
        bool need = false;
        if (b->be)
            st = bp_backend_run_op(b->be, p, i, c->dt, c->A, &c->iso[i], err);
        if (!st)
            st = attribute(c, i, &need, err);
        if (!st && need && c->o->oracle) {
            st = oracle_op(c, a, b, i, err);
            if (!st)
                verdicts(c, i);
        }
    }
    if (!st)
        st = end_results(c, a, b, err);
    if (!st)
        st = outputs(c, err);
    return st;
}

bp_status bp_explain_run(const bp_probe_t *p, bp_dtype_t dt,
                         const bp_explain_side_t *a, const bp_explain_side_t *b,
                         const bp_explain_opts_t *o, bp_explain_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    if ((!a->be == !a->bufs) || (!b->be == !b->bufs))
        return bp_error_set(err, BP_EINTERNAL, "explain: a side needs a backend or buffers");
    size_t n = p->nops ? p->nops : 1;
    out->p = p;
    out->dtype = dt;
    out->label_a = strdup(a->label);
    out->label_b = strdup(b->label);
    out->source_a = a->source ? strdup(a->source) : NULL;
    out->source_b = b->source ? strdup(b->source) : NULL;
    out->isolated = b->be != NULL;
    out->has_oracle = o->oracle != NULL;
    out->oracle_is_a = o->oracle && a->be == o->oracle;
    out->oracle_is_b = o->oracle && b->be == o->oracle;
    out->ops = calloc(n, sizeof *out->ops);
    out->metas = calloc(n, sizeof *out->metas);
    out->outs = calloc(p->noutputs ? p->noutputs : 1, sizeof *out->outs);
    ctx_t c = {.p = p, .dt = dt, .o = o, .x = out};
    c.iso = bufs_new(n);
    c.orc = bufs_new(n);
    c.oop = calloc(n, sizeof *c.oop);
    c.oidx = calloc(n, sizeof *c.oidx);
    bp_status st = BP_OK;
    if (!out->label_a || !out->label_b || !out->ops || !out->metas || !out->outs ||
        !c.iso || !c.orc || !c.oop || !c.oidx)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = bp_probe_infer(p, dt, out->metas, err);
    if (!st)
        st = explain_all(&c, a, b, err);
    bufs_del(c.A, c.A ? p->nops : 0);
    bufs_del(c.B, c.B ? p->nops : 0);
    bufs_del(c.iso, c.iso ? p->nops : 0);
    bufs_del(c.orc, c.orc ? p->nops : 0);
    bufs_del(c.end, c.end ? p->nops : 0);
    bufs_del(c.ref, c.ref ? p->nops : 0);
    for (size_t i = 0; i < p->nops && c.oop && c.oidx; i++) {
        free(c.oop[i]);
        free(c.oidx[i]);
    }
    free(c.oop);
    free(c.oidx);
    if (st)
        bp_explain_free(out);
    return st;
}

void bp_explain_free(bp_explain_t *x)
{
    if (x->outs)
        for (size_t i = 0; x->p && i < x->p->noutputs; i++) {
            free(x->outs[i].by_origin);
            bp_cmp_free(&x->outs[i].cmp);
        }
    free(x->outs);
    free(x->ops);
    free(x->metas);
    free(x->elems);
    free(x->label_a);
    free(x->label_b);
    free(x->source_a);
    free(x->source_b);
    memset(x, 0, sizeof *x);
}
