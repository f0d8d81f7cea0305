/* SLEEF's double-double helpers (dd.h, their ENABLE_FMA_DP forms: vfma,
 * vfmapn = x*y - z, vfmanp = z - x*y and vmla are one fused operation,
 * vrec a division), estrin.h's polynomials, and the scaling and expk of
 * sleefsimddp.c, for the ports of SLEEF 3.6-3.9 functions that differ
 * from the system's 3.5 (sleef_erf.c, sleef_exp.c).  One lane of the
 * AVX2/AVX-512 builds.  Files including this need -ffp-contract=off
 * (Makefile.am's AM_CFLAGS): every a*b+c not written as fma() is two
 * roundings, as in SLEEF. */
#ifndef BP_SLEEF_DD_H
#define BP_SLEEF_DD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    double x, y;
} dd_t;

static inline dd_t dd(double x, double y)
{
    dd_t r = {x, y};
    return r;
}

/* dd.h */
static inline dd_t ddadd_d_dd(double x, dd_t y)
{
    double s = x + y.x;
    return dd(s, ((x - s) + y.x) + y.y);
}

static inline dd_t ddadd_dd_dd(dd_t x, dd_t y)
{
    double s = x.x + y.x;
    return dd(s, (((x.x - s) + y.x) + x.y) + y.y);
}

static inline dd_t ddadd2_dd_d(dd_t x, double y)
{
    double s = x.x + y, v = s - x.x;
    double w = (x.x - (s - v)) + (y - v);
    return dd(s, w + x.y);
}

static inline dd_t ddnormalize(dd_t t)
{
    double s = t.x + t.y;
    return dd(s, (t.x - s) + t.y);
}

static inline dd_t ddmul_dd_d(dd_t x, double y)
{
    double s = x.x * y;
    return dd(s, fma(x.y, y, fma(x.x, y, -s)));
}

static inline dd_t ddsqu(dd_t x)
{
    double s = x.x * x.x;
    return dd(s, fma(x.x + x.x, x.y, fma(x.x, x.x, -s)));
}

static inline dd_t ddrec(dd_t d)
{
    double s = 1.0 / d.x;
    return dd(s, s * fma(-d.y, s, fma(-d.x, s, 1.0)));
}

/* sleefsimddp.c: ddmla_vd2_vd_vd2_vd2 = z + y * x, and poly4dd's
 * x^2 (c3 x + c2) + (c1 x + c0), c3 a double, the rest double-doubles. */
static inline dd_t ddmla(double x, dd_t y, dd_t z)
{
    return ddadd_dd_dd(z, ddmul_dd_d(y, x));
}

static inline dd_t poly4dd(double x, double c3, dd_t c2, dd_t c1, dd_t c0)
{
    return ddmla(x * x, ddmla(x, dd(c3, 0), c2), ddmla(x, c1, c0));
}

static inline dd_t ddadd2_d_d(double x, double y)
{
    double s = x + y, v = s - x;
    return dd(s, (x - (s - v)) + (y - v));
}

static inline dd_t ddscale(dd_t d, double s)
{
    return dd(d.x * s, d.y * s);
}

static inline dd_t ddmul_dd_dd(dd_t x, dd_t y)
{
    double s = x.x * y.x;
    return dd(s, fma(x.x, y.y, fma(x.y, y.x, fma(x.x, y.x, -s))));
}

static inline dd_t dddiv(dd_t n, dd_t d)
{
    double t = 1.0 / d.x, s = n.x * t;
    double u = fma(t, n.x, -s);
    double v = fma(-d.y, t, fma(-d.x, t, 1.0));
    return dd(s, fma(s, v, fma(n.y, t, u)));
}

/* vrint_vi_vd / vtruncate of an integral double: cvtpd2dq, which gives
 * INT32_MIN for NaN and out-of-range values. */
static inline int sleef_rint_vi(double dq)
{
    return dq > -2147483649.0 && dq < 2147483648.0 ? (int)dq : INT32_MIN;
}

/* vpow2i_vd_vi: 2^q from q + 0x3ff shifted into the exponent, in 32-bit
 * arithmetic as the vector builds do. */
static inline double sleef_pow2i(int q)
{
    uint64_t b = (uint64_t)((uint32_t)q + 0x3ffu) << 52;
    double r;
    memcpy(&r, &b, sizeof r);
    return r;
}

/* vldexp2_vd_vd_vi: two multiplications by powers of two. */
static inline double sleef_ldexp2(double d, int e)
{
    return d * sleef_pow2i(e >> 1) * sleef_pow2i(e - (e >> 1));
}

/* estrin.h */
#define MLA(x, y, z) fma((x), (y), (z))
#define POLY2(x, c1, c0) MLA(x, c1, c0)
#define POLY4(x, x2, c3, c2, c1, c0) MLA(x2, MLA(x, c3, c2), MLA(x, c1, c0))
#define POLY5(x, x2, x4, c4, c3, c2, c1, c0) MLA(x4, c4, POLY4(x, x2, c3, c2, c1, c0))
#define POLY9(x, x2, x4, x8, c8, c7, c6, c5, c4, c3, c2, c1, c0)                             \
    MLA(x8, c8, POLY8(x, x2, x4, c7, c6, c5, c4, c3, c2, c1, c0))
#define POLY8(x, x2, x4, c7, c6, c5, c4, c3, c2, c1, c0)                                      \
    MLA(x4, POLY4(x, x2, c7, c6, c5, c4), POLY4(x, x2, c3, c2, c1, c0))
#define POLY10(x, x2, x4, x8, c9, c8, c7, c6, c5, c4, c3, c2, c1, c0)                         \
    MLA(x8, POLY2(x, c9, c8), POLY8(x, x2, x4, c7, c6, c5, c4, c3, c2, c1, c0))
#define POLY16(x, x2, x4, x8, cf, ce, cd, cc, cb, ca, c9, c8, c7, c6, c5, c4, c3, c2, c1, c0)  \
    MLA(x8, POLY8(x, x2, x4, cf, ce, cd, cc, cb, ca, c9, c8),                                 \
        POLY8(x, x2, x4, c7, c6, c5, c4, c3, c2, c1, c0))
#define POLY21(x, x2, x4, x8, x16, d4, d3, d2, d1, d0, cf, ce, cd, cc, cb, ca, c9, c8, c7, c6, \
               c5, c4, c3, c2, c1, c0)                                                        \
    MLA(x16, POLY5(x, x2, x4, d4, d3, d2, d1, d0),                                            \
        POLY16(x, x2, x4, x8, cf, ce, cd, cc, cb, ca, c9, c8, c7, c6, c5, c4, c3, c2, c1, c0))

/* expk: e^d for a double-double d; below d.x = -1000, +0. */
static inline double expk(dd_t d)
{
    const double R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931;
    const double L2U = .69314718055966295651160180568695068359375;
    const double L2L = .28235290563031577122588448175013436025525412068e-12;
    double u = (d.x + d.y) * R_LN2;
    double dq = nearbyint(u); /* vrint_vd_vd: to nearest, ties to even */
    int q = sleef_rint_vi(dq);
    dd_t s = ddadd2_dd_d(d, dq * -L2U);
    s = ddadd2_dd_d(s, dq * -L2L);
    s = ddnormalize(s);
    double s2 = s.x * s.x, s4 = s2 * s2, s8 = s4 * s4;
    u = POLY10(s.x, s2, s4, s8, 2.51069683420950419527139e-08, 2.76286166770270649116855e-07,
               2.75572496725023574143864e-06, 2.48014973989819794114153e-05,
               0.000198412698809069797676111, 0.0013888888939977128960529,
               0.00833333333332371417601081, 0.0416666666665409524128449,
               0.166666666666666740681535, 0.500000000000000999200722);
    dd_t t = ddadd_d_dd(1, s);
    t = ddadd_dd_dd(t, ddmul_dd_d(ddsqu(s), u));
    return d.x < -1000 ? 0 : sleef_ldexp2(t.x + t.y, q);
}

#endif
