/* The CUDA invariance engines: a batch through cuBLAS with PyTorch's
 * settings, through the CUDA backend's pinned (pedantic) matmul, and
 * through cuBLASLt as PyTorch's Lt path calls it.  Only this file, the
 * backend's and the stack's include CUDA headers; inputs are generated on
 * the device by the counter generator's kernel (bit-identical to the host's,
 * rng.h), on the CUDA backend's device and stream.
 *
 * "cublas": what torch.mm runs in PyTorch 2.11 (aten/src/ATen/native/cuda/
 *   Blas.cpp: mm_out_cuda -> addmm_out_cuda_impl with beta 0, which the
 *   cuBLASLt path refuses (isInputCompliesAddmmCudaLt wants beta 1) ->
 *   at::cuda::blas::gemm; aten/src/ATen/cuda/CUDABlas.cpp, with the default
 *   preferred BLAS backend, cuBLAS):
 *     bf16: cublasGemmEx(CUDA_R_16BF in and out, compute CUDA_R_32F, which
 *       cublas_api.h's C++ wrapper turns into CUBLAS_COMPUTE_32F under the
 *       default math mode, CUBLAS_GEMM_DEFAULT_TENSOR_OP), math mode
 *       CUBLAS_DEFAULT_MATH (allow_bf16_reduced_precision_reduction is True
 *       by default: no CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
 *     fp16: the same with CUDA_R_16F (allow_fp16_reduced_precision_reduction
 *       True, allow_fp16_accumulation False);
 *     fp32: cublasSgemm with the handle's math mode CUBLAS_DEFAULT_MATH
 *       (torch.backends.cuda.matmul.allow_tf32 False, "ieee");
 *     tf32: cublasSgemm under CUBLAS_TF32_TENSOR_OP_MATH (allow_tf32 True).
 *   Handle: its own, on the stream, with the workspace PyTorch gives it
 *   (CublasHandlePool.cpp: 32 MiB on compute capability 9.x to 12.x,
 *   4096 KiB * 2 + 16 KiB * 8 elsewhere), atomics and pointer mode at
 *   cuBLAS's defaults (not allowed, host), alpha 1 and beta 0 in float.
 * "cublas-pedantic": the CUDA backend's matmul (bp_cuda_gemm: what
 *   `bitprobe run --device cuda` computes): CUBLAS_PEDANTIC_MATH,
 *   CUBLAS_COMPUTE_32F_PEDANTIC, 32 MiB workspace, atomics not allowed.
 * "cublaslt": PyTorch's Lt path (TORCH_BLAS_PREFER_CUBLASLT=1:
 *   bgemm_internal_cublaslt): compute CUBLAS_COMPUTE_32F (tf32:
 *   CUBLAS_COMPUTE_32F_FAST_TF32), scale CUDA_R_32F, the operands' types,
 *   workspace preference 1 MiB (CUBLASLT_WORKSPACE_SIZE's default, within
 *   the cuBLAS workspace), minimum alignments of A, B and C from their
 *   addresses (at most 256), the heuristic's first algorithm.
 *
 * Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (N, N),
 * m = N, n = M, b first (ld N), then a (ld K), c (ld N), as PyTorch's
 * cublasCommonArgs arranges a row-major result.  The batch is always rows
 * [0, M) of one device buffer, so the operands' addresses (and so their
 * alignment, which the heuristics read) are the same at every M.
 *
 * The algorithm of a configuration: cuBLASLt's heuristic for the same
 * problem (the engine's compute type, workspace and alignments) with its
 * configuration read back (cublasLtMatmulAlgoConfigGetAttribute); for the
 * cuBLAS engines that algorithm is then run and its bits compared with
 * the engine's ("reproduces these bits" when identical: evidence that it is
 * what cuBLAS ran), and the cuBLASLt log of a second, logged call is kept
 * when it names an algorithm.  The measured call itself runs unlogged. */
#include "inv_engine.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_cuda.h"
#include "bpk.h"
#include "cublas_dl.h"
#include "cuda_check.h"

#define LT_WORKSPACE ((size_t)1 << 20)

typedef enum { K_CUBLAS, K_PEDANTIC, K_LT } kind_t;

typedef struct {
    bp_backend_t *be;
    kind_t kind;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    void *ws, *lt_ws;
    size_t ws_bytes;
    bp_inv_problem_t p;
    void *a, *probe, *b, *c, *c2; /* device */
    void *host, *host2;            /* probed rows downloaded */
    int64_t at;
    int cc_major;
} cu_t;

static cu_t *S(bp_inv_engine_t *e)
{
    return (cu_t *)e->state;
}

static cudaStream_t stream(cu_t *s)
{
    return (cudaStream_t)bp_cuda_stream(s->be);
}

/* Checked calls: a failure is BP_EINTERNAL (cuda_check.h). */
#define CU(call) CUDA_TRY(call, BP_EINTERNAL)
#define BL(call) BLAS_TRY(call, BP_EINTERNAL)

static size_t esize(const cu_t *s)
{
    return bp_dtype_info(s->p.dtype)->size;
}

static cudaDataType_t ctype(bp_dtype_t dt)
{
    return dt == BP_BF16 ? CUDA_R_16BF : dt == BP_F16 ? CUDA_R_16F : CUDA_R_32F;
}

static void free_dev(cu_t *s)
{
    void **p[] = {&s->a, &s->probe, &s->b, &s->c, &s->c2};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        if (*p[i])
            cudaFree(*p[i]);
        *p[i] = NULL;
    }
    free(s->host);
    free(s->host2);
    s->host = s->host2 = NULL;
}

static bp_status gen(cu_t *s, void *dst, int64_t row0, int64_t nrows, int64_t cols,
                     uint64_t rng_stream, bp_error_t *err)
{
    int rc = bpk_uniform_range(stream(s), dst, (int)s->p.dtype, nrows * cols,
                               (uint64_t)row0 * (uint64_t)cols, s->p.seed, rng_stream,
                               -1.0f, 1.0f);
    return bp_cuda_finish(s->be, "bpk_uniform_range", rc, err);
}

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    cu_t *s = S(e);
    free_dev(s);
    if (p->op != BP_INV_MATMUL)
        return bp_error_set(err, BP_EUNAVAIL, "%s: no %s", e->name, bp_inv_op_name(p->op));
    if (p->tf32 && s->kind == K_PEDANTIC)
        return bp_error_set(err, BP_EUNAVAIL, "pedantic math excludes TF32");
    if (p->dtype != BP_F32 && p->dtype != BP_BF16 && p->dtype != BP_F16)
        return bp_error_set(err, BP_EUNAVAIL, "%s: no %s", e->name,
                            bp_dtype_name(p->dtype));
    if (p->k > 0x7fffffff || p->n > 0x7fffffff || p->mmax > 0x7fffffff)
        return bp_error_set(err, BP_EINPUT, "matmul dimensions exceed cuBLAS's int range");
    s->p = *p;
    s->at = -1;
    bp_status st = bp_cuda_use(s->be, err);
    if (st)
        return st;
    size_t es = esize(s);
    CU(cudaMalloc(&s->a, (size_t)p->mmax * (size_t)p->k * es));
    CU(cudaMalloc(&s->probe, (size_t)p->rows * (size_t)p->k * es));
    CU(cudaMalloc(&s->b, (size_t)p->k * (size_t)p->n * es));
    CU(cudaMalloc(&s->c, (size_t)p->mmax * (size_t)p->n * es));
    CU(cudaMalloc(&s->c2, (size_t)p->mmax * (size_t)p->n * es));
    size_t out = bp_inv_result_elems(p) * es;
    if (!(s->host = malloc(out)) || !(s->host2 = malloc(out)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if ((st = gen(s, s->a, 0, p->mmax, p->k, BP_INV_STREAM_FILL, err)) ||
        (st = gen(s, s->probe, 0, p->rows, p->k, BP_INV_STREAM_PROBE, err)) ||
        (st = gen(s, s->b, 0, p->k, p->n, BP_INV_STREAM_B, err)))
        return st;
    const char *dt = bp_inv_dtype_name(p);
    switch (s->kind) {
    case K_CUBLAS:
        snprintf(e->desc, sizeof e->desc,
                 "PyTorch 2.11's torch.mm: %s, math mode %s, workspace %zu bytes",
                 p->dtype == BP_F32 ? "cublasSgemm"
                                    : "cublasGemmEx, CUBLAS_COMPUTE_32F, "
                                      "CUBLAS_GEMM_DEFAULT_TENSOR_OP",
                 p->tf32 ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_DEFAULT_MATH "
                 "(reduced-precision reductions allowed)", s->ws_bytes);
        break;
    case K_PEDANTIC:
        snprintf(e->desc, sizeof e->desc,
                 "bitprobe's CUDA backend matmul: cublasGemmEx, "
                 "CUBLAS_PEDANTIC_MATH, CUBLAS_COMPUTE_32F_PEDANTIC, atomics not "
                 "allowed, workspace 32 MiB");
        break;
    case K_LT:
        snprintf(e->desc, sizeof e->desc,
                 "PyTorch's cuBLASLt path (TORCH_BLAS_PREFER_CUBLASLT=1): "
                 "cublasLtMatmul, %s, the heuristic's first algorithm, workspace "
                 "%zu bytes, alignments from the addresses (%s)",
                 p->tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F",
                 LT_WORKSPACE, dt);
        break;
    }
    return BP_OK;
}

/* Rows [pos, pos + R) of a hold the probed rows; the rows they replaced
 * last time are fillers again. */
static bp_status place(cu_t *s, int64_t pos, bp_error_t *err)
{
    if (s->at == pos)
        return BP_OK;
    size_t row = (size_t)s->p.k * esize(s);
    bp_status st;
    if (s->at >= 0 &&
        (st = gen(s, (char *)s->a + (size_t)s->at * row, s->at, s->p.rows, s->p.k,
                  BP_INV_STREAM_FILL, err)))
        return st;
    CU(cudaMemcpyAsync((char *)s->a + (size_t)pos * row, s->probe,
                       (size_t)s->p.rows * row, cudaMemcpyDeviceToDevice, stream(s)));
    CU(cudaStreamSynchronize(stream(s)));
    s->at = pos;
    return BP_OK;
}

/* PyTorch's _getAlignment: the largest power of two up to 256 dividing the
 * address. */
static uint32_t alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && a % al)
        al /= 2;
    return al;
}

typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
} lt_t;

static void lt_free(lt_t *l)
{
    if (l->pref)
        BP_BLASLT(cublasLtMatmulPreferenceDestroy)(l->pref);
    if (l->lc)
        BP_BLASLT(cublasLtMatrixLayoutDestroy)(l->lc);
    if (l->lb)
        BP_BLASLT(cublasLtMatrixLayoutDestroy)(l->lb);
    if (l->la)
        BP_BLASLT(cublasLtMatrixLayoutDestroy)(l->la);
    if (l->desc)
        BP_BLASLT(cublasLtMatmulDescDestroy)(l->desc);
    memset(l, 0, sizeof *l);
}

/* The descriptors of the batch of m rows for compute type ct and a
 * workspace of ws bytes. */
static bp_status lt_make(cu_t *s, int64_t m, cublasComputeType_t ct, size_t ws,
                         void *c, lt_t *l, bp_error_t *err)
{
    memset(l, 0, sizeof *l);
    cudaDataType_t t = ctype(s->p.dtype);
    cublasOperation_t op = CUBLAS_OP_N;
    uint64_t n = (uint64_t)s->p.n, k = (uint64_t)s->p.k;
    BL(BP_BLASLT(cublasLtMatmulDescCreate)(&l->desc, ct, CUDA_R_32F));
    BL(BP_BLASLT(cublasLtMatmulDescSetAttribute)(l->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                 &op, sizeof op));
    BL(BP_BLASLT(cublasLtMatmulDescSetAttribute)(l->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                 &op, sizeof op));
    BL(BP_BLASLT(cublasLtMatrixLayoutCreate)(&l->la, t, n, k, (int64_t)n));
    BL(BP_BLASLT(cublasLtMatrixLayoutCreate)(&l->lb, t, k, (uint64_t)m, (int64_t)k));
    BL(BP_BLASLT(cublasLtMatrixLayoutCreate)(&l->lc, t, n, (uint64_t)m, (int64_t)n));
    BL(BP_BLASLT(cublasLtMatmulPreferenceCreate)(&l->pref));
    BL(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(
        l->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    uint32_t aa = alignment(s->b), ab = alignment(s->a), ac = alignment(c);
    BL(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(
        l->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa));
    BL(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(
        l->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab));
    BL(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(
        l->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ac, sizeof ac));
    return BP_OK;
}

static void algo_read(const cublasLtMatmulHeuristicResult_t *h, bp_inv_algo_t *a)
{
    const cublasLtMatmulAlgo_t *al = &h->algo;
    size_t w;
#define GET(attr, field)                                                       \
    BP_BLASLT(cublasLtMatmulAlgoConfigGetAttribute)(al, attr, &a->field,        \
                                                     sizeof a->field, &w)
    GET(CUBLASLT_ALGO_CONFIG_ID, id);
    GET(CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
    GET(CUBLASLT_ALGO_CONFIG_STAGES_ID, stages);
    GET(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, splitk);
    GET(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, reduction);
    GET(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, swizzle);
    GET(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, custom);
    GET(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, inner);
    GET(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster);
#undef GET
    a->workspace = h->workspaceSize;
    a->waves = h->wavesCount;
    a->known = a->lt = true;
}

static cublasComputeType_t lt_compute(const cu_t *s)
{
    if (s->kind == K_PEDANTIC)
        return CUBLAS_COMPUTE_32F_PEDANTIC;
    return s->p.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* The heuristic's first algorithm for the batch of m rows into c; with
 * run, it is run too (the cublaslt engine's computation). */
static bp_status lt_pick(cu_t *s, int64_t m, size_t ws_bytes, void *ws, void *c, bool run,
                         bp_inv_algo_t *algo, bool *found, bp_error_t *err)
{
    lt_t l;
    *found = false;
    bp_status st = lt_make(s, m, lt_compute(s), ws_bytes, c, &l, err);
    cublasLtMatmulHeuristicResult_t h;
    memset(&h, 0, sizeof h);
    int got = 0;
    if (!st) {
        cublasStatus_t r = BP_BLASLT(cublasLtMatmulAlgoGetHeuristic)(
            s->lt, l.desc, l.la, l.lb, l.lc, l.lc, l.pref, 1, &h, &got);
        if (r != CUBLAS_STATUS_SUCCESS && r != CUBLAS_STATUS_NOT_SUPPORTED)
            st = bp_blas_fail(err, BP_EINTERNAL, "cublasLtMatmulAlgoGetHeuristic",
                              r);
    }
    if (!st && got > 0) {
        *found = true;
        algo_read(&h, algo);
        if (run) {
            float one = 1.0f, zero = 0.0f;
            cublasStatus_t r = BP_BLASLT(cublasLtMatmul)(
                s->lt, l.desc, &one, s->b, l.la, s->a, l.lb, &zero, c, l.lc, c, l.lc,
                &h.algo, ws, ws_bytes, stream(s));
            if (r != CUBLAS_STATUS_SUCCESS)
                st = bp_blas_fail(err, BP_EINTERNAL, "cublasLtMatmul", r);
            else if (cudaStreamSynchronize(stream(s)) != cudaSuccess)
                st = bp_cuda_fail(err, BP_EINTERNAL, "cublasLtMatmul (running)",
                                  cudaGetLastError());
        }
    }
    lt_free(&l);
    return st;
}

/* cuBLAS as torch.mm calls it (see the top of the file). */
static bp_status torch_gemm(cu_t *s, int64_t m, void *c, bp_error_t *err)
{
    int n = (int)s->p.n, k = (int)s->p.k, mm = (int)m;
    float one = 1.0f, zero = 0.0f;
    if (s->p.dtype == BP_F32) {
        BL(BP_BLAS(cublasSetMathMode)(s->blas, s->p.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                         : CUBLAS_DEFAULT_MATH));
        BL(BP_BLAS(cublasSgemm)(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, mm, k, &one,
                                s->b, n, s->a, k, &zero, c, n));
    } else {
        cudaDataType_t t = ctype(s->p.dtype);
        BL(BP_BLAS(cublasSetMathMode)(s->blas, CUBLAS_DEFAULT_MATH));
        BL(BP_BLAS(cublasGemmEx)(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, mm, k, &one,
                                 s->b, t, n, s->a, t, k, &zero, c, t, n,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    }
    BL(BP_BLAS(cublasSetMathMode)(s->blas, CUBLAS_DEFAULT_MATH));
    CU(cudaStreamSynchronize(stream(s)));
    return BP_OK;
}

static bp_status engine_gemm(cu_t *s, int64_t m, void *c, bp_inv_algo_t *algo,
                             bp_error_t *err)
{
    switch (s->kind) {
    case K_CUBLAS: return torch_gemm(s, m, c, err);
    case K_PEDANTIC:
        return bp_cuda_gemm(s->be, s->p.dtype, m, s->p.n, s->p.k, s->a, s->b, c, err);
    case K_LT: {
        bool found;
        bp_status st = lt_pick(s, m, LT_WORKSPACE, s->lt_ws, c, true, algo, &found, err);
        if (!st && !found)
            return bp_error_set(err, BP_EINTERNAL,
                                "cublasLtMatmulAlgoGetHeuristic found no algorithm "
                                "for M = %lld", (long long)m);
        if (!st)
            snprintf(algo->source, sizeof algo->source, "cuBLASLt heuristic");
        return st;
    }
    }
    return BP_OK;
}

static bp_status fetch(cu_t *s, const void *c, int64_t pos, void *host, bp_error_t *err)
{
    size_t row = (size_t)s->p.n * esize(s);
    CU(cudaMemcpyAsync(host, (const char *)c + (size_t)pos * row,
                       (size_t)s->p.rows * row, cudaMemcpyDeviceToHost, stream(s)));
    CU(cudaStreamSynchronize(stream(s)));
    return BP_OK;
}

/* The cuBLASLt log of one call: the last message naming an algorithm. */
static char log_text[BP_INV_ALGO_TEXT];

static void log_cb(int level, const char *fn, const char *msg)
{
    (void)level;
    if (msg && (strstr(msg, "algo") || !log_text[0]))
        snprintf(log_text, sizeof log_text, "%s: %s", fn ? fn : "?", msg);
}

/* What the cuBLAS engines ran at m: the Lt heuristic's choice for the same
 * problem, run to see whether it gives the engine's bits, and the log of a
 * logged call when it names an algorithm. */
static bp_status attribute(cu_t *s, int64_t m, int64_t pos, bp_inv_algo_t *algo,
                           bp_error_t *err)
{
    bool found;
    bp_status st = lt_pick(s, m, s->ws_bytes, s->ws, s->c2, true, algo, &found, err);
    if (st)
        return st;
    if (found) {
        snprintf(algo->source, sizeof algo->source, "cuBLASLt heuristic");
        if ((st = fetch(s, s->c2, pos, s->host2, err)))
            return st;
        size_t nb = bp_inv_result_elems(&s->p) * esize(s);
        algo->same_bits = memcmp(s->host, s->host2, nb) == 0;
    }
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    log_text[0] = '\0';
    if (devnull)
        BP_BLASLT(cublasLtLoggerSetFile)(devnull);
    BP_BLASLT(cublasLtLoggerSetCallback)(log_cb);
    BP_BLASLT(cublasLtLoggerSetMask)(2 | 8);
    bp_inv_algo_t dummy;
    bp_inv_algo_init(&dummy);
    st = engine_gemm(s, m, s->c2, &dummy, err);
    BP_BLASLT(cublasLtLoggerSetMask)(0);
    BP_BLASLT(cublasLtLoggerSetCallback)(NULL);
    if (!st && strstr(log_text, "algo")) {
        algo->known = true;
        snprintf(algo->text, sizeof algo->text, "log: %s", log_text);
    }
    return st;
}

static bp_status run(bp_inv_engine_t *e, int64_t m, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err)
{
    cu_t *s = S(e);
    if (m > s->p.mmax || pos < 0 || pos + s->p.rows > m)
        return bp_error_set(err, BP_EINTERNAL, "%s: batch %lld with rows at %lld",
                            e->name, (long long)m, (long long)pos);
    bp_status st = bp_cuda_use(s->be, err);
    if (st || (st = place(s, pos, err)) || (st = engine_gemm(s, m, s->c, algo, err)) ||
        (st = fetch(s, s->c, pos, s->host, err)))
        return st;
    memcpy(out, s->host, bp_inv_result_elems(&s->p) * esize(s));
    if (s->kind != K_LT)
        st = attribute(s, m, pos, algo, err);
    return st;
}

static void cu_close(bp_inv_engine_t *e)
{
    cu_t *s = S(e);
    if (s) {
        if (s->be)
            bp_cuda_use(s->be, &(bp_error_t){0});
        free_dev(s);
        if (s->blas)
            BP_BLAS(cublasDestroy)(s->blas);
        if (s->lt)
            BP_BLASLT(cublasLtDestroy)(s->lt);
        if (s->ws)
            cudaFree(s->ws);
        if (s->lt_ws)
            cudaFree(s->lt_ws);
        bp_backend_close(s->be);
        free(s);
    }
    free(e);
}

static bp_status open_handles(cu_t *s, bp_error_t *err)
{
    bp_status st = bp_cuda_use(s->be, err);
    if (st || (st = bp_cublas_load(err)) || (st = bp_cublaslt_load(err)))
        return st;
    int dev = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&s->cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    s->ws_bytes = s->cc_major >= 9 && s->cc_major <= 12
                      ? (size_t)4096 * 8 * 1024
                      : (size_t)4096 * 1024 * 2 + (size_t)16 * 1024 * 8;
    CU(cudaMalloc(&s->ws, s->ws_bytes));
    CU(cudaMalloc(&s->lt_ws, LT_WORKSPACE));
    BL(BP_BLAS(cublasCreate)(&s->blas));
    /* cublasSetStream resets the workspace: the stream goes first */
    BL(BP_BLAS(cublasSetStream)(s->blas, stream(s)));
    BL(BP_BLAS(cublasSetWorkspace)(s->blas, s->ws, s->ws_bytes));
    BL(BP_BLASLT(cublasLtCreate)(&s->lt));
    return BP_OK;
}

bp_status bp_inv_engine_cuda(const char *kind, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err)
{
    *out = NULL;
    bp_inv_engine_t *e = calloc(1, sizeof *e);
    cu_t *s = calloc(1, sizeof *s);
    if (!e || !s) {
        free(e);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    s->kind = strcmp(kind, "cublas") == 0            ? K_CUBLAS
              : strcmp(kind, "cublas-pedantic") == 0 ? K_PEDANTIC
                                                     : K_LT;
    snprintf(e->name, sizeof e->name, "%s", kind);
    e->state = s;
    e->setup = setup;
    e->run = run;
    e->close = cu_close;
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.gpu = gpu;
    bp_status st = bp_backend_open("cuda", &o, &s->be, err);
    if (!st)
        st = open_handles(s, err);
    if (st) {
        cu_close(e);
        return st;
    }
    *out = e;
    return BP_OK;
}
