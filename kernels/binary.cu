/* add, sub, mul, div on the GPU, with broadcasting and scalar operands.
 *
 * PyTorch computes these in opmath_t (float for f32/bf16/f16) and rounds
 * once to the result dtype:
 *  - add/sub: the ufunc `self + alpha * other` (ufunc/add.h) run through
 *    opmath_symmetric_gpu_kernel_with_scalars; with alpha = +-1 the product
 *    is exact, so the result is x + y or x - y rounded once, contracted to
 *    an fma or not.
 *  - mul: MulFunctor<opmath_t> (BinaryMulKernel.cu), scalars converted to
 *    opmath_t (iter.scalar_value<opmath_t>).
 *  - div, tensor / tensor: DivFunctor<scalar_t> (BinaryDivTrueKernel.cu),
 *    float(a) / float(b) with nvcc's default -prec-div=true (IEEE).
 *  - div, tensor / CPU scalar: `a * inv_b` with inv_b = opmath_t(1.0) /
 *    scalar computed on the host; be_cuda.c computes inv_b and passes
 *    BPK_MUL.  BPK_DIV_RCP is the same formulation with a tensor divisor
 *    (the reciprocal in opmath, not rounded to the dtype).
 * Scalars arrive already converted by the caller. */
#include "bpk_common.cuh"

template <typename T, int OP>
__device__ __forceinline__ T bpk_binary_apply(T x, T y)
{
    if constexpr (OP == BPK_ADD)
        return x + y;
    else if constexpr (OP == BPK_SUB)
        return x - y;
    else if constexpr (OP == BPK_MUL)
        return x * y;
    else if constexpr (OP == BPK_DIV)
        return x / y;
    else if constexpr (OP == BPK_MAXIMUM) /* MaxMinElementwiseKernel.cu */
        return x != x ? x : y != y ? y : ::max(x, y);
    else if constexpr (OP == BPK_MINIMUM)
        return x != x ? x : y != y ? y : ::min(x, y);
    else
        return x * (T(1) / y);
}

/* Integers: wrap-around add/sub/mul (what int64 arithmetic does on the
 * GPU), without signed-overflow undefined behaviour.  Division never
 * reaches here: true division promotes integers to float. */
template <>
__device__ __forceinline__ long long bpk_binary_apply<long long, BPK_ADD>(
    long long x, long long y)
{
    return (long long)((unsigned long long)x + (unsigned long long)y);
}
template <>
__device__ __forceinline__ long long bpk_binary_apply<long long, BPK_SUB>(
    long long x, long long y)
{
    return (long long)((unsigned long long)x - (unsigned long long)y);
}
template <>
__device__ __forceinline__ long long bpk_binary_apply<long long, BPK_MUL>(
    long long x, long long y)
{
    return (long long)((unsigned long long)x * (unsigned long long)y);
}

template <typename T, int OP>
__global__ void bpk_binary_kernel(void *out, int out_dt, bpk_arg_t a,
                                  bpk_arg_t b, bpk_bcast_t bc, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, ib;
        bpk_bcast_offsets(bc, i, &ia, &ib);
        T x = bpk_operand<T>(a, ia, out_dt);
        T y = bpk_operand<T>(b, ib, out_dt);
        bpk_num<T>::store(out, out_dt, i, bpk_binary_apply<T, OP>(x, y));
    }
}

/* The flat form of bpk_binary_kernel<float, OP> (bc.ndim 0, every tensor
 * operand of out's dtype, f32, bf16 or f16, 16-byte aligned): 8 elements
 * per step in 16-byte loads and stores, the rest one by one.  Each element
 * is the same operation on the same values: the same bits. */
__device__ __forceinline__ void bpk_load8(const bpk_arg_t &a, int64_t i, float *x)
{
    if (!a.ptr) {
        for (int k = 0; k < 8; k++)
            x[k] = (float)a.value;
    } else if (a.dtype == BPK_F32) {
        uint32_t w[8];
        bpk_raw8<uint32_t>(a.ptr, i, w);
        for (int k = 0; k < 8; k++)
            x[k] = __uint_as_float(w[k]);
    } else {
        uint16_t h[8];
        bpk_raw8<uint16_t>(a.ptr, i, h);
        for (int k = 0; k < 8; k++)
            x[k] = a.dtype == BPK_BF16 ? bpk_bf16_to_f32(h[k]) : bpk_f16_to_f32(h[k]);
    }
}

__device__ __forceinline__ void bpk_store8(void *out, int dt, int64_t i, const float *r)
{
    if (dt == BPK_F32) {
        float4 *p = (float4 *)((float *)out + i);
        p[0] = make_float4(r[0], r[1], r[2], r[3]);
        p[1] = make_float4(r[4], r[5], r[6], r[7]);
        return;
    }
    uint32_t w[4];
    for (int k = 0; k < 4; k++) {
        uint16_t lo = dt == BPK_BF16 ? bpk_f32_to_bf16(r[2 * k]) : bpk_f32_to_f16(r[2 * k]),
                 hi = dt == BPK_BF16 ? bpk_f32_to_bf16(r[2 * k + 1])
                                     : bpk_f32_to_f16(r[2 * k + 1]);
        w[k] = (uint32_t)lo | ((uint32_t)hi << 16);
    }
    *(uint4 *)((uint16_t *)out + i) = make_uint4(w[0], w[1], w[2], w[3]);
}

template <int OP>
__global__ void bpk_binary_flat_kernel(void *out, int out_dt, bpk_arg_t a, bpk_arg_t b,
                                       int64_t n)
{
    const int64_t groups = n / 8;
    BPK_FOR(g, groups)
    {
        float x[8], y[8], r[8];
        bpk_load8(a, g * 8, x);
        bpk_load8(b, g * 8, y);
        for (int k = 0; k < 8; k++)
            r[k] = bpk_binary_apply<float, OP>(x[k], y[k]);
        bpk_store8(out, out_dt, g * 8, r);
    }
    BPK_FOR(t, n - groups * 8)
    {
        int64_t i = groups * 8 + t;
        bpk_num<float>::store(out, out_dt, i,
                              bpk_binary_apply<float, OP>(bpk_operand<float>(a, i, out_dt),
                                                          bpk_operand<float>(b, i, out_dt)));
    }
}

static int bpk_binary_launch_flat(cudaStream_t s, int op, void *out, int out_dt, bpk_arg_t a,
                                  bpk_arg_t b, int64_t n)
{
    unsigned g = bpk_blocks((n + 7) / 8);
    switch (op) {
    case BPK_ADD: bpk_binary_flat_kernel<BPK_ADD><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n); break;
    case BPK_SUB: bpk_binary_flat_kernel<BPK_SUB><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n); break;
    case BPK_MUL: bpk_binary_flat_kernel<BPK_MUL><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n); break;
    case BPK_DIV: bpk_binary_flat_kernel<BPK_DIV><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n); break;
    case BPK_DIV_RCP:
        bpk_binary_flat_kernel<BPK_DIV_RCP><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n);
        break;
    case BPK_MAXIMUM:
        bpk_binary_flat_kernel<BPK_MAXIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n);
        break;
    case BPK_MINIMUM:
        bpk_binary_flat_kernel<BPK_MINIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, n);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return bpk_launched();
}

template <typename T>
static int bpk_binary_launch(cudaStream_t s, int op, void *out, int out_dt,
                             bpk_arg_t a, bpk_arg_t b, const bpk_bcast_t &bc,
                             int64_t n)
{
    unsigned g = bpk_blocks(n);
    switch (op) {
    case BPK_ADD:
        bpk_binary_kernel<T, BPK_ADD><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a,
                                                                b, bc, n);
        break;
    case BPK_SUB:
        bpk_binary_kernel<T, BPK_SUB><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a,
                                                                b, bc, n);
        break;
    case BPK_MUL:
        bpk_binary_kernel<T, BPK_MUL><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a,
                                                                b, bc, n);
        break;
    case BPK_DIV:
        bpk_binary_kernel<T, BPK_DIV><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a,
                                                                b, bc, n);
        break;
    case BPK_DIV_RCP:
        bpk_binary_kernel<T, BPK_DIV_RCP><<<g, BPK_THREADS, 0, s>>>(
            out, out_dt, a, b, bc, n);
        break;
    case BPK_MAXIMUM:
        bpk_binary_kernel<T, BPK_MAXIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, bc, n);
        break;
    case BPK_MINIMUM:
        bpk_binary_kernel<T, BPK_MINIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, bc, n);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return bpk_launched();
}

static int bpk_binary_launch_int(cudaStream_t s, int op, void *out,
                                 int out_dt, bpk_arg_t a, bpk_arg_t b,
                                 const bpk_bcast_t &bc, int64_t n)
{
    unsigned g = bpk_blocks(n);
    switch (op) {
    case BPK_ADD:
        bpk_binary_kernel<long long, BPK_ADD><<<g, BPK_THREADS, 0, s>>>(
            out, out_dt, a, b, bc, n);
        break;
    case BPK_SUB:
        bpk_binary_kernel<long long, BPK_SUB><<<g, BPK_THREADS, 0, s>>>(
            out, out_dt, a, b, bc, n);
        break;
    case BPK_MUL:
        bpk_binary_kernel<long long, BPK_MUL><<<g, BPK_THREADS, 0, s>>>(
            out, out_dt, a, b, bc, n);
        break;
    case BPK_MAXIMUM:
        bpk_binary_kernel<long long, BPK_MAXIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b,
                                                                            bc, n);
        break;
    case BPK_MINIMUM:
        bpk_binary_kernel<long long, BPK_MINIMUM><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b,
                                                                            bc, n);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return bpk_launched();
}

extern "C" int bpk_binary(void *stream, int op, void *out, int out_dt,
                          bpk_arg_t a, bpk_arg_t b, const bpk_bcast_t *bc,
                          int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || (a.ptr && !bpk_dtype_ok(a.dtype)) ||
        (b.ptr && !bpk_dtype_ok(b.dtype)) || !bc || bc->ndim < 0 ||
        bc->ndim > BPK_MAXDIM)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        if (bc->ndim == 0 && bpk_flat_ok(out, out_dt, a, b))
            return bpk_binary_launch_flat(s, op, out, out_dt, a, b, n);
        return bpk_binary_launch<float>(s, op, out, out_dt, a, b, *bc, n);
    case BPK_CT_F64:
        return bpk_binary_launch<double>(s, op, out, out_dt, a, b, *bc, n);
    default: return bpk_binary_launch_int(s, op, out, out_dt, a, b, *bc, n);
    }
}

/* op_list.h's BP_FN2 functions: ATen's gpu_kernel_with_scalars lambdas
 * call <CUDA>(a, b) on scalar_t, which for bf16/f16 widens to float:
 * <CUDA>f in float opmath, <CUDA> in double, rounded once on the store. */
template <typename T, int OP> __device__ __forceinline__ T bpk_fn2(T x, T y);
#define BP_FN2(ID, S, U35, W512, MPFR, CUDA)                                   \
    template <>                                                                \
    __device__ __forceinline__ float bpk_fn2<float, BP_OP_##ID>(float x, float y) \
    {                                                                          \
        return CUDA##f(x, y);                                                  \
    }                                                                          \
    template <>                                                                \
    __device__ __forceinline__ double bpk_fn2<double, BP_OP_##ID>(double x, double y) \
    {                                                                          \
        return CUDA(x, y);                                                     \
    }
#include "../src/ops/op_list.h"
#undef BP_FN2

template <typename T, int OP>
__global__ void bpk_fn2_kernel(void *out, int out_dt, bpk_arg_t a, bpk_arg_t b,
                               bpk_bcast_t bc, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, ib;
        bpk_bcast_offsets(bc, i, &ia, &ib);
        T x = bpk_operand<T>(a, ia, out_dt);
        T y = bpk_operand<T>(b, ib, out_dt);
        bpk_num<T>::store(out, out_dt, i, bpk_fn2<T, OP>(x, y));
    }
}

template <typename T>
static int bpk_fn2_launch(cudaStream_t s, int op, void *out, int out_dt, bpk_arg_t a,
                          bpk_arg_t b, const bpk_bcast_t &bc, int64_t n)
{
    unsigned g = bpk_blocks(n);
    switch (op) {
#define BP_FN2(ID, ...)                                                        \
    case BP_OP_##ID:                                                           \
        bpk_fn2_kernel<T, BP_OP_##ID><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, b, bc, n); \
        return bpk_launched();
#include "../src/ops/op_list.h"
#undef BP_FN2
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int bpk_binary_fn(void *stream, int op, void *out, int out_dt, bpk_arg_t a,
                             bpk_arg_t b, const bpk_bcast_t *bc, int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || !a.ptr || !bpk_dtype_ok(a.dtype) || !b.ptr ||
        !bpk_dtype_ok(b.dtype) || !bc || bc->ndim < 0 || bc->ndim > BPK_MAXDIM)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32: return bpk_fn2_launch<float>(s, op, out, out_dt, a, b, *bc, n);
    case BPK_CT_F64: return bpk_fn2_launch<double>(s, op, out, out_dt, a, b, *bc, n);
    default: return (int)cudaErrorInvalidValue;
    }
}
