/* The text report, summary first: the verdict line; one line per result
 * that is not bit-identical, with its detail (values of small outputs, ulp
 * histogram, the first mismatches as exact decimal, hex and
 * sign|exponent|mantissa bits) under drift (a run's; a diff of tensor
 * files compares so many that its detail waits for -v), or under every
 * one with -v; then the results that fail the verdict once more, as a
 * closing list.
 * --quiet: the verdict and the failing results; -vv: every result in
 * blocks per (probe, output, dtype), bit-identical ones too. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitfmt.h"
#include "esc.h"
#include "rep.h"

static const char *red(const bp_rep_opts_t *o) { return o->color ? "\033[31m" : ""; }
static const char *green(const bp_rep_opts_t *o) { return o->color ? "\033[32m" : ""; }
static const char *off(const bp_rep_opts_t *o) { return o->color ? "\033[0m" : ""; }

/* Columns: side, exact decimal (dwidth wide, so the two sides of a pair
 * line up), hex, sign|exponent|mantissa. */
static void value_line(FILE *f, bp_dtype_t dt, uint64_t bits, const char *side, int width,
                       int dwidth)
{
    char dec[BP_FMT_DECIMAL_MAX], hx[BP_FMT_MAX], fl[BP_FMT_MAX];
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    fprintf(f, "%-*s %-*s %s %s", width, side, dwidth, dec, hx, fl);
}

static int decimal_width(bp_dtype_t dt, uint64_t bits)
{
    char dec[BP_FMT_DECIMAL_MAX];
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    return (int)strlen(dec);
}

static void values_block(FILE *f, const bp_report_t *rep, const bp_result_t *g)
{
    const bp_values_t *vs[16];
    int nv = 0, width = 4;
    for (size_t i = 0; i < rep->nv && nv < 16; i++) {
        const bp_values_t *v = &rep->v[i];
        if (bp_values_of(v, g)) {
            vs[nv++] = v;
            if ((int)strlen(v->side) > width)
                width = (int)strlen(v->side);
        }
    }
    if (!nv)
        return;
    int dwidth = 1;
    for (int s = 0; s < nv; s++)
        for (size_t k = 0; k < vs[s]->n; k++) {
            int w = decimal_width(g->dtype, vs[s]->bits[k]);
            dwidth = w > dwidth ? w : dwidth;
        }
    for (size_t k = 0; k < vs[0]->n; k++) {
        for (int s = 0; s < nv; s++) {
            if (k >= vs[s]->n)
                continue;
            if (s == 0)
                fprintf(f, "  [%3zu] ", k);
            else
                fprintf(f, "        ");
            value_line(f, g->dtype, vs[s]->bits[k], vs[s]->side, width, dwidth);
            fputc('\n', f);
        }
    }
}

static void hist_line(FILE *f, const bp_cmp_t *c)
{
    fprintf(f, "      ulp histogram:");
    for (int i = 0; i < BP_HIST_BINS; i++) {
        int b = bp_hist_at(i);
        if (c->hist[b])
            fprintf(f, " %s:%" PRIu64, bp_hist_label(b), c->hist[b]);
    }
    fputc('\n', f);
}

/* "(3 ulp)", "(class change)", "(sign of zero)" after a mismatch's values. */
static const char *mismatch_what(const bp_mismatch_t *m, char *buf, size_t n)
{
    if (m->ulp == UINT64_MAX)
        return "class change";
    if (bp_mismatch_zero_sign(m))
        return "sign of zero";
    snprintf(buf, n, "%" PRIu64 " ulp", m->ulp);
    return buf;
}

/* A result's line (when head) and its detail: ulp histogram and first
 * mismatches. */
static void result_block(FILE *f, const bp_result_t *r, const bp_rep_opts_t *o, bool head)
{
    const bp_cmp_t *c = &r->cmp;
    char idx[96], pol[96];
    if (!r->compared) {
        fprintf(f, "  %s vs %s: %s: %s\n", r->b, r->a, bp_res_status_label(r->status),
                r->note ? r->note : "");
        return;
    }
    const char *verdict = c->pass ? "" : (r->counts ? " DRIFT" : " (differs)");
    char note[160], same[128];
    if (c->mismatched == 0) {
        bp_cmp_identical_text(c, same, sizeof same);
        if (!o->quiet)
            fprintf(f, "  %s vs %s: %s%s%s%s%s\n", r->b, r->a, green(o), same, off(o),
                    r->note ? "; " : "", r->note ? r->note : "");
        return;
    }
    bp_policy_format(&r->policy, pol, sizeof pol);
    bp_cmp_index_format(c, c->max_abs_idx, idx, sizeof idx);
    bp_cmp_class_note(c, note, sizeof note);
    char ulp[64];
    bp_cmp_max_ulp_text(c, ulp, sizeof ulp);
    bool zs = bp_cmp_zero_signs_only(c);
    if (head) {
        fprintf(f, "  %s vs %s: %s%zu of %zu differ (%.4g%%)%s%s, %s", r->b, r->a,
                c->pass ? "" : red(o), c->mismatched, c->total,
                100.0 * (double)c->mismatched / (double)(c->total ? c->total : 1), verdict,
                c->pass ? "" : off(o), ulp);
        if (!zs) {
            fprintf(f, ", max abs %.6g at %s", c->max_abs, idx);
            bp_cmp_index_format(c, c->max_rel_idx, idx, sizeof idx);
            fprintf(f, ", max rel %.6g at %s", c->max_rel, idx);
        }
        fprintf(f, "%s; policy %s%s\n", note, pol, c->pass ? " (within)" : "");
    } else if (!zs) {
        bp_cmp_index_format(c, c->max_rel_idx, idx, sizeof idx);
        fprintf(f, "      max rel %.6g at %s\n", c->max_rel, idx);
    }
    if (c->max_ulp == UINT64_MAX)
        fprintf(f, "      %zu element%s change%s class (finite/inf/NaN)\n", c->class_changes,
                c->class_changes == 1 ? "" : "s", c->class_changes == 1 ? "s" : "");
    hist_line(f, c);
    size_t shown = c->nfirst < o->first ? c->nfirst : o->first;
    int width = (int)(strlen(r->a) > strlen(r->b) ? strlen(r->a) : strlen(r->b));
    int dwidth = 1;
    for (size_t k = 0; k < shown; k++) {
        int wa = decimal_width(r->dtype, c->first[k].a), wb = decimal_width(r->dtype, c->first[k].b);
        dwidth = wa > dwidth ? wa : dwidth;
        dwidth = wb > dwidth ? wb : dwidth;
    }
    for (size_t k = 0; k < shown; k++) {
        const bp_mismatch_t *m = &c->first[k];
        bp_cmp_index_format(c, m->index, idx, sizeof idx);
        fprintf(f, "    %-10s ", idx);
        value_line(f, r->dtype, m->a, r->a, width, dwidth);
        fprintf(f, "\n    %-10s ", "");
        value_line(f, r->dtype, m->b, r->b, width, dwidth);
        char u[32];
        fprintf(f, "  (%s)\n", mismatch_what(m, u, sizeof u));
    }
    if (c->mismatched > shown)
        fprintf(f, "    ... %zu more\n", c->mismatched - shown);
}

/* The old block of one (probe, output, dtype) group, results i..j-1: its
 * values, and each result's line and detail (-vv shows every group so). */
static void group_block(FILE *f, const bp_report_t *rep, size_t i, size_t j,
                        const bp_rep_opts_t *o)
{
    const bp_result_t *g = &rep->r[i];
    char shape[96], dt[64];
    bp_shape_format(g->cmp.ndim, g->cmp.shape, shape, sizeof shape);
    bp_result_dtype_label(g, dt, sizeof dt);
    fprintf(f, "%s %s %s %s\n", g->probe, g->output, dt, g->compared ? shape : "");
    values_block(f, rep, g);
    for (size_t k = i; k < j; k++)
        result_block(f, &rep->r[k], o, true);
}

/* Results not compared for one cause (a golden file missing: every output
 * and dtype of a probe on one backend) are shown as one line. */
static bool has_cause(const bp_result_t *r)
{
    return !r->compared && r->note;
}

static int cmp_cause(const bp_result_t *a, const bp_result_t *b)
{
    int c = (a->status > b->status) - (a->status < b->status);
    if (!c)
        c = strcmp(a->note, b->note);
    if (!c)
        c = strcmp(a->probe, b->probe);
    if (!c)
        c = strcmp(a->a, b->a);
    return c ? c : strcmp(a->b, b->b);
}

static bool benign(const bp_result_t *r);

static int cmp_probe(const bp_result_t *a, const bp_result_t *b)
{
    return strcmp(a->probe, b->probe);
}

/* The groups the text shows, found once (n log n): the first result of
 * each cause and how many share it, the first benign result of each
 * probe. */
typedef struct {
    size_t *cause, *ncause, *probe;
} groups_t;

static bool groups_find(const bp_report_t *rep, groups_t *g)
{
    size_t n = rep->n ? rep->n : 1;
    g->cause = malloc(n * sizeof *g->cause);
    g->ncause = calloc(n, sizeof *g->ncause);
    g->probe = malloc(n * sizeof *g->probe);
    if (!g->cause || !g->ncause || !g->probe ||
        !bp_report_firsts(rep, cmp_cause, has_cause, g->cause) ||
        !bp_report_firsts(rep, cmp_probe, benign, g->probe))
        return false;
    for (size_t i = 0; i < rep->n; i++)
        if (g->cause[i] != SIZE_MAX)
            g->ncause[g->cause[i]]++;
    return true;
}

static void groups_free(groups_t *g)
{
    free(g->cause);
    free(g->ncause);
    free(g->probe);
}

/* How many results share result i's cause (i included), or 0 when an
 * earlier one does: i is then shown by that one's line. */
static size_t cause_count(const groups_t *g, size_t i)
{
    return g->cause[i] == SIZE_MAX ? 1 : g->cause[i] == i ? g->ncause[i] : 0;
}

/* One result as one line: "seed-div y fp32: cuda vs cpu: 1 of 1 differ
 * (100%), max 1 ulp, max abs 5.96e-08 at []: DRIFT"; for `same` results of
 * one cause (more than one), "seed-div: cpu vs golden cpu: missing golden:
 * ... (3 comparisons)". */
static void result_line(FILE *f, const bp_result_t *r, const bp_rep_opts_t *o,
                        const char *lead, size_t same)
{
    char title[512], shape[96] = "", dt[64];
    bp_result_dtype_label(r, dt, sizeof dt);
    if (r->compared) {
        shape[0] = ' ';
        bp_shape_format(r->cmp.ndim, r->cmp.shape, shape + 1, sizeof shape - 1);
    }
    const char *output = r->output && *r->output ? r->output : NULL;
    snprintf(title, sizeof title, "%s%s%s %s%s: %s vs %s", r->probe, output ? " " : "",
             output ? output : "", dt, shape, r->b, r->a);
    bp_res_status_t s = bp_result_status(r);
    bool bad = bp_result_outcome(r) != 0;
    const char *on = bad ? red(o) : "", *of = bad ? off(o) : "";
    if (!r->compared && !*r->a && !*r->b) { /* a probe that did not load */
        fprintf(f, "%s%s: %s%s%s: %s\n", lead, r->probe, on, bp_res_status_label(s), of,
                r->note ? r->note : "");
        return;
    }
    if (!r->compared && same > 1) {
        fprintf(f, "%s%s: %s vs %s: %s%s%s: %s (%zu comparisons)\n", lead, r->probe, r->b,
                r->a, on, bp_res_status_label(s), of, r->note ? r->note : "", same);
        return;
    }
    if (!r->compared) {
        fprintf(f, "%s%s: %s%s%s: %s\n", lead, title, on, bp_res_status_label(s), of,
                r->note ? r->note : "");
        return;
    }
    const bp_cmp_t *c = &r->cmp;
    char note[160], ident[128];
    if (!c->mismatched) {
        bp_cmp_identical_text(c, ident, sizeof ident);
        fprintf(f, "%s%s: %s%s%s%s%s\n", lead, title, green(o), ident, off(o),
                r->note ? "; " : "", r->note ? r->note : "");
        return;
    }
    char idx[96], ulp[64], pol[96];
    bp_cmp_index_format(c, c->max_abs_idx, idx, sizeof idx);
    bp_cmp_max_ulp_text(c, ulp, sizeof ulp);
    bp_cmp_class_note(c, note, sizeof note);
    bp_policy_format(&r->policy, pol, sizeof pol);
    fprintf(f, "%s%s: %zu of %zu differ (%.4g%%), %s", lead, title, c->mismatched, c->total,
            100.0 * bp_result_fraction(r), ulp);
    if (!bp_cmp_zero_signs_only(c))
        fprintf(f, ", max abs %.6g at %s", c->max_abs, idx);
    fprintf(f, "%s: %s%s%s", note, on, bp_res_status_label(s), of);
    if (s == BP_RS_WITHIN || s == BP_RS_DRIFT)
        fprintf(f, " (policy %s)", pol);
    if (r->note)
        fprintf(f, "; %s", r->note);
    fputc('\n', f);
}

/* What a result shows below its line: values of a small output, ulp
 * histogram and first mismatches (drift always, the rest with -v). */
static void result_detail(FILE *f, const bp_report_t *rep, const bp_result_t *r,
                          const bp_rep_opts_t *o)
{
    if (!r->compared || !r->cmp.mismatched)
        return;
    if (r->cmp.total <= BP_REPORT_SMALL)
        values_block(f, rep, r);
    result_block(f, r, o, false);
}

/* Beyond this many differences that do not fail the verdict, the default
 * text counts them in one line (-v lists them). */
#define MAX_BENIGN_LINES 20

static bool benign(const bp_result_t *r)
{
    bp_res_status_t s = bp_result_status(r);
    return !bp_result_outcome(r) && s != BP_RS_IDENTICAL && s != BP_RS_SKIPPED_BACKEND;
}

/* Whether result i is the first benign one of its probe. */
static bool first_of_probe(const groups_t *g, size_t i)
{
    return g->probe[i] == i;
}

/* "  N differences within policy or informational, in P probes (-v lists
 * them): a, b, ..." */
static void benign_line(FILE *f, const bp_report_t *rep, const groups_t *g, size_t n)
{
    size_t np = 0;
    for (size_t i = 0; i < rep->n; i++)
        np += benign(&rep->r[i]) && first_of_probe(g, i);
    fprintf(f, "  %zu differences within policy or informational, in %zu probes (-v lists "
               "them):", n, np);
    const char *sep = " ";
    for (size_t i = 0; i < rep->n; i++)
        if (benign(&rep->r[i]) && first_of_probe(g, i)) {
            fprintf(f, "%s%s", sep, rep->r[i].probe);
            sep = ", ";
        }
    fputc('\n', f);
}

static int text_groups(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o,
                       const groups_t *g);

static int text(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o)
{
    groups_t g;
    if (!groups_find(rep, &g)) {
        groups_free(&g);
        fputs("bitprobe: out of memory for the text report\n", stderr);
        return 2;
    }
    int rc = text_groups(f, rep, o, &g);
    groups_free(&g);
    return rc;
}

static int text_groups(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o,
                       const groups_t *g)
{
    bp_tally_t t;
    char line[1024];
    bp_report_tally(rep, &t);
    bp_tally_line(rep, &t, line, sizeof line);
    bool passed = t.exit == 0;
    /* An identical diff with -q says nothing, as cmp -s. */
    if (o->quiet && passed && t.compared == t.n[BP_RS_IDENTICAL] && t.results == t.compared &&
        rep->n && rep->r[0].kind == BP_RES_DIFF)
        return 0;
    fprintf(f, "%s%s%s\n", passed ? green(o) : red(o), line, off(o));
    /* whether the lines above the closing list hold more than it would */
    bool more = o->verbose >= 2;
    if (o->verbose >= 2) {
        for (size_t i = 0, j; i < rep->n; i = j) {
            for (j = i; j < rep->n && bp_result_same_group(&rep->r[i], &rep->r[j]); j++)
                ;
            group_block(f, rep, i, j, o);
        }
    } else if (!o->quiet) {
        /* Differences that do not fail the verdict (within policy,
         * informational) are listed one a line up to MAX_BENIGN_LINES;
         * beyond, without -v, counted in one line with their probes. */
        size_t nb = 0;
        for (size_t i = 0; i < rep->n; i++)
            nb += benign(&rep->r[i]);
        bool fold = !o->verbose && nb > MAX_BENIGN_LINES;
        /* a diff's detail only with -v: one line per tensor that differs */
        bool fail_detail = !(rep->n && rep->r[0].kind == BP_RES_DIFF);
        if (fold)
            benign_line(f, rep, g, nb);
        for (size_t i = 0; i < rep->n; i++) {
            const bp_result_t *r = &rep->r[i];
            bp_res_status_t s = bp_result_status(r);
            if (s == BP_RS_IDENTICAL || (s == BP_RS_SKIPPED_BACKEND && !o->verbose))
                continue;
            if (fold && !bp_result_outcome(r) && s != BP_RS_SKIPPED_BACKEND)
                continue;
            size_t same = cause_count(g, i);
            if (!same)
                continue;
            result_line(f, r, o, "  ", same);
            bool detail = o->verbose || (fail_detail && bp_result_outcome(r));
            more |= !bp_result_outcome(r) || (detail && r->compared && r->cmp.mismatched);
            if (detail)
                result_detail(f, rep, r, o);
        }
    }
    /* Probes whose outputs were not compared with anything still show values. */
    if (rep->n == 0 && !o->quiet) {
        for (size_t k = 0; k < rep->nv; k++) {
            const bp_values_t *v = &rep->v[k];
            bp_result_t g = bp_values_group(v);
            char dt[64];
            bp_result_dtype_label(&g, dt, sizeof dt);
            if (k == 0 || !bp_values_of(&rep->v[k - 1], &g))
                fprintf(f, "%s %s %s\n", v->probe, v->output, dt);
            int dwidth = 1;
            for (size_t e = 0; e < v->n; e++) {
                int w = decimal_width(v->dtype, v->bits[e]);
                dwidth = w > dwidth ? w : dwidth;
            }
            for (size_t e = 0; e < v->n; e++) {
                fprintf(f, "  [%3zu] ", e);
                value_line(f, v->dtype, v->bits[e], v->side, 6, dwidth);
                fputc('\n', f);
            }
        }
    }
    if (o->verbose || (!o->quiet && !passed))
        for (size_t k = 0; k < rep->nnotes; k++)
            fprintf(f, "note: %s\n", rep->notes[k]);
    /* The short summary: each result that fails the verdict, once more
     * (unless that is all the lines above said). */
    if ((t.failed || t.errors) && (more || o->quiet)) {
        if (!o->quiet)
            fprintf(f, "%s:\n", t.errors ? "failures and errors" : "failures");
        for (size_t i = 0; i < rep->n; i++) {
            size_t same = cause_count(g, i);
            if (bp_result_outcome(&rep->r[i]) && same)
                result_line(f, &rep->r[i], o, "  ", same);
        }
    }
    if (!o->quiet || t.failed || t.errors)
        for (size_t k = 0; k < rep->nhints; k++)
            fprintf(f, "hint: %s\n", rep->hints[k]);
    return ferror(f) ? 2 : 0;
}

/* ---- every string as the text shows it (esc.h) ------------------------- */

typedef struct {
    char **own; /* the escaped copies made */
    size_t n;
    bool oom;
} shown_t;

static void show(shown_t *sh, char **p)
{
    if (!bp_esc_needed(*p))
        return;
    char *e = bp_esc_dup(*p);
    if (!e) {
        sh->oom = true;
        return;
    }
    sh->own[sh->n++] = *p = e;
}

/* Whether any string of rep needs escaping. */
static bool any_needed(const bp_report_t *rep)
{
    bool need = bp_esc_needed(rep->why_empty);
    for (size_t i = 0; !need && i < rep->n; i++) {
        const bp_result_t *r = &rep->r[i];
        need = bp_esc_needed(r->probe) || bp_esc_needed(r->output) ||
               bp_esc_needed(r->a) || bp_esc_needed(r->b) || bp_esc_needed(r->note) ||
               bp_esc_needed(r->dtype_as);
    }
    for (size_t i = 0; !need && i < rep->nv; i++)
        need = bp_esc_needed(rep->v[i].probe) || bp_esc_needed(rep->v[i].output) ||
               bp_esc_needed(rep->v[i].side);
    for (size_t i = 0; !need && i < rep->nnotes; i++)
        need = bp_esc_needed(rep->notes[i]);
    for (size_t i = 0; !need && i < rep->nhints; i++)
        need = bp_esc_needed(rep->hints[i]);
    return need;
}

/* The text report of rep: names, paths and notes come from users' files,
 * and are written by the one rule for data in a line (esc.h), on a copy of
 * the report whose strings are escaped where they need it (most reports:
 * none, and no copy). */
int bp_rep_text(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o)
{
    if (!any_needed(rep))
        return text(f, rep, o);
    bp_report_t c = *rep;
    shown_t sh = {0};
    c.r = malloc((rep->n ? rep->n : 1) * sizeof *c.r);
    c.v = malloc((rep->nv ? rep->nv : 1) * sizeof *c.v);
    c.notes = malloc((rep->nnotes ? rep->nnotes : 1) * sizeof *c.notes);
    c.hints = malloc((rep->nhints ? rep->nhints : 1) * sizeof *c.hints);
    sh.own = malloc((6 * rep->n + 3 * rep->nv + rep->nnotes + rep->nhints + 1) *
                    sizeof *sh.own);
    int rc = 2;
    if (c.r && c.v && c.notes && c.hints && sh.own) {
        if (rep->n)
            memcpy(c.r, rep->r, rep->n * sizeof *c.r);
        if (rep->nv)
            memcpy(c.v, rep->v, rep->nv * sizeof *c.v);
        if (rep->nnotes)
            memcpy(c.notes, rep->notes, rep->nnotes * sizeof *c.notes);
        if (rep->nhints)
            memcpy(c.hints, rep->hints, rep->nhints * sizeof *c.hints);
        show(&sh, &c.why_empty);
        for (size_t i = 0; i < c.n; i++) {
            bp_result_t *r = &c.r[i];
            show(&sh, &r->probe), show(&sh, &r->output), show(&sh, &r->a);
            show(&sh, &r->b), show(&sh, &r->note), show(&sh, &r->dtype_as);
        }
        for (size_t i = 0; i < c.nv; i++)
            show(&sh, &c.v[i].probe), show(&sh, &c.v[i].output), show(&sh, &c.v[i].side);
        for (size_t i = 0; i < c.nnotes; i++)
            show(&sh, &c.notes[i]);
        for (size_t i = 0; i < c.nhints; i++)
            show(&sh, &c.hints[i]);
        if (!sh.oom)
            rc = text(f, &c, o);
    }
    if (!c.r || !c.v || !c.notes || !c.hints || !sh.own || sh.oom)
        fputs("bitprobe: out of memory for the text report\n", stderr);
    for (size_t i = 0; sh.own && i < sh.n; i++)
        free(sh.own[i]);
    free(sh.own);
    free(c.r);
    free(c.v);
    free(c.notes);
    free(c.hints);
    return rc;
}
