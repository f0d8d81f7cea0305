/* GitHub Actions output (GITHUB_ACTIONS=true or --github).
 *
 * Annotations: one "::error file=F,line=N,title=T::SUMMARY" workflow command
 * per failing result (counts and beyond policy), the worst first: largest
 * mismatched fraction, then largest ulp distance (a class change beats any
 * distance), then report order; at most BP_GH_MAX_ANNOTATIONS, and one
 * "::warning" saying how many more there are.  Escaping follows the
 * runner's rules: in the message % \r \n become %25 %0D %0A; in property
 * values : and , become %3A and %2C as well.  F is the probe file as given
 * when relative ("./" prefixes dropped), and made relative to
 * $GITHUB_WORKSPACE when absolute and under it; diff results have no file.
 *
 * Then one "::notice title=bitprobe hint::HINT" per hint of the report
 * (the command that blesses missing goldens).
 *
 * Step summary: a Markdown section appended to the file named by
 * $GITHUB_STEP_SUMMARY (when set): the verdict line (report.h's tally),
 * the hints, and a table of every comparison that differs or was not
 * compared. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "rep.h"

#define BP_GH_MAX_ANNOTATIONS 10

static void gh_escape(FILE *f, const char *s, bool property)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '%': fputs("%25", f); break;
        case '\r': fputs("%0D", f); break;
        case '\n': fputs("%0A", f); break;
        case ':':
            if (property)
                fputs("%3A", f);
            else
                fputc(':', f);
            break;
        case ',':
            if (property)
                fputs("%2C", f);
            else
                fputc(',', f);
            break;
        default: fputc(*s, f);
        }
    }
}

/* The annotation's file: relative paths without leading "./", absolute
 * ones relative to the workspace when under it. */
static const char *repo_path(const char *path)
{
    if (path[0] == '/') {
        const char *ws = getenv("GITHUB_WORKSPACE");
        size_t n = ws ? strlen(ws) : 0;
        while (n > 1 && ws[n - 1] == '/')
            n--;
        if (n && strncmp(path, ws, n) == 0 && path[n] == '/')
            path += n + 1;
        else
            return path;
    }
    while (path[0] == '.' && path[1] == '/') {
        path += 2;
        while (*path == '/')
            path++;
    }
    return path;
}

static const bp_report_t *sort_rep;

static int worse_first(const void *pa, const void *pb)
{
    size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
    const bp_result_t *a = &sort_rep->r[ia], *b = &sort_rep->r[ib];
    double fa = bp_result_fraction(a), fb = bp_result_fraction(b);
    if (fa != fb)
        return fa > fb ? -1 : 1;
    if (a->cmp.max_ulp != b->cmp.max_ulp)
        return a->cmp.max_ulp > b->cmp.max_ulp ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

/* What fails the verdict: drift, one-sided and not comparable tensors
 * (exit 1), errors (exit 2). */
static bool failing(const bp_result_t *r)
{
    return bp_result_outcome(r) != 0;
}

int bp_rep_github_annotations(FILE *f, const bp_report_t *rep)
{
    size_t nf = 0, k = 0;
    for (size_t i = 0; i < rep->n; i++)
        nf += failing(&rep->r[i]);
    if (!nf)
        return 0;
    size_t *idx = malloc(nf * sizeof *idx);
    if (!idx)
        return 2;
    for (size_t i = 0; i < rep->n; i++)
        if (failing(&rep->r[i]))
            idx[k++] = i;
    sort_rep = rep;
    qsort(idx, nf, sizeof *idx, worse_first);
    char title[1024], summary[1024], line[32];
    for (k = 0; k < nf && k < BP_GH_MAX_ANNOTATIONS; k++) {
        const bp_result_t *r = &rep->r[idx[k]];
        bp_result_title(r, title, sizeof title);
        bp_result_summary(r, summary, sizeof summary);
        fputs("::error ", f);
        if (r->file) {
            fputs("file=", f);
            gh_escape(f, repo_path(r->file), true);
            if (r->line > 0) {
                snprintf(line, sizeof line, "%d", r->line);
                fputs(",line=", f);
                gh_escape(f, line, true);
            }
            fputc(',', f);
        }
        fputs("title=", f);
        gh_escape(f, r->compared ? "bitprobe drift: " : "bitprobe: ", true);
        gh_escape(f, title, true);
        fputs("::", f);
        gh_escape(f, title, false);
        gh_escape(f, ": ", false);
        gh_escape(f, summary, false);
        fputc('\n', f);
    }
    if (nf > BP_GH_MAX_ANNOTATIONS)
        fprintf(f, "::warning title=bitprobe::%zu more results fail "
                   "(see the step summary or the report)\n", nf - BP_GH_MAX_ANNOTATIONS);
    for (size_t h = 0; h < rep->nhints; h++) {
        fputs("::notice title=bitprobe hint::", f);
        gh_escape(f, rep->hints[h], false);
        fputc('\n', f);
    }
    free(idx);
    return ferror(f) ? 2 : 0;
}

int bp_rep_github_summary(FILE *f, const bp_report_t *rep)
{
    bp_tally_t t;
    char line[1024];
    bp_report_tally(rep, &t);
    bp_tally_line(rep, &t, line, sizeof line);
    fprintf(f, "### bitprobe: %s\n\n", t.verdict);
    bp_md_text(f, line);
    fputs(".\n\n", f);
    for (size_t h = 0; h < rep->nhints; h++) {
        fputs("Hint: ", f);
        bp_md_text(f, rep->hints[h]);
        fputs("\n\n", f);
    }
    if (t.compared > t.n[BP_RS_IDENTICAL] || t.compared < t.results) {
        fputs("| probe | output | dtype | b vs a | mismatched | % | max ulp | policy | verdict |\n"
              "|---|---|---|---|---:|---:|---:|---|---|\n", f);
        for (size_t i = 0; i < rep->n; i++) {
            const bp_result_t *r = &rep->r[i];
            const bp_cmp_t *c = &r->cmp;
            if (r->compared && !c->mismatched)
                continue;
            char pol[128];
            bp_policy_format(&r->policy, pol, sizeof pol);
            fputs("| ", f);
            bp_md_code(f, r->probe);
            fputs(" | ", f);
            bp_md_code(f, r->output);
            char dt[64];
            bp_result_dtype_label(r, dt, sizeof dt);
            fprintf(f, " | %s | ", dt);
            bp_md_code(f, r->b);
            fputs(" vs ", f);
            bp_md_code(f, r->a);
            if (!r->compared) {
                fputs(" | | | | ", f);
                bp_md_code(f, pol);
                fprintf(f, " | %s%s%s: ", failing(r) ? "**" : "",
                        bp_res_status_label(r->status), failing(r) ? "**" : "");
                bp_md_text(f, r->note);
                fputs(" |\n", f);
                continue;
            }
            fprintf(f, " | %zu / %zu | %.4g | ", c->mismatched, c->total,
                    100.0 * bp_result_fraction(r));
            if (bp_cmp_zero_signs_only(c))
                fputs("sign of zero", f);
            else if (c->max_ulp == UINT64_MAX)
                fputs("class change", f);
            else
                fprintf(f, "%" PRIu64, c->max_ulp);
            fputs(" | ", f);
            bp_md_code(f, pol);
            fprintf(f, " | %s |\n", failing(r) ? "**DRIFT**"
                                    : c->pass ? "within policy" : "differs (informational)");
        }
        fputc('\n', f);
    }
    return ferror(f) ? 2 : 0;
}

int bp_rep_github(FILE *annotations, const bp_report_t *rep)
{
    if (bp_rep_github_annotations(annotations, rep))
        return 2;
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        bp_esc_printf(stderr, "bitprobe: cannot append to $GITHUB_STEP_SUMMARY '%s': %s\n",
                      path, strerror(errno));
        return 2;
    }
    int rc = bp_rep_github_summary(f, rep);
    int e = errno;
    if (fclose(f) != 0 || rc) {
        bp_esc_printf(stderr, "bitprobe: cannot append to $GITHUB_STEP_SUMMARY '%s': %s\n",
                      path, strerror(rc ? e : errno));
        return 2;
    }
    return 0;
}
