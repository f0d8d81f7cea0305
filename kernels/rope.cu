/* Rotary embedding applied to q or k on the GPU, as transformers' eager
 * apply_rotary_pos_emb: out = q*cos + rotate_half(q)*sin, three tensor ops
 * each rounding to the model dtype (the two products, then the sum), with
 * rotate_half(q) = cat(-q2, q1) per head (negation is exact).  x is
 * [rows, heads*d]; cos and sin are [positions, d] and row t of x uses
 * cache row row0 + t.  _rn intrinsics keep nvcc from fusing the product
 * and the sum into an fma. */
#include "bpk_rows.cuh"

__global__ void bpk_rope_kernel(void *out, const void *x, const void *c,
                                const void *s, int dt, int64_t hidden,
                                int64_t d, int64_t row0, int64_t n)
{
    const int64_t h2 = d / 2;
    BPK_FOR(i, n)
    {
        int64_t t = i / hidden, j = (i % hidden) % d;
        float q = bpk_load_f32(x, dt, i);
        float r = j < h2 ? -bpk_load_f32(x, dt, i + h2)
                         : bpk_load_f32(x, dt, i - h2);
        int64_t ci = (row0 + t) * d + j;
        float a = bpk_num<float>::round(dt, __fmul_rn(q, bpk_load_f32(c, dt, ci)));
        float b = bpk_num<float>::round(dt, __fmul_rn(r, bpk_load_f32(s, dt, ci)));
        bpk_store_f32(out, dt, i, __fadd_rn(a, b));
    }
}

extern "C" int bpk_rope(void *stream, void *out, const void *x,
                        const void *cos, const void *sin, int dt,
                        int64_t rows, int64_t heads, int64_t d, int64_t row0)
{
    if (!bpk_model_dt(dt) || rows < 0 || heads < 1 || d < 2 || d % 2 ||
        row0 < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = rows * heads * d;
    if (n <= 0)
        return 0;
    bpk_rope_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, x, cos, sin, dt, heads * d, d, row0, n);
    return bpk_launched();
}
