/* SLEEF 3.6-3.9's double erf in one lane (sleef_erf.h).  The names follow
 * SLEEF's: dd.h's double-double helpers in their ENABLE_FMA_DP forms
 * (vfma, vfmapn = x*y - z, vfmanp = z - x*y, vmla: all one fused
 * operation; vrec: a division), estrin.h's polynomials (MLA = vmla), and
 * sleefsimddp.c's expk and xerf_u1.  This file needs -ffp-contract=off
 * (Makefile.am's AM_CFLAGS): every a*b+c not written as fma() is two
 * roundings, as in SLEEF. */
#include "sleef_erf.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    double x, y;
} dd_t;

static dd_t dd(double x, double y)
{
    dd_t r = {x, y};
    return r;
}

/* dd.h */
static dd_t ddadd_d_dd(double x, dd_t y)
{
    double s = x + y.x;
    return dd(s, ((x - s) + y.x) + y.y);
}

static dd_t ddadd_dd_dd(dd_t x, dd_t y)
{
    double s = x.x + y.x;
    return dd(s, (((x.x - s) + y.x) + x.y) + y.y);
}

static dd_t ddadd2_dd_d(dd_t x, double y)
{
    double s = x.x + y, v = s - x.x;
    double w = (x.x - (s - v)) + (y - v);
    return dd(s, w + x.y);
}

static dd_t ddnormalize(dd_t t)
{
    double s = t.x + t.y;
    return dd(s, (t.x - s) + t.y);
}

static dd_t ddmul_dd_d(dd_t x, double y)
{
    double s = x.x * y;
    return dd(s, fma(x.y, y, fma(x.x, y, -s)));
}

static dd_t ddsqu(dd_t x)
{
    double s = x.x * x.x;
    return dd(s, fma(x.x + x.x, x.y, fma(x.x, x.x, -s)));
}

static dd_t ddrec(dd_t d)
{
    double s = 1.0 / d.x;
    return dd(s, s * fma(-d.y, s, fma(-d.x, s, 1.0)));
}

/* sleefsimddp.c: ddmla_vd2_vd_vd2_vd2 = z + y * x, and poly4dd's
 * x^2 (c3 x + c2) + (c1 x + c0), c3 a double, the rest double-doubles. */
static dd_t ddmla(double x, dd_t y, dd_t z)
{
    return ddadd_dd_dd(z, ddmul_dd_d(y, x));
}

static dd_t poly4dd(double x, double c3, dd_t c2, dd_t c1, dd_t c0)
{
    return ddmla(x * x, ddmla(x, dd(c3, 0), c2), ddmla(x, c1, c0));
}

/* estrin.h */
#define MLA(x, y, z) fma((x), (y), (z))
#define POLY2(x, c1, c0) MLA(x, c1, c0)
#define POLY4(x, x2, c3, c2, c1, c0) MLA(x2, MLA(x, c3, c2), MLA(x, c1, c0))
#define POLY5(x, x2, x4, c4, c3, c2, c1, c0) MLA(x4, c4, POLY4(x, x2, c3, c2, c1, c0))
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

/* expk: e^d for a double-double d, here only -37 < d < -6 (erf above 2.5,
 * below 6), where the scaling by 2^q is exact and d.x >= -1000. */
static double expk(dd_t d)
{
    const double R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931;
    const double L2U = .69314718055966295651160180568695068359375;
    const double L2L = .28235290563031577122588448175013436025525412068e-12;
    double u = (d.x + d.y) * R_LN2;
    double dq = nearbyint(u); /* vrint_vd_vd: to nearest, ties to even */
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
    return ldexp(t.x + t.y, (int)dq);
}

/* Up to 2.5: Abramowitz and Stegun's form 1 - 1/(1 + x p(x))^16, p a
 * degree-23 polynomial; above: 1 - exp(x q(x)). */
static double erf_abs(double x)
{
    double x2 = x * x, x4 = x2 * x2, x8 = x4 * x4, x16 = x8 * x8, t;
    dd_t t2;
    if (x <= 2.5) {
        t = POLY21(x, x2, x4, x8, x16, -0.2083271002525222097e-14, +0.7151909970790897009e-13,
                   -0.1162238220110999364e-11, +0.1186474230821585259e-10,
                   -0.8499973178354613440e-10, +0.4507647462598841629e-9,
                   -0.1808044474288848915e-8, +0.5435081826716212389e-8,
                   -0.1143939895758628484e-7, +0.1215442362680889243e-7,
                   +0.1669878756181250355e-7, -0.9808074602255194288e-7,
                   +0.1389000557865837204e-6, +0.2945514529987331866e-6,
                   -0.1842918273003998283e-5, +0.3417987836115362136e-5,
                   +0.3860236356493129101e-5, -0.3309403072749947546e-4,
                   +0.1060862922597579532e-3, +0.2323253155213076174e-3,
                   +0.1490149719145544729e-3);
        t2 = poly4dd(x, t, dd(0.0092877958392275604405, 7.9287559463961107493e-19),
                     dd(0.042275531758784692937, 1.3785226620501016138e-19),
                     dd(0.07052369794346953491, 9.5846628070792092842e-19));
        t2 = ddadd_d_dd(1, ddmul_dd_d(t2, x));
        t2 = ddsqu(t2);
        t2 = ddsqu(t2);
        t2 = ddsqu(t2);
        t2 = ddsqu(t2);
        t2 = ddrec(t2);
    } else {
        t = POLY21(x, x2, x4, x8, x16, -0.4024015130752621932e-18, +0.3847193332817048172e-16,
                   -0.1749316241455644088e-14, +0.5029618322872872715e-13,
                   -0.1025221466851463164e-11, +0.1573695559331945583e-10,
                   -0.1884658558040203709e-9, +0.1798167853032159309e-8,
                   -0.1380745342355033142e-7, +0.8525705726469103499e-7,
                   -0.4160448058101303405e-6, +0.1517272660008588485e-5,
                   -0.3341634127317201697e-5, -0.2515023395879724513e-5,
                   +0.6539731269664907554e-4, -0.3551065097428388658e-3,
                   +0.1210736097958368864e-2, -0.2605566912579998680e-2,
                   +0.1252823202436093193e-2, +0.1820191395263313222e-1,
                   -0.1021557155453465954e+0);
        t2 = poly4dd(x, t, dd(-0.63691044383641748361, -2.4249477526539431839e-17),
                     dd(-1.1282926061803961737, -6.2970338860410996505e-17),
                     dd(-1.2261313785184804967e-05, -5.5329707514490107044e-22));
        t2 = dd(expk(t2), 0);
    }
    t2 = ddadd2_dd_d(t2, -1);
    return -(t2.x + t2.y);
}

/* xerf_u1's selections, in its order: below 1e-8 x * 2/sqrt(pi); from 6,
 * and infinities, 1; zero, 0; the sign of a last (vmulsign: an xor). */
double bp_sleef_erf(double a)
{
    uint64_t b;
    memcpy(&b, &a, sizeof b);
    uint64_t sign = b & UINT64_C(0x8000000000000000);
    double x = fabs(a), z;
    if (isnan(a)) {
        /* the lane's arithmetic carries |a|'s NaN, quieted, to the end,
         * where -(t2.x + t2.y) sets its sign and the xor with a's sign
         * follows */
        b = (b | UINT64_C(0x0008000000000000)) ^ UINT64_C(0x8000000000000000);
        memcpy(&z, &b, sizeof z);
        return z;
    }
    if (x == 0)
        z = 0;
    else if (x >= 6)
        z = 1;
    else if (x < 1e-8)
        z = x * 1.12837916709551262756245475959;
    else
        z = erf_abs(x);
    memcpy(&b, &z, sizeof b);
    b ^= sign;
    memcpy(&z, &b, sizeof z);
    return z;
}
