/* Tests of dtype.c's fp8 formats and storage integer dtypes, against
 * references that share no code with it:
 *  - all 256 codes of each fp8 format decoded by a decoder written here
 *    from the formats' definitions (ldexp in double), and a table of
 *    values worked out by hand (448, 2^-9, 57344, inf, NaN ...);
 *  - f32 -> fp8 against MPFR (precision 4 / 3, the formats' subnormal
 *    range, mpfr_subnormalize), overflow and NaN settled by the rules the
 *    header documents, on the dense edge-case set, on every f32 within 64
 *    ulps of every fp8 value and midpoint, on random inputs, and on all
 *    2^32 inputs with BP_SLOW=1;
 *  - a hand-derived table of f32 inputs with their four encodings
 *    (e4m3fn and e5m2, non-saturating and saturating), itself checked
 *    against the MPFR reference;
 *  - ulp distance over every pair of codes against ranks in value order;
 *  - the integer dtypes' raw access, conversions and distances against
 *    C's own integer arithmetic. */
#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_dtype.h"
#include "dtype.h"

/* ---- the formats, from their definitions ------------------------------ */

typedef struct {
    const char *name;
    bp_dtype_t dt;
    int ebits, mbits, bias;
    bool ieee;        /* all-ones exponent is inf/NaN (e5m2), else only
                       * S.1111.111 is NaN (e4m3fn) */
    double max;       /* largest finite value */
    uint8_t maxcode;
    uint8_t (*conv)(float, bool);
    float (*widen)(uint8_t);
} fp8_t;

static const fp8_t E4M3 = {"e4m3fn", BP_F8_E4M3, 4, 3, 7, false, 448.0, 0x7e,
                           bp_f32_to_f8e4m3, bp_f8e4m3_to_f32};
static const fp8_t E5M2 = {"e5m2", BP_F8_E5M2, 5, 2, 15, true, 57344.0, 0x7b,
                           bp_f32_to_f8e5m2, bp_f8e5m2_to_f32};

enum { FIN, INF_, NAN_ };

static double dec8(const fp8_t *f, uint8_t c, int *cls)
{
    unsigned e = (c >> f->mbits) & ((1u << f->ebits) - 1u);
    unsigned m = c & ((1u << f->mbits) - 1u);
    double s = c & 0x80 ? -1.0 : 1.0;
    *cls = FIN;
    if (f->ieee && e == (1u << f->ebits) - 1u) {
        *cls = m ? NAN_ : INF_;
        return m ? NAN : s * INFINITY;
    }
    if (!f->ieee && (c & 0x7f) == 0x7f) {
        *cls = NAN_;
        return NAN;
    }
    if (e == 0)
        return s * ldexp((double)m, 1 - f->bias - f->mbits);
    return s * ldexp((double)(m + (1u << f->mbits)), (int)e - f->bias - f->mbits);
}

/* Values worked out by hand from the bit layout. */
static const struct {
    const fp8_t *f;
    uint8_t code;
    double v;
} hand[] = {
    {&E4M3, 0x38, 1.0},         {&E4M3, 0x7e, 448.0},       {&E4M3, 0xfe, -448.0},
    {&E4M3, 0x78, 256.0},       {&E4M3, 0x77, 240.0},       {&E4M3, 0x08, 0x1p-6},
    {&E4M3, 0x01, 0x1p-9},      {&E4M3, 0x07, 7 * 0x1p-9},  {&E4M3, 0x36, 0.875},
    {&E4M3, 0x1d, 0.1015625},   {&E4M3, 0x00, 0.0},         {&E4M3, 0x80, -0.0},
    {&E4M3, 0x40, 2.0},         {&E4M3, 0x3f, 1.875},       {&E4M3, 0x79, 288.0},
    {&E5M2, 0x3c, 1.0},         {&E5M2, 0x7b, 57344.0},     {&E5M2, 0xfb, -57344.0},
    {&E5M2, 0x7c, INFINITY},    {&E5M2, 0xfc, -INFINITY},   {&E5M2, 0x01, 0x1p-16},
    {&E5M2, 0x03, 3 * 0x1p-16}, {&E5M2, 0x04, 0x1p-14},     {&E5M2, 0x5f, 448.0},
    {&E5M2, 0x60, 512.0},       {&E5M2, 0x3b, 0.875},       {&E5M2, 0x2e, 0.09375},
    {&E5M2, 0x80, -0.0},        {&E5M2, 0x3d, 1.25},
};

START_TEST(t_hand_values)
{
    for (size_t i = 0; i < sizeof hand / sizeof *hand; i++) {
        double got = hand[i].f->widen(hand[i].code);
        ck_assert_msg(got == hand[i].v && !signbit(got) == !signbit(hand[i].v),
                      "%s 0x%02x widened to %a, want %a", hand[i].f->name,
                      hand[i].code, got, hand[i].v);
        int cls;
        double d = dec8(hand[i].f, hand[i].code, &cls);
        ck_assert_msg(d == hand[i].v, "the test's decoder: %s 0x%02x is %a, want %a",
                      hand[i].f->name, hand[i].code, d, hand[i].v);
    }
    ck_assert(isnan(bp_f8e4m3_to_f32(0x7f)) && isnan(bp_f8e4m3_to_f32(0xff)));
    for (unsigned c = 0x7d; c <= 0x7f; c++)
        ck_assert(isnan(bp_f8e5m2_to_f32((uint8_t)c)) &&
                  isnan(bp_f8e5m2_to_f32((uint8_t)(c | 0x80))));
}
END_TEST

static void all_codes(const fp8_t *f)
{
    for (unsigned c = 0; c < 256; c++) {
        int cls;
        double want = dec8(f, (uint8_t)c, &cls);
        float w = f->widen((uint8_t)c);
        uint64_t bits = c;
        ck_assert_msg(bp_dtype_bits_isnan(f->dt, bits) == (cls == NAN_) &&
                      bp_dtype_bits_isinf(f->dt, bits) == (cls == INF_),
                      "%s 0x%02x: class", f->name, c);
        ck_assert_msg(bp_dtype_load_bits(f->dt, (unsigned char[]){(unsigned char)c}, 0) == c,
                      "%s load", f->name);
        if (cls == NAN_) {
            ck_assert_msg(isnan(w), "%s 0x%02x widened to %a, want NaN", f->name, c,
                          (double)w);
            ck_assert(isnan(bp_dtype_bits_to_double(f->dt, bits)));
            /* NaN narrows to 0x7F with its sign (non-saturating). */
            ck_assert_uint_eq(f->conv(w, false), (c & 0x80) | 0x7f);
            continue;
        }
        ck_assert_msg((double)w == want && !signbit(w) == !signbit(want),
                      "%s 0x%02x widened to %a, want %a", f->name, c, (double)w, want);
        ck_assert(bp_dtype_bits_to_double(f->dt, bits) == want);
        ck_assert_msg(f->conv(w, false) == c, "%s 0x%02x -> %a -> 0x%02x", f->name, c,
                      (double)w, f->conv(w, false));
        /* Saturating keeps every finite value; infinity becomes max. */
        uint8_t sat = f->conv(w, true);
        ck_assert_msg(sat == (cls == INF_ ? ((c & 0x80) | f->maxcode) : c),
                      "%s 0x%02x saturating -> 0x%02x", f->name, c, sat);
        ck_assert_uint_eq(bp_dtype_bits_from_double(f->dt, want), c);
    }
}

START_TEST(t_e4m3_all) { all_codes(&E4M3); }
END_TEST
START_TEST(t_e5m2_all) { all_codes(&E5M2); }
END_TEST

/* ---- MPFR reference for f32 -> fp8 ------------------------------------ */

/* The code of a finite, non-negative value of the format (a search of the
 * decoded codes: no arithmetic shared with dtype.c); 0xff when none. */
static uint8_t code_of(const fp8_t *f, double v)
{
    for (unsigned c = 0; c < 0x80; c++) {
        int cls;
        if (dec8(f, (uint8_t)c, &cls) == v && cls == FIN)
            return (uint8_t)c;
    }
    return 0xff;
}

/* MPFR's m * 2^e with 1/2 <= m < 1: the smallest subnormal 2^(1-bias-mbits)
 * has e = 2 - bias - mbits.  The exponent range is left open at the top
 * (overflow is the rules' business, not MPFR's). */
static uint8_t ref8(const fp8_t *f, float v, bool sat, mpfr_t x)
{
    uint32_t u = u32(v);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    if (isnan(v)) {
        if (sat && f->ieee)
            return sign | 0x7e | (uint8_t)((u >> 21) & 3u);
        return sign | 0x7f;
    }
    if (isinf(v))
        return sign | (sat ? f->maxcode : f->ieee ? 0x7c : 0x7f);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(2 - f->bias - f->mbits);
    mpfr_set_emax(256);
    int t = mpfr_set_flt(x, v, MPFR_RNDN);
    mpfr_subnormalize(x, t, MPFR_RNDN);
    double r = fabs(mpfr_get_d(x, MPFR_RNDN));
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    if (r > f->max)
        return sign | (sat ? f->maxcode : f->ieee ? 0x7c : 0x7f);
    return sign | code_of(f, r);
}

static uint64_t compare8(const fp8_t *f, const uint32_t *in, size_t n)
{
    mpfr_t x;
    mpfr_init2(x, f->mbits + 1);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (int sat = 0; sat < 2; sat++) {
            uint8_t want = ref8(f, f32(in[i]), sat, x), got = f->conv(f32(in[i]), sat);
            if (got != want && bad++ < 8)
                printf("f32 -> %s%s: 0x%08" PRIx32 " (%a) gives 0x%02x, MPFR 0x%02x\n",
                       f->name, sat ? " (saturating)" : "", in[i],
                       (double)f32(in[i]), got, want);
        }
    mpfr_clear(x);
    return bad;
}

/* Every f32 within 64 ulps of every fp8 value and every midpoint between
 * neighbours (where rounding decides), both signs. */
static void near_set(vec_t *a, const fp8_t *f)
{
    double prev = 0;
    for (unsigned c = 0; c < 0x80; c++) {
        int cls;
        double v = dec8(f, (uint8_t)c, &cls);
        if (cls != FIN)
            break;
        double pts[2] = {v, (prev + v) / 2};
        for (int k = 0; k < 2; k++) {
            uint32_t b = u32((float)pts[k]);
            push_range(a, b < 64 ? 0 : b - 64, b + 64);
        }
        prev = v;
    }
    /* beyond the largest value: the overflow midpoint and above */
    double mid = f->max + (f->ieee ? 4096.0 : 16.0);
    push_range(a, u32((float)mid) - 64, u32((float)mid) + 64);
    push_range(a, u32((float)(2 * f->max)) - 64, u32((float)(2 * f->max)) + 64);
}

START_TEST(t_mpfr_dense8)
{
    vec_t a = {0};
    dense_set(&a);
    near_set(&a, &E4M3);
    near_set(&a, &E5M2);
    uint64_t b1 = compare8(&E4M3, a.v, a.n), b2 = compare8(&E5M2, a.v, a.n);
    printf("fp8 dense set: %zu inputs, %" PRIu64 " e4m3fn and %" PRIu64
           " e5m2 mismatches\n", a.n, b1, b2);
    free(a.v);
    ck_assert_msg(b1 == 0 && b2 == 0, "%" PRIu64 " e4m3fn, %" PRIu64 " e5m2", b1, b2);
}
END_TEST

START_TEST(t_mpfr_random8)
{
    uint64_t s = seed ^ 0x5eed0f08u;
    vec_t a = {0};
    for (int i = 0; i < 400000; i++) {
        uint32_t r = (uint32_t)rnd(&s);
        if (i & 1) /* exponents where the formats live: 2^-20 .. 2^17 */
            r = (r & 0x807fffffu) | (107u + (r >> 23) % 38u) << 23;
        push(&a, r);
    }
    uint64_t b1 = compare8(&E4M3, a.v, a.n), b2 = compare8(&E5M2, a.v, a.n);
    free(a.v);
    ck_assert_msg(b1 == 0 && b2 == 0, "%" PRIu64 " e4m3fn, %" PRIu64 " e5m2 "
                  "(seed %" PRIu64 ")", b1, b2, seed);
}
END_TEST

/* Encodings worked out by hand: e4m3fn and e5m2, each non-saturating and
 * saturating. */
static const struct {
    uint32_t in;
    uint8_t e4, e4s, e5, e5s;
    const char *why;
} table8[] = {
    {0x3f800000, 0x38, 0x38, 0x3c, 0x3c, "1.0"},
    {0x80000000, 0x80, 0x80, 0x80, 0x80, "-0"},
    {0x43e00000, 0x7e, 0x7e, 0x5f, 0x5f, "448, e4m3fn max"},
    {0x43e80000, 0x7e, 0x7e, 0x5f, 0x5f, "464: e4m3fn tie to even is 448"},
    {0x43e80001, 0x7f, 0x7e, 0x5f, 0x5f, "just above 464: e4m3fn overflow"},
    {0x43f00000, 0x7f, 0x7e, 0x60, 0x60, "480: e5m2 tie to even (up) is 512"},
    {0xc3f00000, 0xff, 0xfe, 0xe0, 0xe0, "-480"},
    {0x43800000, 0x78, 0x78, 0x5c, 0x5c, "256: e4m3fn exponent 15 is finite"},
    {0x47600000, 0x7f, 0x7e, 0x7b, 0x7b, "57344, e5m2 max"},
    {0x476fffff, 0x7f, 0x7e, 0x7b, 0x7b, "below 61440"},
    {0x47700000, 0x7f, 0x7e, 0x7c, 0x7b, "61440: e5m2 tie to even is inf"},
    {0x47800000, 0x7f, 0x7e, 0x7c, 0x7b, "65536"},
    {0x7f7fffff, 0x7f, 0x7e, 0x7c, 0x7b, "f32 max"},
    {0x7f800000, 0x7f, 0x7e, 0x7c, 0x7b, "+inf"},
    {0xff800000, 0xff, 0xfe, 0xfc, 0xfb, "-inf"},
    {0x7fc00000, 0x7f, 0x7f, 0x7f, 0x7e, "quiet NaN"},
    {0xffc00000, 0xff, 0xff, 0xff, 0xfe, "negative quiet NaN"},
    {0x7fe00000, 0x7f, 0x7f, 0x7f, 0x7f, "NaN, top mantissa bits 11"},
    {0x7f800001, 0x7f, 0x7f, 0x7f, 0x7e, "signalling NaN"},
    {0x3c800000, 0x08, 0x08, 0x24, 0x24, "2^-6, e4m3fn min normal"},
    {0x3b000000, 0x01, 0x01, 0x18, 0x18, "2^-9, e4m3fn min subnormal"},
    {0x3a800000, 0x00, 0x00, 0x14, 0x14, "2^-10: e4m3fn tie to even is 0"},
    {0x3a800001, 0x01, 0x01, 0x14, 0x14, "just above 2^-10"},
    {0xba800000, 0x80, 0x80, 0x94, 0x94, "-2^-10: -0"},
    {0x3b400000, 0x02, 0x02, 0x1a, 0x1a, "1.5*2^-9: tie to even (up)"},
    {0x3c700000, 0x08, 0x08, 0x24, 0x24, "7.5*2^-9: e4m3fn subnormal rounds to min normal, e5m2 tie (up)"},
    {0x37800000, 0x00, 0x00, 0x01, 0x01, "2^-16, e5m2 min subnormal"},
    {0x37000000, 0x00, 0x00, 0x00, 0x00, "2^-17: e5m2 tie to even is 0"},
    {0x37400000, 0x00, 0x00, 0x01, 0x01, "1.5*2^-17"},
    {0x3f666666, 0x36, 0x36, 0x3b, 0x3b, "0.9f"},
    {0x3dcccccd, 0x1d, 0x1d, 0x2e, 0x2e, "0.1f"},
    {0x43700000, 0x77, 0x77, 0x5c, 0x5c, "240: e5m2 tie to even (up) is 256"},
    {0x00000001, 0x00, 0x00, 0x00, 0x00, "f32 min subnormal"},
};

START_TEST(t_table8)
{
    float v = f32(table8[_i].in);
    uint8_t got[4] = {bp_f32_to_f8e4m3(v, false), bp_f32_to_f8e4m3(v, true),
                      bp_f32_to_f8e5m2(v, false), bp_f32_to_f8e5m2(v, true)};
    uint8_t want[4] = {table8[_i].e4, table8[_i].e4s, table8[_i].e5, table8[_i].e5s};
    mpfr_t x4, x5;
    mpfr_init2(x4, 4);
    mpfr_init2(x5, 3);
    uint8_t ref[4] = {ref8(&E4M3, v, false, x4), ref8(&E4M3, v, true, x4),
                      ref8(&E5M2, v, false, x5), ref8(&E5M2, v, true, x5)};
    mpfr_clear(x4);
    mpfr_clear(x5);
    static const char *what[4] = {"e4m3fn", "e4m3fn sat", "e5m2", "e5m2 sat"};
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(got[k] == want[k], "%s: f32 0x%08x -> %s 0x%02x, want 0x%02x",
                      table8[_i].why, table8[_i].in, what[k], got[k], want[k]);
        /* The reference must agree with the hand-worked table too. */
        ck_assert_msg(ref[k] == want[k], "%s: MPFR reference gives %s 0x%02x, table 0x%02x",
                      table8[_i].why, what[k], ref[k], want[k]);
    }
}
END_TEST

/* ---- all 2^32 inputs (BP_SLOW=1) -------------------------------------- */

static atomic_uint_fast32_t next8;
static atomic_uint_fast64_t bad8;

static void *slow8_worker(void *arg)
{
    (void)arg;
    uint32_t blk;
    vec_t a = {0};
    while ((blk = (uint32_t)atomic_fetch_add(&next8, 1)) < 65536) {
        a.n = 0;
        for (uint32_t lo = 0; lo < 65536; lo++)
            push(&a, blk << 16 | lo);
        uint64_t b = compare8(&E4M3, a.v, a.n) + compare8(&E5M2, a.v, a.n);
        atomic_fetch_add(&bad8, b);
    }
    free(a.v);
    return NULL;
}

START_TEST(t_slow_all_f32_fp8)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
    if (!mpfr_buildopt_tls_p())
        n = 1;
    pthread_t th[64];
    atomic_store(&next8, 0);
    atomic_store(&bad8, 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, slow8_worker, NULL), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    uint64_t bad = atomic_load(&bad8);
    printf("all 2^32 f32 inputs through e4m3fn and e5m2, both rules, against "
           "MPFR: %" PRIu64 " mismatches, %d threads\n", bad, n);
    ck_assert_msg(bad == 0, "%" PRIu64 " mismatches over all f32 inputs", bad);
}
END_TEST

/* ---- ulp distance: every pair of codes -------------------------------- */

static void ulp_all_pairs(const fp8_t *f)
{
    /* Rank of each non-NaN code among the distinct values, in order. */
    double vals[256];
    int nv = 0, rank[256], cls;
    for (unsigned c = 0; c < 256; c++) {
        double v = dec8(f, (uint8_t)c, &cls);
        if (cls == NAN_)
            continue;
        bool seen = false;
        for (int k = 0; k < nv; k++)
            seen |= vals[k] == v;
        if (!seen)
            vals[nv++] = v;
    }
    for (unsigned c = 0; c < 256; c++) {
        double v = dec8(f, (uint8_t)c, &cls);
        rank[c] = -1;
        if (cls != NAN_) {
            rank[c] = 0;
            for (int k = 0; k < nv; k++)
                rank[c] += vals[k] < v;
        }
    }
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            uint64_t want = rank[a] < 0 && rank[b] < 0 ? 0
                            : rank[a] < 0 || rank[b] < 0
                                ? UINT64_MAX
                                : (uint64_t)abs(rank[a] - rank[b]);
            uint64_t got = bp_ulp_distance(f->dt, a, b);
            EXPECT(got == want, "%s 0x%02x to 0x%02x: distance %" PRIu64 ", want %" PRIu64,
                   f->name, a, b, got, want);
        }
}

START_TEST(t_ulp_fp8)
{
    ulp_all_pairs(&E4M3);
    ulp_all_pairs(&E5M2);
    ck_assert_uint_eq(bp_ulp_distance(BP_F8_E4M3, 0x7e, 0xfe), 252); /* -448 .. 448 */
    ck_assert_uint_eq(bp_ulp_distance(BP_F8_E4M3, 0x7e, 0x7f), UINT64_MAX);
    ck_assert_uint_eq(bp_ulp_distance(BP_F8_E5M2, 0x7b, 0x7c), 1); /* max, inf */
    ck_assert_uint_eq(bp_ulp_distance(BP_F8_E5M2, 0x7d, 0xff), 0);
}
END_TEST

/* ---- storage integer dtypes ------------------------------------------- */

START_TEST(t_ints)
{
    static const unsigned char b[8] = {0xff, 0x80, 0x01, 0x7f, 0x00, 0x02, 0xfe, 0x80};
    ck_assert_uint_eq(bp_dtype_load_bits(BP_U8, b, 1), 0x80);
    ck_assert(bp_dtype_bits_to_double(BP_U8, 0xff) == 255.0);
    ck_assert(bp_dtype_bits_to_double(BP_I8, 0xff) == -1.0);
    ck_assert(bp_dtype_bits_to_double(BP_I8, 0x80) == -128.0);
    ck_assert(bp_dtype_bits_to_double(BP_BOOL, 0x01) == 1.0);
    ck_assert_uint_eq(bp_dtype_load_bits(BP_I16, b, 1), 0x7f01);
    ck_assert(bp_dtype_bits_to_double(BP_I16, 0x80fe) == -32514.0);
    ck_assert(bp_dtype_bits_to_double(BP_U16, 0x80fe) == 33022.0);
    ck_assert_uint_eq(bp_dtype_load_bits(BP_U32, b, 1), 0x80fe0200u);
    ck_assert(bp_dtype_bits_to_double(BP_U32, 0x80fe0200u) == 2164130304.0);
    ck_assert(bp_dtype_bits_to_double(BP_U64, UINT64_MAX) == 0x1p64);

    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U8, 300.0), 255);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U8, -3.0), 0);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U8, 2.5), 2);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I8, -200.0), 0x80);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I8, 127.5), 0x7f);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I8, -1.0), 0xff);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I16, 1e9), 0x7fff);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I16, -1e9), 0x8000);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U16, 65535.4), 0xffff);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U32, 1e20), 0xffffffffu);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U64, 1e20), UINT64_MAX);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U64, 0x1p63), 1ull << 63);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_U64, NAN), 0);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_BOOL, 0.0), 0);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_BOOL, -0.0), 0);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_BOOL, 0.25), 1);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_BOOL, NAN), 1);

    ck_assert_uint_eq(bp_ulp_distance(BP_I8, 0x80, 0x7f), 255);
    ck_assert_uint_eq(bp_ulp_distance(BP_U8, 0x00, 0xff), 255);
    ck_assert_uint_eq(bp_ulp_distance(BP_BOOL, 0x01, 0x00), 1);
    ck_assert_uint_eq(bp_ulp_distance(BP_I16, 0x8000, 0x7fff), 65535);
    ck_assert_uint_eq(bp_ulp_distance(BP_U64, 0, UINT64_MAX), UINT64_MAX);
    ck_assert_uint_eq(bp_ulp_distance(BP_U32, 0xffffffffu, 1), 0xfffffffeu);
    ck_assert(!bp_dtype_bits_isnan(BP_U8, 0xff) && !bp_dtype_bits_isinf(BP_BOOL, 1));

    /* Random pairs against C's arithmetic in a wider type. */
    uint64_t s = seed ^ 0x5eed0008u;
    for (int i = 0; i < 100000; i++) {
        uint64_t x = rnd(&s), y = rnd(&s);
        EXPECT(bp_ulp_distance(BP_U64, x, y) == (x > y ? x - y : y - x), "u64");
        int8_t a8 = (int8_t)x, b8 = (int8_t)y;
        EXPECT(bp_ulp_distance(BP_I8, (uint8_t)a8, (uint8_t)b8) == (uint64_t)abs(a8 - b8),
               "i8 %d %d", a8, b8);
        int16_t a16 = (int16_t)x, b16 = (int16_t)y;
        EXPECT(bp_ulp_distance(BP_I16, (uint16_t)a16, (uint16_t)b16) ==
                   (uint64_t)abs(a16 - b16), "i16 %d %d", a16, b16);
        uint16_t c16 = (uint16_t)x, d16 = (uint16_t)y;
        EXPECT(bp_ulp_distance(BP_U16, c16, d16) == (uint64_t)abs((int)c16 - (int)d16),
               "u16");
        uint32_t c32 = (uint32_t)x, d32 = (uint32_t)y;
        EXPECT(bp_ulp_distance(BP_U32, c32, d32) ==
                   (uint64_t)llabs((long long)c32 - (long long)d32), "u32");
        /* bits above the width are ignored */
        EXPECT(bp_ulp_distance(BP_U8, x, y) == (uint64_t)abs((int)(uint8_t)x - (int)(uint8_t)y),
               "u8 wide bits");
    }
}
END_TEST

START_TEST(t_storage_names)
{
    static const struct {
        bp_dtype_t dt;
        const char *name, *st;
        size_t size;
        int is_float, e, m, sgn;
    } want[] = {
        {BP_I16, "i16", "I16", 2, 0, 0, 0, 1},   {BP_I8, "i8", "I8", 1, 0, 0, 0, 1},
        {BP_U64, "u64", "U64", 8, 0, 0, 0, 0},   {BP_U32, "u32", "U32", 4, 0, 0, 0, 0},
        {BP_U16, "u16", "U16", 2, 0, 0, 0, 0},   {BP_U8, "u8", "U8", 1, 0, 0, 0, 0},
        {BP_BOOL, "bool", "BOOL", 1, 0, 0, 0, 0},
        {BP_F8_E4M3, "fp8_e4m3", "F8_E4M3", 1, 1, 4, 3, 1},
        {BP_F8_E5M2, "fp8_e5m2", "F8_E5M2", 1, 1, 5, 2, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const bp_dtype_info_t *in = bp_dtype_info(want[i].dt);
        ck_assert_str_eq(in->name, want[i].name);
        ck_assert_str_eq(in->st_name, want[i].st);
        ck_assert_uint_eq(in->size, want[i].size);
        ck_assert_int_eq(in->is_float, want[i].is_float);
        ck_assert_int_eq(in->exp_bits, want[i].e);
        ck_assert_int_eq(in->man_bits, want[i].m);
        ck_assert_int_eq(in->is_signed, want[i].sgn);
        bp_dtype_t got;
        ck_assert(bp_dtype_parse(want[i].name, &got) && got == want[i].dt);
        ck_assert(bp_dtype_from_st(want[i].st, &got) && got == want[i].dt);
        ck_assert(!(BP_DTYPES_ARITH & BP_DTYPE_BIT(want[i].dt)));
    }
    static const struct {
        const char *s;
        bp_dtype_t dt;
    } alias[] = {{"float8_e4m3fn", BP_F8_E4M3}, {"e4m3", BP_F8_E4M3},
                 {"float8_e5m2", BP_F8_E5M2}, {"e5m2", BP_F8_E5M2},
                 {"uint8", BP_U8}, {"int8", BP_I8}, {"int16", BP_I16},
                 {"short", BP_I16}, {"uint16", BP_U16}, {"uint32", BP_U32},
                 {"uint64", BP_U64}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++) {
        bp_dtype_t got;
        ck_assert_msg(bp_dtype_parse(alias[i].s, &got) && got == alias[i].dt, "%s",
                      alias[i].s);
    }
}
END_TEST

void dtype_fp8_add(Suite *s, bool slow)
{
    TCase *tc = tcase_create("fp8");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_hand_values);
    tcase_add_test(tc, t_e4m3_all);
    tcase_add_test(tc, t_e5m2_all);
    tcase_add_loop_test(tc, t_table8, 0, (int)(sizeof table8 / sizeof *table8));
    tcase_add_test(tc, t_mpfr_dense8);
    tcase_add_test(tc, t_mpfr_random8);
    tcase_add_test(tc, t_ulp_fp8);
    suite_add_tcase(s, tc);

    tc = tcase_create("storage");
    tcase_add_test(tc, t_ints);
    tcase_add_test(tc, t_storage_names);
    suite_add_tcase(s, tc);

    if (slow) {
        tc = tcase_create("slow");
        tcase_set_timeout(tc, 0);
        tcase_add_test(tc, t_slow_all_f32_fp8);
        suite_add_tcase(s, tc);
    }
}
