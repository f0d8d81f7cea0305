/* The CUDA invariance engines: a batch through the CUDA backend's GEMM
 * module (cuda_gemm.h) as torch.mm calls cuBLAS, as bitprobe's pinned
 * (pedantic) GEMM, and as PyTorch's cuBLASLt path.  Inputs are generated
 * on the device by the counter generator's kernel (bit-identical to the
 * host's, rng.h), on the CUDA backend's device and stream.
 *
 * "cublas": what torch.mm runs in PyTorch 2.11 with the default preferred
 *   library (mm_out_cuda -> addmm_out_cuda_impl with beta 0, which the
 *   cuBLASLt path refuses -> at::cuda::blas::gemm): cublasSgemm for fp32
 *   under CUBLAS_DEFAULT_MATH (CUBLAS_TF32_TENSOR_OP_MATH with tf32),
 *   cublasGemmEx with CUBLAS_COMPUTE_32F and CUBLAS_GEMM_DEFAULT_TENSOR_OP
 *   for bf16 and fp16 (reduced-precision reductions allowed, PyTorch's
 *   default), on a handle with the workspace PyTorch gives it
 *   (CublasHandlePool.cpp: 32 MiB on compute capability 9.x to 12.x,
 *   4096 KiB * 2 + 16 KiB * 8 elsewhere): the module's call for these
 *   settings, the one the probe op `matmul` makes.
 * "cublas-pedantic": bitprobe's pinned GEMM (the module's pedantic
 *   settings): cublasGemmEx, CUBLAS_PEDANTIC_MATH,
 *   CUBLAS_COMPUTE_32F_PEDANTIC, 32 MiB workspace, atomics not allowed.
 * "cublaslt": PyTorch's Lt path (preferred library cuBLASLt,
 *   TORCH_BLAS_PREFER_CUBLASLT=1: bgemm_internal_cublaslt): compute
 *   CUBLAS_COMPUTE_32F (tf32: CUBLAS_COMPUTE_32F_FAST_TF32), scale
 *   CUDA_R_32F, the operands' types, a 1 MiB workspace
 *   (CUBLASLT_WORKSPACE_SIZE's default), minimum alignments of A, B and C
 *   from their addresses, the heuristic's first algorithm; cuBLAS where
 *   cuBLASLt finds none, as PyTorch falls back.
 *
 * Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (N, N),
 * m = N, n = M, b first (ld N), then a (ld K), c (ld N), as PyTorch's
 * cublasCommonArgs arranges a row-major result (gemm_plan.c decides it).  The batch is always rows
 * [0, M) of one device buffer, so the operands' addresses (and so their
 * alignment, which the heuristics read) are the same at every M.
 *
 * Ranks axis (cublas, cublas-pedantic, cublaslt): tensor parallelism on one
 * device: rank r's GEMM is the engine's call on its contiguous shard
 * a[:, K_r] (copied, as a rank holds it) times the rows K_r of b, its result
 * in the dtype; the probed rows of the T results are all-reduced on the host
 * in the order asked (inv_formula.h).
 * Split axis (cublaslt): cuBLASLt's own split-K: the heuristic's algorithm
 * for the batch with CUBLASLT_ALGO_CONFIG_SPLITK_NUM forced to S and the
 * reduction scheme asked (compute type by default; none at S = 1), checked
 * with cublasLtMatmulAlgoCheck (a refused S is skipped and said), run with
 * a 32 MiB workspace.
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
#include "cuda_gemm.h"
#include "cuda_gemm_lt.h"
#include "inv_formula.h"

typedef enum { K_CUBLAS, K_PEDANTIC, K_LT } kind_t;

typedef struct {
    bp_backend_t *be;
    kind_t kind;
    bp_cuda_blas_t *gemm;          /* the engine's call (cuda_gemm.h) */
    cublasLtHandle_t lt;           /* the algorithm attribution and split-K */
    void *ws;                      /* attribution and split-K's workspace */
    size_t ws_bytes;
    bp_inv_problem_t p;
    void *a, *probe, *b, *c, *c2; /* device */
    void *shard;                   /* ranks: a rank's a[:, K_r], contiguous */
    int64_t rows_cap;              /* rows of a and c */
    cublasLtMatmulAlgo_t base;     /* split: the heuristic's algorithm */
    bool have_base;
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

static void free_dev(cu_t *s)
{
    void **p[] = {&s->a, &s->probe, &s->b, &s->c, &s->c2, &s->shard};
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

/* c[m, n] = a[m, k] b[k, n], row-major, lda k, ldb n = p.n. */
typedef struct {
    const void *a, *b;
    void *c;
    int64_t m, k;
} gemm_t;

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    cu_t *s = S(e);
    free_dev(s);
    s->have_base = false;
    if (p->op != BP_OP_MATMUL)
        return bp_error_set(err, BP_EUNAVAIL, "%s: matmul only, not %s", e->name,
                            bp_inv_op_name(p->op));
    if (p->tf32 && s->kind == K_PEDANTIC)
        return bp_error_set(err, BP_EUNAVAIL, "pedantic math excludes TF32");
    if (p->axis == BP_INV_SPLIT && s->kind != K_LT)
        return bp_error_set(err, BP_EUNAVAIL, "%s: split-K is forced through "
                            "cuBLASLt only (the cublaslt engine)", e->name);
    if (!bp_dtype_is_run(p->dtype))
        return bp_error_set(err, BP_EUNAVAIL, "%s: no %s", e->name,
                            bp_dtype_name(p->dtype));
    s->rows_cap = p->axis == BP_INV_BATCH ? p->mmax : p->batch;
    if (p->k > 0x7fffffff || p->n > 0x7fffffff || s->rows_cap > 0x7fffffff)
        return bp_error_set(err, BP_EINPUT, "matmul dimensions exceed cuBLAS's int range");
    s->p = *p;
    s->at = -1;
    bp_status st = bp_cuda_use(s->be, err);
    if (st)
        return st;
    bp_blas_settings_t set;
    bp_blas_settings_default(&set);
    set.tf32 = p->tf32;
    set.pedantic = s->kind == K_PEDANTIC;
    set.lib = s->kind == K_LT ? BP_BLAS_CUBLASLT : BP_BLAS_CUBLAS;
    bp_cuda_blas_close(s->gemm);
    s->gemm = NULL;
    if ((st = bp_cuda_blas_open(s->be, &set, &s->gemm, err)))
        return st;
    size_t es = esize(s), mk = (size_t)s->rows_cap * (size_t)p->k,
           mn = (size_t)s->rows_cap * (size_t)p->n;
    CU(cudaMalloc(&s->a, mk * es));
    CU(cudaMalloc(&s->probe, (size_t)p->rows * (size_t)p->k * es));
    CU(cudaMalloc(&s->b, (size_t)p->k * (size_t)p->n * es));
    CU(cudaMalloc(&s->c, mn * es));
    CU(cudaMalloc(&s->c2, mn * es));
    if (p->axis == BP_INV_RANKS)
        CU(cudaMalloc(&s->shard, mk * es));
    size_t out = bp_inv_result_elems(p) * es;
    if (!(s->host = malloc(out)) || !(s->host2 = malloc(out)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if ((st = gen(s, s->a, 0, s->rows_cap, p->k, BP_INV_STREAM_FILL, err)) ||
        (st = gen(s, s->probe, 0, p->rows, p->k, BP_INV_STREAM_PROBE, err)) ||
        (st = gen(s, s->b, 0, p->k, p->n, BP_INV_STREAM_B, err)))
        return st;
    const char *dt = bp_inv_dtype_name(p);
    int w = 0;
    switch (s->kind) {
    case K_CUBLAS:
        w = snprintf(e->desc, sizeof e->desc,
                     "PyTorch 2.11's torch.mm: %s, math mode %s, workspace %zu bytes",
                     p->dtype == BP_F32 ? "cublasSgemm"
                                        : "cublasGemmEx, CUBLAS_COMPUTE_32F, "
                                          "CUBLAS_GEMM_DEFAULT_TENSOR_OP",
                     p->tf32 ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_DEFAULT_MATH "
                     "(reduced-precision reductions allowed)", s->ws_bytes);
        break;
    case K_PEDANTIC:
        w = snprintf(e->desc, sizeof e->desc,
                     "bitprobe's CUDA backend matmul: cublasGemmEx, "
                     "CUBLAS_PEDANTIC_MATH, CUBLAS_COMPUTE_32F_PEDANTIC, atomics not "
                     "allowed, workspace 32 MiB");
        break;
    case K_LT: {
        const char *ct = p->tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
        if (p->axis == BP_INV_SPLIT) {
            const char *rn = bp_inv_reduction_name(p->reduction ? (uint32_t)p->reduction : 2);
            w = snprintf(e->desc, sizeof e->desc,
                         "cuBLASLt's split-K: the heuristic's algorithm for M = %lld "
                         "with SPLITK_NUM forced to S, reduction scheme %s, %s (%s)",
                         (long long)p->batch, rn ? rn : "?", ct, dt);
        } else {
            w = snprintf(e->desc, sizeof e->desc,
                         "PyTorch's cuBLASLt path (TORCH_BLAS_PREFER_CUBLASLT=1): "
                         "cublasLtMatmul, the heuristic's first algorithm, workspace "
                         "1 MiB, alignments from the addresses, %s (%s)", ct, dt);
        }
        break;
    }
    }
    if (p->axis == BP_INV_RANKS && w > 0 && (size_t)w < sizeof e->desc)
        snprintf(e->desc + w, sizeof e->desc - (size_t)w,
                 "; each rank's GEMM on its contiguous K shard, results in %s, %s "
                 "all-reduce on the host", dt, bp_inv_combine_name(p->combine));
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

/* The descriptors of g as the engine's cuBLASLt call would have them (the
 * GEMM module's, for the plan of torch.mm with the engine's settings on
 * the preferred library cuBLASLt), with a workspace of ws bytes. */
static bp_status lt_make(cu_t *s, const gemm_t *g, size_t ws, bp_cuda_lt_t *l,
                         bp_error_t *err)
{
    memset(l, 0, sizeof *l);
    bp_blas_settings_t set = *bp_cuda_blas_settings(s->gemm);
    set.lib = BP_BLAS_CUBLASLT;
    int64_t sa[2] = {g->m, g->k}, sb[2] = {g->k, s->p.n};
    bp_strided_t ga, gb;
    bp_strided_contiguous(2, sa, &ga);
    bp_strided_contiguous(2, sb, &gb);
    bp_gemm_call_t c;
    bp_status st = bp_gemm_plan_addmm(&set, s->cc_major, s->p.dtype, NULL, &ga, &gb, 0.0, 1.0,
                                      false, &c, err);
    if (st)
        return st;
    return bp_cuda_lt_build(&c, c.a_op ? g->b : g->a, c.a_op ? g->a : g->b, g->c, NULL, ws, l,
                            err);
}

static void algo_read(const cublasLtMatmulAlgo_t *al, size_t workspace, float waves,
                      bp_inv_algo_t *a)
{
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
    a->workspace = workspace;
    a->waves = waves;
    a->known = a->lt = true;
}

static bp_status lt_run(cu_t *s, const gemm_t *g, bp_cuda_lt_t *l,
                        const cublasLtMatmulAlgo_t *al, void *ws, size_t ws_bytes,
                        bp_error_t *err)
{
    float one = 1.0f, zero = 0.0f;
    BL(BP_BLASLT(cublasLtMatmul)(s->lt, l->desc, &one, g->b, l->la, g->a, l->lb, &zero,
                                 g->c, l->lc, g->c, l->lc, al, ws, ws_bytes, stream(s)));
    CU(cudaStreamSynchronize(stream(s)));
    return BP_OK;
}

/* The heuristic's first algorithm for g; with run, it is run too (the
 * cublaslt engine's computation); with keep, it becomes the split axis's
 * base algorithm. */
static bp_status lt_pick(cu_t *s, const gemm_t *g, size_t ws_bytes, void *ws, bool run,
                         bool keep, bp_inv_algo_t *algo, bool *found, bp_error_t *err)
{
    bp_cuda_lt_t l;
    *found = false;
    bp_status st = lt_make(s, g, ws_bytes, &l, err);
    cublasLtMatmulHeuristicResult_t h;
    memset(&h, 0, sizeof h);
    int got = 0;
    if (!st) {
        cublasStatus_t r = BP_BLASLT(cublasLtMatmulAlgoGetHeuristic)(
            s->lt, l.desc, l.la, l.lb, l.lc, l.lc, l.pref, 1, &h, &got);
        if (r != CUBLAS_STATUS_SUCCESS && r != CUBLAS_STATUS_NOT_SUPPORTED)
            st = bp_blas_fail(err, BP_EINTERNAL, "cublasLtMatmulAlgoGetHeuristic", r);
    }
    if (!st && got > 0) {
        *found = true;
        algo_read(&h.algo, h.workspaceSize, h.wavesCount, algo);
        if (keep) {
            s->base = h.algo;
            s->have_base = true;
        }
        if (run)
            st = lt_run(s, g, &l, &h.algo, ws, ws_bytes, err);
    }
    bp_cuda_lt_free(&l);
    return st;
}

/* cuBLASLt's split-K at S parts: the base algorithm with SPLITK_NUM = S and
 * the reduction scheme, checked, then run. */
static bp_status lt_split(cu_t *s, const gemm_t *g, int parts, bp_inv_algo_t *algo,
                          bp_error_t *err)
{
    bool found = true;
    bp_status st = BP_OK;
    if (!s->have_base)
        st = lt_pick(s, g, s->ws_bytes, s->ws, false, true, algo, &found, err);
    if (st)
        return st;
    if (!found)
        return bp_error_set(err, BP_EINTERNAL, "cublasLtMatmulAlgoGetHeuristic found no "
                            "algorithm for M = %lld", (long long)g->m);
    cublasLtMatmulAlgo_t al = s->base;
    int32_t sk = parts;
    uint32_t red = parts == 1 ? 0 : s->p.reduction ? (uint32_t)s->p.reduction : 2;
    bp_cuda_lt_t l;
    if ((st = lt_make(s, g, s->ws_bytes, &l, err)))
        return st;
    cublasLtMatmulHeuristicResult_t chk;
    memset(&chk, 0, sizeof chk);
    cublasStatus_t r = BP_BLASLT(cublasLtMatmulAlgoConfigSetAttribute)(
        &al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk);
    if (r == CUBLAS_STATUS_SUCCESS)
        r = BP_BLASLT(cublasLtMatmulAlgoConfigSetAttribute)(
            &al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red);
    if (r == CUBLAS_STATUS_SUCCESS)
        r = BP_BLASLT(cublasLtMatmulAlgoCheck)(s->lt, l.desc, l.la, l.lb, l.lc, l.lc,
                                               &al, &chk);
    if (r != CUBLAS_STATUS_SUCCESS || chk.workspaceSize > s->ws_bytes) {
        bp_cuda_lt_free(&l);
        return bp_error_set(err, BP_EUNAVAIL, "cuBLASLt refuses split-K %d with reduction "
                            "%s on this algorithm (%s)", parts,
                            bp_inv_reduction_name(red) ? bp_inv_reduction_name(red) : "?",
                            r != CUBLAS_STATUS_SUCCESS ? BP_BLAS(cublasGetStatusName)(r)
                                                       : "workspace");
    }
    algo_read(&al, chk.workspaceSize, chk.wavesCount, algo);
    snprintf(algo->source, sizeof algo->source, "cuBLASLt, split-K forced");
    st = lt_run(s, g, &l, &al, s->ws, s->ws_bytes, err);
    bp_cuda_lt_free(&l);
    return st;
}

/* The engine's own call on g: the module's torch.mm for its settings. */
static bp_status engine_gemm(cu_t *s, const gemm_t *g, bp_inv_algo_t *algo,
                             bp_error_t *err)
{
    int64_t sa[2] = {g->m, g->k}, sb[2] = {g->k, s->p.n};
    bp_cuda_mat_t a = {g->a, {0}}, b = {g->b, {0}};
    bp_strided_contiguous(2, sa, &a.geo);
    bp_strided_contiguous(2, sb, &b.geo);
    bp_cuda_gemm_info_t info;
    bp_status st = bp_cuda_addmm(s->gemm, s->p.dtype, NULL, &a, &b, 0.0, 1.0, g->c, &info, err);
    if (st || s->kind != K_LT)
        return st;
    if (info.lt_ran) {
        cublasLtMatmulAlgo_t al;
        memcpy(&al, info.lt_algo, sizeof al);
        algo_read(&al, info.lt_workspace, info.lt_waves, algo);
        snprintf(algo->source, sizeof algo->source, "cuBLASLt heuristic");
    } else {
        algo->known = true;
        snprintf(algo->source, sizeof algo->source, "fixed");
        snprintf(algo->text, sizeof algo->text, "cuBLASLt found no algorithm: cuBLAS's, "
                 "as PyTorch falls back");
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

/* The cuBLASLt log of one call: the last "algo=[...]" (or "algoId=...")
 * a message names, without the rest of the message (dimensions and
 * pointers, which change with M while the algorithm may not). */
static char log_text[BP_INV_ALGO_TEXT];

static void log_cb(int level, const char *fn, const char *msg)
{
    (void)level;
    (void)fn;
    const char *a = msg ? strstr(msg, "algo") : NULL;
    if (!a)
        return;
    size_t n = strcspn(a, " ");
    const char *br = strchr(a, '[');
    if (br && br - a < 12) { /* algo=[...]: up to the matching bracket */
        int depth = 0;
        const char *q = br;
        for (; *q; q++) {
            depth += *q == '[';
            depth -= *q == ']';
            if (!depth)
                break;
        }
        n = (size_t)(q - a) + (*q ? 1 : 0);
    }
    if (n >= sizeof log_text)
        n = sizeof log_text - 1;
    memcpy(log_text, a, n);
    log_text[n] = '\0';
}

/* What the cuBLAS engines ran for g: the Lt heuristic's choice for the same
 * problem, run to see whether it gives the engine's bits (s->host), and
 * the log of a logged call when it names an algorithm. */
static bp_status attribute(cu_t *s, const gemm_t *g, int64_t pos, bp_inv_algo_t *algo,
                           bp_error_t *err)
{
    bool found;
    gemm_t g2 = *g;
    g2.c = s->c2;
    /* the heuristic cannot always answer (pedantic compute types): that is
     * an unknown algorithm, not a failed sweep */
    bp_error_t lerr = {0};
    bp_status st = lt_pick(s, &g2, s->ws_bytes, s->ws, true, false, algo, &found, &lerr);
    if (st) {
        bp_inv_algo_init(algo);
        algo->known = true;
        snprintf(algo->source, sizeof algo->source, "none");
        snprintf(algo->text, sizeof algo->text, "cuBLASLt heuristic: %.200s", lerr.msg);
        cudaGetLastError();
    } else if (found) {
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
    st = engine_gemm(s, &g2, &dummy, err);
    BP_BLASLT(cublasLtLoggerSetMask)(0);
    BP_BLASLT(cublasLtLoggerSetCallback)(NULL);
    if (!st && strstr(log_text, "algo")) {
        algo->known = true;
        snprintf(algo->text, sizeof algo->text, "log: %s", log_text);
    }
    return st;
}

/* T ranks: each rank's GEMM on its contiguous shard; the probed rows of
 * every rank's result all-reduced on the host into out. */
static bp_status ranks(cu_t *s, int t, int64_t pos, void *out, bp_inv_algo_t *algo,
                       bp_error_t *err)
{
    const bp_inv_problem_t *p = &s->p;
    size_t es = esize(s), nn = (size_t)p->rows * (size_t)p->n;
    float *part = malloc((size_t)t * nn * sizeof *part);
    if (!part)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = BP_OK;
    for (int r = 0; !st && r < t; r++) {
        int64_t k0, k1;
        bp_inv_part(p->k, t, r, &k0, &k1);
        size_t kk = (size_t)(k1 - k0);
        cudaError_t ce = cudaMemcpy2DAsync(s->shard, kk * es, (char *)s->a + (size_t)k0 * es,
                                           (size_t)p->k * es, kk * es, (size_t)p->batch,
                                           cudaMemcpyDeviceToDevice, stream(s));
        if (ce != cudaSuccess) {
            st = bp_cuda_fail(err, BP_EINTERNAL, "cudaMemcpy2DAsync (rank shard)", ce);
            break;
        }
        gemm_t g = {s->shard, (char *)s->b + (size_t)k0 * (size_t)p->n * es, s->c,
                    p->batch, (int64_t)kk};
        bp_inv_algo_t ra;
        bp_inv_algo_init(&ra);
        if ((st = engine_gemm(s, &g, &ra, err)) || (st = fetch(s, s->c, pos, s->host, err)))
            break;
        bp_inv_widen(p->dtype, s->host, nn, part + (size_t)r * nn);
        if (r == 0 && ra.known)
            *algo = ra;
    }
    if (!st) {
        bp_inv_allreduce_rows(part, t, nn, (size_t)pos * (size_t)p->n,
                              (size_t)p->batch * (size_t)p->n, p->combine, p->dtype, out);
        if (!algo->known) {
            algo->known = true;
            snprintf(algo->source, sizeof algo->source, "fixed");
        }
        snprintf(algo->text, sizeof algo->text, "%d ranks, %s all-reduce%s", t,
                 bp_inv_combine_name(p->combine), algo->lt ? "; rank 0's GEMM above" : "");
    }
    free(part);
    return st;
}

static bp_status run(bp_inv_engine_t *e, int64_t v, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err)
{
    cu_t *s = S(e);
    const bp_inv_problem_t *p = &s->p;
    int64_t m = p->axis == BP_INV_BATCH ? v : p->batch;
    if (p->axis != BP_INV_BATCH && (v > 256 || v > p->k))
        return bp_error_set(err, BP_EUNAVAIL, "%lld parts of K = %lld", (long long)v,
                            (long long)p->k);
    if (v < 1 || m > s->rows_cap || pos < 0 || pos + p->rows > m)
        return bp_error_set(err, BP_EINTERNAL, "%s: configuration %lld with rows at "
                            "%lld", e->name, (long long)v, (long long)pos);
    bp_status st = bp_cuda_use(s->be, err);
    if (st || (st = place(s, pos, err)))
        return st;
    if (p->axis == BP_INV_RANKS)
        return ranks(s, (int)v, pos, out, algo, err);
    gemm_t g = {s->a, s->b, s->c, m, p->k};
    if (p->axis == BP_INV_SPLIT)
        st = lt_split(s, &g, (int)v, algo, err);
    else
        st = engine_gemm(s, &g, algo, err);
    if (st || (st = fetch(s, s->c, pos, s->host, err)))
        return st;
    memcpy(out, s->host, bp_inv_result_elems(p) * esize(s));
    if (p->axis == BP_INV_BATCH && s->kind != K_LT)
        st = attribute(s, &g, pos, algo, err);
    return st;
}

static void cu_close(bp_inv_engine_t *e)
{
    cu_t *s = S(e);
    if (s) {
        if (s->be)
            bp_cuda_use(s->be, &(bp_error_t){0});
        free_dev(s);
        bp_cuda_blas_close(s->gemm);
        if (s->lt)
            BP_BLASLT(cublasLtDestroy)(s->lt);
        if (s->ws)
            cudaFree(s->ws);
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
