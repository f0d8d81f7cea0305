/* The stack's device on a CUDA GPU (stack_ops.h): its memory, parameter
 * generation (kernels/ bpk_uniform_range) and cuBLAS for the matmuls, on
 * the CUDA backend's device and stream; the other ops run through that
 * backend's op table.
 *
 * Memory is cudaMalloc'd per tensor (the backend's size-bucketed pool would
 * round a 13 GB weight set up to powers of two).  Every launch is checked
 * and followed by a stream synchronisation (bp_cuda_finish), so that a
 * fault names its kernel.
 *
 * cuBLAS: a handle of our own on the backend's stream, with a fixed 32 MiB
 * workspace and atomics not allowed, so that algorithm choice and
 * reduction order cannot vary between runs.  Two settings:
 *   pedantic (default): CUBLAS_PEDANTIC_MATH, CUBLAS_COMPUTE_32F_PEDANTIC,
 *     as the backend's matmul;
 *   default: CUBLAS_DEFAULT_MATH with CUBLAS_COMPUTE_32F and reduced-
 *     precision split-K reductions disallowed: tensor cores, PyTorch's
 *     bf16/fp16 setting.
 * Row-major Y = X W^T is column-major Y^T = W^T X^T: cuBLAS gets
 * (op_T, op_N) with W first.  Attention runs per head as strided batches
 * over the [T, heads*d] layout. */
#include "stack_ops.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cuda.h"
#include "bpk.h"
#include "cublas_dl.h"
#include "cuda_check.h"

#define WORKSPACE_BYTES ((size_t)32 << 20)

typedef struct {
    bp_backend_t *be;
    cublasHandle_t blas;
    void *workspace;
    bp_stack_gemm_t gemm;
} scuda_t;

static scuda_t *S(bp_stack_dev_t *s)
{
    return (scuda_t *)s->state;
}

static void *stream(bp_stack_dev_t *s)
{
    return bp_cuda_stream(S(s)->be);
}

/* Checked calls: a failure is BP_EINTERNAL (cuda_check.h). */
#define CU(call) CUDA_TRY(call, BP_EINTERNAL)
#define BL(call) BLAS_TRY(call, BP_EINTERNAL)

static bp_status finish(bp_stack_dev_t *s, const char *k, int rc, bp_error_t *err)
{
    return bp_cuda_finish(S(s)->be, k, rc, err);
}

static cudaDataType_t ctype(bp_dtype_t dt)
{
    return dt == BP_BF16 ? CUDA_R_16BF : dt == BP_F16 ? CUDA_R_16F : CUDA_R_32F;
}

static cublasComputeType_t compute(bp_stack_dev_t *s)
{
    return S(s)->gemm == BP_STACK_GEMM_PEDANTIC ? CUBLAS_COMPUTE_32F_PEDANTIC
                                                : CUBLAS_COMPUTE_32F;
}

static char *at(const bp_buf_t *b, size_t i)
{
    return (char *)b->dev + i * bp_dtype_info(b->dtype)->size;
}

static bp_status fits_int(int64_t a, int64_t b, int64_t c, bp_error_t *err)
{
    if (a > 0x7fffffff || b > 0x7fffffff || c > 0x7fffffff)
        return bp_error_set(err, BP_EINPUT, "matmul dimensions %lld x %lld x "
                            "%lld exceed cuBLAS's int range", (long long)a,
                            (long long)b, (long long)c);
    return BP_OK;
}

/* ---- memory and generation ---------------------------------------------- */

static bp_status g_alloc(bp_stack_dev_t *s, bp_buf_t *b, bp_dtype_t dt, int ndim,
                         const int64_t *shape, bp_error_t *err)
{
    bp_status st = bp_buf_shape(b, dt, ndim, shape, err);
    if (st || (st = bp_cuda_use(S(s)->be, err)))
        return st;
    size_t n = bp_buf_nbytes(b);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n ? n : 256);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return bp_error_set(err, BP_ENOMEM,
                            "cannot allocate %zu bytes of device memory: %s",
                            n, cudaGetErrorString(e));
    }
    b->dev = p;
    CU(cudaMemsetAsync(p, 0, n, (cudaStream_t)stream(s)));
    return BP_OK;
}

static void g_release(bp_stack_dev_t *s, bp_buf_t *b)
{
    if (b->dev) {
        cudaStreamSynchronize((cudaStream_t)stream(s));
        cudaFree(b->dev);
    }
    free(b->data);
    memset(b, 0, sizeof *b);
}

static bp_status g_put(bp_stack_dev_t *s, bp_buf_t *b, const void *host,
                       bp_error_t *err)
{
    cudaStream_t q = (cudaStream_t)stream(s);
    CU(cudaMemcpyAsync(b->dev, host, bp_buf_nbytes(b), cudaMemcpyHostToDevice,
                       q));
    CU(cudaStreamSynchronize(q));
    return BP_OK;
}

static bp_status g_get(bp_stack_dev_t *s, const bp_buf_t *b, void *host,
                       bp_error_t *err)
{
    cudaStream_t q = (cudaStream_t)stream(s);
    CU(cudaMemcpyAsync(host, b->dev, bp_buf_nbytes(b), cudaMemcpyDeviceToHost,
                       q));
    CU(cudaStreamSynchronize(q));
    return BP_OK;
}

static bp_status g_uniform(bp_stack_dev_t *s, bp_buf_t *out, size_t off, size_t n,
                           uint64_t seed, uint64_t rs, uint64_t first,
                           float low, float high, bp_error_t *err)
{
    if (off > out->numel || n > out->numel - off)
        return bp_error_set(err, BP_EINTERNAL, "uniform past the end");
    int rc = bpk_uniform_range(stream(s), at(out, off), (int)out->dtype,
                               (int64_t)n, first, seed, rs, low, high);
    return finish(s, "bpk_uniform_range", rc, err);
}

static bp_status g_copy(bp_stack_dev_t *s, bp_buf_t *dst, size_t doff,
                        const bp_buf_t *src, size_t soff, size_t n,
                        bp_error_t *err)
{
    if (dst->dtype != src->dtype || doff > dst->numel ||
        n > dst->numel - doff || soff > src->numel || n > src->numel - soff)
        return bp_error_set(err, BP_EINTERNAL, "copy out of range");
    cudaStream_t q = (cudaStream_t)stream(s);
    CU(cudaMemcpyAsync(at(dst, doff), at(src, soff),
                       n * bp_dtype_info(dst->dtype)->size,
                       cudaMemcpyDeviceToDevice, q));
    CU(cudaStreamSynchronize(q));
    return BP_OK;
}

/* ---- matmuls ------------------------------------------------------------- */

static bp_status g_linear(bp_stack_dev_t *s, bp_buf_t *out, const bp_buf_t *x,
                          const bp_buf_t *w, bp_error_t *err)
{
    bp_dtype_t dt = x->dtype;
    int64_t T = x->shape[0], K = x->shape[1], N = w->shape[0];
    bp_status e;
    if ((e = bp_stack_check_2d(w, N, K, dt, "linear weight", err)) ||
        (e = bp_stack_check_2d(out, T, N, dt, "linear out", err)) ||
        (e = fits_int(T, N, K, err)))
        return e;
    float one = 1.0f, zero = 0.0f;
    BL(BP_BLAS(cublasGemmEx)(S(s)->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)T,
                    (int)K, &one, w->dev, ctype(dt), (int)K, x->dev, ctype(dt),
                    (int)K, &zero, out->dev, ctype(dt), (int)N, compute(s),
                    CUBLAS_GEMM_DEFAULT));
    return finish(s, "cublasGemmEx (linear)", 0, err);
}

static bp_status g_attention(bp_stack_dev_t *s, bp_buf_t *out, const bp_buf_t *q,
                             const bp_buf_t *k, const bp_buf_t *v,
                             int64_t heads, bp_buf_t *scores, bp_error_t *err)
{
    bp_dtype_t dt = q->dtype;
    int64_t T = q->shape[0], H = q->shape[1], d = H / heads;
    bp_status e;
    if ((e = bp_stack_check_2d(k, T, H, dt, "attention k", err)) ||
        (e = bp_stack_check_2d(v, T, H, dt, "attention v", err)) ||
        (e = bp_stack_check_2d(out, T, H, dt, "attention out", err)) ||
        (e = fits_int(T, T, H, err)))
        return e;
    if (scores->dtype != dt || scores->numel < (size_t)(heads * T * T))
        return bp_error_set(err, BP_EINTERNAL, "attention scratch too small");
    float one = 1.0f, zero = 0.0f;
    cudaDataType_t ty = ctype(dt);
    /* scores_h [T, T] = q_h k_h^T: column-major S^T = K_h^T-op ... */
    BL(BP_BLAS(cublasGemmStridedBatchedEx)(
        S(s)->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)T, (int)T, (int)d, &one,
        k->dev, ty, (int)H, (long long)d, q->dev, ty, (int)H, (long long)d,
        &zero, scores->dev, ty, (int)T, (long long)(T * T), (int)heads,
        compute(s), CUBLAS_GEMM_DEFAULT));
    if ((e = finish(s, "cublasGemmStridedBatchedEx (q k^T)", 0, err)))
        return e;
    /* The probabilities through the CUDA backend's op table: PyTorch
     * divides by the Python float sqrt(d) as x * r there, r = 1.0 / b taken
     * in double and rounded once to float (d = 96: 0x3dd105ec, not 1.0f /
     * (float)b's 0x3dd105eb). */
    if ((e = bp_stack_attn_softmax(s, scores, heads, T, d, err)))
        return e;
    /* out_h [T, d] = p_h [T, T] v_h [T, d] */
    BL(BP_BLAS(cublasGemmStridedBatchedEx)(
        S(s)->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)d, (int)T, (int)T, &one,
        v->dev, ty, (int)H, (long long)d, scores->dev, ty, (int)T,
        (long long)(T * T), &zero, out->dev, ty, (int)H, (long long)d,
        (int)heads, compute(s), CUBLAS_GEMM_DEFAULT));
    return finish(s, "cublasGemmStridedBatchedEx (p v)", 0, err);
}

static bp_status g_sync(bp_stack_dev_t *s, bp_error_t *err)
{
    CU(cudaStreamSynchronize((cudaStream_t)stream(s)));
    return BP_OK;
}

static void g_close(bp_stack_dev_t *s)
{
    if (!s)
        return;
    scuda_t *c = S(s);
    if (c) {
        bp_cuda_use(c->be, NULL);
        bp_stack_rows_release(s);
        cudaStreamSynchronize((cudaStream_t)bp_cuda_stream(c->be));
        if (c->blas)
            BP_BLAS(cublasDestroy)(c->blas);
        if (c->workspace)
            cudaFree(c->workspace);
        free(c);
    }
    free(s);
}

static bp_status setup(bp_stack_dev_t *s, bp_error_t *err)
{
    scuda_t *c = S(s);
    bp_status st = bp_cuda_use(c->be, err);
    if (!st)
        st = bp_cublas_load(err);
    if (st)
        return st;
    CU(cudaMalloc(&c->workspace, WORKSPACE_BYTES));
    BL(BP_BLAS(cublasCreate)(&c->blas));
    /* cublasSetStream resets the workspace: the stream goes first. */
    BL(BP_BLAS(cublasSetStream)(c->blas, (cudaStream_t)bp_cuda_stream(c->be)));
    BL(BP_BLAS(cublasSetWorkspace)(c->blas, c->workspace, WORKSPACE_BYTES));
    if (c->gemm == BP_STACK_GEMM_PEDANTIC)
        BL(BP_BLAS(cublasSetMathMode)(c->blas, CUBLAS_PEDANTIC_MATH));
    else
        BL(BP_BLAS(cublasSetMathMode)(c->blas,
                             (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    BL(BP_BLAS(cublasSetAtomicsMode)(c->blas, CUBLAS_ATOMICS_NOT_ALLOWED));
    BL(BP_BLAS(cublasSetPointerMode)(c->blas, CUBLAS_POINTER_MODE_HOST));
    return BP_OK;
}

bp_status bp_stack_dev_cuda_open(bp_backend_t *cuda, bp_stack_gemm_t gemm,
                            bp_stack_dev_t **out, bp_error_t *err)
{
    *out = NULL;
    if (!cuda || strcmp(cuda->name, "cuda") != 0)
        return bp_error_set(err, BP_EINTERNAL, "stack CUDA ops need the CUDA "
                            "backend");
    bp_stack_dev_t *s = calloc(1, sizeof *s);
    scuda_t *c = calloc(1, sizeof *c);
    if (!s || !c) {
        free(s);
        free(c);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    c->be = cuda;
    c->gemm = gemm;
    s->state = c;
    s->be = cuda;
    s->name = "cuda";
    s->scratch_scores = true;
    json_t *fp = cuda->fingerprint;
    const char *gpu = json_string_value(json_object_get(fp, "gpu"));
    const char *cc = json_string_value(json_object_get(fp, "cc"));
    const char *bl = json_string_value(json_object_get(fp, "cublas"));
    snprintf(s->desc, sizeof s->desc,
             "cuda %s (cc %s, cuBLAS %s; matmul: %s, no atomics)",
             gpu ? gpu : "?", cc ? cc : "?", bl ? bl : "?",
             gemm == BP_STACK_GEMM_PEDANTIC
                 ? "CUBLAS_COMPUTE_32F_PEDANTIC, pedantic math"
                 : "CUBLAS_COMPUTE_32F, default math (tensor cores)");
    s->alloc = g_alloc;
    s->release = g_release;
    s->put = g_put;
    s->get = g_get;
    s->uniform = g_uniform;
    s->copy = g_copy;
    s->linear = g_linear;
    s->attention = g_attention;
    s->sync = g_sync;
    s->close = g_close;
    bp_status st = setup(s, err);
    if (st) {
        g_close(s);
        return st;
    }
    *out = s;
    return BP_OK;
}
