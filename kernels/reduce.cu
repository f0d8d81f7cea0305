/* sum on the GPU in a fixed, documented order, one thread per output
 * element, so that the result does not depend on the launch geometry:
 *
 *  - sequential: acc = 0; acc = acc + x[k] for k = 0, 1, ..., len-1;
 *  - pairwise:   S(x[0:n]) = S(x[0:n/2]) + S(x[n/2:n]) with n/2 rounded
 *                down, S of one element the element, S of none 0.
 *
 * The accumulator is the compute type (float for f32/bf16/f16 results,
 * as PyTorch's acc_type, double for f64, int64 for integers) and the
 * result is rounded once to the output dtype.  The pairwise recursion
 * runs on an explicit stack (no device recursion, so ptxas can size the
 * frame); 40 levels cover lengths below 2^39, far beyond the largest
 * tensor bitprobe allocates (BP_BUF_MAX_BYTES), and keep the frame under
 * the default 1 KiB stack of a thread. */
#include "bpk_sum.cuh"

template <typename T>
__global__ void bpk_sum_kernel(int pairwise, void *out, int out_dt,
                               const void *in, int in_dt, int64_t len,
                               int64_t inner, int64_t n)
{
    BPK_FOR(e, n)
    {
        int64_t i = e % inner, o = e / inner;
        int64_t base = o * len * inner + i;
        T r = pairwise ? bpk_sum_pairwise<T>(in, in_dt, base, inner, len, out_dt)
                       : bpk_sum_sequential<T>(in, in_dt, base, inner, len, out_dt);
        bpk_num<T>::store(out, out_dt, e, r);
    }
}

extern "C" int bpk_sum(void *stream, int pairwise, void *out, int out_dt,
                       const void *in, int in_dt, int64_t outer, int64_t len,
                       int64_t inner)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(in_dt) || outer < 0 ||
        len < 0 || inner < 0 || (pairwise != 0 && pairwise != 1) ||
        len >= ((int64_t)1 << (BPK_PAIRWISE_DEPTH - 1)))
        return (int)cudaErrorInvalidValue;
    int64_t n = outer * inner;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(n);
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        bpk_sum_kernel<float><<<g, BPK_THREADS, 0, s>>>(
            pairwise, out, out_dt, in, in_dt, len, inner, n);
        break;
    case BPK_CT_F64:
        bpk_sum_kernel<double><<<g, BPK_THREADS, 0, s>>>(
            pairwise, out, out_dt, in, in_dt, len, inner, n);
        break;
    default:
        bpk_sum_kernel<long long><<<g, BPK_THREADS, 0, s>>>(
            pairwise, out, out_dt, in, in_dt, len, inner, n);
        break;
    }
    return bpk_launched();
}
