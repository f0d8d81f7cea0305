/* Bit formatting used by every report: shortest round-trip decimal, %.20g,
 * hex of the raw bits, %a, and the sign|exponent|mantissa split in binary
 * ("0 01111110 11001100110011001100110" for 0x3f666666). */
#ifndef BP_BITFMT_H
#define BP_BITFMT_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define BP_FMT_MAX 96

/* Shortest decimal that reads back to the same value in dt. */
void bp_fmt_shortest(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* %.20g of the exact value (integers: %lld). */
void bp_fmt_exact(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* "0x3f666666": the raw bits, zero-padded to the dtype's width. */
void bp_fmt_hex(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* %a of the value. */
void bp_fmt_hexfloat(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* "s eeeeeeee mmm..." for floats; the two's complement bits for integers. */
void bp_fmt_fields(bp_dtype_t dt, uint64_t bits, char *out, size_t n);

#endif
