/* The NCCL engine of the collective sweep (coll_run.h): this process is one
 * rank, on its own GPU, of a job of W processes (bitprobe's own launch or
 * a launcher's, ranks.h).
 *
 * Communicators: a control communicator for the whole run (the job's
 * unique id, NCCL's settings as the environment gives them) carries
 * bitprobe's own traffic: the next unique id, the ranks' agreement after
 * each call, digests and counts, the gathering of a reduce-scatter's
 * pieces.  Each configuration gets a communicator of its own: NCCL reads
 * NCCL_ALGO and NCCL_PROTO when a communicator starts (set for the
 * ncclCommInitRank* call, then restored), the channel count is
 * ncclConfig_t's minCTAs = maxCTAs (what NCCL_MIN_NCHANNELS and
 * NCCL_MAX_NCHANNELS set for a whole process; NCCL 2.17 and later).  The
 * measured collectives run on a stream of their own, the control traffic
 * on the CUDA backend's stream, so that a rank whose call failed while the
 * others' kernels wait can still be agreed about: after every call the
 * ranks exchange whether their call was accepted; when one was not, every
 * rank aborts the configuration's communicator (its kernels end) and opens
 * it again for the next call.  A call that does not finish within
 * BP_NCCL_TIMEOUT seconds is an error.
 *
 * Not tried, as results: what bp_nccl_cfg_open refuses (nccl_cfg.h), and
 * ncclAvg before NCCL 2.10.
 *
 * Inputs are made once per dtype and kind at the map's largest size (the
 * smaller messages are their prefixes): values on the GPU by the counter
 * generator's normal kernel, probes and bits on the host (coll.h) and copied.  A
 * repeat computes the call again from fresh allocations made after a
 * block of another size (the allocation history NVIDIA/nccl#2360 is
 * about). */
#include "coll_run.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "be_cuda.h"
#include "bpk.h"
#include "coll_order.h"
#include "cuda_check.h"
#include "nccl_dl.h"
#include "timing.h"

#define CU(call) CUDA_TRY(call, BP_EINTERNAL)
#define MAX_INPUTS 16

typedef struct {
    bp_dtype_t dt;
    bp_coll_input_t in;
    uint64_t cap;   /* message elements it serves */
    void *dev;      /* this rank's input: cap elements (bits: cap / W) */
    char *expect;   /* bits: every rank's input, W x cap / W (host) */
} input_t;

typedef struct {
    bp_ranks_env_t env;
    bp_backend_t *be;
    cudaStream_t ctl_s, work_s;
    bp_nccl_comm_t ctl, comm;
    bp_coll_cfg_t cfg;
    bool begun;
    int version;
    uint64_t seed;
    double timeout;
    input_t in[MAX_INPUTS];
    int nin;
    void *out, *full, *scratch, *hold;
    size_t out_bytes, full_bytes;
    char *host;
    size_t host_bytes;
} nc_t;

static int nccl_type(bp_dtype_t dt)
{
    return dt == BP_BF16 ? BP_NCCL_BFLOAT16 : dt == BP_F16 ? BP_NCCL_FLOAT16 : BP_NCCL_FLOAT32;
}

/* Waits for a stream, at most the timeout. */
static bp_status wait_for(nc_t *s, cudaStream_t q, const char *what, bp_error_t *err)
{
    double end = bp_timing_now() + s->timeout;
    for (;;) {
        cudaError_t e = cudaStreamQuery(q);
        if (e == cudaSuccess)
            return BP_OK;
        if (e != cudaErrorNotReady)
            return bp_cuda_fail(err, BP_EINTERNAL, what, e);
        if (bp_timing_now() > end)
            return bp_error_set(err, BP_EINTERNAL, "%s did not finish within %.0f s "
                                "(BP_NCCL_TIMEOUT)", what, s->timeout);
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
}

static bp_status grow(void **p, size_t *have, size_t need, bp_error_t *err)
{
    if (need <= *have && *p)
        return BP_OK;
    if (*p)
        cudaFree(*p);
    *p = NULL;
    *have = 0;
    CU(cudaMalloc(p, need ? need : 1));
    *have = need;
    return BP_OK;
}

/* n u64 on the control communicator: op SUM or MAX, in place. */
static bp_status ctl_reduce(nc_t *s, uint64_t *v, size_t n, int op, bp_error_t *err)
{
    CU(cudaMemcpyAsync(s->scratch, v, n * 8, cudaMemcpyHostToDevice, s->ctl_s));
    bp_nccl_result_t r = BP_NCCL(ncclAllReduce)(s->scratch, s->scratch, n, BP_NCCL_INT64, op,
                                                s->ctl, s->ctl_s);
    if (r)
        return bp_nccl_fail(err, "ncclAllReduce (control)", r, s->ctl);
    CU(cudaMemcpyAsync(v, s->scratch, n * 8, cudaMemcpyDeviceToHost, s->ctl_s));
    return wait_for(s, s->ctl_s, "the control all-reduce", err);
}

/* Every rank's u64 into all[W]. */
static bp_status ctl_gather(nc_t *s, uint64_t mine, uint64_t *all, bp_error_t *err)
{
    char *d = s->scratch;
    CU(cudaMemcpyAsync(d, &mine, 8, cudaMemcpyHostToDevice, s->ctl_s));
    bp_nccl_result_t r = BP_NCCL(ncclAllGather)(d, d + 8, 1, BP_NCCL_INT64, s->ctl, s->ctl_s);
    if (r)
        return bp_nccl_fail(err, "ncclAllGather (control)", r, s->ctl);
    CU(cudaMemcpyAsync(all, d + 8, (size_t)s->env.world * 8, cudaMemcpyDeviceToHost,
                       s->ctl_s));
    return wait_for(s, s->ctl_s, "the control all-gather", err);
}

/* ---- communicators ------------------------------------------------------ */

static void drop_comm(nc_t *s, bool abort)
{
    if (!s->comm)
        return;
    if (abort)
        BP_NCCL(ncclCommAbort)(s->comm);
    else
        BP_NCCL(ncclCommDestroy)(s->comm);
    s->comm = NULL;
    cudaStreamSynchronize(s->work_s);
    cudaGetLastError();
}

static bp_status open_comm(nc_t *s, bp_error_t *err)
{
    /* rank 0's new unique id, over the control communicator */
    bp_nccl_id_t id;
    memset(&id, 0, sizeof id);
    if (s->env.rank == 0) {
        bp_nccl_result_t r = BP_NCCL(ncclGetUniqueId)(&id);
        if (r)
            return bp_nccl_fail(err, "ncclGetUniqueId", r, NULL);
    }
    CU(cudaMemcpyAsync(s->scratch, &id, sizeof id, cudaMemcpyHostToDevice, s->ctl_s));
    bp_nccl_result_t r = BP_NCCL(ncclBroadcast)(s->scratch, s->scratch, sizeof id / 4,
                                                BP_NCCL_INT32, 0, s->ctl, s->ctl_s);
    if (r)
        return bp_nccl_fail(err, "ncclBroadcast (control)", r, s->ctl);
    CU(cudaMemcpyAsync(&id, s->scratch, sizeof id, cudaMemcpyDeviceToHost, s->ctl_s));
    bp_status st = wait_for(s, s->ctl_s, "sending the next unique id", err);
    if (st)
        return st;
    return bp_nccl_cfg_open(&s->cfg, s->env.world, &id, s->env.rank, &s->comm, err);
}

static bp_status nc_begin(bp_coll_engine_t *e, const bp_coll_cfg_t *c, bp_error_t *err)
{
    nc_t *s = e->state;
    drop_comm(s, false);
    s->cfg = *c;
    s->begun = true;
    return open_comm(s, err);
}

static void nc_end(bp_coll_engine_t *e)
{
    nc_t *s = e->state;
    drop_comm(s, false);
    s->begun = false;
}

/* ---- inputs ------------------------------------------------------------- */

static bp_status input(nc_t *s, bp_dtype_t dt, bp_coll_input_t in, uint64_t cap, input_t **out,
                       bp_error_t *err)
{
    input_t *x = NULL;
    for (int i = 0; i < s->nin && !x; i++)
        if (s->in[i].dt == dt && s->in[i].in == in)
            x = &s->in[i];
    if (x && x->cap >= cap) {
        *out = x;
        return BP_OK;
    }
    if (!x) {
        if (s->nin == MAX_INPUTS)
            return bp_error_set(err, BP_EINTERNAL, "too many inputs");
        x = &s->in[s->nin++];
        memset(x, 0, sizeof *x);
        x->dt = dt;
        x->in = in;
    }
    if (x->dev)
        cudaFree(x->dev);
    x->dev = NULL;
    free(x->expect);
    x->expect = NULL;
    x->cap = 0;
    size_t es = bp_dtype_info(dt)->size;
    int W = s->env.world, r = s->env.rank;
    uint64_t mine = in == BP_COLL_BITS ? cap / (uint64_t)W : cap;
    CU(cudaMalloc(&x->dev, (size_t)(mine ? mine : 1) * es));
    if (in == BP_COLL_VALUES) {
        int rc = bpk_normal(s->ctl_s, x->dev, (int)dt, (int64_t)mine, s->seed,
                            BP_COLL_STREAM + (uint64_t)r, 0.0, 1.0);
        bp_status st = bp_cuda_finish(s->be, "bpk_normal", rc, err);
        if (st)
            return st;
    } else {
        size_t nb = (size_t)(in == BP_COLL_BITS ? mine * (uint64_t)W : mine) * es;
        char *h = malloc(nb ? nb : 1);
        if (!h)
            return bp_error_set(err, BP_ENOMEM, "out of memory: %zu bytes of inputs", nb);
        if (in == BP_COLL_BITS) {
            for (int q = 0; q < W; q++)
                bp_coll_input(in, dt, W, q, s->seed, 0, mine, h + (size_t)q * mine * es);
            x->expect = h;
            CU(cudaMemcpy(x->dev, h + (size_t)r * mine * es, (size_t)mine * es,
                          cudaMemcpyHostToDevice));
        } else {
            bp_coll_input(in, dt, W, r, s->seed, 0, mine, h);
            cudaError_t ce = cudaMemcpy(x->dev, h, nb, cudaMemcpyHostToDevice);
            free(h);
            if (ce != cudaSuccess)
                return bp_cuda_fail(err, BP_EINTERNAL, "cudaMemcpy (probes)", ce);
        }
    }
    x->cap = cap;
    *out = x;
    return BP_OK;
}

/* ---- one call ----------------------------------------------------------- */

/* Elements of this rank's output that are not the copy of the inputs. */
static uint64_t copy_misses(const char *got, const input_t *x, uint64_t n, int W, size_t es)
{
    uint64_t per = n / (uint64_t)W, cap_per = x->cap / (uint64_t)W, miss = 0;
    for (int q = 0; q < W; q++) {
        const char *a = got + (size_t)q * per * es, *b = x->expect + (size_t)q * cap_per * es;
        if (!memcmp(a, b, (size_t)per * es))
            continue;
        for (uint64_t i = 0; i < per; i++)
            miss += memcmp(a + i * es, b + i * es, es) != 0;
    }
    return miss;
}

static bp_status nc_run(bp_coll_engine_t *e, bp_coll_kind_t k, bp_coll_redop_t op,
                        bp_dtype_t dt, bp_coll_input_t in, uint64_t n, uint64_t cap, int repeat,
                        void *out, bp_coll_info_t *info, bp_error_t *err)
{
    nc_t *s = e->state;
    memset(info, 0, sizeof *info);
    int W = s->env.world;
    size_t es = bp_dtype_info(dt)->size;
    bp_status st = BP_OK;
    if (!s->comm && (st = open_comm(s, err)))
        return st;
    input_t *x = NULL;
    if ((st = input(s, dt, in, cap, &x, err)))
        return st;
    uint64_t send_n = k == BP_COLL_ALL_GATHER ? n / (uint64_t)W : n,
             recv_n = k == BP_COLL_REDUCE_SCATTER ? n / (uint64_t)W : n;
    if ((st = grow(&s->out, &s->out_bytes, (size_t)recv_n * es, err)))
        return st;
    void *send = x->dev, *recv = s->out, *hold = NULL, *send2 = NULL, *recv2 = NULL;
    if (repeat > 0) {
        /* another allocation pattern: a block of another size first, then
         * the call's buffers anew */
        size_t h = (size_t)repeat * ((2u << 20) + 4096u) + 256u;
        if (cudaMalloc(&hold, h) != cudaSuccess ||
            cudaMalloc(&send2, (size_t)send_n * es) != cudaSuccess ||
            cudaMalloc(&recv2, (size_t)recv_n * es) != cudaSuccess ||
            cudaMemcpy(send2, x->dev, (size_t)send_n * es, cudaMemcpyDeviceToDevice) !=
                cudaSuccess) {
            cudaFree(hold);
            cudaFree(send2);
            cudaFree(recv2);
            cudaGetLastError();
            return bp_error_set(err, BP_ENOMEM, "repeat %d: cannot make its buffers", repeat);
        }
        send = send2;
        recv = recv2;
    }
    /* the call, on the configuration's communicator */
    bp_nccl_result_t r = 0;
    int nop = op == BP_COLL_AVG ? BP_NCCL_AVG : BP_NCCL_SUM;
    bool refused = false;
    bp_error_t mine = {0};
    if (op == BP_COLL_AVG && s->version < 21000) {
        refused = true;
        bp_error_set(&mine, BP_EUNAVAIL, "NCCL before 2.10 has no ncclAvg");
    } else {
        switch (k) {
        case BP_COLL_ALL_REDUCE:
            r = BP_NCCL(ncclAllReduce)(send, recv, n, nccl_type(dt), nop, s->comm, s->work_s);
            break;
        case BP_COLL_REDUCE_SCATTER:
            r = BP_NCCL(ncclReduceScatter)(send, recv, recv_n, nccl_type(dt), nop, s->comm,
                                           s->work_s);
            break;
        default:
            r = BP_NCCL(ncclAllGather)(send, recv, send_n, nccl_type(dt), s->comm, s->work_s);
        }
        if (r) {
            refused = true;
            bp_nccl_fail(&mine, k == BP_COLL_ALL_REDUCE        ? "ncclAllReduce"
                                : k == BP_COLL_REDUCE_SCATTER ? "ncclReduceScatter"
                                                              : "ncclAllGather",
                         r, s->comm);
        }
    }
    /* did every rank's call go in? */
    uint64_t flag = refused;
    st = ctl_reduce(s, &flag, 1, BP_NCCL_MAX, err);
    if (!st && flag) {
        drop_comm(s, true);
        if (refused)
            *err = mine;
        else
            bp_error_set(err, BP_EUNAVAIL, "another rank's call was refused");
        err->code = BP_EUNAVAIL;
        st = BP_EUNAVAIL;
    }
    if (!st && (st = wait_for(s, s->work_s, "the collective", err)))
        drop_comm(s, true);
    /* this rank's output on the host */
    char *host = out;
    size_t nb = (size_t)n * es;
    if (!st && !host) {
        if (s->host_bytes < nb) {
            free(s->host);
            s->host_bytes = 0;
            if (!(s->host = malloc(nb ? nb : 1)))
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
            else
                s->host_bytes = nb;
        }
        host = s->host;
    }
    if (!st && k == BP_COLL_REDUCE_SCATTER) {
        /* the pieces gathered (a copy: the all-gather maps check it) */
        if (!(st = grow(&s->full, &s->full_bytes, nb, err))) {
            r = BP_NCCL(ncclAllGather)(recv, s->full, recv_n, nccl_type(dt), s->ctl, s->ctl_s);
            st = r ? bp_nccl_fail(err, "ncclAllGather (gathering the pieces)", r, s->ctl)
                   : wait_for(s, s->ctl_s, "gathering the pieces", err);
        }
        if (!st && out) {
            cudaError_t ce = cudaMemcpy(out, s->full, nb, cudaMemcpyDeviceToHost);
            if (ce != cudaSuccess)
                st = bp_cuda_fail(err, BP_EINTERNAL, "cudaMemcpy (result)", ce);
        }
    } else if (!st) {
        cudaError_t ce = cudaMemcpy(host, recv, nb, cudaMemcpyDeviceToHost);
        if (ce != cudaSuccess)
            st = bp_cuda_fail(err, BP_EINTERNAL, "cudaMemcpy (result)", ce);
        /* every rank's output should be rank 0's */
        uint64_t all[BP_COLL_MAX_WORLD];
        if (!st)
            st = ctl_gather(s, bp_coll_digest(host, nb), all, err);
        for (int q = 1; !st && q < W; q++)
            info->ranks_differ += all[q] != all[0];
        if (!st && k == BP_COLL_ALL_GATHER) {
            uint64_t miss = copy_misses(host, x, n, W, es);
            if (!(st = ctl_reduce(s, &miss, 1, BP_NCCL_SUM, err)))
                info->copy_differ = miss;
        }
    }
    cudaFree(hold);
    cudaFree(send2);
    cudaFree(recv2);
    return st;
}

/* ---- the engine --------------------------------------------------------- */

static void nc_close(bp_coll_engine_t *e)
{
    nc_t *s = e->state;
    if (s) {
        drop_comm(s, false);
        if (s->ctl)
            BP_NCCL(ncclCommDestroy)(s->ctl);
        for (int i = 0; i < s->nin; i++) {
            cudaFree(s->in[i].dev);
            free(s->in[i].expect);
        }
        cudaFree(s->out);
        cudaFree(s->full);
        cudaFree(s->scratch);
        cudaFree(s->hold);
        if (s->work_s)
            cudaStreamDestroy(s->work_s);
        free(s->host);
        bp_backend_close(s->be);
        free(s);
    }
    free(e);
}

bp_status bp_coll_engine_nccl(const bp_ranks_env_t *env, const bp_nccl_id_t *id, uint64_t seed,
                              int alloc, bp_coll_engine_t **out, bp_error_t *err)
{
    *out = NULL;
    if (env->world > BP_COLL_MAX_WORLD)
        return bp_error_set(err, BP_EINPUT, "at most %d ranks, not %d", BP_COLL_MAX_WORLD,
                            env->world);
    bp_status st = bp_nccl_load(err);
    if (st)
        return st;
    bp_coll_engine_t *e = calloc(1, sizeof *e);
    nc_t *s = calloc(1, sizeof *s);
    if (!e || !s) {
        free(e);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    e->state = s;
    e->begin = nc_begin;
    e->run = nc_run;
    e->end = nc_end;
    e->close = nc_close;
    e->world = env->world;
    e->rank = env->rank;
    e->seed = seed;
    s->env = *env;
    s->seed = seed;
    s->timeout = bp_ranks_timeout();
    s->version = bp_nccl_version_code();
    char v[32];
    bp_nccl_version(v, sizeof v);
    snprintf(e->name, sizeof e->name, "nccl");
    snprintf(e->lib, sizeof e->lib, "NCCL %s", v);
    bp_backend_opts_t bo;
    bp_backend_opts_default(&bo);
    bo.gpu = env->local_rank;
    if ((st = bp_be_cuda_open(&bo, &s->be, err)) || (st = bp_cuda_use(s->be, err))) {
        bp_error_prefix(err, "rank %d, GPU %d: ", env->rank, env->local_rank);
        nc_close(e);
        return st;
    }
    s->ctl_s = (cudaStream_t)bp_cuda_stream(s->be);
    cudaError_t ce = cudaStreamCreateWithFlags(&s->work_s, cudaStreamNonBlocking);
    if (ce == cudaSuccess && alloc > 0)
        ce = cudaMalloc(&s->hold, (size_t)alloc * ((37u << 20) + 4096u));
    if (ce == cudaSuccess)
        ce = cudaMalloc(&s->scratch, (size_t)(BP_COLL_MAX_WORLD + 8) * 8 + sizeof(bp_nccl_id_t));
    if (ce != cudaSuccess) {
        st = bp_cuda_fail(err, BP_EUNAVAIL, "allocating on the GPU", ce);
        nc_close(e);
        return st;
    }
    bp_nccl_result_t r = BP_NCCL(ncclCommInitRank)(&s->ctl, env->world, *id, env->rank);
    if (r) {
        s->ctl = NULL;
        st = bp_nccl_fail(err, "ncclCommInitRank (control)", r, NULL);
        nc_close(e);
        return st;
    }
    const char *ea = getenv("NCCL_ALGO"), *ep = getenv("NCCL_PROTO"),
               *en = getenv("NCCL_NVLS_ENABLE");
    snprintf(e->desc, sizeof e->desc, "NCCL %s, %d ranks (%s launch), one communicator per "
             "configuration; environment: NCCL_ALGO=%s NCCL_PROTO=%s NCCL_NVLS_ENABLE=%s", v,
             env->world, env->launcher ? env->launcher : "?", ea ? ea : "(unset)",
             ep ? ep : "(unset)", en ? en : "(unset)");
    *out = e;
    return BP_OK;
}
