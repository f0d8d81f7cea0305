/* exp and pow of doubles as the SLEEF PyTorch 2.11 bundles (3.8 or 3.9)
 * computes them in one lane of its AVX2/AVX-512 builds (Sleef_expd4_u10,
 * Sleef_powd4_u10 and their 8-lane forms: Vectorized<double>::exp and
 * ::pow).  3.8 (shibatch/sleef PR #604, issues #523 and #600) moved their
 * overflow bound from 709.78271114955742909 to log(DBL_MAX) =
 * 709.782712893384: where the exponent lies between the two, the system's
 * 3.5 gives +inf and 3.8 a finite value near DBL_MAX.  Everything else is
 * 3.5's algorithm (sleefsimddp.c's xexp; xpow with logk and expk). */
#ifndef BP_SLEEF_EXP_H
#define BP_SLEEF_EXP_H

#include <stdbool.h>

/* 3.5's bound and 3.8's. */
#define BP_SLEEF_EXP_OFLOW_35 709.78271114955742909217217426
#define BP_SLEEF_EXP_OFLOW 709.782712893384

double bp_sleef_exp(double d);
double bp_sleef_pow(double x, double y);
/* Whether pow(x, y)'s exponent y*log|x| falls between the two bounds
 * (x and y finite, x not 0 or 1, y not 0): the lanes where 3.5 and 3.8
 * differ. */
bool bp_sleef_pow_in_window(double x, double y);

#endif
