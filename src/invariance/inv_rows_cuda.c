/* The "cuda" invariance engine: bitprobe's CUDA implementations of the row
 * ops, over the whole batch on the GPU, batch axis, through the CUDA
 * backend's op table (bp_inv_table_op): sum as probes compute it, rms_norm
 * and log_softmax in their fixed formulation (one block per row, a fixed
 * order: kernels/bpk_rows.cuh).  mean, softmax and attention are not swept
 * here: the engine says so.  Inputs come from the op table's uniform (the
 * counter generator's kernel, bit-identical to the host's) into the
 * backend's device memory; a pristine copy of the filler rows restores
 * those the probed rows replaced, and only the probed rows are copied
 * back. */
#include "inv_engine.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_cuda.h"
#include "cuda_check.h"
#include "op.h"

typedef struct {
    bp_backend_t *be;
    bp_inv_problem_t p;
    bp_buf_t fill, a, probe, w, out; /* device copies (the backend's memory) */
    int64_t at;
} rows_t;

static rows_t *S(bp_inv_engine_t *e)
{
    return (rows_t *)e->state;
}

static void release(rows_t *s)
{
    bp_buf_t *b[] = {&s->fill, &s->a, &s->probe, &s->w, &s->out};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        if (b[i]->dev)
            s->be->dev_free(s->be, b[i]);
        memset(b[i], 0, sizeof *b[i]);
    }
}

/* b: [rows, cols] of dt on the device. */
static bp_status alloc(rows_t *s, bp_buf_t *b, bp_dtype_t dt, int64_t rows, int64_t cols,
                       bp_error_t *err)
{
    int64_t sh[2] = {rows, cols};
    bp_status st = bp_buf_shape(b, dt, 2, sh, err);
    return st ? st : s->be->dev_alloc(s->be, b, err);
}

/* b's values from the counter generator's stream (the op table's uniform). */
static bp_status gen(rows_t *s, bp_buf_t *b, uint64_t stream, bp_error_t *err)
{
    bp_op_t op = {.kind = BP_OP_UNIFORM, .seed = s->p.seed, .stream = stream, .low = -1.0,
                  .high = 1.0};
    bp_exec_t x = {.op = &op, .out = b};
    return bp_backend_exec(s->be, &x, err);
}

/* n bytes from src to dst on the device, synchronously. */
static bp_status d2d(rows_t *s, void *dst, const void *src, size_t n, bp_error_t *err)
{
    cudaStream_t q = (cudaStream_t)bp_cuda_stream(s->be);
    CUDA_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, q), BP_EINTERNAL);
    CUDA_TRY(cudaStreamSynchronize(q), BP_EINTERNAL);
    return BP_OK;
}

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    rows_t *s = S(e);
    release(s);
    if (p->op != BP_OP_SUM && p->op != BP_OP_RMS_NORM && p->op != BP_OP_LOG_SOFTMAX)
        return bp_error_set(err, BP_EUNAVAIL, "cuda: no CUDA %s in bitprobe yet "
                            "(the CPU engine has its formulation)", bp_inv_op_name(p->op));
    if (p->axis != BP_INV_BATCH)
        return bp_error_set(err, BP_EUNAVAIL, "cuda: the batch axis only (the "
                            "split formulations run on the CPU engine)");
    s->p = *p;
    s->at = -1;
    bp_status st;
    if ((st = bp_cuda_use(s->be, err)) ||
        (st = alloc(s, &s->fill, p->dtype, p->mmax, p->n, err)) ||
        (st = alloc(s, &s->a, p->dtype, p->mmax, p->n, err)) ||
        (st = alloc(s, &s->probe, p->dtype, p->rows, p->n, err)) ||
        (st = alloc(s, &s->w, p->dtype, 1, p->n, err)) ||
        (st = alloc(s, &s->out, bp_inv_result_dtype(p), p->mmax,
                    p->op == BP_OP_SUM ? 1 : p->n, err)) ||
        (st = gen(s, &s->fill, BP_INV_STREAM_FILL, err)) ||
        (st = gen(s, &s->probe, BP_INV_STREAM_PROBE, err)) ||
        (st = gen(s, &s->w, BP_INV_STREAM_W, err)) ||
        (st = d2d(s, s->a.dev, s->fill.dev, bp_buf_nbytes(&s->fill), err)))
        return st;
    snprintf(e->desc, sizeof e->desc, "%s",
             p->op == BP_OP_SUM ? "the CUDA backend's sum (bpk_sum: one thread per "
                                  "output, fp32, sequential)"
                                : "the layer stack's CUDA op: one block per row, a "
                                  "fixed tree (bpk_rows.cuh)");
    return BP_OK;
}

/* Rows [pos, pos + R) of a hold the probed rows; the rows they replaced
 * last time are fillers again. */
static bp_status place(rows_t *s, int64_t pos, bp_error_t *err)
{
    if (s->at == pos)
        return BP_OK;
    size_t row = (size_t)s->p.n * bp_dtype_info(s->p.dtype)->size, R = (size_t)s->p.rows;
    bp_status st;
    if (s->at >= 0 && (st = d2d(s, (char *)s->a.dev + (size_t)s->at * row,
                                (const char *)s->fill.dev + (size_t)s->at * row, R * row, err)))
        return st;
    if ((st = d2d(s, (char *)s->a.dev + (size_t)pos * row, s->probe.dev, R * row, err)))
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
    bp_buf_t a = s->a, o = s->out, w = s->w;
    a.shape[0] = o.shape[0] = m;
    a.numel = (size_t)m * (size_t)a.shape[1];
    o.numel = (size_t)m * (size_t)o.shape[1];
    w.ndim = 1;
    w.shape[0] = p->n;
    bp_op_t op = bp_inv_table_op(p);
    bp_exec_t x = {.op = &op, .a = &a, .b = p->op == BP_OP_RMS_NORM ? &w : NULL, .out = &o};
    if ((st = bp_backend_exec(s->be, &x, err)))
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
             p->op == BP_OP_SUM ? "bpk_sum, sequential" : "one block per row");
    return BP_OK;
}

static void rows_close(bp_inv_engine_t *e)
{
    rows_t *s = S(e);
    if (s) {
        if (s->be)
            release(s);
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
    if (st) {
        rows_close(e);
        return st;
    }
    *out = e;
    return BP_OK;
}
