/* What check_dtype.c shares with check_dtype_fp8.c: the seed, the random
 * generator, bit casts written apart from dtype.c, and the f32 input sets. */
#ifndef BP_CHECK_DTYPE_H
#define BP_CHECK_DTYPE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ck_assert records a mark point on every pass, a write to a pipe in fork
 * mode: too slow for loops over millions of values. */
#define EXPECT(cond, ...)                  \
    do {                                   \
        if (!(cond))                       \
            ck_abort_msg(__VA_ARGS__);     \
    } while (0)

extern uint64_t seed;
uint64_t rnd(uint64_t *s);
float f32(uint32_t u);
uint32_t u32(float f);

typedef struct {
    uint32_t *v;
    size_t n, cap;
} vec_t;

void push(vec_t *a, uint32_t u);
/* [lo, hi) and the same with the sign bit flipped. */
void push_range(vec_t *a, uint32_t lo, uint32_t hi);
/* Every sign and exponent, every rounding cut position with the dropped
 * part at 0, 1, half-1, half, half+1, all ones (see check_dtype.c). */
void dense_set(vec_t *a);

/* fp8 and storage-integer test cases (check_dtype_fp8.c). */
void dtype_fp8_add(Suite *s, bool slow);

#endif
