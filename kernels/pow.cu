/* pow on the GPU, as ATen's PowKernel.cu / Pow.cuh:
 *
 *  - pow_(base, exp) is ::pow(scalar_t, scalar_t); for float that is
 *    CUDA's powf, and bf16/f16 convert implicitly to float, so the result
 *    is powf(float(base), float(exp)) rounded once.  f64 uses pow; integer
 *    tensors use at::native::powi (square-and-multiply, with PyTorch's
 *    rules for negative exponents).
 *  - A scalar base (pow_Scalar_out) is wrapped into a device tensor and
 *    cast to the common dtype: be_cuda.c passes it rounded to the result
 *    dtype.  A base of exactly 1 fills ones without launching this kernel.
 *  - A scalar exponent (pow_tensor_scalar_kernel) goes to sqrt, rsqrt or
 *    reciprocal for 0.5, -0.5, -1 (unary.cu); otherwise the exponent is
 *    converted to scalar_t and compared as a double with 2, 3, -2, which
 *    run in scalar_t arithmetic: base * base and base * base * base round
 *    to the dtype after every product (c10's Half/BFloat16 operators
 *    return the storage type), and 1.0 / (base * base) divides in double
 *    (c10's double operators) before rounding through float to the dtype.
 * Exponents 0 and 1 (fill / copy) are handled by the caller. */
#include "bpk_common.cuh"

__device__ __forceinline__ float bpk_pow_fn(float x, float y)
{
    return powf(x, y);
}

__device__ __forceinline__ double bpk_pow_fn(double x, double y)
{
    return pow(x, y);
}

/* at::native::powi (aten/src/ATen/native/Pow.h). */
__device__ __forceinline__ long long bpk_pow_fn(long long a, long long b)
{
    if (b < 0) {
        if (a == 1)
            return 1;
        if (a == -1)
            return (-b) % 2 ? -1 : 1;
        return 0;
    }
    unsigned long long r = 1, x = (unsigned long long)a;
    while (b) {
        if (b & 1)
            r *= x;
        b /= 2;
        x *= x;
    }
    return (long long)r;
}

template <typename T>
__device__ __forceinline__ T bpk_pow_apply(int mode, int out_dt, T x, T y)
{
    typedef bpk_num<T> N;
    switch (mode) {
    case BPK_POW_SQUARE: return x * x;
    case BPK_POW_CUBE: return N::round(out_dt, x * x) * x;
    case BPK_POW_INV_SQUARE: {
        T sq = N::round(out_dt, x * x);
        return (T)(1.0 / (double)sq);
    }
    default: return bpk_pow_fn(x, y);
    }
}

/* Integer squares and cubes wrap like int64 arithmetic; the inverse
 * square is refused by the caller (PyTorch: "Integers to negative integer
 * powers are not allowed"). */
template <>
__device__ __forceinline__ long long bpk_pow_apply<long long>(int mode, int,
                                                              long long x,
                                                              long long y)
{
    unsigned long long ux = (unsigned long long)x;
    switch (mode) {
    case BPK_POW_SQUARE: return (long long)(ux * ux);
    case BPK_POW_CUBE: return (long long)(ux * ux * ux);
    default: return bpk_pow_fn(x, y);
    }
}

template <typename T>
__global__ void bpk_pow_kernel(int mode, void *out, int out_dt, bpk_arg_t a,
                               bpk_arg_t b, bpk_bcast_t bc, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, ib;
        bpk_bcast_offsets(bc, i, &ia, &ib);
        T x = bpk_operand<T>(a, ia, out_dt);
        T y = b.ptr || mode == BPK_POW_GENERIC ? bpk_operand<T>(b, ib, out_dt)
                                               : T(0);
        bpk_num<T>::store(out, out_dt, i,
                          bpk_pow_apply<T>(mode, out_dt, x, y));
    }
}

extern "C" int bpk_pow(void *stream, int mode, void *out, int out_dt,
                       bpk_arg_t a, bpk_arg_t b, const bpk_bcast_t *bc,
                       int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || (a.ptr && !bpk_dtype_ok(a.dtype)) ||
        (b.ptr && !bpk_dtype_ok(b.dtype)) || mode < 0 || mode >= BPK_NPOW ||
        !bc || bc->ndim < 0 || bc->ndim > BPK_MAXDIM)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(n);
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        bpk_pow_kernel<float><<<g, BPK_THREADS, 0, s>>>(mode, out, out_dt, a, b,
                                                        *bc, n);
        break;
    case BPK_CT_F64:
        bpk_pow_kernel<double><<<g, BPK_THREADS, 0, s>>>(mode, out, out_dt, a,
                                                         b, *bc, n);
        break;
    default:
        if (mode == BPK_POW_INV_SQUARE)
            return (int)cudaErrorInvalidValue;
        bpk_pow_kernel<long long><<<g, BPK_THREADS, 0, s>>>(mode, out, out_dt,
                                                            a, b, *bc, n);
        break;
    }
    return bpk_launched();
}
