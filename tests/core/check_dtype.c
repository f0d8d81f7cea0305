/* Tests of dtype.c against references that share no code with it:
 *  - every bf16 and f16 bit pattern, widened and narrowed again, and
 *    widened against a decoder written here with ldexp in double;
 *  - f32 -> bf16 / f16 against MPFR (precision 8 / 11, the format's exponent
 *    range, mpfr_subnormalize) on a dense edge-case set and random inputs in
 *    `make check`, and on all 2^32 inputs when BP_SLOW=1 (`make check-slow`);
 *  - a table of edge cases whose expected bits were worked out by hand;
 *  - ulp distance against counted nextafter/nextafterf steps (f32, f64) and
 *    against ranks of the values sorted here (bf16, f16);
 *  - names, safetensors names and the layout table;
 *  - fp8 and the storage integer dtypes: check_dtype_fp8.c.
 * Random inputs come from a seed printed at start (BP_SEED=n repeats it). */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_dtype.h"
#include "dtype.h"

uint64_t seed;

uint64_t rnd(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Bit casts, written here rather than taken from dtype.c. */
float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
uint32_t u32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t u64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* ---- independent decoding of narrow formats --------------------------- */

enum { FINITE, INF, NAN_ };

/* Value of a (1, ebits, mbits) IEEE-style pattern, built from its fields. */
static double decode(int ebits, int mbits, uint64_t bits, int *cls)
{
    uint64_t emask = (1ull << ebits) - 1, m = bits & ((1ull << mbits) - 1);
    uint64_t e = (bits >> mbits) & emask;
    int bias = (1 << (ebits - 1)) - 1;
    double s = (bits >> (ebits + mbits)) & 1 ? -1.0 : 1.0, v;
    *cls = FINITE;
    if (e == emask) {
        *cls = m ? NAN_ : INF;
        return m ? NAN : s * INFINITY;
    }
    if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m + (1ull << mbits)), (int)e - bias - mbits);
    return s * v;
}

static double dec_bf16(uint16_t h, int *cls) { return decode(8, 7, h, cls); }
static double dec_f16(uint16_t h, int *cls) { return decode(5, 10, h, cls); }

/* ---- MPFR reference for f32 -> bf16 / f16 ----------------------------- */

/* MPFR writes x = m * 2^e with 1/2 <= m < 1, so the smallest subnormal
 * 2^(1-bias-(p-1)) has e = 3-bias-p and the largest finite value has
 * e = bias+1. */
typedef struct {
    const char *name;
    int p, bias, ebits;
    mpfr_exp_t emin, emax;
    uint16_t (*conv)(float);
} narrow_t;

static const narrow_t BF16 = {"bf16", 8, 127, 8, -132, 128, bp_f32_to_bf16};
static const narrow_t F16 = {"f16", 11, 15, 5, -23, 16, bp_f32_to_f16};

typedef struct {
    mpfr_t x;
    mpfr_exp_t old_emin, old_emax;
} ref_ctx;

static void ref_begin(ref_ctx *c, const narrow_t *f)
{
    c->old_emin = mpfr_get_emin();
    c->old_emax = mpfr_get_emax();
    mpfr_init2(c->x, f->p);
    mpfr_set_emin(f->emin);
    mpfr_set_emax(f->emax);
}

static void ref_end(ref_ctx *c)
{
    mpfr_clear(c->x);
    mpfr_set_emin(c->old_emin);
    mpfr_set_emax(c->old_emax);
}

/* Rounds x to the format with MPFR and encodes the result by hand.  NaN
 * gives 0x7FFF, what cvt.rn.bf16.f32 / cvt.rn.f16.f32 write for any NaN. */
static uint16_t ref_round(ref_ctx *c, const narrow_t *f, float v)
{
    int t = mpfr_set_flt(c->x, v, MPFR_RNDN);
    mpfr_subnormalize(c->x, t, MPFR_RNDN);
    if (mpfr_nan_p(c->x))
        return 0x7fff;
    uint16_t sign = mpfr_signbit(c->x) ? 0x8000 : 0;
    int mbits = f->p - 1;
    if (mpfr_inf_p(c->x))
        return sign | (uint16_t)(((1u << f->ebits) - 1) << mbits);
    if (mpfr_zero_p(c->x))
        return sign;
    long e = mpfr_get_exp(c->x);
    /* The p significant bits, most significant first in the top limb. */
    mp_limb_t top = ((mp_limb_t *)mpfr_custom_get_significand(c->x))[0];
    uint32_t z = (uint32_t)(top >> (GMP_NUMB_BITS - f->p));
    long biased = e - 1 + f->bias;
    if (biased >= 1)
        return sign | (uint16_t)(biased << mbits) | (uint16_t)(z - (1u << mbits));
    /* Subnormal: value z * 2^(e-p) in units of 2^(2-bias-p). */
    int shift = (int)(2 - e - f->bias);
    if (shift >= f->p || (z & ((1u << shift) - 1)) != 0)
        return 0x7ffe; /* not a subnormal of the format; dtype.c never
                        * writes 0x7ffe, so the test fails */
    return sign | (uint16_t)(z >> shift);
}

/* Compares the conversion with the reference over n inputs; prints the
 * first few mismatches and returns their count. */
static uint64_t compare_inputs(const narrow_t *f, const uint32_t *in, size_t n)
{
    ref_ctx c;
    uint64_t bad = 0;
    ref_begin(&c, f);
    for (size_t i = 0; i < n; i++) {
        uint16_t want = ref_round(&c, f, f32(in[i])), got = f->conv(f32(in[i]));
        if (got != want && bad++ < 8)
            printf("f32 -> %s: 0x%08" PRIx32 " (%a) gives 0x%04x, MPFR 0x%04x\n",
                   f->name, in[i], (double)f32(in[i]), got, want);
    }
    ref_end(&c);
    return bad;
}

/* ---- input sets ------------------------------------------------------- */

void push(vec_t *a, uint32_t u)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1 << 16;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        ck_assert_ptr_nonnull(a->v);
    }
    a->v[a->n++] = u;
}

void push_range(vec_t *a, uint32_t lo, uint32_t hi) /* [lo, hi) */
{
    for (uint32_t u = lo; u != hi; u++) {
        push(a, u);
        push(a, u ^ 0x80000000u);
    }
}

/* Every sign and exponent, and for every cut position c (the bits below
 * bit c are rounded away) mantissas whose dropped part is 0, 1, half-1,
 * half, half+1, all ones, under kept parts that are even, odd, all ones
 * (carry into the exponent) and mixed.  Both formats' rounding positions
 * are among the cuts: 16 for bf16, 13 for f16 normals, 14..23 for f16
 * subnormal outputs. */
void dense_set(vec_t *a)
{
    static const uint32_t hi_pat[] = {0, 1, 2, 3, 0x555555, 0x2aaaaa,
                                      0x7fffff, 0x7ffffe};
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t e = 0; e < 256; e++)
            for (int cut = 0; cut <= 23; cut++) {
                uint32_t half = cut ? 1u << (cut - 1) : 0;
                uint32_t lows[] = {0, 1, half - 1, half, half + 1, 2 * half - 1};
                for (size_t h = 0; h < sizeof hi_pat / sizeof *hi_pat; h++)
                    for (size_t l = 0; l < (cut ? 6u : 1u); l++) {
                        uint32_t hi = (hi_pat[h] << cut) & 0x7fffffu;
                        uint32_t m = (hi | (lows[l] & (2 * half - 1))) & 0x7fffffu;
                        push(a, s << 31 | e << 23 | m);
                    }
            }
    push_range(a, 0x477fd000u, 0x47801000u);  /* 65504, 65520, 65536 */
    push_range(a, 0x7f7f0000u, 0x7f800001u);  /* bf16 max .. inf */
    push_range(a, 0x33000000u - 4096, 0x33000000u + 4096); /* 2^-25 */
    push_range(a, 0x33800000u - 4096, 0x33800000u + 4096); /* 2^-24 */
    push_range(a, 0x38800000u - 8192, 0x38800000u + 8192); /* f16 min normal */
    push_range(a, 0x00000000u, 0x00020000u);  /* f32 subnormals, bf16 ties */
    push_range(a, 0x007f0000u, 0x00810000u);  /* f32 min normal */
    static const uint32_t nan_payload[] = {1, 2, 0x1fff, 0x2000, 0xffff,
        0x10000, 0x3fffff, 0x400000, 0x400001, 0x7fe000, 0x7fffff};
    for (size_t i = 0; i < sizeof nan_payload / sizeof *nan_payload; i++) {
        push(a, 0x7f800000u | nan_payload[i]);
        push(a, 0xff800000u | nan_payload[i]);
    }
}

START_TEST(t_mpfr_dense)
{
    vec_t a = {0};
    dense_set(&a);
    uint64_t b1 = compare_inputs(&BF16, a.v, a.n), b2 = compare_inputs(&F16, a.v, a.n);
    printf("dense set: %zu inputs, %" PRIu64 " bf16 and %" PRIu64 " f16 mismatches\n",
           a.n, b1, b2);
    free(a.v);
    ck_assert_msg(b1 == 0 && b2 == 0, "%" PRIu64 " bf16, %" PRIu64 " f16 mismatches",
                  b1, b2);
}
END_TEST

START_TEST(t_mpfr_random)
{
    uint64_t s = seed ^ 0x5eed0001u;
    vec_t a = {0};
    for (int i = 0; i < 3000000; i++)
        push(&a, (uint32_t)rnd(&s));
    /* Exponents around the f16 range, where both formats do most work. */
    for (int i = 0; i < 1500000; i++) {
        uint32_t r = (uint32_t)rnd(&s);
        uint32_t e = 98 + (r >> 24) % 48;
        push(&a, (r & 0x807fffffu) | e << 23);
    }
    uint64_t b1 = compare_inputs(&BF16, a.v, a.n), b2 = compare_inputs(&F16, a.v, a.n);
    free(a.v);
    ck_assert_msg(b1 == 0 && b2 == 0, "%" PRIu64 " bf16, %" PRIu64 " f16 mismatches "
                  "(seed %" PRIu64 ")", b1, b2, seed);
}
END_TEST

/* ---- hand-derived table ----------------------------------------------- */

static const struct {
    uint32_t in;
    uint16_t bf16, f16;
    const char *why;
} table[] = {
    {0x3f800000, 0x3f80, 0x3c00, "1.0"},
    {0xc0000000, 0xc000, 0xc000, "-2.0"},
    {0x00000000, 0x0000, 0x0000, "+0"},
    {0x80000000, 0x8000, 0x8000, "-0"},
    {0x3f808000, 0x3f80, 0x3c04, "1+2^-8: bf16 tie to even (down)"},
    {0x3f818000, 0x3f82, 0x3c0c, "1+3*2^-8: bf16 tie to even (up)"},
    {0x3f808001, 0x3f81, 0x3c04, "just above a bf16 tie"},
    {0x3f807fff, 0x3f80, 0x3c04, "just below a bf16 tie"},
    {0x3f801000, 0x3f80, 0x3c00, "1+2^-11: f16 tie to even (down)"},
    {0x3f803000, 0x3f80, 0x3c02, "1+3*2^-11: f16 tie to even (up)"},
    {0x3fffffff, 0x4000, 0x4000, "carry into the exponent"},
    {0x3f666666, 0x3f66, 0x3b33, "0.9f"},
    {0x3dcccccd, 0x3dcd, 0x2e66, "0.1f"},
    {0x40fe2f5e, 0x40fe, 0x47f1, "7.94328212738037109375"},
    {0x477fe000, 0x4780, 0x7bff, "65504, f16 max"},
    {0x477feffd, 0x4780, 0x7bff, "65519.99f"},
    {0x477fefff, 0x4780, 0x7bff, "largest f32 below 65520"},
    {0x477ff000, 0x4780, 0x7c00, "65520: f16 tie to even is infinity"},
    {0xc77ff000, 0xc780, 0xfc00, "-65520"},
    {0x33800000, 0x3380, 0x0001, "2^-24, f16 min subnormal"},
    {0x33000000, 0x3300, 0x0000, "2^-25: tie to even is 0"},
    {0xb3000000, 0xb300, 0x8000, "-2^-25: -0"},
    {0x33000001, 0x3300, 0x0001, "just above 2^-25"},
    {0x33400000, 0x3340, 0x0001, "1.5*2^-25"},
    {0x33c00000, 0x33c0, 0x0002, "1.5*2^-24: tie to even (up)"},
    {0x387fe000, 0x3880, 0x0400, "f16 max subnormal + half: min normal"},
    {0x387fdfff, 0x3880, 0x03ff, "just below that tie"},
    {0x38800000, 0x3880, 0x0400, "2^-14, f16 min normal"},
    {0x7f7f0000, 0x7f7f, 0x7c00, "bf16 max"},
    {0x7f7f7fff, 0x7f7f, 0x7c00, "below bf16 max + half ulp"},
    {0x7f7f8000, 0x7f80, 0x7c00, "bf16 max + half ulp: tie to even is inf"},
    {0x7f7fffff, 0x7f80, 0x7c00, "f32 max"},
    {0xff7fffff, 0xff80, 0xfc00, "-f32 max"},
    {0x7f800000, 0x7f80, 0x7c00, "+inf"},
    {0xff800000, 0xff80, 0xfc00, "-inf"},
    {0x00000001, 0x0000, 0x0000, "f32 min subnormal"},
    {0x00010000, 0x0001, 0x0000, "2^-133, bf16 min subnormal"},
    {0x00008000, 0x0000, 0x0000, "2^-134: bf16 tie to even is 0"},
    {0x00008001, 0x0001, 0x0000, "just above 2^-134"},
    {0x00018000, 0x0002, 0x0000, "1.5*2^-133: tie to even (up)"},
    {0x80008000, 0x8000, 0x8000, "-2^-134: -0"},
    {0x007fffff, 0x0080, 0x0000, "f32 max subnormal: bf16 min normal"},
    {0x7fc00000, 0x7fff, 0x7fff, "quiet NaN"},
    {0xffc00000, 0x7fff, 0x7fff, "negative quiet NaN"},
    {0x7f800001, 0x7fff, 0x7fff, "signalling NaN"},
    {0x7fbfffff, 0x7fff, 0x7fff, "signalling NaN, full payload"},
    {0xff800001, 0x7fff, 0x7fff, "negative signalling NaN"},
};

START_TEST(t_table)
{
    uint32_t in = table[_i].in;
    uint16_t b = bp_f32_to_bf16(f32(in)), h = bp_f32_to_f16(f32(in));
    ck_assert_msg(b == table[_i].bf16, "%s: f32 0x%08x -> bf16 0x%04x, want 0x%04x",
                  table[_i].why, in, b, table[_i].bf16);
    ck_assert_msg(h == table[_i].f16, "%s: f32 0x%08x -> f16 0x%04x, want 0x%04x",
                  table[_i].why, in, h, table[_i].f16);
}
END_TEST

/* The MPFR reference itself must agree with the hand-worked table, or a
 * mistake in it could hide one in dtype.c. */
START_TEST(t_table_vs_mpfr)
{
    ref_ctx c;
    ref_begin(&c, &BF16);
    uint16_t b = ref_round(&c, &BF16, f32(table[_i].in));
    ref_end(&c);
    ref_begin(&c, &F16);
    uint16_t h = ref_round(&c, &F16, f32(table[_i].in));
    ref_end(&c);
    ck_assert_msg(b == table[_i].bf16 && h == table[_i].f16,
                  "%s: MPFR gives bf16 0x%04x f16 0x%04x, table 0x%04x 0x%04x",
                  table[_i].why, b, h, table[_i].bf16, table[_i].f16);
}
END_TEST

/* ---- exhaustive narrow -> f32 -> narrow ------------------------------- */

static void widen_all(const char *name, float (*widen)(uint16_t),
                      uint16_t (*narrow)(float), double (*dec)(uint16_t, int *))
{
    for (uint32_t h = 0; h <= 0xffff; h++) {
        int cls;
        double want = dec((uint16_t)h, &cls);
        float w = widen((uint16_t)h);
        uint16_t back = narrow(w);
        if (cls == NAN_) {
            EXPECT(isnan(w), "%s 0x%04x: widened to %a, want NaN", name, h,
                          (double)w);
            EXPECT(back == 0x7fff, "%s NaN 0x%04x came back as 0x%04x", name,
                          h, back);
            continue;
        }
        EXPECT(u64((double)w) == u64(want),
                      "%s 0x%04x widened to %a (0x%08x), want %a", name, h,
                      (double)w, u32(w), want);
        EXPECT(back == h, "%s 0x%04x -> %a -> 0x%04x", name, h, (double)w, back);
    }
}

START_TEST(t_bf16_all) { widen_all("bf16", bp_bf16_to_f32, bp_f32_to_bf16, dec_bf16); }
END_TEST
START_TEST(t_f16_all) { widen_all("f16", bp_f16_to_f32, bp_f32_to_f16, dec_f16); }
END_TEST

START_TEST(t_widen_hand)
{
    ck_assert_uint_eq(u32(bp_bf16_to_f32(0x3f80)), 0x3f800000u);
    ck_assert_uint_eq(u32(bp_bf16_to_f32(0x0001)), 0x00010000u);
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x3c00)), 0x3f800000u);
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x7bff)), 0x477fe000u); /* 65504 */
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x0001)), 0x33800000u); /* 2^-24 */
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x03ff)), 0x387fc000u);
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x8400)), 0xb8800000u); /* -2^-14 */
    ck_assert_uint_eq(u32(bp_f16_to_f32(0x8000)), 0x80000000u);
    ck_assert_uint_eq(u32(bp_f16_to_f32(0xfc00)), 0xff800000u);
    ck_assert(bp_f16_to_f32(0x3555) == 0.333251953125f);
}
END_TEST

/* ---- all 2^32 inputs (BP_SLOW=1) -------------------------------------- */

static atomic_uint_fast32_t next_block;
static atomic_uint_fast64_t slow_bad;

static void *slow_worker(void *arg)
{
    (void)arg;
    ref_ctx c;
    uint32_t blk;
    while ((blk = (uint32_t)atomic_fetch_add(&next_block, 1)) < 65536) {
        for (int k = 0; k < 2; k++) {
            const narrow_t *f = k ? &F16 : &BF16;
            uint64_t bad = 0;
            ref_begin(&c, f);
            for (uint32_t lo = 0; lo < 65536; lo++) {
                uint32_t u = blk << 16 | lo;
                uint16_t want = ref_round(&c, f, f32(u)), got = f->conv(f32(u));
                if (got != want) {
                    bad++;
                    if (atomic_load(&slow_bad) + bad <= 8)
                        printf("f32 -> %s: 0x%08" PRIx32 " (%a) gives 0x%04x, MPFR "
                               "0x%04x\n", f->name, u, (double)f32(u), got, want);
                }
            }
            ref_end(&c);
            atomic_fetch_add(&slow_bad, bad);
        }
    }
    return NULL;
}

START_TEST(t_slow_all_f32)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
    if (!mpfr_buildopt_tls_p())
        n = 1; /* the exponent range is per process then */
    pthread_t th[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    atomic_store(&next_block, 0);
    atomic_store(&slow_bad, 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, slow_worker, NULL), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t bad = atomic_load(&slow_bad);
    printf("all 2^32 f32 inputs through bf16 and f16 against MPFR: %" PRIu64
           " mismatches, %d threads, %.1f s\n", bad, n,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    ck_assert_msg(bad == 0, "%" PRIu64 " mismatches over all f32 inputs", bad);
}
END_TEST

/* ---- ulp distance ----------------------------------------------------- */

/* Walks k nextafterf steps from a towards dir, stopping at infinity;
 * returns the number of steps taken and the end point. */
static uint32_t walk_f32(float a, float dir, uint32_t k, float *end)
{
    uint32_t i = 0;
    for (; i < k && !isinf(a); i++)
        a = nextafterf(a, dir);
    *end = a;
    return i;
}

static uint64_t walk_f64(double a, double dir, uint64_t k, double *end)
{
    uint64_t i = 0;
    for (; i < k && !isinf(a); i++)
        a = nextafter(a, dir);
    *end = a;
    return i;
}

START_TEST(t_ulp_f32_walks)
{
    uint64_t s = seed ^ 0x5eed0002u;
    for (int i = 0; i < 200000; i++) {
        uint32_t r = (uint32_t)rnd(&s), ua;
        if (i % 4 == 0)
            ua = (r & 0x80000000u) | (r & 0x7f); /* near zero, to cross it */
        else if (i % 4 == 1)
            ua = (r & 0x80000000u) | (0x7f7fffffu - (r >> 24)); /* near max */
        else
            ua = r;
        float a = f32(ua), b;
        if (isnan(a))
            continue;
        float dir = rnd(&s) & 1 ? INFINITY : -INFINITY;
        uint32_t steps = walk_f32(a, dir, (uint32_t)(rnd(&s) % 300), &b);
        uint64_t d1 = bp_ulp_distance(BP_F32, ua, u32(b));
        uint64_t d2 = bp_ulp_distance(BP_F32, u32(b), ua);
        EXPECT(d1 == steps && d2 == steps,
                      "fp32 %a (0x%08x) to %a (0x%08x): %u nextafterf steps, "
                      "distance %" PRIu64 "/%" PRIu64 " (seed %" PRIu64 ")",
                      (double)a, ua, (double)b, u32(b), steps, d1, d2, seed);
    }
}
END_TEST

START_TEST(t_ulp_f64_walks)
{
    uint64_t s = seed ^ 0x5eed0003u;
    for (int i = 0; i < 100000; i++) {
        uint64_t r = rnd(&s), ua;
        if (i % 4 == 0)
            ua = (r & 0x8000000000000000ull) | (r & 0x7f);
        else if (i % 4 == 1)
            ua = (r & 0x8000000000000000ull) | (0x7fefffffffffffffull - (r >> 56));
        else
            ua = r;
        double a = f64(ua), b;
        if (isnan(a))
            continue;
        double dir = rnd(&s) & 1 ? INFINITY : -INFINITY;
        uint64_t steps = walk_f64(a, dir, rnd(&s) % 300, &b);
        uint64_t d1 = bp_ulp_distance(BP_F64, ua, u64(b));
        uint64_t d2 = bp_ulp_distance(BP_F64, u64(b), ua);
        EXPECT(d1 == steps && d2 == steps,
                      "fp64 %a to %a: %" PRIu64 " nextafter steps, distance %" PRIu64
                      "/%" PRIu64 " (seed %" PRIu64 ")", a, b, steps, d1, d2, seed);
    }
}
END_TEST

/* Ranks of every non-NaN pattern in value order (+0 and -0 share one). */
typedef struct {
    double v;
    uint16_t h;
} vh_t;

static int cmp_vh(const void *x, const void *y)
{
    double a = ((const vh_t *)x)->v, b = ((const vh_t *)y)->v;
    return (a > b) - (a < b);
}

static int ranks(double (*dec)(uint16_t, int *), int32_t *rank, uint16_t *at)
{
    static vh_t all[65536];
    int n = 0, cls;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        rank[h] = -1;
        double v = dec((uint16_t)h, &cls);
        if (cls != NAN_)
            all[n++] = (vh_t){v, (uint16_t)h};
    }
    qsort(all, (size_t)n, sizeof *all, cmp_vh);
    int r = -1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || all[i].v != all[i - 1].v)
            at[++r] = all[i].h;
        rank[all[i].h] = r;
    }
    return r + 1;
}

static void ulp_narrow(bp_dtype_t dt, double (*dec)(uint16_t, int *))
{
    static int32_t rank[65536];
    static uint16_t at[65536];
    int nr = ranks(dec, rank, at);
    uint64_t s = seed ^ 0x5eed0004u ^ dt;
    for (uint32_t a = 0; a <= 0xffff; a++) {
        if (rank[a] < 0)
            continue;
        for (int k = 0; k < 24; k++) {
            int rb = k < 16 ? rank[a] + k - 8 : (int)(rnd(&s) % (uint64_t)nr);
            if (rb < 0 || rb >= nr)
                continue;
            uint16_t b = at[rb];
            if (k & 1)
                b ^= rank[b] == rank[0] ? 0x8000 : 0; /* both zeros */
            uint64_t want = (uint64_t)abs(rank[a] - rb);
            uint64_t got = bp_ulp_distance(dt, a, b);
            EXPECT(got == want, "%s 0x%04x to 0x%04x: distance %" PRIu64
                          ", %" PRIu64 " apart in value order", bp_dtype_name(dt), a,
                          b, got, want);
        }
    }
    /* Every NaN: 0 from another NaN, UINT64_MAX from any number. */
    for (uint32_t a = 0; a <= 0xffff; a++) {
        if (rank[a] >= 0)
            continue;
        uint16_t other_nan = 0x7fff, num = at[rnd(&s) % (uint64_t)nr];
        EXPECT(bp_ulp_distance(dt, a, other_nan) == 0, "%s NaN 0x%04x vs NaN",
               bp_dtype_name(dt), a);
        EXPECT(bp_ulp_distance(dt, a, num) == UINT64_MAX &&
               bp_ulp_distance(dt, num, a) == UINT64_MAX,
               "%s NaN 0x%04x vs 0x%04x", bp_dtype_name(dt), a, num);
    }
}

START_TEST(t_ulp_bf16) { ulp_narrow(BP_BF16, dec_bf16); }
END_TEST
START_TEST(t_ulp_f16) { ulp_narrow(BP_F16, dec_f16); }
END_TEST

START_TEST(t_ulp_special)
{
    /* +0/-0, -min to +min, max to inf, NaNs: for every float format. */
    static const struct {
        bp_dtype_t dt;
        uint64_t negz, minsub, max, inf, qnan, nan2;
    } f[] = {
        {BP_F64, 0x8000000000000000ull, 1, 0x7fefffffffffffffull,
         0x7ff0000000000000ull, 0x7ff8000000000000ull, 0xfff0000000000001ull},
        {BP_F32, 0x80000000u, 1, 0x7f7fffffu, 0x7f800000u, 0x7fc00000u, 0xff800001u},
        {BP_BF16, 0x8000, 1, 0x7f7f, 0x7f80, 0x7fc0, 0xffff},
        {BP_F16, 0x8000, 1, 0x7bff, 0x7c00, 0x7e00, 0xfc01},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        bp_dtype_t dt = f[i].dt;
        ck_assert_uint_eq(bp_ulp_distance(dt, 0, f[i].negz), 0);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].minsub | f[i].negz, f[i].minsub), 2);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].max, f[i].inf), 1);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].max | f[i].negz,
                                          f[i].inf | f[i].negz), 1);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].qnan, f[i].nan2), 0);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].qnan, 0), UINT64_MAX);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].inf, f[i].nan2), UINT64_MAX);
        /* -max to +max: twice max's magnitude, which fits. */
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].max | f[i].negz, f[i].max),
                          2 * f[i].max);
        ck_assert_uint_eq(bp_ulp_distance(dt, f[i].inf | f[i].negz, f[i].inf),
                          2 * f[i].inf);
        /* "identical": bits, NaNs by class unless payloads count; +0 and
         * -0 are 0 ulp apart and not identical */
        ck_assert(!bp_dtype_bits_equal(dt, 0, f[i].negz, false));
        ck_assert(!bp_dtype_bits_equal(dt, f[i].negz, 0, true));
        ck_assert(bp_dtype_bits_equal(dt, f[i].negz, f[i].negz, false));
        ck_assert(bp_dtype_bits_equal(dt, f[i].qnan, f[i].nan2, false));
        ck_assert(!bp_dtype_bits_equal(dt, f[i].qnan, f[i].nan2, true));
        ck_assert(!bp_dtype_bits_equal(dt, f[i].qnan, f[i].inf, false));
        ck_assert(!bp_dtype_bits_equal(dt, f[i].minsub, 0, false));
    }
    ck_assert(bp_dtype_bits_equal(BP_I32, 5, 5, false));
    ck_assert(!bp_dtype_bits_equal(BP_I32, 0x80000000u, 0, false));
    ck_assert_uint_eq(bp_ulp_distance(BP_F64, 0xffefffffffffffffull,
                                      0x7fefffffffffffffull), 0xffdffffffffffffeull);
    ck_assert_uint_eq(bp_ulp_distance(BP_F32, u32(1.0f), u32(nextafterf(1.0f, 2.0f))), 1);
    ck_assert_uint_eq(bp_ulp_distance(BP_F32, u32(1.0f), u32(2.0f)), 1u << 23);
}
END_TEST

START_TEST(t_ulp_int)
{
    ck_assert_uint_eq(bp_ulp_distance(BP_I64, (uint64_t)INT64_MIN, INT64_MAX), UINT64_MAX);
    ck_assert_uint_eq(bp_ulp_distance(BP_I64, INT64_MAX, (uint64_t)INT64_MIN), UINT64_MAX);
    ck_assert_uint_eq(bp_ulp_distance(BP_I64, (uint64_t)-1, 1), 2);
    ck_assert_uint_eq(bp_ulp_distance(BP_I32, 0x80000000u, 0x7fffffffu), 0xffffffffu);
    ck_assert_uint_eq(bp_ulp_distance(BP_I32, 0xffffffffu, 1), 2);
    ck_assert_uint_eq(bp_ulp_distance(BP_I32, 5, 5), 0);
    uint64_t s = seed ^ 0x5eed0005u;
    for (int i = 0; i < 100000; i++) {
        int64_t x = (int64_t)rnd(&s), y = (int64_t)rnd(&s);
        if (i & 1) /* short distances, wrapping at the ends */
            y = (int64_t)((uint64_t)x + rnd(&s) % 1000 - 500);
        __int128 d = (__int128)x - y;
        uint64_t want = (uint64_t)(d < 0 ? -d : d);
        EXPECT(bp_ulp_distance(BP_I64, (uint64_t)x, (uint64_t)y) == want,
               "i64 %" PRId64 " to %" PRId64, x, y);
        int32_t a = (int32_t)x, b = (int32_t)y;
        int64_t e = (int64_t)a - b;
        EXPECT(bp_ulp_distance(BP_I32, (uint32_t)a, (uint32_t)b) ==
               (uint64_t)(e < 0 ? -e : e), "i32 %d to %d", a, b);
    }
}
END_TEST

/* ---- names, layouts, raw access --------------------------------------- */

START_TEST(t_info)
{
    static const struct {
        bp_dtype_t dt;
        const char *name, *st;
        size_t size;
        int is_float, e, m;
    } want[] = {
        {BP_F64, "fp64", "F64", 8, 1, 11, 52}, {BP_F32, "fp32", "F32", 4, 1, 8, 23},
        {BP_BF16, "bf16", "BF16", 2, 1, 8, 7}, {BP_F16, "fp16", "F16", 2, 1, 5, 10},
        {BP_I64, "i64", "I64", 8, 0, 0, 0},    {BP_I32, "i32", "I32", 4, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const bp_dtype_info_t *in = bp_dtype_info(want[i].dt);
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->name, want[i].name);
        ck_assert_str_eq(bp_dtype_name(want[i].dt), want[i].name);
        ck_assert_str_eq(in->st_name, want[i].st);
        ck_assert_uint_eq(in->size, want[i].size);
        ck_assert_int_eq(in->is_float, want[i].is_float);
        ck_assert_int_eq(in->exp_bits, want[i].e);
        ck_assert_int_eq(in->man_bits, want[i].m);
        bp_dtype_t got;
        ck_assert(bp_dtype_parse(want[i].name, &got) && got == want[i].dt);
        ck_assert(bp_dtype_from_st(want[i].st, &got) && got == want[i].dt);
    }
    ck_assert_ptr_null(bp_dtype_info(BP_NDTYPES));
    ck_assert_ptr_null(bp_dtype_info((bp_dtype_t)-1));
    ck_assert_str_eq(bp_dtype_name(BP_NDTYPES), "?");
}
END_TEST

START_TEST(t_parse)
{
    static const struct {
        const char *s;
        bp_dtype_t dt;
    } ok[] = {
        {"fp32", BP_F32}, {"f32", BP_F32}, {"float32", BP_F32}, {"float", BP_F32},
        {"bf16", BP_BF16}, {"bfloat16", BP_BF16}, {"fp16", BP_F16}, {"f16", BP_F16},
        {"float16", BP_F16}, {"half", BP_F16}, {"fp64", BP_F64}, {"f64", BP_F64},
        {"float64", BP_F64}, {"double", BP_F64}, {"i64", BP_I64}, {"int64", BP_I64},
        {"long", BP_I64}, {"i32", BP_I32}, {"int32", BP_I32}, {"int", BP_I32},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        bp_dtype_t dt = BP_NDTYPES;
        ck_assert_msg(bp_dtype_parse(ok[i].s, &dt) && dt == ok[i].dt, "'%s'", ok[i].s);
    }
    static const char *bad[] = {"", "fp8", "bf16 ", " bf16", "float128", "I16",
                                "BF16x", "fp3", "f", "F32x", "u31", "Bool"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bp_dtype_t dt = BP_I32;
        ck_assert_msg(!bp_dtype_parse(bad[i], &dt), "'%s' accepted", bad[i]);
        ck_assert_int_eq(dt, BP_I32);
    }
    bp_dtype_t dt;
    ck_assert(!bp_dtype_parse(NULL, &dt));
    ck_assert(!bp_dtype_from_st(NULL, &dt));
    static const char *bad_st[] = {"", "f32", "Bf16", "F8_E4M3FN", "bool", "u8",
                                   "F4", "F8_E8M0", "C64", "F32 ", "fp32"};
    for (size_t i = 0; i < sizeof bad_st / sizeof *bad_st; i++)
        ck_assert_msg(!bp_dtype_from_st(bad_st[i], &dt), "'%s' accepted", bad_st[i]);
}
END_TEST

START_TEST(t_round)
{
    /* bp_dtype_round, against values derived by hand.  bf16 keeps 7
     * fraction bits: 1 + 2^-8 is half an ulp above 1 (a tie: even, 1),
     * 1 + 3 * 2^-8 a tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even). */
    ck_assert(bp_dtype_round(BP_BF16, 1.0 + 0x1p-8) == 1.0);
    ck_assert(bp_dtype_round(BP_BF16, 1.0 + 0x3p-8) == 1.0 + 0x1p-6);
    /* A double reaches bf16 through float, as c10 converts: 1 + 2^-8 +
     * 2^-40 is 1 + 2^-8 in float (2^-40 is below its half ulp), then a
     * tie, so 1; rounded once it would be 1 + 2^-7. */
    ck_assert(bp_dtype_round(BP_BF16, 1.0 + 0x1p-8 + 0x1p-40) == 1.0);
    /* fp16: 10 fraction bits; 2049 is a tie between 2048 and 2050. */
    ck_assert(bp_dtype_round(BP_F16, 2049.0) == 2048.0);
    ck_assert(bp_dtype_round(BP_F16, 65520.0) == INFINITY); /* past the max, 65504 */
    ck_assert(bp_dtype_round(BP_F32, 1.0 + 0x1p-30) == 1.0);
    ck_assert(bp_dtype_round(BP_F64, 1.0 + 0x1p-30) == 1.0 + 0x1p-30);
    ck_assert(bp_dtype_round(BP_I32, 2.5) == 2.5); /* not a float dtype: unchanged */
    ck_assert(bp_dtype_roundf(BP_BF16, 1.0f + 0x3p-8f) == 1.0f + 0x1p-6f);
    /* The run dtypes: the three model dtypes and nothing else. */
    for (int d = 0; d < BP_NDTYPES; d++)
        ck_assert_int_eq(bp_dtype_is_run((bp_dtype_t)d),
                         d == BP_F32 || d == BP_BF16 || d == BP_F16);
    ck_assert(!bp_dtype_is_run(BP_NDTYPES));
}
END_TEST

START_TEST(t_raw)
{
    /* Little-endian element access, checked against bytes written by hand. */
    static const unsigned char b[16] = {0x66, 0x66, 0x66, 0x3f, 0x80, 0x3f, 0x00, 0x00,
                                        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
    ck_assert_uint_eq(bp_dtype_load_bits(BP_F32, b, 0), 0x3f666666u);
    ck_assert_uint_eq(bp_dtype_load_bits(BP_BF16, b, 2), 0x3f80u);
    ck_assert_uint_eq(bp_dtype_load_bits(BP_F64, b, 1), 0x8807060504030201ull);
    ck_assert_uint_eq(bp_dtype_load_bits(BP_I32, b, 3), 0x88070605u);
    unsigned char o[16];
    memset(o, 0xee, sizeof o);
    bp_dtype_store_bits(BP_F16, o, 1, 0xabcd1234u); /* only the low 16 bits */
    ck_assert(o[1] == 0xee && o[2] == 0x34 && o[3] == 0x12 && o[4] == 0xee);
    bp_dtype_store_bits(BP_I64, o, 1, 0x0102030405060708ull);
    ck_assert(o[8] == 0x08 && o[15] == 0x01 && o[7] == 0xee);

    ck_assert(bp_dtype_bits_to_double(BP_BF16, 0x3f80) == 1.0);
    ck_assert(bp_dtype_bits_to_double(BP_F16, 0x7bff) == 65504.0);
    ck_assert(bp_dtype_bits_to_double(BP_I32, 0xffffffffu) == -1.0);
    ck_assert(bp_dtype_bits_to_double(BP_I64, (uint64_t)INT64_MIN) == -0x1p63);
    ck_assert(bp_dtype_bits_to_double(BP_F32, 0x3f666666u) == (double)0.9f);

    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_F32, 0.9), 0x3f666666u);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_BF16, 1.0), 0x3f80u);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_F16, 65520.0), 0x7c00u);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_F64, 0.1), 0x3fb999999999999aull);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, -3.0), 0xfffffffdu);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, 2.5), 2);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, 3.5), 4);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, 1e10), 0x7fffffffu);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, -1e10), 0x80000000u);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I32, NAN), 0);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I64, 0x1p63), (uint64_t)INT64_MAX);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I64, -0x1p63), (uint64_t)INT64_MIN);
    ck_assert_uint_eq(bp_dtype_bits_from_double(BP_I64, -INFINITY), (uint64_t)INT64_MIN);

    ck_assert(bp_dtype_bits_isnan(BP_BF16, 0xff81) && !bp_dtype_bits_isnan(BP_BF16, 0xff80));
    ck_assert(bp_dtype_bits_isinf(BP_BF16, 0xff80) && !bp_dtype_bits_isinf(BP_BF16, 0x7f7f));
    ck_assert(bp_dtype_bits_isnan(BP_F16, 0x7c01) && bp_dtype_bits_isinf(BP_F16, 0xfc00));
    ck_assert(!bp_dtype_bits_isnan(BP_F16, 0x7bff));
    ck_assert(bp_dtype_bits_isnan(BP_F32, 0x7f800001u) && bp_dtype_bits_isinf(BP_F32, 0xff800000u));
    ck_assert(bp_dtype_bits_isnan(BP_F64, 0xfff0000000000001ull));
    ck_assert(bp_dtype_bits_isinf(BP_F64, 0x7ff0000000000000ull));
    ck_assert(!bp_dtype_bits_isnan(BP_I32, 0xffffffffu) && !bp_dtype_bits_isinf(BP_I64, 0));
    ck_assert(!bp_dtype_bits_isnan(BP_NDTYPES, 0x7fff));
    ck_assert_uint_eq(bp_ulp_distance(BP_NDTYPES, 1, 1), UINT64_MAX);
}
END_TEST

static Suite *dtype_suite(bool slow)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("exhaustive16");
    tcase_add_test(tc, t_bf16_all);
    tcase_add_test(tc, t_f16_all);
    tcase_add_test(tc, t_widen_hand);
    suite_add_tcase(s, tc);

    int nt = (int)(sizeof table / sizeof *table);
    tc = tcase_create("table");
    tcase_add_loop_test(tc, t_table, 0, nt);
    tcase_add_loop_test(tc, t_table_vs_mpfr, 0, nt);
    suite_add_tcase(s, tc);

    tc = tcase_create("mpfr");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_mpfr_dense);
    tcase_add_test(tc, t_mpfr_random);
    suite_add_tcase(s, tc);

    tc = tcase_create("ulp");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_ulp_f32_walks);
    tcase_add_test(tc, t_ulp_f64_walks);
    tcase_add_test(tc, t_ulp_bf16);
    tcase_add_test(tc, t_ulp_f16);
    tcase_add_test(tc, t_ulp_special);
    tcase_add_test(tc, t_ulp_int);
    suite_add_tcase(s, tc);

    tc = tcase_create("names");
    tcase_add_test(tc, t_info);
    tcase_add_test(tc, t_parse);
    tcase_add_test(tc, t_raw);
    tcase_add_test(tc, t_round);
    suite_add_tcase(s, tc);

    if (slow) {
        tc = tcase_create("slow");
        tcase_set_timeout(tc, 0); /* no limit: minutes on a few cores */
        tcase_add_test(tc, t_slow_all_f32);
        suite_add_tcase(s, tc);
    }
    dtype_fp8_add(s, slow);
    return s;
}

int main(void)
{
    const char *e = getenv("BP_SEED"), *slow = getenv("BP_SLOW");
    seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
    bool want_slow = slow && strcmp(slow, "1") == 0;
    printf("check_dtype: seed %" PRIu64 " (BP_SEED=%" PRIu64 " repeats it)%s\n",
           seed, seed, want_slow ? "" : "; all-f32 test off (BP_SLOW=1 runs it)");
    fflush(stdout);
    SRunner *r = srunner_create(dtype_suite(want_slow));
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
