/* The stack's device on a CUDA GPU (stack_ops.h): its memory, parameter
 * generation (kernels/ bpk_uniform_range) and, for the matmuls, the CUDA
 * backend's GEMM module (cuda_gemm.h), on the CUDA backend's device and
 * stream; the other ops run through that backend's op table.
 *
 * Memory is cudaMalloc'd per tensor (the backend's size-bucketed pool would
 * round a 13 GB weight set up to powers of two).  Every launch is checked
 * and followed by a stream synchronisation (bp_cuda_finish), so that a
 * fault names its kernel.
 *
 * The matmuls are the calls PyTorch makes for the model's eager code, on
 * the stack's tensors as PyTorch holds them: a projection is F.linear
 * without bias, x @ w.t() (mm of x [T, K] and the transposed view of w
 * [N, K]); attention per head is torch.matmul on the heads' views of the
 * [T, hidden] rows, q [heads, T, d] with strides (d, hidden, 1) times the
 * view k.transpose of the same layout (bmm), then the probabilities times
 * v.  Two settings (--gemm):
 *   pedantic (default): bitprobe's pinned GEMM (CUBLAS_PEDANTIC_MATH,
 *     CUBLAS_COMPUTE_32F_PEDANTIC, cublasGemmEx, no atomics, 32 MiB), the
 *     heads' outputs written in place into the [T, hidden] rows (bmm's
 *     out= view);
 *   default: PyTorch 2.11's calls with the CUDA backend's BLAS settings
 *     (the environment's, as PyTorch reads it), p v into a fresh
 *     [heads, T, d] result then copied into the rows, as the model's
 *     transpose(1, 2).reshape does. */
#include "stack_ops.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cuda.h"
#include "bpk.h"
#include "cuda_check.h"
#include "cuda_gemm.h"

typedef struct {
    bp_backend_t *be;
    bp_cuda_blas_t *blas;
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

static bp_status finish(bp_stack_dev_t *s, const char *k, int rc, bp_error_t *err)
{
    return bp_cuda_finish(S(s)->be, k, rc, err);
}

static char *at(const bp_buf_t *b, size_t i)
{
    return (char *)b->dev + i * bp_dtype_info(b->dtype)->size;
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

/* A 3-D view of the stack's memory. */
static bp_cuda_mat_t view3(const void *p, int64_t a, int64_t b, int64_t c, int64_t sa,
                           int64_t sb, int64_t sc)
{
    bp_cuda_mat_t m;
    memset(&m, 0, sizeof m);
    m.base = p;
    m.geo.ndim = 3;
    m.geo.shape[0] = a;
    m.geo.shape[1] = b;
    m.geo.shape[2] = c;
    m.geo.strides[0] = sa;
    m.geo.strides[1] = sb;
    m.geo.strides[2] = sc;
    return m;
}

/* F.linear(x, w): x @ w.t(), w.t() the view [K, N] of w [N, K]. */
static bp_status g_linear(bp_stack_dev_t *s, bp_buf_t *out, const bp_buf_t *x,
                          const bp_buf_t *w, bp_error_t *err)
{
    bp_dtype_t dt = x->dtype;
    int64_t T = x->shape[0], K = x->shape[1], N = w->shape[0];
    bp_status e;
    if ((e = bp_stack_check_2d(w, N, K, dt, "linear weight", err)) ||
        (e = bp_stack_check_2d(out, T, N, dt, "linear out", err)))
        return e;
    bp_cuda_mat_t mx, mw;
    memset(&mx, 0, sizeof mx);
    memset(&mw, 0, sizeof mw);
    int64_t sx[2] = {T, K}, sw[2] = {N, K};
    mx.base = x->dev;
    bp_strided_contiguous(2, sx, &mx.geo);
    mw.base = w->dev;
    bp_strided_contiguous(2, sw, &mw.geo);
    bp_strided_t g = mw.geo; /* .t() */
    mw.geo.shape[0] = K;
    mw.geo.shape[1] = N;
    mw.geo.strides[0] = g.strides[1];
    mw.geo.strides[1] = g.strides[0];
    return bp_cuda_addmm(S(s)->blas, dt, NULL, &mx, &mw, 0.0, 1.0, out->dev, NULL, err);
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
        (e = bp_stack_check_2d(out, T, H, dt, "attention out", err)))
        return e;
    if (scores->dtype != dt || scores->numel < (size_t)(heads * T * T))
        return bp_error_set(err, BP_EINTERNAL, "attention scratch too small");
    bp_cuda_blas_t *h = S(s)->blas;
    /* scores [heads, T, T] = q_h k_h^T: the heads' views of the rows */
    bp_cuda_mat_t mq = view3(q->dev, heads, T, d, d, H, 1),
                  mk = view3(k->dev, heads, d, T, d, 1, H);
    if ((e = bp_cuda_baddbmm(h, dt, NULL, &mq, &mk, 0.0, 1.0, NULL, scores->dev, NULL, err)))
        return e;
    /* The probabilities through the CUDA backend's op table: PyTorch
     * divides by the Python float sqrt(d) as x * r there, r = 1.0 / b taken
     * in double and rounded once to float (d = 96: 0x3dd105ec, not 1.0f /
     * (float)b's 0x3dd105eb). */
    if ((e = bp_stack_attn_softmax(s, scores, heads, T, d, err)))
        return e;
    /* out_h [T, d] = p_h [T, T] v_h [T, d] */
    bp_cuda_mat_t mp = view3(scores->dev, heads, T, T, T * T, T, 1),
                  mv = view3(v->dev, heads, T, d, d, H, 1);
    if (S(s)->gemm == BP_STACK_GEMM_PEDANTIC) { /* into the rows in place */
        bp_strided_t res = view3(out->dev, heads, T, d, d, H, 1).geo;
        return bp_cuda_baddbmm(h, dt, NULL, &mp, &mv, 0.0, 1.0, &res, out->dev, NULL, err);
    }
    bp_backend_t *be = S(s)->be;
    bp_buf_t tmp = {0};
    int64_t n = heads * T * d;
    if ((e = bp_buf_shape(&tmp, dt, 1, &n, err)) || (e = be->dev_alloc(be, &tmp, err)))
        return e;
    e = bp_cuda_baddbmm(h, dt, NULL, &mp, &mv, 0.0, 1.0, NULL, tmp.dev, NULL, err);
    if (!e) { /* attn.transpose(0, 1).reshape(T, hidden): a copy */
        bpk_view_t vw;
        memset(&vw, 0, sizeof vw);
        vw.ndim = 3;
        vw.shape[0] = T;
        vw.shape[1] = heads;
        vw.shape[2] = d;
        vw.strides[0] = d;
        vw.strides[1] = T * d;
        vw.strides[2] = 1;
        e = finish(s, "bpk_strided_copy",
                   bpk_strided_copy(stream(s), out->dev, tmp.dev, (int)dt, &vw, n), err);
    }
    be->dev_free(be, &tmp);
    return e;
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
        bp_cuda_blas_close(c->blas);
        free(c);
    }
    free(s);
}

/* The GEMM module's handle: pinned, or PyTorch's with the backend's
 * settings. */
static bp_status setup(bp_stack_dev_t *s, bp_error_t *err)
{
    scuda_t *c = S(s);
    bp_blas_settings_t set = *bp_cuda_blas_settings(bp_cuda_gemm_handle(c->be));
    if (c->gemm == BP_STACK_GEMM_PEDANTIC) {
        bp_blas_settings_default(&set);
        set.pedantic = true;
    }
    return bp_cuda_blas_open(c->be, &set, &c->blas, err);
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
             "cuda %s (cc %s, cuBLAS %s; matmul: %s)",
             gpu ? gpu : "?", cc ? cc : "?", bl ? bl : "?",
             gemm == BP_STACK_GEMM_PEDANTIC
                 ? "CUBLAS_COMPUTE_32F_PEDANTIC, pedantic math, no atomics"
                 : "PyTorch 2.11's cuBLAS calls, the backend's BLAS settings");
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
