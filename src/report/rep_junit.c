/* The JUnit XML report, for CI test viewers.
 *
 *   <testsuites name="bitprobe" tests= failures= errors= skipped=>
 *     <testsuite name="bitprobe.<probe>" ...>      one per probe, in order
 *       <properties><property name="command" value="bitprobe run ..."/>
 *                   <property name="hint" value="..."/> (each of the report's)
 *       <testcase classname="bitprobe.<probe>"
 *                 name="<output>.<dtype>.<b> vs <a>" [file= line=]>
 *                 (dtype as titles show it: "fp32 (bf16 run)")
 *         <failure message="SUMMARY" type="drift">SUMMARY
 *           first mismatches, with both sides' bits</failure>  (drift)
 *         <failure message="NOTE" type="only in a"/>   (one-sided, not comparable)
 *         <error message="NOTE" type="missing golden"/> (errors, and what counts
 *                                                  as one: missing golden, ...)
 *         <skipped message="NOTE"/>           (not compared, informational)
 *         <system-out>SUMMARY ...</system-out>  (differs, does not count)
 *     <testsuite name="bitprobe"> <testcase name="verdict"> <error .../>
 *                                           (only when nothing was compared)
 *
 * The counts are the report's tally (report.h): failures are the results
 * that make the exit status 1, errors those that make it 2.
 * One testcase per result (probe, output, dtype, backend pair); diff
 * results are named after the tensor ("<tensor>.<dtype>.<b> vs <a>").
 * Every string is escaped for XML (xml.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitfmt.h"
#include "rep.h"
#include "xml.h"

static void attr(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s=\"", name);
    bp_xml_put(f, value, true);
    fputc('"', f);
}

typedef struct {
    size_t tests, failures, errors, skipped;
} counts_t;

static void count(const bp_result_t *r, counts_t *c)
{
    int o = bp_result_outcome(r);
    c->tests++;
    c->failures += o == 1;
    c->errors += o == 2;
    c->skipped += o == 0 && !r->compared;
}

static void value_text(FILE *f, bp_dtype_t dt, const char *side, uint64_t bits)
{
    char dec[BP_FMT_DECIMAL_MAX], hx[BP_FMT_MAX], fl[BP_FMT_MAX], line[BP_FMT_DECIMAL_MAX + 512];
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    snprintf(line, sizeof line, "\n  %s: %s %s %s", side, dec, hx, fl);
    bp_xml_put(f, line, false);
}

/* The summary line, then the first mismatches with both sides. */
static void details(FILE *f, const bp_result_t *r, const char *summary)
{
    const bp_cmp_t *c = &r->cmp;
    char idx[96], head[160];
    bp_xml_put(f, summary, false);
    if (c->nfirst)
        fputs("\nfirst mismatches:", f);
    for (size_t k = 0; k < c->nfirst; k++) {
        const bp_mismatch_t *m = &c->first[k];
        bp_cmp_index_format(c, m->index, idx, sizeof idx);
        if (m->ulp == UINT64_MAX)
            snprintf(head, sizeof head, "\n%s class change", idx);
        else if (bp_mismatch_zero_sign(m))
            snprintf(head, sizeof head, "\n%s sign of zero", idx);
        else
            snprintf(head, sizeof head, "\n%s %" PRIu64 " ulp", idx, m->ulp);
        bp_xml_put(f, head, false);
        value_text(f, r->dtype, r->a, m->a);
        value_text(f, r->dtype, r->b, m->b);
    }
    if (c->mismatched > c->nfirst)
        fprintf(f, "\n... %zu more", c->mismatched - c->nfirst);
}

static void testcase(FILE *f, const bp_result_t *r)
{
    char cls[512], name[768], line[32], summary[1024], dt[64];
    snprintf(cls, sizeof cls, "bitprobe.%s", r->probe);
    bp_result_dtype_label(r, dt, sizeof dt);
    snprintf(name, sizeof name, "%s.%s.%s vs %s",
             r->output && *r->output ? r->output : r->probe, dt, r->b, r->a);
    bp_result_summary(r, summary, sizeof summary);
    fputs("    <testcase", f);
    attr(f, "classname", cls);
    attr(f, "name", name);
    if (r->file) {
        attr(f, "file", r->file);
        if (r->line > 0) {
            snprintf(line, sizeof line, "%d", r->line);
            attr(f, "line", line);
        }
    }
    if (!r->compared) {
        int o = bp_result_outcome(r);
        fputs(o == 2 ? ">\n      <error" : o == 1 ? ">\n      <failure" : ">\n      <skipped", f);
        attr(f, "message", r->note ? r->note : bp_res_status_label(r->status));
        if (o)
            attr(f, "type", bp_res_status_label(r->status));
        fputs("/>\n    </testcase>\n", f);
    } else if (r->counts && !r->cmp.pass) {
        fputs(">\n      <failure", f);
        attr(f, "message", summary);
        attr(f, "type", "drift");
        fputc('>', f);
        details(f, r, summary);
        fputs("</failure>\n    </testcase>\n", f);
    } else if (r->cmp.mismatched) {
        fputs(">\n      <system-out>", f);
        details(f, r, summary);
        fputs("</system-out>\n    </testcase>\n", f);
    } else if (r->note) {
        fputs(">\n      <system-out>", f);
        bp_xml_put(f, summary, false);
        fputs("</system-out>\n    </testcase>\n", f);
    } else {
        fputs("/>\n", f);
    }
}

static int cmp_probe(const bp_result_t *a, const bp_result_t *b)
{
    return strcmp(a->probe, b->probe);
}

static void counts_attrs(FILE *f, const counts_t *c)
{
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\"", c->tests,
            c->failures, c->errors, c->skipped);
}

/* Nothing compared is an error of its own, so that the counts say what
 * the exit status says. */
static void nothing_suite(FILE *f, const bp_report_t *rep, const bp_tally_t *t)
{
    char line[1024];
    bp_tally_line(rep, t, line, sizeof line);
    fputs("  <testsuite name=\"bitprobe\" tests=\"1\" failures=\"0\" errors=\"1\" "
          "skipped=\"0\">\n    <testcase classname=\"bitprobe\" name=\"verdict\">\n"
          "      <error", f);
    attr(f, "message", line);
    attr(f, "type", "nothing compared");
    fputs("/>\n    </testcase>\n  </testsuite>\n", f);
}

int bp_rep_junit(FILE *f, const bp_report_t *rep)
{
    counts_t all = {0};
    bp_tally_t t;
    bp_report_tally(rep, &t);
    for (size_t i = 0; i < rep->n; i++)
        count(&rep->r[i], &all);
    bool nothing = t.why_empty[0] != '\0';
    all.tests += nothing;
    all.errors += nothing;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"bitprobe\"", f);
    counts_attrs(f, &all);
    fputs(">\n", f);
    /* One suite per probe, in the order probes first appear; results of a
     * probe are usually adjacent, but nothing relies on it: each result
     * links to the next of its probe (n log n for the grouping, a diff's
     * tensors being as many probes as results). */
    size_t n = rep->n ? rep->n : 1, *first = malloc(n * sizeof *first),
           *next = malloc(n * sizeof *next), *last = malloc(n * sizeof *last);
    if (!first || !next || !last || !bp_report_firsts(rep, cmp_probe, NULL, first)) {
        free(first), free(next), free(last);
        fputs("bitprobe: out of memory for the JUnit report\n", stderr);
        return 2;
    }
    for (size_t i = 0; i < rep->n; i++)
        last[i] = SIZE_MAX;
    for (size_t i = rep->n; i-- > 0;) { /* the next of i's probe after i */
        next[i] = last[first[i]];
        last[first[i]] = i;
    }
    for (size_t i = 0; i < rep->n; i++) {
        if (first[i] != i)
            continue;
        const char *probe = rep->r[i].probe;
        counts_t c = {0};
        for (size_t k = i; k != SIZE_MAX; k = next[k])
            count(&rep->r[k], &c);
        char name[512];
        snprintf(name, sizeof name, "bitprobe.%s", probe);
        fputs("  <testsuite", f);
        attr(f, "name", name);
        counts_attrs(f, &c);
        fputs(">\n    <properties>\n      <property name=\"command\"", f);
        attr(f, "value", rep->command);
        fputs("/>\n", f);
        for (size_t h = 0; h < rep->nhints; h++) {
            fputs("      <property name=\"hint\"", f);
            attr(f, "value", rep->hints[h]);
            fputs("/>\n", f);
        }
        fputs("    </properties>\n", f);
        for (size_t k = i; k != SIZE_MAX; k = next[k])
            testcase(f, &rep->r[k]);
        fputs("  </testsuite>\n", f);
    }
    free(first), free(next), free(last);
    if (nothing)
        nothing_suite(f, rep, &t);
    fputs("</testsuites>\n", f);
    return ferror(f) ? 2 : 0;
}
