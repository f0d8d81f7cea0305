/* Activations, special functions, rounding and clamping on the GPU, as
 * ATen's CUDA kernels compute them (PyTorch 2.x):
 *
 *   sigmoid  one / (one + std::exp(-opmath(a)))       UnarySpecialOpsKernel.cu
 *   silu     x / (opmath(1) + exp(-x))                ActivationSiluKernel.cu
 *   gelu     x * 0.5 * (1 + ::erf(x * M_SQRT1_2))     ActivationGeluKernel.cu
 *            tanh: 0.5 * x * (1 + tanh(kBeta * (x + kKappa * x^3))),
 *            kBeta = M_SQRT2 * M_2_SQRTPI * 0.5 and kKappa = 0.044715
 *            rounded to opmath; x^3 = x * x * x
 *   erf      ::erf(a)                                  UnarySpecialOpsKernel.cu
 *   exp2     exp2(a) (jiterator)                       UnarySpecialOpsKernel.cu
 *   log2     ::log2(a)                                 UnaryLogKernels.cu
 *   log1p    ::log1p(a)                                UnaryLogKernels.cu
 *   expm1    ::expm1(a)                                UnaryOpsKernel.cu
 *   abs      std::abs(a)                               AbsKernel.cu
 *   sign     c10::signum(a) = (0 < a) - (a < 0)        UnarySignKernels.cu
 *   floor, ceil, trunc, round: floorf, ceilf, truncf, nearbyintf
 *            round(decimals): nearbyint(a * p) / p, or nearbyint(a / p) * p
 *            for decimals < 0, p = 10^|decimals| in scalar_t and every
 *            step in scalar_t (each rounds to bf16/f16) UnaryFractionKernels.cu
 *   clamp    NaN passes; else ::min(::max(a, lo), hi) with lo, hi in
 *            scalar_t (clamp_scalar_kernel_impl, TensorCompare.cu)
 *
 * Float results compute in float (opmath of f32, bf16, f16) and round once
 * on the store; f64 in double.  Built like PyTorch with nvcc's defaults
 * (-fmad=true: gelu's x + kKappa * x^3 contracts to an fma in both).
 * Integers: abs wraps (|INT64_MIN| stays), sign, floor, ceil, trunc and
 * round copy, clamp compares as integers. */
#include <math.h>

#include "bpk_common.cuh"

template <int OP>
__device__ __forceinline__ float bpk_elem_f32(float x, const bpk_elem_par_t &p,
                                              int dt)
{
    switch (OP) {
    case BP_OP_SIGMOID: {
        const float one = 1.0f;
        return one / (one + expf(-x));
    }
    case BP_OP_SILU: return x / (1.0f + expf(-x));
    case BP_OP_GELU:
        if (p.form) {
            constexpr float kBeta = M_SQRT2 * M_2_SQRTPI * float(0.5);
            constexpr float kKappa = 0.044715;
            float x_cube = x * x * x;
            float inner = kBeta * (x + kKappa * x_cube);
            return float(0.5) * x * (float(1) + tanhf(inner));
        } else {
            constexpr float kAlpha = M_SQRT1_2;
            return x * float(0.5) * (float(1) + erff(x * kAlpha));
        }
    case BP_OP_ERF: return erff(x);
#define BP_FN(ID, S, U35, W512, MPFR, CUDA) case BP_OP_##ID: return CUDA##f(x);
#include "../src/ops/op_list.h"
#undef BP_FN
    case BP_OP_EXP2: return exp2f(x);
    case BP_OP_LOG1P: return log1pf(x);
    case BP_OP_ABS: return fabsf(x);
    case BP_OP_SIGN: return (float)((0.0f < x) - (x < 0.0f));
    case BP_OP_FLOOR: return floorf(x);
    case BP_OP_CEIL: return ceilf(x);
    case BP_OP_TRUNC: return truncf(x);
    case BP_OP_ROUND: {
        if (!p.decimals)
            return nearbyintf(x);
        /* scalar_t arithmetic: the product or quotient rounds to the
         * dtype before nearbyint; the last step is float, rounded once by
         * the store. */
        float t = (float)p.scale;
        if (p.neg)
            return nearbyintf(bpk_num<float>::round(dt, x / t)) * t;
        return nearbyintf(bpk_num<float>::round(dt, x * t)) / t;
    }
    case BP_OP_CLAMP:
        if (isnan(x))
            return x;
        if (p.has_lo)
            x = fmaxf(x, (float)p.lo);
        if (p.has_hi)
            x = fminf(x, (float)p.hi);
        return x;
    }
    return BPK_BAD_F32;
}

template <int OP>
__device__ __forceinline__ double bpk_elem_f64(double x, const bpk_elem_par_t &p)
{
    switch (OP) {
    case BP_OP_SIGMOID: {
        const double one = 1.0;
        return one / (one + exp(-x));
    }
    case BP_OP_SILU: return x / (1.0 + exp(-x));
    case BP_OP_GELU:
        if (p.form) {
            constexpr double kBeta = M_SQRT2 * M_2_SQRTPI * double(0.5);
            constexpr double kKappa = 0.044715;
            double x_cube = x * x * x;
            double inner = kBeta * (x + kKappa * x_cube);
            return double(0.5) * x * (double(1) + tanh(inner));
        } else {
            constexpr double kAlpha = M_SQRT1_2;
            return x * double(0.5) * (double(1) + erf(x * kAlpha));
        }
    case BP_OP_ERF: return erf(x);
#define BP_FN(ID, S, U35, W512, MPFR, CUDA) case BP_OP_##ID: return CUDA(x);
#include "../src/ops/op_list.h"
#undef BP_FN
    case BP_OP_EXP2: return exp2(x);
    case BP_OP_LOG1P: return log1p(x);
    case BP_OP_ABS: return fabs(x);
    case BP_OP_SIGN: return (double)((0.0 < x) - (x < 0.0));
    case BP_OP_FLOOR: return floor(x);
    case BP_OP_CEIL: return ceil(x);
    case BP_OP_TRUNC: return trunc(x);
    case BP_OP_ROUND:
        if (!p.decimals)
            return nearbyint(x);
        return p.neg ? nearbyint(x / p.scale) * p.scale : nearbyint(x * p.scale) / p.scale;
    case BP_OP_CLAMP:
        if (isnan(x))
            return x;
        if (p.has_lo)
            x = fmax(x, p.lo);
        if (p.has_hi)
            x = fmin(x, p.hi);
        return x;
    }
    return BPK_BAD_F64;
}

template <int OP>
__device__ __forceinline__ long long bpk_elem_i64(long long x, const bpk_elem_par_t &p)
{
    switch (OP) {
    case BP_OP_ABS: return x < 0 ? (long long)(0ull - (unsigned long long)x) : x;
    case BP_OP_SIGN: return (0 < x) - (x < 0);
    case BP_OP_CLAMP:
        if (p.has_lo && x < (long long)p.lo)
            x = (long long)p.lo;
        if (p.has_hi && x > (long long)p.hi)
            x = (long long)p.hi;
        return x;
    default: return x; /* floor, ceil, trunc, round: the integer itself */
    }
}

template <int OP>
__global__ void bpk_elem_kernel_f32(void *out, int out_dt, const void *a, int a_dt,
                                    int64_t n, bpk_elem_par_t p)
{
    BPK_FOR(i, n)
    {
        float x = bpk_load_common<float>(a, a_dt, i, out_dt);
        bpk_store_f32(out, out_dt, i, bpk_elem_f32<OP>(x, p, out_dt));
    }
}

template <int OP>
__global__ void bpk_elem_kernel_f64(void *out, int out_dt, const void *a, int a_dt,
                                    int64_t n, bpk_elem_par_t p)
{
    BPK_FOR(i, n)
    {
        double x = bpk_load_common<double>(a, a_dt, i, out_dt);
        bpk_store_f64(out, out_dt, i, bpk_elem_f64<OP>(x, p));
    }
}

template <int OP>
__global__ void bpk_elem_kernel_i64(void *out, int out_dt, const void *a, int a_dt,
                                    int64_t n, bpk_elem_par_t p)
{
    BPK_FOR(i, n)
    {
        long long x = bpk_load_common<long long>(a, a_dt, i, out_dt);
        bpk_store_i64(out, out_dt, i, bpk_elem_i64<OP>(x, p));
    }
}

template <int OP>
static int bpk_elem_launch(cudaStream_t s, void *out, int out_dt, const void *a,
                           int a_dt, int64_t n, const bpk_elem_par_t &p)
{
    unsigned g = bpk_blocks(n);
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        bpk_elem_kernel_f32<OP><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt, n, p);
        break;
    case BPK_CT_F64:
        bpk_elem_kernel_f64<OP><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt, n, p);
        break;
    default:
        switch (OP) {
        case BP_OP_ABS: case BP_OP_SIGN: case BP_OP_FLOOR: case BP_OP_CEIL:
        case BP_OP_TRUNC: case BP_OP_ROUND: case BP_OP_CLAMP:
            bpk_elem_kernel_i64<OP><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt, n, p);
            break;
        default: return (int)cudaErrorInvalidValue;
        }
    }
    return bpk_launched();
}

extern "C" int bpk_elem(void *stream, int op, void *out, int out_dt, const void *a,
                        int a_dt, int64_t n, const bpk_elem_par_t *par)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(a_dt) || !par)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    const bpk_elem_par_t &p = *par;
#define BPK_ELEM_CASE(K)                                                       \
    case BP_OP_##K: return bpk_elem_launch<BP_OP_##K>(s, out, out_dt, a, a_dt, n, p);
    switch (op) {
        BPK_ELEM_CASE(SIGMOID)
        BPK_ELEM_CASE(SILU)
        BPK_ELEM_CASE(GELU)
        BPK_ELEM_CASE(ERF)
        BPK_ELEM_CASE(EXP2)
        BPK_ELEM_CASE(LOG1P)
        BPK_ELEM_CASE(ABS)
        BPK_ELEM_CASE(SIGN)
        BPK_ELEM_CASE(FLOOR)
        BPK_ELEM_CASE(CEIL)
        BPK_ELEM_CASE(TRUNC)
        BPK_ELEM_CASE(ROUND)
        BPK_ELEM_CASE(CLAMP)
#define BP_FN(ID, ...) BPK_ELEM_CASE(ID)
#include "../src/ops/op_list.h"
#undef BP_FN
    }
#undef BPK_ELEM_CASE
    return (int)cudaErrorInvalidValue;
}

/* linspace (RangeFactories.cu linspace_cuda_out), steps >= 2: step =
 * (end - start) / (steps - 1) and each element in scalar_t,
 *   ind < steps / 2:  start + step * ind
 *   otherwise:        end - step * (steps - ind - 1)
 * For float and double nvcc contracts each into one fma; for bf16 and f16
 * every operation of c10's BFloat16/Half arithmetic rounds to the dtype
 * (the index converted to the dtype first).  start, end and step arrive
 * computed on the host in the dtype. */
__global__ void bpk_linspace_f32(void *out, int dt, int64_t steps, float scalar_start,
                                 float scalar_end, float step)
{
    const int64_t halfway = steps / 2;
    BPK_FOR(ind, steps)
    {
        float v;
        if (dt == BPK_F32) {
            if (ind < halfway)
                v = scalar_start + (step * ind);
            else
                v = scalar_end - step * (steps - ind - 1);
        } else {
            typedef bpk_num<float> N;
            if (ind < halfway)
                v = N::round(dt, scalar_start + N::round(dt, step * N::round(dt, (float)ind)));
            else
                v = N::round(dt, scalar_end - N::round(dt, step * N::round(
                                                               dt, (float)(steps - ind - 1))));
        }
        bpk_store_f32(out, dt, ind, v);
    }
}

__global__ void bpk_linspace_f64(void *out, int64_t steps, double scalar_start,
                                 double scalar_end, double step)
{
    const int64_t halfway = steps / 2;
    BPK_FOR(ind, steps)
    {
        double v;
        if (ind < halfway)
            v = scalar_start + (step * ind);
        else
            v = scalar_end - step * (steps - ind - 1);
        ((double *)out)[ind] = v;
    }
}

extern "C" int bpk_linspace(void *stream, void *out, int dt, int64_t steps, double start,
                            double end, double step)
{
    if (dt != BPK_F64 && dt != BPK_F32 && dt != BPK_BF16 && dt != BPK_F16)
        return (int)cudaErrorInvalidValue;
    if (steps <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        bpk_linspace_f64<<<bpk_blocks(steps), BPK_THREADS, 0, s>>>(out, steps, start, end,
                                                                   step);
    else
        bpk_linspace_f32<<<bpk_blocks(steps), BPK_THREADS, 0, s>>>(
            out, dt, steps, (float)start, (float)end, (float)step);
    return bpk_launched();
}
