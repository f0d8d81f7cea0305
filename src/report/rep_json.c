/* The JSON report: everything the comparison engine computed, with the
 * environment fingerprint.  Schema (documented in the man page, REPORTS):
 *   {tool, version, schema_version (3), command,
 *    env{..., backends[{name, key, fingerprint}]},
 *    notes[], hints[]? (what to do next: the command that blesses missing
 *    goldens), values[{probe, output, side, dtype, run_dtype?, values[VALUE]}],
 *    summary{verdict ("passed", "drift", "error"), exit_status, line (the
 *            verdict as text), nothing_compared? (why), nothing_compared_ok?
 *            (true: on purpose, run --save), statuses{STATUS:
 *            count}, comparisons, identical, differ, drift (results that
 *            fail: exit 1), errors (exit 2), skipped, excused{zero_sign,
 *            nan_payload} (elements, over every result)},
 *    results[{probe, output, dtype, run_dtype? (outputs of a probe's run:
 *             the run's dtype, which dtype need not be), kind, status, a, b,
 *             policy, compared, counts, note?, file?, line?,
 *             (the rest only when compared:)
 *             pass, shape[], total, mismatched, mismatched_percent,
 *             beyond_policy, class_changes, zero_sign_diffs (mismatches in
 *             the sign of a zero only), zero_sign_excused (of those, within
 *             the policy), nan_payload_diffs (NaNs of other payloads, equal),
 *             max_abs{value,index[]}, max_rel{...}, max_ulp{...} (when
 *             mismatched), histogram{label: count},
 *             first[{index[], flat, ulp, a VALUE, b VALUE}]}]}
 *   VALUE = {hex, decimal (exact expansion), g20 (%.20g), shortest (round
 *            trip), fields (sign exponent mantissa bits)}
 *   timing (run --timing): see timing.h, bp_timing_json.
 *   STATUS: identical, within_policy, differs, drift, only_in_a, only_in_b,
 *   not_comparable, missing_golden, skipped_backend, error (report.h).
 *   Schema 1 (no schema_version) had no status, verdict or exit_status;
 *   schemas 1 and 2 counted +0 against -0 equal (zero_sign_diffs among the
 *   equal elements, no zero_sign_excused, no +0/-0 bin) and passed what
 *   compared nothing but was one-sided (exit 1, now 2).
 *   Members a read report kept in rep->extra follow, as they were.
 * Non-finite numbers are written as the strings "inf", "-inf", "nan"; a
 * non-finite mismatch's ulp as "class change". */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bitfmt.h"
#include "config.h"
#include "esc.h"
#include "jsonval.h"
#include "lanes.h"
#include "outfile.h"
#include "rep.h"
#include "timing.h"

static json_t *index_json(const bp_cmp_t *c, size_t flat)
{
    return bp_report_index_json(c->ndim, c->shape, flat);
}

static json_t *value_json(bp_dtype_t dt, uint64_t bits)
{
    char hx[BP_FMT_MAX], g20[BP_FMT_MAX], fl[BP_FMT_MAX], sh[BP_FMT_MAX];
    char dec[BP_FMT_DECIMAL_MAX];
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    bp_fmt_exact(dt, bits, g20, sizeof g20);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    bp_fmt_shortest(dt, bits, sh, sizeof sh);
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "hex", hx, "decimal", dec, "g20", g20,
                     "shortest", sh, "fields", fl);
}

static json_t *result_json(const bp_result_t *r)
{
    char pol[128];
    bp_policy_format(&r->policy, pol, sizeof pol);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b}",
                          "probe", r->probe, "output", r->output ? r->output : "",
                          "dtype", bp_result_dtype(r), "kind", bp_res_kind_name(r->kind),
                          "status", bp_res_status_name(bp_result_status(r)),
                          "a", r->a ? r->a : "", "b", r->b ? r->b : "", "policy", pol,
                          "compared", r->compared, "counts", r->counts);
    if (r->in_run)
        json_object_set_new(o, "run_dtype", json_string(bp_dtype_name(r->run_dtype)));
    if (r->note)
        json_object_set_new(o, "note", json_string(r->note));
    if (r->file) {
        json_object_set_new(o, "file", json_string(r->file));
        json_object_set_new(o, "line", json_integer(r->line));
    }
    if (!r->compared)
        return o;
    const bp_cmp_t *c = &r->cmp;
    json_t *shape = json_array();
    for (int d = 0; d < c->ndim; d++)
        json_array_append_new(shape, json_integer(c->shape[d]));
    json_object_set_new(o, "pass", json_boolean(c->pass));
    json_object_set_new(o, "shape", shape);
    json_object_set_new(o, "total", json_integer((json_int_t)c->total));
    json_object_set_new(o, "mismatched", json_integer((json_int_t)c->mismatched));
    json_object_set_new(o, "mismatched_percent",
                        bp_json_num(c->total ? 100.0 * (double)c->mismatched / (double)c->total
                                             : 0));
    json_object_set_new(o, "beyond_policy", json_integer((json_int_t)c->beyond_policy));
    json_object_set_new(o, "class_changes", json_integer((json_int_t)c->class_changes));
    json_object_set_new(o, "zero_sign_diffs", json_integer((json_int_t)c->zero_sign_diffs));
    json_object_set_new(o, "zero_sign_excused", json_integer((json_int_t)c->zero_sign_excused));
    json_object_set_new(o, "nan_payload_diffs", json_integer((json_int_t)c->nan_payload_diffs));
    if (c->mismatched) {
        json_object_set_new(o, "max_abs", json_pack("{s:o, s:o}", "value", bp_json_num(c->max_abs),
                                                    "index", index_json(c, c->max_abs_idx)));
        json_object_set_new(o, "max_rel", json_pack("{s:o, s:o}", "value", bp_json_num(c->max_rel),
                                                    "index", index_json(c, c->max_rel_idx)));
        json_object_set_new(o, "max_ulp", json_pack("{s:o, s:o}", "value", bp_json_ulp(c->max_ulp),
                                                    "index", index_json(c, c->max_ulp_idx)));
    }
    json_t *h = json_object();
    for (int i = 0; i < BP_HIST_BINS; i++) {
        int b = bp_hist_at(i);
        if (c->hist[b])
            json_object_set_new(h, bp_hist_label(b), json_integer((json_int_t)c->hist[b]));
    }
    json_object_set_new(o, "histogram", h);
    json_t *first = json_array();
    for (size_t k = 0; k < c->nfirst; k++) {
        const bp_mismatch_t *m = &c->first[k];
        json_array_append_new(first, json_pack("{s:o, s:I, s:o, s:o, s:o}", "index",
                                               index_json(c, m->index), "flat",
                                               (json_int_t)m->index, "ulp", bp_json_ulp(m->ulp),
                                               "a", value_json(r->dtype, m->a), "b",
                                               value_json(r->dtype, m->b)));
    }
    json_object_set_new(o, "first", first);
    return o;
}

json_t *bp_rep_json_summary(const bp_report_t *rep)
{
    bp_tally_t t;
    char line[1024];
    bp_report_tally(rep, &t);
    bp_tally_line(rep, &t, line, sizeof line);
    json_t *st = json_object();
    for (int s = 0; s < BP_RS_COUNT; s++)
        json_object_set_new(st, bp_res_status_name((bp_res_status_t)s),
                            json_integer((json_int_t)t.n[s]));
    json_t *o = json_pack("{s:s, s:i, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I}}",
                          "verdict", t.verdict, "exit_status", t.exit, "line", line,
                          "statuses", st, "comparisons", (json_int_t)t.compared,
                          "identical", (json_int_t)t.n[BP_RS_IDENTICAL], "differ",
                          (json_int_t)(t.compared - t.n[BP_RS_IDENTICAL]), "drift",
                          (json_int_t)t.failed, "errors", (json_int_t)t.errors, "skipped",
                          (json_int_t)t.skipped, "excused", "zero_sign",
                          (json_int_t)t.zero_signs_excused, "nan_payload",
                          (json_int_t)t.nan_payloads_excused);
    if (t.why_empty[0])
        json_object_set_new(o, "nothing_compared", json_string(t.why_empty));
    if (t.why_empty[0] && rep->empty_ok)
        json_object_set_new(o, "nothing_compared_ok", json_true());
    return o;
}

/* The report's document with `res` (a reference taken) as its results. */
static json_t *build(const bp_report_t *rep, json_t *res)
{
    json_t *root = json_pack("{s:s, s:s, s:i, s:s}", "tool", "bitprobe", "version",
                             PACKAGE_VERSION, "schema_version", BP_REPORT_SCHEMA,
                             "command", rep->command ? rep->command : "");
    json_object_set(root, "env", rep->env ? rep->env : json_null());
    json_t *notes = json_array();
    for (size_t i = 0; i < rep->nnotes; i++)
        json_array_append_new(notes, json_string(rep->notes[i]));
    json_object_set_new(root, "notes", notes);
    if (rep->nhints) {
        json_t *hints = json_array();
        for (size_t i = 0; i < rep->nhints; i++)
            json_array_append_new(hints, json_string(rep->hints[i]));
        json_object_set_new(root, "hints", hints);
    }
    json_t *vals = json_array();
    for (size_t i = 0; i < rep->nv; i++) {
        const bp_values_t *v = &rep->v[i];
        json_t *arr = json_array();
        for (size_t k = 0; k < v->n; k++)
            json_array_append_new(arr, value_json(v->dtype, v->bits[k]));
        json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "probe", v->probe, "output", v->output,
                              "side", v->side, "dtype", bp_dtype_name(v->dtype));
        if (v->in_run)
            json_object_set_new(o, "run_dtype", json_string(bp_dtype_name(v->run_dtype)));
        json_object_set_new(o, "values", arr);
        json_array_append_new(vals, o);
    }
    json_object_set_new(root, "values", vals);
    json_object_set_new(root, "results", res);
    if (rep->explain)
        json_object_set(root, "explain", rep->explain);
    json_object_set_new(root, "summary", bp_rep_json_summary(rep));
    if (rep->timing)
        json_object_set_new(root, "timing", bp_timing_json(rep->timing));
    const char *key;
    json_t *v;
    json_object_foreach(rep->extra, key, v)
        if (!json_object_get(root, key))
            json_object_set(root, key, v);
    return root;
}

json_t *bp_rep_json_build(const bp_report_t *rep)
{
    json_t *res = json_array();
    for (size_t i = 0; i < rep->n; i++)
        json_array_append_new(res, result_json(&rep->r[i]));
    return build(rep, res);
}

/* bp_rep_json writes the results (most of a run's report: 0.6 MB and 80
 * ms for the suite on one core) with the threads of a lane (lanes.h),
 * CHUNK results per job: each result's object built and dumped alone,
 * every newline of it followed by the two spaces of its depth in the
 * document (a dumped string holds no newline, only its escape), so that
 * the bytes are json_dumps's of the whole document. */
#define CHUNK 32
#define THREADS 8

typedef struct {
    const bp_report_t *rep;
    char **text; /* per job: its results' text, each after ",\n  " */
} dump_ctx_t;

static bp_status dump_chunk(void *arg, int lane, size_t j)
{
    (void)lane;
    dump_ctx_t *c = arg;
    size_t end = (j + 1) * CHUNK < c->rep->n ? (j + 1) * CHUNK : c->rep->n;
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    bool ok = m != NULL;
    for (size_t i = j * CHUNK; ok && i < end; i++) {
        json_t *o = result_json(&c->rep->r[i]);
        char *t = o ? json_dumps(o, JSON_INDENT(1)) : NULL;
        json_decref(o);
        ok = t != NULL && fputs(i ? ",\n  " : "\n  ", m) >= 0;
        for (const char *q = t, *nl; ok && q; q = nl ? nl + 1 : NULL) {
            nl = strchr(q, '\n');
            size_t n = nl ? (size_t)(nl - q) : strlen(q);
            ok = fwrite(q, 1, n, m) == n && (!nl || fputs("\n  ", m) >= 0);
        }
        free(t);
    }
    if (m && fclose(m) != 0)
        ok = false;
    if (!ok) {
        free(out);
        return BP_ENOMEM;
    }
    c->text[j] = out;
    return BP_OK;
}

/* Writes the results' array to f; false when out of memory or f fails. */
static bool write_results(FILE *f, const bp_report_t *rep)
{
    if (!rep->n)
        return fputs("[]", f) >= 0;
    size_t njobs = (rep->n + CHUNK - 1) / CHUNK;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int width = cores < 2 ? 1 : cores > THREADS ? THREADS : (int)cores;
    dump_ctx_t c = {.rep = rep, .text = calloc(njobs, sizeof(char *))};
    if (!c.text)
        return false;
    bp_lane_spec_t spec = {.width = width};
    bp_lane_fns_t fns = {.job = dump_chunk, .ctx = &c};
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start_wide(1, &spec, NULL, njobs, njobs, NULL, 0, &fns, &err);
    bool ok = l != NULL && fputc('[', f) != EOF;
    for (size_t j = 0; ok && j < njobs; j++)
        ok = bp_lanes_wait(l, j) < 0 && fputs(c.text[j], f) >= 0;
    bp_lanes_finish(l);
    for (size_t j = 0; j < njobs; j++)
        free(c.text[j]);
    free(c.text);
    return ok && fputs("\n ]", f) >= 0;
}

int bp_rep_json(FILE *f, const bp_report_t *rep)
{
    /* The document with a placeholder for the results, into memory first
     * and then one write (json_dumpf writes token by token through
     * stdio).  The placeholder's line is the only one that starts with
     * one space and "results": the document's own member; a nested one
     * starts with more spaces, a string's newline is escaped. */
    static const char mark[] = "\n \"results\": \"\"";
    json_t *root = build(rep, json_string(""));
    char *text = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
    json_decref(root);
    if (!text)
        return 2;
    char *at = strstr(text, mark);
    if (!at) { /* a jansson that lays documents out otherwise: all at once */
        free(text);
        root = bp_rep_json_build(rep);
        text = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
        json_decref(root);
        size_t n = text ? strlen(text) : 0;
        int rc = text && fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF ? 0 : 2;
        free(text);
        return rc;
    }
    size_t head = (size_t)(at - text) + sizeof mark - 3, rest = strlen(at + sizeof mark - 1);
    int rc = fwrite(text, 1, head, f) == head && write_results(f, rep) &&
                     fwrite(at + sizeof mark - 1, 1, rest, f) == rest && fputc('\n', f) != EOF
                 ? 0
                 : 2;
    free(text);
    return rc;
}

int bp_rep_write(const char *path, int (*fn)(FILE *, const bp_report_t *),
                 const bp_report_t *rep)
{
    if (strcmp(path, "-") == 0)
        return fn(stdout, rep);
    bp_out_t o;
    if (!bp_out_open(&o, path)) {
        bp_esc_printf(stderr, "bitprobe: cannot write '%s': %s\n", path, strerror(errno));
        return 2;
    }
    int rc = fn(o.f, rep);
    if (!bp_out_close(&o, rc == 0)) {
        bp_esc_printf(stderr, "bitprobe: cannot write '%s'\n", path);
        return 2;
    }
    return 0;
}
