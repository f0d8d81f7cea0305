/* The Markdown report: a self-contained bug ticket (GitHub-flavoured
 * Markdown, no HTML, no external files) of at most 65,536 bytes, GitHub's
 * limit for an issue body.  Sections, in order: title and summary table
 * (the results that are not bit-identical, failing ones first; the
 * bit-identical ones counted); the command to reproduce; the environment
 * of this host and the fingerprint of each backend (run) or each side
 * (diff) as one table; the definition of every probe with a result that
 * is not bit-identical, read from its YAML file; per output that differs
 * (failing ones first) a table of its comparisons, its values when small,
 * and per differing comparison the ulp histogram and the first mismatches
 * with index, exact decimal, hex and sign|exponent|mantissa bits; the
 * outputs bit-identical everywhere, in one line; notes.  When it all does
 * not fit, the detail goes first: the sections of differences that do not
 * fail, then the bit-identical list, then the sections of failing results,
 * then probe definitions, the notes, the environment and the fingerprints
 * side by side, in that order, so that the cause stays; a closing note
 * says what was cut.  The environment is one row per item with every side
 * in it (a diff's two sides first, their backends paired).  Paths under
 * the directory the command ran in (or $GITHUB_WORKSPACE) are shown
 * relative to it, the command to reproduce included.
 *
 * Names, paths and values go in code spans, other text is backslash-
 * escaped, and '|' is escaped inside table cells, so nothing a probe or a
 * file name holds can break the layout. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitfmt.h"
#include "config.h"
#include "diff_fp.h"
#include "rep.h"
#include "safeopen.h"

/* Probe files embedded beyond this size are cut (a probe is a few KB). */
#define MAX_PROBE_FILE (16u << 10)
/* GitHub's limit on an issue or comment body, in characters; the report
 * counts bytes, which are never fewer.  What does not fit is left out,
 * least important first, and a note says so. */
#define MD_LIMIT 65536
#define MD_RESERVE 1024 /* for the note */
/* Rows of the summary table at most. */
#define MAX_SUMMARY_ROWS 100

static bool is_ctl(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static void backticks(FILE *f, int n)
{
    for (int i = 0; i < n; i++)
        fputc('`', f);
}

void bp_md_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (is_ctl(*p))
            fputc(' ', f);
        else if (*p == '&')
            fputs("&amp;", f);
        else if (strchr("\\`*_[]<>|#~", *p))
            fprintf(f, "\\%c", *p);
        else
            fputc(*p, f);
    }
}

/* A code span; in a table cell '|' must be escaped (GFM splits cells
 * before it parses spans), elsewhere the backslash would show. */
static void code_span(FILE *f, const char *s, bool cell)
{
    s = s ? s : "";
    if (!*s)
        return;
    int run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    /* A span is opened and closed by a backtick run longer than any inside
     * it; a space pads a content that starts or ends with a backtick. */
    bool pad = s[0] == '`' || s[strlen(s) - 1] == '`';
    backticks(f, longest + 1);
    if (pad)
        fputc(' ', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_ctl(*p))
            fputc(' ', f);
        else if (*p == '|' && cell)
            fputs("\\|", f);
        else
            fputc(*p, f);
    }
    if (pad)
        fputc(' ', f);
    backticks(f, longest + 1);
}

void bp_md_code(FILE *f, const char *s)
{
    code_span(f, s, true);
}

static void code(FILE *f, const char *s)
{
    code_span(f, s, false);
}

/* A fenced block: the fence is longer than any backtick run in text. */
static void fenced(FILE *f, const char *lang, const char *text, size_t len)
{
    int run = 0, longest = 0;
    for (size_t i = 0; i < len; i++) {
        run = text[i] == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    int fence = longest >= 3 ? longest + 1 : 3;
    backticks(f, fence);
    fprintf(f, "%s\n", lang);
    for (size_t i = 0; i < len; i++)
        if (text[i] != '\r' && text[i] != '\0')
            fputc(text[i], f);
    if (len && text[len - 1] != '\n')
        fputc('\n', f);
    backticks(f, fence);
    fputs("\n\n", f);
}

static double pct(size_t part, size_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *verdict(const bp_result_t *r)
{
    bp_res_status_t s = bp_result_status(r);
    if (s == BP_RS_DRIFT)
        return "**DRIFT**";
    if (!r->compared && bp_result_outcome(r))
        return s == BP_RS_ONLY_A      ? "**only in a**"
               : s == BP_RS_ONLY_B    ? "**only in b**"
               : s == BP_RS_NOT_COMPARABLE ? "**not comparable**"
               : s == BP_RS_MISSING_GOLDEN ? "**missing golden**"
               : s == BP_RS_SKIPPED_BACKEND ? "**skipped backend**"
                                            : "**error**";
    return bp_res_status_label(s);
}

/* A double as the shortest decimal that reads back. */
static void dbl(FILE *f, double v)
{
    char s[BP_FMT_MAX];
    bp_fmt_shortest(BP_F64, bp_f64_bits(v), s, sizeof s);
    fputs(s, f);
}

static void at(FILE *f, const bp_cmp_t *c, size_t i)
{
    char idx[96];
    bp_cmp_index_format(c, i, idx, sizeof idx);
    fprintf(f, " at %s", idx);
}

static void ulp_cell(FILE *f, uint64_t u)
{
    if (u == UINT64_MAX)
        fputs("class change", f);
    else
        fprintf(f, "%" PRIu64, u);
}

/* A result's max ulp cell: "sign of zero" when that is all that differs. */
static void max_ulp_cell(FILE *f, const bp_cmp_t *c)
{
    if (bp_cmp_zero_signs_only(c))
        fputs("sign of zero", f);
    else
        ulp_cell(f, c->max_ulp);
}

static void title(FILE *f, const bp_report_t *rep)
{
    bp_tally_t t;
    char line[1024];
    bp_report_tally(rep, &t);
    bp_tally_line(rep, &t, line, sizeof line);
    fputs("# bitprobe ", f);
    bp_md_text(f, line);
    fputs("\n\n", f);
    fprintf(f, "Generated by bitprobe %s. ", PACKAGE_VERSION);
    fprintf(f, "Sides: *a* is the expected or reference side, *b* the actual one.\n\n");
    for (size_t k = 0; k < rep->nhints; k++) {
        fputs("Hint: ", f);
        bp_md_text(f, rep->hints[k]);
        fputs("\n\n", f);
    }
    if (!rep->n)
        return;
    /* diff compares tensors: no output column unless --map renamed one. */
    bool outputs = false, tensors = true;
    for (size_t i = 0; i < rep->n; i++) {
        outputs |= rep->r[i].output && *rep->r[i].output;
        tensors &= rep->r[i].kind == BP_RES_DIFF;
    }
    size_t nsame = 0, shown = 0, rows = 0;
    for (size_t i = 0; i < rep->n; i++)
        nsame += bp_result_status(&rep->r[i]) == BP_RS_IDENTICAL;
    if (nsame == rep->n) {
        fprintf(f, "All %zu comparisons are bit-identical.\n\n", nsame);
        return;
    }
    fprintf(f, "| %s |%s dtype | b vs a | mismatched | %% | max ulp | verdict |\n"
               "|---|%s---|---|---:|---:|---:|---|\n",
            tensors ? "tensor" : "probe", outputs ? (tensors ? " in b |" : " output |") : "",
            outputs ? "---|" : "");
    /* Failing results first, then the other differences; bit-identical
     * ones are counted, not listed. */
    for (size_t n = 0; n < 2 * rep->n; n++) {
        const bp_result_t *r = &rep->r[n % rep->n];
        bool fails = bp_result_outcome(r) != 0;
        if (bp_result_status(r) == BP_RS_IDENTICAL || fails != (n < rep->n))
            continue;
        if (++rows > MAX_SUMMARY_ROWS)
            continue;
        shown++;
        fputs("| ", f);
        bp_md_code(f, r->probe);
        if (outputs) {
            fputs(" | ", f);
            bp_md_code(f, r->output);
        }
        char dt[64];
        bp_result_dtype_label(r, dt, sizeof dt);
        fprintf(f, " | %s | ", dt);
        bp_md_code(f, r->b);
        fputs(" vs ", f);
        bp_md_code(f, r->a);
        if (r->compared) {
            fprintf(f, " | %zu / %zu | %.4g | ", r->cmp.mismatched, r->cmp.total,
                    pct(r->cmp.mismatched, r->cmp.total));
            max_ulp_cell(f, &r->cmp);
        } else {
            fputs(" | | | ", f);
        }
        fprintf(f, " | %s |\n", verdict(r));
    }
    fputc('\n', f);
    if (rows > shown)
        fprintf(f, "%zu more differing results are not in this table (the JSON report has "
                   "them all).\n\n", rows - shown);
    if (nsame)
        fprintf(f, "%zu more comparison%s bit-identical.\n\n", nsame,
                nsame == 1 ? " is" : "s are");
}

/* ---- environment: JSON objects flattened to "a.b.c" rows ---- */

typedef struct {
    char **keys;
    size_t n, cap;
} keys_t;

static void keys_add(keys_t *k, const char *key)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->keys[i], key) == 0)
            return;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 32;
        char **nk = realloc(k->keys, nc * sizeof *nk);
        if (!nk)
            return;
        k->keys = nk;
        k->cap = nc;
    }
    char *d = strdup(key);
    if (d)
        k->keys[k->n++] = d;
}

static bool skip_key(const char *key)
{
    /* Shown as columns of their own, or not at all. */
    return strcmp(key, "backends") == 0 || strcmp(key, "sides") == 0;
}

/* Prose about a measured behaviour's evidence: its verdict says what it
 * found, in one row (diff_fp.c leaves the same parts out). */
static bool prose_key(const char *key)
{
    return strcmp(key, "evidence") == 0 || strcmp(key, "summary") == 0 ||
           strcmp(key, "title") == 0;
}

static void collect(const json_t *j, const char *prefix, keys_t *k, bool top)
{
    const char *key;
    json_t *v;
    char path[512];
    if (!json_is_object(j)) {
        if (*prefix)
            keys_add(k, prefix);
        return;
    }
    json_object_foreach((json_t *)j, key, v) {
        if ((top && skip_key(key)) || prose_key(key))
            continue;
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", key);
        collect(v, path, k, false);
    }
}

static const json_t *lookup(const json_t *j, const char *path)
{
    char buf[512], *save, *part;
    snprintf(buf, sizeof buf, "%s", path);
    for (part = strtok_r(buf, ".", &save); part && j; part = strtok_r(NULL, ".", &save))
        j = json_is_object(j) ? json_object_get(j, part) : NULL;
    return j;
}

static void json_cell(FILE *f, const json_t *v)
{
    if (!v || json_is_null(v))
        return;
    if (json_is_string(v)) {
        bp_md_code(f, json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s)
        bp_md_code(f, s);
    free(s);
}

typedef struct {
    const char *label;
    const json_t *env;
} column_t;

static void environment(FILE *f, const bp_report_t *rep)
{
    column_t cols[34];
    int nc = 0;
    /* a diff's two sides first, side by side (their backends under
     * backend.<name>, paired as diff pairs them), then this host */
    const json_t *arr = rep->env ? json_object_get(rep->env, "sides") : NULL;
    char heads[34][512];
    for (size_t i = 0; i < json_array_size(arr) && nc < 16; i++) {
        const json_t *s = json_array_get(arr, i);
        const char *name = json_string_value(json_object_get(s, "name"));
        char rel[4096];
        const char *label = bp_report_rel_path(json_string_value(json_object_get(s, "label")),
                                               rel, sizeof rel);
        snprintf(heads[nc], sizeof heads[nc], "%s: %s%s%s%s", i == 0 ? "a" : i == 1 ? "b" : "?",
                 name ? name : label ? label : "?", name ? " (" : "", name ? label : "",
                 name ? ")" : "");
        cols[nc] = (column_t){heads[nc], json_object_get(s, "env")};
        nc++;
    }
    if (rep->env)
        cols[nc++] = (column_t){"this host", rep->env};
    arr = rep->env ? json_object_get(rep->env, "backends") : NULL;
    for (size_t i = 0; i < json_array_size(arr) && nc < 34; i++) {
        const json_t *b = json_array_get(arr, i);
        cols[nc++] = (column_t){json_string_value(json_object_get(b, "name")),
                                json_object_get(b, "fingerprint")};
    }
    fputs("## Environment\n\n", f);
    if (json_array_size(arr))
        fputs("Side *a* and side *b* were produced where their columns say (from a saved "
              "run's manifest, or the fingerprint a golden carries); `this host` is the "
              "machine that compared them.\n\n", f);
    if (!nc) {
        fputs("No environment was recorded.\n\n", f);
        return;
    }
    keys_t k = {0};
    for (int c = 0; c < nc; c++)
        collect(cols[c].env, "", &k, true);
    fputs("| |", f);
    for (int c = 0; c < nc; c++) {
        fputc(' ', f);
        bp_md_code(f, cols[c].label ? cols[c].label : "?");
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (int c = 0; c < nc; c++)
        fputs("---|", f);
    fputc('\n', f);
    for (size_t i = 0; i < k.n; i++) {
        fputs("| ", f);
        bp_md_text(f, k.keys[i]);
        fputs(" |", f);
        for (int c = 0; c < nc; c++) {
            fputc(' ', f);
            json_cell(f, lookup(cols[c].env, k.keys[i]));
            fputs(" |", f);
        }
        fputc('\n', f);
        free(k.keys[i]);
    }
    free(k.keys);
    fputc('\n', f);
    for (int c = 0; c < nc; c++)
        if (!json_is_object(cols[c].env) || !json_object_size(cols[c].env)) {
            code(f, cols[c].label ? cols[c].label : "?");
            fputs(" carries no environment metadata.\n\n", f);
        }
}

/* ---- probe definitions ---- */

static void probe_file(FILE *f, const char *path)
{
    char rel[4096];
    fputs("### ", f);
    code(f, bp_report_rel_path(path, rel, sizeof rel));
    fputs("\n\n", f);
    const char *why;
    FILE *in = bp_safe_fopen(path, &why);
    if (!in) {
        fputs("Cannot read it: ", f);
        bp_md_text(f, why);
        fputs(".\n\n", f);
        return;
    }
    char *buf = malloc(MAX_PROBE_FILE);
    size_t n = buf ? fread(buf, 1, MAX_PROBE_FILE, in) : 0;
    bool more = buf && fgetc(in) != EOF;
    fclose(in);
    if (buf)
        fenced(f, "yaml", buf, n);
    if (more)
        fprintf(f, "(cut after %u bytes)\n\n", MAX_PROBE_FILE);
    free(buf);
}

/* ---- per output ---- */

static void value_cell(FILE *f, bp_dtype_t dt, uint64_t bits)
{
    char dec[BP_FMT_DECIMAL_MAX], hx[BP_FMT_MAX];
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_md_code(f, dec);
    fputs(" ", f);
    bp_md_code(f, hx);
}

static void values(FILE *f, const bp_report_t *rep, const bp_result_t *g)
{
    const bp_values_t *vs[16];
    int nv = 0;
    for (size_t i = 0; i < rep->nv && nv < 16; i++) {
        const bp_values_t *v = &rep->v[i];
        if (bp_values_of(v, g))
            vs[nv++] = v;
    }
    if (!nv)
        return;
    fputs("Values:\n\n| index |", f);
    for (int s = 0; s < nv; s++) {
        fputc(' ', f);
        bp_md_code(f, vs[s]->side);
        fputs(" |", f);
    }
    fputs("\n|---:|", f);
    for (int s = 0; s < nv; s++)
        fputs("---|", f);
    fputc('\n', f);
    for (size_t k = 0; k < vs[0]->n; k++) {
        fprintf(f, "| %zu |", k);
        for (int s = 0; s < nv; s++) {
            fputc(' ', f);
            if (k < vs[s]->n)
                value_cell(f, g->dtype, vs[s]->bits[k]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void result_row(FILE *f, const bp_result_t *r)
{
    const bp_cmp_t *c = &r->cmp;
    char pol[128];
    bp_policy_format(&r->policy, pol, sizeof pol);
    fputs("| ", f);
    bp_md_code(f, r->a);
    fputs(" | ", f);
    bp_md_code(f, r->b);
    if (!r->compared) {
        fputs(" | | | | | | ", f);
        bp_md_code(f, pol);
        fprintf(f, " | %s: ", verdict(r));
        bp_md_text(f, r->note);
        fputs(" |\n", f);
        return;
    }
    fprintf(f, " | %zu / %zu | %.4g | ", c->mismatched, c->total, pct(c->mismatched, c->total));
    if (bp_cmp_zero_signs_only(c)) {
        fputs("0 | 0 | sign of zero", f);
    } else if (c->mismatched) {
        dbl(f, c->max_abs);
        at(f, c, c->max_abs_idx);
        fputs(" | ", f);
        dbl(f, c->max_rel);
        at(f, c, c->max_rel_idx);
        fputs(" | ", f);
        ulp_cell(f, c->max_ulp);
        at(f, c, c->max_ulp_idx);
    } else {
        fputs("0 | 0 | 0", f);
    }
    fputs(" | ", f);
    bp_md_code(f, pol);
    fprintf(f, " | %s", verdict(r));
    if (r->note) {
        fputs(": ", f);
        bp_md_text(f, r->note);
    }
    fputs(" |\n", f);
}

static void histogram(FILE *f, const bp_cmp_t *c)
{
    fputs("| ulp | elements | % |\n|---|---:|---:|\n", f);
    for (int i = 0; i < BP_HIST_BINS; i++) {
        int b = bp_hist_at(i);
        if (c->hist[b])
            fprintf(f, "| %s | %" PRIu64 " | %.4g |\n", bp_hist_label(b), c->hist[b],
                    pct((size_t)c->hist[b], c->total));
    }
    fputc('\n', f);
    if (c->zero_sign_diffs)
        fprintf(f, "%zu element%s differ%s in the sign of a zero only (+0 against -0)%s.\n\n",
                c->zero_sign_diffs, c->zero_sign_diffs == 1 ? "" : "s",
                c->zero_sign_diffs == 1 ? "s" : "",
                c->zero_sign_excused == c->zero_sign_diffs ? ", excused by the policy"
                : c->zero_sign_excused ? ", some excused by the policy" : "");
    if (c->nan_payload_diffs)
        fprintf(f, "%zu NaN%s differ%s in payload only (excused: NaNs compare by class; "
                   "`--nan-payload` counts them).\n\n",
                c->nan_payload_diffs, c->nan_payload_diffs == 1 ? "" : "s",
                c->nan_payload_diffs == 1 ? "s" : "");
}

static void side_row(FILE *f, const char *idx, const char *side, bp_dtype_t dt, uint64_t bits,
                     const char *ulp)
{
    char dec[BP_FMT_DECIMAL_MAX], hx[BP_FMT_MAX], fl[BP_FMT_MAX];
    bp_fmt_decimal(dt, bits, dec, sizeof dec);
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    fprintf(f, "| %s | %s | ", idx, side);
    bp_md_code(f, dec);
    fputs(" | ", f);
    bp_md_code(f, hx);
    fputs(" | ", f);
    bp_md_code(f, fl);
    fprintf(f, " | %s |\n", ulp);
}

static void mismatches(FILE *f, const bp_result_t *r)
{
    const bp_cmp_t *c = &r->cmp;
    char idx[96], ulp[32];
    fputs("| index | side | decimal (exact) | hex | sign exponent mantissa | ulp |\n"
          "|---|---|---|---|---|---:|\n", f);
    for (size_t k = 0; k < c->nfirst; k++) {
        const bp_mismatch_t *m = &c->first[k];
        bp_cmp_index_format(c, m->index, idx, sizeof idx);
        if (m->ulp == UINT64_MAX)
            snprintf(ulp, sizeof ulp, "class change");
        else if (bp_mismatch_zero_sign(m))
            snprintf(ulp, sizeof ulp, "sign of zero");
        else
            snprintf(ulp, sizeof ulp, "%" PRIu64, m->ulp);
        side_row(f, idx, "a", r->dtype, m->a, ulp);
        side_row(f, "", "b", r->dtype, m->b, "");
    }
    fputc('\n', f);
    if (c->mismatched > c->nfirst)
        fprintf(f, "%zu more mismatch%s not shown.\n\n", c->mismatched - c->nfirst,
                c->mismatched - c->nfirst == 1 ? "" : "es");
}

static void group(FILE *f, const bp_report_t *rep, size_t i, size_t j)
{
    const bp_result_t *g = &rep->r[i];
    char shape[96] = "";
    for (size_t k = i; k < j; k++)
        if (rep->r[k].compared) {
            bp_shape_format(rep->r[k].cmp.ndim, rep->r[k].cmp.shape, shape, sizeof shape);
            break;
        }
    fputs("### ", f);
    code(f, g->probe);
    if (g->output && *g->output) {
        fputs(" ", f);
        code(f, g->output);
    }
    char dt[64];
    bp_result_dtype_label(g, dt, sizeof dt);
    fprintf(f, " %s%s%s\n\n", dt, *shape ? " " : "", shape);
    if (g->file) {
        char rel[4096];
        fputs("Defined in ", f);
        code(f, bp_report_rel_path(g->file, rel, sizeof rel));
        if (g->line > 0)
            fprintf(f, ", line %d", g->line);
        fputs(".\n\n", f);
    }
    fputs("| a | b | mismatched / total | % | max abs | max rel | max ulp | policy | verdict |\n"
          "|---|---|---:|---:|---|---|---|---|---|\n", f);
    for (size_t k = i; k < j; k++)
        result_row(f, &rep->r[k]);
    fputc('\n', f);
    values(f, rep, g);
    for (size_t k = i; k < j; k++) {
        const bp_result_t *r = &rep->r[k];
        if (!r->compared || !r->cmp.mismatched)
            continue;
        fputs("#### ", f);
        code(f, r->b);
        fputs(" vs ", f);
        code(f, r->a);
        fputs("\n\nulp histogram:\n\n", f);
        histogram(f, &r->cmp);
        if (r->cmp.nfirst == 1)
            fputs("First mismatch (a = ", f);
        else
            fprintf(f, "First %zu mismatches (a = ", r->cmp.nfirst);
        code(f, r->a);
        fputs(", b = ", f);
        code(f, r->b);
        fputs("):\n\n", f);
        mismatches(f, r);
    }
}

/* A run that compared nothing (one backend, no goldens) still shows the
 * values of its small outputs. */
static void lone_values(FILE *f, const bp_report_t *rep)
{
    for (size_t i = 0; i < rep->nv; i++) {
        const bp_values_t *v = &rep->v[i];
        bp_result_t g = bp_values_group(v);
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = bp_values_of(&rep->v[k], &g);
        if (seen)
            continue;
        char dt[64];
        bp_result_dtype_label(&g, dt, sizeof dt);
        if (i == 0)
            fputs("## Values\n\n", f);
        fputs("### ", f);
        code(f, v->probe);
        fputc(' ', f);
        code(f, v->output);
        fprintf(f, " %s\n\n", dt);
        values(f, rep, &g);
    }
}

/* The report is assembled from pieces written to memory, kept in
 * document order and chosen by importance until the budget is spent. */
typedef struct {
    char *s;
    size_t n;
    int prio;  /* lower first when the budget is short */
    bool kept;
} piece_t;

typedef struct {
    piece_t *p;
    size_t n, cap;
} pieces_t;

static FILE *piece_open(pieces_t *ps, int prio)
{
    if (ps->n == ps->cap) {
        size_t nc = ps->cap ? 2 * ps->cap : 32;
        piece_t *t = realloc(ps->p, nc * sizeof *t);
        if (!t)
            return NULL;
        ps->p = t;
        ps->cap = nc;
    }
    piece_t *p = &ps->p[ps->n];
    *p = (piece_t){.prio = prio};
    FILE *m = open_memstream(&p->s, &p->n);
    if (m)
        ps->n++;
    return m;
}

/* Levels of importance, the first kept first: what a reader needs to find
 * the cause (the verdict, how to reproduce, where the two sides differ
 * and what they ran on) goes before the detail of each result, which is
 * cut first. */
enum { P_MUST, P_FP, P_ENV, P_NOTES, P_PROBES, P_FAILING, P_SAME, P_OTHER, P_LEVELS };

static bool has_file(const bp_result_t *r)
{
    return r->file != NULL;
}

static int cmp_file(const bp_result_t *a, const bp_result_t *b)
{
    return strcmp(a->file, b->file);
}

/* The results whose probe file is shown, once, at its first result: those
 * a differing result names (n log n); NULL when out of memory. */
static bool *involved(const bp_report_t *rep)
{
    size_t n = rep->n ? rep->n : 1, *first = malloc(n * sizeof *first);
    bool *inv = calloc(n, sizeof *inv);
    if (!first || !inv || !bp_report_firsts(rep, cmp_file, has_file, first)) {
        free(first);
        free(inv);
        return NULL;
    }
    for (size_t k = 0; k < rep->n; k++)
        if (first[k] != SIZE_MAX && bp_result_status(&rep->r[k]) != BP_RS_IDENTICAL &&
            bp_result_status(&rep->r[k]) != BP_RS_SKIPPED_BACKEND)
            inv[first[k]] = true;
    free(first);
    return inv;
}

int bp_rep_markdown(FILE *f, const bp_report_t *rep)
{
    pieces_t ps = {0};
    FILE *m;
    bool ok = true;
#define PIECE(prio) (ok &= (m = piece_open(&ps, (prio))) != NULL, m)
#define CLOSE() (ok &= fclose(m) == 0)
    if (PIECE(P_MUST)) {
        title(m, rep);
        fputs("## Reproduce\n\n", m);
        const char *cmd = rep->command ? rep->command : "";
        fenced(m, "sh", cmd, strlen(cmd));
        CLOSE();
    }
    if (PIECE(P_ENV)) {
        environment(m, rep);
        CLOSE();
    }
    if (json_array_size(json_object_get(rep->extra, "fingerprints")) && PIECE(P_FP)) {
        bp_diff_fp_markdown(m, json_object_get(rep->extra, "fingerprints"));
        CLOSE();
    }
    bool any = false, *inv = involved(rep);
    ok &= inv != NULL;
    for (size_t i = 0; i < rep->n && ok; i++)
        if (inv[i]) {
            if (!any && PIECE(P_PROBES)) {
                fputs("## Probe definitions\n\n", m);
                CLOSE();
            }
            any = true;
            if (PIECE(P_PROBES)) {
                probe_file(m, rep->r[i].file);
                CLOSE();
            }
        }
    free(inv);
    if (rep->n && PIECE(P_MUST)) {
        fputs("## Results\n\n", m);
        CLOSE();
    }
    /* Outputs with a failing comparison, then the other differing ones;
     * those whose comparisons are all bit-identical get one line at the
     * end: the ticket is about the others. */
    size_t same = 0;
    FILE *sm = NULL; /* the only piece kept open while others are not: none opens in pass 2 */
    for (int pass = 0; pass < 3 && ok; pass++) {
        for (size_t i = 0; i < rep->n && ok;) {
            size_t j = i + 1;
            while (j < rep->n && bp_result_same_group(&rep->r[i], &rep->r[j]))
                j++;
            bool identical = true, fails = false;
            for (size_t k = i; k < j; k++) {
                identical &= rep->r[k].compared && !rep->r[k].cmp.mismatched;
                fails |= bp_result_outcome(&rep->r[k]) != 0;
            }
            if (!identical && pass == (fails ? 0 : 1) && PIECE(fails ? P_FAILING : P_OTHER)) {
                group(m, rep, i, j);
                CLOSE();
            } else if (identical && pass == 2 && (sm || (sm = PIECE(P_SAME)))) {
                fputs(same++ ? ", " : "Bit-identical in every comparison: ", sm);
                code(sm, rep->r[i].probe);
                if (rep->r[i].output && *rep->r[i].output) {
                    fputc(' ', sm);
                    code(sm, rep->r[i].output);
                }
                char dt[64];
                bp_result_dtype_label(&rep->r[i], dt, sizeof dt);
                fprintf(sm, " %s", dt);
            }
            i = j;
        }
    }
    if (sm) {
        fputs(".\n\n", sm);
        m = sm;
        CLOSE();
    }
    if (!rep->n && PIECE(P_OTHER)) {
        lone_values(m, rep);
        CLOSE();
    }
    if (rep->nnotes && PIECE(P_NOTES)) {
        fputs("## Notes\n\n", m);
        for (size_t k = 0; k < rep->nnotes; k++) {
            fputs("- ", m);
            bp_md_text(m, rep->notes[k]);
            fputc('\n', m);
        }
        fputc('\n', m);
        CLOSE();
    }
#undef PIECE
#undef CLOSE
    /* Keep by importance, each level in document order, while it fits. */
    size_t used = 0, left_out[P_LEVELS] = {0};
    for (int prio = 0; prio < P_LEVELS; prio++)
        for (size_t i = 0; i < ps.n; i++) {
            piece_t *p = &ps.p[i];
            if (p->prio != prio)
                continue;
            p->kept = prio == P_MUST || used + p->n <= MD_LIMIT - MD_RESERVE;
            if (p->kept)
                used += p->n;
            else
                left_out[prio]++;
        }
    for (size_t i = 0; i < ps.n; i++)
        if (ps.p[i].kept)
            fwrite(ps.p[i].s, 1, ps.p[i].n, f);
    size_t cut = 0;
    for (int k = 0; k < P_LEVELS; k++)
        cut += left_out[k];
    if (cut) {
        fprintf(f, "**Cut to fit GitHub's %d-character limit:** left out", MD_LIMIT);
        static const char *const what[P_LEVELS] = {
            "", "fingerprints side by side", "the environment", "the notes",
            "probe definitions", "failing results", "the list of bit-identical outputs",
            "other differing results"};
        const char *sep = " ";
        for (int k = 1; k < P_LEVELS; k++)
            if (left_out[k]) {
                fprintf(f, "%s%zu section%s of %s", sep, left_out[k], left_out[k] == 1 ? "" : "s",
                        what[k]);
                sep = ", ";
            }
        fputs(". The JSON report (`--json`) holds everything; `bitprobe report` renders "
              "it again.\n", f);
    }
    for (size_t i = 0; i < ps.n; i++)
        free(ps.p[i].s);
    free(ps.p);
    return !ok || ferror(f) ? 2 : 0;
}
