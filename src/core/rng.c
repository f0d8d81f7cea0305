/* Counter-based generator (see rng.h).
 *
 * Philox-4x32-10 exactly as in Random123 (Salmon, Moraes, Dror and Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC'11): each round
 * multiplies words 0 and 2 by 0xD2511F53 and 0xCD9E8D57 (64-bit products
 * split into hi and lo halves) and mixes them with words 1 and 3 and the
 * key; the key is bumped by the Weyl constants 0x9E3779B9 and 0xBB67AE85
 * before rounds 2..10.  Random123's published known-answer vectors are the
 * tests (tests/core/check_rng.c).
 *
 * bp_rng_uniform is the one mapping from (seed, stream, index) to a float
 * that the CPU and the GPU share:
 *   counter = (index lo, index hi, stream lo, stream hi), key = (seed lo,
 *   seed hi); u = (out[0] >> 8) * 2^-24, exact, in [0, 1);
 *   value = low + (high - low) * u, each of the three operations rounded to
 *   float on its own.  The volatile temporaries keep a compiler from fusing
 *   the multiply and the add into an FMA, whatever -ffp-contract says. */
#include "rng.h"
#include "rng_normal.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

void bp_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                      uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += PHILOX_W0;
            k[1] += PHILOX_W1;
        }
        philox_round(c, k);
    }
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}

float bp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index, float low,
                     float high)
{
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32),
                             (uint32_t)stream, (uint32_t)(stream >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t r[4];
    bp_philox4x32_10(ctr, key, r);
    /* 24 bits fit a float's significand: the scaling is exact. */
    float u = (float)(r[0] >> 8) * 0x1p-24f;
    volatile float span = high - low;
    volatile float scaled = span * u;
    return low + scaled;
}

double bp_rng_normal(uint64_t seed, uint64_t stream, uint64_t index,
                     double mean, double std)
{
    const uint64_t pair = index >> 1;
    const uint32_t ctr[4] = {(uint32_t)pair, (uint32_t)(pair >> 32),
                             (uint32_t)stream, (uint32_t)(stream >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    bp_philox4x32_10(ctr, key, w);
    return bp_normal_from_block(w, (int)(index & 1), mean, std);
}
