/* Invariance problems, their inputs and the engine registry
 * (inv_engine.h). */
#include "inv_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "rng.h"

static const bp_op_kind_t inv_ops[] = {BP_OP_MATMUL, BP_OP_SUM, BP_OP_MEAN, BP_OP_RMS_NORM,
                                       BP_OP_SOFTMAX, BP_OP_LOG_SOFTMAX, BP_OP_SDPA};
static const char *const combine_names[BP_INV_NCOMBINE] = {"seq", "tree", "ring",
                                                           "rank"};

const char *bp_inv_op_name(bp_op_kind_t op)
{
    return op == BP_OP_SDPA ? "attention" : bp_op_name(op);
}

bool bp_inv_op_parse(const char *s, bp_op_kind_t *out)
{
    for (size_t i = 0; i < sizeof inv_ops / sizeof inv_ops[0]; i++)
        if (strcmp(s, bp_inv_op_name(inv_ops[i])) == 0) {
            *out = inv_ops[i];
            return true;
        }
    return false;
}

const char *bp_inv_combine_name(bp_inv_combine_t c)
{
    return (unsigned)c < BP_INV_NCOMBINE ? combine_names[c] : "?";
}

bool bp_inv_combine_parse(const char *s, bp_inv_combine_t *out)
{
    for (int i = 0; i < BP_INV_NCOMBINE; i++)
        if (strcmp(s, combine_names[i]) == 0) {
            *out = (bp_inv_combine_t)i;
            return true;
        }
    return false;
}

const char *bp_inv_dtype_name(const bp_inv_problem_t *p)
{
    return p->tf32 ? "tf32" : bp_dtype_name(p->dtype);
}

bp_dtype_t bp_inv_result_dtype(const bp_inv_problem_t *p)
{
    return p->op == BP_OP_LOG_SOFTMAX ? BP_F32 : p->dtype;
}

int64_t bp_inv_result_rows(const bp_inv_problem_t *p)
{
    return p->op == BP_OP_SDPA ? p->heads : p->rows;
}

int64_t bp_inv_result_cols(const bp_inv_problem_t *p)
{
    return p->op == BP_OP_SUM || p->op == BP_OP_MEAN ? 1 : p->n;
}

size_t bp_inv_result_elems(const bp_inv_problem_t *p)
{
    return (size_t)bp_inv_result_rows(p) * (size_t)bp_inv_result_cols(p);
}

int64_t bp_inv_reduction_len(const bp_inv_problem_t *p)
{
    return p->op == BP_OP_MATMUL || p->op == BP_OP_SDPA ? p->k : p->n;
}

void bp_inv_dims_format(const bp_inv_problem_t *p, char *out, size_t n)
{
    if (p->op == BP_OP_MATMUL)
        snprintf(out, n, "%lldx%lld", (long long)p->k, (long long)p->n);
    else if (p->op == BP_OP_SDPA)
        snprintf(out, n, "%lldx%lldx%lld", (long long)p->heads, (long long)p->k,
                 (long long)p->n);
    else
        snprintf(out, n, "H %lld", (long long)p->n);
}

void bp_inv_shape_format(const bp_inv_problem_t *p, char *out, size_t n)
{
    if (p->op == BP_OP_MATMUL)
        snprintf(out, n, "[M, %lld] x [%lld, %lld]", (long long)p->k, (long long)p->k,
                 (long long)p->n);
    else if (p->op == BP_OP_SDPA)
        snprintf(out, n, "%lld heads, %lld keys, head dim %lld", (long long)p->heads,
                 (long long)p->k, (long long)p->n);
    else
        snprintf(out, n, "[M, %lld]", (long long)p->n);
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
    "cuda", "cublas", "cublas-pedantic", "cublaslt",
#endif
    NULL};

const char *const *bp_inv_engine_names(void)
{
    return engine_names;
}

bool bp_inv_engine_is_cuda(const char *name)
{
    return strcmp(name, "cuda") == 0 || strcmp(name, "cublas") == 0 ||
           strcmp(name, "cublas-pedantic") == 0 || strcmp(name, "cublaslt") == 0;
}

bp_status bp_inv_engine_open(const char *name, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err)
{
    *out = NULL;
    if (strcmp(name, "cpu") == 0)
        return bp_inv_engine_cpu(out, err);
    if (bp_inv_engine_is_cuda(name)) {
#ifdef BP_HAVE_CUDA
        if (strcmp(name, "cuda") == 0)
            return bp_inv_engine_cuda_rows(gpu, out, err);
        return bp_inv_engine_cuda(name, gpu, out, err);
#else
        (void)gpu;
        return bp_error_set(err, BP_EUNAVAIL, "%s: bitprobe was built without CUDA",
                            name);
#endif
    }
    return bp_error_set(err, BP_EINPUT,
                        "unknown engine '%s' (cpu, cuda, cublas, cublas-pedantic, "
                        "cublaslt)",
                        name);
}

void bp_inv_engine_close(bp_inv_engine_t *e)
{
    if (e && e->close)
        e->close(e);
}

bool bp_inv_engine_supports(const char *name, bp_op_kind_t op, bp_inv_axis_t axis)
{
    bool mm = op == BP_OP_MATMUL;
    if (strcmp(name, "cpu") == 0)
        return !(op == BP_OP_SDPA && axis == BP_INV_BATCH) &&
               !(axis == BP_INV_RANKS && !mm);
    if (strcmp(name, "cuda") == 0)
        return axis == BP_INV_BATCH &&
               (op == BP_OP_SUM || op == BP_OP_RMS_NORM || op == BP_OP_LOG_SOFTMAX);
    if (strcmp(name, "cublaslt") == 0)
        return mm;
    return mm && axis != BP_INV_SPLIT; /* cublas, cublas-pedantic */
}

bp_op_t bp_inv_table_op(const bp_inv_problem_t *p)
{
    bp_op_t op = {.kind = p->op, .a = {.kind = BP_ARG_BUF}};
    if (p->op == BP_OP_MATMUL || p->op == BP_OP_RMS_NORM)
        op.b.kind = BP_ARG_BUF;
    if (p->op != BP_OP_MATMUL && p->op != BP_OP_SDPA) {
        op.has_axis = true;
        op.axis = -1;
    }
    if (p->op == BP_OP_RMS_NORM || p->op == BP_OP_SOFTMAX || p->op == BP_OP_LOG_SOFTMAX)
        op.form = BP_FORM_FIXED;
    if (p->op == BP_OP_RMS_NORM) {
        op.has_eps = true;
        op.eps = BP_INV_RMS_EPS;
    }
    if (p->op == BP_OP_LOG_SOFTMAX) {
        op.has_dtype = true;
        op.dtype = BP_F32;
    }
    return op;
}
