/* The "cuda" invariance engine: bitprobe's CUDA implementations of the row
 * ops, over the whole batch on the GPU, batch axis: sum through the CUDA
 * backend's op table (bpk_sum: one thread per output, sequential),
 * rms_norm and log_softmax through the layer stack's CUDA ops (one block
 * per row, a fixed order: bpk_rows.cuh).  mean, softmax and attention have
 * no CUDA implementation in bitprobe yet: the engine says so, and the op
 * table's will take their place here when they land.  Inputs come from the
 * counter generator's kernel (bit-identical to the host's), and only the
 * probed rows are copied back. */
#include "inv_engine.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_cuda.h"
#include "cuda_check.h"
#include "op.h"
#include "stack_ops.h"

typedef struct {
    bp_backend_t *be;
    bp_sops_t *sops;
    bp_inv_problem_t p;
    bp_buf_t a, probe, w, out; /* device (sops) */
    int64_t at;
} rows_t;

static rows_t *S(bp_inv_engine_t *e)
{
    return (rows_t *)e->state;
}

static void release(rows_t *s)
{
    bp_buf_t *b[] = {&s->a, &s->probe, &s->w, &s->out};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        if (b[i]->dev && s->sops)
            s->sops->release(s->sops, b[i]);
        memset(b[i], 0, sizeof *b[i]);
    }
}

static bp_status gen(rows_t *s, bp_buf_t *b, size_t off, size_t n, uint64_t first,
                     uint64_t stream, bp_error_t *err)
{
    return s->sops->uniform(s->sops, b, off, n, s->p.seed, stream, first, -1.0f, 1.0f,
                            err);
}

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    rows_t *s = S(e);
    release(s);
    if (p->op != BP_INV_SUM && p->op != BP_INV_RMS_NORM && p->op != BP_INV_LOG_SOFTMAX)
        return bp_error_set(err, BP_EUNAVAIL, "cuda: no CUDA %s in bitprobe yet "
                            "(the CPU engine has its formulation)", bp_inv_op_name(p->op));
    if (p->axis != BP_INV_BATCH)
        return bp_error_set(err, BP_EUNAVAIL, "cuda: the batch axis only (the "
                            "split formulations run on the CPU engine)");
    s->p = *p;
    s->at = -1;
    int64_t sa[2] = {p->mmax, p->n}, sp[2] = {p->rows, p->n}, sw[2] = {1, p->n};
    int64_t so[2] = {p->mmax, p->op == BP_INV_SUM ? 1 : p->n};
    bp_status st;
    if ((st = s->sops->alloc(s->sops, &s->a, p->dtype, 2, sa, err)) ||
        (st = s->sops->alloc(s->sops, &s->probe, p->dtype, 2, sp, err)) ||
        (st = s->sops->alloc(s->sops, &s->w, p->dtype, 2, sw, err)) ||
        (st = s->sops->alloc(s->sops, &s->out, bp_inv_result_dtype(p), 2, so, err)) ||
        (st = gen(s, &s->a, 0, s->a.numel, 0, BP_INV_STREAM_FILL, err)) ||
        (st = gen(s, &s->probe, 0, s->probe.numel, 0, BP_INV_STREAM_PROBE, err)) ||
        (st = gen(s, &s->w, 0, s->w.numel, 0, BP_INV_STREAM_W, err)))
        return st;
    snprintf(e->desc, sizeof e->desc, "%s",
             p->op == BP_INV_SUM ? "the CUDA backend's sum (bpk_sum: one thread per "
                                   "output, fp32, sequential)"
                                 : "the layer stack's CUDA op: one block per row, a "
                                   "fixed tree (bpk_rows.cuh)");
    return BP_OK;
}

static bp_status place(rows_t *s, int64_t pos, bp_error_t *err)
{
    if (s->at == pos)
        return BP_OK;
    size_t H = (size_t)s->p.n, R = (size_t)s->p.rows;
    bp_status st;
    if (s->at >= 0 && (st = gen(s, &s->a, (size_t)s->at * H, R * H, (size_t)s->at * H,
                                BP_INV_STREAM_FILL, err)))
        return st;
    if ((st = s->sops->copy(s->sops, &s->a, (size_t)pos * H, &s->probe, 0, R * H, err)))
        return st;
    s->at = pos;
    return BP_OK;
}

static bp_status run(bp_inv_engine_t *e, int64_t m, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err)
{
    rows_t *s = S(e);
    const bp_inv_problem_t *p = &s->p;
    if (m > p->mmax || pos < 0 || pos + p->rows > m)
        return bp_error_set(err, BP_EINTERNAL, "cuda: batch %lld with rows at %lld",
                            (long long)m, (long long)pos);
    bp_status st = place(s, pos, err);
    if (st)
        return st;
    bp_buf_t a = s->a, o = s->out;
    a.shape[0] = o.shape[0] = m;
    a.numel = (size_t)m * (size_t)a.shape[1];
    o.numel = (size_t)m * (size_t)o.shape[1];
    if (p->op == BP_INV_SUM) {
        bp_op_t op = {.kind = BP_OP_SUM, .has_axis = true, .axis = -1};
        bp_exec_t x = {.op = &op, .a = &a, .out = &o};
        st = bp_backend_exec(s->be, &x, err);
    } else if (p->op == BP_INV_RMS_NORM) {
        bp_op_t op = {.kind = BP_OP_RMS_NORM, .form = BP_FORM_FIXED, .has_eps = true,
                      .eps = BP_INV_RMS_EPS};
        bp_exec_t x = {.op = &op, .a = &a, .b = &s->w, .out = &o};
        st = bp_backend_exec(s->be, &x, err);
    } else {
        bp_op_t op = {.kind = BP_OP_LOG_SOFTMAX, .form = BP_FORM_FIXED, .has_axis = true,
                      .axis = -1, .has_dtype = true, .dtype = BP_F32};
        bp_exec_t x = {.op = &op, .a = &a, .out = &o};
        st = bp_backend_exec(s->be, &x, err);
    }
    if (st)
        return st;
    size_t row = (size_t)o.shape[1] * bp_dtype_info(o.dtype)->size;
    cudaStream_t q = (cudaStream_t)bp_cuda_stream(s->be);
    CUDA_TRY(cudaMemcpyAsync(out, (const char *)o.dev + (size_t)pos * row,
                             (size_t)p->rows * row, cudaMemcpyDeviceToHost, q),
             BP_EINTERNAL);
    CUDA_TRY(cudaStreamSynchronize(q), BP_EINTERNAL);
    algo->known = true;
    snprintf(algo->source, sizeof algo->source, "fixed");
    snprintf(algo->text, sizeof algo->text, "%s",
             p->op == BP_INV_SUM ? "bpk_sum, sequential" : "one block per row");
    return BP_OK;
}

static void rows_close(bp_inv_engine_t *e)
{
    rows_t *s = S(e);
    if (s) {
        release(s);
        if (s->sops)
            s->sops->close(s->sops);
        bp_backend_close(s->be);
        free(s);
    }
    free(e);
}

bp_status bp_inv_engine_cuda_rows(int gpu, bp_inv_engine_t **out, bp_error_t *err)
{
    *out = NULL;
    bp_inv_engine_t *e = calloc(1, sizeof *e);
    rows_t *s = calloc(1, sizeof *s);
    if (!e || !s) {
        free(e);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    snprintf(e->name, sizeof e->name, "cuda");
    e->state = s;
    e->setup = setup;
    e->run = run;
    e->close = rows_close;
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.gpu = gpu;
    bp_status st = bp_backend_open("cuda", &o, &s->be, err);
    if (!st)
        st = bp_sops_cuda_open(s->be, BP_STACK_GEMM_PEDANTIC, &s->sops, err);
    if (st) {
        rows_close(e);
        return st;
    }
    *out = e;
    return BP_OK;
}
