/* f32 -> fp8 encoding (dtype.h states the rules), as bit manipulation
 * that compiles both as C (dtype.c) and as CUDA device code
 * (kernels/bpk_common.cuh): one definition for the host and the GPU. */
#ifndef BP_F8_ENCODE_H
#define BP_F8_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define BP_F8_FN static __host__ __device__ __forceinline__
#else
#define BP_F8_FN static inline
#endif

/* f32 -> an 8-bit float of `man` mantissa bits and exponent bias `bias`,
 * nearest even; `maxfin` is the largest finite code.  The code is
 * computed as one integer exponent|mantissa, so a rounding carry moves
 * into the exponent (and from the subnormals into the normals) by itself;
 * what lands beyond maxfin is an overflow, settled by the caller's rule. */
BP_F8_FN uint32_t bp_f8_round(uint32_t ax, int man, int bias)
{
    uint32_t e = ax >> 23, m = ax & 0x7fffffu;
    int unbiased = (int)e - 127;
    uint32_t code, rem, half;
    if (e != 0 && unbiased >= 1 - bias) { /* a normal of the format */
        int drop = 23 - man;
        code = ((uint32_t)(unbiased + bias) << man) | (m >> drop);
        rem = m & ((1u << drop) - 1u);
        half = 1u << (drop - 1);
    } else {
        /* The value is sig * 2^(e' - 150), the format's subnormal unit
         * 2^(1 - bias - man): drop `shift` bits of sig. */
        uint32_t sig = m | (e ? 0x800000u : 0);
        int ee = e ? (int)e : 1;
        int shift = 151 - bias - man - ee;
        if (shift > 24)
            return 0; /* below half the smallest subnormal */
        code = sig >> shift;
        rem = sig & ((1u << shift) - 1u);
        half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (code & 1u)))
        code++;
    return code;
}

/* x: the f32's bits. */
BP_F8_FN uint8_t bp_f8e4m3_encode(uint32_t x, bool sat)
{
    uint32_t ax = x & 0x7fffffffu;
    uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
    if (ax > 0x7f800000u)
        return sign | 0x7f;
    /* No infinity: infinity and overflow give NaN, or 448 saturating. */
    uint32_t code = ax == 0x7f800000u ? 0x7fu : bp_f8_round(ax, 3, 7);
    if (code > 0x7eu)
        return sign | (sat ? 0x7e : 0x7f);
    return sign | (uint8_t)code;
}

BP_F8_FN uint8_t bp_f8e5m2_encode(uint32_t x, bool sat)
{
    uint32_t ax = x & 0x7fffffffu;
    uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
    if (ax > 0x7f800000u)
        return sign | (sat ? (uint8_t)(0x7eu | ((ax >> 21) & 3u)) : 0x7f);
    uint32_t code = ax == 0x7f800000u ? 0x7cu : bp_f8_round(ax, 2, 15);
    if (code > 0x7bu)
        return sign | (sat ? 0x7b : 0x7c);
    return sign | (uint8_t)code;
}

#endif
