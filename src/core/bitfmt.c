/* Bit formatting for reports (see bitfmt.h).
 *
 * Contract: every function writes a NUL-terminated string of at most n bytes
 * (truncated like snprintf; nothing is written when n is 0), ignores bits
 * above the dtype's width, and writes "?" for an unknown dtype.  Floats are
 * shown through the double that holds them exactly.  NaN prints as "nan"
 * whatever its sign and payload (the hex and field forms show those),
 * infinities as "inf" and "-inf".  Integers print in decimal in the three
 * decimal-ish forms (shortest, exact, hexfloat), and as their two's
 * complement bits in the field form.
 *
 * "Shortest" means the fewest significant digits d (1..17) for which %.{d}g
 * reads back to the same bits: f64 through strtod, f32 through strtof, and
 * bf16/f16/fp8 through strtof followed by the round-to-nearest-even
 * conversion of dtype.c (fp8: non-saturating), which is how a value typed by a user becomes that dtype.  The
 * printf rounding of the d-digit candidate is the nearest one, which is
 * enough for round-tripping though not always the shortest possible string
 * at a binade boundary.  Below 10^16 the result is positional ("100", not
 * "1e+02"). */
#include "bitfmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool dtype_ok(bp_dtype_t dt)
{
    return bp_dtype_info(dt) != NULL;
}

static unsigned width_of(bp_dtype_t dt)
{
    return (unsigned)bp_dtype_info(dt)->size * 8u;
}

static uint64_t masked(bp_dtype_t dt, uint64_t bits)
{
    unsigned w = width_of(dt);
    return w >= 64 ? bits : bits & ((1ull << w) - 1);
}

/* An integer element in decimal: sign-extended when its dtype is signed. */
static void put_int(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    unsigned w = width_of(dt);
    if (n == 0)
        return;
    if (!bp_dtype_info(dt)->is_signed) {
        snprintf(out, n, "%" PRIu64, bits);
        return;
    }
    uint64_t top = 1ull << (w - 1);
    snprintf(out, n, "%" PRId64, (int64_t)((bits ^ top) - top));
}

static void put(char *out, size_t n, const char *s)
{
    if (n > 0)
        snprintf(out, n, "%s", s);
}

/* Writes "nan", "inf" or "-inf" and returns true when the value is one. */
static bool put_special(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (bp_dtype_bits_isnan(dt, bits)) {
        put(out, n, "nan");
        return true;
    }
    if (bp_dtype_bits_isinf(dt, bits)) {
        put(out, n, bits >> (width_of(dt) - 1) ? "-inf" : "inf");
        return true;
    }
    return false;
}

/* Integers, unknown dtypes and float specials: true when handled. */
static bool put_common(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (!dtype_ok(dt)) {
        put(out, n, "?");
        return true;
    }
    bits = masked(dt, bits);
    if (!bp_dtype_info(dt)->is_float) {
        put_int(dt, bits, out, n);
        return true;
    }
    return put_special(dt, bits, out, n);
}

static bool reads_back(bp_dtype_t dt, uint64_t bits, const char *s)
{
    switch (dt) {
    case BP_F64: return bp_f64_bits(strtod(s, NULL)) == bits;
    case BP_F32: return bp_f32_bits(strtof(s, NULL)) == bits;
    case BP_BF16: return bp_f32_to_bf16(strtof(s, NULL)) == bits;
    case BP_F16: return bp_f32_to_f16(strtof(s, NULL)) == bits;
    case BP_F8_E4M3: return bp_f32_to_f8e4m3(strtof(s, NULL), false) == bits;
    case BP_F8_E5M2: return bp_f32_to_f8e5m2(strtof(s, NULL), false) == bits;
    default: return false;
    }
}

/* %g writes 100 as "1e+02" when one digit is enough; below 10^16 the
 * positional form of the same decimal reads better ("100"), as in Python's
 * repr. */
static void unplain(char *s, size_t size)
{
    char *e = strchr(s, 'e');
    if (!e)
        return;
    int x = atoi(e + 1);
    if (x < 0 || x >= 16)
        return;
    char digits[32];
    size_t k = 0;
    for (const char *p = s; p < e; p++)
        if (*p >= '0' && *p <= '9')
            digits[k++] = *p;
    while (k < (size_t)x + 1)
        digits[k++] = '0';
    digits[k] = '\0';
    snprintf(s, size, "%s%s", s[0] == '-' ? "-" : "", digits);
}

void bp_fmt_shortest(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (put_common(dt, bits, out, n))
        return;
    bits = masked(dt, bits);
    double v = bp_dtype_bits_to_double(dt, bits);
    char buf[BP_FMT_MAX];
    for (int d = 1; d <= 17; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, v);
        if (reads_back(dt, bits, buf))
            break;
    }
    /* %.17g always reads back (it does for every double), so buf holds an
     * answer when the loop ends. */
    unplain(buf, sizeof buf);
    put(out, n, buf);
}

void bp_fmt_exact(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (put_common(dt, bits, out, n))
        return;
    if (n > 0)
        snprintf(out, n, "%.20g", bp_dtype_bits_to_double(dt, masked(dt, bits)));
}

void bp_fmt_decimal(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (put_common(dt, bits, out, n))
        return;
    /* A double is m * 2^e with m < 2^53: its exact expansion ends after at
     * most 1074 fractional digits and has at most 767 significant ones, so
     * %.767g prints it whole (glibc converts exactly at any precision) and
     * %g drops the trailing zeros. */
    char buf[BP_FMT_DECIMAL_MAX];
    snprintf(buf, sizeof buf, "%.767g", bp_dtype_bits_to_double(dt, masked(dt, bits)));
    put(out, n, buf);
}

void bp_fmt_hex(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (!dtype_ok(dt)) {
        put(out, n, "?");
        return;
    }
    if (n > 0)
        snprintf(out, n, "0x%0*" PRIx64, (int)(width_of(dt) / 4),
                 masked(dt, bits));
}

void bp_fmt_hexfloat(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (put_common(dt, bits, out, n))
        return;
    if (n > 0)
        snprintf(out, n, "%a", bp_dtype_bits_to_double(dt, masked(dt, bits)));
}

void bp_fmt_fields(bp_dtype_t dt, uint64_t bits, char *out, size_t n)
{
    if (!dtype_ok(dt)) {
        put(out, n, "?");
        return;
    }
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    unsigned w = width_of(dt);
    /* Field boundaries counted from the most significant bit: a space
     * after the sign and after the exponent; none for integers. */
    unsigned cut1 = in->is_float ? 1u : w, cut2 = in->is_float
        ? 1u + (unsigned)in->exp_bits : w;
    char buf[BP_FMT_MAX];
    size_t k = 0;
    bits = masked(dt, bits);
    for (unsigned i = 0; i < w; i++) {
        if (i == cut1 || i == cut2)
            buf[k++] = ' ';
        buf[k++] = (char)('0' + ((bits >> (w - 1 - i)) & 1u));
    }
    buf[k] = '\0';
    put(out, n, buf);
}
