/* Element types: names, layouts, conversions, ulp distance (see dtype.h). */
#include "dtype.h"
#include "f8_encode.h"

#include <math.h>
#include <string.h>
#include <strings.h>

/* Floats' special magnitudes: IEEE-like formats from their layout; e4m3fn
 * has only its all-ones NaN. */
#define IEEE(e, m) (((1ull << (e)) - 1) << (m)), ((((1ull << (e)) - 1) << (m)) + 1)

static const bp_dtype_info_t infos[BP_NDTYPES] = {
    [BP_F64] = {"fp64", "F64", 8, true, 11, 52, true, IEEE(11, 52)},
    [BP_F32] = {"fp32", "F32", 4, true, 8, 23, true, IEEE(8, 23)},
    [BP_BF16] = {"bf16", "BF16", 2, true, 8, 7, true, IEEE(8, 7)},
    [BP_F16] = {"fp16", "F16", 2, true, 5, 10, true, IEEE(5, 10)},
    [BP_I64] = {"i64", "I64", 8, false, 0, 0, true, 0, 0},
    [BP_I32] = {"i32", "I32", 4, false, 0, 0, true, 0, 0},
    [BP_I16] = {"i16", "I16", 2, false, 0, 0, true, 0, 0},
    [BP_I8] = {"i8", "I8", 1, false, 0, 0, true, 0, 0},
    [BP_U64] = {"u64", "U64", 8, false, 0, 0, false, 0, 0},
    [BP_U32] = {"u32", "U32", 4, false, 0, 0, false, 0, 0},
    [BP_U16] = {"u16", "U16", 2, false, 0, 0, false, 0, 0},
    [BP_U8] = {"u8", "U8", 1, false, 0, 0, false, 0, 0},
    [BP_BOOL] = {"bool", "BOOL", 1, false, 0, 0, false, 0, 0},
    [BP_F8_E4M3] = {"fp8_e4m3", "F8_E4M3", 1, true, 4, 3, true, 0x7f, 0x7f},
    [BP_F8_E5M2] = {"fp8_e5m2", "F8_E5M2", 1, true, 5, 2, true, IEEE(5, 2)},
};

const bp_dtype_info_t *bp_dtype_info(bp_dtype_t dt)
{
    return (unsigned)dt < BP_NDTYPES ? &infos[dt] : NULL;
}

const char *bp_dtype_name(bp_dtype_t dt)
{
    return (unsigned)dt < BP_NDTYPES ? infos[dt].name : "?";
}

bool bp_dtype_is_int(bp_dtype_t dt)
{
    return (unsigned)dt < BP_NDTYPES && !infos[dt].is_float && dt != BP_BOOL;
}

bool bp_dtype_parse(const char *s, bp_dtype_t *out)
{
    if (!s)
        return false;
    static const struct {
        const char *alias;
        bp_dtype_t dt;
    } names[] = {
        {"fp32", BP_F32},  {"f32", BP_F32},      {"float32", BP_F32},
        {"float", BP_F32}, {"bf16", BP_BF16},    {"bfloat16", BP_BF16},
        {"fp16", BP_F16},  {"f16", BP_F16},      {"float16", BP_F16},
        {"half", BP_F16},  {"fp64", BP_F64},     {"f64", BP_F64},
        {"float64", BP_F64}, {"double", BP_F64}, {"i64", BP_I64},
        {"int64", BP_I64}, {"long", BP_I64},     {"i32", BP_I32},
        {"int32", BP_I32}, {"int", BP_I32},      {"i16", BP_I16},
        {"int16", BP_I16}, {"short", BP_I16},    {"i8", BP_I8},
        {"int8", BP_I8},   {"u64", BP_U64},      {"uint64", BP_U64},
        {"u32", BP_U32},   {"uint32", BP_U32},   {"u16", BP_U16},
        {"uint16", BP_U16}, {"u8", BP_U8},       {"uint8", BP_U8},
        {"bool", BP_BOOL}, {"fp8_e4m3", BP_F8_E4M3},
        {"float8_e4m3fn", BP_F8_E4M3}, {"e4m3", BP_F8_E4M3},
        {"fp8_e5m2", BP_F8_E5M2}, {"float8_e5m2", BP_F8_E5M2},
        {"e5m2", BP_F8_E5M2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].alias) == 0) {
            *out = names[i].dt;
            return true;
        }
    return false;
}

bool bp_dtype_from_st(const char *s, bp_dtype_t *out)
{
    if (!s)
        return false;
    for (int i = 0; i < BP_NDTYPES; i++)
        if (strcmp(s, infos[i].st_name) == 0) {
            *out = (bp_dtype_t)i;
            return true;
        }
    return false;
}

uint64_t bp_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

double bp_f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

double bp_dtype_round(bp_dtype_t dt, double v)
{
    switch (dt) {
    case BP_F32: return (float)v;
    case BP_BF16: return bp_bf16_to_f32(bp_f32_to_bf16((float)v));
    case BP_F16: return bp_f16_to_f32(bp_f32_to_f16((float)v));
    default: return v;
    }
}

uint16_t bp_f32_to_f16(float f)
{
    uint32_t x = bp_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return 0x7fff;
    if (ax >= 0x477ff000u) /* >= 65520: rounds to infinity */
        return sign | 0x7c00u;
    if (ax < 0x38800000u) { /* below 2^-14: an f16 subnormal or zero */
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffffu) | (e ? 0x800000u : 0);
        uint32_t shift = 126u - e; /* result = m * 2^(e-126) in 2^-24 units */
        if (e == 0 || shift > 25)
            return sign;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u)))
            r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = (ax - 0x38000000u) >> 13, rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
        r++;
    return (uint16_t)(sign | r);
}

float bp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)
        return bp_f32_from_bits(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        /* subnormal or zero: m * 2^-24, exact in f32 */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return bp_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

uint8_t bp_f32_to_f8e4m3(float f, bool sat)
{
    return bp_f8e4m3_encode(bp_f32_bits(f), sat);
}

uint8_t bp_f32_to_f8e5m2(float f, bool sat)
{
    return bp_f8e5m2_encode(bp_f32_bits(f), sat);
}

float bp_f8e4m3_to_f32(uint8_t h)
{
    uint32_t sign = (uint32_t)(h & 0x80u) << 24;
    uint32_t e = (h >> 3) & 0xfu, m = h & 7u;
    if (e == 0xf && m == 7)
        return bp_f32_from_bits(sign | 0x7fc00000u);
    if (e == 0) {
        float v = (float)m * 0x1p-9f; /* subnormal: m * 2^-9, exact */
        return sign ? -v : v;
    }
    return bp_f32_from_bits(sign | ((e + 120u) << 23) | (m << 20));
}

float bp_f8e5m2_to_f32(uint8_t h)
{
    /* e5m2 is the top byte of an f16: same exponent, two mantissa bits. */
    return bp_f16_to_f32((uint16_t)(h << 8));
}

uint64_t bp_dtype_load_bits(bp_dtype_t dt, const void *data, size_t i)
{
    if ((unsigned)dt >= BP_NDTYPES)
        return 0;
    const unsigned char *p = (const unsigned char *)data + i * infos[dt].size;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (infos[dt].size) { /* the loop below, in one load */
    case 1: return *p;
    case 2: { uint16_t u; memcpy(&u, p, 2); return u; }
    case 4: { uint32_t u; memcpy(&u, p, 4); return u; }
    case 8: { uint64_t u; memcpy(&u, p, 8); return u; }
    default: break;
    }
#endif
    uint64_t v = 0;
    for (size_t k = 0; k < infos[dt].size; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

void bp_dtype_store_bits(bp_dtype_t dt, void *data, size_t i, uint64_t bits)
{
    if ((unsigned)dt >= BP_NDTYPES)
        return;
    unsigned char *p = (unsigned char *)data + i * infos[dt].size;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (infos[dt].size) { /* the loop below, in one store */
    case 1: *p = (unsigned char)bits; return;
    case 2: { uint16_t u = (uint16_t)bits; memcpy(p, &u, 2); return; }
    case 4: { uint32_t u = (uint32_t)bits; memcpy(p, &u, 4); return; }
    case 8: memcpy(p, &bits, 8); return;
    default: break;
    }
#endif
    for (size_t k = 0; k < infos[dt].size; k++)
        p[k] = (unsigned char)(bits >> (8 * k));
}

double bp_dtype_bits_to_double(bp_dtype_t dt, uint64_t bits)
{
    switch (dt) {
    case BP_F64: return bp_f64_from_bits(bits);
    case BP_F32: return bp_f32_from_bits((uint32_t)bits);
    case BP_BF16: return bp_bf16_to_f32((uint16_t)bits);
    case BP_F16: return bp_f16_to_f32((uint16_t)bits);
    case BP_F8_E4M3: return bp_f8e4m3_to_f32((uint8_t)bits);
    case BP_F8_E5M2: return bp_f8e5m2_to_f32((uint8_t)bits);
    case BP_I64: return (double)(int64_t)bits;
    case BP_I32: return (double)(int32_t)(uint32_t)bits;
    case BP_I16: return (double)(int16_t)(uint16_t)bits;
    case BP_I8: return (double)(int8_t)(uint8_t)bits;
    case BP_U64: return (double)bits;
    case BP_U32: return (double)(uint32_t)bits;
    case BP_U16: return (double)(uint16_t)bits;
    case BP_U8:
    case BP_BOOL: return (double)(uint8_t)bits;
    default: return NAN;
    }
}

/* Nearest integer (ties to even) as the bits of an integer dtype of w
 * bits, saturating at its range, NaN -> 0: a plain C cast is undefined
 * outside the integer's range. */
static uint64_t round_to_int(double v, unsigned w, bool is_signed)
{
    if (isnan(v))
        return 0;
    double r = nearbyint(v);
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    if (!is_signed) {
        if (r <= 0)
            return 0;
        if (r >= ldexp(1.0, (int)w))
            return mask;
        return (uint64_t)r;
    }
    double lim = ldexp(1.0, (int)w - 1);
    if (r >= lim)
        return (w == 64 ? (uint64_t)INT64_MAX : (1ull << (w - 1)) - 1) & mask;
    if (r < -lim)
        return (w == 64 ? (uint64_t)INT64_MIN : -(1ull << (w - 1))) & mask;
    return (uint64_t)(int64_t)r & mask;
}

uint64_t bp_dtype_bits_from_double(bp_dtype_t dt, double v)
{
    switch (dt) {
    case BP_F64: return bp_f64_bits(v);
    case BP_F32: return bp_f32_bits((float)v);
    case BP_BF16: return bp_f32_to_bf16((float)v);
    case BP_F16: return bp_f32_to_f16((float)v);
    case BP_F8_E4M3: return bp_f32_to_f8e4m3((float)v, false);
    case BP_F8_E5M2: return bp_f32_to_f8e5m2((float)v, false);
    case BP_BOOL: return v != 0;
    default:
        if ((unsigned)dt >= BP_NDTYPES)
            return 0;
        return round_to_int(v, (unsigned)infos[dt].size * 8u,
                            infos[dt].is_signed);
    }
}

static unsigned width_bits(bp_dtype_t dt)
{
    return (unsigned)infos[dt].size * 8u;
}

static uint64_t magnitude(bp_dtype_t dt, uint64_t bits)
{
    unsigned w = width_bits(dt);
    return bits & ((w == 64 ? ~0ull : ((1ull << w) - 1)) >> 1);
}

bool bp_dtype_bits_isnan(bp_dtype_t dt, uint64_t bits)
{
    if ((unsigned)dt >= BP_NDTYPES || !infos[dt].is_float)
        return false;
    return magnitude(dt, bits) >= infos[dt].nan_mag;
}

bool bp_dtype_bits_isinf(bp_dtype_t dt, uint64_t bits)
{
    if ((unsigned)dt >= BP_NDTYPES || !infos[dt].is_float)
        return false;
    uint64_t mag = magnitude(dt, bits);
    return mag >= infos[dt].special_mag && mag < infos[dt].nan_mag;
}

/* Signed position on the monotonic line, as an offset from zero: the
 * magnitude bits for positive values, their negation for negative ones. */
static void line_pos(bp_dtype_t dt, uint64_t bits, bool *neg, uint64_t *mag)
{
    unsigned w = width_bits(dt);
    uint64_t sign = 1ull << (w - 1);
    *neg = (bits & sign) != 0;
    *mag = bits & (sign - 1);
}

bool bp_dtype_bits_equal(bp_dtype_t dt, uint64_t a, uint64_t b, bool nan_payload)
{
    if (a == b)
        return true;
    return !nan_payload && bp_dtype_bits_isnan(dt, a) && bp_dtype_bits_isnan(dt, b);
}

uint64_t bp_ulp_distance(bp_dtype_t dt, uint64_t a, uint64_t b)
{
    if ((unsigned)dt >= BP_NDTYPES)
        return UINT64_MAX;
    if (!infos[dt].is_float) {
        unsigned w = width_bits(dt);
        uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
        a &= mask;
        b &= mask;
        if (infos[dt].is_signed && w < 64) {
            /* Sign-extend to 64 bits: the difference then fits. */
            uint64_t top = 1ull << (w - 1);
            a = (a ^ top) - top;
            b = (b ^ top) - top;
        }
        if (infos[dt].is_signed) {
            int64_t x = (int64_t)a, y = (int64_t)b;
            return x >= y ? a - b : b - a;
        }
        return a >= b ? a - b : b - a;
    }
    bool na = bp_dtype_bits_isnan(dt, a), nb = bp_dtype_bits_isnan(dt, b);
    if (na || nb)
        return na && nb ? 0 : UINT64_MAX;
    bool sa, sb;
    uint64_t ma, mb;
    line_pos(dt, a, &sa, &ma);
    line_pos(dt, b, &sb, &mb);
    if (sa == sb)
        return ma >= mb ? ma - mb : mb - ma;
    /* Opposite signs: the distance is the sum of the magnitudes, which
     * stays below 2^64 because each is below 2^63. */
    return ma + mb;
}

/* 1: widens, 0: does not, -1: not worked out yet. */
static signed char widens[BP_NDTYPES][BP_NDTYPES];
static bool widens_known;

static bool widens_by_trial(bp_dtype_t from, bp_dtype_t to)
{
    if (from == BP_F32)
        return to == BP_F64;
    if (infos[from].size > 2 || to == from)
        return false;
    uint64_t codes = 1ull << (infos[from].size * 8);
    for (uint64_t c = 0; c < codes; c++) {
        double v = bp_dtype_bits_to_double(from, c);
        double w = bp_dtype_bits_to_double(to, bp_dtype_bits_from_double(to, v));
        if (isnan(v) ? !isnan(w) : (w != v || signbit(w) != signbit(v)))
            return false;
    }
    return true;
}

bool bp_dtype_widens(bp_dtype_t from, bp_dtype_t to)
{
    if ((unsigned)from >= BP_NDTYPES || (unsigned)to >= BP_NDTYPES ||
        !infos[from].is_float || !infos[to].is_float)
        return false;
    if (!widens_known) {
        for (int f = 0; f < BP_NDTYPES; f++)
            for (int t = 0; t < BP_NDTYPES; t++)
                widens[f][t] = -1;
        widens_known = true;
    }
    if (widens[from][to] < 0)
        widens[from][to] = widens_by_trial(from, to);
    return widens[from][to] == 1;
}

void bp_dtype_widen(bp_dtype_t from, bp_dtype_t to, const void *src, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = bp_dtype_bits_to_double(from, bp_dtype_load_bits(from, src, i));
        bp_dtype_store_bits(to, dst, i, bp_dtype_bits_from_double(to, v));
    }
}
