/* src/backends/cpu/sleef_exp.c, fp64 exp and pow of the SLEEF PyTorch 2.11 bundles
 * (3.8 on), against references of its own:
 *   - below 3.5's overflow bound nothing changed in 3.8 (PR #604 moved
 *     the bound only), so there the port must equal this system's SLEEF
 *     3.5 bit for bit in its AVX2 and AVX-512 lanes: an exact check of
 *     every fma and rounding of the port on 400000 drawn inputs (NaNs:
 *     both NaN);
 *   - between the bounds (709.7827111... to log(DBL_MAX)): finite and
 *     within SLEEF's 1 ulp of MPFR, where 3.5 gives +inf;
 *   - the backend's lanes (bp_cpu_lane, bp_cpu_vpow) take the port there
 *     and the system's SLEEF elsewhere. */
#include <check.h>
#include <immintrin.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include <sleef.h>

#include "be_cpu.h"
#include "cpu_isa.h"
#include "sleef_exp.h"
#include "test_bits.h"
#include "test_files.h"

__m256d Sleef_expd4_u10avx2(__m256d);
__m256d Sleef_powd4_u10avx2(__m256d, __m256d);
__m512d Sleef_expd8_u10avx512f(__m512d);
__m512d Sleef_powd8_u10avx512f(__m512d, __m512d);

__attribute__((target("avx2,fma"))) static double exp4(double x)
{
    double r[4];
    _mm256_storeu_pd(r, Sleef_expd4_u10avx2(_mm256_set1_pd(x)));
    return r[0];
}

__attribute__((target("avx2,fma"))) static double pow4(double x, double y)
{
    double r[4];
    _mm256_storeu_pd(r, Sleef_powd4_u10avx2(_mm256_set1_pd(x), _mm256_set1_pd(y)));
    return r[0];
}

__attribute__((target("avx512f,avx2,fma"))) static double exp8(double x)
{
    double r[8];
    _mm512_storeu_pd(r, Sleef_expd8_u10avx512f(_mm512_set1_pd(x)));
    return r[0];
}

__attribute__((target("avx512f,avx2,fma"))) static double pow8(double x, double y)
{
    double r[8];
    _mm512_storeu_pd(r, Sleef_powd8_u10avx512f(_mm512_set1_pd(x), _mm512_set1_pd(y)));
    return r[0];
}

static bool same(double a, double b)
{
    return (isnan(a) && isnan(b)) || d2b(a) == d2b(b);
}

/* Inputs of exp up to 3.5's bound: the whole range, near 0, near the
 * bounds, any bits. */
static double exp_input(uint64_t i)
{
    uint64_t r = splitmix64(i);
    double u = (double)(r >> 11) * 0x1p-53;
    switch (i % 5) {
    case 0: return -1100 + u * (BP_SLEEF_EXP_OFLOW_35 + 1100);
    case 1: return (u - 0.5) * 4;
    case 2: return b2d(d2b(BP_SLEEF_EXP_OFLOW_35) - (r & 0xffff));
    case 3: return -708 - u * 40; /* subnormal results */
    default: {
        double x = b2d(r);
        return x > BP_SLEEF_EXP_OFLOW_35 && x <= BP_SLEEF_EXP_OFLOW ? 0 : x;
    }
    }
}

START_TEST(t_exp_as_35)
{
    bool avx512 = bp_cpu_isa_supported(BP_CPU_ISA_AVX512);
    for (uint64_t i = 0; i < 200000; i++) {
        double x = exp_input(i), y = bp_sleef_exp(x);
        ck_assert_msg(same(y, exp4(x)), "exp(%a): port %a, SLEEF 3.5 AVX2 %a", x, y, exp4(x));
        if (avx512)
            ck_assert_msg(same(y, exp8(x)), "exp(%a): port %a, AVX-512 %a", x, y, exp8(x));
    }
}
END_TEST

/* pow's inputs: bases of every magnitude and sign, exponents small,
 * integral (odd, even, negative), huge, and pairs near overflow. */
static void pow_input(uint64_t i, double *x, double *y)
{
    uint64_t r = splitmix64(i), r2 = splitmix64(i ^ 0x5555);
    double u = (double)(r >> 11) * 0x1p-53, v = (double)(r2 >> 11) * 0x1p-53;
    switch (i % 6) {
    case 0: *x = u * 10; *y = (v - 0.5) * 40; break;
    case 1: *x = -(u * 4); *y = (double)((int64_t)(r2 % 41) - 20); break;
    case 2: *x = b2d(r & UINT64_C(0x7fffffffffffffff)); *y = (v - 0.5) * 4; break;
    case 3: *x = b2d(r); *y = b2d(r2); break;
    case 4: /* exponent y*log(x) just below 3.5's bound */
        *x = 1 + u * 1000;
        *y = BP_SLEEF_EXP_OFLOW_35 / log(*x) * (1 - v * 1e-9);
        break;
    default: *x = 1 + u; *y = (v - 0.5) * 1e5; break;
    }
    if (bp_sleef_pow_in_window(*x, *y))
        *y = 0.5;
}

START_TEST(t_pow_as_35)
{
    bool avx512 = bp_cpu_isa_supported(BP_CPU_ISA_AVX512);
    for (uint64_t i = 0; i < 200000; i++) {
        double x, y;
        pow_input(i, &x, &y);
        double p = bp_sleef_pow(x, y);
        ck_assert_msg(same(p, pow4(x, y)), "pow(%a, %a): port %a, SLEEF 3.5 AVX2 %a", x, y,
                      p, pow4(x, y));
        if (avx512)
            ck_assert_msg(same(p, pow8(x, y)), "pow(%a, %a): port %a, AVX-512 %a", x, y, p,
                          pow8(x, y));
    }
}
END_TEST

static double ulps_mpfr(mpfr_t e, double y)
{
    mpfr_t d;
    mpfr_init2(d, 200);
    mpfr_sub_d(d, e, y, MPFR_RNDN);
    mpfr_abs(d, d, MPFR_RNDN);
    mpfr_mul_2si(d, d, -(mpfr_get_exp(e) - 53), MPFR_RNDN);
    double u = mpfr_get_d(d, MPFR_RNDN);
    mpfr_clear(d);
    return u;
}

static bp_cpu_t cpu_of(bp_cpu_isa_t isa, bool simd)
{
    bp_cpu_t c = {.math = BP_CPU_MATH_SLEEF_U10, .isa = isa, .simd = simd,
                  .vec_bytes = isa == BP_CPU_ISA_AVX512 ? 64 : 32};
    return c;
}

START_TEST(t_exp_window)
{
    uint64_t lo = d2b(BP_SLEEF_EXP_OFLOW_35), hi = d2b(BP_SLEEF_EXP_OFLOW);
    ck_assert_uint_gt(hi, lo + 1000);
    ck_assert(isinf(bp_sleef_exp(b2d(hi + 1))));
    bp_cpu_t c[3] = {cpu_of(BP_CPU_ISA_AVX2, true), cpu_of(BP_CPU_ISA_AVX512, true),
                     cpu_of(BP_CPU_ISA_DEFAULT, false)};
    int nc = bp_cpu_isa_supported(BP_CPU_ISA_AVX512) ? 3 : 2;
    if (nc == 2)
        c[1] = c[2];
    mpfr_t e;
    mpfr_init2(e, 200);
    for (uint64_t i = 0; i < 20000; i++) {
        double x = b2d(i < 64 ? lo + 1 + i : i < 128 ? hi - (i - 64)
                                        : lo + 1 + splitmix64(i) % (hi - lo));
        double y = bp_sleef_exp(x);
        mpfr_set_d(e, x, MPFR_RNDN);
        mpfr_exp(e, e, MPFR_RNDN);
        ck_assert_msg(isfinite(y) && ulps_mpfr(e, y) <= 1.0, "exp(%a) = %a", x, y);
        if (SLEEF_VERSION_MAJOR == 3 && SLEEF_VERSION_MINOR == 5)
            ck_assert(isinf(exp4(x)));
        for (int k = 0; k < nc; k++)
            ck_assert(d2b(bp_cpu_lane(&c[k], BP_OP_EXP, true, x)) == d2b(y));
    }
    mpfr_clear(e);
}
END_TEST

START_TEST(t_pow_window)
{
    bp_cpu_t c[3] = {cpu_of(BP_CPU_ISA_AVX2, true), cpu_of(BP_CPU_ISA_AVX512, true),
                     cpu_of(BP_CPU_ISA_DEFAULT, false)};
    int nc = bp_cpu_isa_supported(BP_CPU_ISA_AVX512) ? 3 : 2;
    if (nc == 2)
        c[1] = c[2];
    mpfr_t e, mx, my;
    mpfr_inits2(200, e, mx, my, (mpfr_ptr)0);
    int found = 0;
    for (uint64_t i = 0; i < 200000 && found < 2000; i++) {
        uint64_t r = splitmix64(i);
        double x = 1.5 + (double)(r >> 11) * 0x1p-53 * 1e6;
        if (i & 1)
            x = -x;
        double mid = (BP_SLEEF_EXP_OFLOW_35 + BP_SLEEF_EXP_OFLOW) / 2;
        double y = mid / log(fabs(x));
        if (i & 2)
            y = nearbyint(y); /* integral: the sign of a negative base */
        if (!bp_sleef_pow_in_window(x, y))
            continue;
        found++;
        double p = bp_sleef_pow(x, y);
        if (x < 0 && y != trunc(y)) {
            ck_assert(isnan(p));
            continue;
        }
        mpfr_set_d(mx, x, MPFR_RNDN);
        mpfr_set_d(my, y, MPFR_RNDN);
        mpfr_pow(e, mx, my, MPFR_RNDN);
        ck_assert_msg(isfinite(p) && ulps_mpfr(e, p) <= 1.0, "pow(%a, %a) = %a", x, y, p);
        if (SLEEF_VERSION_MAJOR == 3 && SLEEF_VERSION_MINOR == 5)
            ck_assert(isinf(pow4(x, y)));
        for (int k = 0; k < nc; k++)
            ck_assert(d2b(bp_cpu_vpow(&c[k], x, y)) == d2b(p));
    }
    ck_assert_int_ge(found, 500);
    mpfr_clears(e, mx, my, (mpfr_ptr)0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sleef_exp");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_exp_as_35);
    tcase_add_test(tc, t_pow_as_35);
    tcase_add_test(tc, t_exp_window);
    tcase_add_test(tc, t_pow_window);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
