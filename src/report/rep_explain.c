/* explain as text: what the attribution means, one line per op (end-to-end,
 * introduced, inherited and masked counts, max ulp introduced), the
 * oracle's verdicts per op, then per output the counts per introducing op
 * and its first differing elements with their origin and bits. */
#include "rep_explain.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bitfmt.h"
#include "esc.h"

static void value_line(FILE *f, bp_dtype_t dt, uint64_t bits, const char *side, int width)
{
    char ex[BP_FMT_MAX], hx[BP_FMT_MAX], fl[BP_FMT_MAX];
    bp_fmt_exact(dt, bits, ex, sizeof ex);
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    bp_esc_printf(f, "%-*s %-26s %-18s %s", width, side, ex, hx, fl);
}

static const char *ulps(uint64_t u, char *buf, size_t n)
{
    if (u == UINT64_MAX)
        snprintf(buf, n, "class change");
    else
        snprintf(buf, n, "%" PRIu64 " ulp", u);
    return buf;
}

static void index_str(const bp_meta_t *m, size_t flat, char *out, size_t n)
{
    bp_buf_t shape = {.ndim = m->ndim};
    memcpy(shape.shape, m->shape, sizeof shape.shape);
    bp_index_format(&shape, flat, out, n);
}

static void header(FILE *f, const bp_explain_t *x)
{
    bp_esc_printf(f, "explain %s %s: a = %s", x->p->name, bp_dtype_name(x->dtype), x->label_a);
    if (x->source_a)
        bp_esc_printf(f, " (saved run %s)", x->source_a);
    bp_esc_printf(f, ", b = %s", x->label_b);
    if (x->source_b)
        bp_esc_printf(f, " (saved run %s)", x->source_b);
    fputc('\n', f);
    if (x->isolated)
        fprintf(f, "Each op also ran alone on %s with %s's buffers as inputs: a difference\n"
                   "that appears with identical inputs was introduced by the op; the other\n"
                   "end-to-end differences were inherited from its inputs.\n",
                BP_ESC(x->label_b), BP_ESC(x->label_a));
    else
        fprintf(f, "%s is a saved run, so no op can run on it with %s's inputs: a difference\n"
                   "counts as introduced by the first op where it appears while every input\n"
                   "element it reads is equal on both sides (first-divergence attribution).\n",
                BP_ESC(x->label_b), BP_ESC(x->label_a));
    if (!x->has_oracle)
        fprintf(f, "No oracle: no verdicts and no end results.\n");
}

static void op_table(FILE *f, const bp_explain_t *x)
{
    const bp_probe_t *p = x->p;
    char u[64], idx[96];
    fprintf(f, "\n  %3s  %-14s %-11s %9s %9s %10s %9s %7s  %s\n", "op", "buffer", "kind",
            "elements", "differ", "introduced", "inherited", "masked", "max ulp introduced");
    for (size_t i = 0; i < p->nops; i++) {
        const bp_explain_op_t *r = &x->ops[i];
        bp_esc_printf(f, "  %3zu  %-14s %-11s %9zu %9zu %10zu %9zu %7zu  ", i, p->ops[i].out,
                bp_op_name(p->ops[i].kind), r->total, r->e2e, r->introduced, r->inherited,
                r->masked);
        if (r->introduced) {
            index_str(&x->metas[i], r->max_ulp_idx, idx, sizeof idx);
            bp_esc_printf(f, "%s at %s%s\n", ulps(r->max_ulp, u, sizeof u), p->ops[i].out, idx);
        } else {
            fprintf(f, "-\n");
        }
    }
}

static void verdict_table(FILE *f, const bp_explain_t *x)
{
    const bp_probe_t *p = x->p;
    bool any = false;
    for (size_t i = 0; i < p->nops; i++)
        any |= x->ops[i].verdicts_done && x->ops[i].introduced;
    if (!any)
        return;
    char ca[80], cb[80], ua[64], ub[64];
    snprintf(ca, sizeof ca, "%s correct", x->label_a);
    snprintf(cb, sizeof cb, "%s correct", x->label_b);
    int wa = (int)strlen(ca) > 11 ? (int)strlen(ca) : 11;
    int wb = (int)strlen(cb) > 11 ? (int)strlen(cb) : 11;
    fprintf(f, "\nVerdicts on the introduced differences, against the oracle's correctly\n"
               "rounded value of each op on %s's inputs (a side is correct when it has the\n"
               "oracle's bits, i.e. lies within 0.5 ulp of the exact value):\n",
            BP_ESC(x->label_a));
    bp_esc_printf(f, "  %3s  %-14s %-11s %10s %*s %*s %8s %20s  %s\n", "op", "buffer", "kind",
            "introduced", wa, ca, wb, cb, "neither", "both within 0.5 ulp",
            "max ulp from the oracle");
    for (size_t i = 0; i < p->nops; i++) {
        const bp_explain_op_t *r = &x->ops[i];
        if (!r->verdicts_done || !r->introduced)
            continue;
        bp_esc_printf(f, "  %3zu  %-14s %-11s %10zu %*zu %*zu %8zu %20zu  %s %s, %s %s\n", i,
                p->ops[i].out, bp_op_name(p->ops[i].kind), r->introduced, wa,
                r->verdicts[BP_VERDICT_A], wb, r->verdicts[BP_VERDICT_B],
                r->verdicts[BP_VERDICT_NEITHER], r->verdicts[BP_VERDICT_BOTH], x->label_a,
                ulps(r->max_ulp_a, ua, sizeof ua), x->label_b,
                ulps(r->max_ulp_b, ub, sizeof ub));
    }
}

static void origin_block(FILE *f, const bp_explain_t *x, const bp_explain_elem_t *el, int w)
{
    const bp_probe_t *p = x->p;
    int k = el->origin;
    bp_dtype_t dt = x->metas[k].dtype;
    char idx[96], u[64], v[128];
    index_str(&x->metas[k], el->origin_index, idx, sizeof idx);
    bp_esc_printf(f, "      introduced by op %d %s at %s%s%s, with identical inputs:\n", k,
            bp_op_name(p->ops[k].kind), p->ops[k].out, idx,
            el->via_reduction ? " (through a reduction)" : "");
    fprintf(f, "        ");
    value_line(f, dt, el->oa, x->label_a, w);
    if (el->has_oracle)
        bp_esc_printf(f, "  %s from the oracle", ulps(el->ulp_a, u, sizeof u));
    fprintf(f, "\n        ");
    value_line(f, dt, el->ob, x->label_b, w);
    if (el->has_oracle)
        bp_esc_printf(f, "  %s from the oracle", ulps(el->ulp_b, u, sizeof u));
    fputc('\n', f);
    if (!el->has_oracle)
        return;
    if (!x->oracle_is_a && !x->oracle_is_b) {
        /* A saved run may be called "oracle" too. */
        bool taken = !strcmp(x->label_a, "oracle") || !strcmp(x->label_b, "oracle");
        fprintf(f, "        ");
        value_line(f, dt, el->oo, taken ? "MPFR" : "oracle", w);
        fputc('\n', f);
    }
    bp_esc_printf(f, "        verdict: %s\n",
            bp_verdict_name(el->verdict, x->label_a, x->label_b, v, sizeof v));
}

static void end_block(FILE *f, const bp_explain_t *x, const bp_explain_elem_t *el, bp_dtype_t dt)
{
    static const char *closer_fmt[] = {"%s is closer", "%s is closer", "equally close"};
    char hx[BP_FMT_MAX], ua[64], ub[64];
    if (!el->has_end && !el->has_ref)
        return;
    fprintf(f, "      end result:");
    if (el->has_end) {
        bp_fmt_hex(dt, el->end, hx, sizeof hx);
        bp_esc_printf(f, " the oracle end to end gives %s; %s %s, %s %s", hx, x->label_a,
                ulps(el->end_ulp_a, ua, sizeof ua), x->label_b,
                ulps(el->end_ulp_b, ub, sizeof ub));
    }
    /* Within 0.5 ulp of the reference: the correctly rounded end result
     * (up to the reference's own fp64 rounding). */
    if (el->has_ref) {
        fputs(el->has_end ? ";\n                 " : "", f);
        bp_esc_printf(f, " the fp64 reference %.17g: %s %.3g ulp%s, %s %.3g ulp%s",
                el->ref, x->label_a, el->ref_ulp_a,
                el->ref_ulp_a <= 0.5 ? " (correctly rounded)" : "", x->label_b,
                el->ref_ulp_b, el->ref_ulp_b <= 0.5 ? " (correctly rounded)" : "");
    }
    if (el->closer >= 0) {
        fprintf(f, ": ");
        fprintf(f, closer_fmt[el->closer], BP_ESC(el->closer == 1 ? x->label_b : x->label_a));
    }
    fputc('\n', f);
}

static void output_block(FILE *f, const bp_explain_t *x, size_t oi, int w)
{
    const bp_probe_t *p = x->p;
    const bp_explain_out_t *out = &x->outs[oi];
    bp_dtype_t dt = x->metas[out->buf].dtype;
    char idx[96], u[64];
    fprintf(f, "\noutput %s: %zu of %zu differ end to end", BP_ESC(p->outputs[oi].name), out->e2e,
            out->total);
    if (!out->e2e) {
        fprintf(f, "\n");
        return;
    }
    fprintf(f, "; introduced by");
    const char *sep = " ";
    for (size_t k = 0; k < p->nops; k++)
        if (out->by_origin[k]) {
            bp_esc_printf(f, "%sop %zu %s (%s): %zu", sep, k, bp_op_name(p->ops[k].kind),
                    p->ops[k].out, out->by_origin[k]);
            sep = ", ";
        }
    fputc('\n', f);
    if (x->has_end)
        bp_esc_printf(f, "  closer to the %s: %s %zu, %s %zu, equally close %zu\n",
                x->has_ref ? "fp64 reference" : "oracle's end result", x->label_a,
                out->closer[0], x->label_b, out->closer[1], out->closer[2]);
    for (size_t e = 0; e < out->nfirst; e++) {
        const bp_explain_elem_t *el = &x->elems[out->first + e];
        index_str(&x->metas[out->buf], el->index, idx, sizeof idx);
        fprintf(f, "    %s%s\n      ", BP_ESC(p->outputs[oi].name), idx);
        value_line(f, dt, el->a, x->label_a, w);
        fprintf(f, "\n      ");
        value_line(f, dt, el->b, x->label_b, w);
        bp_esc_printf(f, "  (%s)\n", ulps(el->ulp, u, sizeof u));
        origin_block(f, x, el, w);
        end_block(f, x, el, dt);
    }
    if (out->e2e > out->nfirst)
        fprintf(f, "    ... %zu more\n", out->e2e - out->nfirst);
}

int bp_rep_explain_text(FILE *f, const bp_explain_t *x)
{
    int w = 6;
    if ((int)strlen(x->label_a) > w)
        w = (int)strlen(x->label_a);
    if ((int)strlen(x->label_b) > w)
        w = (int)strlen(x->label_b);
    header(f, x);
    op_table(f, x);
    verdict_table(f, x);
    size_t total = 0;
    for (size_t oi = 0; oi < x->p->noutputs; oi++) {
        output_block(f, x, oi, w);
        total += x->outs[oi].e2e;
    }
    fprintf(f, "\nsummary: %zu output elements differ end to end\n", total);
    return ferror(f) ? 2 : 0;
}
