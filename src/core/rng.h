/* Counter-based generator: Philox-4x32-10 (Salmon et al., SC'11), so that a
 * value is a pure function f(seed, stream, index), bit-identical on the CPU
 * and the GPU (the CUDA kernels include the same arithmetic). */
#ifndef BP_RNG_H
#define BP_RNG_H

#include <stdint.h>

/* One Philox-4x32-10 block: 10 rounds on ctr with key. */
void bp_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                      uint32_t out[4]);
/* Uniform float in [low, high) for element index of (seed, stream):
 * 24 random bits scaled exactly, then low + (high - low) * u with each
 * operation rounded separately (no FMA), in float. */
float bp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index,
                     float low, float high);
/* Element index of the normal stream of (seed, stream) as a double:
 * fma(std, z, mean), z the standard normal of rng_normal.h (Box-Muller over
 * the Philox block of index / 2).  Round it to a dtype once; randn is
 * mean 0, std 1. */
double bp_rng_normal(uint64_t seed, uint64_t stream, uint64_t index,
                     double mean, double std);

#endif
