/* Bit formatting used by every report: shortest round-trip decimal, %.20g,
 * the exact decimal expansion,
 * hex of the raw bits, %a, and the sign|exponent|mantissa split in binary
 * ("0 01111110 11001100110011001100110" for 0x3f666666). */
#ifndef BP_BITFMT_H
#define BP_BITFMT_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define BP_FMT_MAX 96
/* Room for any exact decimal expansion (bp_fmt_decimal): an f64 has at
 * most 767 significant digits, plus sign, point and exponent. */
#define BP_FMT_DECIMAL_MAX 800

/* Shortest decimal that reads back to the same value in dt. */
void bp_fmt_shortest(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* %.20g of the exact value (integers: %lld). */
void bp_fmt_exact(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* The exact decimal value, every digit, trailing zeros dropped (%g form:
 * an exponent below 1e-4): 0x3f666666 gives "0.89999997615814208984375",
 * 0x00000001 (f32) 105 significant digits and "e-45".  Exact for every
 * float dtype given n >= BP_FMT_DECIMAL_MAX; integers: %lld. */
void bp_fmt_decimal(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* "0x3f666666": the raw bits, zero-padded to the dtype's width. */
void bp_fmt_hex(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* %a of the value. */
void bp_fmt_hexfloat(bp_dtype_t dt, uint64_t bits, char *out, size_t n);
/* "s eeeeeeee mmm..." for floats; the two's complement bits for integers. */
void bp_fmt_fields(bp_dtype_t dt, uint64_t bits, char *out, size_t n);

#endif
