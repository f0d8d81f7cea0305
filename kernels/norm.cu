/* RMSNorm on the GPU (transformers' LlamaRMSNorm in eager PyTorch):
 *   s = sum(x*x) in fp32, r = rsqrt(s / H + eps), y = x*r rounded to the
 *   model dtype, out = w*y rounded.
 * One block per row; the sum of squares is a fixed-order block reduction
 * (bpk_rows.cuh).  Squares, sums, products and the division use the _rn
 * intrinsics, which are never contracted into an fma whatever -fmad says;
 * rsqrtf is CUDA's (what torch.rsqrt calls on the device). */
#include "bpk_rows.cuh"

__global__ void bpk_rmsnorm_kernel(void *out, const void *x, const void *w,
                                   int dt, int64_t cols, float eps)
{
    __shared__ float red[BPK_THREADS];
    const int64_t base = (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS) {
        float v = bpk_load_f32(x, dt, base + j);
        s = __fadd_rn(s, __fmul_rn(v, v));
    }
    s = bpk_block_sum(s, red);
    float r = rsqrtf(__fadd_rn(__fdiv_rn(s, (float)cols), eps));
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS) {
        float y = bpk_num<float>::round(
            dt, __fmul_rn(bpk_load_f32(x, dt, base + j), r));
        bpk_store_f32(out, dt, base + j, __fmul_rn(bpk_load_f32(w, dt, j), y));
    }
}

extern "C" int bpk_rmsnorm(void *stream, void *out, const void *x,
                           const void *w, int dt, int64_t rows, int64_t cols,
                           float eps)
{
    if (!bpk_model_dt(dt) || rows < 0 || cols < 0 || rows > 0x7fffffff)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || cols == 0)
        return 0;
    bpk_rmsnorm_kernel<<<(unsigned)rows, BPK_THREADS, 0,
                         (cudaStream_t)stream>>>(out, x, w, dt, cols, eps);
    return bpk_launched();
}
