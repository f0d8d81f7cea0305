/* log1p in SLEEF's vector lanes as PyTorch 2.11 bundles it (3.8 on,
 * shibatch/sleef PR #606): above the bound of the core approximation
 * (1e38f; fp64 1e307) the lane is log's value, where the system's SLEEF
 * 3.5 gives +inf.  Checked, on the AVX2 lanes and (where the CPU has it)
 * the AVX-512 ones, fp32 and fp64, and on the scalar builds:
 *   - MPFR: within 1 ulp of log1p from the bound up to the largest finite
 *     number (every fp32 there is drawn from; 1e5 fp64), finite;
 *   - the bound itself and below: the core approximation, as 3.5's;
 *   - +inf, NaN, -1, below -1, -0 as the C standard has them;
 *   - PyTorch 2.11's lane (AVX-512 host): bf16 1.6e38's log1p is 88.0
 *     (tests/regress/fz777-0064-log1p-bf16-cpu). */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include <sleef.h>

#include "be_cpu.h"
#include "cpu_isa.h"
#include "test_bits.h"
#include "test_files.h"

static bp_cpu_t cpu_of(bp_cpu_isa_t isa, bool simd)
{
    bp_cpu_t c = {.math = BP_CPU_MATH_SLEEF_U10, .isa = isa, .simd = simd,
                  .vec_bytes = isa == BP_CPU_ISA_AVX512 ? 64 : 32};
    return c;
}

/* The lanes to check: AVX2, AVX-512 where present, scalar. */
static int cpus(bp_cpu_t *c)
{
    int n = 0;
    c[n++] = cpu_of(BP_CPU_ISA_AVX2, true);
    if (bp_cpu_isa_supported(BP_CPU_ISA_AVX512))
        c[n++] = cpu_of(BP_CPU_ISA_AVX512, true);
    c[n++] = cpu_of(BP_CPU_ISA_DEFAULT, false);
    return n;
}

/* |y - log1p(x)| in ulps of the correctly rounded result (prec bits). */
static double ulps(double x, double y, mpfr_prec_t prec)
{
    mpfr_t e, d;
    mpfr_inits2(200, e, d, (mpfr_ptr)0);
    mpfr_set_d(e, x, MPFR_RNDN);
    mpfr_log1p(e, e, MPFR_RNDN);
    mpfr_sub_d(d, e, y, MPFR_RNDN);
    mpfr_abs(d, d, MPFR_RNDN);
    mpfr_mul_2si(d, d, -(mpfr_get_exp(e) - (long)prec), MPFR_RNDN);
    double u = mpfr_get_d(d, MPFR_RNDN);
    mpfr_clears(e, d, (mpfr_ptr)0);
    return u;
}

START_TEST(t_above_bound_f32)
{
    bp_cpu_t c[3];
    int n = cpus(c);
    uint32_t lo, hi = 0x7f7fffff;
    float b = 1e38f;
    memcpy(&lo, &b, sizeof lo);
    for (int k = 0; k < n; k++)
        for (uint64_t i = 0; i < 20000; i++) {
            /* the first 64 above the bound, the largest, then drawn */
            uint32_t u = i < 64 ? lo + 1 + (uint32_t)i
                         : i < 128 ? hi - (uint32_t)(i - 64)
                                   : lo + 1 + (uint32_t)(splitmix64(i) % (hi - lo));
            float x;
            memcpy(&x, &u, sizeof x);
            float y = bp_cpu_lanef(&c[k], BP_OP_LOG1P, true, x);
            ck_assert_msg(isfinite(y) && ulps(x, y, 24) <= 1.0,
                          "isa %d simd %d: log1pf(%a) = %a", c[k].isa, c[k].simd, x, y);
        }
}
END_TEST

START_TEST(t_above_bound_f64)
{
    bp_cpu_t c[3];
    int n = cpus(c);
    uint64_t lo, hi = UINT64_C(0x7fefffffffffffff);
    double b = 1e307;
    memcpy(&lo, &b, sizeof lo);
    for (int k = 0; k < n; k++)
        for (uint64_t i = 0; i < 20000; i++) {
            uint64_t u = i < 64 ? lo + 1 + i
                         : i < 128 ? hi - (i - 64)
                                   : lo + 1 + splitmix64(i) % (hi - lo);
            double x;
            memcpy(&x, &u, sizeof x);
            double y = bp_cpu_lane(&c[k], BP_OP_LOG1P, true, x);
            ck_assert_msg(isfinite(y) && ulps(x, y, 53) <= 1.0,
                          "isa %d simd %d: log1p(%a) = %a", c[k].isa, c[k].simd, x, y);
        }
}
END_TEST

/* At and below the bound nothing changed: the system's SLEEF's core. */
START_TEST(t_core)
{
    bp_cpu_t c[3];
    int n = cpus(c);
    static const float xf[] = {1e38f, 0x1.2ced30p+126f, 1e30f, 3.5f, 1e-3f, -0.5f};
    static const double xd[] = {1e307, 0x1.c7b1f3cac7432p+1019, 1e300, 3.5, 1e-3, -0.5};
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < sizeof xf / sizeof *xf; i++) {
            float y = bp_cpu_lanef(&c[k], BP_OP_LOG1P, true, xf[i]);
            ck_assert_msg(isfinite(y) && ulps(xf[i], y, 24) <= 1.0, "log1pf(%a) = %a", xf[i], y);
            if (!c[k].simd)
                ck_assert(y == Sleef_log1pf_u10(xf[i]));
        }
        for (size_t i = 0; i < sizeof xd / sizeof *xd; i++) {
            double y = bp_cpu_lane(&c[k], BP_OP_LOG1P, true, xd[i]);
            ck_assert_msg(isfinite(y) && ulps(xd[i], y, 53) <= 1.0, "log1p(%a) = %a", xd[i], y);
            if (!c[k].simd)
                ck_assert(y == Sleef_log1p_u10(xd[i]));
        }
    }
}
END_TEST

START_TEST(t_special)
{
    bp_cpu_t c[3];
    int n = cpus(c);
    for (int k = 0; k < n; k++) {
        const bp_cpu_t *p = &c[k];
        ck_assert(bp_cpu_lanef(p, BP_OP_LOG1P, true, INFINITY) == INFINITY);
        ck_assert(bp_cpu_lane(p, BP_OP_LOG1P, true, INFINITY) == INFINITY);
        ck_assert(isnan(bp_cpu_lanef(p, BP_OP_LOG1P, true, NAN)));
        ck_assert(isnan(bp_cpu_lane(p, BP_OP_LOG1P, true, NAN)));
        ck_assert(isnan(bp_cpu_lanef(p, BP_OP_LOG1P, true, -2.0f)));
        ck_assert(isnan(bp_cpu_lane(p, BP_OP_LOG1P, true, -2.0)));
        ck_assert(bp_cpu_lanef(p, BP_OP_LOG1P, true, -1.0f) == -INFINITY);
        ck_assert(bp_cpu_lane(p, BP_OP_LOG1P, true, -1.0) == -INFINITY);
        float zf = bp_cpu_lanef(p, BP_OP_LOG1P, true, -0.0f);
        double zd = bp_cpu_lane(p, BP_OP_LOG1P, true, -0.0);
        ck_assert(zf == 0 && signbit(zf) && zd == 0 && signbit(zd));
    }
}
END_TEST

/* The regression's element: bf16 0x7ef1 (1.6e38) widened to float. */
START_TEST(t_pytorch)
{
    bp_cpu_t c[3];
    int n = cpus(c);
    uint32_t u = UINT32_C(0x7ef1) << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    for (int k = 0; k < n; k++) {
        float y = bp_cpu_lanef(&c[k], BP_OP_LOG1P, true, x);
        uint32_t b;
        memcpy(&b, &y, sizeof b);
        /* bf16 round to nearest even of the float */
        uint32_t r = (b + 0x7fff + ((b >> 16) & 1)) >> 16;
        ck_assert_msg(r == 0x42b0, "log1p(%a) = %a: bf16 0x%04x, PyTorch 0x42b0", x, y, r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sleef_log1p");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_above_bound_f32);
    tcase_add_test(tc, t_above_bound_f64);
    tcase_add_test(tc, t_core);
    tcase_add_test(tc, t_special);
    tcase_add_test(tc, t_pytorch);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
