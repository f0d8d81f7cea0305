/* PLACEHOLDER: replaced by the CPU-backend work. */
#include "rng.h"
void bp_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) { (void)key; for (int i = 0; i < 4; i++) out[i] = ctr[i]; }
float bp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index, float low, float high) { (void)seed; (void)stream; (void)index; (void)high; return low; }
