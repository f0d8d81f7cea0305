/* The ledger hash, fmix64-sum/1 (docs/ledger-format.md), as one inline
 * function: bitprobe's reader (ledger_hash.c) and the recorder's native
 * helper (python/bitprobe_torch_native.c, loaded by bitprobe_torch.py)
 * compile this one definition.
 *
 * The bytes, zero-padded to a multiple of 4, read as little-endian 32-bit
 * words w_i: S = sum of fmix64(i * 2^32 + (int64)(int32)w_i) mod 2^64,
 * H = fmix64(S + nbytes).  A sum: any order gives the same bits, so the
 * loop keeps four sums for the multiplier's latency. */
#ifndef BP_LEDGER_FMIX_H
#define BP_LEDGER_FMIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t bp_fmix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* fmix64 of word i holding w (the word sign-extended, as the format says). */
static inline uint64_t bp_ledger_term(uint64_t i, uint32_t w)
{
    return bp_fmix64((i << 32) + (uint64_t)(int64_t)(int32_t)w);
}

/* Word i of p (bytes 4i.. of nbytes; past the end: zeros), little-endian. */
static inline uint32_t bp_ledger_word(const unsigned char *p, size_t nbytes, size_t i)
{
    uint32_t w = 0;
    if (4 * i + 4 <= nbytes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&w, p + 4 * i, 4);
        return w;
#endif
    }
    for (size_t k = 0; k < 4 && 4 * i + k < nbytes; k++)
        w |= (uint32_t)p[4 * i + k] << (8 * k);
    return w;
}

/* H of nbytes bytes at data. */
static inline uint64_t bp_ledger_hash_inline(const void *data, size_t nbytes)
{
    const unsigned char *p = data;
    size_t nw = (nbytes + 3) / 4, i = 0;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; i + 4 <= nbytes / 4; i += 4) {
        s0 += bp_ledger_term(i, bp_ledger_word(p, nbytes, i));
        s1 += bp_ledger_term(i + 1, bp_ledger_word(p, nbytes, i + 1));
        s2 += bp_ledger_term(i + 2, bp_ledger_word(p, nbytes, i + 2));
        s3 += bp_ledger_term(i + 3, bp_ledger_word(p, nbytes, i + 3));
    }
    for (; i < nw; i++)
        s0 += bp_ledger_term(i, bp_ledger_word(p, nbytes, i));
    return bp_fmix64(s0 + s1 + s2 + s3 + (uint64_t)nbytes);
}

#endif
