/* Element types, conversions and ulp distance.
 *
 * Every safetensors dtype is here: F64 F32 BF16 F16 F8_E4M3 F8_E5M2, I64 I32
 * I16 I8, U64 U32 U16 U8 and BOOL.  The first six are the arithmetic dtypes
 * the backends compute in (BP_DTYPES_ARITH); the others are storage dtypes:
 * read, written, converted and compared, but computed by no op unless a
 * backend says so (backend.h).
 *
 * Contract: f32 -> bf16 and f32 -> f16 round to nearest even and are
 * bit-identical to CUDA's __float2bfloat16_rn / __float2half_rn (PTX
 * cvt.rn.bf16.f32 / cvt.rn.f16.f32) for every input, subnormals and overflow
 * included; any NaN becomes the canonical quiet NaN 0x7FFF, as the GPU
 * writes it (the payload is not kept: CUDA drops it too).  bf16/f16 -> f32 is
 * exact.
 *
 * fp8 (the OCP formats PyTorch calls float8_e4m3fn and float8_e5m2):
 *  - e4m3fn: bias 7, no infinity; S.1111.111 (0x7F, 0xFF) is NaN and
 *    everything else is finite, 0x7E = 448 the largest, 2^-9 the smallest
 *    subnormal;
 *  - e5m2: bias 15, IEEE-like (the top byte of an f16): 0x7C infinity,
 *    0x7D-0x7F NaN, 57344 the largest finite, 2^-16 the smallest subnormal.
 * f32 -> fp8 rounds to nearest even, subnormals included, with one of two
 * rules for what does not fit:
 *  - non-saturating (sat = false), c10::Float8_e4m3fn(float) and
 *    c10::Float8_e5m2(float), PyTorch's CPU cast: a result beyond the
 *    largest finite value (e4m3fn: |x| > 464, the midpoint 464 rounding to
 *    448; e5m2: |x| >= 61440) and infinity become NaN 0x7F in e4m3fn and
 *    infinity 0x7C in e5m2; NaN becomes 0x7F; the sign is kept throughout;
 *  - saturating (sat = true), CUDA's __nv_cvt_float_to_fp8(x,
 *    __NV_SATFINITE, ...), which PyTorch's CUDA copy kernel uses for
 *    float -> e4m3fn on sm_89+ with CUDA 13: those results and infinities
 *    become the largest finite value of their sign; NaN becomes 0x7F in
 *    e4m3fn and 0x7E | (the NaN's top two mantissa bits) in e5m2, sign
 *    kept.
 * fp8 -> f32 is exact.
 *
 * Values are handled as raw bit patterns widened to uint64_t so that one
 * code path serves every dtype. */
#ifndef BP_DTYPE_H
#define BP_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    BP_F64,
    BP_F32,
    BP_BF16,
    BP_F16,
    BP_I64,
    BP_I32,
    /* storage dtypes (see above); codes after the arithmetic ones, which
     * the CUDA kernels share (kernels/bpk.h) */
    BP_I16,
    BP_I8,
    BP_U64,
    BP_U32,
    BP_U16,
    BP_U8,
    BP_BOOL,
    BP_F8_E4M3,
    BP_F8_E5M2,
    BP_NDTYPES
} bp_dtype_t;

/* Bit set of dtypes (bit dt); the dtypes the backends compute in. */
#define BP_DTYPE_BIT(dt) (1u << (unsigned)(dt))
#define BP_DTYPES_ARITH                                                   \
    (BP_DTYPE_BIT(BP_F64) | BP_DTYPE_BIT(BP_F32) | BP_DTYPE_BIT(BP_BF16) | \
     BP_DTYPE_BIT(BP_F16) | BP_DTYPE_BIT(BP_I64) | BP_DTYPE_BIT(BP_I32))

/* ... and those they also read and write in the ops that take them
 * (op_list.h: BP_OPF_BOOL, BP_OPF_FP8): comparisons and where, casts,
 * the layout ops. */
#define BP_DTYPES_COMPUTE                                                  \
    (BP_DTYPES_ARITH | BP_DTYPE_BIT(BP_BOOL) | BP_DTYPE_BIT(BP_F8_E4M3) |  \
     BP_DTYPE_BIT(BP_F8_E5M2))

/* The dtypes a probe, the stack and invariance run in (a probe's dtypes:
 * list, --dtype): the model dtypes fp32, bf16 and fp16. */
#define BP_DTYPES_RUN \
    (BP_DTYPE_BIT(BP_F32) | BP_DTYPE_BIT(BP_BF16) | BP_DTYPE_BIT(BP_F16))
static inline bool bp_dtype_is_run(bp_dtype_t dt)
{
    return (unsigned)dt < BP_NDTYPES && (BP_DTYPES_RUN & BP_DTYPE_BIT(dt));
}

typedef struct {
    const char *name;    /* probe/CLI name: fp64 fp32 bf16 fp16 fp8_e4m3
                          * fp8_e5m2 i64 i32 i16 i8 u64 u32 u16 u8 bool */
    const char *st_name; /* safetensors name: F64 ... F8_E4M3 ... BOOL */
    size_t size;         /* bytes per element */
    bool is_float;
    int exp_bits;        /* float layout: sign | exponent | mantissa */
    int man_bits;
    bool is_signed;      /* floats and I*: true; U* and BOOL: false */
    /* Floats: the magnitudes (bits without the sign) from which on values
     * are not finite, and from which on they are NaN: inf and inf + 1 for
     * the IEEE-like formats, both 0x7F for e4m3fn. */
    uint64_t special_mag, nan_mag;
} bp_dtype_info_t;

const bp_dtype_info_t *bp_dtype_info(bp_dtype_t dt);
const char *bp_dtype_name(bp_dtype_t dt);
/* An integer dtype (i64 ... u8; not bool, which PyTorch promotes apart). */
bool bp_dtype_is_int(bp_dtype_t dt);
/* Accepts fp32 f32 float32 float, bf16 bfloat16, fp16 f16 float16 half,
 * fp64 f64 float64 double, i64 int64 long, i32 int32 int, i16 int16 short,
 * i8 int8, u64 uint64, u32 uint32, u16 uint16, u8 uint8, bool, fp8_e4m3
 * float8_e4m3fn e4m3, fp8_e5m2 float8_e5m2 e5m2. */
bool bp_dtype_parse(const char *s, bp_dtype_t *out);
/* Safetensors dtype names (exact, upper case). */
bool bp_dtype_from_st(const char *s, bp_dtype_t *out);

/* The bits of a float and back (inline: inner loops call them). */
static inline uint32_t bp_f32_bits(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    return u;
}

static inline float bp_f32_from_bits(uint32_t u)
{
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t bp_f32_to_bf16(float f)
{
    uint32_t u = bp_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    /* Adding 0x7fff plus the kept lsb rounds to nearest even; a carry out
     * of the mantissa bumps the exponent, up to infinity, as it should. */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bp_bf16_to_f32(uint16_t h)
{
    return bp_f32_from_bits((uint32_t)h << 16);
}

uint16_t bp_f32_to_f16(float f);
float bp_f16_to_f32(uint16_t h);
/* Element i of an array of the float dtype dt (f32, bf16, f16; NaN for
 * any other) as a float, exactly; and v stored there, rounded to dt as
 * above.  The typed access of inner loops. */
static inline float bp_dtype_ldf(bp_dtype_t dt, const void *p, size_t i)
{
    switch (dt) {
    case BP_F32: return ((const float *)p)[i];
    case BP_BF16: return bp_bf16_to_f32(((const uint16_t *)p)[i]);
    case BP_F16: return bp_f16_to_f32(((const uint16_t *)p)[i]);
    default: return __builtin_nanf("");
    }
}

static inline void bp_dtype_stf(bp_dtype_t dt, void *p, size_t i, float v)
{
    switch (dt) {
    case BP_F32: ((float *)p)[i] = v; break;
    case BP_BF16: ((uint16_t *)p)[i] = bp_f32_to_bf16(v); break;
    case BP_F16: ((uint16_t *)p)[i] = bp_f32_to_f16(v); break;
    default: break;
    }
}
/* v as a value of the float dtype dt holds it, widened back: fp32 by a
 * cast, bf16 and fp16 nearest even through float (c10's conversions: a
 * double reaches bf16/fp16 through float, so a double can round twice, as
 * PyTorch's does); fp64 and every other dtype: v unchanged. */
double bp_dtype_round(bp_dtype_t dt, double v);
/* The same for a float (fp32: v itself), kept in float so that the
 * arithmetic around it stays in float. */
static inline float bp_dtype_roundf(bp_dtype_t dt, float v)
{
    return (float)bp_dtype_round(dt, v);
}
/* f32 -> fp8, nearest even, non-saturating or saturating (see above). */
uint8_t bp_f32_to_f8e4m3(float f, bool sat);
uint8_t bp_f32_to_f8e5m2(float f, bool sat);
float bp_f8e4m3_to_f32(uint8_t h);
float bp_f8e5m2_to_f32(uint8_t h);
uint64_t bp_f64_bits(double d);
double bp_f64_from_bits(uint64_t u);

/* Element i of a little-endian array of dt, as raw bits / as a double
 * (exact for every dtype but i64 and u64 beyond 2^53; a BOOL element is
 * its byte's value). */
uint64_t bp_dtype_load_bits(bp_dtype_t dt, const void *data, size_t i);
void bp_dtype_store_bits(bp_dtype_t dt, void *data, size_t i, uint64_t bits);
double bp_dtype_bits_to_double(bp_dtype_t dt, uint64_t bits);
/* Rounds v to dt (nearest even; through f32 for bf16/f16/fp8, which is
 * exact for values that are already f32; fp8 non-saturating, as PyTorch's
 * CPU cast) and returns the bits.  Integer dtypes saturate at their range
 * and give 0 for NaN; BOOL is 1 for anything but zero (NaN included), as a
 * C or PyTorch cast to bool. */
uint64_t bp_dtype_bits_from_double(bp_dtype_t dt, double v);

/* Whether every value of float dtype from is exactly a value of float
 * dtype to (NaN a NaN, infinity infinity): bf16, fp16 and both fp8 widen to
 * fp32 and fp64, fp32 to fp64, the fp8 formats to fp16 and bf16; fp16 and
 * bf16 do not widen to each other.  Worked out by converting every value
 * (the 16-bit and 8-bit formats) once, on first use; call it once before
 * threads use it. */
bool bp_dtype_widens(bp_dtype_t from, bp_dtype_t to);
/* Converts n elements of from into to (a dtype from widens to): exact. */
void bp_dtype_widen(bp_dtype_t from, bp_dtype_t to, const void *src, void *dst, size_t n);

bool bp_dtype_bits_isnan(bp_dtype_t dt, uint64_t bits);
bool bp_dtype_bits_isinf(bp_dtype_t dt, uint64_t bits);

/* Whether a and b are the same value as bitprobe compares them: equal bit
 * patterns (so +0 and -0 differ), or two NaNs when payloads do not count.
 * The one rule of "identical" for the studies that compare elements one
 * by one (explain, invariance, the screen, the layer stack's ranks). */
bool bp_dtype_bits_equal(bp_dtype_t dt, uint64_t a, uint64_t b, bool nan_payload);

/* Distance in units in the last place on the monotonic integer line of dt:
 * +0 and -0 are 0 apart, adjacent values 1, the largest finite value and
 * infinity 1 (e4m3fn has no infinity: 448 is its end).  Two NaNs are 0
 * apart, NaN and a number UINT64_MAX.  Integer dtypes (BOOL as its byte
 * value) give |a - b|.  Never overflows. */
uint64_t bp_ulp_distance(bp_dtype_t dt, uint64_t a, uint64_t b);

#endif
