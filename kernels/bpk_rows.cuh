/* Helpers of the row-wise kernels of the layer stack (norm.cu, softmax.cu,
 * rope.cu, swiglu.cu, embed.cu): the model dtypes they accept and block
 * reductions in a fixed order.
 *
 * A reduction over a row runs in one block of BPK_THREADS threads: thread
 * k first folds elements k, k + BPK_THREADS, ... in order, then the
 * BPK_THREADS partial results are combined in a fixed binary tree (k with
 * k + 128, then k + 64, ...).  The order depends on nothing but the row
 * length, so a result is the same on every run. */
#ifndef BPK_ROWS_CUH
#define BPK_ROWS_CUH

#include "bpk_common.cuh"

/* fp32, bf16, fp16: the dtypes a model runs in. */
static inline bool bpk_model_dt(int dt)
{
    return dt == BPK_F32 || dt == BPK_BF16 || dt == BPK_F16;
}

/* Sum over the block; red holds BPK_THREADS floats.  Every thread gets it. */
__device__ __forceinline__ float bpk_block_sum(float v, float *red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int k = BPK_THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k)
            red[threadIdx.x] = __fadd_rn(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

/* Maximum over the block (order-free; NaN is not expected). */
__device__ __forceinline__ float bpk_block_max(float v, float *red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int k = BPK_THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

#endif
