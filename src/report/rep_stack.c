/* The stack's text report and its JSON object (see rep_stack.h).  Side A is
 * the reference (opts.side[0]), side B the one compared with it; every
 * figure is B against A from the comparison engine. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "esc.h"
#include "jsonval.h"
#include "rep_stack.h"

static const char *init_name(bp_stack_init_t i)
{
    return i == BP_STACK_UNSHARDED ? "unsharded" : "sharded";
}

static double frac(size_t a, size_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static void header(FILE *f, const bp_stack_result_t *r)
{
    const bp_stack_opts_t *o = &r->opts;
    const bp_stack_cfg_t *c = &o->cfg;
    fprintf(f,
            "stack: %s (hidden %lld, %lld heads of %lld, %lld layers, "
            "intermediate %lld, vocab %lld, %lld positions), %s model, init "
            "dtype %s\n",
            c->preset, (long long)c->hidden, (long long)c->heads,
            (long long)bp_stack_head_dim(c), (long long)c->layers,
            (long long)c->intermediate, (long long)c->vocab,
            (long long)c->max_positions, bp_dtype_name(o->dtype),
            bp_dtype_name(o->init_dtype));
    if (r->device_desc[0])
        bp_esc_printf(f, "  device: %s\n", r->device_desc);
    if (!o->buffers_only)
        fprintf(f, "  tokens: positions %lld:%lld (%lld), seed %" PRIu64 "\n",
                (long long)o->pos_begin, (long long)o->pos_end,
                (long long)(o->pos_end - o->pos_begin), o->seed);
    bp_esc_printf(f, "  side A: %s\n", r->side_desc[0]);
    if (!o->forward_only)
        bp_esc_printf(f, "  side B: %s\n", r->side_desc[1]);
}

static void params(FILE *f, const bp_stack_result_t *r)
{
    if (!r->nparams)
        return;
    fprintf(f, "parameters: %zu tensors, %zu elements; %d-way sharded "
            "generation, gathered: ", r->nparams, r->param_elems,
            r->opts.shards);
    if (!r->params_differ) {
        fprintf(f, "bit-identical to the unsharded parameters (all %zu)\n",
                r->params_checked);
        return;
    }
    fprintf(f, "%zu of %zu tensors DIFFER\n", r->params_differ,
            r->params_checked);
    for (size_t i = 0; i < r->nparams; i++) {
        const bp_cmp_t *c = &r->params[i].cmp;
        if (c->mismatched)
            fprintf(f, "  %s: %zu of %zu element%s differ, max %" PRIu64
                    " ulp\n", r->params[i].p.name, c->mismatched, c->total,
                    c->total == 1 ? "" : "s", c->max_ulp);
    }
}

static void hist(FILE *f, const bp_cmp_t *c)
{
    fprintf(f, "      ulp histogram:");
    for (int i = 0; i < BP_HIST_BINS; i++) {
        int b = bp_hist_at(i);
        if (c->hist[b])
            fprintf(f, " %s:%" PRIu64, bp_hist_label(b), c->hist[b]);
    }
    fputc('\n', f);
}

static void buffers(FILE *f, const bp_stack_result_t *r)
{
    if (!r->have_buffers)
        return;
    fprintf(f, "buffers (B vs A):\n");
    for (int k = 0; k < 3; k++) {
        const bp_cmp_t *c = &r->buf[k];
        char shape[64];
        bp_shape_format(c->ndim, c->shape, shape, sizeof shape);
        fprintf(f, "  %-8s %-4s %-12s ", bp_stack_buf_names[k],
                bp_dtype_name(c->dtype), shape);
        if (!c->mismatched) {
            fprintf(f, "bit-identical (%zu element%s)\n", c->total, c->total == 1 ? "" : "s");
            continue;
        }
        fprintf(f, "%zu of %zu differ (%.2f%%), max abs %.9g, max rel %.6g, "
                "max %" PRIu64 " ulp\n", c->mismatched, c->total,
                100.0 * frac(c->mismatched, c->total), c->max_abs, c->max_rel,
                c->max_ulp);
        hist(f, c);
    }
}

static void ulp_cell(FILE *f, double u)
{
    if (isinf(u))
        fprintf(f, " %9s", "inf");
    else
        fprintf(f, " %9.0f", u);
}

static void layers(FILE *f, const bp_stack_result_t *r)
{
    if (!r->have_forward)
        return;
    fprintf(f, "per layer (hidden state after each block, B vs A):\n");
    fprintf(f, "  %5s %11s %12s %12s %9s %9s %12s %12s\n", "layer",
            "mismatched", "max abs", "max rel", "med ulp", "max ulp",
            "rms diff", "rms");
    for (int l = 0; l < r->nlayers; l++) {
        const bp_stack_layer_t *y = &r->layers[l];
        const bp_cmp_t *c = &y->cmp;
        fprintf(f, "  %5d %10.4f%% %12.6g %12.6g", y->layer,
                100.0 * frac(c->mismatched, c->total), c->max_abs, c->max_rel);
        ulp_cell(f, y->median_ulp);
        ulp_cell(f, c->max_ulp == UINT64_MAX ? INFINITY : (double)c->max_ulp);
        fprintf(f, " %12.6g %12.6g\n", y->rms_diff, y->rms_ref);
    }
    char shape[64];
    bp_shape_format(r->logits.ndim, r->logits.shape, shape, sizeof shape);
    fprintf(f, "final (logits %s, B vs A):\n", shape);
    fprintf(f, "  logits max abs diff    %.9g (%zu of %zu differ)\n",
            r->logits.max_abs, r->logits.mismatched, r->logits.total);
    fprintf(f, "  log-prob max abs diff  %.9g\n", r->logp.max_abs);
    fprintf(f, "  top-1 agreement        %zu of %zu positions (%.2f%%)\n",
            r->top1_agree, r->top1_total,
            100.0 * frac(r->top1_agree, r->top1_total));
    fprintf(f, "  mean KL(A || B)        %.6g nats per position (max %.6g)\n",
            r->mean_kl, r->max_kl);
}

static void timings(FILE *f, const bp_stack_result_t *r)
{
    if (r->nforward) {
        fprintf(f, "forward:");
        for (int i = 0; i < r->nforward; i++)
            fprintf(f, "%s %.3f s", i ? "," : "", r->t_forward[i]);
        int sides = r->opts.forward_only ? 1 : 2;
        fprintf(f, " (%s%s)", sides == 2 ? "A, B" : "A",
                r->nforward > sides ? ", then the repeats of A" : "");
        fprintf(f, "; parameters %.3f s", r->t_params);
        if (r->nparams)
            fprintf(f, ", sharded check %.3f s", r->t_params_check);
        fputc('\n', f);
    }
    if (r->repeat > 1) {
        if (!r->repeat_differ)
            fprintf(f, "repeat: %d forwards of A bit-identical\n", r->repeat);
        else
            fprintf(f, "repeat: %d forwards of A: %zu tensors DIFFER from "
                    "the first forward (first in forward %d)\n", r->repeat,
                    r->repeat_differ, r->repeat_first_bad);
    }
}

int bp_rep_stack_text(FILE *f, const bp_stack_result_t *r, bool color)
{
    const char *red = color ? "\033[31m" : "", *off = color ? "\033[0m" : "";
    header(f, r);
    params(f, r);
    buffers(f, r);
    layers(f, r);
    timings(f, r);
    const bp_stack_policy_t *p = &r->opts.policy;
    bool judged = p->logprob_abs >= 0 || p->logit_abs >= 0 || p->kl >= 0 || p->top1 >= 0;
    if (judged) {
        if (r->policy_pass)
            fprintf(f, "policy: within\n");
        else
            fprintf(f, "policy: %sEXCEEDED%s: %s\n", red, off, r->policy_msg);
    }
    for (int i = 0; i < r->nnotes; i++)
        bp_esc_printf(f, "note: %s\n", r->notes[i]);
    if (bp_stack_failed(r))
        fprintf(f, "summary: %sFAIL%s%s%s%s\n", red, off,
                r->params_differ ? " (sharded parameters differ)" : "",
                r->repeat_differ ? " (repeated forwards differ)" : "",
                r->policy_pass ? "" : " (policy exceeded)");
    else if (judged)
        fprintf(f, "summary: ok (within --policy)\n");
    else /* ok says only that nothing the stack itself checks failed */
        fprintf(f, "summary: ok (no --policy: drift reported, not judged)\n");
    return ferror(f) ? 2 : 0;
}

/* ---- JSON -------------------------------------------------------------- */

static json_t *shape(const bp_cmp_t *c)
{
    json_t *a = json_array();
    for (int d = 0; a && d < c->ndim; d++)
        json_array_append_new(a, json_integer(c->shape[d]));
    return a;
}

static json_t *histogram(const bp_cmp_t *c)
{
    json_t *h = json_object();
    for (int i = 0; h && i < BP_HIST_BINS; i++) {
        int b = bp_hist_at(i);
        if (c->hist[b])
            json_object_set_new(h, bp_hist_label(b),
                                json_integer((json_int_t)c->hist[b]));
    }
    return h;
}

static json_t *cmp_json(const char *name, const bp_cmp_t *c)
{
    return json_pack("{s:s, s:s, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
                     "name", name, "dtype", bp_dtype_name(c->dtype), "shape",
                     shape(c), "total", (json_int_t)c->total, "mismatched",
                     (json_int_t)c->mismatched, "fraction",
                     bp_json_num(frac(c->mismatched, c->total)), "max_abs",
                     bp_json_num(c->max_abs), "max_rel", bp_json_num(c->max_rel), "max_ulp",
                     bp_json_ulp(c->max_ulp), "histogram", histogram(c));
}

static json_t *layers_json(const bp_stack_result_t *r)
{
    json_t *a = json_array();
    for (int l = 0; a && l < r->nlayers; l++) {
        const bp_stack_layer_t *y = &r->layers[l];
        const bp_cmp_t *c = &y->cmp;
        json_array_append_new(
            a, json_pack("{s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                         "layer", y->layer, "total", (json_int_t)c->total,
                         "mismatched", (json_int_t)c->mismatched,
                         "mismatched_fraction",
                         bp_json_num(frac(c->mismatched, c->total)), "max_abs",
                         bp_json_num(c->max_abs), "max_rel", bp_json_num(c->max_rel),
                         "median_ulp", bp_json_num(y->median_ulp), "max_ulp",
                         bp_json_ulp(c->max_ulp), "rms_diff", bp_json_num(y->rms_diff),
                         "rms_ref", bp_json_num(y->rms_ref)));
    }
    return a;
}

static json_t *limit(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

json_t *bp_rep_stack_json(const bp_stack_result_t *r)
{
    const bp_stack_opts_t *o = &r->opts;
    const bp_stack_cfg_t *c = &o->cfg;
    json_t *j = json_object();
    if (!j)
        return NULL;
    json_object_set_new(
        j, "config",
        json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
                  "preset", c->preset, "hidden", (json_int_t)c->hidden,
                  "heads", (json_int_t)c->heads, "head_dim",
                  (json_int_t)bp_stack_head_dim(c), "layers",
                  (json_int_t)c->layers, "intermediate",
                  (json_int_t)c->intermediate, "vocab", (json_int_t)c->vocab,
                  "max_positions", (json_int_t)c->max_positions, "rope_base",
                  c->rope_base, "eps", c->eps));
    json_object_set_new(j, "dtype", json_string(bp_dtype_name(o->dtype)));
    json_object_set_new(j, "init_dtype",
                        json_string(bp_dtype_name(o->init_dtype)));
    json_object_set_new(j, "device", json_string(o->device));
    json_object_set_new(j, "device_desc", json_string(r->device_desc));
    json_object_set_new(j, "gemm", json_string(o->gemm == BP_STACK_GEMM_PEDANTIC
                                                   ? "pedantic"
                                                   : "default"));
    json_object_set_new(j, "positions",
                        json_pack("[I, I]", (json_int_t)o->pos_begin,
                                  (json_int_t)o->pos_end));
    json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(j, "shards", json_integer(o->shards));
    json_t *sides = json_array();
    for (int s = 0; s < (o->forward_only ? 1 : 2); s++)
        json_array_append_new(
            sides, json_pack("{s:s, s:s, s:s?}", "init", init_name(o->side[s]),
                             "desc", r->side_desc[s], "file", o->from[s]));
    json_object_set_new(j, "sides", sides);
    json_object_set_new(
        j, "params",
        json_pack("{s:I, s:I, s:I, s:i, s:I, s:b}", "tensors",
                  (json_int_t)r->nparams, "checked",
                  (json_int_t)r->params_checked, "elements",
                  (json_int_t)r->param_elems, "shards", o->shards, "differ",
                  (json_int_t)r->params_differ,
                  "identical", r->params_checked && !r->params_differ));
    json_t *bufs = json_array();
    for (int k = 0; r->have_buffers && k < 3; k++)
        json_array_append_new(bufs, cmp_json(bp_stack_buf_names[k], &r->buf[k]));
    json_object_set_new(j, "buffers", bufs);
    json_object_set_new(j, "layers", layers_json(r));
    if (r->have_forward)
        json_object_set_new(
            j, "final",
            json_pack("{s:o, s:I, s:o, s:I, s:I, s:o, s:o, s:o}",
                      "logits_max_abs", bp_json_num(r->logits.max_abs),
                      "logits_mismatched", (json_int_t)r->logits.mismatched,
                      "logprob_max_abs", bp_json_num(r->logp.max_abs), "top1_agree",
                      (json_int_t)r->top1_agree, "top1_total",
                      (json_int_t)r->top1_total, "top1_fraction",
                      bp_json_num(frac(r->top1_agree, r->top1_total)), "mean_kl",
                      bp_json_num(r->mean_kl), "max_kl", bp_json_num(r->max_kl)));
    else
        json_object_set_new(j, "final", json_null());
    json_object_set_new(j, "repeat",
                        json_pack("{s:i, s:b, s:I, s:i}", "runs",
                                  r->repeat > 1 ? r->repeat : 1, "identical",
                                  r->repeat_differ == 0, "differ",
                                  (json_int_t)r->repeat_differ, "first_bad",
                                  r->repeat_first_bad));
    const bp_stack_policy_t *p = &o->policy;
    json_object_set_new(
        j, "policy",
        json_pack("{s:b, s:s, s:o, s:o, s:o, s:o}", "pass", r->policy_pass,
                  "message", r->policy_msg, "logprob_abs",
                  limit(p->logprob_abs), "logit_abs", limit(p->logit_abs),
                  "kl", limit(p->kl), "top1", limit(p->top1)));
    json_t *tf = json_array();
    for (int i = 0; i < r->nforward; i++)
        json_array_append_new(tf, json_real(r->t_forward[i]));
    json_object_set_new(j, "timings",
                        json_pack("{s:f, s:f, s:f, s:o, s:f}", "buffers_s",
                                  r->t_buffers, "params_s", r->t_params,
                                  "params_check_s", r->t_params_check,
                                  "forward_s", tf, "total_s", r->t_total));
    json_t *notes = json_array();
    for (int i = 0; i < r->nnotes; i++)
        json_array_append_new(notes, json_string(r->notes[i]));
    json_object_set_new(j, "notes", notes);
    json_object_set_new(j, "pass", json_boolean(!bp_stack_failed(r)));
    return j;
}
