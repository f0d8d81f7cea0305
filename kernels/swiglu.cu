/* The SwiGLU product of Llama's MLP on the GPU: out = silu(g) * u, where
 * silu(g) = g / (1 + expf(-g)) in fp32 (PyTorch's CUDA silu) rounded to
 * the model dtype, and the product rounded again (two eager ops).  _rn
 * intrinsics: IEEE division and no contraction. */
#include "bpk_rows.cuh"

__global__ void bpk_silu_mul_kernel(void *out, const void *g, const void *u,
                                    int dt, int64_t n)
{
    BPK_FOR(i, n)
    {
        float x = bpk_load_f32(g, dt, i);
        float sl = bpk_num<float>::round(
            dt, __fdiv_rn(x, __fadd_rn(1.0f, expf(-x))));
        bpk_store_f32(out, dt, i, __fmul_rn(sl, bpk_load_f32(u, dt, i)));
    }
}

extern "C" int bpk_silu_mul(void *stream, void *out, const void *gate,
                            const void *up, int dt, int64_t n)
{
    if (!bpk_model_dt(dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_silu_mul_kernel<<<bpk_blocks(n), BPK_THREADS, 0,
                          (cudaStream_t)stream>>>(out, gate, up, dt, n);
    return bpk_launched();
}
