/* Data movement on the GPU: cast, fill, concat, slice, rotate_half, and
 * the gather of the layout ops (reshape ... embedding), whose element map
 * the host computes (src/ops/layout.c).
 *
 * Exact by construction: elements are copied, and converted only where
 * the dtypes differ, with PyTorch's copy_ semantics (bpk_convert: c10's
 * BFloat16(float) / Half(float) constructors, which are __float2bfloat16 /
 * __float2half on the device, round to nearest even).  torch.cat converts
 * each input to the result dtype the same way.  rotate_half is
 * transformers' `torch.cat((-x2, x1), dim=-1)` with x1, x2 the two halves
 * of the last dimension; its negation is ATen's neg (unary.cu): __hneg
 * for f16, float negation rounded back for bf16, a sign flip otherwise. */
#include "bpk_common.cuh"

__global__ void bpk_cast_kernel(void *out, int out_dt, const void *a, int a_dt,
                                int64_t n)
{
    BPK_FOR(i, n) { bpk_convert(out, out_dt, i, a, a_dt, i); }
}

extern "C" int bpk_cast(void *stream, void *out, int out_dt, const void *a,
                        int a_dt, int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(a_dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_cast_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, out_dt, a, a_dt, n);
    return bpk_launched();
}

__global__ void bpk_fill_f32(void *out, int dt, float v, int64_t n)
{
    BPK_FOR(i, n) { bpk_store_f32(out, dt, i, v); }
}

__global__ void bpk_fill_f64(void *out, int dt, double v, int64_t n)
{
    BPK_FOR(i, n) { bpk_store_f64(out, dt, i, v); }
}

__global__ void bpk_fill_i64(void *out, int dt, long long v, int64_t n)
{
    BPK_FOR(i, n) { bpk_store_i64(out, dt, i, v); }
}

extern "C" int bpk_fill(void *stream, void *out, int out_dt, double value,
                        int64_t n)
{
    if (!bpk_dtype_ok(out_dt))
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(n);
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        bpk_fill_f32<<<g, BPK_THREADS, 0, s>>>(out, out_dt, (float)value, n);
        break;
    case BPK_CT_F64:
        bpk_fill_f64<<<g, BPK_THREADS, 0, s>>>(out, out_dt, value, n);
        break;
    default:
        bpk_fill_i64<<<g, BPK_THREADS, 0, s>>>(out, out_dt, (long long)value,
                                               n);
        break;
    }
    return bpk_launched();
}

/* One thread per input element: (o, k, i) of in goes to (o, offset+k, i). */
__global__ void bpk_concat_kernel(void *out, int out_dt, int64_t out_len,
                                  int64_t offset, const void *in, int in_dt,
                                  int64_t in_len, int64_t inner, int64_t n)
{
    BPK_FOR(e, n)
    {
        int64_t i = e % inner, r = e / inner;
        int64_t k = r % in_len, o = r / in_len;
        int64_t j = (o * out_len + offset + k) * inner + i;
        bpk_convert(out, out_dt, j, in, in_dt, e);
    }
}

extern "C" int bpk_concat_part(void *stream, void *out, int out_dt,
                               int64_t out_len, int64_t offset, const void *in,
                               int in_dt, int64_t in_len, int64_t outer,
                               int64_t inner)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(in_dt) || in_len < 0 ||
        offset < 0 || offset + in_len > out_len || inner < 0 || outer < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = outer * in_len * inner;
    if (n <= 0)
        return 0;
    bpk_concat_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, out_dt, out_len, offset, in, in_dt, in_len, inner, n);
    return bpk_launched();
}

/* One thread per output element: (o, j, i) reads (o, start + j*step, i). */
__global__ void bpk_slice_kernel(void *out, const void *in, int dt,
                                 int64_t in_len, int64_t out_len,
                                 int64_t start, int64_t step, int64_t inner,
                                 int64_t n)
{
    BPK_FOR(e, n)
    {
        int64_t i = e % inner, r = e / inner;
        int64_t j = r % out_len, o = r / out_len;
        int64_t src = (o * in_len + start + j * step) * inner + i;
        bpk_convert(out, dt, e, in, dt, src);
    }
}

extern "C" int bpk_slice(void *stream, void *out, const void *in, int dt,
                         int64_t outer, int64_t in_len, int64_t out_len,
                         int64_t start, int64_t step, int64_t inner)
{
    if (!bpk_dtype_ok(dt) || step <= 0 || start < 0 || out_len < 0 ||
        (out_len > 0 && start + (out_len - 1) * step >= in_len) ||
        inner < 0 || outer < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = outer * out_len * inner;
    if (n <= 0)
        return 0;
    bpk_slice_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, in, dt, in_len, out_len, start, step, inner, n);
    return bpk_launched();
}

__device__ __forceinline__ void bpk_neg_elem(void *out, const void *in, int dt,
                                             int64_t j, int64_t i)
{
    switch (dt) {
    case BPK_F32: ((float *)out)[j] = -((const float *)in)[i]; break;
    case BPK_F64: ((double *)out)[j] = -((const double *)in)[i]; break;
    case BPK_F16:
        ((uint16_t *)out)[j] = __half_as_ushort(
            __hneg(__ushort_as_half(((const uint16_t *)in)[i])));
        break;
    case BPK_BF16:
        bpk_store_f32(out, dt, j, -bpk_load_f32(in, dt, i));
        break;
    default:
        bpk_store_i64(out, dt, j,
                      (long long)(0ull - (unsigned long long)bpk_load_i64(
                                             in, dt, i)));
        break;
    }
}

__global__ void bpk_rotate_half_kernel(void *out, const void *in, int dt,
                                       int64_t d, int64_t n)
{
    int64_t h = d / 2;
    BPK_FOR(e, n)
    {
        int64_t j = e % d, row = e - j;
        if (j < h)
            bpk_neg_elem(out, in, dt, e, row + j + h);
        else
            bpk_convert(out, dt, e, in, dt, row + j - h);
    }
}

extern "C" int bpk_rotate_half(void *stream, void *out, const void *in, int dt,
                               int64_t rows, int64_t d)
{
    if (!bpk_dtype_ok(dt) || d < 0 || d % 2 || rows < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = rows * d;
    if (n <= 0)
        return 0;
    bpk_rotate_half_kernel<<<bpk_blocks(n), BPK_THREADS, 0,
                             (cudaStream_t)stream>>>(out, in, dt, d, n);
    return bpk_launched();
}

__global__ void bpk_gather_kernel(void *out, int out_dt, const void *in, int in_dt,
                                  const long long *src, int64_t n, int64_t run)
{
    if (run == 1) {
        BPK_FOR(i, n) { bpk_convert(out, out_dt, i, in, in_dt, src[i]); }
        return;
    }
    BPK_FOR(i, n) { bpk_convert(out, out_dt, i, in, in_dt, src[i / run] + i % run); }
}

__global__ void bpk_strided_copy_kernel(void *out, const void *in, int dt, bpk_view_t v,
                                        int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t rest = i, off = v.offset;
        for (int d = v.ndim - 1; d >= 0; d--) {
            off += (rest % v.shape[d]) * v.strides[d];
            rest /= v.shape[d];
        }
        bpk_convert(out, dt, i, in, dt, off);
    }
}

extern "C" int bpk_strided_copy(void *stream, void *out, const void *in, int dt,
                                const bpk_view_t *v, int64_t n)
{
    if (!bpk_dtype_ok(dt) || v->ndim < 0 || v->ndim > BPK_MAXDIM)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_strided_copy_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, in, dt, *v, n);
    return bpk_launched();
}

extern "C" int bpk_gather(void *stream, void *out, int out_dt, const void *in,
                          int in_dt, const int64_t *src, int64_t n, int64_t run)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(in_dt) || run < 1 || n % run)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    bpk_gather_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, out_dt, in, in_dt, (const long long *)src, n, run);
    return bpk_launched();
}
