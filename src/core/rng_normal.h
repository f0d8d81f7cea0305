/* The normal stream of randn and normal: Box-Muller over the 128 bits of one
 * Philox-4x32-10 block, in IEEE double with every operation written out, so
 * that the CPU (rng.c) and the GPU (kernels/rng.cu) compute the same bits
 * from one definition.  probes/README.md states the stream for readers who
 * regenerate it; tests/rng_normal_ref.py is that statement in Python.
 *
 * Only correctly rounded operations are used (+ - * / sqrt and fused
 * multiply-add, each named: __dadd_rn ... on the device, where nvcc would
 * otherwise contract a*b+c; plain C on the host, which the project compiles
 * with -ffp-contract=off), so every IEEE-754 machine gives the same double.
 * The logarithm, sine and cosine are fixed polynomials (Taylor series of
 * atanh, sin and cos, their coefficients the doubles nearest 1/k and
 * ±1/n!), not a math library's, whose last bits differ between libraries.
 *
 * Pair p of elements (2p and 2p + 1) takes the block of counter (p lo,
 * p hi, stream lo, stream hi) and key (seed lo, seed hi), words w0..w3:
 *   n1 = (w0 << 21 | w1 >> 11) + 1   in [1, 2^53]: u1 = n1 / 2^53 in (0, 1]
 *   k2 =  w2 << 21 | w3 >> 11        in [0, 2^53): u2 = k2 / 2^53 in [0, 1)
 *   R  = sqrt(0 - 2 log u1),  theta = 2 pi u2,
 *   z(2p) = R cos theta,  z(2p + 1) = R sin theta,
 * and the element is fma(std, z, mean) (randn: mean 0, std 1), rounded once
 * to the dtype. */
#ifndef BP_RNG_NORMAL_H
#define BP_RNG_NORMAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define BP_RN_FN static __host__ __device__ __forceinline__
#else
#define BP_RN_FN static inline
#endif

#ifdef __CUDA_ARCH__
#define BP_RN_ADD(a, b) __dadd_rn(a, b)
#define BP_RN_SUB(a, b) __dsub_rn(a, b)
#define BP_RN_MUL(a, b) __dmul_rn(a, b)
#define BP_RN_DIV(a, b) __ddiv_rn(a, b)
#define BP_RN_FMA(a, b, c) __fma_rn(a, b, c)
#define BP_RN_SQRT(a) __dsqrt_rn(a)
#else
#define BP_RN_ADD(a, b) ((a) + (b))
#define BP_RN_SUB(a, b) ((a) - (b))
#define BP_RN_MUL(a, b) ((a) * (b))
#define BP_RN_DIV(a, b) ((a) / (b))
#define BP_RN_FMA(a, b, c) fma(a, b, c)
#define BP_RN_SQRT(a) sqrt(a)
#endif

BP_RN_FN uint64_t bp_rn_dbits(double d)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
#endif
}

BP_RN_FN double bp_rn_double(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
#endif
}

BP_RN_FN uint32_t bp_rn_fbits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

BP_RN_FN float bp_rn_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* log(n * 2^-53) for 1 <= n <= 2^53.  n = m * 2^e exactly with m in
 * [1, 2), halved (e + 1) when m > sqrt(2) (the double 0x1.6a09e667f3bcdp+0);
 * f = (m - 1) / (m + 1), s = f * f, log m = 2 atanh f = 2f + 2f s P(s) with
 * P(s) = 1/3 + s/5 + ... + s^10/23 by Horner in fma; the result is
 * (e - 53) ln2_hi + fma(e - 53, ln2_lo, log m) with fdlibm's split of ln 2
 * (ln2_hi has 32 trailing zero bits: its product with e is exact). */
BP_RN_FN double bp_normal_log(uint64_t n)
{
    uint64_t b = bp_rn_dbits((double)n); /* exact: n <= 2^53 */
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    double m = bp_rn_double((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);
    if (m > 0x1.6a09e667f3bcdp+0) {
        m = BP_RN_MUL(m, 0.5);
        e++;
    }
    double f = BP_RN_DIV(BP_RN_SUB(m, 1.0), BP_RN_ADD(m, 1.0));
    double f2 = BP_RN_ADD(f, f);
    double s = BP_RN_MUL(f, f);
    double p = 0x1.642c8590b2164p-5;       /* 1/23 */
    p = BP_RN_FMA(p, s, 0x1.8618618618618p-5); /* 1/21 */
    p = BP_RN_FMA(p, s, 0x1.af286bca1af28p-5); /* 1/19 */
    p = BP_RN_FMA(p, s, 0x1.e1e1e1e1e1e1ep-5); /* 1/17 */
    p = BP_RN_FMA(p, s, 0x1.1111111111111p-4); /* 1/15 */
    p = BP_RN_FMA(p, s, 0x1.3b13b13b13b14p-4); /* 1/13 */
    p = BP_RN_FMA(p, s, 0x1.745d1745d1746p-4); /* 1/11 */
    p = BP_RN_FMA(p, s, 0x1.c71c71c71c71cp-4); /* 1/9 */
    p = BP_RN_FMA(p, s, 0x1.2492492492492p-3); /* 1/7 */
    p = BP_RN_FMA(p, s, 0x1.999999999999ap-3); /* 1/5 */
    p = BP_RN_FMA(p, s, 0x1.5555555555555p-2); /* 1/3 */
    double logm = BP_RN_FMA(BP_RN_MUL(f2, s), p, f2);
    double de = (double)(e - 53);
    return BP_RN_ADD(BP_RN_MUL(de, 0x1.62e42feep-1),
                     BP_RN_FMA(de, 0x1.a39ef35793c76p-33, logm));
}

/* cos(2 pi k / 2^53) (odd == 0) or sin(2 pi k / 2^53) (odd == 1), for
 * 0 <= k < 2^53.  The quadrant q = (k + 2^50) >> 51 (4u rounded, ties up,
 * 0..4) and r = k - q 2^51 in [-2^50, 2^50) are integers, so the reduction
 * is exact; x = r * (pi/2 * 2^-51) with the double nearest pi/2, one
 * rounding, |x| <= pi/4.  With s = x * x:
 *   sin x = fma(x * s, S(s), x),  S = -1/3! + s/5! - ... - s^8/19!
 *   cos x = fma(s, C(s), 1),      C = -1/2! + s/4! - ... + s^9/20!
 * each by Horner in fma; then cos theta is cos x, -sin x, -cos x, sin x and
 * sin theta is sin x, cos x, -sin x, -cos x for q mod 4 = 0, 1, 2, 3. */
BP_RN_FN double bp_normal_circle(uint64_t k, int odd)
{
    uint64_t q = (k + (1ull << 50)) >> 51;
    int64_t r = (int64_t)k - (int64_t)(q << 51);
    double x = BP_RN_MUL((double)r, 0x1.921fb54442d18p-51);
    double s = BP_RN_MUL(x, x);
    int use_sin = (odd ^ (int)(q & 1)) != 0;
    double v;
    if (use_sin) {
        double c = -0x1.2f49b46814157p-57;       /* -1/19! */
        c = BP_RN_FMA(c, s, 0x1.952c77030ad4ap-49);  /* 1/17! */
        c = BP_RN_FMA(c, s, -0x1.ae7f3e733b81fp-41); /* -1/15! */
        c = BP_RN_FMA(c, s, 0x1.6124613a86d09p-33);  /* 1/13! */
        c = BP_RN_FMA(c, s, -0x1.ae64567f544e4p-26); /* -1/11! */
        c = BP_RN_FMA(c, s, 0x1.71de3a556c734p-19);  /* 1/9! */
        c = BP_RN_FMA(c, s, -0x1.a01a01a01a01ap-13); /* -1/7! */
        c = BP_RN_FMA(c, s, 0x1.1111111111111p-7);   /* 1/5! */
        c = BP_RN_FMA(c, s, -0x1.5555555555555p-3);  /* -1/3! */
        v = BP_RN_FMA(BP_RN_MUL(x, s), c, x);
    } else {
        double c = 0x1.e542ba4020225p-62;        /* 1/20! */
        c = BP_RN_FMA(c, s, -0x1.6827863b97d97p-53); /* -1/18! */
        c = BP_RN_FMA(c, s, 0x1.ae7f3e733b81fp-45);  /* 1/16! */
        c = BP_RN_FMA(c, s, -0x1.93974a8c07c9dp-37); /* -1/14! */
        c = BP_RN_FMA(c, s, 0x1.1eed8eff8d898p-29);  /* 1/12! */
        c = BP_RN_FMA(c, s, -0x1.27e4fb7789f5cp-22); /* -1/10! */
        c = BP_RN_FMA(c, s, 0x1.a01a01a01a01ap-16);  /* 1/8! */
        c = BP_RN_FMA(c, s, -0x1.6c16c16c16c17p-10); /* -1/6! */
        c = BP_RN_FMA(c, s, 0x1.5555555555555p-5);   /* 1/4! */
        c = BP_RN_FMA(c, s, -0.5);                   /* -1/2! */
        v = BP_RN_FMA(s, c, 1.0);
    }
    /* cos: q 1, 2 negative; sin: q 2, 3 negative. */
    int q4 = (int)(q & 3);
    int neg = odd ? q4 >= 2 : (q4 == 1 || q4 == 2);
    return neg ? -v : v;
}

/* Element j (0: the cosine, 1: the sine) of the pair whose Philox block is
 * w, as fma(std, z, mean) in double. */
BP_RN_FN double bp_normal_from_block(const uint32_t w[4], int j, double mean,
                                     double std)
{
    uint64_t n1 = (((uint64_t)w[0] << 21) | (w[1] >> 11)) + 1;
    uint64_t k2 = ((uint64_t)w[2] << 21) | (w[3] >> 11);
    double w2 = BP_RN_SUB(0.0, BP_RN_MUL(2.0, bp_normal_log(n1)));
    double z = BP_RN_MUL(BP_RN_SQRT(w2), bp_normal_circle(k2, j));
    return BP_RN_FMA(std, z, mean);
}

/* v rounded to float with round-to-odd: the float nearest v toward zero,
 * its last bit set when v was not exact.  Rounding that to bf16 or fp16
 * (nearest even) gives v rounded once to bf16 or fp16, as float carries
 * more than two bits beyond either format wherever they have values. */
BP_RN_FN float bp_normal_f32_odd(double v)
{
    float f = (float)v;
    if ((double)f == v || v != v)
        return f;
    uint32_t u = bp_rn_fbits(f);
    if ((f < 0 ? -(double)f : (double)f) > (v < 0 ? -v : v))
        u -= 1; /* the magnitude one step down: toward zero */
    return bp_rn_float(u | 1u);
}

#endif
