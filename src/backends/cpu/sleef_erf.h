/* erf of one double as the SLEEF that PyTorch 2.11 bundles computes it in a
 * lane of its vector builds (Sleef_erfd4_u10 on AVX2, Sleef_erfd8_u10 on
 * AVX-512: Vectorized<double>::erf), which is not what the libsleef 3.5 on
 * this system computes.
 *
 * SLEEF 3.6 replaced the double erf (shibatch/sleef PR #370, "Faster erf",
 * in 3.6's changelog as "Optimise error functions"); PyTorch's
 * third_party/sleef is at 3.8 (pytorch PR #151955) or 3.9 (PR #173570),
 * whose xerf_u1 (src/libm/sleefsimddp.c) and expk are those of 3.6.
 * Every step is a double operation rounded once, with an fma exactly where
 * SLEEF's FMA builds (AVX2, AVX-512, ENABLE_FMA_DP) execute one, so the
 * result is that of any lane of those builds: the lanes do not interact
 * (the all-lanes test of the fast path picks between two evaluations that
 * give the same value for a lane at most 2.5). */
#ifndef BP_SLEEF_ERF_H
#define BP_SLEEF_ERF_H

double bp_sleef_erf(double a);

#endif
