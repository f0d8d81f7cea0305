/* Device helpers shared by the kernels: element loads and stores by dtype
 * code, the compute types, rounding to bf16/f16, broadcasting offsets and
 * the launch geometry.
 *
 * Conversions are the ones PyTorch's c10 types perform on the device:
 * BFloat16(float) is __float2bfloat16 and Half(float) is __float2half, both
 * round to nearest even (identical to the _rn forms used here); a double
 * reaches bf16/f16 through float (c10 has no direct constructor); an
 * integer reaches a float type with cvt.rn (static_cast); a float reaches
 * an integer by truncation (cvt.rzi, NaN -> 0). */
#ifndef BPK_COMMON_CUH
#define BPK_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "bpk.h"
#include "../src/core/f8_encode.h"

#define BPK_THREADS 256

/* Grid for a grid-stride loop over n elements. */
static inline unsigned bpk_blocks(int64_t n)
{
    int64_t b = (n + BPK_THREADS - 1) / BPK_THREADS;
    return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

#define BPK_FOR(i, n)                                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)gridDim.x * blockDim.x)

__host__ __device__ static inline bool bpk_dtype_ok(int dt)
{
    return (dt >= 0 && dt < BPK_NDTYPES) || dt == BPK_BOOL || dt == BPK_F8E4M3 ||
           dt == BPK_F8E5M2;
}

__host__ __device__ static inline bool bpk_is_int(int dt)
{
    return dt == BPK_I64 || dt == BPK_I32;
}

/* A NaN that no valid path produces, returned for impossible dtype codes
 * so that a caller's bug shows in the output instead of a plausible 0. */
#define BPK_BAD_F32 __int_as_float(0x7fbadbad)
#define BPK_BAD_F64 __longlong_as_double(0x7ff0badbadbadbadll)

__device__ __forceinline__ float bpk_bf16_to_f32(uint16_t h)
{
    return __uint_as_float((uint32_t)h << 16);
}

__device__ __forceinline__ float bpk_f16_to_f32(uint16_t h)
{
    return __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ uint16_t bpk_f32_to_bf16(float f)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

__device__ __forceinline__ uint16_t bpk_f32_to_f16(float f)
{
    return __half_as_ushort(__float2half_rn(f));
}

/* fp8 (dtype.h): decoding is exact; encoding rounds to nearest even and is
 * c10's non-saturating conversion (Float8_e4m3fn(float), Float8_e5m2(float),
 * which PyTorch's CUDA copy kernel runs unless built with CUDA >= 13.2):
 * beyond the largest finite value e4m3fn gives NaN 0x7F, e5m2 infinity;
 * NaN gives 0x7F; the sign is kept (src/core/f8_encode.h, shared with the
 * host). */
__device__ __forceinline__ float bpk_f8e4m3_to_f32(uint8_t h)
{
    uint32_t sign = (uint32_t)(h & 0x80u) << 24;
    uint32_t e = (h >> 3) & 0xfu, m = h & 7u;
    if (e == 0xf && m == 7)
        return __uint_as_float(sign | 0x7fc00000u);
    if (e == 0) {
        float v = (float)m * 0x1p-9f; /* subnormal, exact */
        return sign ? -v : v;
    }
    return __uint_as_float(sign | ((e + 120u) << 23) | (m << 20));
}

__device__ __forceinline__ float bpk_f8e5m2_to_f32(uint8_t h)
{
    return __half2float(__ushort_as_half((unsigned short)(h << 8)));
}

__device__ __forceinline__ uint8_t bpk_f32_to_f8e4m3(float f)
{
    return bp_f8e4m3_encode(__float_as_uint(f), false);
}

__device__ __forceinline__ uint8_t bpk_f32_to_f8e5m2(float f)
{
    return bp_f8e5m2_encode(__float_as_uint(f), false);
}

__device__ __forceinline__ float bpk_load_f32(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case BPK_F32: return ((const float *)p)[i];
    case BPK_BF16: return bpk_bf16_to_f32(((const uint16_t *)p)[i]);
    case BPK_F16: return bpk_f16_to_f32(((const uint16_t *)p)[i]);
    case BPK_F64: return (float)((const double *)p)[i];
    case BPK_I64: return (float)((const long long *)p)[i];
    case BPK_I32: return (float)((const int *)p)[i];
    case BPK_BOOL: return ((const uint8_t *)p)[i] ? 1.0f : 0.0f;
    case BPK_F8E4M3: return bpk_f8e4m3_to_f32(((const uint8_t *)p)[i]);
    case BPK_F8E5M2: return bpk_f8e5m2_to_f32(((const uint8_t *)p)[i]);
    }
    return BPK_BAD_F32;
}

__device__ __forceinline__ double bpk_load_f64(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case BPK_F64: return ((const double *)p)[i];
    case BPK_I64: return (double)((const long long *)p)[i];
    case BPK_I32: return (double)((const int *)p)[i];
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16:
    case BPK_BOOL:
    case BPK_F8E4M3:
    case BPK_F8E5M2: return (double)bpk_load_f32(p, dt, i);
    }
    return BPK_BAD_F64;
}

__device__ __forceinline__ long long bpk_load_i64(const void *p, int dt,
                                                  int64_t i)
{
    switch (dt) {
    case BPK_I64: return ((const long long *)p)[i];
    case BPK_I32: return ((const int *)p)[i];
    case BPK_F64: return (long long)((const double *)p)[i];
    case BPK_BOOL: return ((const uint8_t *)p)[i] != 0;
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16:
    case BPK_F8E4M3:
    case BPK_F8E5M2: return (long long)bpk_load_f32(p, dt, i);
    }
    return 0;
}

__device__ __forceinline__ void bpk_store_f32(void *p, int dt, int64_t i,
                                              float v)
{
    switch (dt) {
    case BPK_F32: ((float *)p)[i] = v; break;
    case BPK_BF16: ((uint16_t *)p)[i] = bpk_f32_to_bf16(v); break;
    case BPK_F16: ((uint16_t *)p)[i] = bpk_f32_to_f16(v); break;
    case BPK_F64: ((double *)p)[i] = (double)v; break;
    case BPK_I64: ((long long *)p)[i] = (long long)v; break;
    case BPK_I32: ((int *)p)[i] = (int)v; break;
    case BPK_BOOL: ((uint8_t *)p)[i] = v != 0.0f; break; /* NaN: true */
    case BPK_F8E4M3: ((uint8_t *)p)[i] = bpk_f32_to_f8e4m3(v); break;
    case BPK_F8E5M2: ((uint8_t *)p)[i] = bpk_f32_to_f8e5m2(v); break;
    }
}

__device__ __forceinline__ void bpk_store_f64(void *p, int dt, int64_t i,
                                              double v)
{
    switch (dt) {
    case BPK_F64: ((double *)p)[i] = v; break;
    case BPK_I64: ((long long *)p)[i] = (long long)v; break;
    case BPK_I32: ((int *)p)[i] = (int)v; break;
    case BPK_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16:
    case BPK_F8E4M3:
    case BPK_F8E5M2: bpk_store_f32(p, dt, i, (float)v); break;
    }
}

__device__ __forceinline__ void bpk_store_i64(void *p, int dt, int64_t i,
                                              long long v)
{
    switch (dt) {
    case BPK_I64: ((long long *)p)[i] = v; break;
    case BPK_I32: ((int *)p)[i] = (int)v; break;
    case BPK_F64: ((double *)p)[i] = (double)v; break;
    case BPK_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16:
    case BPK_F8E4M3:
    case BPK_F8E5M2: bpk_store_f32(p, dt, i, (float)v); break;
    }
}

/* Compute types: float (opmath of f32, bf16, f16), double, long long. */
template <typename T> struct bpk_num;

template <> struct bpk_num<float> {
    static __device__ __forceinline__ float load(const void *p, int dt,
                                                 int64_t i)
    {
        return bpk_load_f32(p, dt, i);
    }
    static __device__ __forceinline__ void store(void *p, int dt, int64_t i,
                                                 float v)
    {
        bpk_store_f32(p, dt, i, v);
    }
    /* v rounded to dt and widened back: what a scalar_t intermediate of
     * PyTorch's kernels holds. */
    static __device__ __forceinline__ float round(int dt, float v)
    {
        if (dt == BPK_BF16)
            return bpk_bf16_to_f32(bpk_f32_to_bf16(v));
        if (dt == BPK_F16)
            return bpk_f16_to_f32(bpk_f32_to_f16(v));
        return v;
    }
};

template <> struct bpk_num<double> {
    static __device__ __forceinline__ double load(const void *p, int dt,
                                                  int64_t i)
    {
        return bpk_load_f64(p, dt, i);
    }
    static __device__ __forceinline__ void store(void *p, int dt, int64_t i,
                                                 double v)
    {
        bpk_store_f64(p, dt, i, v);
    }
    static __device__ __forceinline__ double round(int, double v) { return v; }
};

template <> struct bpk_num<long long> {
    static __device__ __forceinline__ long long load(const void *p, int dt,
                                                     int64_t i)
    {
        return bpk_load_i64(p, dt, i);
    }
    static __device__ __forceinline__ void store(void *p, int dt, int64_t i,
                                                 long long v)
    {
        bpk_store_i64(p, dt, i, v);
    }
    static __device__ __forceinline__ long long round(int, long long v)
    {
        return v;
    }
};

/* An input as TensorIterator delivers it to a kernel: converted first to
 * the common dtype (the result dtype here), then widened to the compute
 * type.  The first step rounds only when an integer or f64 tensor meets a
 * bf16/f16 result. */
template <typename T>
__device__ __forceinline__ T bpk_load_common(const void *p, int dt, int64_t i,
                                             int out_dt)
{
    T v = bpk_num<T>::load(p, dt, i);
    return dt == out_dt ? v : bpk_num<T>::round(out_dt, v);
}

/* Integers computed for an i32 result: the operand converted to int32
 * first, as TensorIterator's cast does (c10::convert<int>: a float or
 * double truncates with the GPU's saturating cvt.rzi.s32, NaN giving 0;
 * an int64 wraps), then widened; not through int64, whose saturation
 * (inf -> INT64_MAX, whose low half is -1) and wrap differ. */
template <>
__device__ __forceinline__ long long bpk_load_common<long long>(const void *p, int dt,
                                                                int64_t i, int out_dt)
{
    if (out_dt != BPK_I32 || dt == BPK_I32)
        return bpk_load_i64(p, dt, i);
    switch (dt) {
    case BPK_I64: return (int)(unsigned int)(unsigned long long)((const long long *)p)[i];
    case BPK_F64: return (int)((const double *)p)[i];
    case BPK_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return (int)bpk_load_f32(p, dt, i);
    }
}

/* Operand value for output element i (tensor or scalar). */
template <typename T>
__device__ __forceinline__ T bpk_operand(const bpk_arg_t &a, int64_t off,
                                         int out_dt)
{
    return a.ptr ? bpk_load_common<T>(a.ptr, a.dtype, off, out_dt)
                 : (T)a.value;
}

/* Element offsets of both operands for output element i. */
__device__ __forceinline__ void bpk_bcast_offsets(const bpk_bcast_t &bc,
                                                  int64_t i, int64_t *oa,
                                                  int64_t *ob)
{
    if (bc.ndim == 0) {
        *oa = i;
        *ob = i;
        return;
    }
    int64_t a = 0, b = 0;
    if (bc.narrow) {
        uint32_t j = (uint32_t)i;
        for (int d = bc.ndim - 1; d >= 0; d--) {
            uint32_t s = (uint32_t)bc.shape[d], k = j % s;
            j /= s;
            a += (int64_t)k * bc.stride_a[d];
            b += (int64_t)k * bc.stride_b[d];
        }
        *oa = a;
        *ob = b;
        return;
    }
    for (int d = bc.ndim - 1; d >= 0; d--) {
        int64_t s = bc.shape[d], k = i % s;
        i /= s;
        a += k * bc.stride_a[d];
        b += k * bc.stride_b[d];
    }
    *oa = a;
    *ob = b;
}

/* Element conversion with PyTorch's copy_ semantics; identical dtypes copy
 * the bits (NaN payloads included). */
__device__ __forceinline__ void bpk_convert(void *dst, int ddt, int64_t j,
                                            const void *src, int sdt,
                                            int64_t i)
{
    if (sdt == ddt) {
        switch (sdt) {
        case BPK_F64:
        case BPK_I64:
            ((uint64_t *)dst)[j] = ((const uint64_t *)src)[i];
            break;
        case BPK_F32:
        case BPK_I32:
            ((uint32_t *)dst)[j] = ((const uint32_t *)src)[i];
            break;
        case BPK_BF16:
        case BPK_F16:
            ((uint16_t *)dst)[j] = ((const uint16_t *)src)[i];
            break;
        default: /* bool, fp8 */
            ((uint8_t *)dst)[j] = ((const uint8_t *)src)[i];
            break;
        }
        return;
    }
    if (bpk_is_int(sdt) && bpk_is_int(ddt))
        bpk_store_i64(dst, ddt, j, bpk_load_i64(src, sdt, i));
    else if (sdt == BPK_F64 || ddt == BPK_F64)
        bpk_store_f64(dst, ddt, j, bpk_load_f64(src, sdt, i));
    else
        bpk_store_f32(dst, ddt, j, bpk_load_f32(src, sdt, i));
}

/* Which compute type a result dtype uses. */
enum { BPK_CT_F32, BPK_CT_F64, BPK_CT_I64 };

static inline int bpk_compute_type(int out_dt)
{
    if (out_dt == BPK_F64)
        return BPK_CT_F64;
    if (bpk_is_int(out_dt))
        return BPK_CT_I64;
    return BPK_CT_F32;
}

static inline int bpk_launched(void)
{
    return (int)cudaGetLastError();
}

/* The flat forms of the elementwise kernels (binary, where): 8 elements
 * per step in 16-byte accesses.  They apply where out is f32, bf16 or
 * f16, every tensor operand is of out's dtype, and all are 16-byte
 * aligned (the caller also needs its operands read in order). */
static inline bool bpk_flat_ok(const void *out, int out_dt, const bpk_arg_t &a,
                               const bpk_arg_t &b)
{
    const bpk_arg_t *t[2] = {&a, &b};
    if ((out_dt != BPK_F32 && out_dt != BPK_BF16 && out_dt != BPK_F16) || ((uintptr_t)out & 15))
        return false;
    for (int k = 0; k < 2; k++)
        if (t[k]->ptr && (t[k]->dtype != out_dt || ((uintptr_t)t[k]->ptr & 15)))
            return false;
    return true;
}

/* The bits of elements i..i+7 of p, elements of U (uint16_t or uint32_t),
 * in 16-byte loads (p 16-byte aligned, i a multiple of 8). */
template <typename U>
__device__ __forceinline__ void bpk_raw8(const void *p, int64_t i, U *x)
{
    const uint4 *q = (const uint4 *)((const U *)p + i);
    if (sizeof(U) == 2) { /* 8 elements in 16 bytes */
        uint4 u = q[0];
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
        for (int k = 0; k < 8; k++)
            x[k] = (U)(w[k / 2] >> (16 * (k % 2)));
    } else { /* in 32 bytes */
        for (int h = 0; h < 2; h++) {
            uint4 u = q[h];
            x[4 * h] = (U)u.x, x[4 * h + 1] = (U)u.y, x[4 * h + 2] = (U)u.z, x[4 * h + 3] = (U)u.w;
        }
    }
}

#endif
