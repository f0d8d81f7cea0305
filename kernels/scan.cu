/* cumsum on the GPU as ATen's scan_dim runs it for a tensor whose scanned
 * axis is not all of it (aten/src/ATen/native/cuda/ScanUtils.cuh,
 * CumsumKernel.cu: std::plus<scalar_t>, so a bf16/fp16 running sum is
 * rounded to its dtype after every addition, float and double are summed
 * in themselves, integers in int64):
 *
 *  - axis last (tensor_kernel_scan_innermost_dim): a block of
 *    2^log_x x (512 / 2^log_x) threads takes a row per y, 2^(log_x+1)
 *    values at a time into shared memory (0 past the row's end); the
 *    running total of the earlier chunks is added to the first value
 *    (value + total), then log_x + 1 Sklansky steps: at step m, with
 *    s = 2^m, thread x adds element a - 1 to element a + x % s, where
 *    a = (x / s) * 2s + s; the chunk's last element is the next total;
 *  - other axes (tensor_kernel_scan_outer_dim): each thread scans one
 *    column left to right from 0.
 *
 *
 * A floating-point tensor whose scanned axis holds every element goes to
 * cub's DeviceScan::InclusiveScan in PyTorch (cuda::cub::inclusive_scan):
 * tiles of 128 threads x 15 (fp32), 7 (fp64) or 30 (bf16, fp16) values,
 * each scanned in a fixed order (cub_scan_tile below), tile t > 0 seeded
 * with a prefix its decoupled look-back gathers from the tiles before it.
 * Tile 0 publishes its total as inclusive at once; tile 1's prefix is that
 * total, tile 2's that total plus tile 1's whether tile 1 had published
 * its inclusive prefix or only its total: up to 3 tiles the order is
 * fixed, and bitprobe's bits are PyTorch's.  From tile 3 on, a window that
 * finds two or more predecessors with their totals only reduces them in a
 * warp tree, whose association depends on timing; bitprobe takes the
 * chain each tile would find if its predecessor had published (prefix of
 * t + 1 = prefix of t + total of t), one of the orders cub can produce
 * (probes/README.md).  (Under use_deterministic_algorithms PyTorch takes
 * inclusive_deterministic_scan instead, another fixed order not modelled
 * here.) */
#include "bpk_common.cuh"

namespace {

__device__ __forceinline__ float plus(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double plus(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ long long plus(long long a, long long b)
{
    return (long long)((unsigned long long)a + (unsigned long long)b);
}

template <typename T>
__global__ void scan_inner(void *out, const void *in, int dt, int64_t rows, int64_t len,
                           unsigned log_x)
{
    extern __shared__ __align__(16) unsigned char sraw[];
    const int64_t nx = (int64_t)1 << log_x;
    const int64_t x = threadIdx.x;
    T *buf = (T *)sraw + 2 * nx * threadIdx.y;
    for (int64_t br = (int64_t)blockIdx.x * blockDim.y; br < rows;
         br += (int64_t)blockDim.y * gridDim.x) {
        int64_t row = br + threadIdx.y;
        bool exists = row < rows;
        T total = (T)0;
        for (int64_t bc = 0; bc < len; bc += 2 * nx) {
            int64_t c1 = bc + x, c2 = bc + nx + x;
            if (exists) {
                buf[x] = c1 < len ? bpk_num<T>::load(in, dt, row * len + c1) : (T)0;
                buf[nx + x] = c2 < len ? bpk_num<T>::load(in, dt, row * len + c2) : (T)0;
                if (x == 0)
                    buf[0] = bpk_num<T>::round(dt, plus(buf[0], total));
            }
            __syncthreads();
            for (unsigned m = 0; m <= log_x; m++) {
                if (exists) {
                    int64_t s = (int64_t)1 << m;
                    int64_t a = ((x >> m) << (m + 1)) | s;
                    int64_t ti = a + x % s, si = a - 1;
                    buf[ti] = bpk_num<T>::round(dt, plus(buf[ti], buf[si]));
                }
                __syncthreads();
            }
            if (exists) {
                if (c1 < len)
                    bpk_num<T>::store(out, dt, row * len + c1, buf[x]);
                if (c2 < len)
                    bpk_num<T>::store(out, dt, row * len + c2, buf[nx + x]);
            }
            total = buf[2 * nx - 1];
            __syncthreads();
        }
    }
}

template <typename T>
__global__ void scan_outer(void *out, const void *in, int dt, int64_t len, int64_t inner,
                           int64_t n)
{
    BPK_FOR(e, n)
    {
        int64_t base = (e / inner) * len * inner + e % inner;
        T acc = (T)0;
        for (int64_t j = 0; j < len; j++) {
            int64_t at = base + j * inner;
            acc = bpk_num<T>::round(dt, plus(acc, bpk_num<T>::load(in, dt, at)));
            bpk_num<T>::store(out, dt, at, acc);
        }
    }
}

/* A whole-tensor scan (the axis holds every element) as cub's
 * DeviceScan::InclusiveScan runs it for PyTorch (ATen's
 * cuda::cub::inclusive_scan, cub.cuh; CCCL 3.0 of CUDA 13.0).  The
 * operator is std::plus<scalar_t>, not a cub operator, so every tuning
 * (sm80, sm90, sm100) falls back to the default policy: 128 threads of
 * MemBoundScaling<128, 15> items, BLOCK_LOAD_WARP_TRANSPOSE,
 * BLOCK_SCAN_WARP_SCANS, and the thread reduction is sequential
 * (ThreadReduce's trees only serve cuda::std operators).  A tile: */
constexpr int CUB_THREADS = 128;

/* Items per thread, max(1, min(15 * 4 / sizeof(AccumT), 30)): fp32 15,
 * fp64 7, bf16/fp16 30 (the accumulator is c10::BFloat16/Half, 2 bytes:
 * std::plus adds in float and rounds every sum to the dtype). */
constexpr int cub_items(int dt)
{
    return dt == BPK_F64 ? 7 : (dt == BPK_BF16 || dt == BPK_F16) ? 30 : 15;
}

/* Tile `tile` of the n values: thread t holds items t * IPT ... (past the
 * end: the tile's first value, as BlockLoad's oob default); its partial is
 * their left-to-right sum; a warp scans the partials by shfl-up steps of
 * 1, 2, 4, 8, 16 (lane l adds lane l - s's value to its own), the
 * exclusive value being lane l - 1's inclusive; the four warp totals are
 * chained ((w0 + w1) + w2) + w3, warp w's prefix the chain before it,
 * added to its lanes' exclusive values (lane 0 takes the prefix itself).
 * Tile 0's thread 0 adds no prefix; a later tile's prefix P is added to
 * every thread's exclusive value (thread 0 takes P).  Each thread then
 * scans its items from its exclusive value.  Writes the tile's outputs
 * when out is set, its total (the chain of the four warps) when agg is. */
template <typename T, int IPT>
__device__ void cub_scan_tile(void *out, const void *in, int dt, int64_t n, int64_t tile,
                              const T *prefix, T *agg)
{
    __shared__ T warp_total[CUB_THREADS / 32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t base = tile * (int64_t)(CUB_THREADS * IPT);
    const int64_t first = base + (int64_t)tid * IPT;
    T v[IPT];
    T pad = bpk_num<T>::load(in, dt, base);
#pragma unroll
    for (int i = 0; i < IPT; i++)
        v[i] = first + i < n ? bpk_num<T>::load(in, dt, first + i) : pad;
    T part = v[0];
#pragma unroll
    for (int i = 1; i < IPT; i++)
        part = bpk_num<T>::round(dt, plus(part, v[i]));
    T inc = part;
#pragma unroll
    for (int s = 1; s < 32; s <<= 1) {
        T up = __shfl_up_sync(0xffffffffu, inc, s);
        if (lane >= s)
            inc = bpk_num<T>::round(dt, plus(up, inc));
    }
    T exc = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 31)
        warp_total[warp] = inc;
    __syncthreads();
    T total = warp_total[0], wpre = total;
#pragma unroll
    for (int w = 1; w < CUB_THREADS / 32; w++) {
        if (warp == w)
            wpre = total;
        total = bpk_num<T>::round(dt, plus(total, warp_total[w]));
    }
    if (warp != 0)
        exc = lane == 0 ? wpre : bpk_num<T>::round(dt, plus(wpre, exc));
    bool seeded = tid != 0;
    if (prefix) {
        T p = *prefix;
        exc = tid == 0 ? p : bpk_num<T>::round(dt, plus(p, exc));
        seeded = true;
    }
    if (out) {
        T acc = seeded ? bpk_num<T>::round(dt, plus(exc, v[0])) : v[0];
#pragma unroll
        for (int i = 0; i < IPT; i++) {
            if (i)
                acc = bpk_num<T>::round(dt, plus(acc, v[i]));
            if (first + i < n)
                bpk_num<T>::store(out, dt, first + i, acc);
        }
    }
    if (agg && tid == 0)
        *agg = total;
    __syncthreads(); /* warp_total is read again by the next tile */
}

/* The totals of the tiles before the last, agg[t] for tile t */
template <typename T, int IPT>
__global__ __launch_bounds__(CUB_THREADS) void cub_totals(T *agg, const void *in, int dt,
                                                          int64_t n, int64_t tiles)
{
    for (int64_t t = blockIdx.x; t + 1 < tiles; t += gridDim.x)
        cub_scan_tile<T, IPT>(nullptr, in, dt, n, t, nullptr, agg + t);
}

/* Each tile's prefix from the totals, in place: P1 = agg0, P(t+1) = Pt +
 * agg(t), the inclusive prefix tile t publishes (TilePrefixCallbackOp:
 * exclusive prefix + block aggregate) when tile t + 1 finds it there. */
template <typename T>
__global__ void cub_prefixes(T *agg, int dt, int64_t m)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    for (int64_t t = 1; t < m; t++)
        agg[t] = bpk_num<T>::round(dt, plus(agg[t - 1], agg[t]));
}

template <typename T, int IPT>
__global__ __launch_bounds__(CUB_THREADS) void cub_tiles(void *out, const void *in, int dt,
                                                         int64_t n, int64_t tiles,
                                                         const T *prefix)
{
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x)
        cub_scan_tile<T, IPT>(out, in, dt, n, t, t ? prefix + (t - 1) : nullptr, nullptr);
}

template <typename T, int IPT>
int scan_whole(cudaStream_t s, void *out, const void *in, int dt, int64_t n, void *scratch)
{
    const int64_t tiles = (n + CUB_THREADS * IPT - 1) / (CUB_THREADS * IPT);
    const unsigned grid = (unsigned)(tiles < 65535 * 32 ? tiles : 65535 * 32);
    T *agg = (T *)scratch;
    if (tiles > 1) {
        cub_totals<T, IPT><<<grid, CUB_THREADS, 0, s>>>(agg, in, dt, n, tiles);
        cub_prefixes<T><<<1, 1, 0, s>>>(agg, dt, tiles - 1);
    }
    cub_tiles<T, IPT><<<grid, CUB_THREADS, 0, s>>>(out, in, dt, n, tiles, agg);
    return bpk_launched();
}

template <typename T>
int scan(cudaStream_t s, void *out, const void *in, int dt, int64_t outer, int64_t len,
         int64_t inner, int innermost, unsigned log_x)
{
    if (innermost) {
        int nx = 1 << log_x, ny = 512 / nx;
        int dev = 0, maxg = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&maxg, cudaDevAttrMaxGridDimX, dev);
        int64_t g = (outer + ny - 1) / ny;
        if (g > maxg)
            g = maxg;
        scan_inner<T><<<(unsigned)g, dim3(nx, ny), 2 * 512 * sizeof(T), s>>>(out, in, dt, outer,
                                                                            len, log_x);
    } else {
        int64_t n = outer * inner;
        scan_outer<T><<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, in, dt, len, inner, n);
    }
    return bpk_launched();
}

} // namespace

extern "C" int bpk_scan(void *stream, void *out, const void *in, int dt, int64_t outer,
                        int64_t len, int64_t inner, int innermost, unsigned log_x)
{
    if (outer < 0 || len < 0 || inner < 0 || log_x < 4 || log_x > 9 ||
        (innermost && inner != 1))
        return (int)cudaErrorInvalidValue;
    if (outer * len * inner == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    switch (dt) {
    case BPK_F64: return scan<double>(s, out, in, dt, outer, len, inner, innermost, log_x);
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16: return scan<float>(s, out, in, dt, outer, len, inner, innermost, log_x);
    case BPK_I64:
    case BPK_I32: /* wrapping: the int64 sums' low halves */
        return scan<long long>(s, out, in, dt, outer, len, inner, innermost, log_x);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" size_t bpk_scan_whole_scratch(int dt, int64_t n)
{
    int64_t tile = (int64_t)CUB_THREADS * cub_items(dt);
    int64_t tiles = n > 0 ? (n + tile - 1) / tile : 0;
    return tiles > 1 ? (size_t)(tiles - 1) * (dt == BPK_F64 ? sizeof(double) : sizeof(float))
                     : 0;
}

extern "C" int bpk_scan_whole(void *stream, void *out, const void *in, int dt, int64_t n,
                              void *scratch)
{
    if (n < 0 || (bpk_scan_whole_scratch(dt, n) && !scratch))
        return (int)cudaErrorInvalidValue;
    if (n == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    switch (dt) {
    case BPK_F64: return scan_whole<double, cub_items(BPK_F64)>(s, out, in, dt, n, scratch);
    case BPK_F32: return scan_whole<float, cub_items(BPK_F32)>(s, out, in, dt, n, scratch);
    case BPK_BF16:
    case BPK_F16: return scan_whole<float, cub_items(BPK_F16)>(s, out, in, dt, n, scratch);
    }
    return (int)cudaErrorInvalidValue;
}
