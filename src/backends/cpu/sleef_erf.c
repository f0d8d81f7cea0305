/* SLEEF 3.6-3.9's double erf in one lane (sleef_erf.h): sleefsimddp.c's
 * xerf_u1, with the helpers of sleef_dd.h under SLEEF's names.  This file
 * needs -ffp-contract=off (Makefile.am's AM_CFLAGS). */
#include "sleef_erf.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sleef_dd.h"

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
