/* Vector kernels of the comparison engine (see compare_vec.h).
 *
 * Written with GCC vector extensions over 8 lanes and compiled with
 * target("avx2"), used when the CPU has it.  There is no baseline build:
 * GCC lowers these 32-byte vectors to SSE2 largely lane by lane, slower
 * than compare.c's scalar loop (measured: 0.4 against 1.1 GB/s).  Not
 * "fma": fused multiply-adds would change the tolerance test's rounding
 * against the scalar path. */
#include "compare_vec.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_CLONE 1
#include <immintrin.h>
#endif

#pragma GCC optimize("fp-contract=off")

typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));

#define BIAS 0x80000000u

/* Raw bits of 8 elements, widened to 32 bits. */
#define LOAD8(dst, p, size, i)                                      \
    do {                                                            \
        if ((size) == 4) {                                          \
            memcpy(&(dst), (const char *)(p) + 4 * (i), 32);        \
        } else {                                                    \
            v8h h_;                                                 \
            memcpy(&h_, (const char *)(p) + 2 * (i), 16);           \
            (dst) = __builtin_convertvector(h_, v8u);               \
        }                                                           \
    } while (0)

#ifdef HAVE_AVX2_CLONE
/* 1 - 2^-50: see the rel filter below. */
#define SHRINK (1.0 - 0x1p-50)

static inline __attribute__((always_inline, target("avx2"))) bool
kernel(bp_vchunk_t *ch, const void *pa, const void *pb, bp_dtype_t dt)
{
    const size_t size = dt == BP_F32 ? 4 : 2;
    const uint32_t sign = dt == BP_F32 ? 0x80000000u : 0x8000u;
    const uint32_t infb = dt == BP_F32 ? 0x7f800000u
                          : dt == BP_BF16 ? 0x7f80u : 0x7c00u;
    const v8u signv = {sign, sign, sign, sign, sign, sign, sign, sign};
    const v8u absv = signv - 1, infv = absv - absv + infb;
    const v8u lim = absv - absv + ch->ulp_lim;
    const v4d tabs = {ch->tol_abs, ch->tol_abs, ch->tol_abs, ch->tol_abs};
    const v4d trel = {ch->tol_rel, ch->tol_rel, ch->tol_rel, ch->tol_rel};
    const v4l dabs = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    const v8u one = absv - absv + 1, two = one + one, four = two + two;
    v8i spec = {0}, nmism = {0}, nzsd = {0}, nbeyond = {0};
    v8i ngt1 = {0}, ngt2 = {0}, ngt4 = {0};
    v8u maxd = {0};
    const v4d shrink = {SHRINK, SHRINK, SHRINK, SHRINK};
    v4d maxab = {0};
    v4d maxrel = {ch->max_rel, ch->max_rel, ch->max_rel, ch->max_rel};

    for (size_t i = 0; i < BP_VEC_CHUNK; i += 8) {
        v8u x, y;
        LOAD8(x, pa, size, i);
        LOAD8(y, pb, size, i);
        v8u ax = x & absv, ay = y & absv;
        spec |= (ax >= infv) | (ay >= infv);
        /* Positions on the line, biased to stay unsigned: +0 and -0 meet. */
        v8u nx = (v8u)((x & signv) != 0), ny = (v8u)((y & signv) != 0);
        v8u kx = BIAS + ((ax ^ nx) - nx), ky = BIAS + ((ay ^ ny) - ny);
        v8u lt = (v8u)(kx < ky);
        v8u d = ((kx - ky) ^ lt) - lt;
        v8i mism = (v8i)(d != 0);
        nmism += mism;
        nzsd += (x != y) & ~mism;
        ngt1 += d > one;
        ngt2 += d > two;
        ngt4 += d > four;
        v8i dgt = d > maxd;
        maxd = (v8u)(((v8i)d & dgt) | ((v8i)maxd & ~dgt));
        memcpy(&ch->d[i], &d, 32);

        /* Values as floats, exact; then doubles. */
        v8f fx, fy;
        if (dt == BP_F32) {
            fx = (v8f)x;
            fy = (v8f)y;
        } else if (dt == BP_BF16) {
            fx = (v8f)(x << 16);
            fy = (v8f)(y << 16);
        } else {
            /* f16: rebias by scaling (exact, subnormals included), then
             * put the sign back. */
            const v8f sc = {0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f,
                            0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f};
            fx = (v8f)((v8u)((v8f)(ax << 13) * sc) | ((x & signv) << 16));
            fy = (v8f)((v8u)((v8f)(ay << 13) * sc) | ((y & signv) << 16));
        }
        v8i within32 = (v8i)(d <= lim);
        v4i tolok[2];
        for (int hlf = 0; hlf < 2; hlf++) {
            v4f hx = hlf ? __builtin_shufflevector(fx, fx, 4, 5, 6, 7)
                         : __builtin_shufflevector(fx, fx, 0, 1, 2, 3);
            v4f hy = hlf ? __builtin_shufflevector(fy, fy, 4, 5, 6, 7)
                         : __builtin_shufflevector(fy, fy, 0, 1, 2, 3);
            v4d da = __builtin_convertvector(hx, v4d);
            v4d db = __builtin_convertvector(hy, v4d);
            v4d ref = (v4d)((v4l)da & dabs);
            v4d ab = (v4d)((v4l)(da - db) & dabs);
            /* The greatest rel needs no division in most lanes: when
             * fl(ab/ref) beats the lane's maximum M, ab/ref > M exactly
             * (rounding is monotonic), so ab > M*ref > fl(fl(M*ref) *
             * (1 - 2^-50)), the two roundings costing under 2^-52 (M*ref
             * stays normal: for these dtypes ab/ref >= 2^-25 and ref >=
             * 2^-149 when not 0).  Lanes failing that test cannot win; the
             * others are divided.  Equal lanes (ab = 0) never pass; M = inf
             * passes nothing; ref = 0 makes t 0 (ab/0 = inf may win). */
            v4d t = maxrel * ref * shrink;
            v4l cand = (v4l)(ab > t);
            if (_mm256_movemask_pd((__m256d)cand)) {
                v4d rel = ab / ref;
                v4l g = (v4l)(rel > maxrel) & cand;
                maxrel = (v4d)(((v4l)rel & g) | ((v4l)maxrel & ~g));
            }
            v4d tol = tabs + trel * ref;
            tolok[hlf] = __builtin_convertvector((v4l)(ab <= tol), v4i);
            v4l g = (v4l)(ab > maxab);
            maxab = (v4d)(((v4l)ab & g) | ((v4l)maxab & ~g));
        }
        within32 |= (v8i)__builtin_shufflevector(tolok[0], tolok[1], 0, 1, 2,
                                                 3, 4, 5, 6, 7);
        nbeyond += mism & ~within32;
    }

    uint32_t anyspec = 0, md = 0;
    size_t mi = 0, zs = 0, by = 0, g1 = 0, g2 = 0, g4 = 0;
    double mab = 0, mrel = ch->max_rel;
    for (int k = 0; k < 8; k++) {
        anyspec |= (uint32_t)spec[k];
        mi += (size_t)-(int64_t)nmism[k];
        zs += (size_t)-(int64_t)nzsd[k];
        by += (size_t)-(int64_t)nbeyond[k];
        g1 += (size_t)-(int64_t)ngt1[k];
        g2 += (size_t)-(int64_t)ngt2[k];
        g4 += (size_t)-(int64_t)ngt4[k];
        if (maxd[k] > md)
            md = maxd[k];
    }
    if (anyspec)
        return false;
    for (int k = 0; k < 4; k++) {
        if (maxab[k] > mab)
            mab = maxab[k];
        if (maxrel[k] > mrel)
            mrel = maxrel[k];
    }
    ch->mism = mi;
    ch->zsd = zs;
    ch->beyond = by;
    ch->max_ab = mab;
    ch->max_rel = mrel;
    ch->max_d = md;
    ch->gt[0] = g1;
    ch->gt[1] = g2;
    ch->gt[2] = g4;
    return true;
}

__attribute__((target("avx2"))) static bool
k_f32_avx2(bp_vchunk_t *c, const void *a, const void *b)
{
    return kernel(c, a, b, BP_F32);
}
__attribute__((target("avx2"))) static bool
k_bf16_avx2(bp_vchunk_t *c, const void *a, const void *b)
{
    return kernel(c, a, b, BP_BF16);
}
__attribute__((target("avx2"))) static bool
k_f16_avx2(bp_vchunk_t *c, const void *a, const void *b)
{
    return kernel(c, a, b, BP_F16);
}
#endif

bp_vkern_fn bp_vkern(bp_dtype_t dt)
{
#ifdef HAVE_AVX2_CLONE
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        return NULL;
    switch (dt) {
    case BP_F32: return k_f32_avx2;
    case BP_BF16: return k_bf16_avx2;
    case BP_F16: return k_f16_avx2;
    default: return NULL;
    }
#else
    (void)dt;
    return NULL;
#endif
}
