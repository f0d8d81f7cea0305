/* The known-answer screen's kernels (bpk.h says how work is pinned to
 * SMs).  Each kernel computes something whose bits the host knows or can
 * compare across SMs: correctly rounded arithmetic (the _rn intrinsics,
 * whatever -fmad or -prec-div say), CUDA's math library as the backend's
 * kernels call it, the special function unit through its PTX
 * instructions, exact integer GEMMs on the FMA pipes and on the tensor
 * cores, and memory patterns in global and shared memory. */
#include <mma.h>

#include "bpk_common.cuh"

__device__ __forceinline__ unsigned bpk_smid(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned bpk_nsmid(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
    return r;
}

/* The next work item of the SM this block runs on, the same for every
 * thread of the block, or -1 when that SM's queue is exhausted (or the SM
 * is not wanted).  %smid is read per item, not once per block, so that a
 * block resumed elsewhere after preemption still files its work under
 * the SM that did it. */
__device__ __forceinline__ int bpk_pin_next(const bpk_pin_t &p, unsigned *sm)
{
    __shared__ unsigned s_sm, s_item;
    __syncthreads(); /* every thread is done with the previous item */
    if (threadIdx.x == 0) {
        unsigned id = bpk_smid(), item = p.items;
        if (id < p.nsmid && p.want[id])
            item = atomicAdd(&p.next[id], 1u);
        s_sm = id;
        s_item = item;
    }
    __syncthreads();
    *sm = s_sm;
    return s_item < p.items ? (int)s_item : -1;
}

/* Blocks for a grid that fills the device: all resident at once. */
static int bpk_fill_grid(const void *kernel, int threads, size_t smem,
                         unsigned *blocks)
{
    int dev, sms, per;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel,
                                                          threads, smem);
    if (e != cudaSuccess)
        return (int)e;
    *blocks = (unsigned)((per > 0 ? per : 1) * sms);
    return 0;
}

/* ---- the SM map ------------------------------------------------------- */

__global__ void bpk_smids_kernel(unsigned *seen, unsigned *nsmid)
{
    if (threadIdx.x == 0) {
        unsigned id = bpk_smid();
        if (id < BPK_SCR_MAXSM)
            atomicAdd(&seen[id], 1u);
        if (blockIdx.x == 0)
            *nsmid = bpk_nsmid();
    }
    /* Stay a little, so that later blocks go to other SMs rather than
     * to one that has already finished. */
    __nanosleep(20000);
}

extern "C" int bpk_screen_smids(void *stream, unsigned *seen, unsigned *nsmid)
{
    unsigned blocks;
    int rc = bpk_fill_grid((const void *)bpk_smids_kernel, 128, 0, &blocks);
    if (rc)
        return rc;
    bpk_smids_kernel<<<blocks, 128, 0, (cudaStream_t)stream>>>(seen, nsmid);
    return (int)cudaGetLastError();
}

/* ---- elementwise ------------------------------------------------------ */

__device__ __forceinline__ float bpk_sfu(int op, float x)
{
    float r;
    switch (op) {
    case BPK_SCR_EX2A: asm volatile("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case BPK_SCR_LG2A: asm volatile("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case BPK_SCR_SINA: asm volatile("sin.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    default: asm volatile("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    }
    return r;
}

template <int OP> __device__ __forceinline__ float bpk_scr_f32(float x, float y, float z)
{
    switch (OP) {
    case BPK_SCR_DIV32: return __fdiv_rn(x, y);
    case BPK_SCR_SQRT32: return __fsqrt_rn(x);
    case BPK_SCR_RCP32: return __frcp_rn(x);
    case BPK_SCR_FMA32: return __fmaf_rn(x, y, z);
    case BPK_SCR_POW32: return powf(x, y);
    case BPK_SCR_EXP32: return expf(x);
    case BPK_SCR_LOG32: return logf(x);
    case BPK_SCR_SIN32: return sinf(x);
    case BPK_SCR_COS32: return cosf(x);
    case BPK_SCR_TANH32: return tanhf(x);
    default: return bpk_sfu(OP, x);
    }
}

template <int OP> __device__ __forceinline__ double bpk_scr_f64(double x, double y, double z)
{
    switch (OP) {
    case BPK_SCR_DIV64: return __ddiv_rn(x, y);
    case BPK_SCR_SQRT64: return __dsqrt_rn(x);
    default: return __fma_rn(x, y, z);
    }
}

template <int OP> __device__ __forceinline__ uint16_t bpk_scr_h16(uint16_t x, uint16_t y, uint16_t z)
{
    if (OP == BPK_SCR_FMA16)
        return __half_as_ushort(__hfma(__ushort_as_half(x), __ushort_as_half(y),
                                       __ushort_as_half(z)));
    return __bfloat16_as_ushort(__hfma(__ushort_as_bfloat16(x), __ushort_as_bfloat16(y),
                                       __ushort_as_bfloat16(z)));
}

/* T: the element type as bits (uint32_t, unsigned long long, uint16_t). */
template <int OP, typename T>
__global__ void __launch_bounds__(256) bpk_scr_elem_kernel(bpk_pin_t pin, T *out,
                                                           const T *x, const T *y,
                                                           const T *z, int64_t n)
{
    unsigned sm;
    int item;
    while ((item = bpk_pin_next(pin, &sm)) >= 0) {
#pragma unroll
        for (int k = 0; k < BPK_SCR_CHUNK / 256; k++) {
            int64_t i = (int64_t)item * BPK_SCR_CHUNK + k * 256 + threadIdx.x;
            if (i >= n)
                break;
            T r;
            if (sizeof(T) == 4) {
                float v = bpk_scr_f32<OP>(__uint_as_float((uint32_t)x[i]),
                                          y ? __uint_as_float((uint32_t)y[i]) : 0.0f,
                                          z ? __uint_as_float((uint32_t)z[i]) : 0.0f);
                r = (T)__float_as_uint(v);
            } else if (sizeof(T) == 8) {
                double v = bpk_scr_f64<OP>(
                    __longlong_as_double((long long)x[i]),
                    y ? __longlong_as_double((long long)y[i]) : 0.0,
                    z ? __longlong_as_double((long long)z[i]) : 0.0);
                r = (T)__double_as_longlong(v);
            } else {
                r = (T)bpk_scr_h16<OP>((uint16_t)x[i], (uint16_t)y[i], (uint16_t)z[i]);
            }
            if ((int)sm == pin.inject_sm && i == 0)
                r ^= (T)1;
            out[(int64_t)sm * n + i] = r;
        }
    }
}

template <int OP, typename T>
static int bpk_scr_elem_launch(cudaStream_t s, bpk_pin_t pin, void *out, const void *x,
                               const void *y, const void *z, int64_t n)
{
    unsigned blocks;
    int rc = bpk_fill_grid((const void *)bpk_scr_elem_kernel<OP, T>, 256, 0, &blocks);
    if (rc)
        return rc;
    bpk_scr_elem_kernel<OP, T><<<blocks, 256, 0, s>>>(pin, (T *)out, (const T *)x,
                                                     (const T *)y, (const T *)z, n);
    return (int)cudaGetLastError();
}

extern "C" int bpk_screen_elem(void *stream, int op, bpk_pin_t pin, void *out,
                               const void *x, const void *y, const void *z, int64_t n)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (n <= 0)
        return 0;
    if ((uint64_t)(n + BPK_SCR_CHUNK - 1) / BPK_SCR_CHUNK != pin.items)
        return (int)cudaErrorInvalidValue;
    typedef unsigned long long u64;
#define F32(o) case o: return bpk_scr_elem_launch<o, uint32_t>(s, pin, out, x, y, z, n)
#define F64(o) case o: return bpk_scr_elem_launch<o, u64>(s, pin, out, x, y, z, n)
#define H16(o) case o: return bpk_scr_elem_launch<o, uint16_t>(s, pin, out, x, y, z, n)
    switch (op) {
        F32(BPK_SCR_DIV32); F32(BPK_SCR_SQRT32); F32(BPK_SCR_RCP32); F32(BPK_SCR_FMA32);
        F64(BPK_SCR_DIV64); F64(BPK_SCR_SQRT64); F64(BPK_SCR_FMA64);
        H16(BPK_SCR_FMA16); H16(BPK_SCR_FMABF16);
        F32(BPK_SCR_POW32); F32(BPK_SCR_EXP32); F32(BPK_SCR_LOG32); F32(BPK_SCR_SIN32);
        F32(BPK_SCR_COS32); F32(BPK_SCR_TANH32);
        F32(BPK_SCR_EX2A); F32(BPK_SCR_LG2A); F32(BPK_SCR_SINA); F32(BPK_SCR_RSQA);
    }
#undef F32
#undef F64
#undef H16
    return (int)cudaErrorInvalidValue;
}

/* ---- GEMM ------------------------------------------------------------- */

/* 32x32 outputs per item: thread t computes column t % 32 of rows
 * t / 32 + 8j, j < 4, each a fmaf chain over k in order. */
__global__ void __launch_bounds__(256) bpk_scr_ffma_kernel(bpk_pin_t pin, float *out,
                                                           const float *a, const float *b,
                                                           int m, int n, int k)
{
    unsigned sm;
    int item;
    int tn = n / 32;
    while ((item = bpk_pin_next(pin, &sm)) >= 0) {
        int r0 = (item / tn) * 32 + (int)threadIdx.x / 32;
        int col = (item % tn) * 32 + (int)threadIdx.x % 32;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int kk = 0; kk < k; kk++) {
            float bv = b[(int64_t)kk * n + col];
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[j] = __fmaf_rn(a[(int64_t)(r0 + 8 * j) * k + kk], bv, acc[j]);
        }
        float *o = out + (int64_t)sm * m * n;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t e = (int64_t)(r0 + 8 * j) * n + col;
            float v = acc[j];
            if ((int)sm == pin.inject_sm && e == 0)
                v = __uint_as_float(__float_as_uint(v) ^ 1u);
            o[e] = v;
        }
    }
}

/* 32x64 outputs per item, eight warps of one 16x16 tile each. */
template <typename T>
__global__ void __launch_bounds__(256) bpk_scr_mma_kernel(bpk_pin_t pin, float *out,
                                                          const T *a, const T *b,
                                                          int m, int n, int k)
{
    using namespace nvcuda;
    unsigned sm;
    int item;
    int tn = n / 64, warp = (int)threadIdx.x / 32;
    while ((item = bpk_pin_next(pin, &sm)) >= 0) {
        int row = (item / tn) * 32 + (warp / 4) * 16;
        int col = (item % tn) * 64 + (warp % 4) * 16;
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
        wmma::fill_fragment(fc, 0.0f);
        for (int kk = 0; kk < k; kk += 16) {
            wmma::load_matrix_sync(fa, a + (int64_t)row * k + kk, k);
            wmma::load_matrix_sync(fb, b + (int64_t)kk * n + col, n);
            wmma::mma_sync(fc, fa, fb, fc);
        }
        float *o = out + (int64_t)sm * m * n;
        wmma::store_matrix_sync(o + (int64_t)row * n + col, fc, n, wmma::mem_row_major);
        if ((int)sm == pin.inject_sm && row == 0 && col == 0) {
            __syncwarp();
            if (threadIdx.x % 32 == 0)
                o[0] = __uint_as_float(__float_as_uint(o[0]) ^ 1u);
        }
    }
}

extern "C" int bpk_screen_gemm(void *stream, int kind, bpk_pin_t pin, float *out,
                               const void *a, const void *b, int m, int n, int k)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned blocks;
    int rc;
    if (m <= 0 || n <= 0 || k <= 0)
        return (int)cudaErrorInvalidValue;
    if (kind == BPK_SCR_GEMM_FFMA) {
        if (m % 32 || n % 32 || pin.items != (unsigned)(m / 32 * (n / 32)))
            return (int)cudaErrorInvalidValue;
        if ((rc = bpk_fill_grid((const void *)bpk_scr_ffma_kernel, 256, 0, &blocks)))
            return rc;
        bpk_scr_ffma_kernel<<<blocks, 256, 0, s>>>(pin, out, (const float *)a,
                                                   (const float *)b, m, n, k);
        return (int)cudaGetLastError();
    }
    if (m % 32 || n % 64 || k % 16 || pin.items != (unsigned)(m / 32 * (n / 64)))
        return (int)cudaErrorInvalidValue;
    if (kind == BPK_SCR_GEMM_MMA16) {
        if ((rc = bpk_fill_grid((const void *)bpk_scr_mma_kernel<__half>, 256, 0, &blocks)))
            return rc;
        bpk_scr_mma_kernel<__half><<<blocks, 256, 0, s>>>(pin, out, (const __half *)a,
                                                          (const __half *)b, m, n, k);
    } else if (kind == BPK_SCR_GEMM_MMABF16) {
        if ((rc = bpk_fill_grid((const void *)bpk_scr_mma_kernel<__nv_bfloat16>, 256, 0,
                                &blocks)))
            return rc;
        bpk_scr_mma_kernel<__nv_bfloat16><<<blocks, 256, 0, s>>>(
            pin, out, (const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, m, n, k);
    } else {
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

/* ---- memory ----------------------------------------------------------- */

__global__ void __launch_bounds__(256) bpk_scr_mem_kernel(int pass, bpk_pin_t pin,
                                                          uint32_t *region, int64_t per_sm,
                                                          int pattern, uint32_t salt)
{
    unsigned sm;
    int item;
    while ((item = bpk_pin_next(pin, &sm)) >= 0) {
        for (int k = 0; k < BPK_SCR_CHUNK / 256; k++) {
            int64_t i = (int64_t)item * BPK_SCR_CHUNK + k * 256 + threadIdx.x;
            if (i >= per_sm)
                break;
            int64_t w = (int64_t)sm * per_sm + i;
            if (pass == 0) {
                region[w] = BPK_SCR_PATTERN(pattern, w, salt);
            } else {
                /* Past L1: the word comes from L2 or memory. */
                uint32_t v = ~__ldcg(region + w);
                if ((int)sm == pin.inject_sm && i == 0)
                    v ^= 1u;
                region[w] = v;
            }
        }
    }
}

extern "C" int bpk_screen_mem(void *stream, int pass, bpk_pin_t pin, uint32_t *region,
                              int64_t per_sm, int pattern, uint32_t salt)
{
    unsigned blocks;
    if (per_sm <= 0 || (uint64_t)(per_sm + BPK_SCR_CHUNK - 1) / BPK_SCR_CHUNK != pin.items ||
        pattern < BPK_SCR_ONES || pattern > BPK_SCR_ADDR)
        return (int)cudaErrorInvalidValue;
    int rc = bpk_fill_grid((const void *)bpk_scr_mem_kernel, 256, 0, &blocks);
    if (rc)
        return rc;
    bpk_scr_mem_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(pass, pin, region, per_sm,
                                                                 pattern, salt);
    return (int)cudaGetLastError();
}

__global__ void __launch_bounds__(256) bpk_scr_smem_kernel(bpk_pin_t pin, uint32_t *out,
                                                           uint32_t salt)
{
    extern __shared__ uint32_t words[];
    const int W = BPK_SCR_SMEM_WORDS;
    unsigned sm;
    int item;
    while ((item = bpk_pin_next(pin, &sm)) >= 0) {
        int p = item % 3;
        for (int j = threadIdx.x; j < W; j += 256)
            words[j] = BPK_SCR_PATTERN(p, (int64_t)item * W + j, salt);
        __syncthreads();
        uint32_t *o = out + ((int64_t)sm * pin.items + item) * W;
        for (int j = threadIdx.x; j < W; j += 256) {
            uint32_t v = ~words[(j + BPK_SCR_SMEM_SHIFT) % W];
            if ((int)sm == pin.inject_sm && item == 0 && j == 0)
                v ^= 1u;
            o[j] = v;
        }
    }
}

extern "C" int bpk_screen_smem(void *stream, bpk_pin_t pin, uint32_t *out, uint32_t salt)
{
    size_t smem = BPK_SCR_SMEM_WORDS * sizeof(uint32_t);
    unsigned blocks;
    int rc = bpk_fill_grid((const void *)bpk_scr_smem_kernel, 256, smem, &blocks);
    if (rc)
        return rc;
    bpk_scr_smem_kernel<<<blocks, 256, smem, (cudaStream_t)stream>>>(pin, out, salt);
    return (int)cudaGetLastError();
}

__global__ void bpk_scr_flip_kernel(unsigned char *p, int64_t byte, int bit)
{
    p[byte] ^= (unsigned char)(1u << bit);
}

extern "C" int bpk_screen_flip(void *stream, void *p, int64_t byte, int bit)
{
    bpk_scr_flip_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((unsigned char *)p, byte, bit & 7);
    return (int)cudaGetLastError();
}
