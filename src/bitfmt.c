/* PLACEHOLDER: replaced by the numeric-core work. */
#include "bitfmt.h"
#include <stdio.h>
void bp_fmt_shortest(bp_dtype_t dt, uint64_t bits, char *out, size_t n) { snprintf(out, n, "%.9g", bp_dtype_bits_to_double(dt, bits)); }
void bp_fmt_exact(bp_dtype_t dt, uint64_t bits, char *out, size_t n) { snprintf(out, n, "%.20g", bp_dtype_bits_to_double(dt, bits)); }
void bp_fmt_hex(bp_dtype_t dt, uint64_t bits, char *out, size_t n) { snprintf(out, n, "0x%0*llx", (int)bp_dtype_info(dt)->size * 2, (unsigned long long)bits); }
void bp_fmt_hexfloat(bp_dtype_t dt, uint64_t bits, char *out, size_t n) { snprintf(out, n, "%a", bp_dtype_bits_to_double(dt, bits)); }
void bp_fmt_fields(bp_dtype_t dt, uint64_t bits, char *out, size_t n) { bp_fmt_hex(dt, bits, out, n); }
