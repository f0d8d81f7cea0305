/* The stack's ops on the CPU (arithmetic in stack_ops.h).  Values are
 * widened to float, computed, and rounded to the model dtype where
 * PyTorch's eager op would store its result.  The matmuls are the CPU's
 * one GEMM (cpu_gemm.h). */
#include "stack_ops.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

#include "cpu_gemm.h"
#include "rng.h"

static float ldv(bp_dtype_t dt, const void *p, size_t i)
{
    switch (dt) {
    case BP_F32: return ((const float *)p)[i];
    case BP_BF16: return bp_bf16_to_f32(((const uint16_t *)p)[i]);
    case BP_F16: return bp_f16_to_f32(((const uint16_t *)p)[i]);
    default: return NAN;
    }
}

static void st(bp_dtype_t dt, void *p, size_t i, float v)
{
    switch (dt) {
    case BP_F32: ((float *)p)[i] = v; break;
    case BP_BF16: ((uint16_t *)p)[i] = bp_f32_to_bf16(v); break;
    case BP_F16: ((uint16_t *)p)[i] = bp_f32_to_f16(v); break;
    default: break;
    }
}

/* v as a tensor of dt holds it. */
static float rnd(bp_dtype_t dt, float v)
{
    switch (dt) {
    case BP_BF16: return bp_bf16_to_f32(bp_f32_to_bf16(v));
    case BP_F16: return bp_f16_to_f32(bp_f32_to_f16(v));
    default: return v;
    }
}

static bp_status oom(bp_error_t *err)
{
    return bp_error_set(err, BP_ENOMEM, "out of memory");
}

bp_status bp_sops_check_2d(const bp_buf_t *b, int64_t rows, int64_t cols,
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
            f[r * cols + j] = ldv(b->dtype, b->data, off + r * stride + j);
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
            f[k * N + n] = ldv(w->dtype, w->data, off + n * stride + k);
    return f;
}

static bp_status cpu_linear(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *x,
                            const bp_buf_t *w, bp_error_t *err)
{
    (void)s;
    bp_dtype_t dt = x->dtype;
    size_t T = (size_t)x->shape[0], K = (size_t)x->shape[1],
           N = (size_t)w->shape[0];
    bp_status e;
    if ((e = bp_sops_check_2d(w, (int64_t)N, (int64_t)K, dt, "linear weight",
                              err)) ||
        (e = bp_sops_check_2d(out, (int64_t)T, (int64_t)N, dt, "linear out",
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
        st(dt, out->data, i, cf[i]);
    free(xf);
    free(wt);
    free(cf);
    return BP_OK;
}

/* ---- elementwise and row ops -------------------------------------------- */

static bp_status cpu_rmsnorm(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *x,
                             const bp_buf_t *w, float eps, bp_error_t *err)
{
    (void)s;
    bp_dtype_t dt = x->dtype;
    size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
    bp_status e;
    if ((e = bp_sops_check_2d(w, 1, (int64_t)H, dt, "rmsnorm weight", err)) ||
        (e = bp_sops_check_2d(out, (int64_t)T, (int64_t)H, dt, "rmsnorm out",
                              err)))
        return e;
    for (size_t t = 0; t < T; t++) {
        float ss = 0.0f;
        for (size_t j = 0; j < H; j++) {
            float v = ldv(dt, x->data, t * H + j);
            float sq = v * v;
            ss = ss + sq;
        }
        float var = ss / (float)H;
        float r = 1.0f / sqrtf(var + eps);
        for (size_t j = 0; j < H; j++) {
            float y = rnd(dt, ldv(dt, x->data, t * H + j) * r);
            st(dt, out->data, t * H + j, ldv(dt, w->data, j) * y);
        }
    }
    return BP_OK;
}

static bp_status cpu_rope(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *x,
                          const bp_buf_t *cos, const bp_buf_t *sin,
                          int64_t row0, int64_t heads, bp_error_t *err)
{
    (void)s;
    bp_dtype_t dt = x->dtype;
    size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
    size_t d = H / (size_t)heads, h2 = d / 2;
    bp_status e;
    if ((e = bp_sops_check_2d(out, (int64_t)T, (int64_t)H, dt, "rope out",
                              err)))
        return e;
    if (cos->ndim != 2 || cos->shape[1] != (int64_t)d || cos->dtype != dt ||
        sin->ndim != 2 || sin->shape[1] != (int64_t)d || sin->dtype != dt ||
        row0 < 0 || row0 + (int64_t)T > cos->shape[0] ||
        sin->shape[0] != cos->shape[0])
        return bp_error_set(err, BP_EINTERNAL, "rope: caches do not cover "
                            "rows %lld..%lld", (long long)row0,
                            (long long)(row0 + (int64_t)T - 1));
    for (size_t t = 0; t < T; t++) {
        size_t crow = ((size_t)row0 + t) * d;
        for (size_t h = 0; h < (size_t)heads; h++) {
            size_t base = t * H + h * d;
            for (size_t j = 0; j < d; j++) {
                float q = ldv(dt, x->data, base + j);
                float r = j < h2 ? -ldv(dt, x->data, base + j + h2)
                                 : ldv(dt, x->data, base + j - h2);
                float a = rnd(dt, q * ldv(dt, cos->data, crow + j));
                float b = rnd(dt, r * ldv(dt, sin->data, crow + j));
                st(dt, out->data, base + j, a + b);
            }
        }
    }
    return BP_OK;
}

static bp_status cpu_attention(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *q,
                               const bp_buf_t *k, const bp_buf_t *v,
                               int64_t heads, bp_buf_t *scores,
                               bp_error_t *err)
{
    (void)s;
    (void)scores;
    bp_dtype_t dt = q->dtype;
    size_t T = (size_t)q->shape[0], H = (size_t)q->shape[1];
    size_t d = H / (size_t)heads;
    bp_status e;
    if ((e = bp_sops_check_2d(k, (int64_t)T, (int64_t)H, dt, "attention k",
                              err)) ||
        (e = bp_sops_check_2d(v, (int64_t)T, (int64_t)H, dt, "attention v",
                              err)) ||
        (e = bp_sops_check_2d(out, (int64_t)T, (int64_t)H, dt,
                              "attention out", err)))
        return e;
    float scale = (float)sqrt((double)d);
    /* q_h, k_h^T, v_h, out_h: [T, d] each; scores [T, T] */
    float *qf = malloc((4 * T * d + T * T) * sizeof *qf);
    if (!qf)
        return oom(err);
    float *kt = qf + T * d, *vf = kt + T * d, *of = vf + T * d,
          *sc = of + T * d;
    for (size_t h = 0; h < (size_t)heads; h++) {
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < d; j++) {
                qf[t * d + j] = ldv(dt, q->data, t * H + h * d + j);
                kt[j * T + t] = ldv(dt, k->data, t * H + h * d + j);
                vf[t * d + j] = ldv(dt, v->data, t * H + h * d + j);
            }
        bp_cpu_gemm_f32(T, T, d, qf, d, kt, T, sc, T);
        for (size_t i = 0; i < T; i++) {
            float *row = sc + i * T, mx = -INFINITY, sum = 0.0f;
            for (size_t j = 0; j <= i; j++) {
                row[j] = rnd(dt, rnd(dt, row[j]) / scale);
                mx = row[j] > mx ? row[j] : mx;
            }
            for (size_t j = 0; j <= i; j++)
                sum = sum + Sleef_expf_u10(row[j] - mx);
            for (size_t j = 0; j < T; j++)
                row[j] = j <= i ? rnd(dt, Sleef_expf_u10(row[j] - mx) / sum)
                                : 0.0f;
        }
        bp_cpu_gemm_f32(T, d, T, sc, T, vf, d, of, d);
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < d; j++)
                st(dt, out->data, t * H + h * d + j, of[t * d + j]);
    }
    free(qf);
    return BP_OK;
}

static bp_status same3(const bp_buf_t *out, const bp_buf_t *a,
                       const bp_buf_t *b, const char *what, bp_error_t *err)
{
    if (a->numel != out->numel || b->numel != out->numel ||
        a->dtype != out->dtype || b->dtype != out->dtype)
        return bp_error_set(err, BP_EINTERNAL, "%s: operands differ", what);
    return BP_OK;
}

static bp_status cpu_silu_mul(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *g,
                              const bp_buf_t *u, bp_error_t *err)
{
    (void)s;
    bp_status e = same3(out, g, u, "silu_mul", err);
    if (e)
        return e;
    bp_dtype_t dt = out->dtype;
    for (size_t i = 0; i < out->numel; i++) {
        float x = ldv(dt, g->data, i);
        float sl = rnd(dt, x / (1.0f + Sleef_expf_u10(-x)));
        st(dt, out->data, i, sl * ldv(dt, u->data, i));
    }
    return BP_OK;
}

static bp_status cpu_add(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *a,
                         const bp_buf_t *b, bp_error_t *err)
{
    (void)s;
    bp_status e = same3(out, a, b, "add", err);
    if (e)
        return e;
    bp_dtype_t dt = out->dtype;
    for (size_t i = 0; i < out->numel; i++)
        st(dt, out->data, i, ldv(dt, a->data, i) + ldv(dt, b->data, i));
    return BP_OK;
}

static bp_status cpu_log_softmax(bp_sops_t *s, bp_buf_t *out,
                                 const bp_buf_t *x, bp_error_t *err)
{
    (void)s;
    size_t T = (size_t)x->shape[0], V = (size_t)x->shape[1];
    bp_status e = bp_sops_check_2d(out, (int64_t)T, (int64_t)V, BP_F32,
                                   "log_softmax out", err);
    if (e)
        return e;
    float *o = out->data;
    for (size_t t = 0; t < T; t++) {
        float mx = -INFINITY, sum = 0.0f;
        for (size_t j = 0; j < V; j++) {
            float v = ldv(x->dtype, x->data, t * V + j);
            mx = v > mx ? v : mx;
        }
        for (size_t j = 0; j < V; j++)
            sum = sum + Sleef_expf_u10(ldv(x->dtype, x->data, t * V + j) - mx);
        float ls = Sleef_logf_u10(sum);
        for (size_t j = 0; j < V; j++)
            o[t * V + j] = (ldv(x->dtype, x->data, t * V + j) - mx) - ls;
    }
    return BP_OK;
}

static bp_status cpu_embed(bp_sops_t *s, bp_buf_t *out, const bp_buf_t *table,
                           const bp_buf_t *ids, bp_error_t *err)
{
    (void)s;
    size_t T = ids->numel, H = (size_t)table->shape[1],
           es = bp_dtype_info(table->dtype)->size;
    bp_status e = bp_sops_check_2d(out, (int64_t)T, (int64_t)H, table->dtype,
                                   "embedding out", err);
    if (e)
        return e;
    const int32_t *id = ids->data;
    for (size_t t = 0; t < T; t++) {
        if (id[t] < 0 || id[t] >= table->shape[0])
            return bp_error_set(err, BP_EINTERNAL, "token id %d out of range",
                                (int)id[t]);
        memcpy((char *)out->data + t * H * es,
               (const char *)table->data + (size_t)id[t] * H * es, H * es);
    }
    return BP_OK;
}

/* ---- memory and generation ---------------------------------------------- */

static bp_status cpu_alloc(bp_sops_t *s, bp_buf_t *b, bp_dtype_t dt, int ndim,
                           const int64_t *shape, bp_error_t *err)
{
    (void)s;
    return bp_buf_alloc(b, dt, ndim, shape, err);
}

static void cpu_release(bp_sops_t *s, bp_buf_t *b)
{
    (void)s;
    bp_buf_free(b);
}

static bp_status cpu_put(bp_sops_t *s, bp_buf_t *b, const void *host,
                         bp_error_t *err)
{
    (void)s;
    (void)err;
    memcpy(b->data, host, bp_buf_nbytes(b));
    return BP_OK;
}

static bp_status cpu_get(bp_sops_t *s, const bp_buf_t *b, void *host,
                         bp_error_t *err)
{
    (void)s;
    (void)err;
    memcpy(host, b->data, bp_buf_nbytes(b));
    return BP_OK;
}

static bp_status cpu_uniform(bp_sops_t *s, bp_buf_t *out, size_t off,
                             size_t n, uint64_t seed, uint64_t stream,
                             uint64_t first, float low, float high,
                             bp_error_t *err)
{
    (void)s;
    if (off > out->numel || n > out->numel - off)
        return bp_error_set(err, BP_EINTERNAL, "uniform past the end");
    for (size_t i = 0; i < n; i++)
        st(out->dtype, out->data, off + i,
           bp_rng_uniform(seed, stream, first + i, low, high));
    return BP_OK;
}

static bp_status cpu_copy(bp_sops_t *s, bp_buf_t *dst, size_t doff,
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

static bp_status cpu_sync(bp_sops_t *s, bp_error_t *err)
{
    (void)s;
    (void)err;
    return BP_OK;
}

static void cpu_close(bp_sops_t *s)
{
    free(s);
}

bp_status bp_sops_cpu_open(bp_sops_t **out, bp_error_t *err)
{
    bp_sops_t *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err);
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
    s->embed = cpu_embed;
    s->rmsnorm = cpu_rmsnorm;
    s->linear = cpu_linear;
    s->rope = cpu_rope;
    s->attention = cpu_attention;
    s->silu_mul = cpu_silu_mul;
    s->add = cpu_add;
    s->log_softmax = cpu_log_softmax;
    s->sync = cpu_sync;
    s->close = cpu_close;
    *out = s;
    return BP_OK;
}
