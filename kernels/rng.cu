/* The counter-based generator on the GPU, the same arithmetic as the CPU's
 * bp_rng_uniform (src/core/rng.h):
 *
 *   Philox-4x32-10 (Salmon et al., SC'11; Random123's philox4x32_R(10)):
 *   counter (index lo, index hi, stream lo, stream hi), key (seed lo,
 *   seed hi); u = (out[0] >> 8) * 2^-24, exact;
 *   value = low + (high - low) * u, each operation rounded in float.
 *
 * The roundings use __fsub_rn / __fmul_rn / __fadd_rn, which nvcc and ptxas
 * never contract into an fma, so -fmad=true cannot change the value. */
#include "bpk_common.cuh"
#include "../src/core/rng_normal.h"

#define BPK_PHILOX_M0 0xD2511F53u
#define BPK_PHILOX_M1 0xCD9E8D57u
#define BPK_PHILOX_W0 0x9E3779B9u
#define BPK_PHILOX_W1 0xBB67AE85u

__device__ __forceinline__ void bpk_philox_round(uint32_t c[4],
                                                 const uint32_t k[2])
{
    uint32_t hi0 = __umulhi(BPK_PHILOX_M0, c[0]), lo0 = BPK_PHILOX_M0 * c[0];
    uint32_t hi1 = __umulhi(BPK_PHILOX_M1, c[2]), lo1 = BPK_PHILOX_M1 * c[2];
    uint32_t n0 = hi1 ^ c[1] ^ k[0], n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* Ten rounds; the key is bumped between rounds (nine times). */
__device__ __forceinline__ void bpk_philox4x32_10(uint32_t c[4],
                                                  const uint32_t key[2])
{
    uint32_t k[2] = {key[0], key[1]};
    bpk_philox_round(c, k);
#pragma unroll
    for (int r = 1; r < 10; r++) {
        k[0] += BPK_PHILOX_W0;
        k[1] += BPK_PHILOX_W1;
        bpk_philox_round(c, k);
    }
}

__global__ void bpk_uniform_kernel(void *out, int dt, int64_t n,
                                   uint64_t seed, uint64_t rng_stream,
                                   float low, float high)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    float span = __fsub_rn(high, low);
    BPK_FOR(i, n)
    {
        uint64_t idx = (uint64_t)i;
        uint32_t c[4] = {(uint32_t)idx, (uint32_t)(idx >> 32),
                         (uint32_t)rng_stream, (uint32_t)(rng_stream >> 32)};
        bpk_philox4x32_10(c, key);
        float u = __fmul_rn((float)(c[0] >> 8), 0x1p-24f);
        bpk_store_f32(out, dt, i, __fadd_rn(low, __fmul_rn(span, u)));
    }
}

extern "C" int bpk_uniform(void *stream, void *out, int dt, int64_t n,
                           uint64_t seed, uint64_t rng_stream, float low,
                           float high)
{
    if (!bpk_dtype_ok(dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_uniform_kernel<<<bpk_blocks(n), BPK_THREADS, 0,
                         (cudaStream_t)stream>>>(out, dt, n, seed, rng_stream,
                                                 low, high);
    return bpk_launched();
}

/* The same values for element indices first, first + 1, ...: a shard of a
 * parameter generates its slice from the slice's own counters. */
__global__ void bpk_uniform_range_kernel(void *out, int dt, int64_t n,
                                         uint64_t first, uint64_t seed,
                                         uint64_t rng_stream, float low,
                                         float high)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    float span = __fsub_rn(high, low);
    BPK_FOR(i, n)
    {
        uint64_t idx = first + (uint64_t)i;
        uint32_t c[4] = {(uint32_t)idx, (uint32_t)(idx >> 32),
                         (uint32_t)rng_stream, (uint32_t)(rng_stream >> 32)};
        bpk_philox4x32_10(c, key);
        float u = __fmul_rn((float)(c[0] >> 8), 0x1p-24f);
        bpk_store_f32(out, dt, i, __fadd_rn(low, __fmul_rn(span, u)));
    }
}

extern "C" int bpk_uniform_range(void *stream, void *out, int dt, int64_t n,
                                 uint64_t first, uint64_t seed,
                                 uint64_t rng_stream, float low, float high)
{
    if (!bpk_dtype_ok(dt) || bpk_is_int(dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_uniform_range_kernel<<<bpk_blocks(n), BPK_THREADS, 0,
                               (cudaStream_t)stream>>>(out, dt, n, first, seed,
                                                       rng_stream, low, high);
    return bpk_launched();
}

/* randn, normal: the pair's block, the shared Box-Muller arithmetic of
 * src/core/rng_normal.h in named double roundings, and one rounding to dt
 * (bf16 and fp16 through float rounded to odd, as the CPU does). */
__global__ void bpk_normal_kernel(void *out, int dt, int64_t n, uint64_t seed,
                                  uint64_t rng_stream, double mean, double std)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    BPK_FOR(i, n)
    {
        uint64_t pair = (uint64_t)i >> 1;
        uint32_t c[4] = {(uint32_t)pair, (uint32_t)(pair >> 32),
                         (uint32_t)rng_stream, (uint32_t)(rng_stream >> 32)};
        bpk_philox4x32_10(c, key);
        double v = bp_normal_from_block(c, (int)(i & 1), mean, std);
        switch (dt) {
        case BPK_F64: ((double *)out)[i] = v; break;
        case BPK_F32: ((float *)out)[i] = __double2float_rn(v); break;
        default: bpk_store_f32(out, dt, i, bp_normal_f32_odd(v)); break;
        }
    }
}

extern "C" int bpk_normal(void *stream, void *out, int dt, int64_t n,
                          uint64_t seed, uint64_t rng_stream, double mean,
                          double std)
{
    if (dt != BPK_F64 && dt != BPK_F32 && dt != BPK_BF16 && dt != BPK_F16)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_normal_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, dt, n, seed, rng_stream, mean, std);
    return bpk_launched();
}

__global__ void bpk_philox_block_kernel(uint32_t *io)
{
    uint32_t c[4] = {io[0], io[1], io[2], io[3]};
    const uint32_t k[2] = {io[4], io[5]};
    bpk_philox4x32_10(c, k);
    for (int j = 0; j < 4; j++)
        io[j] = c[j];
}

extern "C" int bpk_philox_block(const uint32_t ctr[4], const uint32_t key[2],
                                uint32_t out[4])
{
    uint32_t host[6] = {ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1]};
    uint32_t *dev = NULL;
    cudaError_t e = cudaMalloc((void **)&dev, sizeof host);
    if (e != cudaSuccess)
        return (int)e;
    e = cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        bpk_philox_block_kernel<<<1, 1>>>(dev);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(host, dev, 4 * sizeof(uint32_t),
                       cudaMemcpyDeviceToHost);
    cudaError_t f = cudaFree(dev);
    if (e == cudaSuccess)
        e = f;
    if (e == cudaSuccess)
        for (int j = 0; j < 4; j++)
            out[j] = host[j];
    return (int)e;
}
