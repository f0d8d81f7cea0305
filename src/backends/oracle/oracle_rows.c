/* The oracle's reductions along an axis and fused row ops (oracle_rows.h).
 *
 * Sums that can be held exactly are: mean (exact sum, one correctly rounded
 * division), cumsum (exact running sums), bmm (exact dot products): each
 * result is correctly rounded; baddbmm rounds beta * input + alpha * (the
 * exact dot product) once (input not read where beta is 0, as PyTorch's
 * kernels), addmm the same, linear bias + (the exact dot product) once.  The ops with exp, log, sqrt or a division of inexact values
 * (softmax, log_softmax, logsumexp, var, rms_norm, layer_norm, sdpa) and prod are evaluated with WORK-bit intermediates and
 * rounded once: the result is the correctly rounded value unless the exact
 * one lies within about 2^-(WORK-20) (relative) of a rounding boundary.
 * amax and amin select an element (NaN if any is NaN).  Integer results
 * (amax, amin, prod, cumsum) are exact and wrap as int64 does.  The op's
 * formulation (mean's order, the roundings of rms_norm's and softmax's
 * `fixed`) and sdpa's splitting of the scale into sqrt(scale) on q and k
 * are ignored: the oracle says what the value is.
 * eps, correction, scale and the causal mask are part of the value. */
#include "oracle_rows.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "oracle_mpfr.h"

#define WORK 320
#define EXACT 2400 /* a sum of up to 2^40 elements of any dtype, exactly */

typedef struct {
    const bp_op_t *op;
    const bp_buf_t *a, *b, *c; /* operands: x (q), weight (k), bias (v) */
    bp_buf_t *out;
    size_t outer, len, inner;  /* rows: outer * inner, len values each */
    size_t m, k, n;            /* bmm: [m, k] x [k, n]; sdpa: L, E / S, Ev */
    bool b_t;                  /* linear: b is [n, k], read transposed */
    double alpha, beta;        /* baddbmm, addmm (linear: 1, 1) */
    int ondim;                 /* baddbmm, addmm, linear: the output's */
    size_t oshape[BP_MAXDIM];  /* shape, and its input's (bias's) strides */
    int64_t cstride[BP_MAXDIM]; /* over it (0: broadcast) */
} row_ctx_t;

static size_t at(const row_ctx_t *c, size_t row, size_t t)
{
    size_t o = row / c->inner, i = row % c->inner;
    return (o * c->len + t) * c->inner + i;
}

static void put(bp_oracle_ws_t *ws, bp_buf_t *out, size_t i, mpfr_t v)
{
    int inex = mpfr_set(ws->r, v, ws->rnd);
    bp_dtype_store_bits(out->dtype, out->data, i, bp_oracle_round(ws, inex));
}

/* Element i of b as an integer of dtype dt: a float converted as a cast to
 * dt does on x86 (truncated; NaN and out of range: the most negative). */
static int64_t ival(const bp_buf_t *b, size_t i, bp_dtype_t dt)
{
    if (!bp_dtype_is_int(b->dtype)) {
        double v = bp_buf_get(b, i), lim = dt == BP_I32 ? 0x1p31 : 0x1p63;
        if (isnan(v) || v >= lim || v < -lim)
            return dt == BP_I32 ? INT32_MIN : INT64_MIN;
        return (int64_t)v;
    }
    uint64_t bits = bp_dtype_load_bits(b->dtype, b->data, i);
    return b->dtype == BP_I32 ? (int64_t)(int32_t)(uint32_t)bits : (int64_t)bits;
}

/* amax, amin, prod, cumsum of integers: exact, wrapping. */
static void int_row(const row_ctx_t *c, size_t row)
{
    bp_op_kind_t k = c->op->kind;
    uint64_t acc = k == BP_OP_PROD ? 1 : 0;
    int64_t best = k == BP_OP_AMAX ? INT64_MIN : INT64_MAX;
    for (size_t t = 0; t < c->len; t++) {
        int64_t v = ival(c->a, at(c, row, t), c->out->dtype);
        if (k == BP_OP_PROD)
            acc *= (uint64_t)v;
        else if (k == BP_OP_CUMSUM) {
            acc += (uint64_t)v;
            bp_dtype_store_bits(c->out->dtype, c->out->data, at(c, row, t), acc);
        } else
            best = k == BP_OP_AMAX ? (v > best ? v : best) : (v < best ? v : best);
    }
    if (k == BP_OP_PROD)
        bp_dtype_store_bits(c->out->dtype, c->out->data, row, acc);
    else if (k != BP_OP_CUMSUM)
        bp_dtype_store_bits(c->out->dtype, c->out->data, row, (uint64_t)best);
}

/* One row of a reduction or softmax-like op. */
/* s = the sum of (v[i] - m)^2 over the row, each step rounded to the
 * working precision; with mean, m is first the row's mean (else as given). */
static void sq_dev(mpfr_t s, mpfr_t m, mpfr_t t, mpfr_t *v, size_t n, bool mean)
{
    if (mean) {
        mpfr_set_zero(s, 1);
        for (size_t i = 0; i < n; i++)
            mpfr_add(s, s, v[i], MPFR_RNDN);
        mpfr_div_ui(m, s, (unsigned long)n, MPFR_RNDN);
    }
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_sub(t, v[i], m, MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
}

static void float_row(bp_oracle_ws_t *ws, const row_ctx_t *c, size_t row, mpfr_t *v,
                      mpfr_t s, mpfr_t m, mpfr_t t)
{
    const bp_op_t *op = c->op;
    size_t n = c->len;
    bool nan = false;
    for (size_t i = 0; i < n; i++) {
        bp_oracle_load(v[i], c->a->dtype, c->a->data, at(c, row, i));
        nan = nan || mpfr_nan_p(v[i]);
    }
    switch (op->kind) {
    case BP_OP_AMAX:
    case BP_OP_AMIN:
        mpfr_set_inf(m, op->kind == BP_OP_AMAX ? -1 : 1);
        for (size_t i = 0; i < n; i++)
            if (op->kind == BP_OP_AMAX ? mpfr_greaterequal_p(v[i], m)
                                       : mpfr_lessequal_p(v[i], m))
                mpfr_set(m, v[i], MPFR_RNDN);
        if (nan)
            mpfr_set_nan(m);
        put(ws, c->out, row, m);
        return;
    case BP_OP_MEAN:
    case BP_OP_CUMSUM:
        if (op->kind == BP_OP_CUMSUM && c->a->ndim == 0) { /* a copy: -0.0 kept */
            put(ws, c->out, at(c, row, 0), v[0]);
            return;
        }
        mpfr_set_prec(s, EXACT);
        mpfr_set_zero(s, 1);
        for (size_t i = 0; i < n; i++) {
            mpfr_add(s, s, v[i], MPFR_RNDN);
            if (op->kind == BP_OP_CUMSUM)
                put(ws, c->out, at(c, row, i), s);
        }
        if (op->kind == BP_OP_MEAN) {
            int inex = mpfr_div_ui(ws->r, s, (unsigned long)n, ws->rnd);
            bp_dtype_store_bits(c->out->dtype, c->out->data, row, bp_oracle_round(ws, inex));
        }
        mpfr_set_prec(s, WORK);
        return;
    case BP_OP_PROD:
        mpfr_set_ui(s, 1, MPFR_RNDN);
        for (size_t i = 0; i < n; i++)
            mpfr_mul(s, s, v[i], MPFR_RNDN);
        put(ws, c->out, row, s);
        return;
    case BP_OP_VAR: {
        double corr = op->has_correction ? op->correction : 1.0;
        sq_dev(s, m, t, v, n, true);
        double div = (double)n - corr;
        mpfr_set_d(t, div > 0 ? div : 0, MPFR_RNDN);
        mpfr_div(s, s, t, MPFR_RNDN);
        put(ws, c->out, row, s);
        return;
    }
    default: /* softmax, log_softmax, logsumexp */
        break;
    }
    mpfr_set_inf(m, -1);
    for (size_t i = 0; i < n; i++)
        if (mpfr_greater_p(v[i], m))
            mpfr_set(m, v[i], MPFR_RNDN);
    if (mpfr_inf_p(m))
        mpfr_set_zero(m, 1); /* every x - m stays what x is */
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_sub(t, v[i], m, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    if (nan)
        mpfr_set_nan(s);
    if (op->kind == BP_OP_LOGSUMEXP) {
        mpfr_log(s, s, MPFR_RNDN);
        mpfr_add(s, s, m, MPFR_RNDN);
        put(ws, c->out, row, s);
        return;
    }
    if (op->kind == BP_OP_LOG_SOFTMAX)
        mpfr_log(s, s, MPFR_RNDN);
    for (size_t i = 0; i < n; i++) {
        mpfr_sub(t, v[i], m, MPFR_RNDN);
        if (op->kind == BP_OP_LOG_SOFTMAX) {
            mpfr_sub(t, t, s, MPFR_RNDN);
        } else {
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_div(t, t, s, MPFR_RNDN);
        }
        if (nan)
            mpfr_set_nan(t);
        put(ws, c->out, at(c, row, i), t);
    }
}

/* rms_norm, layer_norm: w * (x - mean) / sqrt(var + eps) + b over a row of
 * the last dimension (rms_norm: mean taken as 0, var as mean(x^2)). */
static void norm_row(bp_oracle_ws_t *ws, const row_ctx_t *c, size_t row, mpfr_t *v,
                     mpfr_t s, mpfr_t m, mpfr_t t)
{
    size_t n = c->len;
    bool rms = c->op->kind == BP_OP_RMS_NORM;
    for (size_t i = 0; i < n; i++)
        bp_oracle_load(v[i], c->a->dtype, c->a->data, row * n + i);
    mpfr_set_zero(m, 1); /* rms_norm: deviations from 0 */
    sq_dev(s, m, t, v, n, !rms);
    mpfr_div_ui(s, s, (unsigned long)n, MPFR_RNDN);
    mpfr_add_d(s, s, bp_op_norm_eps(c->op, c->a->dtype), MPFR_RNDN);
    mpfr_rec_sqrt(s, s, MPFR_RNDN);
    for (size_t i = 0; i < n; i++) {
        mpfr_sub(t, v[i], m, MPFR_RNDN);
        mpfr_mul(t, t, s, MPFR_RNDN);
        if (c->b) {
            bp_oracle_load(ws->x, c->b->dtype, c->b->data, i);
            mpfr_mul(t, t, ws->x, MPFR_RNDN);
        }
        if (c->c) {
            bp_oracle_load(ws->x, c->c->dtype, c->c->data, i);
            mpfr_add(t, t, ws->x, MPFR_RNDN);
        }
        put(ws, c->out, row * n + i, t);
    }
}

/* bmm row (batch t, row i): exact dot products, rounded once; baddbmm's,
 * addmm's and linear's add beta times c->c (their input or bias,
 * broadcast: c->cstride) to alpha times each product, rounded once. */
static void bmm_row(bp_oracle_ws_t *ws, const row_ctx_t *c, size_t row, mpfr_t s, mpfr_t t)
{
    size_t bt = row / c->m, i = row % c->m;
    mpfr_t al, be;
    mpfr_inits2(64, al, be, (mpfr_ptr)0);
    mpfr_set_d(al, c->alpha, MPFR_RNDN); /* exact */
    mpfr_set_d(be, c->beta, MPFR_RNDN);
    mpfr_set_prec(s, EXACT);
    for (size_t j = 0; j < c->n; j++) {
        mpfr_set_zero(s, 1);
        for (size_t p = 0; p < c->k; p++) {
            bp_oracle_load(ws->x, c->a->dtype, c->a->data, (bt * c->m + i) * c->k + p);
            bp_oracle_load(ws->y, c->b->dtype, c->b->data,
                           c->b_t ? (bt * c->n + j) * c->k + p : (bt * c->k + p) * c->n + j);
            mpfr_mul(t, ws->x, ws->y, MPFR_RNDN); /* exact at 2 * 64 bits */
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        size_t o = row * c->n + j;
        if (!c->c) {
            put(ws, c->out, o, s);
            continue;
        }
        int inex;
        if (mpfr_zero_p(be)) {
            inex = mpfr_mul(ws->r, s, al, ws->rnd);
        } else {
            size_t src = 0, rest = o;
            for (int d = c->ondim - 1; d >= 0; d--) {
                src += (rest % c->oshape[d]) * (size_t)c->cstride[d];
                rest /= c->oshape[d];
            }
            bp_oracle_load(ws->x, c->c->dtype, c->c->data, src);
            inex = mpfr_fmma(ws->r, be, ws->x, al, s, ws->rnd);
        }
        bp_dtype_store_bits(c->out->dtype, c->out->data, o, bp_oracle_round(ws, inex));
    }
    mpfr_set_prec(s, WORK);
    mpfr_clears(al, be, (mpfr_ptr)0);
}

/* sdpa row (batch t, query i): softmax(q k^T * scale + mask) v. */
static void sdpa_row(bp_oracle_ws_t *ws, const row_ctx_t *c, size_t row, mpfr_t *v,
                     mpfr_t s, mpfr_t m, mpfr_t t)
{
    size_t L = c->m, E = c->k, S = c->len, Ev = c->n, bt = row / L, i = row % L;
    const bp_buf_t *q = c->a, *k = c->b, *vv = c->c;
    double scale = bp_op_sdpa_scale(c->op, (int64_t)E);
    mpfr_set_inf(m, -1);
    size_t valid = c->op->is_causal ? (i + 1 < S ? i + 1 : S) : S;
    for (size_t j = 0; j < valid; j++) {
        mpfr_set_zero(v[j], 1);
        for (size_t e = 0; e < E; e++) {
            bp_oracle_load(ws->x, q->dtype, q->data, (bt * L + i) * E + e);
            bp_oracle_load(ws->y, k->dtype, k->data, (bt * S + j) * E + e);
            mpfr_mul(t, ws->x, ws->y, MPFR_RNDN);
            mpfr_add(v[j], v[j], t, MPFR_RNDN);
        }
        mpfr_mul_d(v[j], v[j], scale, MPFR_RNDN);
        if (mpfr_greater_p(v[j], m))
            mpfr_set(m, v[j], MPFR_RNDN);
    }
    /* the mask is added (attn.add_(mask)): a masked score of +inf or NaN
     * (only non-finite inputs make one) poisons the row; a row whose
     * scores are all -inf is 0 (_safe_softmax) */
    bool poison = false, dead = mpfr_inf_p(m) && mpfr_sgn(m) < 0;
    for (size_t j = 0; j < valid && dead; j++)
        dead = !mpfr_nan_p(v[j]);
    for (size_t j = valid; j < S && !poison; j++) {
        mpfr_set_zero(t, 1);
        for (size_t e = 0; e < E; e++) {
            bp_oracle_load(ws->x, q->dtype, q->data, (bt * L + i) * E + e);
            bp_oracle_load(ws->y, k->dtype, k->data, (bt * S + j) * E + e);
            if (mpfr_number_p(ws->x) && mpfr_number_p(ws->y))
                continue; /* a finite product: the masked sum stays finite */
            mpfr_mul(ws->x, ws->x, ws->y, MPFR_RNDN);
            mpfr_add(t, t, ws->x, MPFR_RNDN);
        }
        mpfr_mul_d(t, t, scale, MPFR_RNDN);
        poison = mpfr_nan_p(t) || (mpfr_inf_p(t) && mpfr_sgn(t) > 0);
    }
    if (poison || dead) {
        if (poison)
            mpfr_set_nan(m);
        else
            mpfr_set_zero(m, 1);
        for (size_t e = 0; e < Ev; e++)
            put(ws, c->out, row * Ev + e, m);
        return;
    }
    mpfr_set_zero(s, 1);
    for (size_t j = 0; j < valid; j++) {
        mpfr_sub(v[j], v[j], m, MPFR_RNDN);
        mpfr_exp(v[j], v[j], MPFR_RNDN);
        mpfr_add(s, s, v[j], MPFR_RNDN);
    }
    for (size_t e = 0; e < Ev; e++) {
        mpfr_set_zero(m, 1);
        for (size_t j = 0; j < valid; j++) {
            bp_oracle_load(ws->x, vv->dtype, vv->data, (bt * S + j) * Ev + e);
            mpfr_mul(t, v[j], ws->x, MPFR_RNDN);
            mpfr_add(m, m, t, MPFR_RNDN);
        }
        if (valid)
            mpfr_div(m, m, s, MPFR_RNDN);
        put(ws, c->out, row * Ev + e, m);
    }
}

static bp_status row_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin, size_t end,
                            bp_error_t *err)
{
    const row_ctx_t *c = vctx;
    bp_op_kind_t k = c->op->kind;
    if (bp_dtype_is_int(c->out->dtype)) {
        for (size_t r = begin; r < end; r++)
            int_row(c, r);
        return BP_OK;
    }
    size_t nv = c->len ? c->len : 1;
    mpfr_t *v = malloc(nv * sizeof *v), s, m, t;
    if (!v)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (size_t i = 0; i < nv; i++)
        mpfr_init2(v[i], WORK);
    mpfr_inits2(WORK, s, m, t, (mpfr_ptr)0);
    for (size_t r = begin; r < end; r++) {
        if (k == BP_OP_RMS_NORM || k == BP_OP_LAYER_NORM)
            norm_row(ws, c, r, v, s, m, t);
        else if (k == BP_OP_BMM || k == BP_OP_BADDBMM || k == BP_OP_ADDMM ||
                 k == BP_OP_LINEAR)
            bmm_row(ws, c, r, s, t);
        else if (k == BP_OP_SDPA)
            sdpa_row(ws, c, r, v, s, m, t);
        else
            float_row(ws, c, r, v, s, m, t);
    }
    for (size_t i = 0; i < nv; i++)
        mpfr_clear(v[i]);
    mpfr_clears(s, m, t, (mpfr_ptr)0);
    free(v);
    return BP_OK;
}

bp_status bp_oracle_rows(int threads, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    row_ctx_t c = {.op = op, .out = x->out, .a = x->a, .b = x->b};
    size_t rows;
    if (op->kind == BP_OP_LAYER_NORM || op->kind == BP_OP_SDPA) {
        c.a = x->inputs[0];
        c.b = x->ninputs > 1 ? x->inputs[1] : NULL;
        c.c = x->ninputs > 2 ? x->inputs[2] : NULL;
    }
    c.alpha = 1;
    if (op->kind == BP_OP_BADDBMM || op->kind == BP_OP_ADDMM || op->kind == BP_OP_LINEAR) {
        bool lin = op->kind == BP_OP_LINEAR;
        if (lin ? x->ninputs != 2 && x->ninputs != 3 : x->ninputs != 3)
            return bp_error_set(err, BP_EINPUT, "%s takes inputs %s", bp_op_name(op->kind),
                                lin ? "[x, weight] or [x, weight, bias]"
                                : op->kind == BP_OP_ADDMM ? "[input, mat1, mat2]"
                                                          : "[input, batch1, batch2]");
        c.a = x->inputs[lin ? 0 : 1];
        c.b = x->inputs[lin ? 1 : 2];
        c.c = lin ? (x->ninputs > 2 ? x->inputs[2] : NULL) : x->inputs[0];
        c.b_t = lin;
        c.alpha = lin ? 1 : op->alpha;
        c.beta = lin ? 1 : op->beta;
        c.ondim = x->out->ndim;
        for (int d = 0; d < c.ondim; d++)
            c.oshape[d] = (size_t)x->out->shape[d];
        if (c.c && !bp_bcast_strides(c.c->ndim, c.c->shape, c.ondim, x->out->shape, c.cstride))
            return bp_error_set(err, BP_EINPUT, "%s's %s does not broadcast to its result",
                                bp_op_name(op->kind), lin ? "bias" : "input");
    }
    const bp_buf_t *a = c.a;
    if (!a)
        return bp_error_set(err, BP_EINPUT, "%s needs a tensor operand", bp_op_name(op->kind));
    int nd = a->ndim;
    if (op->kind == BP_OP_BMM || op->kind == BP_OP_BADDBMM) {
        c.m = (size_t)a->shape[1];
        c.k = (size_t)a->shape[2];
        c.n = (size_t)c.b->shape[2];
        rows = (size_t)a->shape[0] * c.m;
    } else if (op->kind == BP_OP_ADDMM || op->kind == BP_OP_LINEAR) {
        c.k = nd ? (size_t)a->shape[nd - 1] : 0;
        c.n = (size_t)c.b->shape[op->kind == BP_OP_LINEAR ? 0 : 1];
        c.m = c.n ? x->out->numel / c.n : 0; /* x's leading dimensions folded */
        rows = c.m;
        if (!c.m)
            c.m = 1;
    } else if (op->kind == BP_OP_SDPA) {
        c.m = (size_t)a->shape[nd - 2];
        c.k = (size_t)a->shape[nd - 1];
        c.len = (size_t)c.b->shape[nd - 2];
        c.n = (size_t)c.c->shape[nd - 1];
        rows = c.m * c.k > 0 ? a->numel / c.k : 0;
    } else if (op->kind == BP_OP_RMS_NORM || op->kind == BP_OP_LAYER_NORM) {
        c.len = nd ? (size_t)a->shape[nd - 1] : 1;
        c.inner = 1;
        rows = c.len ? a->numel / c.len : 0;
    } else {
        c.outer = c.inner = 1;
        c.len = a->numel;
        if (op->has_axis && nd > 0) {
            int ax;
            bp_status st = bp_axis_check(op->axis, nd, &ax, err);
            if (st)
                return st;
            c.outer = 1;
            for (int d = 0; d < ax; d++)
                c.outer *= (size_t)a->shape[d];
            c.len = (size_t)a->shape[ax];
            for (int d = ax + 1; d < nd; d++)
                c.inner *= (size_t)a->shape[d];
        }
        rows = c.outer * c.inner;
    }
    if (!c.inner)
        c.inner = 1;
    return bp_oracle_map(threads, 1, x->out->dtype, rows, row_kernel, &c, err);
}
