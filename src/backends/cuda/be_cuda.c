/* CUDA backend, host half: device selection and the availability probe,
 * one stream, device memory (a size-bucketed pool reused across ops,
 * dtypes and probes), transfers, cuBLAS with pinned numerics, and the
 * environment fingerprint.  The backend's one C file that includes CUDA
 * headers (the layer stack's stack_cuda.c and invariance's inv_cuda.c
 * have their own); what each op computes is in be_cuda_ops.c.
 *
 * Every CUDA and cuBLAS call is checked, and a failure names the call and
 * CUDA's error string.  Ops run synchronously: each kernel is followed by
 * a stream synchronisation, so that a fault is reported against the kernel
 * that caused it.
 *
 * Environment: BP_CUDA_DEBUG=1 disables the pool (each buffer is a fresh
 * cudaMalloc, freed at once) and the 0xFF poisoning of new buffers, so
 * that compute-sanitizer's initcheck sees every allocation as it is. */
#include "be_cuda.h"

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpk.h"
#include "cublas_dl.h"
#include "envinfo.h"
#include "cuda_check.h"
#include "config.h"

/* cuBLAS workspace, fixed so that algorithm choice cannot depend on what
 * happens to be free; 32 MiB is what PyTorch reserves on Hopper. */
#define WORKSPACE_BYTES ((size_t)32 << 20)
#define POOL_MIN_BYTES ((size_t)256)

typedef struct {
    void *ptr;
    size_t size;
    int used;
} pool_ent_t;

typedef struct {
    int device;
    int shown;   /* the index the user gave (device, unless pinned) */
    cudaStream_t stream;
    cublasHandle_t blas;
    void *workspace;
    int debug;
    pool_ent_t *pool;
    size_t npool, cap;
} cuda_state_t;

static cuda_state_t *state(bp_backend_t *be)
{
    return (cuda_state_t *)be->state;
}

static void version_str(int v, char *out, size_t n)
{
    snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void blas_version_str(char *out, size_t n)
{
    int ma = 0, mi = 0, pa = 0;
    bp_error_t err = {0};
    if (bp_cublas_load(&err))
        snprintf(out, n, "not loadable");
    else if (BP_BLAS(cublasGetProperty)(MAJOR_VERSION, &ma) != CUBLAS_STATUS_SUCCESS ||
        BP_BLAS(cublasGetProperty)(MINOR_VERSION, &mi) != CUBLAS_STATUS_SUCCESS ||
        BP_BLAS(cublasGetProperty)(PATCH_LEVEL, &pa) != CUBLAS_STATUS_SUCCESS)
        snprintf(out, n, "unknown");
    else
        snprintf(out, n, "%d.%d.%d", ma, mi, pa);
}

/* How many devices there are, or why none can be used. */
static bp_status device_count(int *count, bp_error_t *err)
{
    int drv = 0, rt = 0;
    char dv[32], rv[32];
    *count = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0)
        return bp_error_set(err, BP_EUNAVAIL,
                            "no CUDA driver (libcuda.so could not be loaded)");
    cudaRuntimeGetVersion(&rt);
    version_str(drv, dv, sizeof dv);
    version_str(rt, rv, sizeof rv);
    cudaError_t e = cudaGetDeviceCount(count);
    cudaGetLastError();
    if (e == cudaErrorNoDevice || (e == cudaSuccess && *count == 0))
        return bp_error_set(err, BP_EUNAVAIL, "no CUDA device");
    if (e == cudaErrorInsufficientDriver)
        return bp_error_set(err, BP_EUNAVAIL,
                            "CUDA driver %s is older than the CUDA runtime %s "
                            "bitprobe was built with", dv, rv);
    if (e != cudaSuccess)
        return bp_cuda_fail(err, BP_EUNAVAIL, "cudaGetDeviceCount", e);
    return BP_OK;
}

json_t *bp_be_cuda_env(bp_error_t *err)
{
    int count, drv = 0, rt = 0;
    if (device_count(&count, err))
        return NULL;
    char dv[32], rv[32], bv[32];
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    version_str(drv, dv, sizeof dv);
    version_str(rt, rv, sizeof rv);
    blas_version_str(bv, sizeof bv);
    json_t *devs = json_array();
    for (int i = 0; devs && i < count; i++) {
        struct cudaDeviceProp p;
        cudaError_t e = cudaGetDeviceProperties(&p, i);
        if (e != cudaSuccess) {
            json_decref(devs);
            bp_cuda_fail(err, BP_EUNAVAIL, "cudaGetDeviceProperties", e);
            return NULL;
        }
        char cc[16], uuid[48], pci[32];
        const unsigned char *u = (const unsigned char *)p.uuid.bytes;
        snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
        /* As nvidia-smi prints them, so that a fleet can join the two. */
        snprintf(uuid, sizeof uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
                 u[11], u[12], u[13], u[14], u[15]);
        snprintf(pci, sizeof pci, "%08x:%02x:%02x.0", (unsigned)p.pciDomainID,
                 (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
        json_array_append_new(
            devs, json_pack("{s:s, s:s, s:i, s:I, s:s, s:s}", "name", p.name, "cc", cc,
                            "sms", p.multiProcessorCount, "mem_mib",
                            (json_int_t)(p.totalGlobalMem >> 20), "uuid", uuid,
                            "pci_bus_id", pci));
    }
    char kd[64];
    bp_envinfo_nvidia_driver(kd, sizeof kd);
    json_t *env = devs ? json_pack("{s:s, s:s, s:s, s:s, s:o}", "driver", dv,
                                   "nvidia_driver", kd, "runtime", rv, "cublas", bv,
                                   "devices", devs)
                       : NULL;
    if (!env)
        bp_error_set(err, BP_ENOMEM, "out of memory");
    return env;
}

void *bp_cuda_stream(bp_backend_t *be)
{
    return (void *)state(be)->stream;
}

bp_status bp_cuda_use(bp_backend_t *be, bp_error_t *err)
{
    CUDA_TRY(cudaSetDevice(state(be)->device), BP_EINTERNAL);
    return BP_OK;
}

bp_status bp_cuda_gpu_props(bp_backend_t *be, bp_gpu_props_t *props, bp_error_t *err)
{
    int dev = state(be)->device;
    CUDA_TRY(cudaDeviceGetAttribute(&props->sm_count, cudaDevAttrMultiProcessorCount, dev),
             BP_EINTERNAL);
    CUDA_TRY(cudaDeviceGetAttribute(&props->max_threads_per_sm,
                                    cudaDevAttrMaxThreadsPerMultiProcessor, dev),
             BP_EINTERNAL);
    CUDA_TRY(cudaDeviceGetAttribute(&props->warp_size, cudaDevAttrWarpSize, dev), BP_EINTERNAL);
    return BP_OK;
}

bp_status bp_cuda_zero(bp_backend_t *be, void *p, size_t bytes, bp_error_t *err)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, state(be)->stream), BP_EINTERNAL);
    return BP_OK;
}

bp_status bp_cuda_finish(bp_backend_t *be, const char *kernel, int rc,
                         bp_error_t *err)
{
    if (rc != 0) {
        cudaError_t e = (cudaError_t)rc;
        return bp_error_set(err, e == cudaErrorMemoryAllocation
                                     ? BP_ENOMEM : BP_EINTERNAL,
                            "CUDA kernel %s: launch failed: %s (%s)", kernel,
                            cudaGetErrorString(e), cudaGetErrorName(e));
    }
    cudaError_t e = cudaStreamSynchronize(state(be)->stream);
    if (e != cudaSuccess)
        return bp_error_set(err, BP_EINTERNAL,
                            "CUDA kernel %s failed while running: %s (%s)",
                            kernel, cudaGetErrorString(e), cudaGetErrorName(e));
    return BP_OK;
}

/* Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets b first. */
/* cuBLAS's data and compute types and scalars for dt (fp32, bf16, fp16:
 * fp32 compute; fp64: fp64), pedantic. */
typedef struct {
    cudaDataType_t type;
    cublasComputeType_t compute;
    float a32, b32;
    double a64, b64;
    const void *alpha, *beta; /* 1 and 0 in the compute type */
} gemm_types_t;

static bp_status gemm_types(bp_dtype_t dt, gemm_types_t *g, bp_error_t *err)
{
    g->compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    g->a32 = 1.0f;
    g->b32 = 0.0f;
    g->a64 = 1.0;
    g->b64 = 0.0;
    g->alpha = dt == BP_F64 ? (const void *)&g->a64 : (const void *)&g->a32;
    g->beta = dt == BP_F64 ? (const void *)&g->b64 : (const void *)&g->b32;
    switch (dt) {
    case BP_F32: g->type = CUDA_R_32F; return BP_OK;
    case BP_BF16: g->type = CUDA_R_16BF; return BP_OK;
    case BP_F16: g->type = CUDA_R_16F; return BP_OK;
    case BP_F64:
        g->type = CUDA_R_64F;
        g->compute = CUBLAS_COMPUTE_64F_PEDANTIC;
        return BP_OK;
    default:
        return bp_error_set(err, BP_EINPUT, "matmul of %s is not supported "
                            "on CUDA", bp_dtype_name(dt));
    }
}

bp_status bp_cuda_gemm(bp_backend_t *be, bp_dtype_t dt, int64_t m, int64_t n,
                       int64_t k, const void *a, const void *b, void *c,
                       bp_error_t *err)
{
    cuda_state_t *s = state(be);
    gemm_types_t g;
    bp_status st = gemm_types(dt, &g, err);
    if (st)
        return st;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return bp_error_set(err, BP_EINPUT,
                            "matmul dimensions %lld x %lld x %lld exceed "
                            "cuBLAS's int range", (long long)m, (long long)n,
                            (long long)k);
    if (m == 0 || n == 0)
        return BP_OK;
    if (k == 0) /* an empty sum: zeros, without asking cuBLAS */
        return bp_cuda_finish(be, "bpk_fill",
                              bpk_fill(s->stream, c, (int)dt, 0.0, m * n),
                              err);
    BLAS_TRY(BP_BLAS(cublasGemmEx)(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                          (int)k, g.alpha, b, g.type, (int)n, a, g.type, (int)k,
                          g.beta, c, g.type, (int)n, g.compute, CUBLAS_GEMM_DEFAULT),
             BP_EINTERNAL);
    CUDA_TRY(cudaStreamSynchronize(s->stream), BP_EINTERNAL);
    return BP_OK;
}

bp_status bp_cuda_gemm_batched(bp_backend_t *be, bp_dtype_t dt, int64_t batch, int64_t m,
                               int64_t n, int64_t k, const void *a, const void *b,
                               bool b_t, void *c, double alpha, double beta,
                               bp_error_t *err)
{
    cuda_state_t *s = state(be);
    gemm_types_t g;
    bp_status st = gemm_types(dt, &g, err);
    if (st)
        return st;
    g.a32 = (float)alpha; /* opmath_t(alpha), as at::cuda::blas::bgemm */
    g.b32 = (float)beta;
    g.a64 = alpha;
    g.b64 = beta;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff || batch > 0x7fffffff)
        return bp_error_set(err, BP_EINPUT,
                            "bmm dimensions %lld x %lld x %lld x %lld exceed "
                            "cuBLAS's int range", (long long)batch, (long long)m,
                            (long long)n, (long long)k);
    if (batch == 0 || m == 0 || n == 0)
        return BP_OK;
    if (k == 0 && beta == 0)
        return bp_cuda_finish(be, "bpk_fill",
                              bpk_fill(s->stream, c, (int)dt, 0.0, batch * m * n), err);
    if (k == 0) /* baddbmm: result.mul_(beta), in opmath */
        return bp_cuda_finish(
            be, "bpk_binary(mul)",
            bpk_binary(s->stream, BPK_MUL, c, (int)dt, (bpk_arg_t){c, (int)dt, 0.0},
                       (bpk_arg_t){NULL, 0, dt == BP_F64 ? beta : (double)(float)beta},
                       &(bpk_bcast_t){0}, batch * m * n),
            err);
    /* Column-major c^T = op(b)^T a^T: b is [k, n] row-major (ld n), or with
     * b_t [n, k] row-major read transposed (ld k). */
    BLAS_TRY(BP_BLAS(cublasGemmStridedBatchedEx)(
                 s->blas, b_t ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                 (int)k, g.alpha, b, g.type, b_t ? (int)k : (int)n, (long long)(k * n), a,
                 g.type, (int)k, (long long)(m * k), g.beta, c, g.type, (int)n,
                 (long long)(m * n), (int)batch, g.compute, CUBLAS_GEMM_DEFAULT),
             BP_EINTERNAL);
    CUDA_TRY(cudaStreamSynchronize(s->stream), BP_EINTERNAL);
    return BP_OK;
}

static size_t bucket(size_t n)
{
    size_t b = POOL_MIN_BYTES;
    while (b < n && b < ((size_t)1 << 62))
        b <<= 1;
    return b;
}

/* A free pooled buffer of exactly this bucket size, marked used. */
static void *pool_take(cuda_state_t *s, size_t size)
{
    for (size_t i = 0; !s->debug && i < s->npool; i++)
        if (!s->pool[i].used && s->pool[i].size == size) {
            s->pool[i].used = 1;
            return s->pool[i].ptr;
        }
    return NULL;
}

static bp_status pool_new(cuda_state_t *s, size_t size, void **out,
                          bp_error_t *err)
{
    if (s->npool == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        pool_ent_t *p = realloc(s->pool, cap * sizeof *p);
        if (!p)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        s->pool = p;
        s->cap = cap;
    }
    void *ptr = NULL;
    cudaError_t e = cudaMalloc(&ptr, size);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return bp_error_set(err, BP_ENOMEM,
                            "cannot allocate %zu bytes of device memory: %s "
                            "(%s)", size, cudaGetErrorString(e),
                            cudaGetErrorName(e));
    }
    s->pool[s->npool++] = (pool_ent_t){ptr, size, 1};
    *out = ptr;
    return BP_OK;
}

static bp_status cuda_dev_alloc(bp_backend_t *be, bp_buf_t *buf,
                                bp_error_t *err)
{
    cuda_state_t *s = state(be);
    size_t need = bp_buf_nbytes(buf), size = s->debug ? need : bucket(need);
    if (size == 0)
        size = POOL_MIN_BYTES;
    bp_status st = bp_cuda_use(be, err);
    if (st)
        return st;
    buf->dev = pool_take(s, size);
    if (!buf->dev && (st = pool_new(s, size, &buf->dev, err)))
        return st;
    /* Anything a kernel fails to write reads back as NaN (or -1). */
    if (!s->debug && need)
        CUDA_TRY(cudaMemsetAsync(buf->dev, 0xff, need, s->stream),
                 BP_EINTERNAL);
    return BP_OK;
}

static void cuda_dev_free(bp_backend_t *be, bp_buf_t *buf)
{
    cuda_state_t *s = state(be);
    for (size_t i = 0; buf->dev && i < s->npool; i++)
        if (s->pool[i].ptr == buf->dev) {
            if (s->debug) {
                cudaFree(s->pool[i].ptr);
                s->pool[i] = s->pool[--s->npool];
            } else {
                s->pool[i].used = 0;
            }
            break;
        }
    buf->dev = NULL;
}

/* Host to device (upload) or back (download), synchronously on the
 * backend's stream. */
static bp_status copy(bp_backend_t *be, bp_buf_t *b, bool up, bp_error_t *err)
{
    cuda_state_t *s = state(be);
    size_t n = bp_buf_nbytes(b);
    if (!n)
        return BP_OK;
    if (!b->dev || !b->data)
        return bp_error_set(err, BP_EINTERNAL,
                            "%s of a buffer without host or device copy",
                            up ? "upload" : "download");
    bp_status st = bp_cuda_use(be, err);
    if (st)
        return st;
    CUDA_TRY(cudaMemcpyAsync(up ? b->dev : b->data, up ? b->data : b->dev, n,
                             up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                             s->stream), BP_EINTERNAL);
    CUDA_TRY(cudaStreamSynchronize(s->stream), BP_EINTERNAL);
    return BP_OK;
}

static bp_status cuda_upload(bp_backend_t *be, bp_buf_t *b, bp_error_t *err)
{
    return copy(be, b, true, err);
}

static bp_status cuda_download(bp_backend_t *be, bp_buf_t *b, bp_error_t *err)
{
    return copy(be, b, false, err);
}

static void cuda_destroy(bp_backend_t *be)
{
    cuda_state_t *s = be ? state(be) : NULL;
    if (s) {
        cudaSetDevice(s->device);
        if (s->stream)
            cudaStreamSynchronize(s->stream);
        for (size_t i = 0; i < s->npool; i++)
            cudaFree(s->pool[i].ptr);
        free(s->pool);
        if (s->blas)
            BP_BLAS(cublasDestroy)(s->blas);
        if (s->workspace)
            cudaFree(s->workspace);
        if (s->stream)
            cudaStreamDestroy(s->stream);
        free(s);
    }
    if (be) {
        json_decref(be->fingerprint);
        free(be);
    }
}

/* Every op runs with the backend's device current, on whichever thread
 * runs the backend. */
static bp_status cuda_enter(bp_backend_t *be, bp_error_t *err)
{
    return bp_cuda_use(be, err);
}

/* Stream, cuBLAS handle with pinned numerics, and a trial launch so that a
 * device the kernels were not built for is refused here, by name. */
static bp_status setup(bp_backend_t *be, const struct cudaDeviceProp *p,
                       bp_error_t *err)
{
    cuda_state_t *s = state(be);
    /* The primary context starts here (cudaFree(0) forces it where
     * cudaSetDevice is lazy); --timing reports it apart from the ops. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CUDA_TRY(cudaSetDevice(s->device), BP_EUNAVAIL);
    CUDA_TRY(cudaFree(0), BP_EUNAVAIL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    be->ctx_start_s = (double)(t1.tv_sec - t0.tv_sec) +
                      (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CUDA_TRY(cudaStreamCreate(&s->stream), BP_EUNAVAIL);
    CUDA_TRY(cudaMalloc(&s->workspace, WORKSPACE_BYTES), BP_EUNAVAIL);
    int rc = bpk_fill(s->stream, s->workspace, BPK_F32, 0.0, 1);
    if (rc == 0)
        rc = (int)cudaStreamSynchronize(s->stream);
    if (rc != 0) {
        cudaGetLastError();
        return bp_error_set(err, BP_EUNAVAIL,
                            "device %d (%s, compute capability %d.%d) cannot "
                            "run bitprobe's kernels (built with '%s'): %s",
                            s->shown, p->name, p->major, p->minor,
                            BP_NVCCFLAGS,
                            cudaGetErrorString((cudaError_t)rc));
    }
    bp_status st = bp_cublas_load(err);
    if (st)
        return st;
    BLAS_TRY(BP_BLAS(cublasCreate)(&s->blas), BP_EUNAVAIL);
    /* cublasSetStream resets the workspace: the stream goes first. */
    BLAS_TRY(BP_BLAS(cublasSetStream)(s->blas, s->stream), BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasSetWorkspace)(s->blas, s->workspace, WORKSPACE_BYTES),
             BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasSetMathMode)(s->blas, CUBLAS_PEDANTIC_MATH), BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasSetAtomicsMode)(s->blas, CUBLAS_ATOMICS_NOT_ALLOWED),
             BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasSetPointerMode)(s->blas, CUBLAS_POINTER_MODE_HOST),
             BP_EUNAVAIL);
    return BP_OK;
}

static bp_status fingerprint(bp_backend_t *be, const struct cudaDeviceProp *p,
                             bp_error_t *err)
{
    cuda_state_t *s = state(be);
    int drv = 0, rt = 0, bl = 0;
    CUDA_TRY(cudaDriverGetVersion(&drv), BP_EUNAVAIL);
    CUDA_TRY(cudaRuntimeGetVersion(&rt), BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasGetVersion)(s->blas, &bl), BP_EUNAVAIL);
    char cc[16], dv[32], rv[32], bv[32], nv[32];
    snprintf(cc, sizeof cc, "%d.%d", p->major, p->minor);
    version_str(drv, dv, sizeof dv);
    version_str(rt, rv, sizeof rv);
    blas_version_str(bv, sizeof bv);
    version_str(bpk_nvcc_version(), nv, sizeof nv);
    be->fingerprint = json_pack(
        "{s:s, s:s, s:s, s:i, s:I, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:b,"
        " s:s, s:s, s:s, s:s, s:I}",
        "backend", "cuda", "gpu", p->name, "cc", cc, "sms",
        p->multiProcessorCount, "mem_mib",
        (json_int_t)(p->totalGlobalMem >> 20), "driver", dv, "runtime", rv,
        "cublas", bv, "cublas_version", bl, "nvcc", nv, "nvccflags",
        BP_NVCCFLAGS, "math_mode", "CUBLAS_PEDANTIC_MATH", "tf32", 0,
        "gemm_compute", "CUBLAS_COMPUTE_32F_PEDANTIC (fp64: 64F_PEDANTIC)",
        "gemm_algo", "CUBLAS_GEMM_DEFAULT", "atomics",
        "CUBLAS_ATOMICS_NOT_ALLOWED", "stream", "one stream, synchronised "
        "after every op", "workspace_bytes", (json_int_t)WORKSPACE_BYTES);
    if (!be->fingerprint)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    return BP_OK;
}

/* Loads cuBLAS while the context starts (setup waits for it). */
static void *preload_cublas(void *arg)
{
    (void)arg;
    bp_error_t err = {0};
    bp_cublas_load(&err); /* setup reports a failure */
    return NULL;
}

static bp_status open_device(const bp_backend_opts_t *o, int count, bp_backend_t **out,
                             bp_error_t *err);

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

bp_status bp_be_cuda_open(const bp_backend_opts_t *o, bp_backend_t **out,
                          bp_error_t *err)
{
    *out = NULL;
    int count;
    /* The driver starts here (cuInit: every visible device is set up);
     * --timing reports it apart from the context start. */
    double t0 = now_s();
    bp_status st = device_count(&count, err);
    double init_s = now_s() - t0;
    if (st)
        return st;
    /* A device is there: loading cuBLAS (about 0.07 s) overlaps the
     * context start (about 0.1 s). */
    pthread_t pre;
    bool preloading = pthread_create(&pre, NULL, preload_cublas, NULL) == 0;
    st = open_device(o, count, out, err);
    if (preloading)
        pthread_join(pre, NULL);
    if (!st)
        (*out)->init_s = init_s;
    return st;
}

static bp_status open_device(const bp_backend_opts_t *o, int count, bp_backend_t **out,
                             bp_error_t *err)
{
    int gpu = o ? o->gpu : 0, shown = o && o->pinned ? o->gpu_given : gpu;
    bp_status st;
    if (gpu < 0 || gpu >= count)
        return bp_error_set(err, BP_EUNAVAIL,
                            "device %d: there %s %d CUDA device%s (0..%d)%s",
                            shown, count == 1 ? "is" : "are", count,
                            count == 1 ? "" : "s", count - 1,
                            o && o->pinned ? " visible (bitprobe showed CUDA the one it uses)"
                                           : "");
    struct cudaDeviceProp p;
    CUDA_TRY(cudaGetDeviceProperties(&p, gpu), BP_EUNAVAIL);
    if (p.major < 8)
        return bp_error_set(err, BP_EUNAVAIL,
                            "device %d (%s): compute capability %d.%d is "
                            "older than 8.0", shown, p.name, p.major, p.minor);
    bp_backend_t *be = calloc(1, sizeof *be);
    cuda_state_t *s = calloc(1, sizeof *s);
    if (!be || !s) {
        free(be);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    be->state = s;
    s->device = gpu;
    s->shown = shown;
    const char *dbg = getenv("BP_CUDA_DEBUG");
    s->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    be->name = "cuda";
    be->dtypes = BP_DTYPES_COMPUTE;
    snprintf(be->key, sizeof be->key, "cuda-sm%d%d", p.major, p.minor);
    be->device = true;
    be->dev_alloc = cuda_dev_alloc;
    be->dev_free = cuda_dev_free;
    be->upload = cuda_upload;
    be->download = cuda_download;
    be->destroy = cuda_destroy;
    be->op = bp_cuda_ops;
    be->enter = cuda_enter;
    st = setup(be, &p, err);
    if (!st)
        st = fingerprint(be, &p, err);
    if (st) {
        cuda_destroy(be);
        return st;
    }
    *out = be;
    return BP_OK;
}
