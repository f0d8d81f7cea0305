/* The oracle backend: every op computed correctly rounded to its output
 * dtype with MPFR (numeric core and threading in oracle_mpfr.c).
 *
 * Contract: an output element is the exact mathematical value of the op on
 * the exact values of its inputs (any dtype, integers included; scalars are
 * their double value), rounded once to nearest even in the output format,
 * with its exponent range, subnormals and overflow to infinity; NaN where
 * the value is undefined.  Consequences worth stating:
 * - div ignores its formulation: a / b is the true quotient even when the
 *   probe asks for a * (1/b); the oracle says what the answer is, not how a
 *   device reaches it.  Likewise sum ignores sequential/pairwise.
 * - arange element i is start + step*i computed exactly, rounded once; its
 *   length is the output's (the executor shapes it with bp_arange_length).
 * - uniform copies the counter generator's float values (they are data, not
 *   math), rounded to the output dtype.
 * - sum and matmul round the exact sum / dot product once (mpfr_sum,
 *   mpfr_dot), whatever accumulation order a device would use.
 * - rsqrt(-0) is -inf, as IEEE 754's rSqrt and 1/sqrt(-0) give (MPFR's
 *   mpfr_rec_sqrt says +inf).
 * - comparisons compare the exact values of their operands (a number as
 *   its double), not the values converted to a common dtype as PyTorch
 *   does: lt(x_fp16, 0.1) is x < 0.1, where PyTorch asks x < fp16(0.1);
 *   where picks the exact a or b and rounds it once to the result dtype.
 * - bool outputs are 1 for any value but zero (NaN included); fp8 outputs
 *   round once to the format, and a value beyond its largest finite one
 *   is infinity in e5m2 and NaN in e4m3fn, which has no infinity (PyTorch's
 *   non-saturating conversion gives the same).
 * - integer outputs (arange, cast, tensor, add, sub, mul, neg, pow, outer,
 *   sum, matmul, copies) are the exact value truncated toward zero and
 *   wrapped to the width; NaN and infinities become the most negative
 *   integer.  Integer pow with a negative exponent is the truncated exact
 *   value (0 unless the base is 1 or -1); 0 to a negative power is an error.
 * Results never depend on the thread count (see oracle_mpfr.h).  The costly
 * unary functions are evaluated once per distinct operand value, once per
 * backend (oracle_unique.h: results kept across ops), sin and cos of a value
 * together (mpfr_sin_cos), which changes no bit. */
#include "backend.h"

#include <gmp.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_mpfr.h"
#include "oracle_rows.h"
#include "oracle_tensor.h"
#include "oracle_unique.h"
#include "rng.h"

typedef struct {
    int threads;
    bp_oracle_cache_t *cache; /* results kept across ops; NULL: none */
    /* Held from a lookup in the kept results to the keeping of what it
     * missed (elementwise_unique): probes that run at once and take the
     * same values (RoPE's caches) evaluate them once, one after the
     * other, each evaluation spread over the threads. */
    pthread_mutex_t eval_mu;
} oracle_state_t;

static int nthreads(const bp_backend_t *be)
{
    return ((const oracle_state_t *)be->state)->threads;
}

/* ---- operands: a tensor read with numpy broadcasting, or a scalar ---- */

typedef enum { OPD_SCALAR, OPD_SAME, OPD_ONE, OPD_BCAST, OPD_ROW, OPD_COL }
    opd_mode_t;

typedef struct {
    opd_mode_t mode;
    const bp_buf_t *buf;
    double value;
    int ndim;                    /* the output's, for OPD_BCAST */
    int64_t shape[BP_MAXDIM];    /* the output's */
    int64_t stride[BP_MAXDIM];   /* in the operand, 0 where broadcast */
    size_t cols;                 /* OPD_ROW/OPD_COL: output columns */
} operand_t;

static bp_status operand_setup(operand_t *o, const bp_buf_t *buf,
                               const bp_arg_t *arg, const bp_buf_t *out,
                               const char *which, bp_error_t *err)
{
    memset(o, 0, sizeof *o);
    o->buf = buf;
    if (!buf) {
        if (arg->kind != BP_ARG_SCALAR)
            return bp_error_set(err, BP_EINPUT, "operand %s is missing",
                                which);
        o->mode = OPD_SCALAR;
        o->value = arg->value;
        return BP_OK;
    }
    if (!buf->data && buf->numel)
        return bp_error_set(err, BP_EINTERNAL, "operand %s has no data", which);
    if (bp_shape_equal(buf->ndim, buf->shape, out->ndim, out->shape)) {
        o->mode = OPD_SAME;
        return BP_OK;
    }
    if (buf->numel == 1) {
        o->mode = OPD_ONE;
        return BP_OK;
    }
    o->mode = OPD_BCAST;
    o->ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++)
        o->shape[d] = out->shape[d];
    if (!bp_bcast_strides(buf->ndim, buf->shape, out->ndim, out->shape, o->stride)) {
        char bs[128], os[128];
        bp_shape_format(buf->ndim, buf->shape, bs, sizeof bs);
        bp_shape_format(out->ndim, out->shape, os, sizeof os);
        return bp_error_set(err, BP_EINPUT,
                            "operand %s of shape %s does not broadcast to the "
                            "output shape %s", which, bs, os);
    }
    return BP_OK;
}

static size_t operand_index(const operand_t *o, size_t i)
{
    switch (o->mode) {
    case OPD_SAME: return i;
    case OPD_ROW: return i / o->cols;
    case OPD_COL: return i % o->cols;
    case OPD_BCAST: {
        size_t src = 0;
        for (int d = o->ndim - 1; d >= 0; d--) {
            size_t n = (size_t)o->shape[d];
            src += (i % n) * (size_t)o->stride[d];
            i /= n;
        }
        return src;
    }
    default: return 0;
    }
}

static void operand_load(const operand_t *o, mpfr_t v, size_t i)
{
    if (o->mode == OPD_SCALAR)
        mpfr_set_d(v, o->value, MPFR_RNDN);
    else
        bp_oracle_load(v, o->buf->dtype, o->buf->data, operand_index(o, i));
}

/* ---- elementwise ops ---- */

typedef struct {
    bp_op_kind_t kind;
    const bp_op_t *op;
    bp_buf_t *out;
    operand_t a, b;
    bool binary;
    operand_t cond; /* where: a where cond is true, else b */
    operand_t hi;   /* clamp_tensor with both bounds: max (b is min) */
} elem_ctx_t;

/* t = f(x) for the functions made of several operations, with an error of
 * at most a few units in t's last place. */
static void composite_eval(mpfr_t t, mpfr_srcptr x, const bp_op_t *op)
{
    mpfr_prec_t p = mpfr_get_prec(t) + 16;
    mpfr_t u, v;
    mpfr_inits2(p, u, v, (mpfr_ptr)0);
    switch (op->kind) {
    case BP_OP_SIGMOID: /* 1 / (1 + exp(-x)) */
    case BP_OP_SILU:    /* x / (1 + exp(-x)) */
        mpfr_neg(u, x, MPFR_RNDN);
        mpfr_exp(u, u, MPFR_RNDN);
        mpfr_add_ui(u, u, 1, MPFR_RNDN);
        if (op->kind == BP_OP_SIGMOID)
            mpfr_ui_div(t, 1, u, MPFR_RNDN);
        else
            mpfr_div(t, x, u, MPFR_RNDN);
        break;
    default: /* gelu, written without cancellation for large negative x */
        if (op->form == BP_FORM_TANH) {
            /* x/2 (1 + tanh(w)) = x / (1 + exp(-2w)),
             * w = sqrt(2/pi) (x + 0.044715 x^3) */
            mpfr_pow_ui(u, x, 3, MPFR_RNDN);
            mpfr_set_str(v, "0.044715", 10, MPFR_RNDN);
            mpfr_mul(u, u, v, MPFR_RNDN);
            mpfr_add(u, u, x, MPFR_RNDN);
            mpfr_const_pi(v, MPFR_RNDN);
            mpfr_ui_div(v, 2, v, MPFR_RNDN);
            mpfr_sqrt(v, v, MPFR_RNDN);
            mpfr_mul(u, u, v, MPFR_RNDN);
            mpfr_mul_si(u, u, -2, MPFR_RNDN);
            mpfr_exp(u, u, MPFR_RNDN);
            mpfr_add_ui(u, u, 1, MPFR_RNDN);
            mpfr_div(t, x, u, MPFR_RNDN);
        } else { /* x/2 (1 + erf(x / sqrt 2)) = x/2 erfc(-x / sqrt 2) */
            mpfr_sqrt_ui(v, 2, MPFR_RNDN);
            mpfr_div(u, x, v, MPFR_RNDN);
            mpfr_neg(u, u, MPFR_RNDN);
            mpfr_erfc(u, u, MPFR_RNDN);
            mpfr_mul(u, u, x, MPFR_RNDN);
            mpfr_div_2ui(t, u, 1, MPFR_RNDN);
        }
        break;
    }
    mpfr_clears(u, v, (mpfr_ptr)0);
}

/* Correctly rounded composite: evaluated with more and more bits until the
 * result's rounding is certain (Ziv's strategy); exact results (gelu(0),
 * sigmoid(0)) round at once. */
static int composite(bp_oracle_ws_t *ws, const bp_op_t *op)
{
    mpfr_ptr r = ws->r, x = ws->x;
    if (mpfr_nan_p(x)) {
        mpfr_set_nan(r);
        return 0;
    }
    mpfr_prec_t want = mpfr_get_prec(r);
    int inex = 0;
    /* A result below the format's normal range has fewer bits than r:
     * t must round once to those (bp_oracle_round's subnormalize would
     * round r's want bits a second time, not knowing on which side of r
     * the exact value lies when t fits r exactly: silu of a tiny x is
     * x/2 plus far less than an ulp, a tie for the subnormal). */
    const bp_dtype_info_t *in = bp_dtype_info(ws->out_dt);
    for (mpfr_prec_t p = want + 64;; p *= 2) {
        mpfr_t t;
        mpfr_init2(t, p);
        composite_eval(t, x, op);
        mpfr_prec_t bits = want;
        if (in->is_float && mpfr_regular_p(t)) {
            long bias = (1L << (in->exp_bits - 1)) - 1;
            long below = (2 - bias) - (long)mpfr_get_exp(t);
            if (below > 0)
                bits = want - below > MPFR_PREC_MIN ? want - below : MPFR_PREC_MIN;
        }
        bool ok = !mpfr_number_p(t) || mpfr_zero_p(t) ||
                  mpfr_can_round(t, p - 8, MPFR_RNDN, MPFR_RNDZ, bits + (ws->rnd == MPFR_RNDN));
        if (ok || p > 8192) {
            mpfr_t s;
            mpfr_init2(s, bits);
            inex = mpfr_set(s, t, ws->rnd);
            mpfr_set(r, s, MPFR_RNDN); /* exact: bits <= want */
            mpfr_clear(s);
            mpfr_clear(t);
            return inex;
        }
        mpfr_clear(t);
    }
}

/* torch.round(x, decimals): the multiple of 10^-decimals nearest x, ties
 * to even, rounded once to the output. */
static int round_decimals(bp_oracle_ws_t *ws, int64_t d)
{
    mpfr_ptr r = ws->r, x = ws->x;
    if (!mpfr_number_p(x) || mpfr_zero_p(x))
        return mpfr_set(r, x, ws->rnd);
    int64_t m = d < 0 ? -d : d;
    mpfr_prec_t p = 128 + 4 * (mpfr_prec_t)m;
    mpfr_t ten, q;
    mpfr_inits2(p, ten, q, (mpfr_ptr)0);
    mpfr_ui_pow_ui(ten, 10, (unsigned long)m, MPFR_RNDN); /* exact */
    if (d > 0)
        mpfr_mul(q, x, ten, MPFR_RNDN); /* exact */
    else
        mpfr_div(q, x, ten, MPFR_RNDN);
    mpfr_rint(q, q, MPFR_RNDN);
    int inex = d > 0 ? mpfr_div(r, q, ten, ws->rnd) : mpfr_mul(r, q, ten, ws->rnd);
    if (mpfr_zero_p(r))
        mpfr_setsign(r, r, mpfr_signbit(x), MPFR_RNDN);
    mpfr_clears(ten, q, (mpfr_ptr)0);
    return inex;
}

/* min(max(x, lo), hi): NaN passes, equal zeros give max +0 and min -0
 * (IEEE 754-2019 maximum / minimum). */
static int clamp(bp_oracle_ws_t *ws, const bp_op_t *op)
{
    mpfr_ptr r = ws->r, x = ws->x, y = ws->y;
    if (mpfr_nan_p(x)) {
        mpfr_set_nan(r);
        return 0;
    }
    mpfr_set(y, x, MPFR_RNDN);
    if (op->has_min) {
        mpfr_t lo;
        mpfr_init2(lo, 64);
        mpfr_set_d(lo, op->min, MPFR_RNDN);
        mpfr_max(y, y, lo, MPFR_RNDN);
        mpfr_clear(lo);
    }
    if (op->has_max) {
        mpfr_t hi;
        mpfr_init2(hi, 64);
        mpfr_set_d(hi, op->max, MPFR_RNDN);
        mpfr_min(y, y, hi, MPFR_RNDN);
        mpfr_clear(hi);
    }
    return mpfr_set(r, y, ws->rnd);
}

/* clamp_tensor, x clamped by the bound(s) in y (and t, max, when both):
 * NaN where any operand is, else min(max(x, lo), hi) with clamp's zeros. */
static int clamp_tensor(bp_oracle_ws_t *ws, const bp_op_t *op)
{
    mpfr_ptr r = ws->r, x = ws->x, y = ws->y, hi = ws->t;
    bool both = op->has_min && op->has_max;
    if (mpfr_nan_p(x) || mpfr_nan_p(y) || (both && mpfr_nan_p(hi))) {
        mpfr_set_nan(r);
        return 0;
    }
    if (!both)
        return op->has_min ? mpfr_max(r, x, y, ws->rnd) : mpfr_min(r, x, y, ws->rnd);
    mpfr_max(y, x, y, MPFR_RNDN); /* exact: y is as wide as x */
    return mpfr_min(r, y, hi, ws->rnd);
}

static int apply(bp_oracle_ws_t *ws, const bp_op_t *op, bp_op_kind_t k)
{
    mpfr_ptr r = ws->r, x = ws->x, y = ws->y;
    mpfr_rnd_t m = ws->rnd;
    switch (k) {
    case BP_OP_SIGMOID:
    case BP_OP_SILU:
    case BP_OP_GELU: return composite(ws, op);
    case BP_OP_ERF: return mpfr_erf(r, x, m);
#define BP_FN(ID, S, U35, W512, MPFR, CUDA)                                    \
    case BP_OP_##ID: return mpfr_##MPFR(r, x, m);
#include "op_list.h"
#undef BP_FN
#define BP_FN2(ID, S, U35, W512, MPFR, CUDA)                                   \
    case BP_OP_##ID: return mpfr_##MPFR(r, x, y, m);
#include "op_list.h"
#undef BP_FN2
    case BP_OP_EXP2: return mpfr_exp2(r, x, m);
    case BP_OP_LOG1P: return mpfr_log1p(r, x, m);
    case BP_OP_ABS: return mpfr_abs(r, x, m);
    case BP_OP_SIGN: /* torch.sign: 0 for zeros and NaN */
        mpfr_set_si(r, mpfr_nan_p(x) ? 0 : mpfr_sgn(x), m);
        return 0;
    /* The integer exactly in y (as wide as any operand), then rounded. */
    case BP_OP_FLOOR: mpfr_floor(y, x); return mpfr_set(r, y, m);
    case BP_OP_CEIL: mpfr_ceil(y, x); return mpfr_set(r, y, m);
    case BP_OP_TRUNC: mpfr_trunc(y, x); return mpfr_set(r, y, m);
    case BP_OP_ROUND:
        if (op && op->decimals)
            return round_decimals(ws, op->decimals);
        mpfr_rint(y, x, MPFR_RNDN);
        return mpfr_set(r, y, m);
    case BP_OP_MAXIMUM:
    case BP_OP_MINIMUM:
        if (mpfr_nan_p(x) || mpfr_nan_p(y)) {
            mpfr_set_nan(r);
            return 0;
        }
        return k == BP_OP_MAXIMUM ? mpfr_max(r, x, y, m) : mpfr_min(r, x, y, m);
    case BP_OP_CLAMP: return clamp(ws, op);
    case BP_OP_CLAMP_TENSOR: return clamp_tensor(ws, op);
    case BP_OP_ADD: return mpfr_add(r, x, y, m);
    case BP_OP_SUB: return mpfr_sub(r, x, y, m);
    case BP_OP_MUL:
    case BP_OP_OUTER: return mpfr_mul(r, x, y, m);
    case BP_OP_DIV: return mpfr_div(r, x, y, m);
    case BP_OP_POW: return mpfr_pow(r, x, y, m);
    case BP_OP_RECIPROCAL: return mpfr_ui_div(r, 1, x, m);
    case BP_OP_EXP: return mpfr_exp(r, x, m);
    case BP_OP_LOG: return mpfr_log(r, x, m);
    case BP_OP_SIN: return mpfr_sin(r, x, m);
    case BP_OP_COS: return mpfr_cos(r, x, m);
    case BP_OP_TANH: return mpfr_tanh(r, x, m);
    case BP_OP_SQRT: return mpfr_sqrt(r, x, m);
    case BP_OP_RSQRT:
        if (mpfr_zero_p(x) && mpfr_signbit(x)) {
            mpfr_set_inf(r, -1);
            return 0;
        }
        return mpfr_rec_sqrt(r, x, m);
    case BP_OP_NEG: return mpfr_neg(r, x, m);
    /* Comparisons of the exact values (NaN unordered): 0 or 1. */
    case BP_OP_LT: return mpfr_set_ui(r, mpfr_less_p(x, y), m);
    case BP_OP_LE: return mpfr_set_ui(r, mpfr_lessequal_p(x, y), m);
    case BP_OP_GT: return mpfr_set_ui(r, mpfr_greater_p(x, y), m);
    case BP_OP_GE: return mpfr_set_ui(r, mpfr_greaterequal_p(x, y), m);
    case BP_OP_EQ: return mpfr_set_ui(r, mpfr_equal_p(x, y), m);
    case BP_OP_NE: return mpfr_set_ui(r, !mpfr_equal_p(x, y), m);
    default: return mpfr_set(r, x, m); /* cast; where (x is the one chosen) */
    }
}

/* Integer power, wrapped to 64 bits; the caller truncates to the width. */
static bp_status int_pow(bp_oracle_ws_t *ws, mpz_t base, mpz_t mod, size_t i,
                         bp_error_t *err)
{
    if (!mpfr_integer_p(ws->x) || !mpfr_integer_p(ws->y))
        return bp_error_set(err, BP_EINPUT,
                            "integer pow of %.17g and %.17g at element %zu: "
                            "both must be integers",
                            mpfr_get_d(ws->x, MPFR_RNDN),
                            mpfr_get_d(ws->y, MPFR_RNDN), i);
    mpfr_get_z(base, ws->x, MPFR_RNDN);
    mpfr_get_z(ws->z, ws->y, MPFR_RNDN);
    if (mpz_sgn(ws->z) >= 0) {
        mpz_powm(ws->z, base, ws->z, mod);
    } else if (mpz_cmpabs_ui(base, 1) == 0) {
        /* (+-1)^-e: +-1 by the parity of e */
        bool odd = mpz_odd_p(ws->z);
        mpz_set_si(ws->z, mpz_sgn(base) < 0 && odd ? -1 : 1);
    } else if (mpz_sgn(base) == 0) {
        return bp_error_set(err, BP_EINPUT,
                            "integer 0 to a negative power at element %zu", i);
    } else {
        mpz_set_ui(ws->z, 0); /* |x^-e| < 1 truncates to 0 */
    }
    mpfr_set_z(ws->r, ws->z, MPFR_RNDZ);
    return BP_OK;
}

static bp_status elem_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                             size_t end, bp_error_t *err)
{
    const elem_ctx_t *c = vctx;
    bp_dtype_t dt = c->out->dtype;
    bool ipow = c->kind == BP_OP_POW && bp_dtype_is_int(dt);
    mpz_t base, mod;
    if (ipow) {
        mpz_inits(base, mod, (mpz_ptr)0);
        mpz_setbit(mod, 64);
    }
    bp_status st = BP_OK;
    for (size_t i = begin; i < end && !st; i++) {
        if (c->kind == BP_OP_WHERE) {
            bool t = bp_dtype_load_bits(BP_BOOL, c->cond.buf->data,
                                        operand_index(&c->cond, i)) != 0;
            operand_load(t ? &c->a : &c->b, ws->x, i);
        } else {
            operand_load(&c->a, ws->x, i);
            if (c->binary)
                operand_load(&c->b, ws->y, i);
            if (c->hi.buf)
                operand_load(&c->hi, ws->t, i);
        }
        int inex = 0;
        if (ipow)
            st = int_pow(ws, base, mod, i, err);
        else
            inex = apply(ws, c->op, c->kind);
        if (!st)
            bp_dtype_store_bits(dt, c->out->data, i, bp_oracle_round(ws, inex));
    }
    if (ipow)
        mpz_clears(base, mod, (mpz_ptr)0);
    return st;
}

/* sin and cos of the same values come together: mpfr_sin_cos rounds both
 * correctly for little more than the price of one, and RoPE takes both of
 * every angle.  The op's own results go to out, the other function's to
 * other (same dtype), each through the one rounding of bp_oracle_round. */
typedef struct {
    elem_ctx_t e;
    bp_buf_t *other;
} pair_ctx_t;

static int ternary(int t)
{
    return t == 0 ? 0 : t == 1 ? 1 : -1;
}

static bp_status sincos_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                               size_t end, bp_error_t *err)
{
    (void)err;
    const pair_ctx_t *c = vctx;
    bp_dtype_t dt = c->e.out->dtype;
    bool is_sin = c->e.kind == BP_OP_SIN;
    mpfr_t o;
    mpfr_init2(o, mpfr_get_prec(ws->r));
    for (size_t i = begin; i < end; i++) {
        operand_load(&c->e.a, ws->x, i);
        /* s + 4c: the ternary values of sin (s) and cos (c), 1 above, 2 below */
        int t = is_sin ? mpfr_sin_cos(ws->r, o, ws->x, ws->rnd)
                       : mpfr_sin_cos(o, ws->r, ws->x, ws->rnd);
        int ts = ternary(t & 3), tc = ternary((t >> 2) & 3);
        bp_dtype_store_bits(dt, c->e.out->data, i, bp_oracle_round(ws, is_sin ? ts : tc));
        mpfr_swap(ws->r, o);
        bp_dtype_store_bits(dt, c->other->data, i, bp_oracle_round(ws, is_sin ? tc : ts));
        mpfr_swap(ws->r, o);
    }
    mpfr_clear(o);
    return BP_OK;
}

/* A unary op evaluated once per distinct operand value not already in the
 * backend's kept results, then copied to every element holding that
 * value: the same bits, fewer evaluations (oracle_unique.h). */
static bp_status elementwise_unique(bp_backend_t *be, const elem_ctx_t *c,
                                    bp_error_t *err)
{
    bp_oracle_cache_t *cache = ((oracle_state_t *)be->state)->cache;
    bp_dtype_t out_dt = c->out->dtype;
    bool keep = bp_oracle_cache_fits(c->a.buf->dtype, out_dt);
    bp_oracle_unique_t u;
    bp_status st = bp_oracle_unique_build(c->a.buf, &u, err);
    if (st)
        return st;
    bp_buf_t res = {0}, got = {0};
    int64_t n = (int64_t)u.vals.numel;
    uint32_t *miss = keep ? malloc((size_t)(n ? n : 1) * sizeof *miss) : NULL;
    st = keep && !miss ? bp_error_set(err, BP_ENOMEM, "out of memory")
                       : bp_buf_alloc(&res, out_dt, 1, &n, err);
    /* Kept results into res; the values still to evaluate move to the
     * front of u.vals (all of them where nothing can be kept). */
    int64_t nt = n;
    /* the kept results of this function: the op and its formulation */
    int ck = bp_oracle_cache_kind((int)c->kind, (int)c->op->form);
    pthread_mutex_t *mu = &((oracle_state_t *)be->state)->eval_mu;
    if (keep)
        pthread_mutex_lock(mu);
    if (!st && keep)
        nt = (int64_t)bp_oracle_cache_lookup(cache, ck, &u.vals, &res, miss);
    if (!st && nt && keep)
        st = bp_buf_alloc(&got, out_dt, 1, &nt, err);
    if (!st && nt) {
        bp_buf_t todo = u.vals;
        todo.numel = (size_t)nt;
        todo.shape[0] = nt;
        elem_ctx_t d = *c;
        d.out = keep ? &got : &res;
        d.a.buf = &todo;
        bool pair = keep && (c->kind == BP_OP_SIN || c->kind == BP_OP_COS);
        bp_buf_t other = {0};
        if (pair)
            st = bp_buf_alloc(&other, out_dt, 1, &nt, err);
        pair_ctx_t pc = {.e = d, .other = &other};
        if (!st)
            st = pair ? bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, out_dt, (size_t)nt,
                                      sincos_kernel, &pc, err)
                      : bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, out_dt, (size_t)nt,
                                      elem_kernel, &d, err);
        /* Room for both functions' results at once: one table, not a
         * table and then a rehash into one twice as large. */
        if (!st && pair)
            bp_oracle_cache_reserve(cache, 2 * (size_t)nt);
        if (!st && keep)
            bp_oracle_cache_insert(cache, ck, &todo, &got, miss, (size_t)nt, &res);
        /* The other function's results are only kept. */
        if (!st && pair)
            bp_oracle_cache_insert(cache,
                                   bp_oracle_cache_kind(c->kind == BP_OP_SIN ? BP_OP_COS
                                                                             : BP_OP_SIN,
                                                        (int)c->op->form),
                                   &todo, &other, NULL, (size_t)nt, NULL);
        bp_buf_free(&other);
    }
    if (keep)
        pthread_mutex_unlock(mu);
    if (!st)
        bp_oracle_unique_scatter(&u, &res, c->out);
    free(miss);
    bp_buf_free(&res);
    bp_buf_free(&got);
    bp_oracle_unique_free(&u);
    return st;
}

static bp_status op_elementwise(bp_backend_t *be, const bp_exec_t *x,
                                bp_error_t *err)
{
    const bp_op_t *op = x->op;
    elem_ctx_t c = {.kind = op->kind, .op = op, .out = x->out};
    if (bp_dtype_is_int(x->out->dtype) && !bp_op_has(op->kind, BP_OPF_INT))
        return bp_error_set(err, BP_EINPUT,
                            "the oracle computes this op only in a float "
                            "dtype, not %s", bp_dtype_name(x->out->dtype));
    bp_opd_t opd = bp_op_info(op->kind)->operands;
    c.binary = opd == BP_OPD_AB || opd == BP_OPD_AB_TS || opd == BP_OPD_COND_AB ||
               opd == BP_OPD_A_BOUNDS;
    if (opd == BP_OPD_COND_AB) {
        bp_arg_t cond = {.kind = BP_ARG_BUF};
        if (x->ninputs != 1 || x->inputs[0]->dtype != BP_BOOL)
            return bp_error_set(err, BP_EINTERNAL, "where needs a bool cond");
        bp_status st = operand_setup(&c.cond, x->inputs[0], &cond, x->out, "cond", err);
        if (st)
            return st;
    }
    if (op->kind == BP_OP_OUTER) {
        if (!x->a || !x->b || x->a->ndim != 1 || x->b->ndim != 1 ||
            x->out->ndim != 2 || x->out->shape[0] != x->a->shape[0] ||
            x->out->shape[1] != x->b->shape[0])
            return bp_error_set(err, BP_EINPUT,
                                "outer needs two 1-D tensors [n] and [m] and "
                                "an output [n, m]");
        c.a = (operand_t){.mode = OPD_ROW, .buf = x->a};
        c.b = (operand_t){.mode = OPD_COL, .buf = x->b};
        c.a.cols = c.b.cols = (size_t)x->out->shape[1];
    } else {
        bp_status st = operand_setup(&c.a, x->a, &op->a, x->out, "a", err);
        if (!st && opd == BP_OPD_A_BOUNDS) { /* the first bound as b, max as hi */
            bp_arg_t bound = {.kind = BP_ARG_BUF};
            if (x->ninputs < 1 || x->ninputs != (int)op->has_min + (int)op->has_max)
                return bp_error_set(err, BP_EINPUT, "clamp_tensor needs min, max or both");
            st = operand_setup(&c.b, x->inputs[0], &bound, x->out, "min", err);
            if (!st && x->ninputs == 2)
                st = operand_setup(&c.hi, x->inputs[1], &bound, x->out, "max", err);
        } else if (!st && c.binary)
            st = operand_setup(&c.b, x->b, &op->b, x->out, "b", err);
        if (st)
            return st;
    }
    if (!c.binary && bp_op_has(op->kind, BP_OPF_COSTLY) && c.a.mode == OPD_SAME &&
        x->out->numel >= BP_ORACLE_UNIQUE_MIN && x->out->numel < UINT32_MAX)
        return elementwise_unique(be, &c, err);
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype,
                         x->out->numel, elem_kernel, &c, err);
}

/* ---- generators ---- */

typedef struct {
    const bp_op_t *op;
    bp_buf_t *out;
} gen_ctx_t;

static bp_status tensor_kernel(bp_oracle_ws_t *ws, const void *vctx,
                               size_t begin, size_t end, bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    for (size_t i = begin; i < end; i++) {
        double v = c->op->values[c->op->nvalues == 1 ? 0 : i];
        int inex = mpfr_set_d(ws->r, v, ws->rnd);
        bp_dtype_store_bits(c->out->dtype, c->out->data, i,
                            bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

static bp_status op_tensor(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    const bp_op_t *op = x->op;
    if (op->nvalues != x->out->numel && op->nvalues != 1)
        return bp_error_set(err, BP_EINPUT,
                            "%zu values for a tensor of %zu elements",
                            op->nvalues, x->out->numel);
    if (x->out->numel && !op->values)
        return bp_error_set(err, BP_EINPUT, "tensor has no values");
    gen_ctx_t c = {op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype,
                         x->out->numel, tensor_kernel, &c, err);
}

static bp_status arange_kernel(bp_oracle_ws_t *ws, const void *vctx,
                               size_t begin, size_t end, bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    mpfr_set_d(ws->x, c->op->start, MPFR_RNDN);
    mpfr_set_d(ws->y, c->op->step, MPFR_RNDN);
    for (size_t i = begin; i < end; i++) {
        /* 53-bit step times a 64-bit index: exact in t's 128 bits. */
        mpfr_mul_ui(ws->t, ws->y, (unsigned long)i, MPFR_RNDN);
        int inex = mpfr_add(ws->r, ws->x, ws->t, ws->rnd);
        bp_dtype_store_bits(c->out->dtype, c->out->data, i,
                            bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

static bp_status op_arange(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    const bp_op_t *op = x->op;
    if (!(op->step != 0) || !isfinite(op->start) || !isfinite(op->step))
        return bp_error_set(err, BP_EINPUT,
                            "arange needs a finite start and a finite, "
                            "non-zero step (start %g, step %g)",
                            op->start, op->step);
    gen_ctx_t c = {op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype,
                         x->out->numel, arange_kernel, &c, err);
}

static bp_status uniform_kernel(bp_oracle_ws_t *ws, const void *vctx,
                                size_t begin, size_t end, bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    float lo = (float)c->op->low, hi = (float)c->op->high;
    for (size_t i = begin; i < end; i++) {
        float u = bp_rng_uniform(c->op->seed, c->op->stream, i, lo, hi);
        int inex = mpfr_set_flt(ws->r, u, ws->rnd);
        bp_dtype_store_bits(c->out->dtype, c->out->data, i,
                            bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

/* randn, normal: the stream's double (rng.h) rounded once by MPFR, the
 * rounding the CPU reaches through float rounded to odd. */
static bp_status normal_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                               size_t end, bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    const bp_op_t *op = c->op;
    for (size_t i = begin; i < end; i++) {
        double v = bp_rng_normal(op->seed, op->stream, i, op->mean, op->std);
        int inex = mpfr_set_d(ws->r, v, ws->rnd);
        bp_dtype_store_bits(c->out->dtype, c->out->data, i, bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

static bp_status op_normal(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    gen_ctx_t c = {x->op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype, x->out->numel,
                         normal_kernel, &c, err);
}

/* full, zeros, ones: the value rounded once. */
static bp_status fill_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin, size_t end,
                             bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    const bp_op_t *op = c->op;
    double v = op->kind == BP_OP_FULL ? op->value : op->kind == BP_OP_ONES ? 1.0 : 0.0;
    for (size_t i = begin; i < end; i++) {
        int inex = mpfr_set_d(ws->r, v, ws->rnd);
        bp_dtype_store_bits(c->out->dtype, c->out->data, i, bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

static bp_status op_fill(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    gen_ctx_t c = {x->op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype, x->out->numel,
                         fill_kernel, &c, err);
}

/* linspace element i: start + (end - start) * i / (steps - 1), exactly,
 * rounded once (the start alone for one step). */
static bp_status linspace_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                                 size_t end, bp_error_t *err)
{
    (void)err;
    const gen_ctx_t *c = vctx;
    const bp_op_t *op = c->op;
    mpfr_t d;
    mpfr_init2(d, 2200);
    for (size_t i = begin; i < end; i++) {
        int inex;
        if (op->steps < 2) {
            inex = mpfr_set_d(ws->r, op->start, ws->rnd);
        } else {
            mpfr_set_d(d, op->end, MPFR_RNDN);
            mpfr_sub_d(d, d, op->start, MPFR_RNDN);          /* exact */
            mpfr_mul_ui(d, d, (unsigned long)i, MPFR_RNDN);  /* exact */
            mpfr_set_d(ws->t, op->start, MPFR_RNDN);
            mpfr_mul_ui(ws->t, ws->t, (unsigned long)(op->steps - 1), MPFR_RNDN);
            mpfr_add(d, d, ws->t, MPFR_RNDN);                /* exact */
            inex = mpfr_div_ui(ws->r, d, (unsigned long)(op->steps - 1), ws->rnd);
        }
        bp_dtype_store_bits(c->out->dtype, c->out->data, i, bp_oracle_round(ws, inex));
    }
    mpfr_clear(d);
    return BP_OK;
}

static bp_status op_linspace(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    gen_ctx_t c = {x->op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype, x->out->numel,
                         linspace_kernel, &c, err);
}

/* The file's bits are the result: nothing to round. */
static bp_status op_load(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    return bp_op_load_host(x, err);
}

static bp_status op_uniform(bp_backend_t *be, const bp_exec_t *x,
                            bp_error_t *err)
{
    gen_ctx_t c = {x->op, x->out};
    return bp_oracle_map(nthreads(be), BP_ORACLE_GRAIN, x->out->dtype,
                         x->out->numel, uniform_kernel, &c, err);
}

/* ---- whole-tensor ops (oracle_tensor.c) ---- */

static bp_status op_copy(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    return bp_oracle_copy(nthreads(be), x, err);
}

static bp_status op_gather(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    return bp_oracle_gather(nthreads(be), x, err);
}

static bp_status op_sum(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    return bp_oracle_sum(nthreads(be), x, err);
}

static bp_status op_matmul(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    return bp_oracle_matmul(nthreads(be), x, err);
}

/* The reductions along an axis and the fused ops (oracle_rows.c). */
static bp_status op_rows(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    return bp_oracle_rows(nthreads(be), x, err);
}

/* ---- the backend ---- */

const bp_op_fn bp_oracle_ops[BP_OP_COUNT] = {
    [BP_OP_TENSOR] = op_tensor,
    [BP_OP_LOAD] = op_load,
    [BP_OP_ARANGE] = op_arange,
    [BP_OP_UNIFORM] = op_uniform,
    [BP_OP_CAST] = op_elementwise,
    [BP_OP_ADD] = op_elementwise,
    [BP_OP_SUB] = op_elementwise,
    [BP_OP_MUL] = op_elementwise,
    [BP_OP_DIV] = op_elementwise,
    [BP_OP_POW] = op_elementwise,
    [BP_OP_RECIPROCAL] = op_elementwise,
    [BP_OP_EXP] = op_elementwise,
    [BP_OP_LOG] = op_elementwise,
    [BP_OP_SIN] = op_elementwise,
    [BP_OP_COS] = op_elementwise,
    [BP_OP_TANH] = op_elementwise,
    [BP_OP_SQRT] = op_elementwise,
    [BP_OP_RSQRT] = op_elementwise,
    [BP_OP_NEG] = op_elementwise,
    [BP_OP_OUTER] = op_elementwise,
    [BP_OP_CONCAT] = op_copy,
    [BP_OP_SLICE] = op_copy,
    [BP_OP_MATMUL] = op_matmul,
    [BP_OP_SUM] = op_sum,
    [BP_OP_ROTATE_HALF] = op_copy,
    [BP_OP_RESHAPE] = op_gather,
    [BP_OP_VIEW] = op_gather,
    [BP_OP_TRANSPOSE] = op_gather,
    [BP_OP_PERMUTE] = op_gather,
    [BP_OP_UNSQUEEZE] = op_gather,
    [BP_OP_SQUEEZE] = op_gather,
    [BP_OP_EXPAND] = op_gather,
    [BP_OP_INDEX_SELECT] = op_gather,
    [BP_OP_EMBEDDING] = op_gather,
    [BP_OP_LT] = op_elementwise,
    [BP_OP_LE] = op_elementwise,
    [BP_OP_GT] = op_elementwise,
    [BP_OP_GE] = op_elementwise,
    [BP_OP_EQ] = op_elementwise,
    [BP_OP_NE] = op_elementwise,
    [BP_OP_WHERE] = op_elementwise,
    [BP_OP_SOFTMAX] = op_rows,
    [BP_OP_LOG_SOFTMAX] = op_rows,
    [BP_OP_MEAN] = op_rows,
    [BP_OP_VAR] = op_rows,
    [BP_OP_AMAX] = op_rows,
    [BP_OP_AMIN] = op_rows,
    [BP_OP_RMS_NORM] = op_rows,
    [BP_OP_LAYER_NORM] = op_rows,
    [BP_OP_BMM] = op_rows,
    [BP_OP_SDPA] = op_rows,
    [BP_OP_LOGSUMEXP] = op_rows,
    [BP_OP_PROD] = op_rows,
    [BP_OP_CUMSUM] = op_rows,
    [BP_OP_SIGMOID] = op_elementwise,
    [BP_OP_SILU] = op_elementwise,
    [BP_OP_GELU] = op_elementwise,
    [BP_OP_ERF] = op_elementwise,
    [BP_OP_EXP2] = op_elementwise,
    [BP_OP_LOG1P] = op_elementwise,
    [BP_OP_ABS] = op_elementwise,
    [BP_OP_SIGN] = op_elementwise,
    [BP_OP_FLOOR] = op_elementwise,
    [BP_OP_CEIL] = op_elementwise,
    [BP_OP_ROUND] = op_elementwise,
    [BP_OP_TRUNC] = op_elementwise,
    [BP_OP_MINIMUM] = op_elementwise,
    [BP_OP_MAXIMUM] = op_elementwise,
    [BP_OP_CLAMP] = op_elementwise,
    [BP_OP_FULL] = op_fill,
    [BP_OP_ZEROS] = op_fill,
    [BP_OP_ONES] = op_fill,
    [BP_OP_LINSPACE] = op_linspace,
    [BP_OP_RANDN] = op_normal,
    [BP_OP_NORMAL] = op_normal,
    [BP_OP_CLAMP_TENSOR] = op_elementwise,
    [BP_OP_BADDBMM] = op_rows,
    [BP_OP_LINEAR] = op_rows,
    [BP_OP_ADDMM] = op_rows,
#define BP_FN(ID, ...) [BP_OP_##ID] = op_elementwise,
#include "op_list.h"
#undef BP_FN
#define BP_FN2(ID, ...) [BP_OP_##ID] = op_elementwise,
#include "op_list.h"
#undef BP_FN2
};

void bp_be_oracle_thread_done(void)
{
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

bool bp_be_oracle_shared(void)
{
    return bp_oracle_threads(2) > 1; /* MPFR's state is per thread */
}

static void oracle_destroy(bp_backend_t *be)
{
    if (!be)
        return;
    json_decref(be->fingerprint);
    if (be->state) {
        bp_oracle_cache_free(((oracle_state_t *)be->state)->cache);
        pthread_mutex_destroy(&((oracle_state_t *)be->state)->eval_mu);
    }
    free(be->state);
    free(be);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

bp_status bp_be_oracle_open(const bp_backend_opts_t *o, bp_backend_t **out,
                            bp_error_t *err)
{
    *out = NULL;
    bp_backend_t *be = calloc(1, sizeof *be);
    oracle_state_t *s = calloc(1, sizeof *s);
    if (!be || !s) {
        free(be);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&s->eval_mu, NULL);
    s->threads = bp_oracle_threads(o ? o->threads : 0);
    s->cache = bp_oracle_cache_new(); /* none: every value evaluated */
    be->name = "oracle";
    be->dtypes = BP_DTYPES_COMPUTE;
    snprintf(be->key, sizeof be->key, "oracle");
    be->device = false;
    be->state = s;
    be->destroy = oracle_destroy;
    be->fingerprint = json_pack(
        "{s:s, s:s, s:s, s:b, s:i, s:{s:i, s:i, s:i, s:i}, s:s, s:s}",
        "backend", "oracle",
        "mpfr", mpfr_get_version(),
        "gmp", gmp_version,
        "mpfr_tls", mpfr_buildopt_tls_p() != 0,
        "threads", s->threads,
        "precision", "fp64", 53, "fp32", 24, "bf16", 8, "fp16", 11,
        "rounding", "nearest-even, once per op, format exponent range with "
                    "subnormals (mpfr_subnormalize), overflow to inf",
        "policy", "exact value of every op on exact inputs; div and sum "
                  "formulations ignored; sum/matmul exact then rounded once");
    if (!be->fingerprint) {
        oracle_destroy(be);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    be->op = bp_oracle_ops;
    *out = be;
    return BP_OK;
}
