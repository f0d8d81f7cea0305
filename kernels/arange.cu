/* arange on the GPU, as ATen's arange_cuda_out (RangeFactories.cu):
 *
 *   gpu_kernel_with_index(r, [xstart, xstep](int64_t ind) -> scalar_t {
 *       accscalar_t inc = xstep * static_cast<accscalar_t>(ind);
 *       accscalar_t val = xstart + inc;
 *       return static_cast<scalar_t>(val);
 *   });
 *
 * with accscalar_t = at::acc_type<scalar_t, true>: float for f32, bf16 and
 * f16, double for f64, int64 for every integer type; xstart and xstep are
 * the Python numbers converted to accscalar_t on the host.  The two
 * statements are written the same way so that nvcc (-fmad=true) contracts
 * them into one fma.rn exactly as it does PyTorch's lambda; for a nonzero
 * start this is where the GPU departs from the CPU's double-precision
 * chunk base.  The length comes from the caller (computed in double, as
 * ATen does, by bp_arange_length). */
#include "bpk_common.cuh"

__global__ void bpk_arange_f32(void *out, int dt, int64_t n, float xstart,
                               float xstep)
{
    BPK_FOR(ind, n)
    {
        float inc = xstep * static_cast<float>(ind);
        float val = xstart + inc;
        bpk_store_f32(out, dt, ind, val);
    }
}

__global__ void bpk_arange_f64(void *out, int dt, int64_t n, double xstart,
                               double xstep)
{
    BPK_FOR(ind, n)
    {
        double inc = xstep * static_cast<double>(ind);
        double val = xstart + inc;
        bpk_store_f64(out, dt, ind, val);
    }
}

/* Integer ranges in int64; unsigned arithmetic gives the two's-complement
 * wrap-around PyTorch's signed arithmetic produces in practice, without
 * undefined behaviour. */
__global__ void bpk_arange_i64(void *out, int dt, int64_t n, long long xstart,
                               long long xstep)
{
    BPK_FOR(ind, n)
    {
        unsigned long long inc =
            (unsigned long long)xstep * (unsigned long long)ind;
        long long val = (long long)((unsigned long long)xstart + inc);
        bpk_store_i64(out, dt, ind, val);
    }
}

extern "C" int bpk_arange(void *stream, void *out, int dt, int64_t n,
                          double start, double step)
{
    if (!bpk_dtype_ok(dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    switch (bpk_compute_type(dt)) {
    case BPK_CT_F32:
        bpk_arange_f32<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(
            out, dt, n, (float)start, (float)step);
        break;
    case BPK_CT_F64:
        bpk_arange_f64<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, dt, n,
                                                             start, step);
        break;
    default:
        /* Scalar::to<int64_t>() of a Python float truncates. */
        bpk_arange_i64<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(
            out, dt, n, (long long)start, (long long)step);
        break;
    }
    return bpk_launched();
}
