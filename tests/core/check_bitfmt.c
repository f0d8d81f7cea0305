/* Tests of bitfmt.c.  Expected strings were worked out by hand from the bit
 * patterns (fields split by hand, %a digits from the mantissa, decimal
 * expansions of the exact binary values, and for the exact decimal form an
 * independent bignum expansion of m * 2^e); the round-trip tests read every
 * shortest string back with strtof/strtod, and check that one digit fewer
 * would not have read back.  Random inputs come from a seed printed at
 * start (BP_SEED=n repeats it). */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bitfmt.h"

static uint64_t seed;

#define EXPECT(cond, ...)              \
    do {                               \
        if (!(cond))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

static uint64_t rnd(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef void (*fmt_fn)(bp_dtype_t, uint64_t, char *, size_t);

static const struct {
    bp_dtype_t dt;
    uint64_t bits;
    const char *shortest, *exact, *hex, *hexfloat, *fields;
} cases[] = {
    /* 0.9f, what the CPU gives for 9/10. */
    {BP_F32, 0x3f666666, "0.9", "0.89999997615814208984", "0x3f666666",
     "0x1.ccccccp-1", "0 01111110 11001100110011001100110"},
    /* 9 * (1/10) in f32: one ulp above. */
    {BP_F32, 0x3f666667, "0.90000004", "0.90000003576278686523", "0x3f666667",
     "0x1.cccccep-1", "0 01111110 11001100110011001100111"},
    /* 10^0.9 on the CPU (exact value 7.94328212738037109375) and on CUDA. */
    {BP_F32, 0x40fe2f5e, "7.943282", "7.9432821273803710938", "0x40fe2f5e",
     "0x1.fc5ebcp+2", "0 10000001 11111100010111101011110"},
    {BP_F32, 0x40fe2f60, "7.943283", "7.9432830810546875", "0x40fe2f60",
     "0x1.fc5ecp+2", "0 10000001 11111100010111101100000"},
    {BP_F32, 0x00000001, "1e-45", "1.4012984643248170709e-45", "0x00000001",
     "0x1p-149", "0 00000000 00000000000000000000001"},
    {BP_F32, 0x7f7fffff, "3.4028235e+38", "3.4028234663852885981e+38", "0x7f7fffff",
     "0x1.fffffep+127", "0 11111110 11111111111111111111111"},
    {BP_F32, 0x80000000, "-0", "-0", "0x80000000", "-0x0p+0",
     "1 00000000 00000000000000000000000"},
    {BP_F32, 0xff800000, "-inf", "-inf", "0xff800000", "-inf",
     "1 11111111 00000000000000000000000"},
    {BP_F32, 0xffc00001, "nan", "nan", "0xffc00001", "nan",
     "1 11111111 10000000000000000000001"},
    {BP_BF16, 0x3f80, "1", "1", "0x3f80", "0x1p+0", "0 01111111 0000000"},
    {BP_BF16, 0x40fe, "7.94", "7.9375", "0x40fe", "0x1.fcp+2", "0 10000001 1111110"},
    {BP_BF16, 0x3f66, "0.9", "0.8984375", "0x3f66", "0x1.ccp-1", "0 01111110 1100110"},
    {BP_BF16, 0xc2c8, "-100", "-100", "0xc2c8", "-0x1.9p+6", "1 10000101 1001000"},
    {BP_BF16, 0x0001, "9e-41", "9.183549615799121156e-41", "0x0001", "0x1p-133",
     "0 00000000 0000001"},
    {BP_BF16, 0x7f7f, "3.39e+38", "3.3895313892515354759e+38", "0x7f7f",
     "0x1.fep+127", "0 11111110 1111111"},
    {BP_BF16, 0xffff, "nan", "nan", "0xffff", "nan", "1 11111111 1111111"},
    {BP_BF16, 0x7f80, "inf", "inf", "0x7f80", "inf", "0 11111111 0000000"},
    {BP_F16, 0x3c00, "1", "1", "0x3c00", "0x1p+0", "0 01111 0000000000"},
    {BP_F16, 0x7bff, "65500", "65504", "0x7bff", "0x1.ffcp+15", "0 11110 1111111111"},
    {BP_F16, 0x0001, "6e-08", "5.9604644775390625e-08", "0x0001", "0x1p-24",
     "0 00000 0000000001"},
    {BP_F16, 0x3555, "0.3333", "0.333251953125", "0x3555", "0x1.554p-2",
     "0 01101 0101010101"},
    {BP_F16, 0x8000, "-0", "-0", "0x8000", "-0x0p+0", "1 00000 0000000000"},
    {BP_F16, 0x7e00, "nan", "nan", "0x7e00", "nan", "0 11111 1000000000"},
    {BP_F16, 0xfc00, "-inf", "-inf", "0xfc00", "-inf", "1 11111 0000000000"},
    {BP_F64, 0x3fb999999999999aull, "0.1", "0.10000000000000000555",
     "0x3fb999999999999a", "0x1.999999999999ap-4",
     "0 01111111011 1001100110011001100110011001100110011001100110011010"},
    {BP_F64, 0x7fefffffffffffffull, "1.7976931348623157e+308",
     "1.7976931348623157081e+308", "0x7fefffffffffffff", "0x1.fffffffffffffp+1023",
     "0 11111111110 1111111111111111111111111111111111111111111111111111"},
    {BP_F64, 0x0000000000000001ull, "5e-324", "4.9406564584124654418e-324",
     "0x0000000000000001", "0x0.0000000000001p-1022",
     "0 00000000000 0000000000000000000000000000000000000000000000000001"},
    {BP_I32, 0xffffffffu, "-1", "-1", "0xffffffff", "-1",
     "11111111111111111111111111111111"},
    {BP_I32, 0x80000000u, "-2147483648", "-2147483648", "0x80000000", "-2147483648",
     "10000000000000000000000000000000"},
    {BP_I32, 0xdeadbeef00000005ull, "5", "5", "0x00000005", "5",
     "00000000000000000000000000000101"},
    {BP_I64, 42, "42", "42", "0x000000000000002a", "42",
     "0000000000000000000000000000000000000000000000000000000000101010"},
    {BP_I64, 0x8000000000000000ull, "-9223372036854775808", "-9223372036854775808",
     "0x8000000000000000", "-9223372036854775808",
     "1000000000000000000000000000000000000000000000000000000000000000"},
    /* fp8: 448 = 1.75 * 2^8, e4m3fn's largest (two digits, 450, read back
     * as 448), 2^-9 (its smallest), its NaN; 57344 = 1.75 * 2^15, e5m2's
     * largest (one digit, 6e4, reads back), e5m2 infinity and -0. */
    {BP_F8_E4M3, 0x7e, "450", "448", "0x7e", "0x1.cp+8", "0 1111 110"},
    {BP_F8_E4M3, 0x01, "0.002", "0.001953125", "0x01", "0x1p-9", "0 0000 001"},
    {BP_F8_E4M3, 0xff, "nan", "nan", "0xff", "nan", "1 1111 111"},
    {BP_F8_E4M3, 0xb9, "-1.1", "-1.125", "0xb9", "-0x1.2p+0", "1 0111 001"},
    {BP_F8_E5M2, 0x7b, "60000", "57344", "0x7b", "0x1.cp+15", "0 11110 11"},
    {BP_F8_E5M2, 0x7c, "inf", "inf", "0x7c", "inf", "0 11111 00"},
    {BP_F8_E5M2, 0x80, "-0", "-0", "0x80", "-0x0p+0", "1 00000 00"},
    {BP_F8_E5M2, 0x3d, "1.2", "1.25", "0x3d", "0x1.4p+0", "0 01111 01"},
    /* Integers: unsigned ones never negative, signed ones sign-extended. */
    {BP_U8, 0xff, "255", "255", "0xff", "255", "11111111"},
    {BP_I8, 0xff, "-1", "-1", "0xff", "-1", "11111111"},
    {BP_BOOL, 0x01, "1", "1", "0x01", "1", "00000001"},
    {BP_I16, 0x8000, "-32768", "-32768", "0x8000", "-32768", "1000000000000000"},
    {BP_U16, 0x8000, "32768", "32768", "0x8000", "32768", "1000000000000000"},
    {BP_U32, 0xdeadbeefu, "3735928559", "3735928559", "0xdeadbeef", "3735928559",
     "11011110101011011011111011101111"},
    {BP_U64, UINT64_MAX, "18446744073709551615", "18446744073709551615",
     "0xffffffffffffffff", "18446744073709551615",
     "1111111111111111111111111111111111111111111111111111111111111111"},
};

static void expect_fmt(fmt_fn f, const char *what, int i, const char *want)
{
    char out[BP_FMT_MAX];
    memset(out, 'x', sizeof out);
    f(cases[i].dt, cases[i].bits, out, sizeof out);
    ck_assert_msg(strcmp(out, want) == 0, "%s of %s 0x%" PRIx64 ": '%s', want '%s'",
                  what, bp_dtype_name(cases[i].dt), cases[i].bits, out, want);
}

START_TEST(t_cases)
{
    expect_fmt(bp_fmt_shortest, "shortest", _i, cases[_i].shortest);
    expect_fmt(bp_fmt_exact, "exact", _i, cases[_i].exact);
    expect_fmt(bp_fmt_hex, "hex", _i, cases[_i].hex);
    expect_fmt(bp_fmt_hexfloat, "hexfloat", _i, cases[_i].hexfloat);
    expect_fmt(bp_fmt_fields, "fields", _i, cases[_i].fields);
}
END_TEST

START_TEST(t_truncation)
{
    char out[8];
    memcpy(out, "zzzzzzz", 8);
    bp_fmt_fields(BP_BF16, 0x3f80, out, 4);
    ck_assert_str_eq(out, "0 0");
    bp_fmt_hex(BP_F32, 0x3f666666, out, 0); /* n == 0: nothing written */
    ck_assert_str_eq(out, "0 0");
    bp_fmt_exact(BP_F32, 0x3f666666, out, sizeof out);
    ck_assert_str_eq(out, "0.89999");
    bp_fmt_shortest(BP_F64, 0x7fefffffffffffffull, out, 1);
    ck_assert_str_eq(out, "");
    fmt_fn all[] = {bp_fmt_shortest, bp_fmt_exact, bp_fmt_hex, bp_fmt_hexfloat,
                    bp_fmt_fields};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        all[i](BP_NDTYPES, 0, out, sizeof out);
        ck_assert_str_eq(out, "?");
        all[i]((bp_dtype_t)-1, 0, out, sizeof out);
        ck_assert_str_eq(out, "?");
    }
    /* Bits above the width are ignored. */
    bp_fmt_fields(BP_F16, 0xffff3c00u, out, sizeof out);
    ck_assert_str_eq(out, "0 01111");
    char big[BP_FMT_MAX];
    bp_fmt_shortest(BP_BF16, 0xabcd0000 | 0x3f80, big, sizeof big);
    ck_assert_str_eq(big, "1");
    /* Positional below 10^16, one digit enough: not "1e+02", "1e+10". */
    bp_fmt_shortest(BP_F32, 0x501502f9, big, sizeof big); /* 1e10f */
    ck_assert_str_eq(big, "10000000000");
    bp_fmt_shortest(BP_F64, 0x4341c37937e08000ull, big, sizeof big); /* 1e16 */
    ck_assert_str_eq(big, "1e+16");
    bp_fmt_shortest(BP_F64, 0x4341c37937e07fffull, big, sizeof big);
    ck_assert_str_eq(big, "9999999999999998");
    bp_fmt_shortest(BP_F16, 0xe3d0, big, sizeof big); /* -1000 */
    ck_assert_str_eq(big, "-1000");
    bp_fmt_shortest(BP_F64, 0x3ee4f8b588e368f1ull, big, sizeof big); /* 1e-5 */
    ck_assert_str_eq(big, "1e-05");
}
END_TEST

/* Significant digits of a decimal: leading and trailing zeros of the
 * digit string before any exponent do not count ("0.0025" 2, "100" 1). */
static int sig_digits(const char *s)
{
    char d[BP_FMT_MAX];
    int n = 0, lo = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            d[n++] = *s;
    while (lo < n && d[lo] == '0')
        lo++;
    while (n > lo && d[n - 1] == '0')
        n--;
    return n - lo;
}

/* For every non-NaN pattern of a 16-bit format: the shortest string reads
 * back through strtof and the round-to-nearest-even conversion, and its
 * digit count d is minimal: %.{d-1}g does not read back. */
static void roundtrip16(bp_dtype_t dt, uint16_t (*narrow)(float))
{
    char out[BP_FMT_MAX], less[400];
    for (uint32_t h = 0; h <= 0xffff; h++) {
        if (bp_dtype_bits_isnan(dt, h) || bp_dtype_bits_isinf(dt, h))
            continue;
        bp_fmt_shortest(dt, h, out, sizeof out);
        uint16_t back = narrow(strtof(out, NULL));
        EXPECT(back == h, "%s 0x%04x: '%s' reads back as 0x%04x", bp_dtype_name(dt), h,
               out, back);
        int digits = sig_digits(out);
        if (digits > 1) {
            snprintf(less, sizeof less, "%.*g", digits - 1,
                     bp_dtype_bits_to_double(dt, h));
            EXPECT(narrow(strtof(less, NULL)) != h,
                   "%s 0x%04x: '%s' has %d digits but '%s' reads back too",
                   bp_dtype_name(dt), h, out, digits, less);
        }
    }
}

START_TEST(t_roundtrip_bf16) { roundtrip16(BP_BF16, bp_f32_to_bf16); }
END_TEST
START_TEST(t_roundtrip_f16) { roundtrip16(BP_F16, bp_f32_to_f16); }
END_TEST

/* The same for every non-NaN code of an fp8 format. */
static void roundtrip8(bp_dtype_t dt, uint8_t (*narrow)(float, bool))
{
    char out[BP_FMT_MAX], less[400];
    for (uint32_t h = 0; h <= 0xff; h++) {
        if (bp_dtype_bits_isnan(dt, h) || bp_dtype_bits_isinf(dt, h))
            continue;
        bp_fmt_shortest(dt, h, out, sizeof out);
        uint8_t back = narrow(strtof(out, NULL), false);
        ck_assert_msg(back == h, "%s 0x%02x: '%s' reads back as 0x%02x",
                      bp_dtype_name(dt), h, out, back);
        int digits = sig_digits(out);
        if (digits > 1) {
            snprintf(less, sizeof less, "%.*g", digits - 1,
                     bp_dtype_bits_to_double(dt, h));
            ck_assert_msg(narrow(strtof(less, NULL), false) != h,
                          "%s 0x%02x: '%s' has %d digits but '%s' reads back too",
                          bp_dtype_name(dt), h, out, digits, less);
        }
    }
}

START_TEST(t_roundtrip_fp8)
{
    roundtrip8(BP_F8_E4M3, bp_f32_to_f8e4m3);
    roundtrip8(BP_F8_E5M2, bp_f32_to_f8e5m2);
}
END_TEST

START_TEST(t_roundtrip_wide)
{
    uint64_t s = seed ^ 0xb17f0001u;
    char out[BP_FMT_MAX];
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)rnd(&s);
        if (bp_dtype_bits_isnan(BP_F32, u) || bp_dtype_bits_isinf(BP_F32, u))
            continue;
        bp_fmt_shortest(BP_F32, u, out, sizeof out);
        float back = strtof(out, NULL);
        uint32_t ub;
        memcpy(&ub, &back, 4);
        EXPECT(ub == u, "f32 0x%08x: '%s' reads back as 0x%08x (seed %" PRIu64 ")", u,
               out, ub, seed);
        EXPECT(strlen(out) <= 17, "f32 0x%08x: '%s' is too long", u, out);
    }
    for (int i = 0; i < 100000; i++) {
        uint64_t u = rnd(&s);
        if (bp_dtype_bits_isnan(BP_F64, u) || bp_dtype_bits_isinf(BP_F64, u))
            continue;
        bp_fmt_shortest(BP_F64, u, out, sizeof out);
        double back = strtod(out, NULL);
        uint64_t ub;
        memcpy(&ub, &back, 8);
        EXPECT(ub == u, "f64 0x%016" PRIx64 ": '%s' reads back as 0x%016" PRIx64
               " (seed %" PRIu64 ")", u, out, ub, seed);
    }
}
END_TEST

/* The field form, read back by hand, gives the bits again. */
START_TEST(t_fields_parse)
{
    uint64_t s = seed ^ 0xb17f0002u;
    char out[BP_FMT_MAX];
    for (int d = 0; d < BP_NDTYPES; d++) {
        const bp_dtype_info_t *in = bp_dtype_info((bp_dtype_t)d);
        unsigned w = (unsigned)in->size * 8;
        for (int i = 0; i < 20000; i++) {
            uint64_t u = rnd(&s), v = 0;
            if (w < 64)
                u &= (1ull << w) - 1;
            bp_fmt_fields((bp_dtype_t)d, u, out, sizeof out);
            unsigned nbits = 0, spaces = 0;
            for (const char *p = out; *p; p++) {
                if (*p == ' ') {
                    spaces++;
                    EXPECT(nbits == (spaces == 1 ? 1u : 1u + (unsigned)in->exp_bits),
                           "%s: space after %u bits in '%s'", in->name, nbits, out);
                    continue;
                }
                EXPECT(*p == '0' || *p == '1', "%s: '%s'", in->name, out);
                v = v << 1 | (uint64_t)(*p - '0');
                nbits++;
            }
            EXPECT(nbits == w && v == u && spaces == (in->is_float ? 2u : 0u),
                   "%s 0x%" PRIx64 ": fields '%s'", in->name, u, out);
        }
    }
}
END_TEST

/* Exact expansions worked out by hand from m * 2^e (long multiplication
 * of m by 5^-e): the decimal column of the reports must show these digits
 * and no others. */
static const struct {
    bp_dtype_t dt;
    uint64_t bits;
    const char *decimal;
} decimals[] = {
    {BP_F32, 0x40fe2f5e, "7.94328212738037109375"},        /* 10^0.9, CPU */
    {BP_F32, 0x40fe2f60, "7.9432830810546875"},            /* 10^0.9, CUDA */
    {BP_F32, 0x3f666666, "0.89999997615814208984375"},     /* 9/10, CPU */
    {BP_F32, 0x3f666667, "0.900000035762786865234375"},    /* 9*(1/10), CUDA */
    {BP_F32, 0x3d2cba15, "0.0421696491539478302001953125"},
    {BP_F32, 0x3f800000, "1"},
    {BP_F32, 0x42c80000, "100"},
    {BP_F32, 0xc0400000, "-3"},
    {BP_F32, 0x80000000, "-0"},
    {BP_F32, 0x7f7fffff, "340282346638528859811704183484516925440"},
    /* 2^-149: 105 significant digits. */
    {BP_F32, 0x00000001,
     "1.40129846432481707092372958328991613128026194187651577175706828388979108268586"
     "060148663818836212158203125e-45"},
    /* The largest subnormal, (2^23 - 1) * 2^-149: 112 digits. */
    {BP_F32, 0x007fffff,
     "1.17549421069244107548702944484928734882705242874589333385717453057158887047561"
     "8904265502351336181163787841796875e-38"},
    {BP_F32, 0x38d1b717, "9.99999974737875163555145263671875e-05"}, /* 1e-4f */
    {BP_F32, 0x38d1b718, "0.0001000000047497451305389404296875"},   /* next up */
    {BP_BF16, 0x3f66, "0.8984375"},
    {BP_BF16, 0x0001, "9.18354961579912115600575419704879435795832466228193376178712270530013483"
                      "949005603790283203125e-41"},
    {BP_BF16, 0x38c1, "9.2029571533203125e-05"},
    {BP_F16, 0x0001, "5.9604644775390625e-08"},
    {BP_F16, 0x7bff, "65504"},
    {BP_F16, 0x3555, "0.333251953125"},
    {BP_F64, 0x3fb999999999999aull,
     "0.1000000000000000055511151231257827021181583404541015625"},
    {BP_F64, 0x7ff0000000000000ull, "inf"},
    {BP_F64, 0xfff8000000000000ull, "nan"},
    {BP_I32, 0xffffffffu, "-1"},
    {BP_I64, 0x8000000000000000ull, "-9223372036854775808"},
};

START_TEST(t_decimal_cases)
{
    char out[BP_FMT_DECIMAL_MAX];
    bp_fmt_decimal(decimals[_i].dt, decimals[_i].bits, out, sizeof out);
    ck_assert_msg(strcmp(out, decimals[_i].decimal) == 0,
                  "decimal of %s 0x%" PRIx64 ": '%s', want '%s'",
                  bp_dtype_name(decimals[_i].dt), decimals[_i].bits, out,
                  decimals[_i].decimal);
}
END_TEST

/* An independent exact decimal: a little bignum in base 10^9 computes
 * m * 2^e (e >= 0) or m * 5^-e (e < 0, then the point moves -e places),
 * and both it and the formatted string are reduced to (significant
 * digits, exponent of the first one) for the comparison. */
typedef struct {
    uint32_t limb[120]; /* 1080 digits: 5^1074 * 2^53 has 767 */
    int n;
} big_t;

static void big_set(big_t *b, uint64_t v)
{
    b->n = 0;
    do {
        b->limb[b->n++] = (uint32_t)(v % 1000000000u);
        v /= 1000000000u;
    } while (v);
}

static void big_mul(big_t *b, uint32_t f)
{
    uint64_t carry = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->limb[i] * f + carry;
        b->limb[i] = (uint32_t)(t % 1000000000u);
        carry = t / 1000000000u;
    }
    while (carry) {
        b->limb[b->n++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

/* Digits without leading zeros into d; returns their count. */
static int big_digits(const big_t *b, char *d)
{
    int k = sprintf(d, "%" PRIu32, b->limb[b->n - 1]);
    for (int i = b->n - 2; i >= 0; i--)
        k += sprintf(d + k, "%09" PRIu32, b->limb[i]);
    return k;
}

/* Strips zeros: d holds the significant digits, *exp10 the power of ten of
 * the first.  A zero value gives "" and exponent 0. */
static void canon(char *d, int len, int point, int *exp10)
{
    int lo = 0;
    while (lo < len && d[lo] == '0')
        lo++;
    while (len > lo && d[len - 1] == '0')
        len--;
    memmove(d, d + lo, (size_t)(len - lo));
    d[len - lo] = '\0';
    *exp10 = len > lo ? point - lo - 1 : 0;
}

static void reference(uint64_t m, int e, char *d, int *exp10)
{
    big_t b;
    big_set(&b, m);
    int shift = 0;
    for (; e > 0; e -= e > 31 ? 31 : e)
        big_mul(&b, 1u << (e > 31 ? 31 : e));
    for (; e < 0; e += e < -13 ? 13 : -e) {
        int k = e < -13 ? 13 : -e;
        uint32_t p = 1;
        for (int i = 0; i < k; i++)
            p *= 5;
        big_mul(&b, p);
        shift += k;
    }
    int len = big_digits(&b, d);
    canon(d, len, len - shift, exp10);
}

/* Parses [-]digits[.digits][e[+-]NN]. */
static bool parse_decimal(const char *s, bool *neg, char *d, int *exp10)
{
    int len = 0, point = -1;
    *neg = *s == '-';
    s += *neg;
    for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
        if (*s == '.') {
            if (point >= 0)
                return false;
            point = len;
        } else {
            d[len++] = *s;
        }
    }
    if (point < 0)
        point = len;
    if (*s == 'e') {
        char *end;
        point += (int)strtol(s + 1, &end, 10);
        s = end;
    }
    if (*s || !len)
        return false;
    canon(d, len, point, exp10);
    return true;
}

/* m * 2^e of a finite float, read from its fields by hand. */
static void split(bp_dtype_t dt, uint64_t u, bool *neg, uint64_t *m, int *e)
{
    int mant, ebits, w;
    switch (dt) {
    case BP_F64: mant = 52; ebits = 11; w = 64; break;
    case BP_F32: mant = 23; ebits = 8; w = 32; break;
    case BP_BF16: mant = 7; ebits = 8; w = 16; break;
    default: mant = 10; ebits = 5; w = 16; break;
    }
    int bias = (1 << (ebits - 1)) - 1;
    uint64_t frac = u & ((1ull << mant) - 1);
    int ex = (int)((u >> mant) & ((1u << ebits) - 1));
    *neg = (u >> (w - 1)) & 1;
    *m = ex ? frac | 1ull << mant : frac;
    *e = (ex ? ex : 1) - bias - mant;
}

static void check_exact(bp_dtype_t dt, uint64_t u)
{
    static char want[1200], got[1200];
    char out[BP_FMT_DECIMAL_MAX];
    bool neg, gneg;
    uint64_t m;
    int e, x, gx;
    split(dt, u, &neg, &m, &e);
    reference(m, e, want, &x);
    bp_fmt_decimal(dt, u, out, sizeof out);
    EXPECT(parse_decimal(out, &gneg, got, &gx), "%s 0x%" PRIx64 ": '%s' is not a decimal",
           bp_dtype_name(dt), u, out);
    EXPECT(gneg == neg && gx == x && strcmp(got, want) == 0,
           "%s 0x%" PRIx64 ": '%s', want %s%.60s... e%d (seed %" PRIu64 ")",
           bp_dtype_name(dt), u, out, neg ? "-" : "", want, x, seed);
}

START_TEST(t_decimal_exhaustive16)
{
    for (uint32_t h = 0; h <= 0xffff; h++) {
        if (!bp_dtype_bits_isnan(BP_BF16, h) && !bp_dtype_bits_isinf(BP_BF16, h))
            check_exact(BP_BF16, h);
        if (!bp_dtype_bits_isnan(BP_F16, h) && !bp_dtype_bits_isinf(BP_F16, h))
            check_exact(BP_F16, h);
    }
}
END_TEST

START_TEST(t_decimal_wide)
{
    uint64_t s = seed ^ 0xb17f0003u;
    /* The extremes: 2^-1074 (751 digits), the largest subnormal (767),
     * DBL_MAX, and the f32 subnormal range. */
    static const uint64_t f64s[] = {1, 0x000fffffffffffffull, 0x0010000000000000ull,
                                    0x7fefffffffffffffull, 0x8000000000000001ull};
    for (size_t i = 0; i < sizeof f64s / sizeof *f64s; i++)
        check_exact(BP_F64, f64s[i]);
    char out[BP_FMT_DECIMAL_MAX];
    bp_fmt_decimal(BP_F64, 0x000fffffffffffffull, out, sizeof out);
    EXPECT(strlen(out) == 773, "f64 largest subnormal: %zu characters", strlen(out));
    for (uint32_t u = 0; u < 4096; u++)
        check_exact(BP_F32, u);
    for (int i = 0; i < 20000; i++) {
        uint32_t u = (uint32_t)rnd(&s);
        if (!bp_dtype_bits_isnan(BP_F32, u) && !bp_dtype_bits_isinf(BP_F32, u))
            check_exact(BP_F32, u);
    }
    for (int i = 0; i < 300; i++) {
        uint64_t u = rnd(&s);
        if (!bp_dtype_bits_isnan(BP_F64, u) && !bp_dtype_bits_isinf(BP_F64, u))
            check_exact(BP_F64, u);
    }
}
END_TEST

START_TEST(t_decimal_truncation)
{
    char out[8];
    bp_fmt_decimal(BP_F32, 0x3f666666, out, sizeof out);
    ck_assert_str_eq(out, "0.89999");
    bp_fmt_decimal(BP_NDTYPES, 0, out, sizeof out);
    ck_assert_str_eq(out, "?");
    memcpy(out, "zzzzzzz", 8);
    bp_fmt_decimal(BP_F32, 0x3f666666, out, 0);
    ck_assert_str_eq(out, "zzzzzzz");
}
END_TEST

int main(void)
{
    const char *e = getenv("BP_SEED");
    seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
    printf("check_bitfmt: seed %" PRIu64 " (BP_SEED=%" PRIu64 " repeats it)\n", seed,
           seed);
    fflush(stdout);
    Suite *s = suite_create("bitfmt");
    TCase *tc = tcase_create("cases");
    tcase_add_loop_test(tc, t_cases, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_test(tc, t_truncation);
    tcase_add_loop_test(tc, t_decimal_cases, 0, (int)(sizeof decimals / sizeof *decimals));
    tcase_add_test(tc, t_decimal_truncation);
    suite_add_tcase(s, tc);
    tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_roundtrip_bf16);
    tcase_add_test(tc, t_roundtrip_f16);
    tcase_add_test(tc, t_roundtrip_fp8);
    tcase_add_test(tc, t_roundtrip_wide);
    tcase_add_test(tc, t_fields_parse);
    tcase_add_test(tc, t_decimal_exhaustive16);
    tcase_add_test(tc, t_decimal_wide);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
