/* The reference layer stack on the CPU.
 *  - Determinism: both sides unsharded give bit-identical layers, logits
 *    and log-probs; the default sides (unsharded vs sharded, bf16) do not
 *    (the comparison can see a difference).
 *  - The fp32 forward of tiny against an independent double-precision
 *    forward written here from the model's definition (stack.h): weights
 *    and tokens regenerated from the documented streams, RoPE tables from
 *    cos/sin in double, no rounding anywhere.  Stated tolerance: logits
 *    within 1e-5 of the largest |logit|, log-probs within 2e-5 absolute
 *    (seen: 6e-7 and 3e-6).  A reference with the sine's sign flipped
 *    must fail that tolerance.
 *  - Sharded generation gathered bitwise for W = 1, 2, 3, 8, and the
 *    shard ranges partition [0, n).
 *  - The RoPE probes built in C equal the shipped YAML probes (same hash,
 *    bit-identical buffers on the CPU).
 *  - Buffers from files: PyTorch's own caches give PyTorch's counts;
 *    shapes and missing tensors are refused with the file named.
 *  - Policy parsing. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "probe.h"
#include "rng.h"
#include "stack.h"
#include "stack_int.h"

#ifndef BP_TEST_SRCDIR
#define BP_TEST_SRCDIR "."
#endif

/* ---- determinism ------------------------------------------------------- */

static void small_opts(bp_stack_opts_t *o, bp_dtype_t dt)
{
    bp_stack_opts_init(o);
    o->dtype = o->init_dtype = dt;
    o->cfg.layers = 3;
    o->pos_begin = 256;
    o->pos_end = 384;
}

START_TEST(t_unsharded_twice_identical)
{
    bp_stack_opts_t o;
    small_opts(&o, BP_BF16);
    o.side[0] = o.side[1] = BP_STACK_UNSHARDED;
    bp_stack_result_t r;
    bp_error_t err = {0};
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    ck_assert(r.have_forward && r.nlayers == 3);
    for (int k = 0; k < 3; k++)
        ck_assert_uint_eq(r.buf[k].mismatched, 0);
    for (int l = 0; l < r.nlayers; l++)
        ck_assert_msg(r.layers[l].cmp.mismatched == 0,
                      "layer %d: %zu elements differ", l + 1,
                      r.layers[l].cmp.mismatched);
    ck_assert_uint_eq(r.logits.mismatched, 0);
    ck_assert_uint_eq(r.logp.mismatched, 0);
    ck_assert_uint_eq(r.top1_agree, r.top1_total);
    ck_assert(r.mean_kl == 0.0);
    ck_assert_uint_eq(r.params_differ, 0);
    ck_assert_uint_eq(r.params_checked, bp_stack_nparams(&o.cfg));
    ck_assert(!bp_stack_failed(&r));
    bp_stack_result_free(&r);
}
END_TEST

START_TEST(t_sharded_bf16_differs)
{
    bp_stack_opts_t o;
    small_opts(&o, BP_BF16);
    o.repeat = 2;
    bp_stack_result_t r;
    bp_error_t err = {0};
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    /* Positions 256..511 in bf16: every odd one is rounded to even. */
    ck_assert(r.buf[1].mismatched > 0 && r.buf[2].mismatched > 0);
    ck_assert_uint_eq(r.buf[0].mismatched, 0);
    for (int l = 0; l < r.nlayers; l++)
        ck_assert_msg(r.layers[l].cmp.mismatched > 0, "layer %d identical",
                      l + 1);
    ck_assert(r.logp.max_abs > 0);
    ck_assert_int_eq(r.repeat, 2);
    ck_assert_uint_eq(r.repeat_differ, 0);
    ck_assert_int_eq(r.nforward, 3);
    bp_stack_result_free(&r);
}
END_TEST

START_TEST(t_fp32_window_below_init_damage)
{
    /* fp32 model and init dtype: the two inits are the same ops on the
     * same device, so nothing may differ anywhere. */
    bp_stack_opts_t o;
    small_opts(&o, BP_F32);
    o.cfg.layers = 2;
    o.pos_begin = 0;
    o.pos_end = 32;
    bp_stack_result_t r;
    bp_error_t err = {0};
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    for (int k = 0; k < 3; k++)
        ck_assert_uint_eq(r.buf[k].mismatched, 0);
    for (int l = 0; l < r.nlayers; l++)
        ck_assert_uint_eq(r.layers[l].cmp.mismatched, 0);
    bp_stack_result_free(&r);
}
END_TEST

/* ---- independent double-precision forward ------------------------------ */

typedef struct {
    int64_t H, nh, d, L, I, V, p0, T;
    double base, eps;
    uint64_t seed;
    int sin_sign; /* +1; -1 for the negative control */
} ref_t;

/* Parameter (kind, layer) per stack.h: stream (kind << 32) | layer,
 * uniform in [-b, b) (norms [0.5, 1.5)), b = float(1/sqrt(fan_in)), the
 * embedding float(sqrt(3)); fp32 values, as doubles. */
static double *ref_param(const ref_t *R, int kind, int layer, int64_t rows,
                         int64_t cols, double fan_in)
{
    size_t n = (size_t)(rows * cols);
    double *w = malloc(n * sizeof *w);
    ck_assert_ptr_nonnull(w);
    float lo, hi;
    if (kind == 2 || kind == 7 || kind == 11) {
        lo = 0.5f;
        hi = 1.5f;
    } else {
        float b = kind == 1 ? (float)sqrt(3.0) : (float)(1.0 / sqrt(fan_in));
        lo = -b;
        hi = b;
    }
    uint64_t stream = ((uint64_t)kind << 32) | (uint64_t)layer;
    for (size_t i = 0; i < n; i++)
        w[i] = bp_rng_uniform(R->seed, stream, i, lo, hi);
    return w;
}

static void ref_rmsnorm(const ref_t *R, const double *x, const double *w,
                        double *y)
{
    for (int64_t t = 0; t < R->T; t++) {
        double ss = 0;
        for (int64_t j = 0; j < R->H; j++)
            ss += x[t * R->H + j] * x[t * R->H + j];
        double r = 1.0 / sqrt(ss / (double)R->H + R->eps);
        for (int64_t j = 0; j < R->H; j++)
            y[t * R->H + j] = w[j] * (x[t * R->H + j] * r);
    }
}

/* y[T, N] = x[T, K] w[N, K]^T */
static void ref_linear(int64_t T, int64_t K, int64_t N, const double *x,
                       const double *w, double *y)
{
    for (int64_t t = 0; t < T; t++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += x[t * K + k] * w[n * K + k];
            y[t * N + n] = s;
        }
}

static void ref_rope(const ref_t *R, double *x)
{
    int64_t h2 = R->d / 2;
    double *tmp = malloc((size_t)R->d * sizeof *tmp);
    for (int64_t t = 0; t < R->T; t++) {
        double p = (double)(R->p0 + t);
        for (int64_t h = 0; h < R->nh; h++) {
            double *q = x + t * R->H + h * R->d;
            for (int64_t j = 0; j < R->d; j++) {
                double ang = p * pow(R->base, -(double)(2 * (j % h2)) /
                                                  (double)R->d);
                double rot = j < h2 ? -q[j + h2] : q[j - h2];
                tmp[j] = q[j] * cos(ang) + R->sin_sign * rot * sin(ang);
            }
            memcpy(q, tmp, (size_t)R->d * sizeof *tmp);
        }
    }
    free(tmp);
}

static void ref_attention(const ref_t *R, const double *q, const double *k,
                          const double *v, double *out)
{
    double *p = malloc((size_t)R->T * sizeof *p);
    for (int64_t h = 0; h < R->nh; h++)
        for (int64_t i = 0; i < R->T; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j <= i; j++) {
                double s = 0;
                for (int64_t c = 0; c < R->d; c++)
                    s += q[i * R->H + h * R->d + c] * k[j * R->H + h * R->d + c];
                p[j] = s / sqrt((double)R->d);
                mx = fmax(mx, p[j]);
            }
            for (int64_t j = 0; j <= i; j++)
                sum += (p[j] = exp(p[j] - mx));
            for (int64_t c = 0; c < R->d; c++) {
                double s = 0;
                for (int64_t j = 0; j <= i; j++)
                    s += p[j] / sum * v[j * R->H + h * R->d + c];
                out[i * R->H + h * R->d + c] = s;
            }
        }
    free(p);
}

/* logits [T, V] and log-probs in double. */
static void ref_forward(const ref_t *R, double *logits, double *logp)
{
    int64_t T = R->T, H = R->H, I = R->I, V = R->V;
    size_t th = (size_t)(T * H), ti = (size_t)(T * I);
    double *h = calloc(th, sizeof *h), *x = calloc(th, sizeof *x),
           *q = calloc(th, sizeof *q), *k = calloc(th, sizeof *k),
           *v = calloc(th, sizeof *v), *a = calloc(th, sizeof *a),
           *o = calloc(th, sizeof *o), *g = calloc(ti, sizeof *g),
           *u = calloc(ti, sizeof *u);
    double *emb = ref_param(R, 1, 0, V, H, 0);
    for (int64_t t = 0; t < T; t++) {
        uint64_t pos = (uint64_t)(R->p0 + t);
        const uint32_t ctr[4] = {(uint32_t)pos, (uint32_t)(pos >> 32), 13, 0};
        const uint32_t key[2] = {(uint32_t)R->seed, (uint32_t)(R->seed >> 32)};
        uint32_t out[4];
        bp_philox4x32_10(ctr, key, out);
        int64_t id = (int64_t)(((uint64_t)out[0] * (uint64_t)V) >> 32);
        memcpy(h + t * H, emb + id * H, (size_t)H * sizeof *h);
    }
    free(emb);
    for (int l = 0; l < R->L; l++) {
        double *wn = ref_param(R, 2, l, 1, H, 0),
               *wq = ref_param(R, 3, l, H, H, (double)H),
               *wk = ref_param(R, 4, l, H, H, (double)H),
               *wv = ref_param(R, 5, l, H, H, (double)H),
               *wo = ref_param(R, 6, l, H, H, (double)H),
               *wm = ref_param(R, 7, l, 1, H, 0),
               *wg = ref_param(R, 8, l, I, H, (double)H),
               *wu = ref_param(R, 9, l, I, H, (double)H),
               *wd = ref_param(R, 10, l, H, I, (double)I);
        ref_rmsnorm(R, h, wn, x);
        ref_linear(T, H, H, x, wq, q);
        ref_linear(T, H, H, x, wk, k);
        ref_linear(T, H, H, x, wv, v);
        ref_rope(R, q);
        ref_rope(R, k);
        ref_attention(R, q, k, v, a);
        ref_linear(T, H, H, a, wo, o);
        for (size_t i = 0; i < th; i++)
            h[i] += o[i];
        ref_rmsnorm(R, h, wm, x);
        ref_linear(T, H, I, x, wg, g);
        ref_linear(T, H, I, x, wu, u);
        for (size_t i = 0; i < ti; i++)
            g[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
        ref_linear(T, I, H, g, wd, o);
        for (size_t i = 0; i < th; i++)
            h[i] += o[i];
        free(wn), free(wq), free(wk), free(wv), free(wo), free(wm);
        free(wg), free(wu), free(wd);
    }
    double *wf = ref_param(R, 11, 0, 1, H, 0),
           *wl = ref_param(R, 12, 0, V, H, (double)H);
    ref_rmsnorm(R, h, wf, x);
    ref_linear(T, H, V, x, wl, logits);
    for (int64_t t = 0; t < T; t++) {
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < V; j++)
            mx = fmax(mx, logits[t * V + j]);
        for (int64_t j = 0; j < V; j++)
            s += exp(logits[t * V + j] - mx);
        for (int64_t j = 0; j < V; j++)
            logp[t * V + j] = logits[t * V + j] - mx - log(s);
    }
    free(wf), free(wl);
    free(h), free(x), free(q), free(k), free(v), free(a), free(o), free(g);
    free(u);
}

/* The stack's own fp32 CPU forward of cfg over [p0, p1). */
static void stack_fp32_forward(const bp_stack_cfg_t *c, int64_t p0,
                               int64_t p1, uint64_t seed, bp_buf_t *logits,
                               bp_buf_t *logp)
{
    bp_error_t err = {0};
    bp_backend_t *cpu;
    bp_stack_dev_t *ops;
    ck_assert_msg(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK, "%s",
                  err.msg);
    ck_assert_msg(bp_stack_dev_cpu_open(cpu, &ops, &err) == BP_OK, "%s", err.msg);
    bp_stack_rope_t rope;
    ck_assert_msg(bp_stack_rope_build(c, cpu, false, BP_F32, BP_F32, &rope,
                                      &err) == BP_OK, "%s", err.msg);
    size_t np = bp_stack_nparams(c);
    bp_buf_t *w = calloc(np, sizeof *w);
    ck_assert_msg(bp_stack_params_generate(ops, c, seed, BP_F32, w, &err) ==
                      BP_OK, "%s", err.msg);
    bp_stack_model_t m;
    ck_assert_msg(bp_stack_model_open(&m, c, BP_F32, ops, w, seed, p0, p1,
                                      &err) == BP_OK, "%s", err.msg);
    ck_assert_msg(bp_stack_forward(&m, &rope.cos, &rope.sin, NULL, logits,
                                   logp, NULL, &err) == BP_OK, "%s", err.msg);
    bp_stack_model_close(&m);
    bp_stack_params_release(ops, c, w);
    free(w);
    bp_stack_rope_free(&rope);
    ops->close(ops);
    bp_backend_close(cpu);
}

typedef struct {
    double logit_rel, logp_abs;
} ref_err_t;

static ref_err_t against_ref(const bp_buf_t *lg, const bp_buf_t *lp,
                             const double *rl, const double *rp)
{
    double big = 0, dl = 0, dp = 0;
    for (size_t i = 0; i < lg->numel; i++) {
        big = fmax(big, fabs(rl[i]));
        dl = fmax(dl, fabs(bp_buf_get(lg, i) - rl[i]));
        dp = fmax(dp, fabs(bp_buf_get(lp, i) - rp[i]));
    }
    return (ref_err_t){dl / big, dp};
}

#define TOL_LOGIT 1e-5
#define TOL_LOGP 2e-5

START_TEST(t_fp32_against_double)
{
    bp_stack_cfg_t c;
    ck_assert(bp_stack_preset("tiny", &c, NULL) == BP_OK);
    int64_t p0 = 384, p1 = 512;
    uint64_t seed = 0x5eed;
    printf("stack fp32 vs double: tiny, positions %lld:%lld, seed %#llx\n",
           (long long)p0, (long long)p1, (unsigned long long)seed);
    bp_buf_t lg = {0}, lp = {0};
    stack_fp32_forward(&c, p0, p1, seed, &lg, &lp);
    ref_t R = {c.hidden, c.heads, c.hidden / c.heads, c.layers,
               c.intermediate, c.vocab, p0, p1 - p0, c.rope_base, c.eps,
               seed, +1};
    size_t n = (size_t)(R.T * R.V);
    double *rl = malloc(n * sizeof *rl), *rp = malloc(n * sizeof *rp);
    ref_forward(&R, rl, rp);
    ref_err_t e = against_ref(&lg, &lp, rl, rp);
    printf("  logits max abs diff / max |logit| %.3g (tolerance %g), "
           "log-prob max abs diff %.3g (tolerance %g)\n", e.logit_rel,
           TOL_LOGIT, e.logp_abs, TOL_LOGP);
    ck_assert_msg(e.logit_rel <= TOL_LOGIT, "logits: %g > %g", e.logit_rel,
                  TOL_LOGIT);
    ck_assert_msg(e.logp_abs <= TOL_LOGP, "log-probs: %g > %g", e.logp_abs,
                  TOL_LOGP);
    /* The same check with RoPE rotating the other way must fail. */
    R.sin_sign = -1;
    ref_forward(&R, rl, rp);
    ref_err_t bad = against_ref(&lg, &lp, rl, rp);
    printf("  control (sin sign flipped): %.3g, %.3g\n", bad.logit_rel,
           bad.logp_abs);
    ck_assert_msg(bad.logit_rel > 100 * TOL_LOGIT ||
                      bad.logp_abs > 100 * TOL_LOGP,
                  "a wrong reference passes: %g %g", bad.logit_rel,
                  bad.logp_abs);
    free(rl);
    free(rp);
    bp_buf_free(&lg);
    bp_buf_free(&lp);
}
END_TEST

/* The parameters and tokens follow the documented formulas. */
START_TEST(t_generation_contract)
{
    bp_stack_cfg_t c;
    ck_assert(bp_stack_preset("tiny", &c, NULL) == BP_OK);
    c.layers = 2;
    ck_assert_uint_eq(bp_stack_nparams(&c), 3 + 9 * 2);
    bp_stack_param_t p;
    bp_stack_param(&c, 0, &p);
    ck_assert_str_eq(p.name, "model.embed_tokens.weight");
    ck_assert(p.stream == (1ull << 32) && p.high == (float)sqrt(3.0));
    bp_stack_param(&c, 1 + 9 + 3, &p); /* layer 1 v_proj */
    ck_assert_str_eq(p.name, "model.layers.1.self_attn.v_proj.weight");
    ck_assert(p.stream == ((5ull << 32) | 1) && p.high == 1.0f / 16.0f &&
              p.low == -1.0f / 16.0f);
    bp_stack_param(&c, 1 + 9 + 8, &p); /* layer 1 down_proj */
    ck_assert(p.shape[0] == 256 && p.shape[1] == 688 &&
              p.high == (float)(1.0 / sqrt(688.0)));
    bp_stack_param(&c, 20, &p);
    ck_assert_str_eq(p.name, "lm_head.weight");
    ck_assert(p.stream == (12ull << 32) && p.numel == 1024 * 256);
    int32_t ids[4];
    bp_stack_tokens(&c, 7, 1000, 4, ids);
    for (int t = 0; t < 4; t++) {
        const uint32_t ctr[4] = {1000u + (uint32_t)t, 0, 13, 0}, key[2] = {7, 0};
        uint32_t o[4];
        bp_philox4x32_10(ctr, key, o);
        ck_assert_int_eq(ids[t], (int32_t)(((uint64_t)o[0] * 1024) >> 32));
    }
}
END_TEST

/* ---- sharded generation ------------------------------------------------ */

START_TEST(t_shard_ranges)
{
    static const size_t ns[] = {0, 1, 5, 7, 64, 688, 1000003};
    static const int ws[] = {1, 2, 3, 8, 13};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ws / sizeof ws[0]; b++) {
            size_t prev = 0, lo, hi;
            for (int r = 0; r < ws[b]; r++) {
                bp_stack_shard_range(ns[a], ws[b], r, &lo, &hi);
                ck_assert_uint_eq(lo, prev);
                ck_assert(hi >= lo && hi - lo <= ns[a] / ws[b] + 1);
                prev = hi;
            }
            ck_assert_uint_eq(prev, ns[a]);
        }
}
END_TEST

static const int shard_w[] = {1, 2, 3, 8};

START_TEST(t_sharded_gather_bitwise)
{
    int W = shard_w[_i];
    bp_stack_cfg_t c;
    ck_assert(bp_stack_preset("tiny", &c, NULL) == BP_OK);
    c.layers = 2;
    bp_error_t err = {0};
    bp_backend_t *cpu;
    bp_stack_dev_t *ops;
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    ck_assert(bp_stack_dev_cpu_open(cpu, &ops, &err) == BP_OK);
    size_t np = bp_stack_nparams(&c);
    bp_buf_t *w = calloc(np, sizeof *w);
    bp_stack_pcheck_t *pc = calloc(np, sizeof *pc);
    ck_assert(bp_stack_params_generate(ops, &c, 11, BP_BF16, w, &err) == BP_OK);
    ck_assert_msg(bp_stack_params_check(ops, &c, 11, BP_BF16, W, w, pc,
                                        &err) == BP_OK, "%s", err.msg);
    for (size_t i = 0; i < np; i++) {
        ck_assert_msg(pc[i].cmp.mismatched == 0, "W=%d %s: %zu differ", W,
                      pc[i].p.name, pc[i].cmp.mismatched);
        ck_assert_uint_eq(pc[i].cmp.total, pc[i].p.numel);
        bp_cmp_free(&pc[i].cmp);
    }
    /* A shard generated from the wrong counters is caught: rank 1 of W=2
     * starting from element 0 instead of n/2. */
    bp_buf_t bad = {0};
    bp_stack_param_t p;
    bp_stack_param(&c, 2, &p);
    ck_assert(ops->alloc(ops, &bad, BP_BF16, p.ndim, p.shape, &err) == BP_OK);
    ck_assert(ops->uniform(ops, &bad, 0, p.numel / 2, 11, p.stream, 0, p.low,
                           p.high, &err) == BP_OK);
    ck_assert(ops->uniform(ops, &bad, p.numel / 2, p.numel - p.numel / 2, 11,
                           p.stream, 0, p.low, p.high, &err) == BP_OK);
    bp_cmp_t cmp;
    ck_assert(bp_compare(&w[2], &bad, NULL, NULL, &cmp, &err) == BP_OK);
    ck_assert(cmp.mismatched > 0);
    bp_cmp_free(&cmp);
    ops->release(ops, &bad);
    bp_stack_params_release(ops, &c, w);
    free(w);
    free(pc);
    ops->close(ops);
    bp_backend_close(cpu);
}
END_TEST

/* ---- RoPE probes and files ------------------------------------------------ */

static bp_probe_t *load_probe(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/probes/%s.yaml", BP_TEST_SRCDIR, name);
    bp_probe_t *p;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load(path, &p, &err) == BP_OK, "%s", err.msg);
    return p;
}

static void same_run(bp_backend_t *cpu, const bp_probe_t *a,
                     const bp_probe_t *b, bp_dtype_t dt)
{
    bp_buf_t *ba = calloc(a->nops, sizeof *ba), *bb = calloc(b->nops, sizeof *bb);
    bp_error_t err = {0};
    ck_assert(bp_backend_run(cpu, a, dt, ba, &err) == BP_OK);
    ck_assert(bp_backend_run(cpu, b, dt, bb, &err) == BP_OK);
    for (size_t k = 0; k < a->noutputs; k++) {
        bp_cmp_t c;
        ck_assert(bp_compare(&ba[a->outputs[k].buf], &bb[b->outputs[k].buf],
                             NULL, NULL, &c, &err) == BP_OK);
        ck_assert_msg(c.mismatched == 0, "%s %s differs", a->name,
                      a->outputs[k].name);
        bp_cmp_free(&c);
    }
    bp_backend_bufs_free(ba, a->nops);
    bp_backend_bufs_free(bb, b->nops);
    free(ba);
    free(bb);
}

START_TEST(t_rope_probes_match_yaml)
{
    bp_stack_cfg_t c;
    ck_assert(bp_stack_preset("llama2-7b", &c, NULL) == BP_OK);
    bp_backend_t *cpu;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    static const char *const names[2] = {"rope-llama2",
                                         "rope-llama2-zero-init"};
    for (int z = 0; z < 2; z++) {
        bp_probe_t *y = load_probe(names[z]);
        bp_stack_rope_probe_t rp;
        bp_stack_rope_probe(&rp, &c, z, true, BP_F32);
        ck_assert_str_eq(rp.b.p.hash, y->hash);
        same_run(cpu, &rp.b.p, y, BP_BF16);
        bp_probe_free(y);
    }
    bp_backend_close(cpu);
}
END_TEST

static void torch_file(const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/tests/data/torch/%s.safetensors.gz", BP_TEST_SRCDIR,
             name);
}

START_TEST(t_files_pytorch_counts)
{
    bp_stack_opts_t o;
    bp_stack_opts_init(&o);
    ck_assert(bp_stack_preset("llama2-7b", &o.cfg, NULL) == BP_OK);
    o.pos_end = o.cfg.max_positions;
    o.buffers_only = true;
    char a[512], b[512], f32[512];
    torch_file("rope_cpu", a, sizeof a);
    torch_file("rope_cuda_zero", b, sizeof b);
    torch_file("rope_cuda_fp32", f32, sizeof f32);
    o.from[0] = a;
    o.from[1] = b;
    bp_stack_result_t r;
    bp_error_t err = {0};
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_eq(r.buf[1].mismatched, 329332);
    ck_assert_uint_eq(r.buf[2].mismatched, 324808);
    ck_assert_uint_eq(r.buf[1].total, 524288);
    ck_assert(r.buf[1].max_abs == 2.0 && r.buf[2].max_abs == 2.0);
    ck_assert(!r.have_forward && r.nparams == 0);
    bp_stack_result_free(&r);
    o.from[1] = f32;
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_eq(r.buf[1].mismatched, 88);
    ck_assert_uint_eq(r.buf[2].mismatched, 116);
    ck_assert(r.buf[1].max_abs == 0.00390625 && r.buf[2].max_abs == 0.00390625);
    bp_stack_result_free(&r);
}
END_TEST

START_TEST(t_files_refused)
{
    bp_stack_cfg_t c;
    ck_assert(bp_stack_preset("tiny", &c, NULL) == BP_OK);
    char a[512];
    torch_file("rope_cpu", a, sizeof a);
    bp_stack_rope_t r;
    char note[256];
    bp_error_t err = {0};
    /* tiny's caches are [512, 64]; the file holds Llama-2's [4096, 128] */
    ck_assert_int_eq(bp_stack_rope_load(a, &c, BP_BF16, &r, note, sizeof note,
                                        &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "rope_cpu") && strstr(err.msg, "[4096, 128]")
                      && strstr(err.msg, "[512, 64]"), "%s", err.msg);
    ck_assert_int_eq(bp_stack_rope_load("/nonexistent/x.safetensors", &c,
                                        BP_BF16, &r, note, sizeof note, &err),
                     BP_EIO);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.safetensors"), "%s", err.msg);
    /* the right geometry in fp32: converted, and said */
    ck_assert(bp_stack_preset("llama2-7b", &c, NULL) == BP_OK);
    ck_assert_msg(bp_stack_rope_load(a, &c, BP_F32, &r, note, sizeof note,
                                     &err) == BP_OK, "%s", err.msg);
    ck_assert_msg(strstr(note, "cos in") && strstr(note, "bf16"), "%s", note);
    ck_assert_int_eq(r.cos.dtype, BP_F32);
    bp_stack_rope_free(&r);
}
END_TEST

/* ---- options and policy --------------------------------------------------- */

START_TEST(t_bad_options)
{
    bp_stack_opts_t o;
    bp_stack_result_t r;
    bp_error_t err = {0};
    bp_stack_opts_init(&o);
    ck_assert(bp_stack_preset("llama2-7b", &o.cfg, NULL) == BP_OK);
    o.pos_end = 10;
    ck_assert_int_eq(bp_stack_run(&o, &r, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "GPU only"), "%s", err.msg);
    bp_stack_opts_init(&o);
    o.pos_begin = 10, o.pos_end = 10;
    ck_assert_int_eq(bp_stack_run(&o, &r, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "--positions 10:10"), "%s", err.msg);
    bp_stack_opts_init(&o);
    o.pos_end = 513;
    ck_assert_int_eq(bp_stack_run(&o, &r, &err), BP_EINPUT);
    bp_stack_opts_init(&o);
    o.cfg.heads = 3;
    ck_assert_int_eq(bp_stack_run(&o, &r, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "multiple of --heads"), "%s", err.msg);
    bp_stack_opts_init(&o);
    o.cfg.hidden = 12, o.cfg.heads = 4; /* head dim 3 */
    ck_assert_int_eq(bp_stack_run(&o, &r, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "odd"), "%s", err.msg);
    ck_assert_int_eq(bp_stack_preset("gpt2", &o.cfg, &err), BP_EINPUT);
}
END_TEST

START_TEST(t_policy_parse)
{
    bp_stack_policy_t p;
    bp_error_t err = {0};
    ck_assert(bp_stack_policy_parse("logprob_abs=0.5", &p, &err) == BP_OK);
    ck_assert(p.logprob_abs == 0.5 && p.kl < 0 && p.top1 < 0 &&
              p.logit_abs < 0);
    ck_assert(bp_stack_policy_parse("kl=1e-3,top1=0.99,logit_abs:2", &p,
                                    &err) == BP_OK);
    ck_assert(p.kl == 1e-3 && p.top1 == 0.99 && p.logit_abs == 2);
    static const char *const bad[] = {"", "kl", "kl=", "kl=x", "kl=-1",
                                      "top1=2", "kl=1,kl=2", "speed=3",
                                      "kl=inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(bp_stack_policy_parse(bad[i], &p, &err) == BP_EINPUT,
                      "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(t_policy_applied)
{
    bp_stack_opts_t o;
    small_opts(&o, BP_BF16);
    o.cfg.layers = 1;
    ck_assert(bp_stack_policy_parse("logprob_abs=1e-9", &o.policy, NULL) ==
              BP_OK);
    bp_stack_result_t r;
    bp_error_t err = {0};
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    ck_assert(!r.policy_pass && bp_stack_failed(&r));
    ck_assert_msg(strstr(r.policy_msg, "log-prob"), "%s", r.policy_msg);
    bp_stack_result_free(&r);
    ck_assert(bp_stack_policy_parse("logprob_abs=100,top1=0", &o.policy,
                                    NULL) == BP_OK);
    ck_assert_msg(bp_stack_run(&o, &r, &err) == BP_OK, "%s", err.msg);
    ck_assert(r.policy_pass && !bp_stack_failed(&r));
    bp_stack_result_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stack");
    TCase *tc = tcase_create("determinism");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_unsharded_twice_identical);
    tcase_add_test(tc, t_sharded_bf16_differs);
    tcase_add_test(tc, t_fp32_window_below_init_damage);
    suite_add_tcase(s, tc);
    tc = tcase_create("reference");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, t_fp32_against_double);
    tcase_add_test(tc, t_generation_contract);
    suite_add_tcase(s, tc);
    tc = tcase_create("sharded");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_shard_ranges);
    tcase_add_loop_test(tc, t_sharded_gather_bitwise, 0,
                        (int)(sizeof shard_w / sizeof shard_w[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("buffers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_rope_probes_match_yaml);
    tcase_add_test(tc, t_files_pytorch_counts);
    tcase_add_test(tc, t_files_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, t_bad_options);
    tcase_add_test(tc, t_policy_parse);
    tcase_add_test(tc, t_policy_applied);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
