/* torch.nn.functional.layer_norm and rms_norm over the last dimension on the
 * GPU, as PyTorch 2.11 runs them: aten/src/ATen/native/cuda/
 * layer_norm_kernel.cu, LayerNormKernelImplInternal<T, T_ACC, rms_norm>,
 * reached from layer_norm_cuda (rms_norm = false) and _fused_rms_norm_cuda
 * (rms_norm = true; rms_norm_symint in layer_norm.cpp calls
 * at::_fused_rms_norm on CUDA when the weight has the input's dtype).  Read
 * at pytorch main (the file's rms_norm template, unchanged in the forward
 * from its introduction in 2.8 to 2.11).
 *
 * Two paths, chosen on the host as ATen chooses them:
 *
 * vectorised (fp32/bf16/fp16, N % 4 == 0, N <= 2^24, x, y, weight and bias
 *   aligned to 4 * sizeof(T)): launch_vectorized_layer_norm_kernel, one
 *   block of (32, 4) threads per row (num_threads() = warp size * 4).
 *   compute_stats: thread t = x + 32 y takes the groups of 4 values g = t,
 *   t + 128, ... and folds each group's values in order into a float
 *   Welford triple (cuWelfordOnlineSum: delta = v - mean, count + 1, mean +
 *   delta * (1 / count), sigma2 + delta * (v - new mean); rms_norm: sigma2 +
 *   v * v); the warp folds by shuffles down 16 ... 1 (cuWelfordCombine: the
 *   reciprocal of the summed count times each count, mean = nA mA + nB mB,
 *   sigma2 = sA + sB + d d cA nB; rms_norm: the sum); warps 2, 3 into 0, 1,
 *   then 1 into 0 through shared memory; sigma2 / N.  rstd = rsqrtf(sigma2 +
 *   eps); y = w * (rstd * (x - mean)) + b (rms_norm: w * (rstd * x)), the
 *   forms without w or b as ATen writes them.
 * otherwise (fp64 always): RowwiseMomentsCUDAKernel, 512 threads per row
 *   (kCUDABlockReduceNumThreads): thread k folds x[k], x[k + 512], ... by
 *   WelfordOps::reduce (integer count, mean + delta / n, m2 + delta *
 *   new delta), cuda_utils::BlockReduce (each warp by shuffles down, the
 *   16 warp results by warp 0 the same way; WelfordOps::combine), project:
 *   var = m2 / n; rstd = rsqrt(var + eps) (rms_norm: rsqrt(var + mean *
 *   mean + eps)); then LayerNormForwardCUDAKernel: y = (x - mean) * rstd *
 *   w + b with w = 1, b = 0 where absent (rms_norm: x * rstd * w).  The
 *   forward is elementwise, so it runs here in the moments' block.
 *
 * The arithmetic is written as ATen writes it and compiled with nvcc's
 * defaults (-fmad=true), so that multiply-adds are contracted where
 * PyTorch's build contracts them; rsqrt is CUDA's rsqrtf / rsqrt
 * (c10::cuda::compat::rsqrt).
 *
 * rms_norm's `fixed` formulation (the layer stack's and invariance's:
 * transformers' LlamaRMSNorm as eager ops compose it) is bitprobe's own
 * kernel: one block per row, ss = sum(x*x) in opmath in the block order of
 * bpk_rows.cuh, r = rsqrt(ss / H + eps), y = x*r rounded to dt, out = w*y
 * rounded to dt, every operation an _rn intrinsic. */
#include "bpk_common.cuh"
#include "bpk_rows.cuh"

#define LN_VEC 4               /* vec_size */
#define LN_WARP 32             /* C10_WARP_SIZE */
#define LN_VEC_WARPS 4         /* num_threads() / warp size */
#define LN_MOMENTS_THREADS 512 /* cuda_utils::kCUDABlockReduceNumThreads */

/* ---- the vectorised path ---- */

struct ln_wd { /* WelfordDataLN */
    float mean, sigma2, count;
};

template <bool RMS>
__device__ __forceinline__ ln_wd ln_online(const float val, const ln_wd &cur)
{
    if (RMS)
        return {0.f, cur.sigma2 + val * val, 0.f};
    float delta = val - cur.mean;
    float new_count = cur.count + 1.f;
    float new_mean = cur.mean + delta * (1.f / new_count);
    return {new_mean, cur.sigma2 + delta * (val - new_mean), new_count};
}

/* cuWelfordCombine(dataB, dataA) */
template <bool RMS>
__device__ __forceinline__ ln_wd ln_combine(const ln_wd b, const ln_wd a)
{
    if (RMS)
        return {0.f, b.sigma2 + a.sigma2, 0.f};
    float delta = b.mean - a.mean;
    float count = a.count + b.count;
    float mean, sigma2;
    if (count > 0.f) {
        float coef = 1.f / count;
        float nA = a.count * coef;
        float nB = b.count * coef;
        mean = nA * a.mean + nB * b.mean;
        sigma2 = a.sigma2 + b.sigma2 + delta * delta * a.count * nB;
    } else {
        mean = 0.f;
        sigma2 = 0.f;
    }
    return {mean, sigma2, count};
}

/* compute_stats: the row's mean and sigma2 / N, in every thread. */
template <bool RMS>
__device__ ln_wd ln_stats(const void *x, int dt, int64_t base, int N, float *buf)
{
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    const int nvec = N / LN_VEC;
    ln_wd wd = {0.f, 0.f, 0.f};
    for (int i = thrx; i < nvec; i += numx)
        for (int ii = 0; ii < LN_VEC; ii++)
            wd = ln_online<RMS>(bpk_load_f32(x, dt, base + (int64_t)i * LN_VEC + ii), wd);
    for (int offset = LN_WARP >> 1; offset > 0; offset >>= 1) {
        ln_wd o = {__shfl_down_sync(0xffffffffu, wd.mean, offset),
                   __shfl_down_sync(0xffffffffu, wd.sigma2, offset),
                   __shfl_down_sync(0xffffffffu, wd.count, offset)};
        wd = ln_combine<RMS>(wd, o);
    }
    float *meansigma = buf, *countbuf = buf + blockDim.y;
    for (int offset = blockDim.y / 2; offset > 0; offset /= 2) {
        if (threadIdx.x == 0 && threadIdx.y >= offset && threadIdx.y < 2 * offset) {
            const int w = threadIdx.y - offset;
            meansigma[2 * w] = wd.mean;
            meansigma[2 * w + 1] = wd.sigma2;
            countbuf[w] = wd.count;
        }
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y < offset) {
            ln_wd o = {meansigma[2 * threadIdx.y], meansigma[2 * threadIdx.y + 1],
                       countbuf[threadIdx.y]};
            wd = ln_combine<RMS>(wd, o);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        meansigma[0] = wd.mean;
        meansigma[1] = wd.sigma2 / float(N);
    }
    __syncthreads();
    return {meansigma[0], meansigma[1], 0.f};
}

template <bool RMS>
__global__ void ln_vec_kernel(void *y, const void *x, const void *w, const void *b, int dt,
                              int N, float eps)
{
    __shared__ float buf[LN_VEC_WARPS * 3 / 2];
    const int64_t base = (int64_t)blockIdx.x * N;
    ln_wd wd = ln_stats<RMS>(x, dt, base, N, buf);
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    const int nvec = N / LN_VEC;
    float rstd = rsqrtf(wd.sigma2 + eps);
    for (int i = thrx; i < nvec; i += numx) {
        for (int ii = 0; ii < LN_VEC; ii++) {
            const int j = i * LN_VEC + ii;
            const float v = bpk_load_f32(x, dt, base + j);
            float out;
            if (w && b) {
                float g = bpk_load_f32(w, dt, j), be = bpk_load_f32(b, dt, j);
                if (RMS)
                    out = g * (rstd * v);
                else
                    out = g * (rstd * (v - wd.mean)) + be;
            } else if (w) {
                float g = bpk_load_f32(w, dt, j);
                if (RMS)
                    out = g * (rstd * v);
                else
                    out = g * (rstd * (v - wd.mean));
            } else if (b) {
                out = (rstd * (v - wd.mean)) + bpk_load_f32(b, dt, j);
            } else {
                if (RMS)
                    out = rstd * v;
                else
                    out = rstd * (v - wd.mean);
            }
            bpk_store_f32(y, dt, base + j, out);
        }
    }
}

/* ---- RowwiseMomentsCUDAKernel + LayerNormForwardCUDAKernel ---- */

template <typename A> struct ln_welford { /* WelfordData<A, int64_t> */
    A mean, m2;
    long long n;
    A nf;
};

/* WelfordOps::reduce */
template <typename A>
__device__ __forceinline__ ln_welford<A> ln_reduce(ln_welford<A> acc, A data)
{
    long long new_n = acc.n + 1;
    A new_nf = static_cast<A>(new_n);
    A delta = data - acc.mean;
    A new_mean = acc.mean + delta / new_nf;
    A new_delta = data - new_mean;
    return {new_mean, acc.m2 + delta * new_delta, new_n, new_nf};
}

/* WelfordOps::combine */
template <typename A>
__device__ __forceinline__ ln_welford<A> ln_wcombine(ln_welford<A> a, ln_welford<A> b)
{
    if (a.nf == 0)
        return b;
    if (b.nf == 0)
        return a;
    A delta = b.mean - a.mean;
    A new_count = a.nf + b.nf;
    A nb_over_n = b.nf / new_count;
    return {a.mean + delta * nb_over_n, a.m2 + b.m2 + delta * delta * a.nf * nb_over_n, -1,
            new_count};
}

/* cuda_utils::WarpReduce */
template <typename A>
__device__ __forceinline__ ln_welford<A> ln_warp(ln_welford<A> v)
{
    for (int offset = LN_WARP >> 1; offset > 0; offset >>= 1) {
        ln_welford<A> o = {__shfl_down_sync(0xffffffffu, v.mean, offset),
                           __shfl_down_sync(0xffffffffu, v.m2, offset),
                           __shfl_down_sync(0xffffffffu, v.n, offset),
                           __shfl_down_sync(0xffffffffu, v.nf, offset)};
        v = ln_wcombine(v, o);
    }
    return v;
}

__device__ __forceinline__ float ln_rsqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double ln_rsqrt(double v) { return rsqrt(v); }

template <typename A, bool RMS>
__global__ void ln_rowwise_kernel(void *y, const void *x, const void *w, const void *b,
                                  int dt, int64_t N, A eps)
{
    __shared__ ln_welford<A> shared[LN_MOMENTS_THREADS / LN_WARP];
    __shared__ A stats[2];
    const int64_t i = blockIdx.x;
    ln_welford<A> val = {0, 0, 0, 0};
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
        val = ln_reduce<A>(val, bpk_num<A>::load(x, dt, i * N + j));
    /* cuda_utils::BlockReduce (Block1D) */
    const int tid = threadIdx.x, lid = tid % LN_WARP, wid = tid / LN_WARP;
    val = ln_warp(val);
    __syncthreads();
    if (lid == 0)
        shared[wid] = val;
    __syncthreads();
    if (tid < (int)blockDim.x / LN_WARP)
        val = shared[lid];
    else
        val = {0, 0, 0, 0};
    if (wid == 0)
        val = ln_warp(val);
    if (tid == 0) {
        /* WelfordOps::project, correction 0 */
        A m1 = val.mean;
        A divisor = val.nf > A(0) ? val.nf - A(0) : A(0);
        A m2 = val.m2 / divisor;
        if (RMS) {
            stats[0] = 0;
            stats[1] = ln_rsqrt(m2 + m1 * m1 + eps);
        } else {
            stats[0] = m1;
            stats[1] = ln_rsqrt(m2 + eps);
        }
    }
    __syncthreads();
    const A mean = stats[0], rstd = stats[1];
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
        const int64_t index = i * N + j;
        const A gamma_v = w == nullptr ? A(1) : bpk_num<A>::load(w, dt, j);
        const A xv = bpk_num<A>::load(x, dt, index);
        A out;
        if (RMS) {
            out = xv * rstd * gamma_v;
        } else {
            const A beta_v = b == nullptr ? A(0) : bpk_num<A>::load(b, dt, j);
            out = (xv - mean) * rstd * gamma_v + beta_v;
        }
        bpk_num<A>::store(y, dt, index, out);
    }
}

static bool ln_aligned(const void *p, int64_t alignment)
{
    return p == nullptr || (uintptr_t)p % (uintptr_t)alignment == 0;
}

extern "C" int bpk_layer_norm(void *stream, void *out, const void *x, const void *w,
                              const void *b, int dt, int64_t rows, int64_t cols, double eps,
                              int rms)
{
    if ((dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16) || rows < 0 ||
        cols < 0 || rows > 0x7fffffff || (rms && b))
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || cols == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t size = dt == BPK_F64 ? 8 : dt == BPK_F32 ? 4 : 2;
    const int64_t alignment = LN_VEC * size;
    if (dt != BPK_F64 && cols <= (1LL << 24) && cols % LN_VEC == 0 && ln_aligned(x, alignment) &&
        ln_aligned(out, alignment) && ln_aligned(w, alignment) && ln_aligned(b, alignment)) {
        dim3 threads(LN_WARP, LN_VEC_WARPS, 1);
        if (rms)
            ln_vec_kernel<true><<<(unsigned)rows, threads, 0, s>>>(out, x, w, b, dt, (int)cols,
                                                                   (float)eps);
        else
            ln_vec_kernel<false><<<(unsigned)rows, threads, 0, s>>>(out, x, w, b, dt,
                                                                    (int)cols, (float)eps);
    } else if (dt == BPK_F64) {
        if (rms)
            ln_rowwise_kernel<double, true><<<(unsigned)rows, LN_MOMENTS_THREADS, 0, s>>>(
                out, x, w, b, dt, cols, eps);
        else
            ln_rowwise_kernel<double, false><<<(unsigned)rows, LN_MOMENTS_THREADS, 0, s>>>(
                out, x, w, b, dt, cols, eps);
    } else {
        if (rms)
            ln_rowwise_kernel<float, true><<<(unsigned)rows, LN_MOMENTS_THREADS, 0, s>>>(
                out, x, w, b, dt, cols, (float)eps);
        else
            ln_rowwise_kernel<float, false><<<(unsigned)rows, LN_MOMENTS_THREADS, 0, s>>>(
                out, x, w, b, dt, cols, (float)eps);
    }
    return bpk_launched();
}

/* ---- the fixed formulation ---- */

template <typename T>
__global__ void bpk_rms_norm_fixed_kernel(void *out, const void *x, const void *w, int dt,
                                          int64_t cols, T eps)
{
    typedef bpk_ieee<T> F;
    __shared__ T red[BPK_THREADS];
    const int64_t base = (int64_t)blockIdx.x * cols;
    T s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS) {
        T v = bpk_num<T>::load(x, dt, base + j);
        s = F::add(s, F::mul(v, v));
    }
    s = bpk_block_sum<T>(s, red);
    T r = F::rsqrt(F::add(F::div(s, (T)cols), eps));
    for (int64_t j = threadIdx.x; j < cols; j += BPK_THREADS) {
        T y = bpk_num<T>::round(dt, F::mul(bpk_num<T>::load(x, dt, base + j), r));
        bpk_num<T>::store(out, dt, base + j, F::mul(bpk_num<T>::load(w, dt, j), y));
    }
}

extern "C" int bpk_rms_norm_fixed(void *stream, void *out, const void *x, const void *w,
                                  int dt, int64_t rows, int64_t cols, double eps)
{
    if ((dt != BPK_F32 && dt != BPK_F64 && dt != BPK_BF16 && dt != BPK_F16) || rows < 0 ||
        cols < 0 || rows > 0x7fffffff)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || cols == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dt == BPK_F64)
        bpk_rms_norm_fixed_kernel<double><<<(unsigned)rows, BPK_THREADS, 0, s>>>(out, x, w, dt,
                                                                                 cols, eps);
    else
        bpk_rms_norm_fixed_kernel<float><<<(unsigned)rows, BPK_THREADS, 0, s>>>(
            out, x, w, dt, cols, (float)eps);
    return bpk_launched();
}
