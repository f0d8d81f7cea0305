/* Vector kernels of the comparison engine (private to compare.c).
 *
 * A kernel takes one chunk of BP_VEC_CHUNK f32, bf16 or f16 elements of
 * both sides and computes, for every element at once, the ulp distance,
 * |a - b| and |a - b| / |a| in double, and the chunk's counts and maxima;
 * compare.c then fills the histogram from the distances, keeps the totals
 * and, in the rare chunk whose maximum beats the running one, finds its
 * index by recomputing the chunk.  The kernel refuses (returns false, counting nothing) a chunk
 * in which either side holds an inf or a NaN: the scalar path in compare.c
 * owns every rule about those.  Results are bit-identical to the scalar
 * path: the same IEEE operations in the same order, no contraction. */
#ifndef BP_COMPARE_VEC_H
#define BP_COMPARE_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define BP_VEC_CHUNK 1024

typedef struct {
    /* per element: the distance (0 when equal, +0/-0 included) */
    uint32_t d[BP_VEC_CHUNK] __attribute__((aligned(32)));
    /* in: the policy, as compare.c folds it */
    uint32_t ulp_lim;
    double tol_abs, tol_rel;
    /* out; max_rel is also an input: the running maximum, which lets the
     * kernel skip most divisions (it returns the larger of it and the
     * chunk's own).  mism and beyond count the lanes at a distance of 1
     * ulp or more; zsd the lanes at distance 0 whose bits differ (+0
     * against -0: the kernel refuses chunks with inf or NaN), which
     * compare.c counts as mismatches of their own class. */
    size_t mism, zsd, beyond;
    double max_ab, max_rel;
    uint32_t max_d;
    /* elements more than 1, 2 and 4 ulp apart: with max_d <= 8 they give
     * histogram bins 1-4 without a pass over d[] */
    size_t gt[3];
} bp_vchunk_t;

typedef bool (*bp_vkern_fn)(bp_vchunk_t *ch, const void *a, const void *b);

/* The AVX2 kernel for dt (BP_F32, BP_BF16, BP_F16), or NULL for another
 * dtype or where the compiler or the CPU lacks AVX2. */
bp_vkern_fn bp_vkern(bp_dtype_t dt);

#endif
