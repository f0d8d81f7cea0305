/* SLEEF 3.8's double exp and pow in one lane (sleef_exp.h): sleefsimddp.c's
 * xexp (ENABLE_FMA_DP) and xpow with logk (the AVX2 build's form: ilogb
 * and exponent arithmetic) and expk, with the helpers of sleef_dd.h under
 * SLEEF's names.  This file needs -ffp-contract=off (Makefile.am). */
#include "sleef_exp.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sleef_dd.h"

static const double R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931;
static const double L2U = .69314718055966295651160180568695068359375;
static const double L2L = .28235290563031577122588448175013436025525412068e-12;

double bp_sleef_exp(double d)
{
    if (isnan(d))
        return d + d;
    if (d > BP_SLEEF_EXP_OFLOW)
        return INFINITY;
    if (d < -1000)
        return 0;
    double u = nearbyint(d * R_LN2);
    int q = sleef_rint_vi(u);
    double s = fma(u, -L2U, d);
    s = fma(u, -L2L, s);
    double s2 = s * s, s4 = s2 * s2, s8 = s4 * s4;
    u = POLY10(s, s2, s4, s8, +0.2081276378237164457e-8, +0.2511210703042288022e-7,
               +0.2755762628169491192e-6, +0.2755723402025388239e-5,
               +0.2480158687479686264e-4, +0.1984126989855865850e-3,
               +0.1388888888914497797e-2, +0.8333333333314938210e-2,
               +0.4166666666666602598e-1, +0.1666666666666669072e+0);
    u = fma(u, s, 0.5);
    u = fma(u, s, 1.0);
    u = fma(u, s, 1.0);
    return sleef_ldexp2(u, q);
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* vilogb2k_vi_vd and vldexp3_vd_vd_vi: exponent field arithmetic. */
static int ilogb2k(double d)
{
    return (int)((bits(d) >> 52) & 0x7ff) - 0x3ff;
}

static double ldexp3(double d, int q)
{
    return from_bits(bits(d) + ((uint64_t)(uint32_t)q << 52));
}

/* log|d| as a double-double. */
static dd_t logk(double d)
{
    bool o = d < 0x1p-1022;
    if (o)
        d *= 0x1p64;
    int e = ilogb2k(d * (1.0 / 0.75));
    double m = ldexp3(d, -e);
    if (o)
        e -= 64;
    dd_t x = dddiv(ddadd2_d_d(-1, m), ddadd2_d_d(1, m));
    dd_t x2 = ddsqu(x);
    double x4 = x2.x * x2.x, x8 = x4 * x4, x16 = x8 * x8;
    double t = POLY9(x2.x, x4, x8, x16, 0.116255524079935043668677, 0.103239680901072952701192,
                     0.117754809412463995466069, 0.13332981086846273921509,
                     0.153846227114512262845736, 0.181818180850050775676507,
                     0.222222222230083560345903, 0.285714285714249172087875,
                     0.400000000000000077715612);
    dd_t c = dd(0.666666666666666629659233, 3.80554962542412056336616e-17);
    dd_t s = ddmul_dd_d(dd(0.693147180559945286226764, 2.319046813846299558417771e-17), (double)e);
    s = ddadd_dd_dd(s, ddscale(x, 2));
    x = ddmul_dd_dd(x2, x);
    s = ddadd_dd_dd(s, ddmul_dd_dd(x, c));
    x = ddmul_dd_dd(x2, x);
    return ddadd_dd_dd(s, ddmul_dd_d(x, t));
}

static dd_t pow_exponent(double x, double y)
{
    return ddmul_dd_d(logk(fabs(x)), y);
}

bool bp_sleef_pow_in_window(double x, double y)
{
    if (!isfinite(x) || !isfinite(y) || x == 0 || x == 1 || y == 0)
        return false;
    double e = pow_exponent(x, y).x;
    return e > BP_SLEEF_EXP_OFLOW_35 && e <= BP_SLEEF_EXP_OFLOW;
}

/* xpow's selections, in its order. */
double bp_sleef_pow(double x, double y)
{
    bool yisint = trunc(y) == y;
    bool yisodd = yisint && trunc(y * 0.5) != y * 0.5;
    dd_t d = pow_exponent(x, y);
    double result = d.x > BP_SLEEF_EXP_OFLOW ? INFINITY : expk(d);
    result *= x > 0 ? 1 : yisint ? (yisodd ? -1.0 : 1.0) : NAN;
    double efx = copysign(1.0, y) * (fabs(x) - 1); /* vmulsign: exact */
    if (isinf(y))
        result = efx < 0 ? 0 : efx == 0 ? 1 : INFINITY;
    if (isinf(x) || x == 0) {
        double r = (signbit(y) != 0) != (x == 0) ? 0 : INFINITY;
        result = copysign(r, yisodd ? x : 1.0); /* vmulsign: r is positive */
    }
    if (isnan(x) || isnan(y))
        result = from_bits(UINT64_MAX);
    if (y == 0 || x == 1)
        result = 1;
    return result;
}
