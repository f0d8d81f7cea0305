/* Bits of doubles and drawn inputs for the tests of the SLEEF ports
 * (check_sleef_*.c). */
#ifndef BP_TEST_BITS_H
#define BP_TEST_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint64_t d2b(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline double b2d(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* The i-th output of splitmix64 (as tests/refs/sleef_erf_ref.py). */
static inline uint64_t splitmix64(uint64_t i)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
