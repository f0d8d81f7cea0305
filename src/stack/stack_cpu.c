/* The stack's device on the CPU (stack_ops.h): host memory, parameter
 * generation and the matmuls (the CPU's one GEMM, cpu_gemm.h); the other
 * ops run through the CPU backend's op table.  Values are widened to
 * float, computed, and rounded to the model dtype where PyTorch's eager op
 * would store its result. */
#include "stack_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "rng.h"

static bp_status oom(bp_error_t *err)
{
    return bp_error_set(err, BP_ENOMEM, "out of memory");
}

bp_status bp_stack_check_2d(const bp_buf_t *b, int64_t rows, int64_t cols,
                           bp_dtype_t dt, const char *what, bp_error_t *err)
{
    int64_t r = b->ndim == 2 ? b->shape[0] : b->ndim == 1 ? 1 : -1;
    int64_t c = b->ndim == 2 ? b->shape[1] : b->ndim == 1 ? b->shape[0] : -1;
    if (r != rows || c != cols || b->dtype != dt)
        return bp_error_set(err, BP_EINTERNAL,
                            "%s: %s [%lld, %lld] where %s [%lld, %lld] is "
                            "needed", what, bp_dtype_name(b->dtype),
                            (long long)r, (long long)c, bp_dtype_name(dt),
                            (long long)rows, (long long)cols);
    return BP_OK;
}

/* A tensor widened to float (rows x cols, row stride ld of the source). */
static float *widen(const bp_buf_t *b, size_t rows, size_t cols,
                    size_t stride, size_t off)
{
    float *f = malloc((rows * cols > 0 ? rows * cols : 1) * sizeof *f);
    if (!f)
        return NULL;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < cols; j++)
            f[r * cols + j] = bp_dtype_ldf(b->dtype, b->data, off + r * stride + j);
    return f;
}

/* w [N, K] widened and transposed to [K, N]. */
static float *widen_t(const bp_buf_t *w, size_t N, size_t K,
                      size_t stride, size_t off)
{
    float *f = malloc((N * K > 0 ? N * K : 1) * sizeof *f);
    if (!f)
        return NULL;
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++)
            f[k * N + n] = bp_dtype_ldf(w->dtype, w->data, off + n * stride + k);
    return f;
}

static bp_status cpu_linear(bp_stack_dev_t *s, bp_buf_t *out, const bp_buf_t *x,
                            const bp_buf_t *w, bp_error_t *err)
{
    (void)s;
    bp_dtype_t dt = x->dtype;
    size_t T = (size_t)x->shape[0], K = (size_t)x->shape[1],
           N = (size_t)w->shape[0];
    bp_status e;
    if ((e = bp_stack_check_2d(w, (int64_t)N, (int64_t)K, dt, "linear weight",
                              err)) ||
        (e = bp_stack_check_2d(out, (int64_t)T, (int64_t)N, dt, "linear out",
                              err)))
        return e;
    float *xf = widen(x, T, K, K, 0), *wt = widen_t(w, N, K, K, 0),
          *cf = malloc((T * N > 0 ? T * N : 1) * sizeof *cf);
    if (!xf || !wt || !cf) {
        free(xf);
        free(wt);
        free(cf);
        return oom(err);
    }
    bp_cpu_gemm_f32(T, N, K, xf, K, wt, N, cf, N);
    for (size_t i = 0; i < T * N; i++)
        bp_dtype_stf(dt, out->data, i, cf[i]);
    free(xf);
    free(wt);
    free(cf);
    return BP_OK;
}

/* ---- attention's matmuls ------------------------------------------------ */

static bp_status cpu_attention(bp_stack_dev_t *s, bp_buf_t *out, const bp_buf_t *q,
                               const bp_buf_t *k, const bp_buf_t *v,
                               int64_t heads, bp_buf_t *scores,
                               bp_error_t *err)
{
    (void)scores;
    bp_dtype_t dt = q->dtype;
    size_t T = (size_t)q->shape[0], H = (size_t)q->shape[1];
    size_t d = H / (size_t)heads;
    bp_status e;
    if ((e = bp_stack_check_2d(k, (int64_t)T, (int64_t)H, dt, "attention k",
                              err)) ||
        (e = bp_stack_check_2d(v, (int64_t)T, (int64_t)H, dt, "attention v",
                              err)) ||
        (e = bp_stack_check_2d(out, (int64_t)T, (int64_t)H, dt,
                              "attention out", err)))
        return e;
    /* q_h, k_h^T, v_h, out_h: [T, d] each; scores [T, T], then sh: the
     * head's scores in the model dtype for bp_stack_attn_softmax */
    float *qf = malloc((4 * T * d + T * T) * sizeof *qf);
    bp_buf_t sh = {0};
    int64_t s3[3] = {1, (int64_t)T, (int64_t)T};
    if (!qf || bp_buf_alloc(&sh, dt, 3, s3, err)) {
        free(qf);
        return oom(err);
    }
    float *kt = qf + T * d, *vf = kt + T * d, *of = vf + T * d,
          *sc = of + T * d;
    for (size_t h = 0; h < (size_t)heads; h++) {
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < d; j++) {
                qf[t * d + j] = bp_dtype_ldf(dt, q->data, t * H + h * d + j);
                kt[j * T + t] = bp_dtype_ldf(dt, k->data, t * H + h * d + j);
                vf[t * d + j] = bp_dtype_ldf(dt, v->data, t * H + h * d + j);
            }
        bp_cpu_gemm_f32(T, T, d, qf, d, kt, T, sc, T);
        for (size_t i = 0; i < T * T; i++)
            bp_dtype_stf(dt, sh.data, i, sc[i]);
        if ((e = bp_stack_attn_softmax(s, &sh, 1, (int64_t)T, (int64_t)d, err))) {
            free(qf);
            bp_buf_free(&sh);
            return e;
        }
        for (size_t i = 0; i < T * T; i++)
            sc[i] = bp_dtype_ldf(dt, sh.data, i);
        bp_cpu_gemm_f32(T, d, T, sc, T, vf, d, of, d);
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < d; j++)
                bp_dtype_stf(dt, out->data, t * H + h * d + j, of[t * d + j]);
    }
    free(qf);
    bp_buf_free(&sh);
    return BP_OK;
}

/* ---- memory and generation ---------------------------------------------- */

static bp_status cpu_alloc(bp_stack_dev_t *s, bp_buf_t *b, bp_dtype_t dt, int ndim,
                           const int64_t *shape, bp_error_t *err)
{
    (void)s;
    return bp_buf_alloc(b, dt, ndim, shape, err);
}

static void cpu_release(bp_stack_dev_t *s, bp_buf_t *b)
{
    (void)s;
    bp_buf_free(b);
}

static bp_status cpu_put(bp_stack_dev_t *s, bp_buf_t *b, const void *host,
                         bp_error_t *err)
{
    (void)s;
    (void)err;
    memcpy(b->data, host, bp_buf_nbytes(b));
    return BP_OK;
}

static bp_status cpu_get(bp_stack_dev_t *s, const bp_buf_t *b, void *host,
                         bp_error_t *err)
{
    (void)s;
    (void)err;
    memcpy(host, b->data, bp_buf_nbytes(b));
    return BP_OK;
}

static bp_status cpu_uniform(bp_stack_dev_t *s, bp_buf_t *out, size_t off,
                             size_t n, uint64_t seed, uint64_t stream,
                             uint64_t first, float low, float high,
                             bp_error_t *err)
{
    (void)s;
    if (off > out->numel || n > out->numel - off)
        return bp_error_set(err, BP_EINTERNAL, "uniform past the end");
    for (size_t i = 0; i < n; i++)
        bp_dtype_stf(out->dtype, out->data, off + i,
           bp_rng_uniform(seed, stream, first + i, low, high));
    return BP_OK;
}

static bp_status cpu_copy(bp_stack_dev_t *s, bp_buf_t *dst, size_t doff,
                          const bp_buf_t *src, size_t soff, size_t n,
                          bp_error_t *err)
{
    (void)s;
    size_t es = bp_dtype_info(dst->dtype)->size;
    if (dst->dtype != src->dtype || doff > dst->numel ||
        n > dst->numel - doff || soff > src->numel || n > src->numel - soff)
        return bp_error_set(err, BP_EINTERNAL, "copy out of range");
    memcpy((char *)dst->data + doff * es, (const char *)src->data + soff * es,
           n * es);
    return BP_OK;
}

static bp_status cpu_sync(bp_stack_dev_t *s, bp_error_t *err)
{
    (void)s;
    (void)err;
    return BP_OK;
}

static void cpu_close(bp_stack_dev_t *s)
{
    bp_stack_rows_release(s);
    free(s);
}

bp_status bp_stack_dev_cpu_open(bp_backend_t *cpu, bp_stack_dev_t **out, bp_error_t *err)
{
    bp_stack_dev_t *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err);
    s->be = cpu;
    __builtin_cpu_init();
    bool simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    s->name = "cpu";
    snprintf(s->desc, sizeof s->desc,
             "cpu (matmul: fp32 fma chain, k ascending%s; exp/log: SLEEF u10)",
             simd ? ", AVX2" : "");
    s->alloc = cpu_alloc;
    s->release = cpu_release;
    s->put = cpu_put;
    s->get = cpu_get;
    s->uniform = cpu_uniform;
    s->copy = cpu_copy;
    s->linear = cpu_linear;
    s->attention = cpu_attention;
    s->sync = cpu_sync;
    s->close = cpu_close;
    *out = s;
    return BP_OK;
}
