/* The reference layer stack: a Llama-style decoder whose weights and token
 * ids come from the counter-based generator, run twice on one device with
 * two initialisations of its RoPE buffers, and the drift between the two
 * measured layer by layer with the comparison engine.
 *
 * The model (transformers' LlamaForCausalLM, eager attention, batch 1):
 *   h = embed_tokens[ids]
 *   per layer:  x = rmsnorm(h) * w_in;  q, k, v = x Wq^T, x Wk^T, x Wv^T
 *               q = q*cos + rotate_half(q)*sin (per head; the same for k)
 *               a = softmax(q k^T / sqrt(d) + causal mask) v   (per head)
 *               h = h + a Wo^T
 *               x = rmsnorm(h) * w_post;  h = h + (silu(x Wg^T) * x Wu^T) Wd^T
 *   logits = (rmsnorm(h) * w_final) Wlm^T;  logp = log_softmax(float(logits))
 * Every tensor op rounds its result to the model dtype, as PyTorch's eager
 * ops do (stack_ops.h gives each op's arithmetic).
 *
 * Generated values (seed = --seed; bp_rng_uniform and Philox as in rng.h):
 *   parameter P (kind k, layer l: 0 for the global ones) uses stream
 *   (k << 32) | l and element i of its row-major flattening is
 *   bp_rng_uniform(seed, stream, i, -b, b) rounded to the model dtype, with
 *     k = 1   embed_tokens [V, H]            b = sqrt(3) (unit variance)
 *     k = 2   input_layernorm [H]            in [0.5, 1.5) instead
 *     k = 3-6 q, k, v, o_proj [H, H]         b = 1/sqrt(H)
 *     k = 7   post_attention_layernorm [H]   in [0.5, 1.5)
 *     k = 8-9 gate, up_proj [I, H]           b = 1/sqrt(H)
 *     k = 10  down_proj [H, I]               b = 1/sqrt(I)
 *     k = 11  norm [H]                       in [0.5, 1.5)
 *     k = 12  lm_head [V, H]                 b = 1/sqrt(H)
 *   (1/sqrt(fan_in) is nn.Linear's default bound); each b is computed in
 *   double and rounded to float once.  The token at
 *   absolute position p is (Philox(ctr = (p, 0, 13, 0), key = (seed lo,
 *   seed hi)) word 0 * V) >> 32, so a window of positions sees the same
 *   tokens wherever it starts.
 * Sharded generation over W ranks: rank r generates elements
 * [r*n/W, (r+1)*n/W) (integer division) of each parameter from the same
 * counters; the gathered parameter must equal the unsharded one bit for bit
 * (checked with bp_compare for every parameter).
 *
 * RoPE buffers, two inits (the ops of probes/rope-llama2.yaml and
 * probes/rope-llama2-zero-init.yaml with dim = head dim, base = rope_base,
 * positions = max_positions):
 *   unsharded: on the CPU backend in fp32, cos/sin cast to the model dtype
 *     at the end, then copied to the forward device;
 *   sharded: the same ops on the forward device's backend, with the
 *     positions arange cast to the init dtype at once (zero.Init), cos/sin
 *     cast to the model dtype.
 * inv_freq is compared in fp32, the precision the caches are computed from.
 * Either side may instead be read from a safetensors file (cos, sin in
 * [max_positions, head_dim]; inv_freq [head_dim/2]). */
#ifndef BP_STACK_H
#define BP_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "compare.h"
#include "error.h"

typedef struct bp_stack_cfg {
    char preset[32];
    int64_t hidden, heads, layers, intermediate, vocab, max_positions;
    double rope_base; /* 10000 */
    double eps;       /* RMSNorm epsilon (1e-5) */
} bp_stack_cfg_t;

/* "tiny" or "llama2-7b"; BP_EINPUT naming the known ones otherwise. */
bp_status bp_stack_preset(const char *name, bp_stack_cfg_t *out,
                          bp_error_t *err);
/* Sizes positive, hidden a multiple of heads, an even head dim, limits on
 * every field (a shape must fit a buffer). */
bp_status bp_stack_cfg_check(const bp_stack_cfg_t *c, bp_error_t *err);
int64_t bp_stack_head_dim(const bp_stack_cfg_t *c);

/* Parameters, in the order they are generated. */
enum {
    BP_SP_EMBED = 1, BP_SP_ATTN_NORM, BP_SP_Q, BP_SP_K, BP_SP_V, BP_SP_O,
    BP_SP_MLP_NORM, BP_SP_GATE, BP_SP_UP, BP_SP_DOWN, BP_SP_NORM,
    BP_SP_LM_HEAD, BP_SP_TOKENS
};
typedef struct {
    char name[64]; /* transformers' name: model.layers.3.mlp.up_proj.weight */
    int kind;      /* BP_SP_* */
    int layer;     /* 0-based; 0 for the global parameters */
    int ndim;
    int64_t shape[2];
    size_t numel;
    uint64_t stream;
    float low, high;
} bp_stack_param_t;

size_t bp_stack_nparams(const bp_stack_cfg_t *c);
void bp_stack_param(const bp_stack_cfg_t *c, size_t i, bp_stack_param_t *out);
/* Token ids at positions [p0, p0 + n) into ids. */
void bp_stack_tokens(const bp_stack_cfg_t *c, uint64_t seed, int64_t p0,
                     int64_t n, int32_t *ids);

typedef enum { BP_STACK_UNSHARDED, BP_STACK_SHARDED } bp_stack_init_t;
typedef enum { BP_STACK_GEMM_PEDANTIC, BP_STACK_GEMM_DEFAULT } bp_stack_gemm_t;

/* Policy on the final outputs; a limit < 0 is unset. */
typedef struct {
    double logprob_abs, logit_abs, kl;
    double top1; /* least top-1 agreement, a fraction */
} bp_stack_policy_t;

void bp_stack_policy_none(bp_stack_policy_t *p);
/* "logprob_abs=0.5,kl=1e-3,top1=0.99,logit_abs=2" */
bp_status bp_stack_policy_parse(const char *s, bp_stack_policy_t *p,
                                bp_error_t *err);

typedef struct bp_stack_opts {
    bp_stack_cfg_t cfg;
    bp_dtype_t dtype;      /* model dtype: fp32, bf16, fp16 */
    bp_dtype_t init_dtype; /* sharded init's positions cast */
    int64_t pos_begin, pos_end;
    int shards;
    uint64_t seed;
    const char *device;    /* "cpu" or "cuda" */
    int gpu;
    bp_stack_gemm_t gemm;
    bp_stack_init_t side[2];     /* side 0 is the reference */
    const char *from[2];         /* buffers of side s from this file */
    bool buffers_only;     /* stop after the buffer comparison */
    bool forward_only;     /* side 0 alone: no comparison (timing) */
    int repeat;            /* forwards of side 0 (>= 1) */
    bp_stack_policy_t policy;
    /* progress lines (may be NULL) */
    void (*progress)(void *ctx, const char *msg);
    void *progress_ctx;
} bp_stack_opts_t;

void bp_stack_opts_init(bp_stack_opts_t *o);

typedef struct {
    bp_stack_param_t p;
    bp_cmp_t cmp; /* unsharded vs gathered */
} bp_stack_pcheck_t;

typedef struct {
    int layer;            /* 1-based: hidden state after block `layer` */
    bp_cmp_t cmp;
    double median_ulp;    /* bp_cmp_percentile_ulp(cmp, 50) */
    double rms_diff;      /* sqrt(mean((a - b)^2)) */
    double rms_ref;       /* sqrt(mean(a^2)) */
} bp_stack_layer_t;

typedef struct bp_stack_result {
    bp_stack_opts_t opts;
    char side_desc[2][160];  /* how each side's buffers were made */
    char device_desc[160];
    /* parameters (empty with buffers_only / forward_only) */
    bp_stack_pcheck_t *params;
    size_t nparams, params_checked, params_differ;
    size_t param_elems;
    /* buffers: inv_freq (fp32), cos, sin (model dtype) */
    bool have_buffers;
    bp_cmp_t buf[3];
    /* per layer, final */
    bool have_forward;
    bp_stack_layer_t *layers;
    int nlayers;
    bp_cmp_t logits, logp;
    size_t top1_agree, top1_total;
    double mean_kl, max_kl;
    /* repeat: forwards 2..repeat of side 0 against the first */
    int repeat;
    size_t repeat_differ;     /* tensors (layers, logits, logp) that differ */
    int repeat_first_bad;     /* first run that differed, or 0 */
    /* policy */
    bool policy_pass;
    char policy_msg[256];
    /* seconds */
    double t_buffers, t_params, t_params_check, t_total;
    double *t_forward;        /* per forward: side 0 first, then side 1,
                                 then the repeats */
    int nforward;
    char *notes[8];
    int nnotes;
} bp_stack_result_t;

extern const char *const bp_stack_buf_names[3];

/* Runs everything the options ask for.  BP_EINPUT for bad options or files
 * (the message names the option or the file), BP_EUNAVAIL for a missing
 * device; the result is filled on success and must be freed. */
bp_status bp_stack_run(const bp_stack_opts_t *o, bp_stack_result_t *res,
                       bp_error_t *err);
void bp_stack_result_free(bp_stack_result_t *res);
/* Whether the run found a failure that counts: a gathered parameter that
 * differs, a repeat that differs, or the policy exceeded. */
bool bp_stack_failed(const bp_stack_result_t *res);

#endif
