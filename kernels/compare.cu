/* Comparisons and torch.where on the GPU.
 *
 * lt le gt ge eq ne (aten/src/ATen/native/cuda/CompareKernels.cu): the
 * operands are converted to the common dtype by TensorIterator, a CPU
 * scalar by iter.scalar_value<scalar_t> (the host converts it here, see
 * be_cuda_ops.c), and compared exactly: bf16/f16 values widen to float
 * without changing their order, so comparing in float is comparing in the
 * dtype.  NaN is unordered: only ne is true.
 * where (TensorCompare.cu where_kernel): `cond ? a : b` on operands already
 * converted to the result dtype (where_self_out's self.to(result_type)),
 * which is bpk_convert's copy; a number is already exact in out_dt.
 * clamp with tensor min and max (TensorCompare.cu clamp_kernel_impl): v,
 * lower, upper in the common dtype; v if v is NaN, else lower if it is,
 * else upper if it is, else ::min(::max(v, lower), upper) (fmaxf/fminf
 * for float, bf16 and f16, which widen exactly and narrow back exactly). */
#include "bpk_common.cuh"

template <typename T>
__device__ __forceinline__ bool bpk_cmp(int op, T x, T y)
{
    switch (op) {
    case BPK_LT: return x < y;
    case BPK_LE: return x <= y;
    case BPK_GT: return x > y;
    case BPK_GE: return x >= y;
    case BPK_EQ: return x == y;
    default: return x != y;
    }
}

template <typename T>
__global__ void bpk_compare_kernel(int op, uint8_t *out, int cmp_dt, bpk_arg_t a,
                                   bpk_arg_t b, bpk_bcast_t bc, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, ib;
        bpk_bcast_offsets(bc, i, &ia, &ib);
        T x = bpk_operand<T>(a, ia, cmp_dt);
        T y = bpk_operand<T>(b, ib, cmp_dt);
        out[i] = bpk_cmp<T>(op, x, y);
    }
}

extern "C" int bpk_compare(void *stream, int op, void *out, int cmp_dt, bpk_arg_t a,
                           bpk_arg_t b, const bpk_bcast_t *bc, int64_t n)
{
    if (!bpk_dtype_ok(cmp_dt) || (a.ptr && !bpk_dtype_ok(a.dtype)) ||
        (b.ptr && !bpk_dtype_ok(b.dtype)) || !bc || bc->ndim < 0 ||
        bc->ndim > BPK_MAXDIM || op < 0 || op >= BPK_NCMP)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(n);
    uint8_t *o = (uint8_t *)out;
    if (cmp_dt == BPK_F64)
        bpk_compare_kernel<double><<<g, BPK_THREADS, 0, s>>>(op, o, cmp_dt, a, b, *bc, n);
    else if (bpk_is_int(cmp_dt) || cmp_dt == BPK_BOOL)
        bpk_compare_kernel<long long><<<g, BPK_THREADS, 0, s>>>(op, o, cmp_dt, a, b, *bc, n);
    else if (cmp_dt == BPK_F32 || cmp_dt == BPK_BF16 || cmp_dt == BPK_F16)
        bpk_compare_kernel<float><<<g, BPK_THREADS, 0, s>>>(op, o, cmp_dt, a, b, *bc, n);
    else
        return (int)cudaErrorInvalidValue;
    return bpk_launched();
}

template <typename T>
__global__ void bpk_clamp_kernel(void *out, int out_dt, bpk_arg_t a, bpk_arg_t lo,
                                 bpk_arg_t hi, bpk_bcast_t bc, bpk_bcast_t bch, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, il, ih, unused;
        bpk_bcast_offsets(bc, i, &ia, &il);
        bpk_bcast_offsets(bch, i, &ih, &unused);
        T v = bpk_operand<T>(a, ia, out_dt), l = bpk_operand<T>(lo, il, out_dt),
          h = bpk_operand<T>(hi, ih, out_dt);
        T r = v != v ? v : l != l ? l : h != h ? h : ::min(::max(v, l), h);
        bpk_num<T>::store(out, out_dt, i, r);
    }
}

extern "C" int bpk_clamp(void *stream, void *out, int out_dt, bpk_arg_t a, bpk_arg_t lo,
                         bpk_arg_t hi, const bpk_bcast_t *bc, const bpk_bcast_t *bch,
                         int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || !a.ptr || !lo.ptr || !hi.ptr || !bpk_dtype_ok(a.dtype) ||
        !bpk_dtype_ok(lo.dtype) || !bpk_dtype_ok(hi.dtype) || !bc || !bch || bc->ndim < 0 ||
        bc->ndim > BPK_MAXDIM || bch->ndim < 0 || bch->ndim > BPK_MAXDIM ||
        out_dt == BPK_BOOL)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(n);
    if (out_dt == BPK_F64)
        bpk_clamp_kernel<double><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, lo, hi, *bc, *bch, n);
    else if (bpk_is_int(out_dt))
        bpk_clamp_kernel<long long><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, lo, hi, *bc, *bch,
                                                              n);
    else if (out_dt == BPK_F32 || out_dt == BPK_BF16 || out_dt == BPK_F16)
        bpk_clamp_kernel<float><<<g, BPK_THREADS, 0, s>>>(out, out_dt, a, lo, hi, *bc, *bch, n);
    else
        return (int)cudaErrorInvalidValue;
    return bpk_launched();
}

__global__ void bpk_where_kernel(void *out, int out_dt, const uint8_t *cond, bpk_arg_t a,
                                 bpk_arg_t b, bpk_bcast_t bc, bpk_bcast_t bcc, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t ia, ib, ic, unused;
        bpk_bcast_offsets(bc, i, &ia, &ib);
        bpk_bcast_offsets(bcc, i, &ic, &unused);
        const bpk_arg_t &x = cond[ic] ? a : b;
        int64_t ix = cond[ic] ? ia : ib;
        if (x.ptr)
            bpk_convert(out, out_dt, i, x.ptr, x.dtype, ix);
        else
            bpk_store_f64(out, out_dt, i, x.value);
    }
}

/* The flat form of bpk_where_kernel: a and b of out's dtype (f32, bf16,
 * f16) read in order or numbers, cond read at i % period (contiguous,
 * broadcast over outer dimensions only), every pointer aligned: 8 elements
 * per step, each the bits of its chosen operand as bpk_convert copies
 * them (a number: its bits in out_dt, as bpk_store_f64 writes it). */
template <typename U>
__device__ __forceinline__ void bpk_bits8(const bpk_arg_t &a, int out_dt, int64_t i, U *x)
{
    if (!a.ptr) {
        U v;
        bpk_store_f64(&v, out_dt, 0, a.value);
        for (int k = 0; k < 8; k++)
            x[k] = v;
        return;
    }
    bpk_raw8<U>(a.ptr, i, x);
}

template <typename U>
__global__ void bpk_where_flat_kernel(void *out, int out_dt, const uint8_t *cond, bpk_arg_t a,
                                      bpk_arg_t b, int64_t period, int64_t n)
{
    const int64_t groups = n / 8;
    BPK_FOR(g, groups)
    {
        const int64_t i = g * 8;
        const uint2 c = *(const uint2 *)(cond + i % period);
        U x[8], y[8];
        bpk_bits8<U>(a, out_dt, i, x);
        bpk_bits8<U>(b, out_dt, i, y);
        for (int k = 0; k < 8; k++) {
            uint32_t byte = ((k < 4 ? c.x : c.y) >> (8 * (k % 4))) & 0xffu;
            ((U *)out)[i + k] = byte ? x[k] : y[k];
        }
    }
    BPK_FOR(t, n - groups * 8)
    {
        const int64_t i = groups * 8 + t;
        const bpk_arg_t &x = cond[i % period] ? a : b;
        if (x.ptr)
            bpk_convert(out, out_dt, i, x.ptr, x.dtype, i);
        else
            bpk_store_f64(out, out_dt, i, x.value);
    }
}

/* The period of a flat where's cond, or 0 where the flat form does not
 * apply. */
static int64_t bpk_where_period(void *out, int out_dt, const void *cond, const bpk_arg_t &a,
                                const bpk_arg_t &b, const bpk_bcast_t &bc,
                                const bpk_bcast_t &bcc, int64_t n)
{
    if (bc.ndim != 0 || !bpk_flat_ok(out, out_dt, a, b) || ((uintptr_t)cond & 7))
        return 0;
    int64_t period = 0;
    if (bcc.ndim == 0)
        period = n;
    else if (bcc.ndim == 2 && bcc.stride_a[0] == 0 && bcc.stride_a[1] == 1)
        period = bcc.shape[1];
    return period > 0 && period % 8 == 0 ? period : 0;
}

extern "C" int bpk_where(void *stream, void *out, int out_dt, const void *cond, bpk_arg_t a,
                         bpk_arg_t b, const bpk_bcast_t *bc, const bpk_bcast_t *bcc,
                         int64_t n)
{
    if (!bpk_dtype_ok(out_dt) || (a.ptr && !bpk_dtype_ok(a.dtype)) ||
        (b.ptr && !bpk_dtype_ok(b.dtype)) || !cond || !bc || !bcc || bc->ndim < 0 ||
        bc->ndim > BPK_MAXDIM || bcc->ndim < 0 || bcc->ndim > BPK_MAXDIM)
        return (int)cudaErrorInvalidValue;
    if (n <= 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    int64_t period = bpk_where_period(out, out_dt, cond, a, b, *bc, *bcc, n);
    if (period && out_dt == BPK_F32)
        bpk_where_flat_kernel<uint32_t><<<bpk_blocks(n / 8 + 1), BPK_THREADS, 0, s>>>(
            out, out_dt, (const uint8_t *)cond, a, b, period, n);
    else if (period)
        bpk_where_flat_kernel<uint16_t><<<bpk_blocks(n / 8 + 1), BPK_THREADS, 0, s>>>(
            out, out_dt, (const uint8_t *)cond, a, b, period, n);
    else
        bpk_where_kernel<<<bpk_blocks(n), BPK_THREADS, 0, s>>>(out, out_dt,
                                                               (const uint8_t *)cond, a, b,
                                                               *bc, *bcc, n);
    return bpk_launched();
}
