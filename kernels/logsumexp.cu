/* logsumexp's elementwise steps on the GPU, around the sum of PyTorch's
 * composite (aten/src/ATen/native/ReduceOps.cpp, logsumexp_out_impl):
 *   maxes = at::amax(self, dims, true)    NaN if any element is NaN
 *   maxes.masked_fill_(|maxes| == inf, 0)
 *   (self - maxes).exp_()                 bpk_lse_exp: x - m rounded to
 *                                         the dtype, exp of that rounded
 *   at::sum_out(result, that, dims)       treereduce.cu (Reduce.cuh's order)
 *   result.log_().add_(maxes)             bpk_lse_finish: log rounded, + m
 *                                         rounded
 * Each step computes in opmath (float for bf16/fp16, double for fp64) and
 * rounds to the dtype, as the elementwise kernels do; expf / logf are
 * CUDA's (std::exp, std::log on the device).  An integer input reaches the
 * dtype (fp32) first, as logsumexp converts it. */
#include "bpk_common.cuh"

template <typename A>
__global__ void lse_exp_kernel(void *e, void *m, const void *in, int in_dt, int dt, int64_t len,
                               int64_t inner, int64_t rows)
{
    BPK_FOR(r, rows)
    {
        const int64_t base = (r / inner) * len * inner + r % inner;
        A mx = -(A)INFINITY;
        bool nan = false;
        for (int64_t j = 0; j < len; j++) {
            A x = bpk_num<A>::round(dt, bpk_num<A>::load(in, in_dt, base + j * inner));
            nan = nan || x != x;
            mx = x > mx ? x : mx;
        }
        if (nan)
            mx = (A)NAN;
        if (mx == (A)INFINITY || mx == -(A)INFINITY)
            mx = (A)0;
        bpk_num<A>::store(m, dt, r, mx);
        for (int64_t j = 0; j < len; j++) {
            A x = bpk_num<A>::round(dt, bpk_num<A>::load(in, in_dt, base + j * inner));
            A d = bpk_num<A>::round(dt, x - mx);
            bpk_num<A>::store(e, dt, base + j * inner, sizeof(A) == 8 ? (A)exp((double)d)
                                                                     : (A)expf((float)d));
        }
    }
}

template <typename A>
__global__ void lse_finish_kernel(void *out, const void *m, int dt, int64_t rows)
{
    BPK_FOR(r, rows)
    {
        A s = bpk_num<A>::load(out, dt, r);
        A l = bpk_num<A>::round(dt, sizeof(A) == 8 ? (A)log((double)s) : (A)logf((float)s));
        bpk_num<A>::store(out, dt, r, l + bpk_num<A>::load(m, dt, r));
    }
}

extern "C" int bpk_lse_exp(void *stream, void *e, void *m, const void *in, int in_dt, int dt,
                           int64_t outer, int64_t len, int64_t inner)
{
    if ((dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16) ||
        !bpk_dtype_ok(in_dt) || outer < 0 || len < 0 || inner < 0)
        return (int)cudaErrorInvalidValue;
    const int64_t rows = outer * inner;
    if (rows == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        lse_exp_kernel<double><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(e, m, in, in_dt, dt, len,
                                                                        inner, rows);
    else
        lse_exp_kernel<float><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(e, m, in, in_dt, dt, len,
                                                                       inner, rows);
    return bpk_launched();
}

extern "C" int bpk_lse_finish(void *stream, void *out, const void *m, int dt, int64_t rows)
{
    if ((dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16) || rows < 0)
        return (int)cudaErrorInvalidValue;
    if (rows == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        lse_finish_kernel<double><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(out, m, dt, rows);
    else
        lse_finish_kernel<float><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(out, m, dt, rows);
    return bpk_launched();
}
