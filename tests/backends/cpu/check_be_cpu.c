/* The CPU backend against references it does not share code with:
 * hand-derived bit patterns (the seed division, an FMA-sensitive matmul,
 * sum orders, bf16 arange beyond 256), MPFR's correct rounding to the
 * format (precision 24/8/11 with the format's exponent range and
 * mpfr_subnormalize) for add, sub, mul, div, reciprocal, sqrt, outer and
 * casts, where ATen's compute-in-float-then-round is exact; the fp32
 * transcendentals' ulp bounds, with MPFR (check_be_cpu_ulp.c); and
 * PyTorch's own CPU results where they involve no SLEEF function
 * (check_be_cpu_aten.c, tests/data/torch/torch_cpu.json).  The comparisons
 * with PyTorch that depend on the SLEEF build are check_be_cpu_torch's.
 * Bits are compared exactly and reported in %a and hex. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cpu_ref.h"
#include "rng.h"
#include "torch_ref.h"

void be_cpu_aten_tests(TCase *tc);
void be_cpu_ulp_tests(TCase *tc);
void be_cpu_isa_tests(TCase *tc);
void be_cpu_act_tests(TCase *tc);

/* ---- backend object ----------------------------------------------- */

START_TEST(t_open)
{
    static const struct {
        bp_cpu_math_t m;
        const char *key;
    } k[] = {{BP_CPU_MATH_SLEEF_U10, "cpu-sleef"},
             {BP_CPU_MATH_SLEEF_U35, "cpu-sleef-u35"},
             {BP_CPU_MATH_LIBM, "cpu-libm"}};
    for (int i = 0; i < 3; i++) {
        bp_backend_t *be = cpu_math(k[i].m);
        ck_assert_str_eq(be->name, "cpu");
        ck_assert(!be->device);
        ck_assert_msg(strncmp(be->key, k[i].key, strlen(k[i].key)) == 0,
                      "key %s", be->key);
        json_t *fp = be->fingerprint;
        ck_assert_str_eq(json_string_value(json_object_get(fp, "cpu_math")),
                         bp_cpu_math_name(k[i].m));
        ck_assert_int_eq(
            json_integer_value(json_object_get(fp, "vector_width_f32")), 8);
        ck_assert_ptr_nonnull(json_object_get(fp, "sleef"));
        ck_assert_ptr_nonnull(json_object_get(fp, "compiler"));
        for (int op = 0; op < BP_OP_COUNT; op++)
            ck_assert_msg(be->op[op] != NULL, "op %d missing", op);
        bp_backend_close(be);
    }
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.cpu_math = (bp_cpu_math_t)17;
    bp_backend_t *be = (bp_backend_t *)1;
    ck_assert_int_eq(bp_be_cpu_open(&o, &be, &err), BP_EINPUT);
    ck_assert_ptr_null(be);
}
END_TEST

/* ---- the seed probes ------------------------------------------------ */

START_TEST(t_seed_div)
{
    bp_backend_t *be = cpu();
    bp_buf_t nine = vec_of(BP_F32, 1);
    bp_dtype_store_bits(BP_F32, nine.data, 0, fbits(9.0f));
    bp_buf_t q = op2(be, BP_OP_DIV, &nine, NAN, NULL, 10, BP_F32);
    ck_bits(&q, 0, 0x3f666666); /* correctly rounded 9/10 */
    bp_buf_t r = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, &nine, NAN, NULL, 10,
                      BP_F32, 1, nine.shape);
    ck_bits(&r, 0, 0x3f666667); /* 9 * 0x3dcccccd, the CUDA formulation */
    bp_buf_t t = op2f(be, BP_OP_DIV, BP_FORM_TRUE, &nine, NAN, NULL, 10,
                      BP_F32, 1, nine.shape);
    ck_bits(&t, 0, 0x3f666666);
    bp_backend_close(be);
}
END_TEST

/* x / 0.001 pinned to the reciprocal formulation (PyTorch's CUDA one):
 * 1.0 / 0.001 in double is exactly 1000 (0.001's double is 0.001 +
 * 2.08e-20), so q = x * 1000.0f for x = 7 is 7000 exactly, where the float
 * reciprocal 0x4479ffff (999.99994) would give 6999.99951171875
 * (0x45dabfff).  bf16 multiplies in float and rounds once; f64 by the
 * double 1000.  True division differs: 3 / 0.001f = 2999.99985... */
START_TEST(t_div_decimal_reciprocal)
{
    bp_backend_t *be = cpu();
    bp_buf_t x = vec_of(BP_F32, 2);
    bp_dtype_store_bits(BP_F32, x.data, 0, fbits(7.0f));
    bp_dtype_store_bits(BP_F32, x.data, 1, fbits(3.0f));
    bp_buf_t r = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, &x, NAN, NULL, 0.001,
                      BP_F32, 1, x.shape);
    ck_bits(&r, 0, 0x45dac000); /* 7000 */
    ck_bits(&r, 1, 0x453b8000); /* 3000 */
    bp_buf_t t = op2(be, BP_OP_DIV, &x, NAN, NULL, 0.001, BP_F32);
    ck_bits(&t, 1, 0x453b7fff); /* 3 / 0.001f = 2999.99986, rounded */
    bp_buf_t xb = vec_of(BP_BF16, 1);
    bp_dtype_store_bits(BP_BF16, xb.data, 0, 0x4040); /* 3 */
    bp_buf_t rb = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, &xb, NAN, NULL,
                       0.001, BP_BF16, 1, xb.shape);
    ck_bits(&rb, 0, 0x453c); /* 3000 rounds to 3008 (0x453c) in bf16 */
    bp_buf_t xd = vec_of(BP_F64, 1);
    bp_dtype_store_bits(BP_F64, xd.data, 0, 0x4008000000000000ull); /* 3 */
    bp_buf_t rd = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, &xd, NAN, NULL,
                       0.001, BP_F64, 1, xd.shape);
    ck_bits(&rd, 0, 0x40a7700000000000ull); /* 3000 */
    bp_backend_close(be);
}
END_TEST

/* 10 ** (torch.arange(0, 10) / 10): int64 arange, true division to fp32,
 * then the scalar base through pow's tensor-tensor kernel. */
/* torch.arange(4096, dtype=bfloat16): above 256 bf16 holds only every
 * 2nd, 4th, 8th, 16th integer; each position rounds to nearest even. */
START_TEST(t_arange_bf16_beyond_256)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = arange(be, BP_BF16, 0, 1, 4096);
    size_t lost = 0;
    for (uint32_t i = 0; i < 4096; i++) {
        uint32_t ulp = 1, want = i;
        while ((i >> 8) >= ulp)
            ulp <<= 1; /* 8 significant bits */
        uint32_t q = i / ulp, rem = i % ulp;
        if (rem * 2 > ulp || (rem * 2 == ulp && (q & 1)))
            q++;
        want = q * ulp;
        ck_assert_msg(bp_buf_get(&a, i) == (double)want,
                      "arange bf16 [%u]: got %g, want %u", i,
                      bp_buf_get(&a, i), want);
        lost += want != i;
    }
    /* 128 odd values in [256, 512), 3/4 of [512, 1024), 7/8 of
     * [1024, 2048), 15/16 of [2048, 4096) */
    ck_assert_uint_eq(lost, 128 + 384 + 896 + 1920);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_arange_int)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = arange(be, BP_I64, 3, 7, 100);
    bp_buf_t b = arange(be, BP_I32, 10, -3, 50);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq((int64_t)bits(&a, i), 3 + 7 * i);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq((int32_t)bits(&b, i), 10 - 3 * i);
    bp_buf_t z = vec_of(BP_I64, 3);
    ck_assert_int_eq(bp_cpu_arange_fill(&z, 0, 0.5, 1, true, &err), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

/* ---- IEEE-exact ops against MPFR ------------------------------------ */

static const bp_dtype_t ieee_dts[] = {BP_F32, BP_BF16, BP_F16, BP_F64};

START_TEST(t_ieee_binary)
{
    bp_backend_t *be = cpu();
    bp_dtype_t dt = ieee_dts[_i];
    seed("t_ieee_binary", 0x5eed0000u + (unsigned)_i);
    const size_t n = 40000;
    bp_buf_t a = vec_of(dt, n), b = vec_of(dt, n);
    fill_random(&a);
    fill_random(&b);
    static const bp_op_kind_t ks[] = {BP_OP_ADD, BP_OP_SUB, BP_OP_MUL,
                                      BP_OP_DIV};
    static const mp_op_t ms[] = {MP_ADD, MP_SUB, MP_MUL, MP_DIV};
    for (int k = 0; k < 4; k++) {
        bp_buf_t r = op2(be, ks[k], &a, NAN, &b, NAN, dt);
        for (size_t i = 0; i < n; i++) {
            uint64_t want =
                mp_bits(dt, ms[k], bp_buf_get(&a, i), bp_buf_get(&b, i));
            ck_assert_msg(same(dt, bits(&r, i), want),
                          "%s op %d: %a, %a -> got 0x%llx, want 0x%llx",
                          bp_dtype_name(dt), k, bp_buf_get(&a, i),
                          bp_buf_get(&b, i), (unsigned long long)bits(&r, i),
                          (unsigned long long)want);
        }
        ref_free(&r);
    }
    bp_backend_close(be);
}
END_TEST

/* sqrt and reciprocal: every bf16/f16 input, random f32/f64 inputs. */
START_TEST(t_ieee_unary)
{
    bp_backend_t *be = cpu();
    bp_dtype_t dt = ieee_dts[_i];
    size_t n = 65536;
    bp_buf_t a;
    if (dt == BP_BF16 || dt == BP_F16) {
        a = every16(dt);
    } else {
        a = vec_of(dt, n);
        seed("t_ieee_unary", 0xabc0u + (unsigned)_i);
        fill_random(&a);
    }
    bp_buf_t s = op2(be, BP_OP_SQRT, &a, NAN, NULL, NAN, dt);
    bp_buf_t r = op2(be, BP_OP_RECIPROCAL, &a, NAN, NULL, NAN, dt);
    bp_buf_t q = op2(be, BP_OP_POW, &a, NAN, NULL, 0.5, dt);
    for (size_t i = 0; i < n; i++) {
        double x = bp_buf_get(&a, i);
        uint64_t ws = mp_bits(dt, MP_SQRT, x, 0),
                 wr = mp_bits(dt, MP_RECIP, x, 0);
        ck_assert_msg(same(dt, bits(&s, i), ws),
                      "sqrt %s(%a): 0x%llx, want 0x%llx", bp_dtype_name(dt), x,
                      (unsigned long long)bits(&s, i), (unsigned long long)ws);
        ck_assert_msg(same(dt, bits(&r, i), wr),
                      "1/%a (%s): 0x%llx, want 0x%llx", x, bp_dtype_name(dt),
                      (unsigned long long)bits(&r, i), (unsigned long long)wr);
        if (dt != BP_F16) /* pow(x, 0.5) is sqrt except for f16 */
            ck_assert(same(dt, bits(&q, i), ws));
    }
    if (dt == BP_BF16) {
        ck_hash(&s, torch_ref("sqrt.bf16.all"), "sqrt of every bf16");
        ck_hash(&r, torch_ref("reciprocal.bf16.all"), "reciprocal of every bf16");
    }
    bp_backend_close(be);
}
END_TEST

START_TEST(t_outer)
{
    bp_backend_t *be = cpu();
    seed("t_outer", 99);
    for (int d = 0; d < 3; d++) {
        bp_dtype_t dt = ieee_dts[d];
        bp_buf_t a = vec_of(dt, 37), b = vec_of(dt, 53);
        fill_random(&a);
        fill_random(&b);
        int64_t sh[2] = {37, 53};
        bp_buf_t o = op2f(be, BP_OP_OUTER, BP_FORM_DEFAULT, &a, NAN, &b, NAN,
                          dt, 2, sh);
        for (size_t i = 0; i < 37; i++)
            for (size_t j = 0; j < 53; j++) {
                uint64_t want =
                    mp_bits(dt, MP_MUL, bp_buf_get(&a, i), bp_buf_get(&b, j));
                ck_assert_msg(same(dt, bits(&o, i * 53 + j), want),
                              "outer %s [%zu,%zu]", bp_dtype_name(dt), i, j);
            }
    }
    bp_backend_close(be);
}
END_TEST

/* ---- casts ---------------------------------------------------------- */

START_TEST(t_cast_float)
{
    bp_backend_t *be = cpu();
    seed("t_cast_float", 7);
    const size_t n = 200000;
    bp_buf_t a = vec_of(BP_F32, n);
    fill_random(&a);
    static const uint32_t special[] = {
        0,           0x80000000u, 0x7f800000u, 0xff800000u,
        0x7fc00000u, 0x00000001u, 0x7f7fffffu, 0x477ff000u,
        0x477fefffu, 0x33800000u, 0x33000000u, 0x33000001u,
        0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x38800000u};
    for (size_t i = 0; i < sizeof special / 4; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, special[i]);
    for (int d = 1; d < 4; d++) {
        bp_dtype_t dt = ieee_dts[d];
        bp_buf_t c = op2(be, BP_OP_CAST, &a, NAN, NULL, NAN, dt);
        for (size_t i = 0; i < n; i++) {
            uint64_t want = mp_bits(dt, MP_SET, bp_buf_get(&a, i), 0);
            ck_assert_msg(same(dt, bits(&c, i), want),
                          "cast %a to %s: 0x%llx, want 0x%llx",
                          bp_buf_get(&a, i), bp_dtype_name(dt),
                          (unsigned long long)bits(&c, i),
                          (unsigned long long)want);
        }
        ref_free(&c);
    }
    /* double -> bf16/f16 goes through float, as c10 does (PyTorch 2.11:
     * tensor([1 + 2^-8 + 2^-30], float64).to(bfloat16) is 0x3f80) */
    bp_buf_t w = vec_of(BP_F64, 2);
    bp_dtype_store_bits(BP_F64, w.data, 0, bp_f64_bits(1 + 0x1p-8 + 0x1p-30));
    bp_dtype_store_bits(BP_F64, w.data, 1,
                        bp_f64_bits(-(1 + 0x1p-11 + 0x1p-40)));
    bp_buf_t wb = op2(be, BP_OP_CAST, &w, NAN, NULL, NAN, BP_BF16);
    bp_buf_t wh = op2(be, BP_OP_CAST, &w, NAN, NULL, NAN, BP_F16);
    ck_bits(&wb, 0, 0x3f80);
    ck_bits(&wh, 1, 0xbc00);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_cast_int)
{
    bp_backend_t *be = cpu();
    /* PyTorch 2.11: int64 -> float32 rounds once */
    bp_buf_t i = vec_of(BP_I64, 3);
    bp_dtype_store_bits(BP_I64, i.data, 0, (1ull << 53) + 1);
    bp_dtype_store_bits(BP_I64, i.data, 1, (1ull << 60) + (1ull << 36) + 1);
    bp_dtype_store_bits(BP_I64, i.data, 2,
                        (uint64_t)(-(INT64_C(1) << 31) - 1));
    bp_buf_t f = op2(be, BP_OP_CAST, &i, NAN, NULL, NAN, BP_F32);
    ck_bits(&f, 0, 0x5a000000);
    ck_bits(&f, 1, 0x5d800001);
    ck_bits(&f, 2, 0xcf000000);
    bp_buf_t i32 = op2(be, BP_OP_CAST, &i, NAN, NULL, NAN, BP_I32);
    ck_bits(&i32, 0, 1); /* wraps to the low 32 bits */
    ck_bits(&i32, 2, 0x7fffffff);
    /* float -> int truncates; NaN and out of range give 0x80..0 */
    static const float fv[] = {2.5f, -2.5f, 3e9f, -3e9f, NAN};
    static const uint32_t w32[] = {2, 0xfffffffe, 0x80000000, 0x80000000,
                                   0x80000000};
    bp_buf_t x = vec_of(BP_F32, 5);
    for (int k = 0; k < 5; k++)
        bp_dtype_store_bits(BP_F32, x.data, k, fbits(fv[k]));
    bp_buf_t y = op2(be, BP_OP_CAST, &x, NAN, NULL, NAN, BP_I32);
    bp_buf_t z = op2(be, BP_OP_CAST, &x, NAN, NULL, NAN, BP_I64);
    for (int k = 0; k < 5; k++) {
        ck_bits(&y, k, w32[k]);
        ck_bits(&z, k,
                k < 2 ? (uint64_t)(int64_t)(int32_t)w32[k]
                      : (k == 2   ? 3000000000ull
                         : k == 3 ? (uint64_t)-3000000000ll
                                  : 0x8000000000000000ull));
    }
    /* torch.arange(70000).to(bfloat16 / float16) */
    bp_buf_t r = arange(be, BP_I64, 0, 1, 70000);
    bp_buf_t rb = op2(be, BP_OP_CAST, &r, NAN, NULL, NAN, BP_BF16);
    bp_buf_t rh = op2(be, BP_OP_CAST, &r, NAN, NULL, NAN, BP_F16);
    ck_hash(&rb, torch_ref("cast.bf16.arange70000"), "arange(70000).to(bf16)");
    ck_hash(&rh, torch_ref("cast.f16.arange70000"), "arange(70000).to(f16)");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_math_modes)
{
    static const float xs[] = {0.5f, 1.0f, 100.0f, 0x1.7f605p+6f, -3.0f};
    bp_backend_t *lm = cpu_math(BP_CPU_MATH_LIBM);
    bp_backend_t *u35 = cpu_math(BP_CPU_MATH_SLEEF_U35);
    bp_buf_t a = vec_of(BP_F32, 5);
    for (int i = 0; i < 5; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, fbits(xs[i]));
    bp_buf_t s = op2(lm, BP_OP_SIN, &a, NAN, NULL, NAN, BP_F32);
    bp_buf_t e = op2(lm, BP_OP_EXP, &a, NAN, NULL, NAN, BP_F32);
    for (int i = 0; i < 5; i++) {
        ck_bits(&s, i, fbits(sinf(xs[i])));
        ck_bits(&e, i, fbits(expf(xs[i])));
    }
    /* u35 stays within 3.5 ulp of the correctly rounded value */
    bp_buf_t c = op2(u35, BP_OP_COS, &a, NAN, NULL, NAN, BP_F32);
    for (int i = 0; i < 5; i++) {
        double want = mp_round(BP_F32, MP_SET, cos((double)xs[i]), 0);
        ck_assert_uint_le(
            bp_ulp_distance(BP_F32, bits(&c, i), fbits((float)want)), 4);
    }
    bp_backend_close(lm);
    bp_backend_close(u35);
}
END_TEST

/* ---- matmul, sum ---------------------------------------------------- */

START_TEST(t_matmul_hand)
{
    bp_backend_t *be = cpu();
    /* [1, 1+2^-12] . [-(1+2^-11), 1+2^-12]: (1+2^-12)^2 = 1 + 2^-11 + 2^-24
     * needs 25 bits; fused it leaves 2^-24, rounded first it would leave 0 */
    int64_t sa[2] = {1, 2}, sb[2] = {2, 1}, so[2] = {1, 1};
    bp_buf_t a = alloc(BP_F32, 2, sa), b = alloc(BP_F32, 2, sb);
    bp_dtype_store_bits(BP_F32, a.data, 0, fbits(1.0f));
    bp_dtype_store_bits(BP_F32, a.data, 1, fbits(1.0f + 0x1p-12f));
    bp_dtype_store_bits(BP_F32, b.data, 0, fbits(-(1.0f + 0x1p-11f)));
    bp_dtype_store_bits(BP_F32, b.data, 1, fbits(1.0f + 0x1p-12f));
    bp_buf_t o = op2f(be, BP_OP_MATMUL, BP_FORM_DEFAULT, &a, NAN, &b, NAN,
                      BP_F32, 2, so);
    ck_bits(&o, 0, 0x33800000);
    /* bf16 inputs accumulate in float and round once: 1 + 2^-8 + 2^-8 is
     * 1 + 2^-7 (0x3f81); rounding to bf16 per step would stay at 1. */
    int64_t sc[2] = {1, 3}, sd[2] = {3, 1};
    bp_buf_t c = alloc(BP_BF16, 2, sc), d = alloc(BP_BF16, 2, sd);
    bp_dtype_store_bits(BP_BF16, c.data, 0, 0x3f80);
    bp_dtype_store_bits(BP_BF16, c.data, 1, 0x3b80); /* 2^-8 */
    bp_dtype_store_bits(BP_BF16, c.data, 2, 0x3b80);
    for (int k = 0; k < 3; k++)
        bp_dtype_store_bits(BP_BF16, d.data, k, 0x3f80);
    bp_buf_t p = op2f(be, BP_OP_MATMUL, BP_FORM_DEFAULT, &c, NAN, &d, NAN,
                      BP_BF16, 2, so);
    ck_bits(&p, 0, 0x3f81);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_matmul_order)
{
    bp_backend_t *be = cpu();
    seed("t_matmul_order", 1234);
    int64_t sa[2] = {7, 33}, sb[2] = {33, 5}, so[2] = {7, 5};
    bp_buf_t a = alloc(BP_F32, 2, sa), b = alloc(BP_F32, 2, sb);
    for (size_t i = 0; i < a.numel; i++)
        bp_dtype_store_bits(
            BP_F32, a.data, i,
            fbits((float)((int64_t)(rnd() % 2000001) - 1000000) / 65536.0f));
    for (size_t i = 0; i < b.numel; i++)
        bp_dtype_store_bits(
            BP_F32, b.data, i,
            fbits((float)((int64_t)(rnd() % 2000001) - 1000000) / 3.0f));
    bp_buf_t o = op2f(be, BP_OP_MATMUL, BP_FORM_DEFAULT, &a, NAN, &b, NAN,
                      BP_F32, 2, so);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 5; j++) {
            float acc = 0.0f;
            for (int k = 0; k < 33; k++)
                acc = fmaf((float)bp_buf_get(&a, (size_t)(i * 33 + k)),
                           (float)bp_buf_get(&b, (size_t)(k * 5 + j)), acc);
            ck_bits(&o, (size_t)(i * 5 + j), fbits(acc));
        }
    bp_backend_close(be);
}
END_TEST

START_TEST(t_sum)
{
    bp_backend_t *be = cpu();
    /* [1, 2^-24 x4]: left to right every 2^-24 is lost (ties to even);
     * pairwise [1, e] + [e, [e, e]] = 1 + 3*2^-24, a tie that rounds to
     * 1 + 2^-22. */
    bp_buf_t x = vec_of(BP_F32, 5);
    bp_dtype_store_bits(BP_F32, x.data, 0, fbits(1.0f));
    for (int i = 1; i < 5; i++)
        bp_dtype_store_bits(BP_F32, x.data, i, fbits(0x1p-24f));
    int64_t s0[1] = {1};
    bp_buf_t sq = op2f(be, BP_OP_SUM, BP_FORM_DEFAULT, &x, NAN, NULL, NAN,
                       BP_F32, 0, s0);
    bp_buf_t ss = op2f(be, BP_OP_SUM, BP_FORM_SEQUENTIAL, &x, NAN, NULL, NAN,
                       BP_F32, 0, s0);
    bp_buf_t sp = op2f(be, BP_OP_SUM, BP_FORM_PAIRWISE, &x, NAN, NULL, NAN,
                       BP_F32, 0, s0);
    ck_bits(&sq, 0, 0x3f800000);
    ck_bits(&ss, 0, 0x3f800000);
    ck_bits(&sp, 0, 0x3f800002);
    /* bf16 accumulates in float: 1 + 4 * 2^-9 = 1 + 2^-7 exactly */
    bp_buf_t h = vec_of(BP_BF16, 5);
    bp_dtype_store_bits(BP_BF16, h.data, 0, 0x3f80);
    for (int i = 1; i < 5; i++)
        bp_dtype_store_bits(BP_BF16, h.data, i, 0x3b00); /* 2^-9 */
    bp_buf_t hs = op2f(be, BP_OP_SUM, BP_FORM_DEFAULT, &h, NAN, NULL, NAN,
                       BP_BF16, 0, s0);
    ck_bits(&hs, 0, 0x3f81);
    /* ATen's cascade reads 16 bf16 values as two float halves added lane by
     * lane (SumKernel.cpp InnerSumCastLoadPolicy), then sums each lane over
     * the registers.  32 values, 0 but x[0] = 1, x[8] = 2^24, x[16] = 1,
     * x[24] = -2^24: lane 0 is (1 + 2^24) + (1 - 2^24) = 2^24 - (2^24 - 1)
     * = 1 (the first sum a tie, to even).  Without the pairing lane 0 would
     * be ((1 + 2^24) + 1) - 2^24 = 0; neighbouring pairs (1.13's fp16) give
     * (1 + 1) + 0 = 2; left to right gives 0. */
    bp_buf_t spk = vec_of(BP_BF16, 32);
    bp_dtype_store_bits(BP_BF16, spk.data, 0, 0x3f80);
    bp_dtype_store_bits(BP_BF16, spk.data, 8, 0x4b80);
    bp_dtype_store_bits(BP_BF16, spk.data, 16, 0x3f80);
    bp_dtype_store_bits(BP_BF16, spk.data, 24, 0xcb80);
    bp_buf_t spd = op2f(be, BP_OP_SUM, BP_FORM_DEFAULT, &spk, NAN, NULL, NAN, BP_BF16, 0, s0);
    bp_buf_t sps = op2f(be, BP_OP_SUM, BP_FORM_SEQUENTIAL, &spk, NAN, NULL, NAN, BP_BF16, 0, s0);
    ck_bits(&spd, 0, 0x3f80);
    ck_bits(&sps, 0, 0x0000);
    /* fp32: 9 values, V = 8 lanes, acc = 0 + x[8], then the lanes in order
     * (-1e8 + 1e8 + 1 * 6 + 1 = 7); left to right 1e8 + 1 is 1e8 each time */
    double nine[9] = {1e8, 1, 1, 1, 1, 1, 1, 1, -1e8};
    bp_buf_t cs = vec_of(BP_F32, 9);
    for (int i = 0; i < 9; i++)
        bp_dtype_store_bits(BP_F32, cs.data, i, fbits((float)nine[i]));
    bp_buf_t csd = op2f(be, BP_OP_SUM, BP_FORM_DEFAULT, &cs, NAN, NULL, NAN, BP_F32, 0, s0);
    bp_buf_t css = op2f(be, BP_OP_SUM, BP_FORM_SEQUENTIAL, &cs, NAN, NULL, NAN, BP_F32, 0, s0);
    ck_bits(&csd, 0, fbits(7.0f));
    ck_bits(&css, 0, fbits(0.0f));
    /* axes of a [2, 3] integer matrix 0..5 */
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2};
    bp_buf_t m = alloc(BP_I64, 2, s23);
    for (int i = 0; i < 6; i++)
        bp_dtype_store_bits(BP_I64, m.data, i, (uint64_t)i);
    bp_op_t op = {.kind = BP_OP_SUM, .has_axis = true, .axis = 0};
    bp_buf_t c = alloc(BP_I64, 1, s3);
    ck_assert_int_eq(run_op(be, &op, &m, NAN, NULL, NAN, &c), BP_OK);
    op.axis = -1;
    bp_buf_t r = alloc(BP_I64, 1, s2);
    ck_assert_int_eq(run_op(be, &op, &m, NAN, NULL, NAN, &r), BP_OK);
    for (int j = 0; j < 3; j++)
        ck_bits(&c, j, (uint64_t)(j + j + 3));
    ck_bits(&r, 0, 3);
    ck_bits(&r, 1, 12);
    op.axis = 2;
    ck_assert_int_eq(run_op(be, &op, &m, NAN, NULL, NAN, &r), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

/* ---- literals, generator, data movement ----------------------------- */

START_TEST(t_tensor_literal)
{
    bp_backend_t *be = cpu();
    double v[3] = {0.1, 1 + 0x1p-8 + 0x1p-30, -2.7};
    int64_t sh[1] = {3};
    bp_op_t op = {.kind = BP_OP_TENSOR, .values = v, .nvalues = 3};
    bp_buf_t b = alloc(BP_BF16, 1, sh), i = alloc(BP_I32, 1, sh);
    ck_assert_int_eq(run_op(be, &op, NULL, NAN, NULL, NAN, &b), BP_OK);
    ck_bits(&b, 0, 0x3dcd);
    ck_bits(&b, 1, 0x3f80); /* through float, as torch.tensor(..., bf16) */
    ck_assert_int_eq(run_op(be, &op, NULL, NAN, NULL, NAN, &i), BP_OK);
    ck_bits(&i, 2, (uint32_t)-2);
    bp_buf_t big = vec_of(BP_F32, 4);
    ck_assert_int_eq(run_op(be, &op, NULL, NAN, NULL, NAN, &big), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_uniform)
{
    bp_backend_t *be = cpu();
    int64_t sh[1] = {3};
    bp_op_t op = {.kind = BP_OP_UNIFORM,
                  .seed = 0,
                  .stream = 0,
                  .low = 0,
                  .high = 1,
                  .ndim = 1,
                  .shape = {3}};
    bp_buf_t f = alloc(BP_F32, 1, sh), h = alloc(BP_BF16, 1, sh);
    ck_assert_int_eq(run_op(be, &op, NULL, NAN, NULL, NAN, &f), BP_OK);
    ck_assert_int_eq(run_op(be, &op, NULL, NAN, NULL, NAN, &h), BP_OK);
    /* Random123: philox4x32-10 of counter 0, key 0 starts 0x6627e8d5 */
    ck_bits(&f, 0, fbits(0x6627e8 * 0x1p-24f));
    ck_bits(&h, 0, mp_bits(BP_BF16, MP_SET, 0x6627e8 * 0x1p-24, 0));
    for (int i = 1; i < 3; i++)
        ck_bits(&f, i, fbits(bp_rng_uniform(0, 0, (uint64_t)i, 0.0f, 1.0f)));
    bp_backend_close(be);
}
END_TEST

START_TEST(t_copies)
{
    bp_backend_t *be = cpu();
    int64_t s24[2] = {2, 4}, s22[2] = {2, 2}, s26[2] = {2, 6}, s44[2] = {4, 4};
    bp_buf_t a = alloc(BP_F32, 2, s24);
    for (int i = 0; i < 8; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, fbits((float)i + 0.25f));
    bp_dtype_store_bits(BP_F32, a.data, 2, fbits(0.0f));
    /* rotate_half: [x1, x2] -> [-x2, x1] on the last dimension */
    bp_buf_t r = op2(be, BP_OP_ROTATE_HALF, &a, NAN, NULL, NAN, BP_F32);
    static const float rw[8] = {-0.0f,  -3.25f, 0.25f, 1.25f,
                                -6.25f, -7.25f, 4.25f, 5.25f};
    for (int i = 0; i < 8; i++)
        ck_bits(&r, i, fbits(rw[i]));
    /* slice columns 1::2 (start -3 from the end) */
    bp_op_t sl = {.kind = BP_OP_SLICE,
                  .has_axis = true,
                  .axis = -1,
                  .s_start = -3,
                  .s_end = INT64_MAX,
                  .s_step = 2};
    bp_buf_t s = alloc(BP_F32, 2, s22);
    ck_assert_int_eq(run_op(be, &sl, &a, NAN, NULL, NAN, &s), BP_OK);
    ck_bits(&s, 0, fbits(1.25f));
    ck_bits(&s, 1, fbits(3.25f));
    ck_bits(&s, 3, fbits(7.25f));
    /* concat along -1 with a [2, 2] piece, and along 0 */
    bp_op_t cat = {.kind = BP_OP_CONCAT, .has_axis = true, .axis = -1};
    const bp_buf_t *ins[2] = {&a, &s};
    bp_buf_t c = alloc(BP_F32, 2, s26);
    bp_exec_t x = {.op = &cat, .inputs = ins, .ninputs = 2, .out = &c};
    ck_assert_int_eq(be->op[BP_OP_CONCAT](be, &x, &err), BP_OK);
    ck_bits(&c, 4, fbits(1.25f));
    ck_bits(&c, 6, fbits(4.25f));
    ck_bits(&c, 11, fbits(7.25f));
    cat.axis = 0;
    const bp_buf_t *ins2[2] = {&a, &r};
    bp_buf_t c0 = alloc(BP_F32, 2, s44);
    x = (bp_exec_t){.op = &cat, .inputs = ins2, .ninputs = 2, .out = &c0};
    ck_assert_int_eq(be->op[BP_OP_CONCAT](be, &x, &err), BP_OK);
    ck_bits(&c0, 8, fbits(-0.0f));
    ck_bits(&c0, 15, fbits(5.25f));
    /* neg flips the sign bit, NaN and zero too; integers wrap */
    bp_buf_t ng = op2(be, BP_OP_NEG, &a, NAN, NULL, NAN, BP_F32);
    ck_bits(&ng, 2, 0x80000000u);
    ck_bits(&ng, 7, fbits(-7.25f));
    bp_buf_t im = vec_of(BP_I64, 1);
    bp_dtype_store_bits(BP_I64, im.data, 0, 0x8000000000000000ull);
    bp_buf_t in = op2(be, BP_OP_NEG, &im, NAN, NULL, NAN, BP_I64);
    ck_bits(&in, 0, 0x8000000000000000ull);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_bad_input)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = vec_of(BP_F32, 3), b = vec_of(BP_F32, 4);
    bp_op_t op = {.kind = BP_OP_ADD};
    bp_buf_t out = vec_of(BP_F32, 3);
    ck_assert_int_eq(run_op(be, &op, &a, NAN, &b, NAN, &out), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "does not broadcast") != NULL, "%s",
                  err.msg);
    op.kind = BP_OP_SUM;
    op.form = BP_FORM_RECIPROCAL;
    ck_assert_int_eq(run_op(be, &op, &a, NAN, NULL, NAN, &out), BP_EINPUT);
    int64_t s3[2] = {1, 3};
    bp_buf_t odd = alloc(BP_F32, 2, s3), o2 = alloc(BP_F32, 2, s3);
    op = (bp_op_t){.kind = BP_OP_ROTATE_HALF};
    ck_assert_int_eq(run_op(be, &op, &odd, NAN, NULL, NAN, &o2), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

/* TensorIterator's inner loop after coalescing, which places the tails. */
START_TEST(t_loop_layout)
{
    int64_t big[2] = {4096, 128}, col[2] = {4096, 1}, row[2] = {1, 128};
    bp_buf_t o = {
        .dtype = BP_F32, .ndim = 2, .shape = {4096, 128}, .numel = 4096 * 128};
    bp_buf_t a = {.dtype = BP_F32, .ndim = 2, .numel = 4096 * 128};
    bp_buf_t c = {.dtype = BP_F32, .ndim = 2, .numel = 4096};
    bp_buf_t r = {.dtype = BP_F32, .ndim = 2, .numel = 128};
    memcpy(a.shape, big, sizeof big);
    memcpy(c.shape, col, sizeof col);
    memcpy(r.shape, row, sizeof row);
    bp_cpu_loop_t l = bp_cpu_loop(&o, &a, NULL);
    ck_assert_uint_eq(l.row, 4096 * 128);
    ck_assert(l.vec);
    l = bp_cpu_loop(&o, &c, &r); /* outer-style broadcast */
    ck_assert_uint_eq(l.row, 128);
    ck_assert(l.vec);
    bp_buf_t s = {.dtype = BP_F32, .ndim = 0, .numel = 1};
    l = bp_cpu_loop(&o, &a, &s);
    ck_assert_uint_eq(l.row, 4096 * 128);
    bp_cpu_loop_t t = {50, true};
    ck_assert(bp_cpu_in_vector(&t, 47, 8));
    ck_assert(!bp_cpu_in_vector(&t, 48, 8));
    ck_assert(!bp_cpu_in_vector(&t, 32, 16));
    ck_assert(bp_cpu_in_vector(&t, 31, 16));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("be_cpu");
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, NULL, ref_release);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_open);
    tcase_add_test(tc, t_seed_div);
    tcase_add_test(tc, t_div_decimal_reciprocal);
    tcase_add_test(tc, t_arange_bf16_beyond_256);
    tcase_add_test(tc, t_arange_int);
    tcase_add_loop_test(tc, t_ieee_binary, 0, 4);
    tcase_add_loop_test(tc, t_ieee_unary, 0, 4);
    tcase_add_test(tc, t_outer);
    tcase_add_test(tc, t_cast_float);
    tcase_add_test(tc, t_cast_int);
    tcase_add_test(tc, t_math_modes);
    tcase_add_test(tc, t_matmul_hand);
    tcase_add_test(tc, t_matmul_order);
    tcase_add_test(tc, t_sum);
    tcase_add_test(tc, t_tensor_literal);
    tcase_add_test(tc, t_uniform);
    tcase_add_test(tc, t_copies);
    tcase_add_test(tc, t_bad_input);
    tcase_add_test(tc, t_loop_layout);
    suite_add_tcase(s, tc);
    TCase *ti = tcase_create("isa");
    tcase_add_checked_fixture(ti, NULL, ref_release);
    be_cpu_isa_tests(ti);
    be_cpu_act_tests(tc);
    suite_add_tcase(s, ti);
    TCase *tu = tcase_create("ulp");
    tcase_add_checked_fixture(tu, NULL, ref_release);
    tcase_set_timeout(tu, 300);
    be_cpu_ulp_tests(tu);
    suite_add_tcase(s, tu);
    TCase *tt = tcase_create("pytorch");
    tcase_add_checked_fixture(tt, NULL, ref_release);
    tcase_set_timeout(tt, 120);
    be_cpu_aten_tests(tt);
    suite_add_tcase(s, tt);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
