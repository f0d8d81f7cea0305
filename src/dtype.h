/* Element types, conversions and ulp distance.
 *
 * Contract: f32 -> bf16 and f32 -> f16 round to nearest even and are
 * bit-identical to CUDA's __float2bfloat16_rn / __float2half_rn (PTX
 * cvt.rn.bf16.f32 / cvt.rn.f16.f32) for every input, subnormals and overflow
 * included; any NaN becomes the canonical quiet NaN 0x7FFF, as the GPU
 * writes it (the payload is not kept: CUDA drops it too).  bf16/f16 -> f32 is
 * exact.  Values are handled as raw bit patterns widened to uint64_t so that
 * one code path serves every dtype. */
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
    BP_NDTYPES
} bp_dtype_t;

typedef struct {
    const char *name;    /* probe/CLI name: fp64 fp32 bf16 fp16 i64 i32 */
    const char *st_name; /* safetensors name: F64 F32 BF16 F16 I64 I32 */
    size_t size;         /* bytes per element */
    bool is_float;
    int exp_bits;        /* float layout: sign | exponent | mantissa */
    int man_bits;
} bp_dtype_info_t;

const bp_dtype_info_t *bp_dtype_info(bp_dtype_t dt);
const char *bp_dtype_name(bp_dtype_t dt);
/* Accepts fp32 f32 float32 float, bf16 bfloat16, fp16 f16 float16 half,
 * fp64 f64 float64 double, i64 int64 long, i32 int32 int. */
bool bp_dtype_parse(const char *s, bp_dtype_t *out);
/* Safetensors dtype names (exact, upper case). */
bool bp_dtype_from_st(const char *s, bp_dtype_t *out);

uint16_t bp_f32_to_bf16(float f);
uint16_t bp_f32_to_f16(float f);
float bp_bf16_to_f32(uint16_t h);
float bp_f16_to_f32(uint16_t h);
uint32_t bp_f32_bits(float f);
float bp_f32_from_bits(uint32_t u);
uint64_t bp_f64_bits(double d);
double bp_f64_from_bits(uint64_t u);

/* Element i of a little-endian array of dt, as raw bits / as a double
 * (exact for every dtype but i64 beyond 2^53). */
uint64_t bp_dtype_load_bits(bp_dtype_t dt, const void *data, size_t i);
void bp_dtype_store_bits(bp_dtype_t dt, void *data, size_t i, uint64_t bits);
double bp_dtype_bits_to_double(bp_dtype_t dt, uint64_t bits);
/* Rounds v to dt (nearest even; through f32 for bf16/f16, which is exact
 * for values that are already f32) and returns the bits.  Integer dtypes
 * saturate at their range and give 0 for NaN. */
uint64_t bp_dtype_bits_from_double(bp_dtype_t dt, double v);

bool bp_dtype_bits_isnan(bp_dtype_t dt, uint64_t bits);
bool bp_dtype_bits_isinf(bp_dtype_t dt, uint64_t bits);

/* Distance in units in the last place on the monotonic integer line of dt:
 * +0 and -0 are 0 apart, adjacent values 1, the largest finite value and
 * infinity 1.  Two NaNs are 0 apart, NaN and a number UINT64_MAX.  Integer
 * dtypes give |a - b|.  Never overflows. */
uint64_t bp_ulp_distance(bp_dtype_t dt, uint64_t a, uint64_t b);

#endif
