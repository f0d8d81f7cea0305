/* The oracle's result of the probed rows (inv_engine.h): the problem's op
 * through the oracle backend's op table on the probed rows alone, the
 * exact value rounded once to the result dtype (oracle_rows.c; the fixed
 * formulations' roundings do not enter, the oracle ignores formulations):
 *   matmul, sum  as probes compute them
 *   mean         sum(x) / h
 *   rms_norm     w * x / sqrt(sum(x^2) / h + eps)     (eps = 1e-6 as a float)
 *   softmax      exp(x - max) / sum(exp(x - max))
 *   log_softmax  (x - max) - log(sum(exp(x - max)))    (fp32)
 *   attention    sdpa of the one query per head, [heads, 1, d] against the
 *                keys and values as [heads, L, d]: softmax(q . k_j * scale)
 *                . v, scale 1/sqrt(d) in double (sdpa's default, as
 *                PyTorch computes it)
 * The axis does not enter: every configuration computes one function. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "inv_engine.h"
#include "op.h"

/* Host tensor b: [rows, cols] of dt from the counter generator's stream. */
static bp_status input(bp_buf_t *b, bp_dtype_t dt, int64_t rows, int64_t cols,
                       uint64_t seed, uint64_t stream, bp_error_t *err)
{
    int64_t sh[2] = {rows, cols};
    bp_status st = bp_buf_alloc(b, dt, 2, sh, err);
    if (!st)
        bp_inv_fill(dt, b->data, 0, rows, cols, seed, stream);
    return st;
}

/* Keys or values [L, heads, d] from stream, as sdpa reads them: [heads, L,
 * d]. */
static bp_status heads_first(bp_buf_t *b, const bp_inv_problem_t *p, uint64_t stream,
                             bp_error_t *err)
{
    int64_t L = p->k, H = p->heads, d = p->n, sh[3] = {H, L, d};
    bp_buf_t t = {0};
    bp_status st = input(&t, p->dtype, L, H * d, p->seed, stream, err);
    if (!st)
        st = bp_buf_alloc(b, p->dtype, 3, sh, err);
    size_t es = bp_dtype_info(p->dtype)->size, row = (size_t)d * es;
    for (int64_t j = 0; !st && j < L; j++)
        for (int64_t h = 0; h < H; h++)
            memcpy((char *)b->data + (size_t)(h * L + j) * row,
                   (const char *)t.data + (size_t)(j * H + h) * row, row);
    bp_buf_free(&t);
    return st;
}

bp_status bp_inv_oracle(const bp_inv_problem_t *p, int threads, void *out,
                        bp_error_t *err)
{
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.threads = threads;
    bp_backend_t *be = NULL;
    bp_status st = bp_backend_open("oracle", &o, &be, err);
    if (st)
        return st;
    bool mm = p->op == BP_OP_MATMUL, attn = p->op == BP_OP_SDPA;
    bp_buf_t a = {0}, b = {0}, k = {0}, v = {0}, c = {0};
    int64_t rows = attn ? 1 : p->rows;
    bp_op_t op = bp_inv_table_op(p);
    bp_exec_t x = {.op = &op, .a = &a, .out = &c};
    const bp_buf_t *ins[3] = {&a, &k, &v};
    st = input(&a, p->dtype, rows, mm ? p->k : attn ? p->heads * p->n : p->n, p->seed,
               BP_INV_STREAM_PROBE, err);
    if (!st && mm) {
        st = input(&b, p->dtype, p->k, p->n, p->seed, BP_INV_STREAM_B, err);
        x.b = &b;
    } else if (!st && p->op == BP_OP_RMS_NORM) {
        st = input(&b, p->dtype, 1, p->n, p->seed, BP_INV_STREAM_W, err);
        x.b = &b;
    } else if (!st && attn) {
        a.ndim = 3; /* q [heads, 1, d] */
        a.shape[0] = p->heads;
        a.shape[1] = 1;
        a.shape[2] = p->n;
        if (!(st = heads_first(&k, p, BP_INV_STREAM_B, err)))
            st = heads_first(&v, p, BP_INV_STREAM_W, err);
        op.ninputs = 3;
        x.a = NULL;
        x.inputs = ins;
        x.ninputs = 3;
    }
    int64_t sc[3] = {attn ? p->heads : p->rows, attn ? 1 : bp_inv_result_cols(p), p->n};
    bool one = p->op == BP_OP_SUM || p->op == BP_OP_MEAN;
    if (!st)
        st = bp_buf_shape(&c, bp_inv_result_dtype(p), attn ? 3 : one ? 1 : 2, sc, err);
    if (!st) {
        c.data = out;
        st = bp_backend_exec(be, &x, err);
    }
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&k);
    bp_buf_free(&v);
    bp_backend_close(be);
    return st;
}
