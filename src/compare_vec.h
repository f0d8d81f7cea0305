/* Vector kernels of the comparison engine (private to compare.c).
 *
 * A kernel takes one chunk of BP_VEC_CHUNK finite-looking f32, bf16 or f16
 * elements of both sides and computes, for every element at once, the ulp
 * distance, |a - b| and |a - b| / |a| in double, and the chunk's counts and
 * maxima; compare.c then finds the indices, fills the histogram and keeps
 * the totals.  The kernel refuses (returns false, counting nothing) a chunk
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
    /* per element: distance (0 when equal, +0/-0 included), |a - b|,
     * |a - b| / |a| (0 or NaN when equal) */
    uint32_t d[BP_VEC_CHUNK] __attribute__((aligned(32)));
    double ab[BP_VEC_CHUNK] __attribute__((aligned(32)));
    double rel[BP_VEC_CHUNK] __attribute__((aligned(32)));
    /* in: the policy, as compare.c folds it */
    uint32_t ulp_lim;
    double tol_abs, tol_rel;
    /* out */
    size_t mism, zsd, beyond;
    double max_ab, max_rel;
    uint32_t max_d;
} bp_vchunk_t;

typedef bool (*bp_vkern_fn)(bp_vchunk_t *ch, const void *a, const void *b);

/* The kernel for dt (BP_F32, BP_BF16, BP_F16; NULL otherwise) at a level:
 * 0 portable (SSE2 on x86-64), 1 AVX2.  Level 1 is NULL where the compiler
 * or the CPU lacks AVX2. */
bp_vkern_fn bp_vkern(bp_dtype_t dt, int level);

#endif
