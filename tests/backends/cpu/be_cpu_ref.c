/* Helpers for the CPU backend's tests (see be_cpu_ref.h). */
#include "be_cpu_ref.h"

#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bp_error_t err;

bp_backend_t *cpu_onednn(bp_cpu_math_t m, bp_cpu_isa_t isa, bp_onednn_isa_t onednn)
{
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.cpu_math = m;
    o.cpu_isa = isa;
    o.onednn_isa = onednn;
    bp_backend_t *be = NULL;
    ck_assert_msg(bp_be_cpu_open(&o, &be, &err) == BP_OK, "%s", err.msg);
    return be;
}

bp_backend_t *cpu_isa(bp_cpu_math_t m, bp_cpu_isa_t isa)
{
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.cpu_math = m;
    o.cpu_isa = isa;
    /* oneDNN's ISA of an AVX2 host's, whatever this one has (gelu) */
    o.onednn_isa = isa == BP_CPU_ISA_AVX512 ? BP_ONEDNN_AVX512_CORE_FP16
                   : isa == BP_CPU_ISA_DEFAULT ? BP_ONEDNN_SSE41
                   : isa == BP_CPU_ISA_AUTO    ? BP_ONEDNN_AUTO
                                               : BP_ONEDNN_AVX2;
    bp_backend_t *be = NULL;
    ck_assert_msg(bp_be_cpu_open(&o, &be, &err) == BP_OK, "%s", err.msg);
    return be;
}

bp_backend_t *cpu_math(bp_cpu_math_t m)
{
    /* ATen's AVX2 capability whatever the host: the same bits everywhere */
    return cpu_isa(m, BP_CPU_ISA_AVX2);
}

bp_backend_t *cpu(void)
{
    return cpu_math(BP_CPU_MATH_SLEEF_U10);
}

void ck_isa_key(bp_cpu_math_t m, bp_cpu_isa_t isa, const char *key, const char *cap,
                int lanes)
{
    bp_backend_t *be = cpu_isa(m, isa);
    ck_assert_str_eq(be->key, key);
    json_t *fp = be->fingerprint;
    ck_assert_str_eq(json_string_value(json_object_get(fp, "aten_cpu_capability")), cap);
    ck_assert_str_eq(json_string_value(json_object_get(fp, "aten_cpu_capability_from")),
                     "--cpu-isa");
    ck_assert_int_eq(json_integer_value(json_object_get(fp, "vector_width_f32")), lanes);
    bp_backend_close(be);
}

void set_vec_bytes(bp_backend_t *be, int bytes)
{
    ((bp_cpu_t *)be->state)->vec_bytes = bytes;
}

/* An op with tensor or scalar arguments: a tensor where the pointer is
 * given, else the scalar value (NAN for no argument). */
bp_status run_op(bp_backend_t *be, bp_op_t *op, const bp_buf_t *a, double av,
                 const bp_buf_t *b, double bv, bp_buf_t *out)
{
    op->a.kind = a ? BP_ARG_BUF : isnan(av) ? BP_ARG_NONE : BP_ARG_SCALAR;
    op->a.value = av;
    op->b.kind = b ? BP_ARG_BUF : isnan(bv) ? BP_ARG_NONE : BP_ARG_SCALAR;
    op->b.value = bv;
    bp_exec_t x = {.op = op, .a = a, .b = b, .out = out};
    return be->op[op->kind](be, &x, &err);
}

/* Buffers made by alloc(), released after each test by ref_release(). */
static void **owned;
static size_t nowned, capowned;

bp_buf_t alloc(bp_dtype_t dt, int ndim, const int64_t *shape)
{
    bp_buf_t b;
    ck_assert_msg(bp_buf_alloc(&b, dt, ndim, shape, &err) == BP_OK, "%s",
                  err.msg);
    if (nowned == capowned) {
        capowned = capowned ? 2 * capowned : 64;
        owned = realloc(owned, capowned * sizeof *owned);
        ck_assert_ptr_nonnull(owned);
    }
    owned[nowned++] = b.data;
    return b;
}

void ref_free(bp_buf_t *b)
{
    for (size_t i = 0; i < nowned; i++)
        if (owned[i] == b->data)
            owned[i] = NULL;
    bp_buf_free(b);
}

void ref_release(void)
{
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    owned = NULL;
    nowned = capowned = 0;
}

bp_buf_t vec_of(bp_dtype_t dt, size_t n)
{
    int64_t sh[1] = {(int64_t)n};
    return alloc(dt, 1, sh);
}

/* Runs kind on a/av, b/bv into a new buffer of dt shaped like `like` (or
 * of n elements), failing the test on error. */
bp_buf_t op2f(bp_backend_t *be, bp_op_kind_t k, bp_form_t form,
              const bp_buf_t *a, double av, const bp_buf_t *b, double bv,
              bp_dtype_t dt, int ndim, const int64_t *shape)
{
    bp_op_t op = {.kind = k, .form = form};
    bp_buf_t out = alloc(dt, ndim, shape);
    ck_assert_msg(run_op(be, &op, a, av, b, bv, &out) == BP_OK, "%s", err.msg);
    return out;
}

bp_buf_t op2(bp_backend_t *be, bp_op_kind_t k, const bp_buf_t *a, double av,
             const bp_buf_t *b, double bv, bp_dtype_t dt)
{
    const bp_buf_t *like = a ? a : b;
    return op2f(be, k, BP_FORM_DEFAULT, a, av, b, bv, dt, like->ndim,
                like->shape);
}

bp_buf_t arange(bp_backend_t *be, bp_dtype_t dt, double start, double step,
                size_t n)
{
    bp_op_t op = {.kind = BP_OP_ARANGE,
                  .start = start,
                  .step = step,
                  .end = start + step * (double)n};
    bp_buf_t out = vec_of(dt, n);
    ck_assert_msg(run_op(be, &op, NULL, NAN, NULL, NAN, &out) == BP_OK, "%s",
                  err.msg);
    return out;
}

uint64_t bits(const bp_buf_t *b, size_t i)
{
    return bp_buf_bits(b, i);
}

uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

bool isnan_bits(bp_dtype_t dt, uint64_t v)
{
    switch (dt) {
    case BP_F64: return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    case BP_F32: return (v & 0x7fffffffu) > 0x7f800000u;
    case BP_BF16: return (v & 0x7fffu) > 0x7f80u;
    case BP_F16: return (v & 0x7fffu) > 0x7c00u;
    default: return false;
    }
}

/* FNV-1a 64 over the little-endian element bytes, every NaN as one
 * pattern (PyTorch writes 0xffff for a bf16 NaN, CUDA and bitprobe 0x7fff:
 * NaNs compare by class). */
uint64_t hash(const bp_buf_t *b)
{
    static const uint64_t canon[] = {[BP_F64] = 0x7ff8000000000000ull,
                                     [BP_F32] = 0x7fc00000u,
                                     [BP_BF16] = 0x7fff,
                                     [BP_F16] = 0x7fff};
    size_t sz = bp_dtype_info(b->dtype)->size;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < b->numel; i++) {
        uint64_t v = bits(b, i);
        if (isnan_bits(b->dtype, v))
            v = canon[b->dtype];
        for (size_t k = 0; k < sz; k++) {
            h ^= (v >> (8 * k)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* ---- MPFR: correct rounding to a format ---------------------------- */

fmt_t fmt_of(bp_dtype_t dt)
{
    switch (dt) {
    case BP_F64: return (fmt_t){53, -1073, 1024};
    case BP_BF16: return (fmt_t){8, -132, 128};
    case BP_F16: return (fmt_t){11, -23, 16};
    default: return (fmt_t){24, -148, 128};
    }
}

/* Bits of a value exactly representable in dt (from its MPFR rounding). */
uint64_t encode(bp_dtype_t dt, double d)
{
    if (isnan(d))
        return dt == BP_F32   ? 0x7fc00000u
               : dt == BP_F64 ? 0x7ff8000000000000ull
                              : 0x7fff;
    switch (dt) {
    case BP_F64: {
        uint64_t u;
        memcpy(&u, &d, 8);
        return u;
    }
    case BP_F32: return fbits((float)d);
    case BP_BF16: return fbits((float)d) >> 16;
    case BP_F16: {
        _Float16 h = (_Float16)d;
        uint16_t u;
        memcpy(&u, &h, 2);
        return u;
    }
    default: return 0;
    }
}

/* op(a, b) correctly rounded to dt. */
double mp_round(bp_dtype_t dt, mp_op_t op, double a, double b)
{
    fmt_t f = fmt_of(dt);
    mpfr_exp_t oe = mpfr_get_emin(), ox = mpfr_get_emax();
    mpfr_t x, y, r;
    mpfr_inits2(64, x, y, (mpfr_ptr)0);
    mpfr_init2(r, f.prec);
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_set_d(y, b, MPFR_RNDN);
    mpfr_set_emin(f.emin);
    mpfr_set_emax(f.emax);
    int t;
    switch (op) {
    case MP_ADD: t = mpfr_add(r, x, y, MPFR_RNDN); break;
    case MP_SUB: t = mpfr_sub(r, x, y, MPFR_RNDN); break;
    case MP_MUL: t = mpfr_mul(r, x, y, MPFR_RNDN); break;
    case MP_DIV: t = mpfr_div(r, x, y, MPFR_RNDN); break;
    case MP_SQRT: t = mpfr_sqrt(r, x, MPFR_RNDN); break;
    case MP_RECIP: t = mpfr_ui_div(r, 1, x, MPFR_RNDN); break;
    default: t = mpfr_set(r, x, MPFR_RNDN); break;
    }
    t = mpfr_check_range(r, t, MPFR_RNDN);
    mpfr_subnormalize(r, t, MPFR_RNDN);
    double d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_set_emin(oe);
    mpfr_set_emax(ox);
    mpfr_clears(x, y, r, (mpfr_ptr)0);
    return d;
}

uint64_t mp_bits(bp_dtype_t dt, mp_op_t op, double a, double b)
{
    return encode(dt, mp_round(dt, op, a, b));
}

bool same(bp_dtype_t dt, uint64_t a, uint64_t b)
{
    return a == b || (isnan_bits(dt, a) && isnan_bits(dt, b));
}

/* xorshift64*: the random inputs; each test prints its seed. */
static uint64_t rs;
uint64_t rnd(void)
{
    rs ^= rs >> 12;
    rs ^= rs << 25;
    rs ^= rs >> 27;
    return rs * 0x2545f4914f6cdd1dull;
}

void seed(const char *test, uint64_t s)
{
    rs = s;
    printf("check_be_cpu: %s seed %llu\n", test, (unsigned long long)s);
}

void fill_random(bp_buf_t *b)
{
    for (size_t i = 0; i < b->numel; i++)
        bp_dtype_store_bits(b->dtype, b->data, i, rnd());
}

/* (arange(1, 51.) / 7).to(dt), as the PyTorch references were made. */
bp_buf_t t50(bp_backend_t *be, bp_dtype_t dt)
{
    bp_buf_t a = arange(be, BP_F32, 1, 1, 50);
    bp_buf_t q = op2(be, BP_OP_DIV, &a, NAN, NULL, 7, BP_F32);
    bp_buf_t t = op2(be, BP_OP_CAST, &q, NAN, NULL, NAN, dt);
    ref_free(&a);
    ref_free(&q);
    return t;
}

bp_buf_t every16(bp_dtype_t dt)
{
    bp_buf_t a = vec_of(dt, 65536);
    for (size_t i = 0; i < 65536; i++)
        bp_dtype_store_bits(dt, a.data, i, i);
    return a;
}
