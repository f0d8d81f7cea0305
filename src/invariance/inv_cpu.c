/* The CPU engine.
 *
 * Batch axis: the whole batch through the CPU backend's op table, so that
 * the sweep tests what bitprobe computes (bp_inv_table_op): matmul and sum
 * as `bitprobe run --device cpu` does, rms_norm, softmax and log_softmax
 * in their fixed formulation (the layer stack's), mean as invariance
 * defines it (inv_formula.h: the sum left to right in fp32, times 1/H in
 * float: sum, mul and cast).  Each gives every output its own fixed-order
 * accumulation whatever the other rows: they should be invariant, and a
 * sweep is the evidence.
 * Split axis: the formulations with the reduction cut in S parts (the
 * probed rows only: the formulation is row-local by construction).
 * Ranks axis (matmul): each rank's GEMM [M, K/T] x [K/T, N] through the
 * op table on its shard, rounded to the dtype as a rank's result is, then
 * the all-reduce's order (inv_formula.h) over the flattened [M, N]. */
#include "inv_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "inv_formula.h"
#include "op.h"

typedef struct {
    bp_backend_t *be;
    bp_inv_problem_t p;
    int64_t rows_cap;    /* rows of the batch buffer a */
    bp_buf_t a, probe, b, c, w; /* a: [rows_cap, cols] fillers, probed rows in place */
    float *pf, *bf, *wf; /* probed rows, b (or keys), w (or values) widened */
    int64_t at;          /* where the probed rows sit in a now, or -1 */
} cpu_t;

static cpu_t *S(bp_inv_engine_t *e)
{
    return (cpu_t *)e->state;
}

static size_t esize(const cpu_t *s)
{
    return bp_dtype_info(s->p.dtype)->size;
}

/* Columns of one batch row: K for matmul, H for the row ops. */
static int64_t in_cols(const bp_inv_problem_t *p)
{
    return p->op == BP_OP_MATMUL ? p->k : p->op == BP_OP_SDPA ? p->heads * p->n
                                                                     : p->n;
}

static void free_bufs(cpu_t *s)
{
    bp_buf_free(&s->a);
    bp_buf_free(&s->probe);
    bp_buf_free(&s->b);
    bp_buf_free(&s->c);
    bp_buf_free(&s->w);
    free(s->pf);
    free(s->bf);
    free(s->wf);
    s->pf = s->bf = s->wf = NULL;
}

static float *widened(const bp_buf_t *b)
{
    float *f = malloc((b->numel ? b->numel : 1) * sizeof *f);
    if (f)
        bp_inv_widen(b->dtype, b->data, b->numel, f);
    return f;
}

static bp_status refuse(const bp_inv_problem_t *p, bp_error_t *err)
{
    if (p->tf32)
        return bp_error_set(err, BP_EUNAVAIL, "cpu: no TF32 (fp32 matmuls are "
                            "IEEE fp32 on the CPU)");
    if (p->axis == BP_INV_RANKS && p->op != BP_OP_MATMUL)
        return bp_error_set(err, BP_EUNAVAIL, "cpu: the ranks axis splits a matmul's "
                            "K; %s has none", bp_inv_op_name(p->op));
    if (p->axis == BP_INV_BATCH && p->op == BP_OP_SDPA)
        return bp_error_set(err, BP_EUNAVAIL, "cpu: attention sweeps the split "
                            "axis (--split): decoding queries do not share a batch "
                            "reduction");
    return BP_OK;
}

static bp_status setup(bp_inv_engine_t *e, const bp_inv_problem_t *p, bp_error_t *err)
{
    cpu_t *s = S(e);
    free_bufs(s);
    bp_status st = refuse(p, err);
    if (st)
        return st;
    s->p = *p;
    s->at = -1;
    s->rows_cap = p->axis == BP_INV_BATCH ? p->mmax : p->batch;
    int64_t cols = in_cols(p);
    int64_t sa[2] = {s->rows_cap, cols}, sp[2] = {p->op == BP_OP_SDPA ? 1 : p->rows, cols};
    if ((st = bp_buf_alloc(&s->a, p->dtype, 2, sa, err)) ||
        (st = bp_buf_alloc(&s->probe, p->dtype, 2, sp, err)))
        return st;
    bp_inv_fill(p->dtype, s->a.data, 0, s->rows_cap, cols, p->seed, BP_INV_STREAM_FILL);
    bp_inv_fill(p->dtype, s->probe.data, 0, sp[0], cols, p->seed, BP_INV_STREAM_PROBE);
    if (p->op == BP_OP_MATMUL || p->op == BP_OP_SDPA) {
        int64_t sb[2] = {p->k, p->op == BP_OP_MATMUL ? p->n : p->heads * p->n};
        if ((st = bp_buf_alloc(&s->b, p->dtype, 2, sb, err)))
            return st;
        bp_inv_fill(p->dtype, s->b.data, 0, sb[0], sb[1], p->seed, BP_INV_STREAM_B);
    }
    if (p->op == BP_OP_RMS_NORM || p->op == BP_OP_SDPA) {
        int64_t sw[2] = {p->op == BP_OP_SDPA ? p->k : 1,
                         p->op == BP_OP_SDPA ? p->heads * p->n : p->n};
        if ((st = bp_buf_alloc(&s->w, p->dtype, 2, sw, err)))
            return st;
        bp_inv_fill(p->dtype, s->w.data, 0, sw[0], sw[1], p->seed, BP_INV_STREAM_W);
    }
    if (!(s->pf = widened(&s->probe)) || (s->b.data && !(s->bf = widened(&s->b))) ||
        (s->w.data && !(s->wf = widened(&s->w))))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    const char *how;
    if (p->axis == BP_INV_SPLIT)
        how = p->op == BP_OP_SDPA
                  ? "flash-decoding: the keys in S chunks, partial softmax rescaled "
                    "and combined in chunk order (SLEEF expf)"
                  : p->op == BP_OP_MATMUL
                        ? (p->output_partials ? "split-K: S parts, each rounded to the "
                                                "dtype, combined"
                                              : "split-K: S fp32 parts combined")
                        : "the row's reduction in S fp32 parts, combined";
    else if (p->axis == BP_INV_RANKS)
        how = "T ranks each own K/T of the matmul (the CPU backend's matmul on its "
              "shard, result in the dtype), all-reduced";
    else
        how = p->op == BP_OP_MATMUL || p->op == BP_OP_SUM
                  ? "the CPU backend's op (bitprobe run --device cpu): one fixed-order "
                    "accumulation per output"
              : p->op == BP_OP_RMS_NORM || p->op == BP_OP_LOG_SOFTMAX
                  ? "the layer stack's CPU op: one fixed-order accumulation per row"
                  : "the invariance formulation: one fixed-order accumulation per row";
    snprintf(e->desc, sizeof e->desc, "%s%s%s", how,
             p->axis != BP_INV_BATCH ? ", order " : "",
             p->axis != BP_INV_BATCH ? bp_inv_combine_name(p->combine) : "");
    return BP_OK;
}

/* Rows [pos, pos + R) of a hold the probed rows; the rows they replaced
 * last time are fillers again. */
static void place(cpu_t *s, int64_t pos)
{
    int64_t cols = in_cols(&s->p);
    size_t row = (size_t)cols * esize(s), r = (size_t)s->p.rows;
    if (s->at == pos)
        return;
    if (s->at >= 0)
        bp_inv_fill(s->p.dtype, (char *)s->a.data + (size_t)s->at * row, s->at,
                    s->p.rows, cols, s->p.seed, BP_INV_STREAM_FILL);
    memcpy((char *)s->a.data + (size_t)pos * row, s->probe.data, r * row);
    s->at = pos;
}

static bp_buf_t view(const bp_buf_t *b, int64_t rows)
{
    bp_buf_t v = *b;
    v.shape[0] = rows;
    v.numel = (size_t)rows * (size_t)v.shape[1];
    return v;
}

/* mean over the rows of a into c ([m, 1] of the dtype): the sum left to
 * right in fp32 (sum, sequential, dtype fp32), times 1/H taken in float
 * (mul), rounded to the dtype (cast). */
static bp_status mean_rows(cpu_t *s, const bp_buf_t *a, bp_buf_t *c, bp_error_t *err)
{
    bp_buf_t f = {0};
    int64_t sh[2] = {a->shape[0], 1};
    bp_status st = bp_buf_alloc(&f, BP_F32, 2, sh, err);
    if (st)
        return st;
    bp_op_t sum = {.kind = BP_OP_SUM, .a = {.kind = BP_ARG_BUF}, .form = BP_FORM_SEQUENTIAL,
                   .has_axis = true, .axis = -1, .keepdim = true, .has_dtype = true,
                   .dtype = BP_F32};
    bp_op_t mul = {.kind = BP_OP_MUL, .a = {.kind = BP_ARG_BUF},
                   .b = {.kind = BP_ARG_SCALAR, .value = 1.0f / (float)s->p.n}};
    bp_op_t cast = {.kind = BP_OP_CAST, .a = {.kind = BP_ARG_BUF}, .has_dtype = true,
                    .dtype = c->dtype};
    bp_exec_t xs = {.op = &sum, .a = a, .out = &f}, xm = {.op = &mul, .a = &f, .out = &f},
              xc = {.op = &cast, .a = &f, .out = c};
    if (!(st = bp_backend_exec(s->be, &xs, err)) && !(st = bp_backend_exec(s->be, &xm, err)))
        st = bp_backend_exec(s->be, &xc, err);
    bp_buf_free(&f);
    return st;
}

/* The batch of m rows through the CPU backend's op table; the probed rows'
 * result into out. */
static bp_status batch(cpu_t *s, int64_t m, int64_t pos, void *out, bp_error_t *err)
{
    const bp_inv_problem_t *p = &s->p;
    bp_dtype_t rdt = bp_inv_result_dtype(p);
    int64_t rc = bp_inv_result_cols(p);
    int64_t sc[2] = {m, rc};
    bp_buf_t c = {0};
    bp_status st = bp_buf_alloc(&c, rdt, p->op == BP_OP_SUM ? 1 : 2, sc, err);
    if (st)
        return st;
    bp_buf_t a = view(&s->a, m), w = s->w;
    if (w.data) { /* rms_norm's weight as [H] */
        w.ndim = 1;
        w.shape[0] = p->n;
    }
    if (p->op == BP_OP_MEAN) {
        st = mean_rows(s, &a, &c, err);
    } else {
        bp_op_t op = bp_inv_table_op(p);
        bp_exec_t x = {.op = &op, .a = &a,
                       .b = p->op == BP_OP_MATMUL ? &s->b : w.data ? &w : NULL, .out = &c};
        st = bp_backend_exec(s->be, &x, err);
    }
    if (!st) {
        size_t rb = (size_t)rc * bp_dtype_info(rdt)->size;
        memcpy(out, (char *)c.data + (size_t)pos * rb, (size_t)p->rows * rb);
    }
    bp_buf_free(&c);
    return st;
}

/* The split formulations on the probed rows. */
static bp_status split(cpu_t *s, int sp, void *out, bp_error_t *err)
{
    const bp_inv_problem_t *p = &s->p;
    bp_dtype_t rdt = bp_inv_result_dtype(p);
    size_t n = bp_inv_result_elems(p);
    float *y = malloc(n * sizeof *y);
    if (!y)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    int64_t rc = bp_inv_result_cols(p);
    if (p->op == BP_OP_MATMUL) {
        for (int64_t r = 0; r < p->rows; r++)
            bp_inv_matmul_split(s->pf + r * p->k, s->bf, p->k, p->n, sp, p->combine,
                                p->output_partials ? p->dtype : BP_F32, p->dtype,
                                y + r * p->n);
    } else if (p->op == BP_OP_SDPA) {
        int64_t hd = p->n, stride = p->heads * p->n;
        for (int64_t h = 0; h < p->heads; h++)
            bp_inv_attention_head(s->pf + h * hd, s->bf + h * hd, s->wf + h * hd, stride,
                                  p->k, hd, sp, p->dtype, y + h * hd);
    } else {
        for (int64_t r = 0; r < p->rows; r++)
            bp_inv_row(p->op, s->pf + r * p->n, s->wf, p->n, sp, p->combine, rdt,
                       y + r * rc);
    }
    bp_inv_narrow(rdt, y, n, out);
    free(y);
    return BP_OK;
}

/* T ranks: each rank's GEMM on its K shard through the op table, in the
 * dtype; the probed rows all-reduced over the flattened batch. */
static bp_status ranks(cpu_t *s, int t, int64_t pos, void *out, bp_error_t *err)
{
    const bp_inv_problem_t *p = &s->p;
    int64_t m = p->batch, N = p->n;
    size_t es = esize(s), R = (size_t)p->rows;
    float *part = malloc((size_t)t * R * (size_t)N * sizeof *part);
    if (!part)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = BP_OK;
    for (int r = 0; !st && r < t; r++) {
        int64_t k0, k1;
        bp_inv_part(p->k, t, r, &k0, &k1);
        int64_t kk = k1 - k0;
        bp_buf_t a = {0}, b = {0}, c = {0};
        int64_t sa[2] = {m, kk}, sb[2] = {kk, N}, sc[2] = {m, N};
        if (!(st = bp_buf_alloc(&a, p->dtype, 2, sa, err)) &&
            !(st = bp_buf_alloc(&b, p->dtype, 2, sb, err)) &&
            !(st = bp_buf_alloc(&c, p->dtype, 2, sc, err))) {
            for (int64_t i = 0; i < m; i++)
                memcpy((char *)a.data + (size_t)(i * kk) * es,
                       (char *)s->a.data + (size_t)(i * p->k + k0) * es, (size_t)kk * es);
            memcpy(b.data, (char *)s->b.data + (size_t)(k0 * N) * es, (size_t)(kk * N) * es);
            bp_op_t op = {.kind = BP_OP_MATMUL};
            bp_exec_t x = {.op = &op, .a = &a, .b = &b, .out = &c};
            if (!(st = bp_backend_exec(s->be, &x, err)))
                bp_inv_widen(p->dtype, (char *)c.data + (size_t)(pos * N) * es,
                             R * (size_t)N, part + (size_t)r * R * (size_t)N);
        }
        bp_buf_free(&a);
        bp_buf_free(&b);
        bp_buf_free(&c);
    }
    if (!st)
        bp_inv_allreduce_rows(part, t, R * (size_t)N, (size_t)pos * (size_t)N,
                              (size_t)(m * N), p->combine, p->dtype, out);
    free(part);
    return st;
}

static bp_status run(bp_inv_engine_t *e, int64_t v, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err)
{
    cpu_t *s = S(e);
    int64_t m = s->p.axis == BP_INV_BATCH ? v : s->p.batch;
    if (s->p.axis != BP_INV_BATCH && v > 256)
        return bp_error_set(err, BP_EUNAVAIL, "%lld parts: at most 256", (long long)v);
    if (s->p.axis != BP_INV_BATCH && v > bp_inv_reduction_len(&s->p))
        return bp_error_set(err, BP_EUNAVAIL, "%lld parts of a reduction of %lld",
                            (long long)v, (long long)bp_inv_reduction_len(&s->p));
    if (v < 1 || m > s->rows_cap || pos < 0 || pos + s->p.rows > m)
        return bp_error_set(err, BP_EINTERNAL, "cpu: configuration %lld with rows at "
                            "%lld outside the batch", (long long)v, (long long)pos);
    place(s, pos);
    algo->known = true;
    snprintf(algo->source, sizeof algo->source, "fixed");
    switch (s->p.axis) {
    case BP_INV_SPLIT:
        snprintf(algo->text, sizeof algo->text, "%lld part%s, %s", (long long)v,
                 v == 1 ? "" : "s", bp_inv_combine_name(s->p.combine));
        return split(s, (int)v, out, err);
    case BP_INV_RANKS:
        snprintf(algo->text, sizeof algo->text, "%lld ranks, %s all-reduce",
                 (long long)v, bp_inv_combine_name(s->p.combine));
        return ranks(s, (int)v, pos, out, err);
    default:
        snprintf(algo->text, sizeof algo->text, "fixed order");
        return batch(s, m, pos, out, err);
    }
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
    snprintf(e->name, sizeof e->name, "cpu");
    e->state = s;
    e->setup = setup;
    e->run = run;
    e->close = cpu_close;
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    bp_status st = bp_backend_open("cpu", &o, &s->be, err);
    if (st) {
        cpu_close(e);
        return st;
    }
    *out = e;
    return BP_OK;
}
