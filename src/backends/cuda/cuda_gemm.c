/* The CUDA GEMM module (cuda_gemm.h): gemm_plan.c decides PyTorch's call,
 * this file makes it.
 *
 * The handle is set up as CublasHandlePool.cpp sets up PyTorch's: created
 * on the backend's stream, with the cuBLAS workspace of
 * bp_blas_workspace (CUBLAS_WORKSPACE_CONFIG or the default for the
 * compute capability) and cuBLAS's default atomics and pointer modes; its
 * math mode is set before every call, as getCurrentCUDABlasHandle sets it
 * (and the bf16/fp16 helpers override it).  cuBLASLt runs on the same
 * handle cast to cublasLtHandle_t (what PyTorch does on CUDA) with a
 * workspace of its own (bp_blas_lt_workspace).
 *
 * The calls, as CUDABlas.cpp makes them:
 * - cuBLAS (gemm_internal_cublas, bgemm_internal_cublas): cublasSgemm and
 *   cublasDgemm (their StridedBatched forms) for fp32 and fp64;
 *   cublasGemmEx (StridedBatchedEx) for bf16 and fp16 with compute
 *   CUDA_R_32F, which cublas_api.h's C++ overload migrates to
 *   CUBLAS_COMPUTE_32F outside pedantic mode, and
 *   CUBLAS_GEMM_DEFAULT_TENSOR_OP; alpha and beta in float (double for
 *   fp64);
 * - cuBLASLt (bgemm_internal_cublaslt, gemm_and_bias): one matmul
 *   descriptor (compute type, scale type, transposes, the bias epilogue
 *   and its pointer), layouts (transposed ones with rows and columns
 *   swapped; batch count and strides for batches), a preference with the
 *   workspace size, the reduction-scheme mask and the minimum alignments
 *   of A, B, C (and the bias) from their addresses, the heuristic's first
 *   algorithm, then cublasLtMatmul with C as D.  A failed Lt GEMM falls
 *   back to cuBLAS, a failed bias epilogue to the addmm without the Lt
 *   path, as PyTorch does;
 * - pedantic (bitprobe's pinned GEMM): cublasGemmEx (StridedBatchedEx)
 *   under CUBLAS_PEDANTIC_MATH with CUBLAS_COMPUTE_32F_PEDANTIC
 *   (64F_PEDANTIC) and CUBLAS_GEMM_DEFAULT, 32 MiB of workspace.
 *
 * An operand PyTorch copies first (prepare_matrix_for_cublas's clone), a
 * self expanded into the result, and the k = 0 cases (zeros, or self times
 * beta) are done with the kernels of layout.cu and binary.cu. */
#include "cuda_gemm.h"

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cuda.h"
#include "bpk.h"
#include "cublas_dl.h"
#include "cuda_check.h"
#include "cuda_gemm_lt.h"

_Static_assert(BP_GEMM_LT_RED_NONE == CUBLASLT_REDUCTION_SCHEME_NONE &&
                   BP_GEMM_LT_RED_COMPUTE == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
               "cuBLASLt's reduction schemes");
_Static_assert(BP_GEMM_MATH_NO_RRR == CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
               "cuBLAS's math mode flag");
_Static_assert(sizeof(cublasLtMatmulAlgo_t) == 8 * sizeof(uint64_t),
               "cublasLtMatmulAlgo_t's size");

/* The warm-up's dtypes: fp32 (cublasSgemm), bf16 and fp16 (cublasGemmEx). */
#define WARM_DTYPES 3

struct bp_cuda_blas {
    bp_backend_t *be;
    bp_blas_settings_t set;
    int cc_major;
    cublasHandle_t blas;
    void *ws, *lt_ws;
    size_t ws_bytes, lt_ws_bytes;
    /* bp_cuda_blas_warm's threads, one per dtype */
    pthread_t warm[WARM_DTYPES];
    struct bp_cuda_warm {
        bp_cuda_blas_t *h;
        int dtype; /* an index into WARM_DTYPES */
    } warm_arg[WARM_DTYPES];
    int warming; /* threads started */
};

#define CU(call) CUDA_TRY(call, BP_EINTERNAL)
#define BL(call) BLAS_TRY(call, BP_EINTERNAL)

static cudaStream_t stream(const bp_cuda_blas_t *h)
{
    return (cudaStream_t)bp_cuda_stream(h->be);
}

const bp_blas_settings_t *bp_cuda_blas_settings(const bp_cuda_blas_t *h)
{
    return &h->set;
}

int bp_cuda_blas_cc_major(const bp_cuda_blas_t *h)
{
    return h->cc_major;
}

json_t *bp_cuda_blas_json(const bp_cuda_blas_t *h)
{
    return bp_blas_settings_json(&h->set, h->cc_major);
}

void bp_cuda_blas_close(bp_cuda_blas_t *h)
{
    if (!h)
        return;
    for (int i = 0; i < h->warming; i++)
        pthread_join(h->warm[i], NULL);
    bp_cuda_use(h->be, &(bp_error_t){0});
    cudaStreamSynchronize(stream(h));
    if (h->blas)
        BP_BLAS(cublasDestroy)(h->blas);
    if (h->ws)
        cudaFree(h->ws);
    if (h->lt_ws)
        cudaFree(h->lt_ws);
    free(h);
}

static bp_status setup(bp_cuda_blas_t *h, bp_error_t *err)
{
    bp_status st = bp_cuda_use(h->be, err);
    if (st || (st = bp_cublas_load(err)) || (st = bp_cublaslt_load(err)))
        return st;
    int dev = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&h->cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    h->ws_bytes = bp_blas_workspace(&h->set, h->cc_major);
    h->lt_ws_bytes = bp_blas_lt_workspace(&h->set, h->cc_major);
    CU(cudaMalloc(&h->ws, h->ws_bytes ? h->ws_bytes : 256));
    CU(cudaMalloc(&h->lt_ws, h->lt_ws_bytes ? h->lt_ws_bytes : 256));
    BL(BP_BLAS(cublasCreate)(&h->blas));
    /* cublasSetStream resets the workspace: the stream goes first */
    BL(BP_BLAS(cublasSetStream)(h->blas, stream(h)));
    BL(BP_BLAS(cublasSetWorkspace)(h->blas, h->ws, h->ws_bytes));
    if (h->set.pedantic) {
        BL(BP_BLAS(cublasSetMathMode)(h->blas, CUBLAS_PEDANTIC_MATH));
        BL(BP_BLAS(cublasSetAtomicsMode)(h->blas, CUBLAS_ATOMICS_NOT_ALLOWED));
        BL(BP_BLAS(cublasSetPointerMode)(h->blas, CUBLAS_POINTER_MODE_HOST));
    }
    return BP_OK;
}

bp_status bp_cuda_blas_open(bp_backend_t *be, const bp_blas_settings_t *s,
                            bp_cuda_blas_t **out, bp_error_t *err)
{
    *out = NULL;
    if (!be || strncmp(be->name, "cuda", 4) != 0)
        return bp_error_set(err, BP_EINTERNAL, "the GEMM module needs the CUDA backend");
    bp_cuda_blas_t *h = calloc(1, sizeof *h);
    if (!h)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    h->be = be;
    h->set = *s;
    bp_status st = setup(h, err);
    if (st) {
        bp_cuda_blas_close(h);
        return st;
    }
    *out = h;
    return BP_OK;
}

/* ---- types -------------------------------------------------------------- */

static cudaDataType_t dtype_of(bp_dtype_t dt)
{
    switch (dt) {
    case BP_BF16: return CUDA_R_16BF;
    case BP_F16: return CUDA_R_16F;
    case BP_F64: return CUDA_R_64F;
    default: return CUDA_R_32F;
    }
}

static cublasMath_t math_of(unsigned m)
{
    unsigned base = m & 0xfu;
    int v = base == BP_GEMM_MATH_TF32       ? CUBLAS_TF32_TENSOR_OP_MATH
            : base == BP_GEMM_MATH_PEDANTIC ? CUBLAS_PEDANTIC_MATH
                                            : CUBLAS_DEFAULT_MATH;
    if (m & BP_GEMM_MATH_NO_RRR)
        v |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    return (cublasMath_t)v;
}

static cublasComputeType_t compute_of(bp_gemm_compute_t c)
{
    switch (c) {
    case BP_GEMM_COMPUTE_32F_FAST_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case BP_GEMM_COMPUTE_32F_PEDANTIC: return CUBLAS_COMPUTE_32F_PEDANTIC;
    case BP_GEMM_COMPUTE_64F: return CUBLAS_COMPUTE_64F;
    case BP_GEMM_COMPUTE_64F_PEDANTIC: return CUBLAS_COMPUTE_64F_PEDANTIC;
    default: return CUBLAS_COMPUTE_32F;
    }
}

static cublasOperation_t op_of(bool t)
{
    return t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* alpha and beta in the scale type: float, or double for fp64 */
typedef struct {
    float a32, b32;
    double a64, b64;
    const void *alpha, *beta;
} scal_t;

static void scalars(const bp_gemm_call_t *c, scal_t *s)
{
    s->a32 = (float)c->alpha;
    s->b32 = (float)c->beta;
    s->a64 = c->alpha;
    s->b64 = c->beta;
    bool f64 = c->dtype == BP_F64;
    s->alpha = f64 ? (const void *)&s->a64 : (const void *)&s->a32;
    s->beta = f64 ? (const void *)&s->b64 : (const void *)&s->b32;
}

static bp_status fits(const bp_gemm_call_t *c, bp_error_t *err)
{
    int64_t v[] = {c->m, c->n, c->k, c->lda, c->ldb, c->ldc, c->batch};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] < 0 || v[i] > 0x7fffffff)
            return bp_error_set(err, BP_EINPUT, "GEMM m %lld, n %lld, k %lld (leading "
                                "dimensions %lld, %lld, %lld) exceed cuBLAS's int range",
                                (long long)c->m, (long long)c->n, (long long)c->k,
                                (long long)c->lda, (long long)c->ldb, (long long)c->ldc);
    return BP_OK;
}

/* ---- the calls ------------------------------------------------------------ */

static bp_status run_cublas(bp_cuda_blas_t *h, const bp_gemm_call_t *c,
                            const bp_gemm_numerics_t *num, const void *A, const void *B,
                            void *C, bp_error_t *err)
{
    scal_t s;
    scalars(c, &s);
    cublasOperation_t ta = op_of(c->transa), tb = op_of(c->transb);
    int m = (int)c->m, n = (int)c->n, k = (int)c->k, lda = (int)c->lda, ldb = (int)c->ldb,
        ldc = (int)c->ldc, batch = (int)c->batch;
    BL(BP_BLAS(cublasSetMathMode)(h->blas, math_of(num->math)));
    if (num->typed && c->dtype == BP_F64) {
        if (c->batched)
            BL(BP_BLAS(cublasDgemmStridedBatched)(h->blas, ta, tb, m, n, k, &s.a64, A, lda,
                                                   c->stridea, B, ldb, c->strideb, &s.b64,
                                                   C, ldc, c->stridec, batch));
        else
            BL(BP_BLAS(cublasDgemm)(h->blas, ta, tb, m, n, k, &s.a64, A, lda, B, ldb, &s.b64,
                                    C, ldc));
    } else if (num->typed) {
        if (c->batched)
            BL(BP_BLAS(cublasSgemmStridedBatched)(h->blas, ta, tb, m, n, k, &s.a32, A, lda,
                                                   c->stridea, B, ldb, c->strideb, &s.b32,
                                                   C, ldc, c->stridec, batch));
        else
            BL(BP_BLAS(cublasSgemm)(h->blas, ta, tb, m, n, k, &s.a32, A, lda, B, ldb, &s.b32,
                                    C, ldc));
    } else {
        cudaDataType_t t = dtype_of(c->dtype);
        cublasComputeType_t ct = compute_of(num->compute);
        cublasGemmAlgo_t algo = num->tensor_op ? CUBLAS_GEMM_DEFAULT_TENSOR_OP
                                               : CUBLAS_GEMM_DEFAULT;
        if (c->batched)
            BL(BP_BLAS(cublasGemmStridedBatchedEx)(h->blas, ta, tb, m, n, k, s.alpha, A, t,
                                                    lda, c->stridea, B, t, ldb, c->strideb,
                                                    s.beta, C, t, ldc, c->stridec, batch, ct,
                                                    algo));
        else
            BL(BP_BLAS(cublasGemmEx)(h->blas, ta, tb, m, n, k, s.alpha, A, t, lda, B, t, ldb,
                                     s.beta, C, t, ldc, ct, algo));
    }
    /* the bf16/fp16 helpers leave the handle in CUBLAS_DEFAULT_MATH */
    if (!num->typed && num->math != BP_GEMM_MATH_PEDANTIC)
        BL(BP_BLAS(cublasSetMathMode)(h->blas, CUBLAS_DEFAULT_MATH));
    CU(cudaStreamSynchronize(stream(h)));
    return BP_OK;
}

/* _getAlignment: the largest power of two up to 256 dividing the address. */
static uint32_t alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && a % al)
        al /= 2;
    return al;
}

void bp_cuda_lt_free(bp_cuda_lt_t *l)
{
    if (l->pref)
        BP_BLASLT(cublasLtMatmulPreferenceDestroy)(l->pref);
    cublasLtMatrixLayout_t *ls[] = {&l->la, &l->lb, &l->lc, &l->fb, &l->fc};
    for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++)
        if (*ls[i])
            BP_BLASLT(cublasLtMatrixLayoutDestroy)(*ls[i]);
    if (l->desc)
        BP_BLASLT(cublasLtMatmulDescDestroy)(l->desc);
    memset(l, 0, sizeof *l);
}

#define LT(call) BLAS_TRY(call, BP_EINTERNAL)

/* CuBlasLtMatrixLayout(type, rows, cols, ld, t): a transposed operand
 * has rows and columns swapped. */
static bp_status layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows,
                        int64_t cols, int64_t ld, bool tr, bp_error_t *err)
{
    LT(BP_BLASLT(cublasLtMatrixLayoutCreate)(l, t, (uint64_t)(tr ? cols : rows),
                                             (uint64_t)(tr ? rows : cols), ld));
    return BP_OK;
}

static bp_status batch_attrs(cublasLtMatrixLayout_t l, int count, int64_t stride,
                             bp_error_t *err)
{
    LT(BP_BLASLT(cublasLtMatrixLayoutSetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                   &count, sizeof count));
    LT(BP_BLASLT(cublasLtMatrixLayoutSetAttribute)(
        l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    return BP_OK;
}

static bp_status pref_u32(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                          uint32_t v, bp_error_t *err)
{
    LT(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(p, a, &v, sizeof v));
    return BP_OK;
}

bp_status bp_cuda_lt_build(const bp_gemm_call_t *c, const void *A, const void *B, void *C,
                           const void *bias, size_t ws_bytes, bp_cuda_lt_t *l, bp_error_t *err)
{
    memset(l, 0, sizeof *l);
    const bp_gemm_numerics_t *num = &c->num;
    cudaDataType_t t = dtype_of(c->dtype), scale = c->dtype == BP_F64 ? CUDA_R_64F : CUDA_R_32F;
    cublasOperation_t ta = op_of(c->transa), tb = op_of(c->transb);
    LT(BP_BLASLT(cublasLtMatmulPreferenceCreate)(&l->pref));
    bp_status st;
    if (num->lt_mask &&
        (st = pref_u32(l->pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, num->lt_mask_value,
                       err)))
        return st;
    LT(BP_BLASLT(cublasLtMatmulDescCreate)(&l->desc, compute_of(num->compute), scale));
    LT(BP_BLASLT(cublasLtMatmulDescSetAttribute)(l->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                 sizeof ta));
    LT(BP_BLASLT(cublasLtMatmulDescSetAttribute)(l->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                 sizeof tb));
    if (c->api == BP_GEMM_LT_BIAS) {
        cublasLtEpilogue_t epi = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
        LT(BP_BLASLT(cublasLtMatmulDescSetAttribute)(l->desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                     &epi, sizeof epi));
        if (bias)
            LT(BP_BLASLT(cublasLtMatmulDescSetAttribute)(
                l->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    if ((st = layout(&l->la, t, c->m, c->k, c->lda, c->transa, err)) ||
        (st = layout(&l->lb, t, c->k, c->n, c->ldb, c->transb, err)) ||
        (st = layout(&l->lc, t, c->m, c->n, c->ldc, false, err)))
        return st;
    if (c->batched && ((st = batch_attrs(l->la, (int)c->batch, c->stridea, err)) ||
                       (st = batch_attrs(l->lb, (int)c->batch, c->strideb, err)) ||
                       (st = batch_attrs(l->lc, (int)c->batch, c->stridec, err))))
        return st;
    if (c->lt_fake_n2 && ((st = layout(&l->fb, t, c->k, 2, c->ldb, c->transb, err)) ||
                          (st = layout(&l->fc, t, c->m, 2, c->ldc, false, err))))
        return st;
    static const cublasLtMatmulPreferenceAttributes_t al[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    const void *ptrs[4] = {A, B, C, bias};
    for (int i = 0; i < (c->api == BP_GEMM_LT_BIAS ? 4 : 3); i++)
        if ((st = pref_u32(l->pref, al[i], alignment(ptrs[i]), err)))
            return st;
    uint64_t ws = ws_bytes;
    LT(BP_BLASLT(cublasLtMatmulPreferenceSetAttribute)(
        l->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    return BP_OK;
}

/* One cuBLASLt matmul; *ok false where PyTorch would fall back (no
 * algorithm, or the matmul's failure). */
static bp_status run_lt(bp_cuda_blas_t *h, const bp_gemm_call_t *c, const void *A,
                        const void *B, void *C, const void *bias, bool *ok,
                        bp_cuda_gemm_info_t *info, bp_error_t *err)
{
    *ok = false;
    bp_cuda_lt_t l;
    scal_t s;
    scalars(c, &s);
    cublasLtHandle_t lt = (cublasLtHandle_t)h->blas;
    bp_status st = bp_cuda_lt_build(c, A, B, C, bias, h->lt_ws_bytes, &l, err);
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int got = 0;
    if (!st) {
        cublasLtMatrixLayout_t bl = c->lt_fake_n2 ? l.fb : l.lb, cl = c->lt_fake_n2 ? l.fc : l.lc;
        cublasStatus_t r = BP_BLASLT(cublasLtMatmulAlgoGetHeuristic)(
            lt, l.desc, l.la, bl, cl, cl, l.pref, 1, &res, &got);
        if (r != CUBLAS_STATUS_SUCCESS) /* TORCH_CUDABLAS_CHECK: an error there */
            st = bp_blas_fail(err, BP_EINTERNAL, "cublasLtMatmulAlgoGetHeuristic", r);
    }
    if (!st && got > 0) {
        cublasStatus_t r = BP_BLASLT(cublasLtMatmul)(lt, l.desc, s.alpha, A, l.la, B, l.lb,
                                                     s.beta, C, l.lc, C, l.lc, &res.algo,
                                                     h->lt_ws, h->lt_ws_bytes, stream(h));
        *ok = r == CUBLAS_STATUS_SUCCESS;
        if (*ok && info) {
            info->lt_ran = true;
            memcpy(info->lt_algo, &res.algo, sizeof info->lt_algo);
            info->lt_workspace = res.workspaceSize;
            info->lt_waves = res.wavesCount;
        }
    }
    bp_cuda_lt_free(&l);
    if (!st && *ok)
        CU(cudaStreamSynchronize(stream(h)));
    return st;
}

/* ---- operands ----------------------------------------------------------------- */

static size_t esize(bp_dtype_t dt)
{
    return bp_dtype_info(dt)->size;
}

/* Device scratch from the backend's pool. */
static bp_status scratch(bp_cuda_blas_t *h, bp_dtype_t dt, int64_t n, bp_buf_t *b,
                         bp_error_t *err)
{
    memset(b, 0, sizeof *b);
    bp_status st = bp_buf_shape(b, dt, 1, &n, err);
    return st ? st : h->be->dev_alloc(h->be, b, err);
}

static void scratch_free(bp_cuda_blas_t *h, bp_buf_t *b)
{
    if (b->dev)
        h->be->dev_free(h->be, b);
    memset(b, 0, sizeof *b);
}

/* out (contiguous, numel of g) = the view g of base */
bp_status bp_cuda_copy_view(bp_backend_t *be, bp_dtype_t dt, const void *base,
                           const bp_strided_t *g, void *out, bp_error_t *err)
{
    if (g->ndim > BPK_MAXDIM)
        return bp_error_set(err, BP_EINTERNAL, "view of %d dimensions", g->ndim);
    bpk_view_t v;
    memset(&v, 0, sizeof v);
    v.ndim = g->ndim;
    v.offset = g->offset;
    for (int d = 0; d < g->ndim; d++) {
        v.shape[d] = g->shape[d];
        v.strides[d] = g->strides[d];
    }
    return bp_cuda_finish(be, "bpk_strided_copy",
                          bpk_strided_copy(bp_cuda_stream(be), out, base, (int)dt, &v, bp_strided_numel(g)),
                          err);
}

/* self's view expanded to the result's shape (expand: stride 0 where self
 * is broadcast) */
static bp_status expand_view(const bp_strided_t *self, int nd, const int64_t *shape,
                             bp_strided_t *g, bp_error_t *err)
{
    memset(g, 0, sizeof *g);
    g->ndim = nd;
    g->offset = self->offset;
    if (self->ndim > nd)
        return bp_error_set(err, BP_EINPUT, "input of %d dimensions for a result of %d",
                            self->ndim, nd);
    for (int d = 0; d < nd; d++) {
        int sd = self->ndim - nd + d;
        g->shape[d] = shape[d];
        if (sd < 0 || self->shape[sd] != shape[d]) {
            if (sd >= 0 && self->shape[sd] != 1)
                return bp_error_set(err, BP_EINPUT, "input does not broadcast to the result");
            g->strides[d] = 0;
        } else {
            g->strides[d] = self->strides[sd];
        }
    }
    return BP_OK;
}

/* The plan's A or B: the operand's memory at its offset, or a contiguous
 * copy of its view when PyTorch copies it. */
static bp_status operand(bp_cuda_blas_t *h, bp_dtype_t dt, const bp_cuda_mat_t *m, bool clone,
                         int64_t off, bp_buf_t *tmp, const void **ptr, bp_error_t *err)
{
    if (!clone) {
        *ptr = (const char *)m->base + (size_t)off * esize(dt);
        return BP_OK;
    }
    bp_status st = scratch(h, dt, bp_strided_numel(&m->geo), tmp, err);
    if (!st)
        st = bp_cuda_copy_view(h->be, dt, m->base, &m->geo, tmp->dev, err);
    *ptr = tmp->dev;
    return st;
}

/* Everything but the GEMM itself, then the GEMM; *lt_failed when the bias
 * epilogue failed (the caller plans again without the Lt path). */
static bp_status execute(bp_cuda_blas_t *h, const bp_gemm_call_t *c, const bp_cuda_mat_t *self,
                         const bp_cuda_mat_t *m1, const bp_cuda_mat_t *m2, int rnd,
                         const int64_t *rshape, void *C, bool *lt_failed,
                         bp_cuda_gemm_info_t *info, bp_error_t *err)
{
    bp_dtype_t dt = c->dtype;
    int64_t n = 1;
    for (int d = 0; d < rnd; d++)
        n *= rshape[d];
    *lt_failed = false;
    if (info) {
        memset(info, 0, sizeof *info);
        info->call = *c;
    }
    bp_status st = bp_cuda_use(h->be, err);
    if (st || c->api == BP_GEMM_NONE)
        return st;
    if (c->copy_self) {
        bp_strided_t g;
        if ((st = expand_view(&self->geo, rnd, rshape, &g, err)) ||
            (st = bp_cuda_copy_view(h->be, dt, self->base, &g, C, err)))
            return st;
    }
    if (c->api == BP_GEMM_ZERO)
        return bp_cuda_finish(h->be, "bpk_fill", bpk_fill(stream(h), C, (int)dt, 0.0, n), err);
    if (c->api == BP_GEMM_SCALE)
        return bp_cuda_finish(
            h->be, "bpk_binary(mul)",
            bpk_binary(stream(h), BPK_MUL, C, (int)dt, (bpk_arg_t){C, (int)dt, 0.0},
                       (bpk_arg_t){NULL, 0, c->scale}, &(bpk_bcast_t){0}, n),
            err);
    if ((st = fits(c, err)))
        return st;
    const bp_cuda_mat_t *ma = c->a_op ? m2 : m1, *mb = c->a_op ? m1 : m2;
    bp_buf_t ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    const void *A = NULL, *B = NULL;
    if (!(st = operand(h, dt, ma, c->clone_a, c->a_off, &ta, &A, err)) &&
        !(st = operand(h, dt, mb, c->clone_b, c->b_off, &tb, &B, err))) {
        bool ok = true;
        if (c->api == BP_GEMM_CUBLAS) {
            st = run_cublas(h, c, &c->num, A, B, C, err);
        } else {
            const void *bias = c->bias ? (const char *)self->base +
                                             (size_t)self->geo.offset * esize(dt)
                                       : NULL;
            st = run_lt(h, c, A, B, C, bias, &ok, info, err);
            if (!st && !ok && c->api == BP_GEMM_LT) { /* gemm_internal_cublaslt's fallback */
                bp_gemm_numerics_t num;
                if (!(st = bp_gemm_numerics(&h->set, BP_GEMM_CUBLAS, dt, c->batched, &num,
                                            err)))
                    st = run_cublas(h, c, &num, A, B, C, err);
            }
            *lt_failed = !st && !ok && c->api == BP_GEMM_LT_BIAS;
        }
    }
    scratch_free(h, &ta);
    scratch_free(h, &tb);
    return st;
}

bp_status bp_cuda_addmm(bp_cuda_blas_t *h, bp_dtype_t dt, const bp_cuda_mat_t *self,
                        const bp_cuda_mat_t *mat1, const bp_cuda_mat_t *mat2, double beta,
                        double alpha, void *c, bp_cuda_gemm_info_t *info, bp_error_t *err)
{
    int64_t rs[2] = {mat1->geo.shape[0], mat2->geo.ndim == 2 ? mat2->geo.shape[1] : 0};
    bool no_lt = false;
    for (;;) {
        bp_gemm_call_t call;
        bool failed;
        bp_status st = bp_gemm_plan_addmm(&h->set, h->cc_major, dt, self ? &self->geo : NULL,
                                          &mat1->geo, &mat2->geo, beta, alpha, no_lt, &call,
                                          err);
        if (!st)
            st = execute(h, &call, self, mat1, mat2, 2, rs, c, &failed, info, err);
        if (st || !failed || no_lt)
            return st;
        no_lt = true; /* addmm_out_cuda_impl again, the Lt path off */
    }
}

bp_status bp_cuda_baddbmm(bp_cuda_blas_t *h, bp_dtype_t dt, const bp_cuda_mat_t *self,
                          const bp_cuda_mat_t *b1, const bp_cuda_mat_t *b2, double beta,
                          double alpha, const bp_strided_t *res, void *c,
                          bp_cuda_gemm_info_t *info, bp_error_t *err)
{
    bp_gemm_call_t call;
    bool failed;
    bp_status st = bp_gemm_plan_baddbmm(&h->set, h->cc_major, dt, self ? &self->geo : NULL,
                                        &b1->geo, &b2->geo, beta, alpha, res, &call, err);
    if (st)
        return st;
    int64_t rs[3] = {b1->geo.shape[0], b1->geo.shape[1], b2->geo.shape[2]};
    if (res && call.copy_self)
        return bp_error_set(err, BP_EINTERNAL, "baddbmm's input into an out= view");
    return execute(h, &call, self, b1, b2, 3, rs, c, &failed, info, err);
}

/* The warm-up (cuda_gemm.h) of one dtype: a handle, stream and operands
 * of its own, so that nothing it does reaches the backend's handle,
 * stream, pool or results.  Its failures are silent: the GEMMs the probes
 * make report their own. */
static void *warm_gemms(void *arg)
{
    const struct bp_cuda_warm *w = arg;
    const bp_cuda_blas_t *h = w->h;
    cublasHandle_t hd = NULL;
    cudaStream_t st = NULL;
    void *buf = NULL;
    enum { N = 256 };
    float one = 1, zero = 0;
    if (bp_cuda_use(h->be, &(bp_error_t){0}) ||
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) ||
        cudaMalloc(&buf, 3 * N * N * sizeof(float)) ||
        cudaMemsetAsync(buf, 0, 3 * N * N * sizeof(float), st) ||
        BP_BLAS(cublasCreate)(&hd) || BP_BLAS(cublasSetStream)(hd, st))
        goto done;
    char *a = buf, *b = a + N * N * sizeof(float), *c = b + N * N * sizeof(float);
    /* the shapes of small probes and of linear layers: m x n x k, both
     * transposes PyTorch passes for row-major operands */
    static const int shapes[][3] = {{64, 64, 64}, {172, 16, 64}, {64, 16, 172}, {256, 256, 256}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
        for (int t = 0; t < 2; t++) {
            cublasOperation_t ta = t ? CUBLAS_OP_T : CUBLAS_OP_N;
            int lda = t ? k : m;
            if (w->dtype == 0) {
                BP_BLAS(cublasSetMathMode)(
                    hd, math_of(h->set.tf32 ? BP_GEMM_MATH_TF32 : BP_GEMM_MATH_DEFAULT));
                BP_BLAS(cublasSgemm)(hd, ta, CUBLAS_OP_N, m, n, k, &one, (float *)a, lda,
                                     (float *)b, k, &zero, (float *)c, m);
                continue;
            }
            BP_BLAS(cublasSetMathMode)(hd, CUBLAS_DEFAULT_MATH);
            cudaDataType_t dt = w->dtype == 1 ? CUDA_R_16BF : CUDA_R_16F;
            BP_BLAS(cublasGemmEx)(hd, ta, CUBLAS_OP_N, m, n, k, &one, a, dt, lda, b, dt, k, &zero,
                                  c, dt, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
        }
    }
    cudaStreamSynchronize(st);
done:
    cudaGetLastError(); /* (a failure here is not the backend's) */
    if (hd)
        BP_BLAS(cublasDestroy)(hd);
    if (buf)
        cudaFree(buf);
    if (st)
        cudaStreamDestroy(st);
    return NULL;
}

void bp_cuda_blas_warm(bp_cuda_blas_t *h)
{
    if (!h || h->warming || h->set.pedantic)
        return;
    for (int i = 0; i < WARM_DTYPES; i++) {
        h->warm_arg[i] = (struct bp_cuda_warm){.h = h, .dtype = i};
        if (pthread_create(&h->warm[h->warming], NULL, warm_gemms, &h->warm_arg[i]) != 0)
            break;
        h->warming++;
    }
}
