/* The oracle's result of the probed rows (inv_engine.h).
 *
 * matmul and sum go through the oracle backend's op table (exact dot
 * products and sums, rounded once: mpfr_dot, mpfr_sum).  The ops it does
 * not have yet are computed here with MPFR at WORK bits: sums and dot
 * products exactly (their operands are dtype values), exp, log and sqrt
 * at WORK bits (so the one final rounding to the result dtype is the
 * correct one unless the exact value lies within 2^-WORK of a rounding
 * boundary), then rounded once by the oracle's own rounding
 * (bp_oracle_round: the format's range, subnormals included):
 *   mean         sum(x) / h
 *   rms_norm     w * x / sqrt(sum(x^2) / h + eps)     (eps = 1e-6 as a float)
 *   softmax      exp(x - max) / sum(exp(x - max))
 *   log_softmax  (x - max) - log(sum(exp(x - max)))    (fp32)
 *   attention    softmax(q . k_j / sqrt(d)) . v         (per head)
 * The axis does not enter: every configuration computes one function. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "inv_engine.h"
#include "inv_formula.h"
#include "op.h"
#include "oracle_mpfr.h"

#define WORK 320

typedef struct {
    const bp_inv_problem_t *p;
    const void *x, *w, *k, *v; /* inputs in the dtype */
    void *out;
    bp_dtype_t out_dt;
} ctx_t;

static void load(mpfr_t v, bp_dtype_t dt, const void *data, size_t i)
{
    mpfr_set_d(v, bp_dtype_bits_to_double(dt, bp_dtype_load_bits(dt, data, i)),
               MPFR_RNDN); /* exact: every dtype here fits a double */
}

static void put(bp_oracle_ws_t *ws, const ctx_t *c, size_t i, mpfr_srcptr val)
{
    int inex = mpfr_set(ws->r, val, MPFR_RNDN);
    bp_dtype_store_bits(c->out_dt, c->out, i, bp_oracle_round(ws, inex));
}

/* One row of a row op: row r of x (h elements). */
static void row(bp_oracle_ws_t *ws, const ctx_t *c, size_t r)
{
    const bp_inv_problem_t *p = c->p;
    size_t h = (size_t)p->n, base = r * h;
    bp_dtype_t dt = p->dtype;
    mpfr_t s, t, mx, u;
    mpfr_inits2(WORK, s, t, mx, u, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    switch (p->op) {
    case BP_INV_MEAN:
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        mpfr_div_ui(s, s, (unsigned long)h, MPFR_RNDN);
        put(ws, c, r, s);
        break;
    case BP_INV_RMS_NORM:
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            mpfr_sqr(t, t, MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        mpfr_div_ui(s, s, (unsigned long)h, MPFR_RNDN);
        mpfr_add_d(s, s, (double)BP_INV_RMS_EPS, MPFR_RNDN);
        mpfr_rec_sqrt(s, s, MPFR_RNDN);
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            load(u, dt, c->w, q);
            mpfr_mul(t, t, u, MPFR_RNDN);
            mpfr_mul(t, t, s, MPFR_RNDN);
            put(ws, c, base + q, t);
        }
        break;
    default: /* softmax, log_softmax */
        mpfr_set_inf(mx, -1);
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            mpfr_max(mx, mx, t, MPFR_RNDN);
        }
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            mpfr_sub(t, t, mx, MPFR_RNDN);
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        if (p->op == BP_INV_LOG_SOFTMAX)
            mpfr_log(s, s, MPFR_RNDN);
        for (size_t q = 0; q < h; q++) {
            load(t, dt, c->x, base + q);
            mpfr_sub(t, t, mx, MPFR_RNDN);
            if (p->op == BP_INV_SOFTMAX) {
                mpfr_exp(t, t, MPFR_RNDN);
                mpfr_div(t, t, s, MPFR_RNDN);
            } else {
                mpfr_sub(t, t, s, MPFR_RNDN);
            }
            put(ws, c, base + q, t);
        }
    }
    mpfr_clears(s, t, mx, u, (mpfr_ptr)0);
}

/* One head of decoding attention: keys and values [L, heads, d]. */
static void head(bp_oracle_ws_t *ws, const ctx_t *c, size_t hd)
{
    const bp_inv_problem_t *p = c->p;
    size_t L = (size_t)p->k, d = (size_t)p->n, H = (size_t)p->heads;
    bp_dtype_t dt = p->dtype;
    mpfr_t *sc = malloc(L * sizeof *sc), *o = malloc(d * sizeof *o);
    mpfr_t t, u, mx, l, scale;
    if (!sc || !o) {
        free(sc);
        free(o);
        return;
    }
    mpfr_inits2(WORK, t, u, mx, l, scale, (mpfr_ptr)0);
    mpfr_set_ui(scale, (unsigned long)d, MPFR_RNDN);
    mpfr_rec_sqrt(scale, scale, MPFR_RNDN);
    mpfr_set_inf(mx, -1);
    for (size_t j = 0; j < L; j++) {
        mpfr_init2(sc[j], WORK);
        mpfr_set_zero(sc[j], 1);
        for (size_t i = 0; i < d; i++) {
            load(t, dt, c->x, hd * d + i);
            load(u, dt, c->k, (j * H + hd) * d + i);
            mpfr_mul(t, t, u, MPFR_RNDN);
            mpfr_add(sc[j], sc[j], t, MPFR_RNDN);
        }
        mpfr_mul(sc[j], sc[j], scale, MPFR_RNDN);
        mpfr_max(mx, mx, sc[j], MPFR_RNDN);
    }
    for (size_t i = 0; i < d; i++) {
        mpfr_init2(o[i], WORK);
        mpfr_set_zero(o[i], 1);
    }
    mpfr_set_zero(l, 1);
    for (size_t j = 0; j < L; j++) {
        mpfr_sub(t, sc[j], mx, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(l, l, t, MPFR_RNDN);
        for (size_t i = 0; i < d; i++) {
            load(u, dt, c->v, (j * H + hd) * d + i);
            mpfr_mul(u, u, t, MPFR_RNDN);
            mpfr_add(o[i], o[i], u, MPFR_RNDN);
        }
        mpfr_clear(sc[j]);
    }
    for (size_t i = 0; i < d; i++) {
        mpfr_div(o[i], o[i], l, MPFR_RNDN);
        put(ws, c, hd * d + i, o[i]);
        mpfr_clear(o[i]);
    }
    mpfr_clears(t, u, mx, l, scale, (mpfr_ptr)0);
    free(sc);
    free(o);
}

static bp_status kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin, size_t end,
                        bp_error_t *err)
{
    (void)err;
    const ctx_t *c = vctx;
    for (size_t r = begin; r < end; r++) {
        if (c->p->op == BP_INV_ATTENTION)
            head(ws, c, r);
        else
            row(ws, c, r);
    }
    return BP_OK;
}

/* matmul and sum: the oracle backend's op table. */
static bp_status through_backend(const bp_inv_problem_t *p, int threads, void *out,
                                 bp_error_t *err)
{
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.threads = threads;
    bp_backend_t *be = NULL;
    bp_status st = bp_backend_open("oracle", &o, &be, err);
    if (st)
        return st;
    bool mm = p->op == BP_INV_MATMUL;
    bp_buf_t a = {0}, b = {0}, c = {0};
    int64_t sa[2] = {p->rows, mm ? p->k : p->n}, sb[2] = {p->k, p->n},
            sc[2] = {p->rows, mm ? p->n : 1};
    if (!(st = bp_buf_alloc(&a, p->dtype, 2, sa, err)) &&
        (!mm || !(st = bp_buf_alloc(&b, p->dtype, 2, sb, err))) &&
        !(st = bp_buf_shape(&c, p->dtype, mm ? 2 : 1, sc, err))) {
        bp_inv_fill(p->dtype, a.data, 0, p->rows, sa[1], p->seed, BP_INV_STREAM_PROBE);
        if (mm)
            bp_inv_fill(p->dtype, b.data, 0, p->k, p->n, p->seed, BP_INV_STREAM_B);
        c.data = out;
        bp_op_t op = {.kind = mm ? BP_OP_MATMUL : BP_OP_SUM, .has_axis = !mm, .axis = -1};
        bp_exec_t x = {.op = &op, .a = &a, .b = mm ? &b : NULL, .out = &c};
        st = bp_backend_exec(be, &x, err);
    }
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_backend_close(be);
    return st;
}

bp_status bp_inv_oracle(const bp_inv_problem_t *p, int threads, void *out,
                        bp_error_t *err)
{
    if (p->op == BP_INV_MATMUL || p->op == BP_INV_SUM)
        return through_backend(p, threads, out, err);
    bool attn = p->op == BP_INV_ATTENTION;
    int64_t xr = attn ? 1 : p->rows, xc = attn ? p->heads * p->n : p->n;
    size_t es = bp_dtype_info(p->dtype)->size;
    size_t kv = attn ? (size_t)(p->k * p->heads * p->n) : 0;
    void *x = malloc((size_t)(xr * xc) * es);
    void *w = p->op == BP_INV_RMS_NORM ? malloc((size_t)p->n * es) : NULL;
    void *k = attn ? malloc(kv * es) : NULL, *v = attn ? malloc(kv * es) : NULL;
    bp_status st;
    if (!x || (p->op == BP_INV_RMS_NORM && !w) || (attn && (!k || !v))) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    bp_inv_fill(p->dtype, x, 0, xr, xc, p->seed, BP_INV_STREAM_PROBE);
    if (w)
        bp_inv_fill(p->dtype, w, 0, 1, p->n, p->seed, BP_INV_STREAM_W);
    if (attn) {
        bp_inv_fill(p->dtype, k, 0, p->k, p->heads * p->n, p->seed, BP_INV_STREAM_B);
        bp_inv_fill(p->dtype, v, 0, p->k, p->heads * p->n, p->seed, BP_INV_STREAM_W);
    }
    ctx_t c = {.p = p, .x = x, .w = w, .k = k, .v = v, .out = out,
               .out_dt = bp_inv_result_dtype(p)};
    size_t units = attn ? (size_t)p->heads : (size_t)p->rows;
    st = bp_oracle_map(threads, 1, c.out_dt, units, kernel, &c, err);
done:
    free(x);
    free(w);
    free(k);
    free(v);
    return st;
}
