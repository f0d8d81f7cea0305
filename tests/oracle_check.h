/* Helpers shared by the oracle's Check suites (check_be_oracle.c,
 * check_oracle_tensor.c): buffers and ops built by hand, and the
 * independent reference rounding.
 *
 * Expected values come from outside the code under test:
 * - hand-derived bit patterns; the transcendental ones (exp(1), sin(1e22),
 *   10**0.9) were derived with mpmath at 200 bits and rounded with Python
 *   fractions, and agree with MPFR at 200 bits;
 * - ref_bits(): MPFR at 256 bits, then rounded to the format by integer
 *   arithmetic written here (no mpfr_subnormalize, no emin/emax);
 * - exact integer arithmetic for sums, matmuls and integer ops;
 * - dtype.c's bit-twiddling conversions for casts.
 * Randomised tests print their seed (BP_SEED=n repeats a run). */
#ifndef BP_ORACLE_CHECK_H
#define BP_ORACLE_CHECK_H

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gmp.h>
#include <mpfr.h>

#include "backend.h"
#include "rng.h"

static uint64_t seed_state;

static inline uint64_t rnd64(void)
{
    uint64_t x = seed_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    seed_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static inline void seed_init(const char *what)
{
    const char *s = getenv("BP_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    seed_state = seed ? seed : 1;
    fprintf(stderr, "%s: seed %" PRIu64 " (BP_SEED to repeat)\n", what, seed);
}

static inline double rnd_unit(void)
{
    return (double)(rnd64() >> 11) * 0x1p-53;
}

static inline bp_backend_t *open_oracle(int threads)
{
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.threads = threads;
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_be_oracle_open(&o, &be, &err) == BP_OK, "%s", err.msg);
    return be;
}

static inline bp_buf_t mkbuf(bp_dtype_t dt, int ndim, const int64_t *shape)
{
    bp_buf_t b;
    bp_error_t err = {0};
    ck_assert_msg(bp_buf_alloc(&b, dt, ndim, shape, &err) == BP_OK, "%s",
                  err.msg);
    return b;
}

static inline bp_buf_t vec_bits(bp_dtype_t dt, size_t n, const uint64_t *bits)
{
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t b = mkbuf(dt, 1, shape);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(dt, b.data, i, bits[i]);
    return b;
}

/* Values that the dtype holds exactly. */
static inline bp_buf_t vec_vals(bp_dtype_t dt, size_t n, const double *v)
{
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t b = mkbuf(dt, 1, shape);
    for (size_t i = 0; i < n; i++) {
        bp_buf_set(&b, i, v[i]);
        ck_assert_msg(dt == BP_I64 || bp_buf_get(&b, i) == v[i],
                      "test value %a is not exact in %s", v[i],
                      bp_dtype_name(dt));
    }
    return b;
}

static inline bp_op_t mkop(bp_op_kind_t k)
{
    bp_op_t op;
    memset(&op, 0, sizeof op);
    op.kind = k;
    op.out = (char *)"t";
    op.a.kind = BP_ARG_BUF;
    op.b.kind = BP_ARG_NONE;
    return op;
}

static inline bp_status exec(bp_backend_t *be, const bp_op_t *op,
                             const bp_buf_t *a, const bp_buf_t *b,
                             bp_buf_t *out, bp_error_t *err)
{
    bp_exec_t x = {.op = op, .a = a, .b = b, .out = out};
    return be->op[op->kind](be, &x, err);
}

static inline void exec_ok(bp_backend_t *be, const bp_op_t *op,
                           const bp_buf_t *a, const bp_buf_t *b, bp_buf_t *out)
{
    bp_error_t err = {0};
    ck_assert_msg(exec(be, op, a, b, out, &err) == BP_OK, "%s", err.msg);
}

static inline bool bits_match(bp_dtype_t dt, uint64_t got, uint64_t want)
{
    if (bp_dtype_bits_isnan(dt, want))
        return bp_dtype_bits_isnan(dt, got);
    return got == want;
}

#define CK_BITS(dt, got, want, ...)                                           \
    do {                                                                      \
        uint64_t g_ = (got), w_ = (want);                                     \
        char what_[256];                                                      \
        snprintf(what_, sizeof what_, __VA_ARGS__);                           \
        ck_assert_msg(                                                        \
            bits_match((dt), g_, w_),                                         \
            "%s (%s): got 0x%" PRIx64 " (%a), want 0x%" PRIx64 " (%a)",       \
            what_, bp_dtype_name(dt), g_, bp_dtype_bits_to_double((dt), g_),  \
            w_, bp_dtype_bits_to_double((dt), w_));                           \
    } while (0)

/* Unary op on one element given by its bits; returns the result's bits. */
static inline uint64_t unary1(bp_backend_t *be, bp_op_kind_t k, bp_dtype_t in,
                              uint64_t xbits, bp_dtype_t out_dt)
{
    bp_buf_t a = vec_bits(in, 1, &xbits);
    int64_t shape[1] = {1};
    bp_buf_t out = mkbuf(out_dt, 1, shape);
    bp_op_t op = mkop(k);
    exec_ok(be, &op, &a, NULL, &out);
    uint64_t r = bp_buf_bits(&out, 0);
    bp_buf_free(&a);
    bp_buf_free(&out);
    return r;
}

/* Binary op, tensor op tensor; either side may be a scalar instead (the
 * buffer pointer NULL and the value in sa/sb). */
static inline uint64_t binary1(bp_backend_t *be, bp_op_kind_t k, bp_dtype_t in,
                               const uint64_t *abits, double sa,
                               const uint64_t *bbits, double sb,
                               bp_dtype_t out_dt)
{
    bp_buf_t a = {0}, b = {0};
    bp_op_t op = mkop(k);
    if (abits)
        a = vec_bits(in, 1, abits);
    else
        op.a = (bp_arg_t){.kind = BP_ARG_SCALAR, .buf = -1, .value = sa};
    if (bbits)
        b = vec_bits(in, 1, bbits);
    else
        op.b = (bp_arg_t){.kind = BP_ARG_SCALAR, .buf = -1, .value = sb};
    if (bbits)
        op.b.kind = BP_ARG_BUF;
    int64_t shape[1] = {1};
    bp_buf_t out = mkbuf(out_dt, 1, shape);
    exec_ok(be, &op, abits ? &a : NULL, bbits ? &b : NULL, &out);
    uint64_t r = bp_buf_bits(&out, 0);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&out);
    return r;
}

/* The independent reference rounding: v (any precision, default exponent
 * range) to the nearest value of dt, ties to even, by scaling to an integer
 * significand at the format's quantum and rounding that integer here. */
static inline uint64_t ref_bits(mpfr_srcptr v, bp_dtype_t dt)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    long p = in->man_bits + 1, bias = (1L << (in->exp_bits - 1)) - 1;
    long qmin = 2 - bias - p; /* exponent of the least subnormal */
    unsigned w = (unsigned)in->size * 8;
    uint64_t sign = mpfr_signbit(v) ? 1ull << (w - 1) : 0;
    uint64_t inf = ((1ull << in->exp_bits) - 1) << in->man_bits;
    if (mpfr_nan_p(v))
        return inf | 1; /* some NaN: compared by class */
    if (mpfr_inf_p(v))
        return sign | inf;
    if (mpfr_zero_p(v))
        return sign;
    long e = (long)mpfr_get_exp(v); /* 2^(e-1) <= |v| < 2^e */
    if (e > bias + 1)
        return sign | inf;
    long q = e - p < qmin ? qmin : e - p;
    mpfr_t s;
    mpz_t n;
    mpfr_init2(s, mpfr_get_prec(v));
    mpz_init(n);
    mpfr_abs(s, v, MPFR_RNDN);
    mpfr_mul_2si(s, s, -q, MPFR_RNDN); /* exact: a power of two */
    mpfr_get_z(n, s, MPFR_RNDD);
    mpfr_sub_z(s, s, n, MPFR_RNDN); /* the fraction, exact */
    int c = mpfr_cmp_d(s, 0.5);
    if (c > 0 || (c == 0 && mpz_odd_p(n)))
        mpz_add_ui(n, n, 1);
    uint64_t m = mpz_get_ui(n);
    mpfr_clear(s);
    mpz_clear(n);
    uint64_t bits = ((uint64_t)(q - qmin) << (p - 1)) + m;
    return sign | (bits >= inf ? inf : bits);
}

/* An exact rational n * 2^s rounded by ref_bits. */
static inline uint64_t ref_scaled(int64_t n, long s, bp_dtype_t dt)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_sj(v, n, MPFR_RNDN);
    mpfr_mul_2si(v, v, s, MPFR_RNDN);
    uint64_t r = ref_bits(v, dt);
    mpfr_clear(v);
    return r;
}

static const bp_dtype_t FLOATS[] = {BP_F32, BP_BF16, BP_F16, BP_F64};
#define NFLOATS 4

/* Half the time any bit pattern (NaN, inf, subnormals), else a moderate
 * value +-(1+u) * 2^e with e in [lo, hi], rounded into dt. */
static inline uint64_t rnd_input(bp_dtype_t dt, int lo, int hi)
{
    unsigned w = (unsigned)bp_dtype_info(dt)->size * 8;
    if ((rnd64() & 3) == 0)
        return w == 64 ? rnd64() : rnd64() & ((1ull << w) - 1);
    double v =
        ldexp(1.0 + rnd_unit(), lo + (int)(rnd64() % (unsigned)(hi - lo + 1)));
    return bp_dtype_bits_from_double(dt, rnd64() & 1 ? -v : v);
}

static inline bp_buf_t mat_vals(bp_dtype_t dt, int64_t r, int64_t c,
                                const double *v)
{
    int64_t shape[2] = {r, c};
    bp_buf_t b = mkbuf(dt, 2, shape);
    for (size_t i = 0; i < b.numel; i++)
        bp_buf_set(&b, i, v[i]);
    return b;
}

static inline void check_vals(const bp_buf_t *b, const double *want,
                              const char *what)
{
    for (size_t i = 0; i < b->numel; i++) {
        uint64_t w = bp_dtype_bits_from_double(b->dtype, want[i]);
        CK_BITS(b->dtype, bp_buf_bits(b, i), w, "%s[%zu]", what, i);
    }
}

#endif
