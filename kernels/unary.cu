/* Elementwise functions on the GPU, as ATen's CUDA kernels compute them:
 *
 *   reciprocal  static_cast<scalar_t>(1) / a     UnaryFractionKernels.cu
 *   exp         std::exp(a)                      UnaryOpsKernel.cu
 *   log         ::log(a)                         UnaryLogKernels.cu
 *   sin, cos    ::sin(a), ::cos(a)               UnaryGeometric{Sin,Cos}Kernel.cu
 *   tanh        ::tanh(a)                        UnaryGeometricTanhKernel.cu
 *   sqrt        std::sqrt(a)                     UnaryOpsKernel.cu
 *   rsqrt       ::rsqrt(a) (rsqrt_wrapper)       UnaryOpsKernel.cu
 *   neg         -a                               UnarySignKernels.cu
 *
 * For float these are CUDA's expf, logf, sinf, cosf, tanhf, sqrtf (IEEE,
 * -prec-sqrt=true), rsqrtf (not correctly rounded) and an IEEE division
 * (-prec-div=true); bf16/f16 convert implicitly to float, call the same
 * function and round once on return.  Built with nvcc's defaults
 * (-fmad=true, no --use_fast_math), as PyTorch is.  Integer inputs were
 * promoted by PyTorch to the float result dtype before the call, which the
 * load reproduces.  neg of f16 is __hneg (neg.f16: c10's operator- on
 * the device); neg of bf16 goes through float and rounds back. */
#include "bpk_common.cuh"

template <int OP> __device__ __forceinline__ float bpk_unary_f32(float x)
{
    switch (OP) {
    case BP_OP_RECIPROCAL: return 1.0f / x;
    case BP_OP_EXP: return expf(x);
    case BP_OP_LOG: return logf(x);
    case BP_OP_SIN: return sinf(x);
    case BP_OP_COS: return cosf(x);
    case BP_OP_TANH: return tanhf(x);
    case BP_OP_SQRT: return sqrtf(x);
    case BP_OP_RSQRT: return rsqrtf(x);
    default: return -x;
    }
}

template <int OP> __device__ __forceinline__ double bpk_unary_f64(double x)
{
    switch (OP) {
    case BP_OP_RECIPROCAL: return 1.0 / x;
    case BP_OP_EXP: return exp(x);
    case BP_OP_LOG: return log(x);
    case BP_OP_SIN: return sin(x);
    case BP_OP_COS: return cos(x);
    case BP_OP_TANH: return tanh(x);
    case BP_OP_SQRT: return sqrt(x);
    case BP_OP_RSQRT: return rsqrt(x);
    default: return -x;
    }
}

template <int OP>
__global__ void bpk_unary_kernel_f32(void *out, int out_dt, const void *a,
                                     int a_dt, int64_t n)
{
    BPK_FOR(i, n)
    {
        float x = bpk_load_common<float>(a, a_dt, i, out_dt);
        bpk_store_f32(out, out_dt, i, bpk_unary_f32<OP>(x));
    }
}

template <int OP>
__global__ void bpk_unary_kernel_f64(void *out, int out_dt, const void *a,
                                     int a_dt, int64_t n)
{
    BPK_FOR(i, n)
    {
        double x = bpk_load_common<double>(a, a_dt, i, out_dt);
        bpk_store_f64(out, out_dt, i, bpk_unary_f64<OP>(x));
    }
}

__global__ void bpk_neg_f16(uint16_t *out, const uint16_t *a, int64_t n)
{
    BPK_FOR(i, n)
    {
        out[i] = __half_as_ushort(__hneg(__ushort_as_half(a[i])));
    }
}

__global__ void bpk_neg_int(void *out, int out_dt, const void *a, int a_dt,
                            int64_t n)
{
    BPK_FOR(i, n)
    {
        unsigned long long x = (unsigned long long)bpk_load_common<long long>(a, a_dt, i, out_dt);
        bpk_store_i64(out, out_dt, i, (long long)(0ull - x));
    }
}

template <template <int> class L>
static int bpk_unary_dispatch(int op, cudaStream_t s, void *out, int out_dt,
                              const void *a, int a_dt, int64_t n)
{
    switch (op) {
    case BP_OP_RECIPROCAL: return L<BP_OP_RECIPROCAL>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_EXP: return L<BP_OP_EXP>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_LOG: return L<BP_OP_LOG>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_SIN: return L<BP_OP_SIN>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_COS: return L<BP_OP_COS>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_TANH: return L<BP_OP_TANH>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_SQRT: return L<BP_OP_SQRT>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_RSQRT: return L<BP_OP_RSQRT>::run(s, out, out_dt, a, a_dt, n);
    case BP_OP_NEG: return L<BP_OP_NEG>::run(s, out, out_dt, a, a_dt, n);
    }
    return (int)cudaErrorInvalidValue;
}

/* Launches nothing: dispatching through it tells whether op is known. */
template <int OP> struct bpk_unary_known {
    static int run(cudaStream_t, void *, int, const void *, int, int64_t)
    {
        return 0;
    }
};

template <int OP> struct bpk_unary_launch_f32 {
    static int run(cudaStream_t s, void *out, int out_dt, const void *a,
                   int a_dt, int64_t n)
    {
        bpk_unary_kernel_f32<OP>
            <<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt, n);
        return bpk_launched();
    }
};

template <int OP> struct bpk_unary_launch_f64 {
    static int run(cudaStream_t s, void *out, int out_dt, const void *a,
                   int a_dt, int64_t n)
    {
        bpk_unary_kernel_f64<OP>
            <<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt, n);
        return bpk_launched();
    }
};

extern "C" int bpk_unary(void *stream, int op, void *out, int out_dt,
                         const void *a, int a_dt, int64_t n)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(a_dt) ||
        bpk_unary_dispatch<bpk_unary_known>(op, s, out, out_dt, a, a_dt, n))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    if (op == BP_OP_NEG && out_dt == BPK_F16 && a_dt == BPK_F16) {
        bpk_neg_f16<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(
            (uint16_t *)out, (const uint16_t *)a, n);
        return bpk_launched();
    }
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        return bpk_unary_dispatch<bpk_unary_launch_f32>(op, s, out, out_dt, a,
                                                        a_dt, n);
    case BPK_CT_F64:
        return bpk_unary_dispatch<bpk_unary_launch_f64>(op, s, out, out_dt, a,
                                                        a_dt, n);
    default:
        if (op != BP_OP_NEG)
            return (int)cudaErrorInvalidValue;
        bpk_neg_int<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, out_dt, a, a_dt,
                                                          n);
        return bpk_launched();
    }
}
