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
 * A tensor whose scanned axis holds every element goes to cub's
 * inclusive_scan in PyTorch, whose decoupled look-back adds the tiles'
 * prefixes in an order that depends on timing; bitprobe scans it left
 * to right here (probes/README.md). */
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
