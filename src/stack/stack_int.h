/* Internals shared by stack_init.c (RoPE buffers, parameters) and
 * stack_run.c (forward, metrics, the run); nothing else includes this but
 * the stack's tests. */
#ifndef BP_STACK_INT_H
#define BP_STACK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "probe.h"
#include "probe_build.h"
#include "stack.h"
#include "stack_ops.h"

/* RoPE buffers of one side, in host memory. */
typedef struct {
    bp_buf_t inv_freq; /* fp32 [head_dim / 2] */
    bp_buf_t cos, sin; /* model dtype [max_positions, head_dim] */
} bp_stack_rope_t;

/* The probe a side's buffers come from, built in C: the ops of
 * probes/rope-llama2.yaml (zero_init false) or
 * probes/rope-llama2-zero-init.yaml (zero_init true, the positions cast to
 * init_dtype; init_is_run: to the run dtype, as `dtype: $dtype`), with
 * dim = head dim, base = rope_base and positions = max_positions.  Run it
 * in the model dtype. */
typedef struct {
    bp_probe_build_t b;         /* b.p is the probe */
    int inv_freq_f32, cos, sin; /* indices of the buffers kept */
} bp_stack_rope_probe_t;

void bp_stack_rope_probe(bp_stack_rope_probe_t *rp, const bp_stack_cfg_t *c,
                         bool zero_init, bool init_is_run,
                         bp_dtype_t init_dtype);

/* Runs the probe on be in dtype dt and keeps inv_freq (fp32), cos, sin. */
bp_status bp_stack_rope_build(const bp_stack_cfg_t *c, bp_backend_t *be,
                              bool zero_init, bp_dtype_t init_dtype,
                              bp_dtype_t dt, bp_stack_rope_t *out,
                              bp_error_t *err);
/* Reads cos, sin and inv_freq from a safetensors file, checks their shapes
 * against c and converts them: cos/sin to dt, inv_freq to fp32 (each
 * conversion is noted in note, empty when none). */
bp_status bp_stack_rope_load(const char *path, const bp_stack_cfg_t *c,
                             bp_dtype_t dt, bp_stack_rope_t *out, char *note,
                             size_t notelen, bp_error_t *err);
void bp_stack_rope_free(bp_stack_rope_t *r);

/* Every parameter (bp_stack_nparams of them) generated whole on ops's
 * device into w (zeroed by the caller). */
bp_status bp_stack_params_generate(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                                   uint64_t seed, bp_dtype_t dt, bp_buf_t *w,
                                   bp_error_t *err);
void bp_stack_params_release(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                             bp_buf_t *w);
/* Generates every parameter again as `shards` shards, each from its own
 * counter range, gathers them and compares the result with w bit for bit;
 * out (bp_stack_nparams entries) receives each comparison. */
bp_status bp_stack_params_check(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                                uint64_t seed, bp_dtype_t dt, int shards,
                                const bp_buf_t *w, bp_stack_pcheck_t *out,
                                bp_error_t *err);
/* Parameter p as the one-device emulation gathers it: each of the W
 * shards generated from its own counters into shard (at least the
 * longest shard) and copied into place in g (p's numel elements). */
bp_status bp_stack_param_emulate(bp_stack_dev_t *ops, const bp_stack_param_t *p,
                                 uint64_t seed, int W, const bp_buf_t *shard,
                                 bp_buf_t *g, bp_error_t *err);
/* Shard r of n elements over W ranks: [r*n/W, (r+1)*n/W). */
void bp_stack_shard_range(size_t n, int W, int r, size_t *lo, size_t *hi);

/* The model on a device: weights, token ids of the window and the
 * activation buffers. */
typedef struct {
    const bp_stack_cfg_t *cfg;
    bp_dtype_t dt;
    bp_stack_dev_t *ops;
    bp_buf_t *w;
    bp_buf_t ids;
    int64_t p0, T;
    bp_buf_t h, x, q, k, v, qr, kr, a, o, g, u, m, lg, lp, sc;
} bp_stack_model_t;

bp_status bp_stack_model_open(bp_stack_model_t *m, const bp_stack_cfg_t *c,
                              bp_dtype_t dt, bp_stack_dev_t *ops, bp_buf_t *w,
                              uint64_t seed, int64_t p0, int64_t p1,
                              bp_error_t *err);
void bp_stack_model_close(bp_stack_model_t *m);
/* One forward with cos/sin (device copies, [max_positions, d]).  hidden:
 * NULL, or cfg->layers host buffers receiving the hidden state after each
 * block; logits (model dtype) and logp (fp32) receive [T, vocab] on the
 * host when not NULL.  *seconds: the forward's wall time up to the
 * log-softmax, layer downloads included, final downloads not. */
bp_status bp_stack_forward(bp_stack_model_t *m, const bp_buf_t *cos,
                           const bp_buf_t *sin, bp_buf_t *hidden,
                           bp_buf_t *logits, bp_buf_t *logp, double *seconds,
                           bp_error_t *err);

/* Final metrics of two forwards: top-1 agreement of the logits (lowest
 * index wins ties) and KL(P_a || P_b) per position, in double. */
void bp_stack_final_metrics(const bp_buf_t *logits_a, const bp_buf_t *logits_b,
                            const bp_buf_t *logp_a, const bp_buf_t *logp_b,
                            size_t *agree, double *mean_kl, double *max_kl);
/* sqrt(mean((a - b)^2)) and sqrt(mean(a^2)) in double. */
void bp_stack_rms(const bp_buf_t *a, const bp_buf_t *b, double *diff,
                  double *ref);

#endif
