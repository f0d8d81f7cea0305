/* Bitwise comparison on the device: how many elements of two buffers
 * differ in any bit (no tolerance, NaN payloads and zero signs count), so
 * that ranks compare gigabytes of parameters without a trip to the host. */
#include "bpk_common.cuh"

template <typename T>
__global__ void bpk_count_diff_kernel(const T *a, const T *b, int64_t n,
                                      unsigned long long *count)
{
    unsigned long long c = 0;
    BPK_FOR(i, n)
    {
        c += a[i] != b[i];
    }
    for (int off = 16; off > 0; off /= 2)
        c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(count, c);
}

extern "C" int bpk_count_diff(void *stream, const void *a, const void *b, int64_t n, int esize,
                              unsigned long long *count)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(count, 0, sizeof *count, s);
    if (e != cudaSuccess || n <= 0)
        return (int)e;
    unsigned g = bpk_blocks(n);
    switch (esize) {
    case 2:
        bpk_count_diff_kernel<<<g, BPK_THREADS, 0, s>>>((const uint16_t *)a, (const uint16_t *)b,
                                                        n, count);
        break;
    case 4:
        bpk_count_diff_kernel<<<g, BPK_THREADS, 0, s>>>((const uint32_t *)a, (const uint32_t *)b,
                                                        n, count);
        break;
    case 8:
        bpk_count_diff_kernel<<<g, BPK_THREADS, 0, s>>>((const unsigned long long *)a,
                                                        (const unsigned long long *)b, n, count);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
