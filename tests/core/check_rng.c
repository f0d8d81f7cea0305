/* Philox-4x32-10 against Random123's published known-answer vectors
 * (kat_vectors, "philox4x32 10" lines), and the uniform mapping against
 * values derived by hand from those vectors and against an independent
 * computation in double that rounds each step to float. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "dtype.h"
#include "rng.h"
#include "rng_normal.h"

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static const struct {
    uint32_t ctr[4], key[2], want[4];
} kat[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

START_TEST(t_philox_kat)
{
    uint32_t out[4];
    bp_philox4x32_10(kat[_i].ctr, kat[_i].key, out);
    for (int w = 0; w < 4; w++)
        ck_assert_msg(out[w] == kat[_i].want[w],
                      "vector %d word %d: got %08x, want %08x", _i, w, out[w],
                      kat[_i].want[w]);
}
END_TEST

/* The same blocks through the uniform mapping: counter words are (index lo,
 * index hi, stream lo, stream hi), key words (seed lo, seed hi), and
 * u = (word0 >> 8) * 2^-24 is returned unchanged for [0, 1). */
START_TEST(t_uniform_from_kat)
{
    static const struct {
        uint64_t seed, stream, index;
        uint32_t word0;
    } c[] = {
        {0, 0, 0, 0x6627e8d5},
        {UINT64_MAX, UINT64_MAX, UINT64_MAX, 0x408f276d},
        {0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull,
         0xd16cfe09},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        float got =
            bp_rng_uniform(c[i].seed, c[i].stream, c[i].index, 0.0f, 1.0f);
        float want = (float)ldexp((double)(c[i].word0 >> 8), -24);
        ck_assert_msg(fbits(got) == fbits(want),
                      "case %zu: got %a (0x%08x), want %a (0x%08x)", i,
                      (double)got, fbits(got), (double)want, fbits(want));
    }
}
END_TEST

/* Hand-derived: word0 0x6627e8d5 gives u = 0x6627e8 * 2^-24; with low -1
 * and high 1 the span 2 and the product 0xcc4fd0 * 2^-24 are exact, and so
 * is the sum -1 + 0xcc4fd0 * 2^-24 = -0x33b030 * 2^-24. */
START_TEST(t_uniform_scaled_hand)
{
    float got = bp_rng_uniform(0, 0, 0, -1.0f, 1.0f);
    /* 2 * 0x6627e8 * 2^-24 - 1 = (0xcc4fd0 - 0x1000000) * 2^-24 */
    double want = ((double)0xcc4fd0 - (double)0x1000000) * 0x1p-24;
    ck_assert_msg((double)got == want, "got %a, want %a", (double)got, want);
}
END_TEST

/* Independent reference: each operation done in double and rounded to
 * float (exact emulation of one float rounding per step), against the
 * fused form; cases where the two differ show that no FMA is used. */
START_TEST(t_uniform_separate_roundings)
{
    const uint32_t seed = 20240611;
    const float lows[] = {0.1f, -3.7f, 1e-3f, -0.02f};
    const float highs[] = {0.7f, 2.9f, 1.0f, 0.02f};
    int fused_differs = 0;
    printf("check_rng: uniform seed %u\n", (unsigned)seed);
    for (int c = 0; c < 4; c++)
        for (uint64_t i = 0; i < 20000; i++) {
            float lo = lows[c], hi = highs[c];
            float got = bp_rng_uniform(seed, (uint64_t)c, i, lo, hi);
            uint32_t ctr[4] = {(uint32_t)i, 0, (uint32_t)c, 0};
            uint32_t key[2] = {seed, 0};
            uint32_t w[4];
            bp_philox4x32_10(ctr, key, w);
            double u = ldexp((double)(w[0] >> 8), -24);
            float span = (float)((double)hi - (double)lo);
            float scaled = (float)((double)span * u);
            float want = (float)((double)lo + (double)scaled);
            float fused = fmaf(span, (float)u, lo);
            if (fbits(fused) != fbits(want))
                fused_differs++;
            ck_assert_msg(fbits(got) == fbits(want),
                          "stream %d index %llu: got %a (0x%08x), want %a "
                          "(0x%08x)",
                          c, (unsigned long long)i, (double)got, fbits(got),
                          (double)want, fbits(want));
            ck_assert(got >= lo && got <= hi);
        }
    /* Guards the test itself: it must include inputs where an FMA shows. */
    ck_assert_int_gt(fused_differs, 0);
}
END_TEST

/* Index bits above 32 and stream bits reach the counter: neighbouring
 * counters give different blocks. */
START_TEST(t_uniform_counter_words)
{
    float a = bp_rng_uniform(7, 0, 0, 0.0f, 1.0f);
    float b = bp_rng_uniform(7, 0, 1ull << 32, 0.0f, 1.0f);
    float c = bp_rng_uniform(7, 1ull << 32, 0, 0.0f, 1.0f);
    float d = bp_rng_uniform(7ull << 32, 0, 0, 0.0f, 1.0f);
    uint32_t w[4];
    bp_philox4x32_10((const uint32_t[4]){0, 1, 0, 0},
                     (const uint32_t[2]){7, 0}, w);
    ck_assert_uint_eq(fbits(b), fbits((float)ldexp((double)(w[0] >> 8), -24)));
    bp_philox4x32_10((const uint32_t[4]){0, 0, 0, 1},
                     (const uint32_t[2]){7, 0}, w);
    ck_assert_uint_eq(fbits(c), fbits((float)ldexp((double)(w[0] >> 8), -24)));
    bp_philox4x32_10((const uint32_t[4]){0, 0, 0, 0},
                     (const uint32_t[2]){0, 7}, w);
    ck_assert_uint_eq(fbits(d), fbits((float)ldexp((double)(w[0] >> 8), -24)));
    ck_assert(fbits(a) != fbits(b) && fbits(a) != fbits(c) &&
              fbits(a) != fbits(d));
}
END_TEST

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* The normal stream (rng_normal.h, probes/README.md) against values that
 * tests/rng_normal_ref.py computes from the written statement alone
 * (`python3 tests/rng_normal_ref.py 0 0 8`; Python floats, exact fma).
 * Pair 0 of seed 0, stream 0 is Random123's first known-answer block:
 * u1 = (0xcc4fd1abc2d38 + 1) / 2^53 = 0.39905, u2 = 0x178af58993601b / 2^53
 * = 0.73571, so element 0 is sqrt(-2 ln u1) cos(2 pi u2) = 1.35553 *
 * -0.08964 = -0.12152 and element 1 the sine's 1.35553 * -0.99597. */
START_TEST(t_normal_reference)
{
    static const uint64_t want[8] = {
        0xbfbf1bcd549837c2ull, 0xbff599bbd8a9eda7ull, 0xbfb4f5b54df97ef4ull,
        0xbfcc81bafe55414cull, 0x3ffc6c3bebeb4e5bull, 0x4001635ed724a52dull,
        0xbfe183d7dd057c91ull, 0xbfdb0ac77286d57bull};
    for (uint64_t i = 0; i < 8; i++) {
        double got = bp_rng_normal(0, 0, i, 0.0, 1.0);
        ck_assert_msg(dbits(got) == want[i], "randn[%llu]: got %a (0x%016llx), want 0x%016llx",
                      (unsigned long long)i, got, (unsigned long long)dbits(got),
                      (unsigned long long)want[i]);
    }
    double u1 = (double)(0xcc4fd1abc2d38ull + 1) * 0x1p-53, u2 = 0x178af58993601bull * 0x1p-53;
    double r = sqrt(-2.0 * log(u1)), t = 2.0 * M_PI * u2;
    ck_assert(fabs(bp_rng_normal(0, 0, 0, 0.0, 1.0) - r * cos(t)) < 1e-15);
    ck_assert(fabs(bp_rng_normal(0, 0, 1, 0.0, 1.0) - r * sin(t)) < 1e-15);
    /* Counter words above 32 bits, stream and seed high words, mean and std
     * (rng_normal_ref.py's normal(seed, stream, i, mean, std)). */
    ck_assert_uint_eq(dbits(bp_rng_normal(0x0123456789abcdefull, 5, (1ull << 33) + 1, 0.0, 1.0)),
                      0xbfd9f0bd16c058f8ull);
    ck_assert_uint_eq(dbits(bp_rng_normal(42, 1ull << 40, 6, -3.5, 0.25)), 0xc00a472f21e40522ull);
    ck_assert_uint_eq(dbits(bp_rng_normal(7, 0, 3, 1e30, 1e30)), 0x463b8b5930b01597ull);
}
END_TEST

/* Round to odd then nearest even is one rounding.  By hand: 1 + 2^-8 +
 * 2^-30 is just above the bf16 midpoint 1 + 2^-8, so bf16 takes 1 + 2^-7
 * (0x3f81); through a float rounded to nearest, the 2^-30 is lost and the
 * tie goes to even, 1.0 (0x3f80).  Rounded to odd, the float is 1 + 2^-8 +
 * 2^-23.  Then against MPFR over doubles near bf16 and fp16 midpoints. */
START_TEST(t_normal_round_odd)
{
    double v = 1 + 0x1p-8 + 0x1p-30;
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(v)), fbits(1 + 0x1p-8f + 0x1p-23f));
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(-v)), fbits(-(1 + 0x1p-8f + 0x1p-23f)));
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(1.5)), fbits(1.5f));
    /* toward zero first: (float) rounds 1 + 2^-24 + 2^-40 up to 1 + 2^-23 */
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(1 + 0x1p-24 + 0x1p-40)), fbits(1.0f + 0x1p-23f));
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(0x1p-24 + 0x1p-60)), fbits(0x1p-24f + 0x1p-47f));
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(1e300)), 0x7f7fffffu);
    ck_assert_uint_eq(fbits(bp_normal_f32_odd(1e-300)), 0x00000001u);
    mpfr_t m;
    mpfr_init2(m, 11);
    uint64_t x = 88172645463325252ull;
    for (int k = 0; k < 200000; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* a midpoint of an 8- or 11-bit significand, nudged by a few
         * double ulps or exactly on it */
        int p = k & 1 ? 8 : 11;
        double mid = ldexp((double)((x >> 11) | (1ull << 52)) , -52);
        int scale = p == 8 ? (int)(x % 60) - 30 : (int)(x % 24) - 12; /* fp16: normals */
        mid = ldexp(floor(ldexp(mid, p - 1)) + 0.5, 1 - p) * ldexp(1.0, scale);
        double nudge = ldexp(mid, -52) * (double)((int)(x >> 60) - 8);
        double d = mid + nudge;
        float o = bp_normal_f32_odd(d);
        mpfr_set_prec(m, p);
        mpfr_set_d(m, d, MPFR_RNDN);
        double want = mpfr_get_d(m, MPFR_RNDN);
        double got = p == 8 ? bp_bf16_to_f32(bp_f32_to_bf16(o)) : bp_f16_to_f32(bp_f32_to_f16(o));
        ck_assert_msg(got == want, "%a: got %a, want %a", d, got, want);
    }
    mpfr_clear(m);
}
END_TEST

/* 10^6 draws: mean and variance of the standard normal, and the mass
 * within 1 and 2 of 0, each within 5 standard errors. */
START_TEST(t_normal_moments)
{
    const int n = 1000000;
    double s = 0, s2 = 0;
    int in1 = 0, in2 = 0;
    for (int i = 0; i < n; i++) {
        double z = bp_rng_normal(2024, 3, (uint64_t)i, 0.0, 1.0);
        s += z;
        s2 += z * z;
        in1 += fabs(z) < 1;
        in2 += fabs(z) < 2;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    double p1 = 0.682689492137, p2 = 0.954499736104;
    printf("check_rng: randn seed 2024 stream 3, 10^6 draws: mean %.5f var %.5f "
           "P(|z|<1) %.5f P(|z|<2) %.5f\n", mean, var, (double)in1 / n, (double)in2 / n);
    ck_assert(fabs(mean) < 5 / sqrt(n));
    ck_assert(fabs(var - 1) < 5 * sqrt(2.0 / n));
    ck_assert(fabs((double)in1 / n - p1) < 5 * sqrt(p1 * (1 - p1) / n));
    ck_assert(fabs((double)in2 / n - p2) < 5 * sqrt(p2 * (1 - p2) / n));
}
END_TEST

/* The fixed polynomials against MPFR: log(n / 2^53) and cos, sin of
 * 2 pi k / 2^53 over drawn n and k, each within a few units of 2^-53 (in
 * the result's scale; the argument x = r pi/2 2^-51 carries one rounding,
 * so sin and cos are within 2^-52 absolute).  The standard normal's
 * accuracy is what these give it: the stream is a sample of N(0, 1) to
 * about double precision, not a rounding of it. */
START_TEST(t_normal_accuracy)
{
    mpfr_t a, b, pi;
    mpfr_inits2(200, a, b, pi, (mpfr_ptr)0);
    mpfr_const_pi(pi, MPFR_RNDN);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    double worst_log = 0, worst_trig = 0;
    for (int k = 0; k < 100000; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t n = (x >> (11 + (k % 50))) + 1; /* small n too: the tail */
        double got = bp_normal_log(n);
        mpfr_set_d(a, (double)n, MPFR_RNDN);
        mpfr_mul_2si(a, a, -53, MPFR_RNDN);
        mpfr_log(a, a, MPFR_RNDN);
        double want = mpfr_get_d(a, MPFR_RNDN);
        double err = fabs(got - want) / (want != 0 ? ldexp(1.0, ilogb(want) - 52) : 0x1p-1074);
        if (err > worst_log)
            worst_log = err;
        uint64_t k2 = x >> 11;
        for (int odd = 0; odd < 2; odd++) {
            double t = bp_normal_circle(k2, odd);
            mpfr_set_d(b, (double)k2, MPFR_RNDN);
            mpfr_mul(b, b, pi, MPFR_RNDN);
            mpfr_mul_2si(b, b, -52, MPFR_RNDN);
            if (odd)
                mpfr_sin(b, b, MPFR_RNDN);
            else
                mpfr_cos(b, b, MPFR_RNDN);
            double e2 = fabs(t - mpfr_get_d(b, MPFR_RNDN)) / 0x1p-53;
            if (e2 > worst_trig)
                worst_trig = e2;
        }
    }
    printf("check_rng: normal stream vs MPFR, 10^5 draws: log within %.2f ulp, "
           "cos/sin within %.2f * 2^-53\n", worst_log, worst_trig);
    ck_assert(worst_log <= 2);
    ck_assert(worst_trig <= 2);
    mpfr_clears(a, b, pi, (mpfr_ptr)0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("philox");
    tcase_add_loop_test(tc, t_philox_kat, 0,
                        (int)(sizeof kat / sizeof kat[0]));
    tcase_add_test(tc, t_uniform_from_kat);
    tcase_add_test(tc, t_uniform_scaled_hand);
    tcase_add_test(tc, t_uniform_separate_roundings);
    tcase_add_test(tc, t_uniform_counter_words);
    tcase_add_test(tc, t_normal_reference);
    tcase_add_test(tc, t_normal_round_odd);
    tcase_add_test(tc, t_normal_moments);
    tcase_add_test(tc, t_normal_accuracy);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
