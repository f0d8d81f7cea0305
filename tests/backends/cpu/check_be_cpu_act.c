/* The CPU backend's activations, rounding, clamp, minimum/maximum and the
 * fill and linspace factories against hand-derived bits (IEEE rules,
 * PyTorch's lane behaviour observed on its CPU build), glibc for the
 * scalar tails, and MPFR for accuracy bounds of the vector lanes. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include "be_cpu_ref.h"

static bp_buf_t run1(bp_backend_t *be, bp_op_t *op, const bp_buf_t *a, bp_dtype_t dt)
{
    bp_buf_t out = alloc(dt, a->ndim, a->shape);
    ck_assert_msg(run_op(be, op, a, NAN, NULL, NAN, &out) == BP_OK, "%s", err.msg);
    return out;
}

static bp_buf_t f32s(const float *v, size_t n)
{
    bp_buf_t b = vec_of(BP_F32, n);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(BP_F32, b.data, i, fbits(v[i]));
    return b;
}

static void ck_f32(const bp_buf_t *b, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(same(BP_F32, bits(b, i), fbits(want[i])), "%s[%zu]: 0x%08llx, want %a",
                      what, i, (unsigned long long)bits(b, i), (double)want[i]);
}

START_TEST(t_exact_ops)
{
    bp_backend_t *be = cpu();
    static const float x[] = {-2.5f, -1.5f, -0.5f, -0.0f, 0.0f, 0.5f,
                              1.5f,  2.5f,  NAN,   -INFINITY, 3.7f, -3.7f};
    static const float rnd[] = {-2, -2, -0.0f, -0.0f, 0, 0, 2, 2, NAN, -INFINITY, 4, -4};
    static const float flo[] = {-3, -2, -1, -0.0f, 0, 0, 1, 2, NAN, -INFINITY, 3, -4};
    static const float cei[] = {-2, -1, -0.0f, -0.0f, 0, 1, 2, 3, NAN, -INFINITY, 4, -3};
    static const float tru[] = {-2, -1, -0.0f, -0.0f, 0, 0, 1, 2, NAN, -INFINITY, 3, -3};
    static const float sgn[] = {-1, -1, -1, 0, 0, 1, 1, 1, 0, -1, 1, -1};
    static const float ab[] = {2.5f, 1.5f, 0.5f, 0, 0, 0.5f, 1.5f, 2.5f, NAN, INFINITY, 3.7f, 3.7f};
    size_t n = sizeof x / sizeof *x;
    bp_buf_t a = f32s(x, n);
    struct {
        bp_op_kind_t k;
        const float *want;
    } t[] = {{BP_OP_ROUND, rnd}, {BP_OP_FLOOR, flo}, {BP_OP_CEIL, cei},
             {BP_OP_TRUNC, tru}, {BP_OP_SIGN, sgn},  {BP_OP_ABS, ab}};
    for (size_t j = 0; j < sizeof t / sizeof *t; j++) {
        bp_op_t op = {.kind = t[j].k};
        bp_buf_t r = run1(be, &op, &a, BP_F32);
        ck_f32(&r, t[j].want, n, bp_op_name(t[j].k));
    }
    /* round(decimals): nearbyintf(x * 100) / 100 and nearbyintf(x / 10) * 10 */
    static const float xd[] = {1.2345f, 25.0f, 35.0f, -0.004f};
    bp_buf_t d = f32s(xd, 4);
    bp_op_t op2 = {.kind = BP_OP_ROUND, .decimals = 2};
    bp_buf_t r2 = run1(be, &op2, &d, BP_F32);
    static const float w2[] = {1.23f, 25.0f, 35.0f, -0.0f};
    ck_f32(&r2, w2, 4, "round(decimals=2)");
    bp_op_t opm = {.kind = BP_OP_ROUND, .decimals = -1};
    bp_buf_t rm = run1(be, &opm, &d, BP_F32);
    static const float wm[] = {0.0f, 20.0f, 40.0f, -0.0f};
    ck_f32(&rm, wm, 4, "round(decimals=-1)");
    /* clamp: NaN passes, a bound equal to x leaves x (-0 stays -0) */
    static const float xc[] = {-2.0f, -0.0f, 0.5f, 2.0f, NAN};
    bp_buf_t c = f32s(xc, 5);
    bp_op_t oc = {.kind = BP_OP_CLAMP, .has_min = true, .min = 0.0, .has_max = true, .max = 1.0};
    bp_buf_t rc = run1(be, &oc, &c, BP_F32);
    static const float wc[] = {0.0f, -0.0f, 0.5f, 1.0f, NAN};
    ck_f32(&rc, wc, 5, "clamp(0, 1)");
    /* integers: abs wraps, clamp truncates its bounds */
    bp_buf_t iv = vec_of(BP_I64, 3);
    int64_t ivs[] = {INT64_MIN, -7, 5};
    memcpy(iv.data, ivs, sizeof ivs);
    bp_op_t oa = {.kind = BP_OP_ABS};
    bp_buf_t ia = run1(be, &oa, &iv, BP_I64);
    ck_assert(bits(&ia, 0) == (uint64_t)INT64_MIN && bits(&ia, 1) == 7 && bits(&ia, 2) == 5);
    bp_op_t oi = {.kind = BP_OP_CLAMP, .has_min = true, .min = -2.5, .has_max = true, .max = 3.9};
    bp_buf_t ic = run1(be, &oi, &iv, BP_I64);
    ck_assert(bits(&ic, 0) == (uint64_t)-2 && bits(&ic, 1) == (uint64_t)-2 && bits(&ic, 2) == 3);
    bp_backend_close(be);
}
END_TEST

/* 40 elements: two AVX2 registers of 8 floats per step run 32 of them
 * through _mm256_max_ps(a, b), which gives b for equal operands; the last
 * 8 through std::max(a, b), which gives a.  PyTorch 1.13's
 * torch.maximum(torch.full([40], -0.), torch.zeros(40)) shows +0 for the
 * first 32 and -0 for the last 8. */
START_TEST(t_minmax_lanes)
{
    bp_backend_t *be = cpu();
    bp_buf_t m0 = vec_of(BP_F32, 40), p0 = vec_of(BP_F32, 40);
    for (size_t i = 0; i < 40; i++) {
        bp_dtype_store_bits(BP_F32, m0.data, i, 0x80000000u);
        bp_dtype_store_bits(BP_F32, p0.data, i, 0);
    }
    bp_buf_t mx = op2(be, BP_OP_MAXIMUM, &m0, NAN, &p0, NAN, BP_F32);
    bp_buf_t mn = op2(be, BP_OP_MINIMUM, &p0, NAN, &m0, NAN, BP_F32);
    for (size_t i = 0; i < 40; i++) {
        ck_assert_msg(bits(&mx, i) == (i < 32 ? 0u : 0x80000000u), "maximum[%zu]", i);
        ck_assert_msg(bits(&mn, i) == (i < 32 ? 0x80000000u : 0u), "minimum[%zu]", i);
    }
    static const float a[] = {NAN, 1.0f, 2.0f, -3.0f}, b[] = {1.0f, NAN, -2.0f, 3.0f};
    bp_buf_t ta = f32s(a, 4), tb = f32s(b, 4);
    bp_buf_t r = op2(be, BP_OP_MAXIMUM, &ta, NAN, &tb, NAN, BP_F32);
    static const float w[] = {NAN, NAN, 2.0f, 3.0f};
    ck_f32(&r, w, 4, "maximum with NaN");
    bp_backend_close(be);
}
END_TEST

/* clamp_tensor(a, lo, hi) of f32 tensors into out (NULL lo or hi: absent). */
static bp_status clamp_t(bp_backend_t *be, const bp_buf_t *a, const bp_buf_t *lo,
                         const bp_buf_t *hi, bp_buf_t *out)
{
    bp_op_t op = {.kind = BP_OP_CLAMP_TENSOR, .has_min = lo != NULL, .has_max = hi != NULL};
    const bp_buf_t *ins[2];
    int n = 0;
    if (lo)
        ins[n++] = lo;
    if (hi)
        ins[n++] = hi;
    bp_exec_t x = {.op = &op, .a = a, .inputs = ins, .ninputs = n, .out = out};
    return be->op[BP_OP_CLAMP_TENSOR](be, &x, &err);
}

/* torch.clamp(a, min=lo, max=hi) with tensors (clamp_kernel_impl), by hand:
 * 40 elements, 32 through vec::minimum(vec::maximum(a, lo), hi), where an
 * equal bound wins (_mm256_max_ps/min_ps give their second operand) and any
 * NaN gives NaN; the last 8 through std::min(std::max(a, lo), hi), where a
 * wins and only a NaN bound gives NaN (a NaN a passes through std::max as
 * its first operand).  PyTorch 1.13: torch.clamp(torch.tensor([-0., 0.] *
 * 20), min=torch.tensor([0., -0.] * 20), max=torch.ones(40)) is [0, -0] for
 * the first 32 and [-0, 0] for the last 8.  min > max gives max. */
START_TEST(t_clamp_tensor)
{
    bp_backend_t *be = cpu();
    const size_t n = 40;
    bp_buf_t a = vec_of(BP_F32, n), lo = vec_of(BP_F32, n), hi = vec_of(BP_F32, n);
    for (size_t i = 0; i < n; i++) {
        bp_dtype_store_bits(BP_F32, a.data, i, i % 2 ? 0u : 0x80000000u);
        bp_dtype_store_bits(BP_F32, lo.data, i, i % 2 ? 0x80000000u : 0u);
        bp_dtype_store_bits(BP_F32, hi.data, i, fbits(1.0f));
    }
    /* NaN a, NaN lo, NaN hi and a crossed pair, once in the lanes (4..7),
     * once in the tail (34..37) */
    for (size_t base = 4; base < n; base += 30) {
        bp_dtype_store_bits(BP_F32, a.data, base, fbits(NAN));
        bp_dtype_store_bits(BP_F32, lo.data, base + 1, fbits(NAN));
        bp_dtype_store_bits(BP_F32, hi.data, base + 2, fbits(NAN));
        bp_dtype_store_bits(BP_F32, a.data, base + 3, fbits(0.5f));
        bp_dtype_store_bits(BP_F32, lo.data, base + 3, fbits(3.0f));
        bp_dtype_store_bits(BP_F32, hi.data, base + 3, fbits(2.0f));
    }
    bp_buf_t out = vec_of(BP_F32, n);
    ck_assert_int_eq(clamp_t(be, &a, &lo, &hi, &out), BP_OK);
    for (size_t i = 0; i < n; i++) {
        size_t k = i < 32 ? i - 4 : i - 34;
        bool lane = i < 32;
        uint32_t want = lane ? (i % 2 ? 0x80000000u : 0u) : (i % 2 ? 0u : 0x80000000u);
        if (k == 0 || k == 1 || k == 2) { /* a NaN passes as NaN in the tail too */
            ck_assert_msg(isnan(bp_buf_get(&out, i)), "clamp_tensor[%zu]: NaN expected", i);
            continue;
        }
        if (k == 3)
            want = fbits(2.0f);
        ck_assert_msg(bits(&out, i) == want, "clamp_tensor[%zu]: 0x%08llx, want 0x%08x", i,
                      (unsigned long long)bits(&out, i), want);
    }
    /* one bound: torch.maximum / torch.minimum (their lanes) */
    ck_assert_int_eq(clamp_t(be, &a, &lo, NULL, &out), BP_OK);
    ck_assert_uint_eq(bits(&out, 0), 0u); /* maximum(-0, +0) in a lane: +0 */
    ck_assert_uint_eq(bits(&out, 38), 0x80000000u); /* std::max(-0, +0): -0 */
    ck_assert_int_eq(clamp_t(be, &a, NULL, &hi, &out), BP_OK);
    ck_assert_uint_eq(bits(&out, 7), fbits(0.5f)); /* minimum(0.5, 2) */
    ck_assert(isnan(bp_buf_get(&out, 6)));
    /* a [4, 10] with lo [4, 1]: the inner dimension broadcasts lo with
     * stride 0 but lo is no scalar of the whole loop (rows do not
     * coalesce), so no element takes the lanes: -0 stays -0 */
    int64_t s410[2] = {4, 10}, s41[2] = {4, 1};
    bp_buf_t a2 = alloc(BP_F32, 2, s410), l2 = alloc(BP_F32, 2, s41), h2 = alloc(BP_F32, 2, s410),
             o2 = alloc(BP_F32, 2, s410);
    for (size_t i = 0; i < 40; i++) {
        bp_dtype_store_bits(BP_F32, a2.data, i, 0x80000000u);
        bp_dtype_store_bits(BP_F32, h2.data, i, fbits(1.0f));
    }
    for (size_t i = 0; i < 4; i++)
        bp_dtype_store_bits(BP_F32, l2.data, i, 0u);
    ck_assert_int_eq(clamp_t(be, &a2, &l2, &h2, &o2), BP_OK);
    for (size_t i = 0; i < 40; i++)
        ck_assert_msg(bits(&o2, i) == 0x80000000u, "broadcast clamp_tensor[%zu]", i);
    /* integers: std::min(std::max(a, lo), hi), crossed bounds give hi */
    bp_buf_t ia = vec_of(BP_I64, 3), il = vec_of(BP_I64, 3), ih = vec_of(BP_I64, 3),
             io = vec_of(BP_I64, 3);
    int64_t av[] = {-7, 5, 100}, lv[] = {-2, 0, 50}, hv[] = {3, 3, 10};
    memcpy(ia.data, av, sizeof av);
    memcpy(il.data, lv, sizeof lv);
    memcpy(ih.data, hv, sizeof hv);
    ck_assert_int_eq(clamp_t(be, &ia, &il, &ih, &io), BP_OK);
    ck_assert(bits(&io, 0) == (uint64_t)-2 && bits(&io, 1) == 3 && bits(&io, 2) == 10);
    bp_backend_close(be);
}
END_TEST

/* f(x) to 200 bits, as a double. */
static double mp_act(bp_op_kind_t k, bool tanh_form, double x)
{
    mpfr_t r, u, v;
    mpfr_inits2(200, r, u, v, (mpfr_ptr)0);
    mpfr_set_d(r, x, MPFR_RNDN);
    switch (k) {
    case BP_OP_SIGMOID:
    case BP_OP_SILU:
        mpfr_neg(u, r, MPFR_RNDN);
        mpfr_exp(u, u, MPFR_RNDN);
        mpfr_add_ui(u, u, 1, MPFR_RNDN);
        if (k == BP_OP_SIGMOID)
            mpfr_ui_div(r, 1, u, MPFR_RNDN);
        else
            mpfr_div(r, r, u, MPFR_RNDN);
        break;
    case BP_OP_GELU:
        if (tanh_form) {
            mpfr_pow_ui(u, r, 3, MPFR_RNDN);
            mpfr_mul_d(u, u, 0.044715, MPFR_RNDN);
            mpfr_add(u, u, r, MPFR_RNDN);
            mpfr_const_pi(v, MPFR_RNDN);
            mpfr_ui_div(v, 2, v, MPFR_RNDN);
            mpfr_sqrt(v, v, MPFR_RNDN);
            mpfr_mul(u, u, v, MPFR_RNDN);
            mpfr_tanh(u, u, MPFR_RNDN);
        } else {
            mpfr_sqrt_ui(v, 2, MPFR_RNDN);
            mpfr_div(u, r, v, MPFR_RNDN);
            mpfr_erf(u, u, MPFR_RNDN);
        }
        mpfr_add_ui(u, u, 1, MPFR_RNDN);
        mpfr_mul(r, r, u, MPFR_RNDN);
        mpfr_div_2ui(r, r, 1, MPFR_RNDN);
        break;
    case BP_OP_ERF: mpfr_erf(r, r, MPFR_RNDN); break;
    case BP_OP_EXP2: mpfr_exp2(r, r, MPFR_RNDN); break;
    case BP_OP_LOG2: mpfr_log2(r, r, MPFR_RNDN); break;
    case BP_OP_LOG1P: mpfr_log1p(r, r, MPFR_RNDN); break;
    default: mpfr_expm1(r, r, MPFR_RNDN); break;
    }
    double d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clears(r, u, v, (mpfr_ptr)0);
    return d;
}

/* Every fp32 result within a few ulps of the exact function (the tails of
 * the composites and the polynomial erf of gelu are the loosest), for
 * 4096 inputs in [-8, 8] ([0, 16) for log2, (-1, 15) for log1p). */
START_TEST(t_act_mpfr)
{
    bp_backend_t *be = cpu();
    static const struct {
        bp_op_kind_t k;
        bool tanh_form;
        double lo, width;
        double ulps; /* allowed error, in units of the last place */
        double abs;  /* or an absolute error (gelu's polynomial erf: 1.5e-7 times x/2) */
    } t[] = {{BP_OP_SIGMOID, false, -8, 16, 3, 0},  {BP_OP_SILU, false, -8, 16, 3, 0},
             {BP_OP_GELU, false, -8, 16, 8, 1e-6}, {BP_OP_GELU, true, -8, 16, 8, 1e-6},
             {BP_OP_ERF, false, -4, 8, 1, 0},       {BP_OP_EXP2, false, -20, 40, 1, 0},
             {BP_OP_LOG2, false, 0, 16, 1, 0},      {BP_OP_LOG1P, false, -0.999, 16, 1, 0},
             {BP_OP_EXPM1, false, -8, 16, 1, 0}};
    size_t n = 4096;
    for (size_t j = 0; j < sizeof t / sizeof *t; j++) {
        bp_buf_t a = vec_of(BP_F32, n);
        for (size_t i = 0; i < n; i++)
            bp_dtype_store_bits(BP_F32, a.data, i,
                                fbits((float)(t[j].lo + t[j].width * (double)i / (double)n)));
        bp_op_t op = {.kind = t[j].k, .form = t[j].tanh_form ? BP_FORM_TANH : BP_FORM_DEFAULT};
        bp_buf_t r = run1(be, &op, &a, BP_F32);
        for (size_t i = 0; i < n; i++) {
            double x = bp_buf_get(&a, i), got = bp_buf_get(&r, i);
            double want = mp_act(t[j].k, t[j].tanh_form, x);
            double ulp = ldexp(1.0, ilogb(want != 0 ? want : 0x1p-149) - 23);
            ck_assert_msg(got == want || fabs(got - want) <= t[j].ulps * ulp ||
                              fabs(got - want) <= t[j].abs,
                          "%s(%a) = %a, exact %a", bp_op_name(t[j].k), x, got, want);
        }
    }
    /* exact points */
    static const float z[] = {0.0f};
    bp_buf_t zz = f32s(z, 1);
    bp_op_t s = {.kind = BP_OP_SIGMOID}, g = {.kind = BP_OP_GELU};
    bp_buf_t sr = run1(be, &s, &zz, BP_F32), gr = run1(be, &g, &zz, BP_F32);
    ck_assert_uint_eq(bits(&sr, 0), 0x3f000000u);
    ck_assert_uint_eq(bits(&gr, 0), 0u);
    bp_backend_close(be);
}
END_TEST

/* gelu(x) of n equal elements through the backend be, lane 0's bits. */
static uint64_t gelu_n(bp_backend_t *be, bp_dtype_t dt, float x, size_t n)
{
    bp_buf_t a = vec_of(dt, n);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(dt, a.data, i, bp_dtype_bits_from_double(dt, x));
    bp_op_t g = {.kind = BP_OP_GELU};
    bp_buf_t r = run1(be, &g, &a, dt);
    return bits(&r, 0);
}

/* gelu's erf form where PyTorch hands it to oneDNN (Activation.cpp
 * use_mkldnn: contiguous, more than one element; fp32 always, bf16 from
 * avx2_vnni_2, fp16 on avx2_vnni_2 and from avx512_core_fp16), against
 * hand-derived bits, the routing rules and MPFR.  At x = -10 oneDNN's
 * AVX-512 polynomial saturates (p = 1 beyond |x| = 5.54): (x * (1 - 1)) *
 * 0.5 = -0.0; its Abramowitz-Stegun form below AVX-512 computes
 * S + S * erf = -5 + 5 = +0.0; ATen's kernel x * 0.5 * (1 + erf) = -0.0.
 * Both oneDNN forms give NaN at -inf (inf * 0 and inf - inf) and x at 10. */
START_TEST(t_gelu_onednn)
{
    static const bp_onednn_isa_t lv[] = {BP_ONEDNN_NONE, BP_ONEDNN_SSE41, BP_ONEDNN_AVX2,
                                         BP_ONEDNN_AVX2_VNNI_2, BP_ONEDNN_AVX512_CORE,
                                         BP_ONEDNN_AVX512_CORE_FP16};
    static const uint32_t at_m10[] = {0x80000000u, 0, 0, 0, 0x80000000u, 0x80000000u};
    bp_backend_t *be[6];
    for (int k = 0; k < 6; k++) {
        be[k] = cpu_onednn(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX2, lv[k]);
        ck_assert_uint_eq(gelu_n(be[k], BP_F32, -10.0f, 2), at_m10[k]);
        ck_assert_uint_eq(gelu_n(be[k], BP_F32, -10.0f, 1), 0x80000000u); /* ATen's */
        ck_assert_uint_eq(gelu_n(be[k], BP_F32, 10.0f, 2), 0x41200000u);
        ck_assert_msg(isnan(bp_dtype_bits_to_double(BP_F32, gelu_n(be[k], BP_F32, -INFINITY, 2))),
                      "gelu(-inf) at %s", bp_onednn_isa_name(lv[k]));
        json_t *fp = be[k]->fingerprint;
        ck_assert_str_eq(json_string_value(json_object_get(fp, "onednn_isa")),
                         bp_onednn_isa_name(lv[k]));
    }
    /* routing: bf16 and fp16 of 2 elements (ATen's scalar tail, else
     * oneDNN) rounded once from the fp32 lanes of the path they take */
    size_t differs = 0;
    for (int i = 0; i < 4000; i++) {
        float x = -6.0f + 0.003f * (float)i;
        uint64_t f[6];
        for (int k = 0; k < 6; k++)
            f[k] = gelu_n(be[k], BP_F32, x, 2);
        /* the fp32 lanes of bf16(x) and fp16(x): path k's, rounded once */
        const bp_dtype_t low[2] = {BP_BF16, BP_F16};
        for (int d = 0; d < 2; d++) {
            bp_dtype_t dt = low[d];
            float xl = (float)bp_dtype_bits_to_double(dt, bp_dtype_bits_from_double(dt, x));
#define LANES(k) bp_dtype_bits_from_double(dt, bp_dtype_bits_to_double(BP_F32, \
                                                   gelu_n(be[k], BP_F32, xl, 2)))
            /* bf16: ATen's below avx2_vnni_2; fp16: ATen's but on
             * avx2_vnni_2 and from avx512_core_fp16 */
            ck_assert_uint_eq(gelu_n(be[2], dt, xl, 2), LANES(0));
            ck_assert_uint_eq(gelu_n(be[3], dt, xl, 2), LANES(3));
            ck_assert_uint_eq(gelu_n(be[4], dt, xl, 2), dt == BP_BF16 ? LANES(4) : LANES(0));
            ck_assert_uint_eq(gelu_n(be[5], dt, xl, 2), LANES(5));
#undef LANES
        }
        ck_assert_uint_eq(f[2], f[3]);
        ck_assert_uint_eq(f[4], f[5]);
        differs += f[0] != f[2] && f[2] != f[4] && f[1] != f[2];
        /* every form within 2e-6 or 8 ulp of the exact function */
        double want = mp_act(BP_OP_GELU, false, x);
        double ulp = ldexp(1.0, ilogb(want != 0 ? want : 0x1p-149) - 23);
        for (int k = 1; k < 6; k++) {
            double got = bp_dtype_bits_to_double(BP_F32, f[k]);
            ck_assert_msg(fabs(got - want) <= 8 * ulp || fabs(got - want) <= 2e-6,
                          "gelu(%a) at %s = %a, exact %a", (double)x,
                          bp_onednn_isa_name(lv[k]), got, want);
        }
    }
    ck_assert_msg(differs > 100, "only %zu inputs tell the forms apart", differs);
    for (int k = 0; k < 6; k++)
        bp_backend_close(be[k]);
}
END_TEST

/* oneDNN's bf16 gelu stores its fp32 result with VCVTNEPS2BF16 where the
 * level has it (avx2_vnni_2, from avx512_core_bf16): a denormal result is
 * a zero of its sign there (PyTorch 2.11 on an H200 host: F.gelu of bf16
 * 0x0080, FLT_MIN, is 0x0000).  avx512_core emulates the conversion and
 * rounds: gelu(FLT_MIN) = FLT_MIN / 2 (1 + erf(tiny)) is bf16 0x0040, and
 * -FLT_MIN gives 0x8040.  Normal results are the same at every level. */
START_TEST(t_gelu_bf16_flush)
{
    static const bp_onednn_isa_t lv[] = {BP_ONEDNN_AVX2_VNNI_2, BP_ONEDNN_AVX512_CORE,
                                         BP_ONEDNN_AVX512_CORE_BF16,
                                         BP_ONEDNN_AVX512_CORE_FP16};
    static const bool flush[] = {true, false, true, true};
    const float tiny = 0x1p-126f;
    for (int k = 0; k < 4; k++) {
        bp_backend_t *be = cpu_onednn(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512, lv[k]);
        ck_assert_uint_eq(gelu_n(be, BP_BF16, tiny, 2), flush[k] ? 0x0000u : 0x0040u);
        ck_assert_uint_eq(gelu_n(be, BP_BF16, -tiny, 2), flush[k] ? 0x8000u : 0x8040u);
        ck_assert_uint_eq(gelu_n(be, BP_BF16, 0x1p-120f, 2), 0x0300u); /* 2^-121 */
        /* one element is ATen's kernel, which rounds */
        ck_assert_uint_eq(gelu_n(be, BP_BF16, tiny, 1), 0x0040u);
        bp_backend_close(be);
    }
}
END_TEST

/* 20 elements: 16 in two AVX2 registers, 4 in the scalar tail, which is
 * glibc's 1 / (1 + expf(-x)), x / (1 + expf(-x)) and exp2f(x). */
START_TEST(t_act_tail)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = vec_of(BP_F32, 20);
    for (size_t i = 0; i < 20; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, fbits(-3.0f + 0.37f * (float)i));
    bp_op_t s = {.kind = BP_OP_SIGMOID}, l = {.kind = BP_OP_SILU}, e = {.kind = BP_OP_EXP2};
    bp_buf_t sr = run1(be, &s, &a, BP_F32), lr = run1(be, &l, &a, BP_F32),
             er = run1(be, &e, &a, BP_F32);
    for (size_t i = 0; i < 20; i++) {
        float x = (float)bp_buf_get(&a, i);
        if (i >= 16) {
            ck_assert_uint_eq(bits(&sr, i), fbits(1.0f / (1.0f + expf(-x))));
            ck_assert_uint_eq(bits(&lr, i), fbits(x / (1.0f + expf(-x))));
        }
        if (i >= 16)
            ck_assert_uint_eq(bits(&er, i), fbits(exp2f(x)));
    }
    /* exp2: the vector lanes are SLEEF's exp2f (PyTorch 2.11's bits, from
     * its CPU build: exp2(pi) 0x410d331c, exp2(e) 0x40d2969e), the tail
     * glibc's exp2f (0x410d331d, 0x40d2969d) */
    static const struct {
        float x;
        uint32_t vec, tail;
    } e2[] = {{0x1.921fb6p+1f, 0x410d331cu, 0x410d331du},
              {0x1.5bf0a8p+1f, 0x40d2969eu, 0x40d2969du}};
    for (size_t j = 0; j < 2; j++) {
        bp_buf_t p = vec_of(BP_F32, 20);
        for (size_t i = 0; i < 20; i++)
            bp_dtype_store_bits(BP_F32, p.data, i, fbits(e2[j].x));
        bp_buf_t pr = run1(be, &e, &p, BP_F32);
        for (size_t i = 0; i < 20; i++)
            ck_assert_msg(bits(&pr, i) == (i < 16 ? e2[j].vec : e2[j].tail),
                          "exp2(%a)[%zu] = 0x%08llx", (double)e2[j].x, i,
                          (unsigned long long)bits(&pr, i));
    }
    bp_backend_close(be);
}
END_TEST

/* erf of bf16 and fp16: ATen's polynomial Vectorized<float>::erf on every
 * element, the bits PyTorch 2.11 gave on its CPU build, with AVX2 and (on
 * CPUs that have it) AVX-512 lanes, where SLEEF's erf (bitprobe's former model)
 * gives 0x000c, 0x8090, 0x00fc and 0x0001. */
static void ck_erf_half(bp_backend_t *be)
{
    static const struct {
        bp_dtype_t dt;
        uint16_t x, want;
    } t[] = {{BP_BF16, 0x000b, 0x0000}, {BP_BF16, 0x8080, 0x8000},
             {BP_F16, 0x00df, 0x00ff},  {BP_F16, 0x0001, 0x0000}};
    for (size_t j = 0; j < sizeof t / sizeof *t; j++) {
        bp_buf_t a = vec_of(t[j].dt, 20);
        for (size_t i = 0; i < 20; i++)
            bp_dtype_store_bits(t[j].dt, a.data, i, t[j].x);
        bp_op_t op = {.kind = BP_OP_ERF};
        bp_buf_t r = run1(be, &op, &a, t[j].dt);
        for (size_t i = 0; i < 20; i++)
            ck_assert_msg(bits(&r, i) == t[j].want, "erf(%s 0x%04x)[%zu] = 0x%04llx, want 0x%04x",
                          bp_dtype_name(t[j].dt), t[j].x, i, (unsigned long long)bits(&r, i),
                          t[j].want);
    }
}

/* ck on the default backend, then (on CPUs that have it) the AVX512
 * capability's. */
static void on_each_isa(void (*ck)(bp_backend_t *))
{
    bp_backend_t *be = cpu();
    ck(be);
    bp_backend_close(be);
    if (bp_cpu_isa_supported(BP_CPU_ISA_AVX512)) {
        be = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512);
        ck(be);
        bp_backend_close(be);
    }
}

START_TEST(t_erf_half)
{
    on_each_isa(ck_erf_half);
}
END_TEST

/* fp64 erf and gelu take Vectorized<double>::erf, SLEEF's double erf as
 * PyTorch 2.11 bundles it (3.8/3.9), not the system's 3.5: gelu of
 * x = 0x1.02697cp+0 in vector lanes is 0x3feb3fffe6cb48fc in PyTorch 2.11's
 * AVX-512 build (3.5's erf gives ...fb); the AVX2 build's lanes compute the
 * same (every lane the same FMA arithmetic).  erf(x / sqrt 2) is
 * sleef_erf_ref.py's 0x3fe5fdc506cdbccf, on every element (vec::map). */
static void ck_erf_f64(bp_backend_t *be)
{
    const double x = 0x1.02697cp+0;
    bp_buf_t a = vec_of(BP_F64, 20), h = vec_of(BP_F64, 20);
    for (size_t i = 0; i < 20; i++) {
        bp_buf_set(&a, i, x);
        bp_buf_set(&h, i, x * M_SQRT1_2);
    }
    bp_op_t g = {.kind = BP_OP_GELU}, e = {.kind = BP_OP_ERF};
    bp_buf_t rg = run1(be, &g, &a, BP_F64), re = run1(be, &e, &h, BP_F64);
    for (size_t i = 0; i < 16; i++) /* two registers' worth; the rest is std::erf's */
        ck_assert_msg(bits(&rg, i) == 0x3feb3fffe6cb48fcull, "gelu(%a)[%zu] = 0x%016llx", x, i,
                      (unsigned long long)bits(&rg, i));
    for (size_t i = 0; i < 20; i++)
        ck_assert_msg(bits(&re, i) == 0x3fe5fdc506cdbccfull, "erf[%zu] = 0x%016llx", i,
                      (unsigned long long)bits(&re, i));
}

START_TEST(t_erf_f64)
{
    on_each_isa(ck_erf_f64);
}
END_TEST

START_TEST(t_fill_linspace)
{
    bp_backend_t *be = cpu();
    int64_t three = 3;
    bp_op_t f = {.kind = BP_OP_FULL, .value = 0.1};
    bp_buf_t b = alloc(BP_BF16, 1, &three);
    ck_assert(run_op(be, &f, NULL, NAN, NULL, NAN, &b) == BP_OK);
    ck_assert_uint_eq(bits(&b, 2), 0x3dcd); /* 0.1 -> 0x3dcccccd -> bf16 */
    bp_op_t fi = {.kind = BP_OP_FULL, .value = -2.7};
    bp_buf_t bi = alloc(BP_I64, 1, &three);
    ck_assert(run_op(be, &fi, NULL, NAN, NULL, NAN, &bi) == BP_OK);
    ck_assert_uint_eq(bits(&bi, 1), (uint64_t)-2);
    bp_op_t on = {.kind = BP_OP_ONES};
    bp_buf_t bo = alloc(BP_F16, 1, &three);
    ck_assert(run_op(be, &on, NULL, NAN, NULL, NAN, &bo) == BP_OK);
    ck_assert_uint_eq(bits(&bo, 0), 0x3c00);
    /* linspace(0, 1, 5): quarters, exact */
    bp_op_t l = {.kind = BP_OP_LINSPACE, .start = 0, .end = 1, .steps = 5};
    bp_buf_t q = vec_of(BP_F32, 5);
    ck_assert(run_op(be, &l, NULL, NAN, NULL, NAN, &q) == BP_OK);
    static const float wq[] = {0, 0.25f, 0.5f, 0.75f, 1};
    ck_f32(&q, wq, 5, "linspace(0, 1, 5)");
    /* 17 steps: the tail element is end - step * 0 = end exactly; element
     * 1 is step = (1 - 0) / 16 rounded = 0.0625; the upper half counts
     * back from the end: element 16 - k is 1 - k/16, exact here too. */
    bp_op_t l17 = {.kind = BP_OP_LINSPACE, .start = 0, .end = 1, .steps = 17};
    bp_buf_t r = vec_of(BP_F32, 17);
    ck_assert(run_op(be, &l17, NULL, NAN, NULL, NAN, &r) == BP_OK);
    for (size_t i = 0; i < 17; i++)
        ck_assert_uint_eq(bits(&r, i), fbits((float)i / 16.0f));
    /* one step: the start */
    bp_op_t l1 = {.kind = BP_OP_LINSPACE, .start = -3.5, .end = 9, .steps = 1};
    bp_buf_t o = vec_of(BP_F32, 1);
    ck_assert(run_op(be, &l1, NULL, NAN, NULL, NAN, &o) == BP_OK);
    ck_assert_uint_eq(bits(&o, 0), fbits(-3.5f));
    bp_backend_close(be);
}
END_TEST

void be_cpu_act_tests(TCase *tc)
{
    tcase_add_test(tc, t_exact_ops);
    tcase_add_test(tc, t_minmax_lanes);
    tcase_add_test(tc, t_clamp_tensor);
    tcase_add_test(tc, t_act_mpfr);
    tcase_add_test(tc, t_act_tail);
    tcase_add_test(tc, t_gelu_onednn);
    tcase_add_test(tc, t_gelu_bf16_flush);
    tcase_add_test(tc, t_erf_half);
    tcase_add_test(tc, t_erf_f64);
    tcase_add_test(tc, t_fill_linspace);
}
