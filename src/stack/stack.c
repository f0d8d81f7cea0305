/* The reference layer stack: its geometry (presets and checks), the
 * parameter table and token ids that stack.h defines, the final-output
 * policy, and the result's lifetime.  The inits are in stack_init.c, the
 * forward and the run in stack_run.c. */
#include "stack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

const char *const bp_stack_buf_names[3] = {"inv_freq", "cos", "sin"};

static const bp_stack_cfg_t presets[] = {
    {"tiny", 256, 4, 8, 688, 1024, 512, 10000.0, 1e-5},
    {"llama2-7b", 4096, 32, 32, 11008, 32000, 4096, 10000.0, 1e-5},
};

bp_status bp_stack_preset(const char *name, bp_stack_cfg_t *out,
                          bp_error_t *err)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(name, presets[i].preset) == 0) {
            *out = presets[i];
            return BP_OK;
        }
    return bp_error_set(err, BP_EINPUT,
                        "unknown preset '%s' (known: tiny, llama2-7b)", name);
}

int64_t bp_stack_head_dim(const bp_stack_cfg_t *c)
{
    return c->heads > 0 ? c->hidden / c->heads : 0;
}

/* Each field within [lo, hi]; the products below stay far from overflow
 * and every tensor within BP_BUF_MAX_BYTES. */
static bp_status field(const char *name, int64_t v, int64_t lo, int64_t hi,
                       bp_error_t *err)
{
    if (v < lo || v > hi)
        return bp_error_set(err, BP_EINPUT,
                            "--%s %lld is out of range (%lld to %lld)", name,
                            (long long)v, (long long)lo, (long long)hi);
    return BP_OK;
}

bp_status bp_stack_cfg_check(const bp_stack_cfg_t *c, bp_error_t *err)
{
    bp_status st;
    if ((st = field("hidden", c->hidden, 2, 65536, err)) ||
        (st = field("heads", c->heads, 1, 1024, err)) ||
        (st = field("layers", c->layers, 1, 1024, err)) ||
        (st = field("intermediate", c->intermediate, 1, 262144, err)) ||
        (st = field("vocab", c->vocab, 2, 1048576, err)) ||
        (st = field("max-positions", c->max_positions, 1, 1048576, err)))
        return st;
    if (c->hidden % c->heads)
        return bp_error_set(err, BP_EINPUT,
                            "--hidden %lld is not a multiple of --heads %lld",
                            (long long)c->hidden, (long long)c->heads);
    if (bp_stack_head_dim(c) % 2)
        return bp_error_set(err, BP_EINPUT,
                            "head dim %lld (hidden / heads) is odd: RoPE "
                            "rotates pairs of halves",
                            (long long)bp_stack_head_dim(c));
    if ((uint64_t)c->max_positions * (uint64_t)bp_stack_head_dim(c) >
        ((uint64_t)1 << 31))
        return bp_error_set(err, BP_EINPUT,
                            "RoPE cache of %lld x %lld elements is too large",
                            (long long)c->max_positions,
                            (long long)bp_stack_head_dim(c));
    if (!(c->rope_base > 1.0) || !(c->eps > 0.0))
        return bp_error_set(err, BP_EINPUT, "rope base and epsilon must be "
                            "positive");
    return BP_OK;
}

size_t bp_stack_nparams(const bp_stack_cfg_t *c)
{
    return 3 + 9 * (size_t)c->layers;
}

static float bound(int64_t fan_in)
{
    return (float)(1.0 / sqrt((double)fan_in));
}

void bp_stack_param(const bp_stack_cfg_t *c, size_t i, bp_stack_param_t *p)
{
    static const int per_layer[9] = {BP_SP_ATTN_NORM, BP_SP_Q,   BP_SP_K,
                                     BP_SP_V,         BP_SP_O,   BP_SP_MLP_NORM,
                                     BP_SP_GATE,      BP_SP_UP,  BP_SP_DOWN};
    static const char *const names[] = {
        "",
        "model.embed_tokens.weight",
        "input_layernorm.weight",
        "self_attn.q_proj.weight",
        "self_attn.k_proj.weight",
        "self_attn.v_proj.weight",
        "self_attn.o_proj.weight",
        "post_attention_layernorm.weight",
        "mlp.gate_proj.weight",
        "mlp.up_proj.weight",
        "mlp.down_proj.weight",
        "model.norm.weight",
        "lm_head.weight",
    };
    memset(p, 0, sizeof *p);
    size_t nl = 9 * (size_t)c->layers;
    if (i == 0) {
        p->kind = BP_SP_EMBED;
    } else if (i <= nl) {
        p->kind = per_layer[(i - 1) % 9];
        p->layer = (int)((i - 1) / 9);
    } else {
        p->kind = i == nl + 1 ? BP_SP_NORM : BP_SP_LM_HEAD;
    }
    int64_t H = c->hidden, I = c->intermediate, V = c->vocab;
    float b = bound(H);
    switch (p->kind) {
    case BP_SP_EMBED:
        p->ndim = 2, p->shape[0] = V, p->shape[1] = H;
        b = (float)sqrt(3.0);
        break;
    case BP_SP_ATTN_NORM:
    case BP_SP_MLP_NORM:
    case BP_SP_NORM: p->ndim = 1, p->shape[0] = H; break;
    case BP_SP_GATE:
    case BP_SP_UP: p->ndim = 2, p->shape[0] = I, p->shape[1] = H; break;
    case BP_SP_DOWN:
        p->ndim = 2, p->shape[0] = H, p->shape[1] = I;
        b = bound(I);
        break;
    case BP_SP_LM_HEAD: p->ndim = 2, p->shape[0] = V, p->shape[1] = H; break;
    default: p->ndim = 2, p->shape[0] = H, p->shape[1] = H; break;
    }
    bool norm = p->kind == BP_SP_ATTN_NORM || p->kind == BP_SP_MLP_NORM ||
                p->kind == BP_SP_NORM;
    p->low = norm ? 0.5f : -b;
    p->high = norm ? 1.5f : b;
    p->numel = (size_t)p->shape[0] * (p->ndim == 2 ? (size_t)p->shape[1] : 1);
    p->stream = ((uint64_t)p->kind << 32) | (uint64_t)p->layer;
    if (p->kind == BP_SP_EMBED || p->kind == BP_SP_NORM ||
        p->kind == BP_SP_LM_HEAD)
        snprintf(p->name, sizeof p->name, "%s", names[p->kind]);
    else
        snprintf(p->name, sizeof p->name, "model.layers.%d.%s", p->layer,
                 names[p->kind]);
}

void bp_stack_tokens(const bp_stack_cfg_t *c, uint64_t seed, int64_t p0,
                     int64_t n, int32_t *ids)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int64_t t = 0; t < n; t++) {
        uint64_t p = (uint64_t)(p0 + t);
        const uint32_t ctr[4] = {(uint32_t)p, (uint32_t)(p >> 32),
                                 BP_SP_TOKENS, 0};
        uint32_t r[4];
        bp_philox4x32_10(ctr, key, r);
        ids[t] = (int32_t)(((uint64_t)r[0] * (uint64_t)c->vocab) >> 32);
    }
}

void bp_stack_policy_none(bp_stack_policy_t *p)
{
    p->logprob_abs = p->logit_abs = p->kl = p->top1 = -1.0;
}

bp_status bp_stack_policy_parse(const char *s, bp_stack_policy_t *p,
                                bp_error_t *err)
{
    bp_stack_policy_t q;
    bp_stack_policy_none(&q);
    char buf[512];
    if (strlen(s) >= sizeof buf)
        return bp_error_set(err, BP_EINPUT, "policy '%.40s...' is too long",
                            s);
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int n = 0;
    for (char *it = strtok_r(buf, ",", &save); it;
         it = strtok_r(NULL, ",", &save), n++) {
        char *eq = strpbrk(it, "=:");
        if (!eq)
            return bp_error_set(err, BP_EINPUT,
                                "policy item '%s' is not KEY=VALUE", it);
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        if (eq[1] == '\0' || *end || !isfinite(v) || v < 0)
            return bp_error_set(err, BP_EINPUT,
                                "policy item '%s': '%s' is not a number >= 0",
                                it, eq + 1);
        double *slot = strcmp(it, "logprob_abs") == 0 ? &q.logprob_abs
                       : strcmp(it, "logit_abs") == 0 ? &q.logit_abs
                       : strcmp(it, "kl") == 0        ? &q.kl
                       : strcmp(it, "top1") == 0      ? &q.top1
                                                      : NULL;
        if (!slot)
            return bp_error_set(err, BP_EINPUT,
                                "unknown policy key '%s' (known: logprob_abs, "
                                "logit_abs, kl, top1)", it);
        if (*slot >= 0)
            return bp_error_set(err, BP_EINPUT, "policy key '%s' repeated",
                                it);
        if (slot == &q.top1 && v > 1)
            return bp_error_set(err, BP_EINPUT,
                                "policy top1=%s: a fraction of positions, "
                                "0 to 1", eq + 1);
        *slot = v;
    }
    if (!n)
        return bp_error_set(err, BP_EINPUT, "empty policy");
    *p = q;
    return BP_OK;
}

void bp_stack_opts_init(bp_stack_opts_t *o)
{
    memset(o, 0, sizeof *o);
    bp_stack_preset("tiny", &o->cfg, NULL);
    o->dtype = BP_BF16;
    o->init_dtype = BP_BF16;
    o->pos_begin = 0;
    o->pos_end = o->cfg.max_positions;
    o->shards = 8;
    o->device = "cpu";
    o->side[0] = BP_STACK_UNSHARDED;
    o->side[1] = BP_STACK_SHARDED;
    o->repeat = 1;
    bp_stack_policy_none(&o->policy);
}

void bp_stack_result_free(bp_stack_result_t *r)
{
    for (size_t i = 0; i < r->nparams; i++)
        bp_cmp_free(&r->params[i].cmp);
    free(r->params);
    for (int i = 0; i < 3; i++)
        bp_cmp_free(&r->buf[i]);
    for (int i = 0; i < r->nlayers; i++)
        bp_cmp_free(&r->layers[i].cmp);
    free(r->layers);
    bp_cmp_free(&r->logits);
    bp_cmp_free(&r->logp);
    free(r->t_forward);
    for (int i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    memset(r, 0, sizeof *r);
}

bool bp_stack_failed(const bp_stack_result_t *r)
{
    return r->params_differ > 0 || r->repeat_differ > 0 || !r->policy_pass;
}
