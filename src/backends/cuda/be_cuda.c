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

#include "bpk.h"
#include "cublas_dl.h"
#include "cuda_gemm.h"
#include "envinfo.h"
#include "cuda_check.h"
#include "config.h"
#include "timing.h"

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
    bp_cuda_blas_t *gemm; /* the GEMM module's handle, the backend's settings */
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

bp_cuda_blas_t *bp_cuda_gemm_handle(bp_backend_t *be)
{
    return state(be)->gemm;
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
        if (s->gemm)
            bp_cuda_blas_close(s->gemm);
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

/* Stream, a trial launch so that a device the kernels were not built for
 * is refused here, by name, and the GEMM module's handle. */
static bp_status setup(bp_backend_t *be, const struct cudaDeviceProp *p,
                       const bp_blas_settings_t *blas, bp_error_t *err)
{
    cuda_state_t *s = state(be);
    /* The primary context starts here (cudaFree(0) forces it where
     * cudaSetDevice is lazy); --timing reports it apart from the ops. */
    double t0 = bp_timing_now();
    CUDA_TRY(cudaSetDevice(s->device), BP_EUNAVAIL);
    CUDA_TRY(cudaFree(0), BP_EUNAVAIL);
    be->ctx_start_s = bp_timing_now() - t0;
    CUDA_TRY(cudaStreamCreate(&s->stream), BP_EUNAVAIL);
    void *probe = NULL;
    CUDA_TRY(cudaMalloc(&probe, 256), BP_EUNAVAIL);
    int rc = bpk_fill(s->stream, probe, BPK_F32, 0.0, 1);
    if (rc == 0)
        rc = (int)cudaStreamSynchronize(s->stream);
    cudaFree(probe);
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
    if (!st)
        st = bp_cuda_blas_open(be, blas, &s->gemm, err);
    if (!st)
        bp_cuda_blas_warm(s->gemm);
    if (st && st != BP_ENOMEM)
        st = BP_EUNAVAIL;
    return st;
}

static bp_status fingerprint(bp_backend_t *be, const struct cudaDeviceProp *p,
                             bp_error_t *err)
{
    cuda_state_t *s = state(be);
    int drv = 0, rt = 0, bl = 0, ltv = (int)BP_BLASLT(cublasLtGetVersion)();
    CUDA_TRY(cudaDriverGetVersion(&drv), BP_EUNAVAIL);
    CUDA_TRY(cudaRuntimeGetVersion(&rt), BP_EUNAVAIL);
    BLAS_TRY(BP_BLAS(cublasGetProperty)(MAJOR_VERSION, &bl), BP_EUNAVAIL);
    {
        int mi = 0, pa = 0;
        BLAS_TRY(BP_BLAS(cublasGetProperty)(MINOR_VERSION, &mi), BP_EUNAVAIL);
        BLAS_TRY(BP_BLAS(cublasGetProperty)(PATCH_LEVEL, &pa), BP_EUNAVAIL);
        bl = bl * 10000 + mi * 100 + pa; /* cublasGetVersion's encoding */
    }
    const bp_blas_settings_t *bs = bp_cuda_blas_settings(s->gemm);
    bool ped = bs->pedantic;
    char mm[160], gc[160];
    snprintf(mm, sizeof mm, "%s",
             ped ? "CUBLAS_PEDANTIC_MATH"
             : bs->tf32 ? "CUBLAS_TF32_TENSOR_OP_MATH (PyTorch's handle; bf16/fp16 GEMMs "
                          "set CUBLAS_DEFAULT_MATH)"
                        : "CUBLAS_DEFAULT_MATH (PyTorch's handle)");
    snprintf(gc, sizeof gc, "%s",
             ped ? "CUBLAS_COMPUTE_32F_PEDANTIC (fp64: 64F_PEDANTIC)"
             : bs->tf32 ? "fp32: cublasSgemm with TF32, cuBLASLt CUBLAS_COMPUTE_32F_FAST_TF32; "
                          "bf16/fp16: CUBLAS_COMPUTE_32F"
                        : "fp32: cublasSgemm, cuBLASLt CUBLAS_COMPUTE_32F; bf16/fp16: "
                          "CUBLAS_COMPUTE_32F");
    char cc[16], dv[32], rv[32], bv[32], nv[32];
    snprintf(cc, sizeof cc, "%d.%d", p->major, p->minor);
    version_str(drv, dv, sizeof dv);
    version_str(rt, rv, sizeof rv);
    blas_version_str(bv, sizeof bv);
    version_str(bpk_nvcc_version(), nv, sizeof nv);
    be->fingerprint = json_pack(
        "{s:s, s:s, s:s, s:i, s:I, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:s, s:b,"
        " s:s, s:s, s:s, s:s, s:o, s:I}",
        "backend", "cuda", "gpu", p->name, "cc", cc, "sms",
        p->multiProcessorCount, "mem_mib",
        (json_int_t)(p->totalGlobalMem >> 20), "driver", dv, "runtime", rv,
        "cublas", bv, "cublas_version", bl, "cublaslt_version", ltv, "nvcc", nv,
        "nvccflags", BP_NVCCFLAGS, "math_mode", mm, "tf32", !ped && bs->tf32,
        "gemm_compute", gc, "gemm_algo",
        ped ? "CUBLAS_GEMM_DEFAULT" : "CUBLAS_GEMM_DEFAULT_TENSOR_OP (bf16/fp16 cublasGemmEx); "
                                      "cuBLASLt: the heuristic's first algorithm",
        "atomics", "CUBLAS_ATOMICS_NOT_ALLOWED", "stream", "one stream, synchronised "
        "after every op", "blas", bp_cuda_blas_json(s->gemm), "workspace_bytes",
        (json_int_t)bp_blas_workspace(bs, p->major));
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

static const char *env_get(const char *name)
{
    return getenv(name);
}

bp_status bp_be_cuda_open(const bp_backend_opts_t *o, bp_backend_t **out,
                          bp_error_t *err)
{
    *out = NULL;
    int count;
    /* The driver starts here (cuInit: every visible device is set up);
     * --timing reports it apart from the context start. */
    double t0 = bp_timing_now();
    bp_status st = device_count(&count, err);
    double init_s = bp_timing_now() - t0;
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
    bp_blas_settings_t blas;
    bp_blas_settings_default(&blas);
    bp_blas_settings_env(&blas, env_get);
    if (o && o->cuda_blas[0] && (st = bp_blas_settings_parse(&blas, o->cuda_blas, err))) {
        cuda_destroy(be);
        return st;
    }
    st = setup(be, &p, &blas, err);
    if (!st)
        st = fingerprint(be, &p, err);
    if (st) {
        cuda_destroy(be);
        return st;
    }
    *out = be;
    return BP_OK;
}
