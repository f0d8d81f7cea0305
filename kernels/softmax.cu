/* Row softmaxes of the layer stack on the GPU, one block per row, sums and
 * maxima in the fixed order of bpk_rows.cuh.
 *
 * bpk_causal_softmax: transformers' eager Llama attention after q k^T:
 *   s = scores / sqrt(d), rounded to the model dtype; PyTorch on CUDA
 *     computes a tensor divided by a Python number as s * (1/b), the
 *     reciprocal rounded to float on the host (BPK_SCALE_MUL, the caller
 *     passes 1/b); BPK_SCALE_DIV divides (the CPU formulation);
 *   + causal mask: entries j > i (i the row within its [t, t] matrix) get
 *     the dtype's lowest value, whose exp underflows to 0, so they are
 *     written as 0 and left out of the max and the sum;
 *   softmax in fp32: m = max, e = expf(s - m), p = e / sum(e), rounded to
 *     the model dtype (softmax(..., dtype=float32).to(dtype)).
 * In place: each thread rewrites only the elements it reads last.
 *
 * bpk_log_softmax: out (fp32) = (x - max) - logf(sum(expf(x - max))), as
 * PyTorch's LogSoftMaxForwardEpilogue, on x widened to fp32. */
#include "bpk_rows.cuh"

__device__ __forceinline__ float bpk_scaled(const void *s, int dt, int64_t i,
                                            float scale, int mode)
{
    float v = bpk_load_f32(s, dt, i);
    v = mode == BPK_SCALE_MUL ? __fmul_rn(v, scale) : __fdiv_rn(v, scale);
    return bpk_num<float>::round(dt, v);
}

__global__ void bpk_causal_softmax_kernel(void *s, int dt, int64_t t,
                                          float scale, int mode)
{
    __shared__ float red[BPK_THREADS];
    const int64_t row = blockIdx.x, valid = row % t + 1, base = row * t;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < valid; j += BPK_THREADS)
        m = fmaxf(m, bpk_scaled(s, dt, base + j, scale, mode));
    m = bpk_block_max(m, red);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < valid; j += BPK_THREADS)
        sum = __fadd_rn(sum,
                        expf(__fsub_rn(bpk_scaled(s, dt, base + j, scale, mode),
                                       m)));
    sum = bpk_block_sum(sum, red);
    for (int64_t j = threadIdx.x; j < t; j += BPK_THREADS) {
        float p = 0.0f;
        if (j < valid)
            p = __fdiv_rn(
                expf(__fsub_rn(bpk_scaled(s, dt, base + j, scale, mode), m)),
                sum);
        bpk_store_f32(s, dt, base + j, p);
    }
}

extern "C" int bpk_causal_softmax(void *stream, void *scores, int dt,
                                  int64_t batch, int64_t t, float scale,
                                  int mode)
{
    if (!bpk_model_dt(dt) || batch < 0 || t < 0 ||
        (mode != BPK_SCALE_MUL && mode != BPK_SCALE_DIV) ||
        (t > 0 && batch > 0x7fffffff / t))
        return (int)cudaErrorInvalidValue;
    if (batch == 0 || t == 0)
        return 0;
    bpk_causal_softmax_kernel<<<(unsigned)(batch * t), BPK_THREADS, 0,
                                (cudaStream_t)stream>>>(scores, dt, t, scale,
                                                        mode);
    return bpk_launched();
}

__global__ void bpk_log_softmax_kernel(float *out, const void *x, int dt,
                                       int64_t cols)
{
    __shared__ float red[BPK_THREADS];
    const int64_t base = (int64_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS)
        m = fmaxf(m, bpk_load_f32(x, dt, base + j));
    m = bpk_block_max(m, red);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS)
        sum = __fadd_rn(sum, expf(__fsub_rn(bpk_load_f32(x, dt, base + j), m)));
    sum = bpk_block_sum(sum, red);
    float ls = logf(sum);
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS)
        out[base + j] = __fsub_rn(__fsub_rn(bpk_load_f32(x, dt, base + j), m), ls);
}

extern "C" int bpk_log_softmax(void *stream, float *out, const void *x,
                               int dt, int64_t rows, int64_t cols)
{
    if (!bpk_model_dt(dt) || rows < 0 || cols < 0 || rows > 0x7fffffff)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || cols == 0)
        return 0;
    bpk_log_softmax_kernel<<<(unsigned)rows, BPK_THREADS, 0,
                             (cudaStream_t)stream>>>(out, x, dt, cols);
    return bpk_launched();
}
