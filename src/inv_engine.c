/* Invariance problems, their inputs, the engine registry and the oracle's
 * result (inv_engine.h). */
#include "inv_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "config.h"
#include "op.h"
#include "rng.h"

static const char *const op_names[BP_INV_NOPS] = {"matmul"};

const char *bp_inv_op_name(bp_inv_op_t op)
{
    return (unsigned)op < BP_INV_NOPS ? op_names[op] : "?";
}

const char *bp_inv_dtype_name(const bp_inv_problem_t *p)
{
    return p->tf32 ? "tf32" : bp_dtype_name(p->dtype);
}

size_t bp_inv_result_elems(const bp_inv_problem_t *p)
{
    return (size_t)p->rows * (size_t)p->n;
}

void bp_inv_shape_format(const bp_inv_problem_t *p, char *out, size_t n)
{
    snprintf(out, n, "[M, %lld] x [%lld, %lld]", (long long)p->k,
             (long long)p->k, (long long)p->n);
}

void bp_inv_fill(bp_dtype_t dt, void *out, int64_t row0, int64_t nrows,
                 int64_t cols, uint64_t seed, uint64_t stream)
{
    size_t n = (size_t)nrows * (size_t)cols;
    uint64_t first = (uint64_t)row0 * (uint64_t)cols;
    for (size_t i = 0; i < n; i++) {
        float v = bp_rng_uniform(seed, stream, first + i, -1.0f, 1.0f);
        uint64_t bits = dt == BP_F32    ? bp_f32_bits(v)
                        : dt == BP_BF16 ? bp_f32_to_bf16(v)
                        : dt == BP_F16  ? bp_f32_to_f16(v)
                                        : bp_dtype_bits_from_double(dt, v);
        bp_dtype_store_bits(dt, out, i, bits);
    }
}

static const char *const engine_names[] = {
    "cpu",
#ifdef BP_HAVE_CUDA
    "cublas", "cublas-pedantic", "cublaslt",
#endif
    NULL};

const char *const *bp_inv_engine_names(void)
{
    return engine_names;
}

bool bp_inv_engine_is_cuda(const char *name)
{
    return strcmp(name, "cublas") == 0 || strcmp(name, "cublas-pedantic") == 0 ||
           strcmp(name, "cublaslt") == 0;
}

bp_status bp_inv_engine_open(const char *name, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err)
{
    *out = NULL;
    if (strcmp(name, "cpu") == 0)
        return bp_inv_engine_cpu(out, err);
    if (bp_inv_engine_is_cuda(name)) {
#ifdef BP_HAVE_CUDA
        return bp_inv_engine_cuda(name, gpu, out, err);
#else
        (void)gpu;
        return bp_error_set(err, BP_EUNAVAIL, "%s: bitprobe was built without CUDA",
                            name);
#endif
    }
    return bp_error_set(err, BP_EINPUT,
                        "unknown engine '%s' (cpu, cublas, cublas-pedantic, cublaslt)",
                        name);
}

void bp_inv_engine_close(bp_inv_engine_t *e)
{
    if (e && e->close)
        e->close(e);
}

/* The oracle backend's matmul (its op table entry) on the probed rows:
 * exact dot products rounded once (mpfr_dot). */
bp_status bp_inv_oracle(const bp_inv_problem_t *p, int threads, void *out,
                        bp_error_t *err)
{
    if (p->op != BP_INV_MATMUL)
        return bp_error_set(err, BP_EINTERNAL, "no oracle for %s",
                            bp_inv_op_name(p->op));
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.threads = threads;
    bp_backend_t *be = NULL;
    bp_status st = bp_backend_open("oracle", &o, &be, err);
    if (st)
        return st;
    bp_buf_t a = {0}, b = {0}, c = {0};
    int64_t sa[2] = {p->rows, p->k}, sb[2] = {p->k, p->n}, sc[2] = {p->rows, p->n};
    if (!(st = bp_buf_alloc(&a, p->dtype, 2, sa, err)) &&
        !(st = bp_buf_alloc(&b, p->dtype, 2, sb, err)) &&
        !(st = bp_buf_shape(&c, p->dtype, 2, sc, err))) {
        bp_inv_fill(p->dtype, a.data, 0, p->rows, p->k, p->seed, BP_INV_STREAM_PROBE);
        bp_inv_fill(p->dtype, b.data, 0, p->k, p->n, p->seed, BP_INV_STREAM_B);
        c.data = out;
        bp_op_t op = {.kind = BP_OP_MATMUL};
        bp_exec_t x = {.op = &op, .a = &a, .b = &b, .out = &c};
        st = be->op[BP_OP_MATMUL](be, &x, err);
    }
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_backend_close(be);
    return st;
}
