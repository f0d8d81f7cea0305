/* softmax and log_softmax on the GPU where PyTorch 2.11 does not take the
 * persistent warp kernel (rows.cu replays that one): aten/src/ATen/native/
 * cuda/SoftMax.cu, host_softmax<..., use_fast_softmax = false> (CUDA
 * builds; the fast variants are ROCm's), read at pytorch main.
 *
 * Nothing after the axis (inner size 1), rows of > 2048 values or > 8 KiB:
 *   one block per row of SoftMaxForward_getBlockSize(n) threads (min(n,
 *   1024) rounded up to a multiple of 32); each thread folds its elements
 *   in the order of the kernel the host picks, the maximum by fmaxf
 *   (MaxFloat, from the lowest float), then the sum of expf(x - max)
 *   (SumExpFloat, from 0); each fold combined over the block by
 *   cuda_utils::BlockReduce (warp shuffles down 16 ... 1, the warps'
 *   results by warp 0 the same way; Max is `a < b ? b : a`, Add `a + b`):
 *   - ceil(n / threads) < 10: cunn_SoftMaxForwardReg, thread t takes t,
 *     t + threads, ...;
 *   - else n < (sharedMemPerBlock - reduction bytes) / sizeof(T), input
 *     and output 16-byte aligned and n % ILP == 0 (ILP = 16 / sizeof(T)):
 *     cunn_SoftMaxForwardSmem, thread t takes the vectors of ILP values
 *     t, t + threads, ...;
 *   - else cunn_SoftMaxForward: ilpReduce, the row start's misalignment
 *     (shift = address % 16 / sizeof(T)) first, one value per thread,
 *     then vectors of ILP values, then a tail one value per thread.
 *   out = expf(x - max) / sum (SoftMaxForwardEpilogue) or x - max -
 *   logf(sum) (LogSoftMaxForwardEpilogue).
 * Inner size > 1: cunn_SpatialSoftMaxForward with SpatialSoftMax_
 *   getBlockSize's dim threads (a power of two, 1 unless inner <= 64 and
 *   n >= 64): thread x of a column folds d = x, x + dim threads, ... (Max,
 *   from the lowest float; then sum += expf(x - max)), combined by
 *   spatialBlockReduceX's shared-memory tree (k with k + half, ...); one
 *   thread sums the column in order when dim threads is 1.  The block's
 *   other dimension, the grid and the occupancy query only place columns;
 *   they do not change a column's arithmetic, so the launch here keeps one
 *   column per block.
 * fp64 runs the same kernels with double, exp and log.
 *
 * The `fixed` formulation (the layer stack's and invariance's) is
 * bitprobe's own kernel, any axis: one block of BPK_THREADS threads per
 * row, m = the row's maximum and s = sum(expf(x - m)) in the block order of
 * bpk_rows.cuh, then softmax expf(x - m) / s or log_softmax (x - m) -
 * logf(s), every operation an _rn intrinsic (double, exp and log for
 * fp64).  In place: each thread writes only the elements it reads. */
#include "bpk_common.cuh"
#include "bpk_rows.cuh"

#include <float.h>

#define SM_WARP 32        /* C10_WARP_SIZE */
#define SM_MAX_THREADS 1024
#define SM_ALIGN 16       /* ALIGN_BYTES */

enum { SM_REG, SM_SMEM, SM_ILP };

/* sizeof(scalar_t) of the float dtypes the softmaxes run in */
__host__ __device__ static inline int sm_size(int dt)
{
    return dt == BPK_F64 ? 8 : dt == BPK_F32 ? 4 : 2;
}

__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }
__device__ __forceinline__ float sm_log(float v) { return logf(v); }
__device__ __forceinline__ double sm_log(double v) { return log(v); }
template <typename A> __device__ __forceinline__ A sm_lowest();
template <> __device__ __forceinline__ float sm_lowest<float>() { return -FLT_MAX; }
template <> __device__ __forceinline__ double sm_lowest<double>() { return -DBL_MAX; }

/* Max and Add of SoftMax.cu */
template <typename A> __device__ __forceinline__ A sm_max(A a, A b) { return a < b ? b : a; }
template <typename A> __device__ __forceinline__ A sm_add(A a, A b) { return a + b; }

/* cuda_utils::BlockReduce, then blockReduceWarp's broadcast of thread 0's
 * result; red holds 32 values. */
template <typename A, bool MAX>
__device__ A sm_block_reduce(A val, A *red)
{
    const A identity = MAX ? sm_lowest<A>() : A(0);
    const int tid = threadIdx.x, lid = tid % SM_WARP, wid = tid / SM_WARP;
    for (int offset = SM_WARP >> 1; offset > 0; offset >>= 1) {
        A o = __shfl_down_sync(0xffffffffu, val, offset);
        val = MAX ? sm_max(val, o) : sm_add(val, o);
    }
    __syncthreads();
    if (lid == 0)
        red[wid] = val;
    __syncthreads();
    val = tid < (int)blockDim.x / SM_WARP ? red[lid] : identity;
    if (wid == 0) {
        for (int offset = SM_WARP >> 1; offset > 0; offset >>= 1) {
            A o = __shfl_down_sync(0xffffffffu, val, offset);
            val = MAX ? sm_max(val, o) : sm_add(val, o);
        }
    }
    if (tid == 0)
        red[0] = val;
    __syncthreads();
    return red[0];
}

/* The values of a row that this thread folds, in the order of the host's
 * kernel, through f. */
template <typename A, typename F>
__device__ __forceinline__ void sm_thread_values(int mode, int ilp, const void *in, int dt,
                                                 int64_t row, int n, int shift, F f)
{
    const int B = blockDim.x, t = threadIdx.x;
    if (mode == SM_REG) {
        for (int j = t; j < n; j += B)
            f(bpk_num<A>::load(in, dt, row + j));
        return;
    }
    if (mode == SM_SMEM) {
        for (int o = t; o * ilp < n; o += B)
            for (int i = 0; i < ilp; i++)
                f(bpk_num<A>::load(in, dt, row + (int64_t)o * ilp + i));
        return;
    }
    /* ilpReduce: data moved back by shift, one value per thread, then
     * blockDim.x further on */
    int offset = t, size = n;
    int64_t base = 0;
    if (shift > 0) {
        size += shift;
        if (offset >= shift && offset < size)
            f(bpk_num<A>::load(in, dt, row + offset - shift));
        size -= B > size ? size : B;
        base = B - shift;
    }
    const int last = size % (ilp * B);
    for (; offset * ilp < size - last; offset += B)
        for (int i = 0; i < ilp; i++)
            f(bpk_num<A>::load(in, dt, row + base + (int64_t)offset * ilp + i));
    for (offset = size - last + t; offset < size; offset += B)
        f(bpk_num<A>::load(in, dt, row + base + offset));
}

template <typename A>
__global__ void sm_block_kernel(void *out, const void *in, int dt, int n, int mode, int ilp,
                                int log)
{
    __shared__ A red[SM_WARP];
    const int64_t row = (int64_t)blockIdx.x * n;
    const int size = sm_size(dt);
    const int shift = (int)(((uintptr_t)in + (uintptr_t)(row * size)) % SM_ALIGN / size);
    A tmax = sm_lowest<A>();
    sm_thread_values<A>(mode, ilp, in, dt, row, n, shift, [&](A v) { tmax = ::max(tmax, v); });
    const A mx = sm_block_reduce<A, true>(tmax, red);
    A texp = A(0);
    sm_thread_values<A>(mode, ilp, in, dt, row, n, shift,
                        [&](A v) { texp = texp + sm_exp(v - mx); });
    const A sum = sm_block_reduce<A, false>(texp, red);
    const A logsum = sm_log(sum);
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const A v = bpk_num<A>::load(in, dt, row + j);
        bpk_num<A>::store(out, dt, row + j, log ? v - mx - logsum : sm_exp(v - mx) / sum);
    }
}

/* spatialBlockReduceX over blockDim.x threads (blockDim.y is 1 here). */
template <typename A, bool MAX>
__device__ __forceinline__ A sm_reduce_x(A *shared, A val)
{
    __syncthreads();
    shared[threadIdx.x] = val;
    for (int offset = blockDim.x / 2; offset > 0; offset /= 2) {
        __syncthreads();
        if ((int)threadIdx.x < offset)
            shared[threadIdx.x] = MAX ? sm_max(shared[threadIdx.x], shared[threadIdx.x + offset])
                                      : sm_add(shared[threadIdx.x], shared[threadIdx.x + offset]);
    }
    __syncthreads();
    return shared[0];
}

template <typename A>
__global__ void sm_spatial_kernel(void *out, const void *in, int dt, int64_t outer, int64_t n,
                                  int64_t inner, int log)
{
    extern __shared__ unsigned char sm_smem[];
    A *sdata = reinterpret_cast<A *>(sm_smem);
    for (int64_t o = blockIdx.x; o < outer; o += gridDim.x) {
        for (int64_t c = blockIdx.y; c < inner; c += gridDim.y) {
            const int64_t base = o * n * inner + c;
            A mx = sm_lowest<A>();
            for (int64_t d = threadIdx.x; d < n; d += blockDim.x)
                mx = sm_max(mx, bpk_num<A>::load(in, dt, base + d * inner));
            if (blockDim.x > 1)
                mx = sm_reduce_x<A, true>(sdata, mx);
            A sum = A(0);
            for (int64_t d = threadIdx.x; d < n; d += blockDim.x)
                sum += sm_exp(bpk_num<A>::load(in, dt, base + d * inner) - mx);
            if (blockDim.x > 1)
                sum = sm_reduce_x<A, false>(sdata, sum);
            const A logsum = sm_log(sum);
            for (int64_t d = threadIdx.x; d < n; d += blockDim.x) {
                const A v = bpk_num<A>::load(in, dt, base + d * inner);
                bpk_num<A>::store(out, dt, base + d * inner,
                                  log ? v - mx - logsum : sm_exp(v - mx) / sum);
            }
        }
    }
}

/* sharedMemPerBlock of the current device, as
 * at::cuda::getCurrentDeviceProperties() gives it. */
static size_t sm_shared_per_block(void)
{
    static size_t cached[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0)
        return 0;
    if (dev < 64 && cached[dev])
        return cached[dev];
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return 0;
    if (dev < 64)
        cached[dev] = p.sharedMemPerBlock;
    return p.sharedMemPerBlock;
}

extern "C" int bpk_softmax_blocks(void *stream, void *out, const void *in, int dt,
                                  int64_t outer, int64_t n, int64_t inner, int log)
{
    cudaStream_t s = (cudaStream_t)stream;
    const bool wide = dt == BPK_F64;
    const int64_t size = sm_size(dt), acc = wide ? 8 : 4;
    if (inner == 1) {
        if (outer > 0x7fffffff || n > 0x7fffffff)
            return (int)cudaErrorInvalidValue;
        /* SoftMaxForward_getBlockSize */
        int64_t mb = n < SM_MAX_THREADS ? n : SM_MAX_THREADS;
        int64_t block = mb % SM_WARP == 0 ? mb : (mb / SM_WARP + 1) * SM_WARP;
        const int ilp = (int)(16 / size); /* sizeof(float4) / sizeof(scalar_t) */
        const int64_t reduction = block / SM_WARP * acc;
        const int64_t per_smem = ((int64_t)sm_shared_per_block() - reduction) / size;
        const bool smem = n < per_smem && (uintptr_t)in % SM_ALIGN == 0 &&
                          (uintptr_t)out % SM_ALIGN == 0 && n % ilp == 0;
        const int mode = (n + block - 1) / block < 10 ? SM_REG : smem ? SM_SMEM : SM_ILP;
        if (wide)
            sm_block_kernel<double><<<(unsigned)outer, (unsigned)block, 0, s>>>(
                out, in, dt, (int)n, mode, ilp, log);
        else
            sm_block_kernel<float><<<(unsigned)outer, (unsigned)block, 0, s>>>(
                out, in, dt, (int)n, mode, ilp, log);
        return bpk_launched();
    }
    /* SpatialSoftMax_getBlockSize: only its x dimension (threads per
     * column) reaches the arithmetic */
    uint64_t inner_threads = inner < SM_MAX_THREADS ? (uint64_t)inner : SM_MAX_THREADS;
    uint64_t dim_threads = 1;
    if (inner_threads <= 64 && n >= 64) {
        while (inner_threads * dim_threads <= SM_MAX_THREADS && dim_threads <= (uint64_t)n)
            dim_threads *= 2;
        dim_threads /= 2;
    }
    dim3 grid((unsigned)(outer < 65535 ? outer : 65535), (unsigned)(inner < 65535 ? inner : 65535));
    size_t shm = dim_threads > 1 ? dim_threads * acc : 0;
    if (wide)
        sm_spatial_kernel<double><<<grid, (unsigned)dim_threads, shm, s>>>(out, in, dt, outer, n,
                                                                         inner, log);
    else
        sm_spatial_kernel<float><<<grid, (unsigned)dim_threads, shm, s>>>(out, in, dt, outer, n,
                                                                        inner, log);
    return bpk_launched();
}

/* ---- the fixed formulation ---- */

/* One block per row.  With cache (the row fits in shared memory), each
 * thread keeps the elements it reads (then, for softmax, their exp) in
 * shared memory and the row is read from global memory once; the same
 * elements, the same order and operations: the same bits. */
template <typename T, bool LOG>
__global__ void bpk_softmax_fixed_kernel(void *out, const void *in, int dt, int64_t n,
                                         int64_t inner, bool cache)
{
    typedef bpk_ieee<T> F;
    __shared__ T red[BPK_THREADS];
    extern __shared__ __align__(16) unsigned char row_raw[];
    T *row = (T *)row_raw;
    const int64_t r = blockIdx.x, o = r / inner, base = o * n * inner + r % inner;
    /* A contiguous row on a 16-byte boundary: the block reads it into
     * shared memory in 16-byte loads first (the values only; the order of
     * the arithmetic below is unchanged). */
    const int es = dt == BPK_F64 ? 8 : dt == BPK_F32 ? 4 : 2;
    const char *rp = (const char *)in + base * es;
    const bool coop = cache && inner == 1 && ((uintptr_t)rp & 15) == 0;
    if (coop) {
        const int64_t per = 16 / es, chunks = n / per;
        for (int64_t c = threadIdx.x; c < chunks; c += BPK_THREADS) {
            const uint4 u = ((const uint4 *)rp)[c];
            for (int q = 0; q < per; q++)
                row[c * per + q] = bpk_num<T>::load(&u, dt, q);
        }
        for (int64_t j = chunks * per + threadIdx.x; j < n; j += BPK_THREADS)
            row[j] = bpk_num<T>::load(rp, dt, j);
        __syncthreads();
    }
    T m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += BPK_THREADS) {
        T v = coop ? row[j] : bpk_num<T>::load(in, dt, base + j * inner);
        if (cache && !coop)
            row[j] = v;
        m = F::max(m, v);
    }
    m = bpk_block_max<T>(m, red);
    T sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += BPK_THREADS) {
        T e = F::exp(F::sub(cache ? row[j] : bpk_num<T>::load(in, dt, base + j * inner), m));
        if (cache && !LOG)
            row[j] = e;
        sum = F::add(sum, e);
    }
    sum = bpk_block_sum<T>(sum, red);
    const T ls = LOG ? F::log(sum) : T(0);
    for (int64_t j = threadIdx.x; j < n; j += BPK_THREADS) {
        T y;
        if (cache && !LOG)
            y = F::div(row[j], sum);
        else {
            T v = F::sub(cache ? row[j] : bpk_num<T>::load(in, dt, base + j * inner), m);
            y = LOG ? F::sub(v, ls) : F::div(F::exp(v), sum);
        }
        bpk_num<T>::store(out, dt, base + j * inner, y);
    }
}

template <typename T>
static void softmax_fixed_launch(cudaStream_t s, void *out, const void *in, int dt,
                                 int64_t rows, int64_t n, int64_t inner, int log)
{
    /* the row in shared memory where it fits the default 48 KiB (with red) */
    bool cache = (size_t)n * sizeof(T) <= 40 * 1024;
    size_t smem = cache ? (size_t)n * sizeof(T) : 0;
    if (log)
        bpk_softmax_fixed_kernel<T, true><<<(unsigned)rows, BPK_THREADS, smem, s>>>(
            out, in, dt, n, inner, cache);
    else
        bpk_softmax_fixed_kernel<T, false><<<(unsigned)rows, BPK_THREADS, smem, s>>>(
            out, in, dt, n, inner, cache);
}

extern "C" int bpk_softmax_fixed(void *stream, void *out, const void *in, int dt,
                                 int64_t outer, int64_t n, int64_t inner, int log)
{
    if ((dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16) || outer < 0 ||
        n < 0 || inner < 1 || (outer > 0 && inner > 0x7fffffff / outer))
        return (int)cudaErrorInvalidValue;
    if (outer == 0 || n == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        softmax_fixed_launch<double>(s, out, in, dt, outer * inner, n, inner, log);
    else
        softmax_fixed_launch<float>(s, out, in, dt, outer * inner, n, inner, log);
    return bpk_launched();
}
