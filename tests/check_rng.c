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

#include "rng.h"

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
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
