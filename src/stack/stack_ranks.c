/* The sharded init and the tensor-parallel reduction over real ranks
 * (stack_ranks.h).  Every collective is called by every rank in the same
 * order; work of rank 0 alone (downloads, the oracle) comes after them. */
#include "stack_ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_cuda.h"
#include "bpk.h"
#include "oracle_mpfr.h"
#include "oracle_tensor.h"
#include "stack_int.h"
#include "timing.h"

#define TP_INPUT_KIND 14ull /* the counters' kind of the reduction's input */
#define ID_CHARS 256        /* a rank's description, all-gathered */

typedef struct {
    const bp_ranks_env_t *e;
    bp_backend_t *be;
    bp_stack_dev_t *ops;
    bp_nccl_comm_t comm;
    bp_buf_t count; /* one u64 for bpk_count_diff */
} ctx_t;

static int nccl_type(bp_dtype_t dt)
{
    switch (dt) {
    case BP_BF16: return BP_NCCL_BFLOAT16;
    case BP_F16: return BP_NCCL_FLOAT16;
    case BP_F64: return BP_NCCL_FLOAT64;
    case BP_I64: return BP_NCCL_INT64;
    case BP_I32: return BP_NCCL_INT32;
    default: return BP_NCCL_FLOAT32;
    }
}

#define NCCL_TRY(call, comm)                                                   \
    do {                                                                       \
        bp_nccl_result_t r_ = (call);                                          \
        if (r_ != 0)                                                           \
            return bp_nccl_fail(err, #call, r_, (comm));                       \
    } while (0)

static bp_status nccl_sync(ctx_t *c, const char *what, bp_error_t *err)
{
    bp_status st = c->ops->sync(c->ops, err);
    return st ? bp_error_prefix(err, "%s: ", what) : BP_OK;
}

/* Elements of a and b (device, same dtype and size) whose bits differ. */
static bp_status count_diff(ctx_t *c, const bp_buf_t *a, const bp_buf_t *b, uint64_t *out,
                            bp_error_t *err)
{
    int rc = bpk_count_diff(bp_cuda_stream(c->be), a->dev, b->dev, (int64_t)a->numel,
                            (int)bp_dtype_info(a->dtype)->size, c->count.dev);
    bp_status st = bp_cuda_finish(c->be, "bpk_count_diff", rc, err);
    int64_t v = 0;
    if (!st)
        st = c->ops->get(c->ops, &c->count, &v, err);
    *out = (uint64_t)v;
    return st;
}

static void release(ctx_t *c, bp_buf_t *b)
{
    if (b->dev || b->data)
        c->ops->release(c->ops, b);
}

/* Each rank's GPU, gathered on every rank (rank 0 keeps them). */
static bp_status identities(ctx_t *c, bp_ranks_result_t *res, bp_error_t *err)
{
    int W = c->e->world;
    char mine[ID_CHARS] = "";
    bp_error_t e2 = {0};
    json_t *env = bp_be_cuda_env(&e2);
    json_t *d = json_array_get(json_object_get(env, "devices"), (size_t)c->e->local_rank);
    snprintf(mine, sizeof mine, "GPU %d %s %s", c->e->local_rank,
             d ? json_string_value(json_object_get(d, "name")) : "?",
             d ? json_string_value(json_object_get(d, "pci_bus_id")) : "?");
    json_decref(env);
    bp_buf_t one = {0}, all = {0};
    int64_t s1[1] = {ID_CHARS / 4}, sw[1] = {(int64_t)W * ID_CHARS / 4};
    char *host = calloc((size_t)W, ID_CHARS);
    res->gpus = calloc((size_t)W, sizeof *res->gpus);
    bp_status st = host && res->gpus ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = c->ops->alloc(c->ops, &one, BP_I32, 1, s1, err);
    if (!st)
        st = c->ops->alloc(c->ops, &all, BP_I32, 1, sw, err);
    if (!st)
        st = c->ops->put(c->ops, &one, mine, err);
    if (!st) {
        bp_nccl_result_t r = BP_NCCL(ncclAllGather)(one.dev, all.dev, ID_CHARS / 4,
                                                    BP_NCCL_INT32, c->comm,
                                                    bp_cuda_stream(c->be));
        if (r)
            st = bp_nccl_fail(err, "ncclAllGather", r, c->comm);
    }
    if (!st)
        st = nccl_sync(c, "gathering the ranks' GPUs", err);
    if (!st)
        st = c->ops->get(c->ops, &all, host, err);
    for (int r = 0; !st && r < W; r++) {
        host[(size_t)r * ID_CHARS + ID_CHARS - 1] = '\0';
        if (!(res->gpus[r] = strdup(host + (size_t)r * ID_CHARS)))
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    release(c, &one);
    release(c, &all);
    free(host);
    return st;
}

/* ---- parameters ------------------------------------------------------- */

static bp_status one_param(ctx_t *c, const bp_ranks_opts_t *o, bp_ranks_param_t *rp,
                           bp_buf_t *scratch, uint64_t *counts, bp_error_t *err)
{
    const bp_stack_param_t *p = &rp->p;
    int W = c->e->world, r = c->e->rank;
    size_t n = p->numel, lo, hi, cnt = bp_ranks_gather_count(n, W);
    bp_stack_shard_range(n, W, r, &lo, &hi);
    bp_buf_t whole = {0}, emu = {0}, send = {0}, recv = {0}, g = {0};
    int64_t s1[1] = {(int64_t)cnt}, sw[1] = {(int64_t)cnt * W};
    bp_status st = c->ops->alloc(c->ops, &whole, o->dtype, p->ndim, p->shape, err);
    if (!st)
        st = c->ops->uniform(c->ops, &whole, 0, n, o->seed, p->stream, 0, p->low, p->high, err);
    if (!st)
        st = c->ops->alloc(c->ops, &emu, o->dtype, p->ndim, p->shape, err);
    if (!st)
        st = bp_stack_param_emulate(c->ops, p, o->seed, W, scratch, &emu, err);
    if (!st)
        st = c->ops->alloc(c->ops, &send, o->dtype, 1, s1, err);
    if (!st && hi > lo)
        st = c->ops->uniform(c->ops, &send, 0, hi - lo, o->seed, p->stream, lo, p->low,
                             p->high, err);
    if (!st)
        st = c->ops->alloc(c->ops, &recv, o->dtype, 1, sw, err);
    if (!st) {
        bp_nccl_result_t rc = BP_NCCL(ncclAllGather)(send.dev, recv.dev, cnt,
                                                     nccl_type(o->dtype), c->comm,
                                                     bp_cuda_stream(c->be));
        if (rc)
            st = bp_nccl_fail(err, "ncclAllGather", rc, c->comm);
    }
    if (!st)
        st = nccl_sync(c, "all-gather", err);
    if (!st)
        st = c->ops->alloc(c->ops, &g, o->dtype, p->ndim, p->shape, err);
    for (int q = 0; !st && q < W; q++) {
        size_t ql, qh;
        bp_stack_shard_range(n, W, q, &ql, &qh);
        if (qh > ql)
            st = c->ops->copy(c->ops, &g, ql, &recv, (size_t)q * cnt, qh - ql, err);
    }
    if (!st)
        st = count_diff(c, &g, &whole, &counts[0], err);
    if (!st)
        st = count_diff(c, &g, &emu, &counts[1], err);
    release(c, &whole);
    release(c, &emu);
    release(c, &send);
    release(c, &recv);
    release(c, &g);
    return st ? bp_error_prefix(err, "%s: ", p->name) : BP_OK;
}

static bp_status params(ctx_t *c, const bp_ranks_opts_t *o, bp_ranks_result_t *res,
                        bp_error_t *err)
{
    int W = c->e->world;
    size_t np = bp_stack_nparams(&o->cfg), most = 0;
    res->params = calloc(np, sizeof *res->params);
    if (!res->params)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    res->nparams = np;
    for (size_t i = 0; i < np; i++) {
        bp_stack_param(&o->cfg, i, &res->params[i].p);
        size_t cnt = bp_ranks_gather_count(res->params[i].p.numel, W);
        most = cnt > most ? cnt : most;
        res->elems += res->params[i].p.numel;
    }
    bp_buf_t scratch = {0}, counts = {0};
    int64_t s1[1] = {(int64_t)(most ? most : 1)}, sc[1] = {(int64_t)(2 * np)};
    int64_t *host = calloc(2 * np, sizeof *host);
    bp_status st = host ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = c->ops->alloc(c->ops, &scratch, o->dtype, 1, s1, err);
    for (size_t i = 0; !st && i < np; i++) {
        uint64_t two[2];
        st = one_param(c, o, &res->params[i], &scratch, two, err);
        host[2 * i] = (int64_t)two[0];
        host[2 * i + 1] = (int64_t)two[1];
    }
    /* every rank's counts, summed */
    if (!st)
        st = c->ops->alloc(c->ops, &counts, BP_I64, 1, sc, err);
    if (!st)
        st = c->ops->put(c->ops, &counts, host, err);
    if (!st) {
        bp_nccl_result_t rc = BP_NCCL(ncclAllReduce)(counts.dev, counts.dev, 2 * np,
                                                     BP_NCCL_INT64, BP_NCCL_SUM, c->comm,
                                                     bp_cuda_stream(c->be));
        if (rc)
            st = bp_nccl_fail(err, "ncclAllReduce", rc, c->comm);
    }
    if (!st)
        st = nccl_sync(c, "summing the counts", err);
    if (!st)
        st = c->ops->get(c->ops, &counts, host, err);
    for (size_t i = 0; !st && i < np; i++) {
        res->params[i].vs_whole = (uint64_t)host[2 * i];
        res->params[i].vs_emulated = (uint64_t)host[2 * i + 1];
        res->params_differ += host[2 * i] || host[2 * i + 1];
    }
    release(c, &scratch);
    release(c, &counts);
    free(host);
    return st;
}

/* ---- tensor-parallel reduction ---------------------------------------- */

/* Columns [lo, hi) of the rows of src [rows, K] into dst [rows, hi - lo]. */
static bp_status columns(ctx_t *c, bp_buf_t *dst, const bp_buf_t *src, int64_t rows,
                         int64_t K, size_t lo, size_t hi, bp_error_t *err)
{
    bp_status st = BP_OK;
    for (int64_t t = 0; !st && t < rows; t++)
        st = c->ops->copy(c->ops, dst, (size_t)t * (hi - lo), src, (size_t)t * (size_t)K + lo,
                          hi - lo, err);
    return st;
}

/* The all-reduce of part into out on a communicator of its own with
 * configuration cfg (nccl_cfg.h), in buckets of cfg->bucket bytes when it
 * has one. */
static bp_status reduce_with(ctx_t *c, const bp_coll_cfg_t *cfg, const bp_buf_t *part,
                             bp_buf_t *out, bp_error_t *err)
{
    bp_nccl_id_t id;
    memset(&id, 0, sizeof id);
    bp_buf_t idb = {0};
    int64_t s1[1] = {BP_NCCL_ID_BYTES / 4};
    bp_status st = c->ops->alloc(c->ops, &idb, BP_I32, 1, s1, err);
    if (!st && c->e->rank == 0) {
        bp_nccl_result_t r = BP_NCCL(ncclGetUniqueId)(&id);
        st = r ? bp_nccl_fail(err, "ncclGetUniqueId", r, NULL)
               : c->ops->put(c->ops, &idb, &id, err);
    }
    if (!st) {
        bp_nccl_result_t r = BP_NCCL(ncclBroadcast)(idb.dev, idb.dev, BP_NCCL_ID_BYTES / 4,
                                                    BP_NCCL_INT32, 0, c->comm,
                                                    bp_cuda_stream(c->be));
        st = r ? bp_nccl_fail(err, "ncclBroadcast", r, c->comm)
               : nccl_sync(c, "sending the next unique id", err);
    }
    if (!st)
        st = c->ops->get(c->ops, &idb, &id, err);
    release(c, &idb);
    if (st)
        return st;
    bp_nccl_comm_t comm = NULL;
    if ((st = bp_nccl_cfg_open(cfg, c->e->world, &id, c->e->rank, &comm, err)))
        return st;
    size_t es = bp_dtype_info(part->dtype)->size, n = part->numel;
    size_t per = cfg->bucket ? (size_t)(cfg->bucket / es) : n;
    if (!per)
        per = 1;
    bp_nccl_result_t r = 0;
    for (size_t off = 0; !r && off < n; off += per)
        r = BP_NCCL(ncclAllReduce)((const char *)part->dev + off * es, (char *)out->dev + off * es,
                                   n - off < per ? n - off : per, nccl_type(part->dtype),
                                   BP_NCCL_SUM, comm, bp_cuda_stream(c->be));
    st = r ? bp_nccl_fail(err, "ncclAllReduce", r, comm) : nccl_sync(c, "all-reduce", err);
    BP_NCCL(ncclCommDestroy)(comm);
    return st;
}

/* How many elements of a are nearer to (and farther from) the oracle
 * than those of b, in ulps. */
static void nearer(const bp_buf_t *a, const bp_buf_t *b, const bp_buf_t *oracle, size_t *n,
                   size_t *f)
{
    *n = *f = 0;
    for (size_t i = 0; i < a->numel; i++) {
        uint64_t o = bp_buf_bits(oracle, i), xa = bp_buf_bits(a, i), xb = bp_buf_bits(b, i);
        uint64_t da = bp_ulp_distance(a->dtype, xa, o), db = bp_ulp_distance(b->dtype, xb, o);
        /* at one distance, the oracle's own bits (its zero's sign) are nearer */
        bool ea = bp_dtype_bits_equal(a->dtype, xa, o, false),
             eb = bp_dtype_bits_equal(b->dtype, xb, o, false);
        *n += da < db || (da == db && ea && !eb);
        *f += da > db || (da == db && eb && !ea);
    }
}

static bp_status tp(ctx_t *c, const bp_ranks_opts_t *o, bp_ranks_result_t *res,
                    bp_error_t *err)
{
    int W = c->e->world, rank = c->e->rank;
    bp_stack_param_t w;
    size_t np = bp_stack_nparams(&o->cfg), i = 0;
    for (; i < np; i++) {
        bp_stack_param(&o->cfg, i, &w);
        if (w.kind == BP_SP_O && w.layer == 0)
            break;
    }
    if (i == np)
        return bp_error_set(err, BP_EINTERNAL, "no o_proj in layer 0");
    int64_t T = o->tp_rows, N = w.shape[0], K = w.shape[1];
    if (K < W)
        return bp_error_set(err, BP_EINPUT, "the reduction's %lld columns cannot be split over "
                            "%d ranks", (long long)K, W);
    snprintf(res->tp_weight, sizeof res->tp_weight, "%s", w.name);
    res->tp_T = T, res->tp_K = K, res->tp_N = N;
    size_t lo, hi;
    bp_stack_shard_range((size_t)K, W, rank, &lo, &hi);
    int64_t sx[2] = {T, K}, sxr[2] = {T, (int64_t)(hi - lo)}, swr[2] = {N, (int64_t)(hi - lo)},
            sy[2] = {T, N};
    bp_buf_t x = {0}, wt = {0}, xr = {0}, wr = {0}, part = {0}, y = {0}, ya = {0};
    bp_buf_t hx = {0}, hw = {0}, hy = {0}, ho = {0}, hya[BP_RANKS_MAX_ALGOS];
    memset(hya, 0, sizeof hya);
    double t0 = bp_timing_now();
    bp_status st = c->ops->alloc(c->ops, &x, o->dtype, 2, sx, err);
    if (!st)
        st = c->ops->uniform(c->ops, &x, 0, x.numel, o->seed, TP_INPUT_KIND << 32, 0, -1.0f,
                             1.0f, err);
    if (!st)
        st = c->ops->alloc(c->ops, &wt, o->dtype, w.ndim, w.shape, err);
    if (!st)
        st = c->ops->uniform(c->ops, &wt, 0, w.numel, o->seed, w.stream, 0, w.low, w.high, err);
    if (!st)
        st = c->ops->alloc(c->ops, &y, o->dtype, 2, sy, err);
    if (!st)
        st = c->ops->linear(c->ops, &y, &x, &wt, err);
    if (!st)
        st = c->ops->alloc(c->ops, &xr, o->dtype, 2, sxr, err);
    if (!st)
        st = c->ops->alloc(c->ops, &wr, o->dtype, 2, swr, err);
    if (!st)
        st = columns(c, &xr, &x, T, K, lo, hi, err);
    if (!st)
        st = columns(c, &wr, &wt, N, K, lo, hi, err);
    if (!st)
        st = c->ops->alloc(c->ops, &part, o->dtype, 2, sy, err);
    if (!st)
        st = c->ops->linear(c->ops, &part, &xr, &wr, err);
    if (!st)
        st = c->ops->alloc(c->ops, &ya, o->dtype, 2, sy, err);
    res->ntp = o->nalgos;
    for (int a = 0; !st && a < o->nalgos; a++) {
        bp_ranks_tp_t *t = &res->tp[a];
        bp_error_t e2 = {0};
        t->cfg = o->algos[a];
        bp_coll_cfg_name(&o->algos[a], t->algo, sizeof t->algo);
        /* a configuration NCCL cannot run here is a result, not the end */
        if (reduce_with(c, &o->algos[a], &part, &ya, &e2)) {
            snprintf(t->error, sizeof t->error, "%s", e2.msg);
            continue;
        }
        t->ran = true;
        if (rank == 0 && !(st = bp_buf_alloc(&hya[a], o->dtype, 2, sy, err)))
            st = c->ops->get(c->ops, &ya, hya[a].data, err);
    }
    res->t_tp = bp_timing_now() - t0;
    if (!st && rank == 0) {
        if (!(st = bp_buf_alloc(&hy, o->dtype, 2, sy, err)))
            st = c->ops->get(c->ops, &y, hy.data, err);
        if (!st && o->oracle) {
            /* exact x w^T rounded once: w^T as [K, N] on the host */
            int64_t swt[2] = {K, N};
            double t1 = bp_timing_now();
            bp_buf_t hwn = {0};
            st = bp_buf_alloc(&hx, o->dtype, 2, sx, err);
            if (!st)
                st = c->ops->get(c->ops, &x, hx.data, err);
            if (!st)
                st = bp_buf_alloc(&hwn, o->dtype, w.ndim, w.shape, err);
            if (!st)
                st = c->ops->get(c->ops, &wt, hwn.data, err);
            if (!st)
                st = bp_buf_alloc(&hw, o->dtype, 2, swt, err);
            size_t es = bp_dtype_info(o->dtype)->size;
            for (int64_t k = 0; !st && k < K; k++)
                for (int64_t nn = 0; nn < N; nn++)
                    memcpy((char *)hw.data + ((size_t)k * (size_t)N + (size_t)nn) * es,
                           (char *)hwn.data + ((size_t)nn * (size_t)K + (size_t)k) * es, es);
            bp_buf_free(&hwn);
            if (!st)
                st = bp_buf_alloc(&ho, o->dtype, 2, sy, err);
            if (!st) {
                bp_exec_t ex = {.a = &hx, .b = &hw, .out = &ho};
                st = bp_oracle_matmul(bp_oracle_threads(o->oracle_threads), &ex, err);
            }
            res->have_oracle = !st;
            res->t_oracle = bp_timing_now() - t1;
        }
        if (!st && res->have_oracle)
            st = bp_compare(&ho, &hy, NULL, NULL, &res->unsharded_vs_oracle, err);
        int first = -1;
        for (int a = 0; !st && a < o->nalgos; a++) {
            bp_ranks_tp_t *t = &res->tp[a];
            if (!t->ran)
                continue;
            if (first < 0)
                first = a;
            /* the first configuration with the same bits names the group */
            t->group = a;
            for (int b = 0; b < a && t->group == a; b++)
                if (res->tp[b].ran && !memcmp(hya[b].data, hya[a].data, bp_buf_nbytes(&hya[a])))
                    t->group = res->tp[b].group;
            st = bp_compare(&hy, &hya[a], NULL, NULL, &t->vs_unsharded, err);
            if (!st)
                st = bp_compare(&hya[first], &hya[a], NULL, NULL, &t->vs_first, err);
            if (!st && res->have_oracle) {
                st = bp_compare(&ho, &hya[a], NULL, NULL, &t->vs_oracle, err);
                t->have_oracle = !st;
                nearer(&hya[a], &hy, &ho, &t->nearer, &t->farther);
            }
        }
    }
    release(c, &x);
    release(c, &wt);
    release(c, &xr);
    release(c, &wr);
    release(c, &part);
    release(c, &y);
    release(c, &ya);
    bp_buf_free(&hx);
    bp_buf_free(&hw);
    bp_buf_free(&hy);
    bp_buf_free(&ho);
    for (int a = 0; a < BP_RANKS_MAX_ALGOS; a++)
        bp_buf_free(&hya[a]);
    return st ? bp_error_prefix(err, "tensor-parallel reduction: ") : BP_OK;
}

/* ---- the run ---------------------------------------------------------- */

bp_status bp_stack_ranks(const bp_ranks_env_t *e, const bp_nccl_id_t *id,
                         const bp_ranks_opts_t *o, bp_ranks_result_t *res, bp_error_t *err)
{
    memset(res, 0, sizeof *res);
    res->world = e->world;
    ctx_t c = {e, NULL, NULL, NULL, {0}};
    bp_status st = bp_nccl_load(err);
    if (st)
        return st;
    bp_nccl_version(res->nccl, sizeof res->nccl);
    bp_backend_opts_t bo;
    bp_backend_opts_default(&bo);
    bo.gpu = e->local_rank;
    if ((st = bp_be_cuda_open(&bo, &c.be, err)))
        return bp_error_prefix(err, "rank %d, GPU %d: ", e->rank, e->local_rank);
    if ((st = bp_stack_dev_cuda_open(c.be, o->gemm, &c.ops, err))) {
        bp_backend_close(c.be);
        return st;
    }
    int64_t s1[1] = {1};
    st = c.ops->alloc(c.ops, &c.count, BP_I64, 1, s1, err);
    if (!st) {
        bp_nccl_result_t r = BP_NCCL(ncclCommInitRank)(&c.comm, e->world, *id, e->rank);
        if (r)
            st = bp_nccl_fail(err, "ncclCommInitRank", r, NULL);
    }
    if (!st)
        st = identities(&c, res, err);
    double t0 = bp_timing_now();
    if (!st && o->params)
        st = params(&c, o, res, err);
    res->t_params = bp_timing_now() - t0;
    if (!st && o->tp)
        st = tp(&c, o, res, err);
    if (c.comm && st)
        BP_NCCL(ncclCommAbort)(c.comm);
    else if (c.comm)
        BP_NCCL(ncclCommDestroy)(c.comm);
    release(&c, &c.count);
    c.ops->close(c.ops);
    bp_backend_close(c.be);
    return st ? bp_error_prefix(err, "rank %d: ", e->rank) : BP_OK;
}

void bp_ranks_result_free(bp_ranks_result_t *r)
{
    for (int i = 0; r->gpus && i < r->world; i++)
        free(r->gpus[i]);
    free(r->gpus);
    free(r->params);
    bp_cmp_free(&r->unsharded_vs_oracle);
    for (int a = 0; a < r->ntp; a++) {
        bp_cmp_free(&r->tp[a].vs_unsharded);
        bp_cmp_free(&r->tp[a].vs_first);
        bp_cmp_free(&r->tp[a].vs_oracle);
    }
    memset(r, 0, sizeof *r);
}

bool bp_ranks_failed(const bp_ranks_result_t *r)
{
    return r->params_differ > 0;
}
