/* Reductions along an axis and the row-wise fused ops of the op table, on
 * the GPU.  One thread computes one row (outer x inner rows of len values,
 * `inner` apart) from start to end, so that a result is a function of the
 * row alone; where PyTorch's kernel has a fixed order that one thread can
 * replay, the thread replays it:
 *
 * softmax, log_softmax where nothing follows the axis (inner size 1) and
 *   len <= 2048, len * sizeof(dtype) <= 8192 (SoftMax.cu host_softmax takes the persistent
 *   kernel there: PersistentSoftmax.cuh softmax_warp_forward): W = min(32,
 *   next power of two of len) lanes; lane l holds x[l + it*W] for it <
 *   next_pow2 / W (-inf past the end), its max from its first element
 *   (m = m > e ? m : e), its sum from 0 (softmax: e = expf(x - m), sum +=
 *   e; log_softmax: sum += expf(x - m)); lanes combined by the butterfly
 *   of warp_reduce (xor distances W/2 ... 1; max as a < b ? b : a);
 *   out = e / sum (NaN when the sum is 0) or x - m - logf(sum).
 *   Elsewhere (longer rows: cunn_SoftMaxForward*, other axes:
 *   cunn_SpatialSoftMaxForward): softmax_rows.cu.
 * mean with formulation sequential or pairwise: that sum times (1/n in
 *   float: MeanOps's factor, a multiplication as on the GPU); the default
 *   mean, var and prod run in Reduce.cuh's order (treereduce.cu), cumsum in
 *   ScanUtils.cuh's (scan.cu).  logsumexp: logsumexp.cu and treereduce.cu.
 * amax, amin: exact (NaN if any element is NaN).
 * rms_norm and layer_norm: layer_norm.cu.
 * Every sum, product and quotient is an _rn intrinsic: never fused into an
 * fma, whatever -fmad says. */
#include "bpk_sum.cuh"

/* The accumulate types: opmath float for fp32/bf16/fp16, double, int64. */
template <typename T>
__device__ __forceinline__ T rn_add(T a, T b) { return a + b; }
template <>
__device__ __forceinline__ float rn_add<float>(float a, float b) { return __fadd_rn(a, b); }
template <>
__device__ __forceinline__ double rn_add<double>(double a, double b) { return __dadd_rn(a, b); }

template <typename T>
__device__ __forceinline__ T rn_mul(T a, T b) { return a * b; }
template <>
__device__ __forceinline__ float rn_mul<float>(float a, float b) { return __fmul_rn(a, b); }
template <>
__device__ __forceinline__ double rn_mul<double>(double a, double b) { return __dmul_rn(a, b); }

__device__ __forceinline__ float rn_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double rn_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float rn_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double rn_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float dexp(float v) { return expf(v); }
__device__ __forceinline__ double dexp(double v) { return exp(v); }
__device__ __forceinline__ float dlog(float v) { return logf(v); }
__device__ __forceinline__ double dlog(double v) { return log(v); }
template <typename T> __device__ __forceinline__ T nanv() { return (T)NAN; }
template <> __device__ __forceinline__ long long nanv<long long>() { return 0; }

/* ---- softmax, log_softmax ---- */

#define BPK_PERSIST_MAX 2048

template <typename T>
__device__ void softmax_persistent(void *out, const void *in, int dt, int64_t base,
                                   int len, int log)
{
    int p2 = 1;
    while (p2 < len)
        p2 <<= 1;
    const int W = p2 < 32 ? p2 : 32, IT = p2 / W;
    T m[32], s[32];
    for (int l = 0; l < W; l++) {
        m[l] = l < len ? bpk_num<T>::load(in, dt, base + l) : (T)-INFINITY;
        for (int it = 1; it < IT; it++) {
            int j = l + it * W;
            T e = j < len ? bpk_num<T>::load(in, dt, base + j) : (T)-INFINITY;
            m[l] = m[l] > e ? m[l] : e;
        }
    }
    for (int off = W / 2; off > 0; off /= 2) {
        T t[32];
        for (int l = 0; l < W; l++)
            t[l] = m[l] < m[l ^ off] ? m[l ^ off] : m[l];
        for (int l = 0; l < W; l++)
            m[l] = t[l];
    }
    const T mx = m[0];
    for (int l = 0; l < W; l++) {
        s[l] = (T)0;
        for (int it = 0; it < IT; it++) {
            int j = l + it * W;
            T e = j < len ? bpk_num<T>::load(in, dt, base + j) : (T)-INFINITY;
            s[l] = rn_add<T>(s[l], dexp(rn_sub(e, mx)));
        }
    }
    for (int off = W / 2; off > 0; off /= 2) {
        T t[32];
        for (int l = 0; l < W; l++)
            t[l] = rn_add<T>(s[l], s[l ^ off]);
        for (int l = 0; l < W; l++)
            s[l] = t[l];
    }
    T sum = s[0];
    if (log)
        sum = dlog(sum);
    for (int j = 0; j < len; j++) {
        T x = bpk_num<T>::load(in, dt, base + j), r;
        if (log)
            r = rn_sub(rn_sub(x, mx), sum);
        else if (sum == (T)0)
            r = (T)NAN;
        else
            r = rn_div(dexp(rn_sub(x, mx)), sum);
        bpk_num<T>::store(out, dt, base + j, r);
    }
}

template <typename T>
__global__ void bpk_softmax_kernel(void *out, const void *in, int dt, int64_t len, int64_t rows,
                                   int log)
{
    BPK_FOR(r, rows)
    softmax_persistent<T>(out, in, dt, r * len, (int)len, log);
}

extern "C" int bpk_softmax(void *stream, void *out, const void *in, int dt, int64_t outer,
                           int64_t len, int64_t inner, int log)
{
    if (dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16)
        return (int)cudaErrorInvalidValue;
    if (outer < 0 || len < 0 || inner < 0)
        return (int)cudaErrorInvalidValue;
    int64_t rows = outer * inner;
    if (rows == 0 || len == 0)
        return 0;
    int64_t size = dt == BPK_F64 ? 8 : dt == BPK_F32 ? 4 : 2;
    if (!(inner == 1 && len <= BPK_PERSIST_MAX && len * size <= 8192))
        return bpk_softmax_blocks(stream, out, in, dt, outer, len, inner, log);
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        bpk_softmax_kernel<double><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(out, in, dt, len,
                                                                            rows, log);
    else
        bpk_softmax_kernel<float><<<bpk_blocks(rows), BPK_THREADS, 0, s>>>(out, in, dt, len,
                                                                           rows, log);
    return bpk_launched();
}

/* ---- mean (pinned formulations), amax, amin ---- */

template <typename T>
__global__ void bpk_reduce_kernel(int op, void *out, int odt, const void *in, int dt,
                                  int64_t len, int64_t inner, int64_t rows, double param,
                                  int pairwise)
{
    BPK_FOR(r, rows)
    {
        int64_t base = (r / inner) * len * inner + r % inner;
        T acc = (T)0;
        switch (op) {
        case BPK_RED_MEAN: {
            acc = pairwise ? bpk_sum_pairwise<T>(in, dt, base, inner, len, odt)
                           : bpk_sum_sequential<T>(in, dt, base, inner, len, odt);
            acc = rn_mul<T>(acc, (T)param);
            break;
        }
        case BPK_RED_AMAX:
        case BPK_RED_AMIN: {
            bool mx = op == BPK_RED_AMAX, nan = false;
            acc = bpk_num<T>::load(in, dt, base);
            for (int64_t j = 0; j < len; j++) {
                T x = bpk_num<T>::load(in, dt, base + j * inner);
                nan = nan || x != x;
                acc = mx ? (x >= acc ? x : acc) : (x <= acc ? x : acc);
            }
            if (nan)
                acc = nanv<T>();
            break;
        }
        }
        bpk_num<T>::store(out, odt, r, acc);
    }
}

extern "C" int bpk_reduce(void *stream, int op, void *out, int out_dt, const void *in,
                          int in_dt, int64_t outer, int64_t len, int64_t inner,
                          double param, int pairwise)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(in_dt) || outer < 0 || len < 0 ||
        inner < 0 || op < BPK_RED_MEAN || op > BPK_RED_AMIN)
        return (int)cudaErrorInvalidValue;
    int64_t rows = outer * inner;
    if (rows == 0)
        return 0;
    if (len == 0 && (op == BPK_RED_AMAX || op == BPK_RED_AMIN))
        return (int)cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned g = bpk_blocks(rows);
    switch (bpk_compute_type(out_dt)) {
    case BPK_CT_F32:
        bpk_reduce_kernel<float><<<g, BPK_THREADS, 0, s>>>(op, out, out_dt, in, in_dt, len,
                                                           inner, rows, param, pairwise);
        break;
    case BPK_CT_F64:
        bpk_reduce_kernel<double><<<g, BPK_THREADS, 0, s>>>(op, out, out_dt, in, in_dt, len,
                                                            inner, rows, param, pairwise);
        break;
    default:
        if (op == BPK_RED_MEAN)
            return (int)cudaErrorInvalidValue;
        bpk_reduce_kernel<long long><<<g, BPK_THREADS, 0, s>>>(op, out, out_dt, in, in_dt,
                                                               len, inner, rows, param, pairwise);
        break;
    }
    return bpk_launched();
}

/* ---- sdpa's pieces ---- */

/* out (fp32, or fp64 for fp64) = x widened, times s (rounded once). */
__global__ void bpk_scale_widen_kernel(void *out, const void *x, int dt, int64_t n, double s)
{
    BPK_FOR(i, n)
    {
        if (dt == BPK_F64)
            ((double *)out)[i] = __dmul_rn(bpk_load_f64(x, dt, i), s);
        else
            ((float *)out)[i] = __fmul_rn(bpk_load_f32(x, dt, i), (float)s);
    }
}

extern "C" int bpk_scale_widen(void *stream, void *out, const void *x, int dt, int64_t n,
                               double s)
{
    if (n < 0 || (dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16))
        return (int)cudaErrorInvalidValue;
    if (n == 0)
        return 0;
    bpk_scale_widen_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        out, x, dt, n, s);
    return bpk_launched();
}

/* scores [B, L, S] (fp32, or fp64 when wide) plus the causal mask, as the
 * math path adds it (attn.add_(mask), the mask -inf above the diagonal and
 * 0 elsewhere): a score of +inf or NaN above the diagonal gives NaN, and
 * -0 below it +0; a row that is -inf throughout becomes 0 after the
 * softmax (_safe_softmax), which bpk_safe_rows does. */
__global__ void bpk_causal_mask_kernel(void *s, int wide, int64_t L, int64_t S, int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t j = i % S, q = (i / S) % L;
        if (wide)
            ((double *)s)[i] = __dadd_rn(((double *)s)[i], j > q ? -INFINITY : 0.0);
        else
            ((float *)s)[i] = __fadd_rn(((float *)s)[i], j > q ? -INFINITY : 0.0f);
    }
}

__global__ void bpk_safe_rows_kernel(void *p, const void *scores, int wide, int64_t S,
                                     int64_t rows)
{
    BPK_FOR(r, rows)
    {
        bool all = S > 0;
        for (int64_t j = 0; j < S && all; j++)
            all = wide ? ((const double *)scores)[r * S + j] == -INFINITY
                       : ((const float *)scores)[r * S + j] == -INFINITY;
        for (int64_t j = 0; all && j < S; j++) {
            if (wide)
                ((double *)p)[r * S + j] = 0.0;
            else
                ((float *)p)[r * S + j] = 0.0f;
        }
    }
}

extern "C" int bpk_sdpa_mask(void *stream, void *scores, int wide, int64_t B, int64_t L,
                             int64_t S)
{
    if (B < 0 || L < 0 || S < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = B * L * S;
    if (n == 0)
        return 0;
    bpk_causal_mask_kernel<<<bpk_blocks(n), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        scores, wide, L, S, n);
    return bpk_launched();
}

extern "C" int bpk_sdpa_safe(void *stream, void *p, const void *scores, int wide, int64_t rows,
                             int64_t S)
{
    if (rows < 0 || S < 0)
        return (int)cudaErrorInvalidValue;
    if (rows == 0)
        return 0;
    bpk_safe_rows_kernel<<<bpk_blocks(rows), BPK_THREADS, 0, (cudaStream_t)stream>>>(
        p, scores, wide, S, rows);
    return bpk_launched();
}
