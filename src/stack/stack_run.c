/* bp_stack_run: the whole experiment of stack.h, in order:
 *   1. options checked, devices opened (the CPU backend always: the
 *      unsharded init runs there; the forward device's backend and ops);
 *   2. each side's RoPE buffers built (or read) and compared;
 *   3. parameters generated once on the forward device, then regenerated
 *      shard by shard and compared with them (bit-identical expected);
 *   4. the forward run with each side's cos/sin on the same weights and
 *      tokens, hidden states kept after every block; --repeat runs side 0
 *      again and compares every kept tensor with its first run;
 *   5. per-layer and final figures, the policy. */
#include "stack_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "timing.h"

typedef struct {
    bp_backend_t *cpu, *dev;
    bp_stack_dev_t *ops;
} devs_t;

static void progress(const bp_stack_opts_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void progress(const bp_stack_opts_t *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, msg);
}

static void note(bp_stack_result_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(bp_stack_result_t *r, const char *fmt, ...)
{
    if (r->nnotes >= (int)(sizeof r->notes / sizeof r->notes[0]))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((r->notes[r->nnotes] = strdup(msg)))
        r->nnotes++;
}

static bp_status check_opts(const bp_stack_opts_t *o, bp_error_t *err)
{
    const bp_stack_cfg_t *c = &o->cfg;
    bp_status st = bp_stack_cfg_check(c, err);
    if (st)
        return st;
    if (!bp_dtype_is_run(o->dtype) || !bp_dtype_is_run(o->init_dtype))
        return bp_error_set(err, BP_EINPUT, "--dtype and --init-dtype take "
                            "fp32, bf16 or fp16");
    if (o->pos_begin < 0 || o->pos_begin >= o->pos_end ||
        o->pos_end > c->max_positions)
        return bp_error_set(err, BP_EINPUT,
                            "--positions %lld:%lld: needs 0 <= A < B <= %lld "
                            "(the max positions)", (long long)o->pos_begin,
                            (long long)o->pos_end,
                            (long long)c->max_positions);
    if (o->shards < 1 || o->shards > 65536)
        return bp_error_set(err, BP_EINPUT, "--shards %d: 1 to 65536",
                            o->shards);
    if (o->repeat < 1 || o->repeat > 1000)
        return bp_error_set(err, BP_EINPUT, "--repeat %d: 1 to 1000",
                            o->repeat);
    if (o->buffers_only && o->forward_only)
        return bp_error_set(err, BP_EINPUT, "--buffers-only and "
                            "--forward-only exclude each other");
    if (strcmp(o->device, "cpu") != 0 && strcmp(o->device, "cuda") != 0)
        return bp_error_set(err, BP_EINPUT, "--device '%s': cpu or cuda",
                            o->device);
    if (strcmp(c->preset, "llama2-7b") == 0 && !strcmp(o->device, "cpu") &&
        !o->buffers_only)
        return bp_error_set(err, BP_EINPUT,
                            "the llama2-7b preset's forward runs on a GPU "
                            "only: use --device cuda (--buffers-only compares "
                            "its RoPE buffers on the CPU)");
    return BP_OK;
}

static void close_devices(devs_t *d)
{
    if (d->ops)
        d->ops->close(d->ops);
    if (d->dev && d->dev != d->cpu)
        bp_backend_close(d->dev);
    bp_backend_close(d->cpu);
    memset(d, 0, sizeof *d);
}

static bp_status open_devices(const bp_stack_opts_t *o, devs_t *d,
                              bp_error_t *err)
{
    memset(d, 0, sizeof *d);
    bp_backend_opts_t bo;
    bp_backend_opts_default(&bo);
    bo.gpu = o->gpu;
    bp_status st = bp_backend_open("cpu", &bo, &d->cpu, err);
    if (st)
        return st;
    bool ops = !o->buffers_only;
    if (strcmp(o->device, "cpu") == 0) {
        d->dev = d->cpu;
        return ops ? bp_stack_dev_cpu_open(d->cpu, &d->ops, err) : BP_OK;
    }
    if ((st = bp_backend_open("cuda", &bo, &d->dev, err)))
        return bp_error_prefix(err, "--device cuda: ");
#ifdef BP_HAVE_CUDA
    if (ops)
        st = bp_stack_dev_cuda_open(d->dev, o->gemm, &d->ops, err);
#endif
    return st;
}

static bp_status side_buffers(const bp_stack_opts_t *o, const devs_t *d,
                              int s, bp_stack_rope_t *rope,
                              bp_stack_result_t *r, bp_error_t *err)
{
    const char *dt = bp_dtype_name(o->dtype);
    char *desc = r->side_desc[s];
    size_t dl = sizeof r->side_desc[s];
    if (o->from[s]) {
        char nt[512];
        bp_status st = bp_stack_rope_load(o->from[s], &o->cfg, o->dtype, rope,
                                          nt, sizeof nt, err);
        if (st)
            return bp_error_prefix(err, "--%s-from: ",
                                   o->side[s] == BP_STACK_UNSHARDED
                                       ? "unsharded" : "sharded");
        if (nt[0])
            note(r, "%s", nt);
        snprintf(desc, dl, "%s (file '%s')",
                 o->side[s] == BP_STACK_UNSHARDED ? "unsharded" : "sharded",
                 o->from[s]);
        return BP_OK;
    }
    if (o->side[s] == BP_STACK_UNSHARDED) {
        snprintf(desc, dl, "unsharded (cpu, fp32, cast to %s at the end)", dt);
        return bp_stack_rope_build(&o->cfg, d->cpu, false, o->dtype, o->dtype,
                                   rope, err);
    }
    snprintf(desc, dl, "sharded (%s, positions cast to %s at once, caches "
             "in %s)", d->dev->name, bp_dtype_name(o->init_dtype), dt);
    return bp_stack_rope_build(&o->cfg, d->dev, true, o->init_dtype, o->dtype,
                               rope, err);
}

/* Both sides' buffers and their comparison. */
static bp_status buffers(const bp_stack_opts_t *o, const devs_t *d,
                         bp_stack_rope_t *rope, bp_stack_result_t *r,
                         bp_error_t *err)
{
    double t0 = bp_timing_now();
    int sides = o->forward_only ? 1 : 2;
    for (int s = 0; s < sides; s++) {
        progress(o, "RoPE buffers: %s side", s ? "second" : "first");
        bp_status st = side_buffers(o, d, s, &rope[s], r, err);
        if (st)
            return st;
    }
    bool cpu_sin = false;
    for (int s = 0; s < sides; s++)
        cpu_sin |= !o->from[s] && (o->side[s] == BP_STACK_UNSHARDED ||
                                   strcmp(d->dev->name, "cpu") == 0);
    if (cpu_sin)
        note(r, "CPU sin/cos are SLEEF's (PyTorch's x86 wheels use MKL for "
                "fp32 sin/cos: counts against PyTorch's CPU caches can differ "
                "slightly)");
    if (sides == 2) {
        const bp_buf_t *a[3] = {&rope[0].inv_freq, &rope[0].cos, &rope[0].sin};
        const bp_buf_t *b[3] = {&rope[1].inv_freq, &rope[1].cos, &rope[1].sin};
        for (int k = 0; k < 3; k++) {
            bp_status st = bp_compare(a[k], b[k], NULL, NULL, &r->buf[k], err);
            if (st)
                return bp_error_prefix(err, "comparing %s: ",
                                       bp_stack_buf_names[k]);
        }
        r->have_buffers = true;
    }
    r->t_buffers = bp_timing_now() - t0;
    return BP_OK;
}

static bp_status upload(bp_stack_dev_t *ops, const bp_buf_t *host, bp_buf_t *dev,
                        bp_error_t *err)
{
    bp_status st =
        ops->alloc(ops, dev, host->dtype, host->ndim, host->shape, err);
    return st ? st : ops->put(ops, dev, host->data, err);
}

static void host_free(bp_buf_t *b, size_t n)
{
    for (size_t i = 0; b && i < n; i++)
        bp_buf_free(&b[i]);
    free(b);
}

typedef struct {
    bp_buf_t *hidden; /* layers */
    bp_buf_t logits, logp;
} outs_t;

static void outs_free(outs_t *x, size_t L)
{
    host_free(x->hidden, L);
    bp_buf_free(&x->logits);
    bp_buf_free(&x->logp);
    memset(x, 0, sizeof *x);
}

static bp_status forward(bp_stack_model_t *m, const bp_buf_t *cs,
                         bool keep_layers, outs_t *x, bp_stack_result_t *r,
                         bp_error_t *err)
{
    size_t L = (size_t)m->cfg->layers;
    if (keep_layers && !x->hidden && !(x->hidden = calloc(L, sizeof *x->hidden)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    double t;
    bp_status st = bp_stack_forward(m, &cs[0], &cs[1], x->hidden, &x->logits,
                                    &x->logp, &t, err);
    if (!st)
        r->t_forward[r->nforward++] = t;
    return st;
}

/* Side 0's later forwards against its first: every kept tensor bitwise. */
static bp_status repeats(const bp_stack_opts_t *o, bp_stack_model_t *m,
                         const bp_buf_t *cs, const outs_t *first,
                         bp_stack_result_t *r, bp_error_t *err)
{
    size_t L = (size_t)o->cfg.layers;
    bool keep = first->hidden != NULL;
    outs_t again = {0};
    bp_status st = BP_OK;
    r->repeat = o->repeat;
    for (int k = 2; !st && k <= o->repeat; k++) {
        progress(o, "forward: repeat %d of %d", k, o->repeat);
        if ((st = forward(m, cs, keep, &again, r, err)))
            break;
        size_t n = keep ? L + 2 : 2, differ = 0;
        for (size_t i = 0; !st && i < n; i++) {
            const bp_buf_t *a = i < n - 2 ? &first->hidden[i]
                                : i == n - 2 ? &first->logits : &first->logp;
            const bp_buf_t *b = i < n - 2 ? &again.hidden[i]
                                : i == n - 2 ? &again.logits : &again.logp;
            bp_cmp_t c;
            if ((st = bp_compare(a, b, NULL, NULL, &c, err)))
                break;
            differ += c.mismatched > 0;
            bp_cmp_free(&c);
        }
        if (differ && !r->repeat_first_bad)
            r->repeat_first_bad = k;
        r->repeat_differ += differ;
    }
    outs_free(&again, L);
    return st;
}

static bp_status compare_outs(const bp_stack_opts_t *o, const outs_t *x,
                              bp_stack_result_t *r, bp_error_t *err)
{
    int L = (int)o->cfg.layers;
    if (!(r->layers = calloc((size_t)L, sizeof *r->layers)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int l = 0; l < L; l++) {
        bp_stack_layer_t *y = &r->layers[l];
        y->layer = l + 1;
        bp_status st = bp_compare(&x[0].hidden[l], &x[1].hidden[l], NULL, NULL,
                                  &y->cmp, err);
        if (st)
            return bp_error_prefix(err, "comparing layer %d: ", l + 1);
        r->nlayers = l + 1;
        y->median_ulp = bp_cmp_percentile_ulp(&y->cmp, 50);
        bp_stack_rms(&x[0].hidden[l], &x[1].hidden[l], &y->rms_diff,
                     &y->rms_ref);
    }
    bp_status st = bp_compare(&x[0].logits, &x[1].logits, NULL, NULL,
                              &r->logits, err);
    if (!st)
        st = bp_compare(&x[0].logp, &x[1].logp, NULL, NULL, &r->logp, err);
    if (st)
        return st;
    r->top1_total = (size_t)x[0].logits.shape[0];
    bp_stack_final_metrics(&x[0].logits, &x[1].logits, &x[0].logp,
                           &x[1].logp, &r->top1_agree, &r->mean_kl,
                           &r->max_kl);
    r->have_forward = true;
    return BP_OK;
}

static void apply_policy(const bp_stack_opts_t *o, bp_stack_result_t *r)
{
    const bp_stack_policy_t *p = &o->policy;
    char *m = r->policy_msg;
    size_t n = sizeof r->policy_msg, len = 0;
    r->policy_pass = true;
    m[0] = '\0';
    if (!r->have_forward)
        return;
    double top1 = r->top1_total ? (double)r->top1_agree / (double)r->top1_total
                                : 1.0;
    struct {
        double limit, value;
        bool above; /* fails when value > limit (else value < limit) */
        const char *what;
    } k[4] = {
        {p->logprob_abs, r->logp.max_abs, true, "log-prob max abs diff"},
        {p->logit_abs, r->logits.max_abs, true, "logits max abs diff"},
        {p->kl, r->mean_kl, true, "mean KL"},
        {p->top1, top1, false, "top-1 agreement"},
    };
    for (int i = 0; i < 4; i++) {
        if (k[i].limit < 0)
            continue;
        bool bad = k[i].above ? !(k[i].value <= k[i].limit)
                              : !(k[i].value >= k[i].limit);
        if (bad) {
            r->policy_pass = false;
            len += (size_t)snprintf(m + len, len < n ? n - len : 0,
                                    "%s%s %.6g %s %.6g", len ? "; " : "",
                                    k[i].what, k[i].value,
                                    k[i].above ? ">" : "<", k[i].limit);
        }
    }
}

static bp_status params(const bp_stack_opts_t *o, bp_stack_dev_t *ops, bp_buf_t *w,
                        bp_stack_result_t *r, bp_error_t *err)
{
    size_t np = bp_stack_nparams(&o->cfg);
    double t0 = bp_timing_now();
    progress(o, "parameters: generating %zu tensors on %s", np, ops->name);
    bp_status st =
        bp_stack_params_generate(ops, &o->cfg, o->seed, o->dtype, w, err);
    if (!st)
        st = ops->sync(ops, err);
    r->t_params = bp_timing_now() - t0;
    if (st || o->forward_only)
        return st;
    t0 = bp_timing_now();
    progress(o, "parameters: checking %d-way sharded generation", o->shards);
    if (!(r->params = calloc(np, sizeof *r->params)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    r->nparams = np;
    st = bp_stack_params_check(ops, &o->cfg, o->seed, o->dtype, o->shards, w,
                               r->params, err);
    for (size_t i = 0; !st && i < np; i++) {
        r->params_checked++;
        r->param_elems += r->params[i].p.numel;
        r->params_differ += r->params[i].cmp.mismatched > 0;
    }
    r->t_params_check = bp_timing_now() - t0;
    return st;
}

static bp_status run(const bp_stack_opts_t *o, devs_t *d,
                     bp_stack_rope_t *rope, bp_stack_result_t *r,
                     bp_error_t *err)
{
    bp_status st = buffers(o, d, rope, r, err);
    if (st || o->buffers_only)
        return st;
    bp_stack_dev_t *ops = d->ops;
    snprintf(r->device_desc, sizeof r->device_desc, "%s", ops->desc);
    if (strcmp(ops->name, "cpu") == 0 && o->gemm != BP_STACK_GEMM_PEDANTIC)
        note(r, "--gemm applies to cuda only");
    int sides = o->forward_only ? 1 : 2;
    size_t np = bp_stack_nparams(&o->cfg), L = (size_t)o->cfg.layers;
    bp_buf_t *w = calloc(np, sizeof *w), cs[2][2];
    memset(cs, 0, sizeof cs);
    outs_t x[2];
    memset(x, 0, sizeof x);
    bp_stack_model_t m = {0};
    r->t_forward = calloc((size_t)(sides + o->repeat), sizeof *r->t_forward);
    if (!w || !r->t_forward)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int s = 0; !st && s < sides; s++)
        if (!(st = upload(ops, &rope[s].cos, &cs[s][0], err)))
            st = upload(ops, &rope[s].sin, &cs[s][1], err);
    if (!st)
        st = params(o, ops, w, r, err);
    if (!st)
        st = bp_stack_model_open(&m, &o->cfg, o->dtype, ops, w, o->seed,
                                 o->pos_begin, o->pos_end, err);
    for (int s = 0; !st && s < sides; s++) {
        progress(o, "forward: %s side, %lld tokens", s ? "second" : "first",
                 (long long)m.T);
        st = forward(&m, cs[s], !o->forward_only, &x[s], r, err);
    }
    if (!st && sides == 2)
        st = compare_outs(o, x, r, err);
    if (!st && o->repeat > 1)
        st = repeats(o, &m, cs[0], &x[0], r, err);
    if (!st)
        apply_policy(o, r);
    bp_stack_model_close(&m);
    for (int s = 0; s < 2; s++) {
        outs_free(&x[s], L);
        for (int k = 0; k < 2; k++)
            if (cs[s][k].data || cs[s][k].dev)
                ops->release(ops, &cs[s][k]);
    }
    if (w)
        bp_stack_params_release(ops, &o->cfg, w);
    free(w);
    return st;
}

bp_status bp_stack_run(const bp_stack_opts_t *o, bp_stack_result_t *r,
                       bp_error_t *err)
{
    memset(r, 0, sizeof *r);
    r->opts = *o;
    r->policy_pass = true;
    double t0 = bp_timing_now();
    bp_status st = check_opts(o, err);
    if (st)
        return st;
    devs_t d;
    if ((st = open_devices(o, &d, err))) {
        close_devices(&d);
        return st;
    }
    bp_stack_rope_t rope[2];
    memset(rope, 0, sizeof rope);
    st = run(o, &d, rope, r, err);
    bp_stack_rope_free(&rope[0]);
    bp_stack_rope_free(&rope[1]);
    close_devices(&d);
    r->t_total = bp_timing_now() - t0;
    if (st)
        bp_stack_result_free(r);
    return st;
}
