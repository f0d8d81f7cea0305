/* The CPU engine: the batch through the CPU backend's own matmul (its op
 * table entry), so that the sweep tests what `bitprobe run` computes.  That
 * matmul gives each output one accumulation in a fixed order (fmaf over k
 * ascending, from +0), whatever the other rows: it should be invariant, and
 * a sweep is the evidence. */
#include "inv_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "op.h"

typedef struct {
    bp_backend_t *be;
    bp_inv_problem_t p;
    bp_buf_t a, probe, b, c; /* a: [mmax, k] of fillers with the probed rows in place */
    int64_t at;              /* where the probed rows sit in a now, or -1 */
} cpu_t;

static cpu_t *S(bp_inv_engine_t *e)
{
    return (cpu_t *)e->state;
}

static size_t esize(const cpu_t *s)
{
    return bp_dtype_info(s->p.dtype)->size;
}

static void free_bufs(cpu_t *s)
{
    bp_buf_free(&s->a);
    bp_buf_free(&s->probe);
    bp_buf_free(&s->b);
    bp_buf_free(&s->c);
}

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    cpu_t *s = S(e);
    free_bufs(s);
    if (p->op != BP_INV_MATMUL)
        return bp_error_set(err, BP_EUNAVAIL, "cpu: no %s", bp_inv_op_name(p->op));
    if (p->tf32)
        return bp_error_set(err, BP_EUNAVAIL, "cpu: no TF32 (fp32 matmuls are "
                            "IEEE fp32 on the CPU)");
    s->p = *p;
    s->at = -1;
    int64_t sa[2] = {p->mmax, p->k}, sp[2] = {p->rows, p->k}, sb[2] = {p->k, p->n},
            sc[2] = {p->mmax, p->n};
    bp_status st;
    if ((st = bp_buf_alloc(&s->a, p->dtype, 2, sa, err)) ||
        (st = bp_buf_alloc(&s->probe, p->dtype, 2, sp, err)) ||
        (st = bp_buf_alloc(&s->b, p->dtype, 2, sb, err)) ||
        (st = bp_buf_alloc(&s->c, p->dtype, 2, sc, err)))
        return st;
    bp_inv_fill(p->dtype, s->a.data, 0, p->mmax, p->k, p->seed, BP_INV_STREAM_FILL);
    bp_inv_fill(p->dtype, s->probe.data, 0, p->rows, p->k, p->seed, BP_INV_STREAM_PROBE);
    bp_inv_fill(p->dtype, s->b.data, 0, p->k, p->n, p->seed, BP_INV_STREAM_B);
    snprintf(e->desc, sizeof e->desc,
             "the CPU backend's matmul (bitprobe run --device cpu): each output "
             "one %s accumulation, fmaf over k ascending from +0",
             p->dtype == BP_F64 ? "fp64" : "fp32");
    return BP_OK;
}

/* Rows [pos, pos + R) of a hold the probed rows; the rows they replaced
 * last time are fillers again. */
static void place(cpu_t *s, int64_t pos)
{
    size_t row = (size_t)s->p.k * esize(s), r = (size_t)s->p.rows;
    if (s->at == pos)
        return;
    if (s->at >= 0)
        bp_inv_fill(s->p.dtype, (char *)s->a.data + (size_t)s->at * row, s->at,
                    s->p.rows, s->p.k, s->p.seed, BP_INV_STREAM_FILL);
    memcpy((char *)s->a.data + (size_t)pos * row, s->probe.data, r * row);
    s->at = pos;
}

static bp_status run(bp_inv_engine_t *e, int64_t m, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err)
{
    cpu_t *s = S(e);
    if (m > s->p.mmax || pos < 0 || pos + s->p.rows > m)
        return bp_error_set(err, BP_EINTERNAL, "cpu: batch %lld with rows at %lld "
                            "outside [%lld rows]", (long long)m, (long long)pos,
                            (long long)s->p.mmax);
    place(s, pos);
    bp_buf_t a = s->a, c = s->c;
    a.shape[0] = m;
    a.numel = (size_t)m * (size_t)s->p.k;
    c.shape[0] = m;
    c.numel = (size_t)m * (size_t)s->p.n;
    bp_op_t op = {.kind = BP_OP_MATMUL};
    bp_exec_t x = {.op = &op, .a = &a, .b = &s->b, .out = &c};
    bp_status st = s->be->op[BP_OP_MATMUL](s->be, &x, err);
    if (st)
        return st;
    size_t row = (size_t)s->p.n * esize(s);
    memcpy(out, (char *)c.data + (size_t)pos * row, (size_t)s->p.rows * row);
    algo->known = true;
    snprintf(algo->source, sizeof algo->source, "fixed");
    snprintf(algo->text, sizeof algo->text, "fixed order: fmaf over k ascending");
    return BP_OK;
}

static void cpu_close(bp_inv_engine_t *e)
{
    cpu_t *s = S(e);
    if (s) {
        free_bufs(s);
        bp_backend_close(s->be);
        free(s);
    }
    free(e);
}

bp_status bp_inv_engine_cpu(bp_inv_engine_t **out, bp_error_t *err)
{
    *out = NULL;
    bp_inv_engine_t *e = calloc(1, sizeof *e);
    cpu_t *s = calloc(1, sizeof *s);
    if (!e || !s) {
        free(e);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    bp_status st = bp_backend_open("cpu", &o, &s->be, err);
    if (st) {
        free(e);
        free(s);
        return st;
    }
    snprintf(e->name, sizeof e->name, "cpu");
    e->state = s;
    e->setup = setup;
    e->run = run;
    e->close = cpu_close;
    *out = e;
    return BP_OK;
}
