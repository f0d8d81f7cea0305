/* The stack's forward on a device (the model of stack.h, from the ops of
 * stack_ops.h) and the figures computed from two forwards' outputs. */
#include "stack_int.h"
#include "timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The activation buffers, in the order they are allocated and freed. */
#define NACT 15
static bp_buf_t *act(bp_stack_model_t *m, int i)
{
    bp_buf_t *all[NACT] = {&m->h,  &m->x,  &m->q, &m->k, &m->v,
                           &m->qr, &m->kr, &m->a, &m->o, &m->g,
                           &m->u,  &m->m,  &m->lg, &m->lp, &m->sc};
    return all[i];
}

void bp_stack_model_close(bp_stack_model_t *m)
{
    if (!m->ops)
        return;
    for (int i = 0; i < NACT; i++) {
        bp_buf_t *b = act(m, i);
        if (b->data || b->dev)
            m->ops->release(m->ops, b);
    }
    if (m->ids.data || m->ids.dev)
        m->ops->release(m->ops, &m->ids);
    memset(m, 0, sizeof *m);
}

bp_status bp_stack_model_open(bp_stack_model_t *m, const bp_stack_cfg_t *c,
                              bp_dtype_t dt, bp_stack_dev_t *ops, bp_buf_t *w,
                              uint64_t seed, int64_t p0, int64_t p1,
                              bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    m->cfg = c;
    m->dt = dt;
    m->ops = ops;
    m->w = w;
    m->p0 = p0;
    m->T = p1 - p0;
    int64_t T = m->T, H = c->hidden, I = c->intermediate, V = c->vocab;
    int64_t th[2] = {T, H}, ti[2] = {T, I}, tv[2] = {T, V},
            sc[3] = {c->heads, T, T}, t1[1] = {T};
    bp_status st = BP_OK;
    for (int i = 0; !st && i < NACT; i++) {
        bp_buf_t *b = act(m, i);
        if (b == &m->g || b == &m->u || b == &m->m)
            st = ops->alloc(ops, b, dt, 2, ti, err);
        else if (b == &m->lg)
            st = ops->alloc(ops, b, dt, 2, tv, err);
        else if (b == &m->lp)
            st = ops->alloc(ops, b, BP_F32, 2, tv, err);
        else if (b == &m->sc)
            st = ops->scratch_scores ? ops->alloc(ops, b, dt, 3, sc, err)
                                     : BP_OK;
        else
            st = ops->alloc(ops, b, dt, 2, th, err);
    }
    int32_t *ids = malloc((size_t)(T ? T : 1) * sizeof *ids);
    if (!st && !ids)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st) {
        bp_stack_tokens(c, seed, p0, T, ids);
        st = ops->alloc(ops, &m->ids, BP_I32, 1, t1, err);
    }
    if (!st)
        st = ops->put(ops, &m->ids, ids, err);
    free(ids);
    if (st) {
        bp_error_prefix(err, "setting up the forward of %lld tokens: ",
                        (long long)T);
        bp_stack_model_close(m);
    }
    return st;
}

/* ---- the row ops: the op table of the device's backend ------------------ */

/* op on dev->be, its operands and out already there. */
static bp_status exec(bp_stack_dev_t *dev, const bp_op_t *op, bp_buf_t *out, const bp_buf_t *a,
                      const bp_buf_t *b, bp_error_t *err)
{
    bp_exec_t x = {.op = op, .a = a, .b = b, .out = out};
    return bp_backend_exec(dev->be, &x, err);
}

bp_status bp_stack_rmsnorm(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x,
                           const bp_buf_t *w, double eps, bp_error_t *err)
{
    bp_dtype_t dt = x->dtype;
    int64_t T = x->shape[0], H = x->shape[1];
    bp_status e;
    if ((e = bp_stack_check_2d(w, 1, H, dt, "rmsnorm weight", err)) ||
        (e = bp_stack_check_2d(out, T, H, dt, "rmsnorm out", err)))
        return e;
    bp_op_t op = {.kind = BP_OP_RMS_NORM, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF},
                  .form = BP_FORM_FIXED, .has_eps = true, .eps = eps};
    return exec(dev, &op, out, x, w, err);
}

bp_status bp_stack_log_softmax(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x,
                               bp_error_t *err)
{
    bp_status e = bp_stack_check_2d(out, x->shape[0], x->shape[1], BP_F32, "log_softmax out",
                                   err);
    if (e)
        return e;
    bp_op_t op = {.kind = BP_OP_LOG_SOFTMAX, .a = {.kind = BP_ARG_BUF}, .form = BP_FORM_FIXED,
                  .has_axis = true, .axis = -1, .has_dtype = true, .dtype = BP_F32};
    return exec(dev, &op, out, x, NULL, err);
}

bp_status bp_stack_embed(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *table,
                         const bp_buf_t *ids, bp_error_t *err)
{
    bp_status e = bp_stack_check_2d(out, (int64_t)ids->numel, table->shape[1], table->dtype,
                                   "embedding out", err);
    if (e)
        return e;
    bp_op_t op = {.kind = BP_OP_EMBEDDING, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF}};
    return exec(dev, &op, out, ids, table, err);
}

/* Rows [r0, r0 + n) of b ([rows, d]) as [n, 1, d], in place. */
static bp_buf_t rows_view(const bp_buf_t *b, int64_t r0, int64_t n)
{
    bp_buf_t v = *b;
    size_t off = (size_t)(r0 * b->shape[1]) * bp_dtype_info(b->dtype)->size;
    v.data = b->data ? (char *)b->data + off : NULL;
    v.dev = b->dev ? (char *)b->dev + off : NULL;
    v.ndim = 3;
    v.shape[0] = n;
    v.shape[1] = 1;
    v.shape[2] = b->shape[1];
    v.numel = (size_t)(n * b->shape[1]);
    return v;
}

/* b [T, H] as [T, heads, H / heads], in place. */
static bp_buf_t heads_view(const bp_buf_t *b, int64_t heads)
{
    bp_buf_t v = *b;
    v.ndim = 3;
    v.shape[1] = heads;
    v.shape[2] = b->shape[1] / heads;
    return v;
}

bp_status bp_stack_rope(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x, const bp_buf_t *cos,
                        const bp_buf_t *sin, int64_t row0, int64_t heads, bp_buf_t *scratch,
                        bp_error_t *err)
{
    bp_dtype_t dt = x->dtype;
    int64_t T = x->shape[0], H = x->shape[1], d = H / heads;
    bp_status e;
    if ((e = bp_stack_check_2d(out, T, H, dt, "rope out", err)) ||
        (e = bp_stack_check_2d(scratch, T, H, dt, "rope scratch", err)))
        return e;
    if (cos->ndim != 2 || cos->shape[1] != d || cos->dtype != dt || sin->ndim != 2 ||
        sin->shape[1] != d || sin->dtype != dt || row0 < 0 || row0 + T > cos->shape[0] ||
        sin->shape[0] != cos->shape[0])
        return bp_error_set(err, BP_EINTERNAL, "rope: caches do not cover rows %lld..%lld",
                            (long long)row0, (long long)(row0 + T - 1));
    bp_buf_t x3 = heads_view(x, heads), o3 = heads_view(out, heads),
             r3 = heads_view(scratch, heads), c3 = rows_view(cos, row0, T),
             s3 = rows_view(sin, row0, T);
    bp_op_t mul = {.kind = BP_OP_MUL, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF}},
            add = {.kind = BP_OP_ADD, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF}},
            rot = {.kind = BP_OP_ROTATE_HALF, .a = {.kind = BP_ARG_BUF}};
    if ((e = exec(dev, &mul, &o3, &x3, &c3, err)) || (e = exec(dev, &rot, &r3, &x3, NULL, err)) ||
        (e = exec(dev, &mul, &r3, &r3, &s3, err)))
        return e;
    return exec(dev, &add, &o3, &o3, &r3, err);
}

static bp_status same3(const bp_buf_t *out, const bp_buf_t *a, const bp_buf_t *b,
                       const char *what, bp_error_t *err)
{
    if (a->numel != out->numel || b->numel != out->numel || a->dtype != out->dtype ||
        b->dtype != out->dtype)
        return bp_error_set(err, BP_EINTERNAL, "%s: operands differ", what);
    return BP_OK;
}

bp_status bp_stack_silu_mul(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *g,
                            const bp_buf_t *u, bp_error_t *err)
{
    bp_status e = same3(out, g, u, "silu_mul", err);
    if (e)
        return e;
    bp_op_t silu = {.kind = BP_OP_SILU, .form = BP_FORM_FIXED, .a = {.kind = BP_ARG_BUF}},
            mul = {.kind = BP_OP_MUL, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF}};
    if ((e = exec(dev, &silu, out, g, NULL, err)))
        return e;
    return exec(dev, &mul, out, out, u, err);
}

bp_status bp_stack_add(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *a, const bp_buf_t *b,
                       bp_error_t *err)
{
    bp_status e = same3(out, a, b, "add", err);
    if (e)
        return e;
    bp_op_t op = {.kind = BP_OP_ADD, .a = {.kind = BP_ARG_BUF}, .b = {.kind = BP_ARG_BUF}};
    return exec(dev, &op, out, a, b, err);
}

/* dev->mask for T positions: true on and below the diagonal. */
static bp_status causal_mask(bp_stack_dev_t *dev, int64_t T, bp_error_t *err)
{
    bp_buf_t *mk = &dev->mask;
    if ((mk->data || mk->dev) && mk->ndim == 2 && mk->shape[0] == T)
        return BP_OK;
    bp_stack_rows_release(dev);
    int64_t sh[2] = {T, T};
    uint8_t *h = malloc(T > 0 ? (size_t)(T * T) : 1);
    if (!h)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int64_t i = 0; i < T; i++)
        for (int64_t j = 0; j < T; j++)
            h[i * T + j] = j <= i;
    bp_status st = dev->alloc(dev, mk, BP_BOOL, 2, sh, err);
    if (!st)
        st = dev->put(dev, mk, h, err);
    free(h);
    return st;
}

void bp_stack_rows_release(bp_stack_dev_t *dev)
{
    if (dev->mask.data || dev->mask.dev)
        dev->release(dev, &dev->mask);
    memset(&dev->mask, 0, sizeof dev->mask);
}

bp_status bp_stack_attn_softmax(bp_stack_dev_t *dev, bp_buf_t *scores, int64_t heads, int64_t T,
                                int64_t d, bp_error_t *err)
{
    if (scores->numel < (size_t)(heads * T * T))
        return bp_error_set(err, BP_EINTERNAL, "attention scratch too small");
    bp_status st = causal_mask(dev, T, err);
    if (st)
        return st;
    bp_buf_t s = *scores;
    s.ndim = 3;
    s.shape[0] = heads;
    s.shape[1] = s.shape[2] = T;
    s.numel = (size_t)(heads * T * T);
    const bp_buf_t *cond = &dev->mask;
    bp_op_t div = {.kind = BP_OP_DIV, .a = {.kind = BP_ARG_BUF},
                   .b = {.kind = BP_ARG_SCALAR, .value = sqrt((double)d)}};
    bp_op_t where = {.kind = BP_OP_WHERE, .ninputs = 1, .a = {.kind = BP_ARG_BUF},
                     .b = {.kind = BP_ARG_SCALAR, .value = -INFINITY}};
    bp_op_t sm = {.kind = BP_OP_SOFTMAX, .a = {.kind = BP_ARG_BUF}, .form = BP_FORM_FIXED,
                  .has_axis = true, .axis = -1};
    bp_exec_t xw = {.op = &where, .a = &s, .inputs = &cond, .ninputs = 1, .out = &s};
    if ((st = exec(dev, &div, &s, &s, NULL, err)) || (st = bp_backend_exec(dev->be, &xw, err)))
        return st;
    return exec(dev, &sm, &s, &s, NULL, err);
}

static bp_status layer(bp_stack_model_t *m, int l, const bp_buf_t *cos,
                       const bp_buf_t *sin, bp_error_t *err)
{
    bp_stack_dev_t *o = m->ops;
    const bp_buf_t *w = m->w + 1 + 9 * (size_t)l;
    double eps = m->cfg->eps;
    bp_status st;
    if ((st = bp_stack_rmsnorm(o, &m->x, &m->h, &w[0], eps, err)) ||
        (st = o->linear(o, &m->q, &m->x, &w[1], err)) ||
        (st = o->linear(o, &m->k, &m->x, &w[2], err)) ||
        (st = o->linear(o, &m->v, &m->x, &w[3], err)) ||
        (st = bp_stack_rope(o, &m->qr, &m->q, cos, sin, m->p0, m->cfg->heads, &m->o,
                            err)) ||
        (st = bp_stack_rope(o, &m->kr, &m->k, cos, sin, m->p0, m->cfg->heads, &m->o,
                            err)) ||
        (st = o->attention(o, &m->a, &m->qr, &m->kr, &m->v, m->cfg->heads,
                           &m->sc, err)) ||
        (st = o->linear(o, &m->o, &m->a, &w[4], err)) ||
        (st = bp_stack_add(o, &m->h, &m->h, &m->o, err)) ||
        (st = bp_stack_rmsnorm(o, &m->x, &m->h, &w[5], eps, err)) ||
        (st = o->linear(o, &m->g, &m->x, &w[6], err)) ||
        (st = o->linear(o, &m->u, &m->x, &w[7], err)) ||
        (st = bp_stack_silu_mul(o, &m->m, &m->g, &m->u, err)) ||
        (st = o->linear(o, &m->o, &m->m, &w[8], err)) ||
        (st = bp_stack_add(o, &m->h, &m->h, &m->o, err)))
        return bp_error_prefix(err, "layer %d: ", l);
    return BP_OK;
}

static bp_status fetch(bp_stack_dev_t *o, const bp_buf_t *src, bp_buf_t *host,
                       bp_error_t *err)
{
    if (!host->data) {
        bp_status st =
            bp_buf_alloc(host, src->dtype, src->ndim, src->shape, err);
        if (st)
            return st;
    }
    return o->get(o, src, host->data, err);
}

bp_status bp_stack_forward(bp_stack_model_t *m, const bp_buf_t *cos,
                           const bp_buf_t *sin, bp_buf_t *hidden,
                           bp_buf_t *logits, bp_buf_t *logp, double *seconds,
                           bp_error_t *err)
{
    bp_stack_dev_t *o = m->ops;
    size_t L = (size_t)m->cfg->layers;
    double t0 = bp_timing_now();
    bp_status st = bp_stack_embed(o, &m->h, &m->w[0], &m->ids, err);
    for (size_t l = 0; !st && l < L; l++) {
        st = layer(m, (int)l, cos, sin, err);
        if (!st && hidden)
            st = fetch(o, &m->h, &hidden[l], err);
    }
    if (!st)
        st = bp_stack_rmsnorm(o, &m->x, &m->h, &m->w[1 + 9 * L], m->cfg->eps, err);
    if (!st)
        st = o->linear(o, &m->lg, &m->x, &m->w[2 + 9 * L], err);
    if (!st)
        st = bp_stack_log_softmax(o, &m->lp, &m->lg, err);
    if (!st)
        st = o->sync(o, err);
    if (seconds)
        *seconds = bp_timing_now() - t0;
    if (!st && logits)
        st = fetch(o, &m->lg, logits, err);
    if (!st && logp)
        st = fetch(o, &m->lp, logp, err);
    return st;
}

void bp_stack_final_metrics(const bp_buf_t *la, const bp_buf_t *lb,
                            const bp_buf_t *pa, const bp_buf_t *pb,
                            size_t *agree, double *mean_kl, double *max_kl)
{
    size_t T = (size_t)la->shape[0], V = (size_t)la->shape[1];
    const float *a = pa->data, *b = pb->data;
    double sum = 0.0, most = 0.0;
    *agree = 0;
    for (size_t t = 0; t < T; t++) {
        size_t ia = 0, ib = 0;
        double ma = -INFINITY, mb = -INFINITY, kl = 0.0;
        for (size_t j = 0; j < V; j++) {
            double x = bp_buf_get(la, t * V + j), y = bp_buf_get(lb, t * V + j);
            if (x > ma)
                ma = x, ia = j;
            if (y > mb)
                mb = y, ib = j;
            double lpa = a[t * V + j], lpb = b[t * V + j];
            kl += exp(lpa) * (lpa - lpb);
        }
        *agree += ia == ib;
        sum += kl;
        most = kl > most ? kl : most;
    }
    *mean_kl = T ? sum / (double)T : 0.0;
    *max_kl = most;
}

void bp_stack_rms(const bp_buf_t *a, const bp_buf_t *b, double *diff,
                  double *ref)
{
    double sd = 0.0, sr = 0.0;
    for (size_t i = 0; i < a->numel; i++) {
        double x = bp_buf_get(a, i), y = bp_buf_get(b, i);
        sd += (x - y) * (x - y);
        sr += x * x;
    }
    double n = a->numel ? (double)a->numel : 1.0;
    *diff = sqrt(sd / n);
    *ref = sqrt(sr / n);
}
