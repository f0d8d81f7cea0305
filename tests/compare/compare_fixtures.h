/* Shared by the comparison engine's tests (check_compare.c,
 * check_compare_kernels.c): tensor builders, the engine's block and
 * kernel names, the tests' own generator. */
#ifndef BP_COMPARE_FIXTURES_H
#define BP_COMPARE_FIXTURES_H

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "policy.h"

/* Every inner loop the engine has; the tests run each. */
static const char *const kernels[] __attribute__((unused)) = {"scalar", "avx2"};
#define NKERNELS 2

/* splitmix64: the tests' own generator. */
static uint64_t sm_state __attribute__((unused));
static inline uint64_t rnd(void)
{
    uint64_t z = (sm_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The engine's memcmp block, 64 KiB, in elements of each size. */
#define BLK_F32 16384
#define BLK_B16 32768

static inline bp_buf_t mk(bp_dtype_t dt, size_t n)
{
    bp_buf_t b;
    bp_error_t e;
    int64_t shape[1] = {(int64_t)n};
    ck_assert_int_eq(bp_buf_alloc(&b, dt, 1, shape, &e), BP_OK);
    return b;
}

static inline void put(bp_buf_t *b, size_t i, uint64_t bits)
{
    bp_dtype_store_bits(b->dtype, b->data, i, bits);
}

static inline void fill(bp_buf_t *b, uint64_t bits)
{
    for (size_t i = 0; i < b->numel; i++)
        put(b, i, bits);
}

static inline bp_cmp_t cmp_pol(const bp_buf_t *a, const bp_buf_t *b,
                        const char *policy, const bp_cmp_opts_t *o)
{
    bp_cmp_t c;
    bp_error_t e;
    bp_policy_t p;
    ck_assert_int_eq(bp_policy_parse(policy, &p, &e), BP_OK);
    bp_status st = bp_compare(a, b, &p, o, &c, &e);
    ck_assert_msg(st == BP_OK, "bp_compare: %s", e.msg);
    return c;
}

static inline uint64_t hist_sum(const bp_cmp_t *c)
{
    uint64_t s = 0;
    for (int k = 0; k < BP_HIST_BINS; k++)
        s += c->hist[k];
    return s;
}

/* The tests of check_compare_kernels.c. */
void bp_test_add_kernel_tests(TCase *tc);

#endif
