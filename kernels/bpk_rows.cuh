/* The fixed order of the `fixed` formulation's row kernels (rms_norm in
 * layer_norm.cu, softmax and log_softmax in softmax_rows.cu): block
 * reductions in one order, and IEEE arithmetic in opmath (float for fp32,
 * bf16 and fp16; double for fp64).
 *
 * A reduction over a row runs in one block of BPK_THREADS threads: thread
 * k first folds elements k, k + BPK_THREADS, ... in order, then the
 * BPK_THREADS partial results are combined in a fixed binary tree (k with
 * k + 128, then k + 64, ...).  The order depends on nothing but the row
 * length, so a result is the same on every run.  The _rn intrinsics are
 * never contracted into an fma, whatever -fmad says. */
#ifndef BPK_ROWS_CUH
#define BPK_ROWS_CUH

#include "bpk_common.cuh"

/* One IEEE operation each, rounded to nearest; rsqrt, exp and log are
 * CUDA's (what torch.rsqrt, exp and log call on the device). */
template <typename T> struct bpk_ieee;
template <> struct bpk_ieee<float> {
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
    static __device__ __forceinline__ float max(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ float rsqrt(float a) { return rsqrtf(a); }
    static __device__ __forceinline__ float exp(float a) { return expf(a); }
    static __device__ __forceinline__ float log(float a) { return logf(a); }
};
template <> struct bpk_ieee<double> {
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
    static __device__ __forceinline__ double max(double a, double b) { return fmax(a, b); }
    static __device__ __forceinline__ double rsqrt(double a) { return ::rsqrt(a); }
    static __device__ __forceinline__ double exp(double a) { return ::exp(a); }
    static __device__ __forceinline__ double log(double a) { return ::log(a); }
};

/* Sum over the block; red holds BPK_THREADS values.  Every thread gets it. */
template <typename T> __device__ __forceinline__ T bpk_block_sum(T v, T *red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int k = BPK_THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k)
            red[threadIdx.x] = bpk_ieee<T>::add(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    T r = red[0];
    __syncthreads();
    return r;
}

/* Maximum over the block (order-free; NaN is not expected). */
template <typename T> __device__ __forceinline__ T bpk_block_max(T v, T *red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int k = BPK_THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k)
            red[threadIdx.x] = bpk_ieee<T>::max(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    T r = red[0];
    __syncthreads();
    return r;
}

#endif
