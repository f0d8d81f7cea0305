/* The report model (see report.h). */
#include "report.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

size_t bp_report_shell_word(const char *arg, char *out, size_t n)
{
    bool plain = *arg != '\0';
    for (const char *p = arg; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789-_=.,/:+@%", *p))
            plain = false;
    size_t len = 0;
#define PUT(c) (len + 1 < n ? (void)(out[len] = (c)) : (void)0, len++)
    if (!plain)
        PUT('\'');
    for (const char *p = arg; *p; p++) {
        if (*p == '\'' && !plain) {
            PUT('\'');
            PUT('\\');
            PUT('\'');
        }
        PUT(*p);
    }
    if (!plain)
        PUT('\'');
#undef PUT
    if (n)
        out[len < n ? len : n - 1] = '\0';
    return len;
}

/* Appends arg, quoted for a POSIX shell when it needs it, after a space. */
static void append_quoted(char **buf, size_t *len, size_t *cap, const char *arg)
{
    size_t need = *len + bp_report_shell_word(arg, NULL, 0) + 2;
    if (need > *cap) {
        char *nb = realloc(*buf, need * 2);
        if (!nb)
            return;
        *buf = nb;
        *cap = need * 2;
    }
    if (*len)
        (*buf)[(*len)++] = ' ';
    *len += bp_report_shell_word(arg, *buf + *len, *cap - *len);
}

const char *bp_report_rel_path(const char *path, char *out, size_t n)
{
    char root[PATH_MAX];
    const char *ws = getenv("GITHUB_WORKSPACE");
    if (!path || path[0] != '/')
        return path;
    if (ws && *ws)
        snprintf(root, sizeof root, "%s", ws);
    else if (!getcwd(root, sizeof root))
        return path;
    size_t l = strlen(root);
    while (l > 1 && root[l - 1] == '/')
        root[--l] = '\0';
    if (l == 1 || strncmp(path, root, l) != 0 || (path[l] != '/' && path[l] != '\0'))
        return path;
    snprintf(out, n, "%s", path[l] ? path + l + 1 : ".");
    return out;
}

void bp_report_init(bp_report_t *rep, int argc, char **argv)
{
    memset(rep, 0, sizeof *rep);
    size_t len = 0, cap = 0;
    append_quoted(&rep->command, &len, &cap, "bitprobe");
    for (int i = 0; i < argc; i++) {
        /* the reporter's absolute paths, where they lie in the project,
         * relative to it: the command reproduces from its root */
        char rel[PATH_MAX + 64], word[PATH_MAX + 128];
        const char *a = argv[i], *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        if (eq && eq[1] == '/' && (size_t)(eq - a) < 64) {
            const char *r = bp_report_rel_path(eq + 1, rel, sizeof rel);
            snprintf(word, sizeof word, "%.*s=%s", (int)(eq - a), a, r);
            a = word;
        } else {
            a = bp_report_rel_path(a, rel, sizeof rel);
        }
        append_quoted(&rep->command, &len, &cap, a);
    }
}

void bp_report_free(bp_report_t *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        bp_result_t *r = &rep->r[i];
        free(r->probe);
        free(r->file);
        free(r->output);
        free(r->a);
        free(r->b);
        free(r->note);
        free(r->dtype_as);
        bp_cmp_free(&r->cmp);
    }
    for (size_t i = 0; i < rep->nv; i++) {
        free(rep->v[i].probe);
        free(rep->v[i].output);
        free(rep->v[i].side);
    }
    for (size_t i = 0; i < rep->nnotes; i++)
        free(rep->notes[i]);
    free(rep->notes);
    for (size_t i = 0; i < rep->nhints; i++)
        free(rep->hints[i]);
    free(rep->hints);
    free(rep->why_empty);
    free(rep->r);
    free(rep->v);
    free(rep->command);
    json_decref(rep->env);
    json_decref(rep->explain);
    json_decref(rep->extra);
    memset(rep, 0, sizeof *rep);
}

bp_result_t *bp_report_add(bp_report_t *rep, const bp_result_t *r)
{
    if (rep->n == rep->cap) {
        size_t nc = rep->cap ? rep->cap * 2 : 16;
        bp_result_t *nr = realloc(rep->r, nc * sizeof *nr);
        if (!nr)
            return NULL;
        rep->r = nr;
        rep->cap = nc;
    }
    bp_result_t *d = &rep->r[rep->n++];
    *d = *r;
    d->probe = dup_or_null(r->probe);
    d->file = dup_or_null(r->file);
    d->output = dup_or_null(r->output);
    d->a = dup_or_null(r->a);
    d->b = dup_or_null(r->b);
    d->note = dup_or_null(r->note);
    d->dtype_as = dup_or_null(r->dtype_as);
    return d;
}

bool bp_report_add_values(bp_report_t *rep, const char *probe, const char *output,
                          const char *side, bp_dtype_t dt, bool in_run, bp_dtype_t run_dt,
                          const void *data, size_t n)
{
    if (n > BP_REPORT_SMALL)
        return false;
    if (rep->nv == rep->capv) {
        size_t nc = rep->capv ? rep->capv * 2 : 16;
        bp_values_t *nv = realloc(rep->v, nc * sizeof *nv);
        if (!nv)
            return false;
        rep->v = nv;
        rep->capv = nc;
    }
    bp_values_t *v = &rep->v[rep->nv++];
    v->probe = strdup(probe);
    v->output = strdup(output);
    v->side = strdup(side);
    v->dtype = dt;
    v->in_run = in_run;
    v->run_dtype = run_dt;
    v->n = n;
    for (size_t i = 0; i < n; i++)
        v->bits[i] = bp_dtype_load_bits(dt, data, i);
    return true;
}

bool bp_report_note(bp_report_t *rep, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **nn = realloc(rep->notes, (rep->nnotes + 1) * sizeof *nn);
    if (!nn)
        return false;
    rep->notes = nn;
    rep->notes[rep->nnotes++] = strdup(buf);
    return true;
}

bool bp_report_hint(bp_report_t *rep, const char *hint)
{
    for (size_t k = 0; k < rep->nhints; k++)
        if (strcmp(rep->hints[k], hint) == 0)
            return true;
    char **nh = realloc(rep->hints, (rep->nhints + 1) * sizeof *nh);
    if (!nh)
        return false;
    rep->hints = nh;
    if (!(nh[rep->nhints] = strdup(hint)))
        return false;
    rep->nhints++;
    return true;
}

bool bp_report_why_empty(bp_report_t *rep, const char *why, bool ok)
{
    char *d = strdup(why);
    if (!d)
        return false;
    free(rep->why_empty);
    rep->why_empty = d;
    rep->empty_ok = ok;
    return true;
}

bp_res_status_t bp_result_status(const bp_result_t *r)
{
    if (!r->compared)
        return r->status;
    if (!r->cmp.pass)
        return r->counts ? BP_RS_DRIFT : BP_RS_DIFFERS;
    return r->cmp.mismatched ? BP_RS_WITHIN : BP_RS_IDENTICAL;
}

int bp_result_outcome(const bp_result_t *r)
{
    switch (bp_result_status(r)) {
    case BP_RS_IDENTICAL:
    case BP_RS_WITHIN:
    case BP_RS_DIFFERS:
        return 0;
    case BP_RS_DRIFT:
        return 1;
    case BP_RS_ONLY_A:
    case BP_RS_ONLY_B:
    case BP_RS_NOT_COMPARABLE:
        return r->counts ? 1 : 0;
    case BP_RS_MISSING_GOLDEN:
    case BP_RS_SKIPPED_BACKEND:
        return r->counts ? 2 : 0;
    case BP_RS_ERROR:
    case BP_RS_COUNT:
        break;
    }
    return 2;
}

static const struct {
    const char *name, *label, *plural;
} status_names[BP_RS_COUNT] = {
    [BP_RS_IDENTICAL] = {"identical", "identical", "identical"},
    [BP_RS_WITHIN] = {"within_policy", "within policy", "within policy"},
    [BP_RS_DIFFERS] = {"differs", "differs (informational)", "differ (informational)"},
    [BP_RS_DRIFT] = {"drift", "DRIFT", "drift"},
    [BP_RS_ONLY_A] = {"only_in_a", "only in a", "only in a"},
    [BP_RS_ONLY_B] = {"only_in_b", "only in b", "only in b"},
    [BP_RS_NOT_COMPARABLE] = {"not_comparable", "not comparable", "not comparable"},
    [BP_RS_MISSING_GOLDEN] = {"missing_golden", "missing golden", "missing golden"},
    [BP_RS_SKIPPED_BACKEND] = {"skipped_backend", "skipped backend", "skipped backend"},
    [BP_RS_ERROR] = {"error", "error", "errors"},
};

const char *bp_res_status_name(bp_res_status_t s)
{
    return s < BP_RS_COUNT ? status_names[s].name : "?";
}

const char *bp_res_status_label(bp_res_status_t s)
{
    return s < BP_RS_COUNT ? status_names[s].label : "?";
}

bool bp_res_status_parse(const char *name, bp_res_status_t *out)
{
    for (int s = 0; s < BP_RS_COUNT; s++)
        if (strcmp(name, status_names[s].name) == 0) {
            *out = (bp_res_status_t)s;
            return true;
        }
    return false;
}

void bp_report_tally(const bp_report_t *rep, bp_tally_t *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < rep->n; i++) {
        const bp_result_t *r = &rep->r[i];
        int o = bp_result_outcome(r);
        t->n[bp_result_status(r)]++;
        t->results++;
        t->compared += r->compared;
        t->failed += o == 1;
        t->errors += o == 2;
        t->skipped += !r->compared && o == 0;
        if (r->compared) {
            t->zero_signs_excused += r->cmp.zero_sign_excused;
            t->nan_payloads_excused += r->cmp.nan_payload_diffs;
        }
    }
    if (!t->compared) {
        /* Nothing compared is never a pass: one-sided and incomparable
         * tensors say why (diff), as the other cases do. */
        size_t oa = t->n[BP_RS_ONLY_A], ob = t->n[BP_RS_ONLY_B], nc = t->n[BP_RS_NOT_COMPARABLE];
        const char *why = rep->why_empty;
        if (!why && t->results && t->n[BP_RS_MISSING_GOLDEN] == t->results)
            why = "no goldens for this backend";
        else if (!why && t->results && t->n[BP_RS_SKIPPED_BACKEND] == t->results)
            why = "no backend ran";
        else if (!why && !t->results)
            why = "nothing to compare";
        else if (!why && oa && ob)
            why = "no tensor in common";
        else if (!why && (oa || ob))
            why = nc ? "one-sided, the rest not comparable" : "one-sided";
        else if (!why && nc)
            why = "not comparable";
        if (why)
            snprintf(t->why_empty, sizeof t->why_empty, "%s", why);
    }
    t->exit = t->errors || (t->why_empty[0] && !rep->empty_ok) ? 2 : t->failed ? 1 : 0;
    t->verdict = t->exit == 2 ? "error" : t->exit == 1 ? "drift" : "passed";
}

/* Appends to out (len so far in *len). */
static void put(char *out, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *len, n - *len, fmt, ap);
    va_end(ap);
    if (k > 0)
        *len = *len + (size_t)k < n ? *len + (size_t)k : n - 1;
}

static const char *plural(int s, size_t n)
{
    return n == 1 ? status_names[s].label : status_names[s].plural;
}

void bp_tally_line(const bp_report_t *rep, const bp_tally_t *t, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    put(out, n, &len, "%s: ", t->verdict);
    if (t->why_empty[0]) {
        put(out, n, &len, "nothing compared (%s)", t->why_empty);
    } else if (t->compared) {
        if (t->n[BP_RS_DRIFT])
            put(out, n, &len, "%zu of %zu compared beyond policy (", t->n[BP_RS_DRIFT],
                t->compared);
        else
            put(out, n, &len, "%zu compared (", t->compared);
        const char *sep = "";
        for (int s = BP_RS_IDENTICAL; s <= BP_RS_DIFFERS; s++)
            if (t->n[s]) {
                put(out, n, &len, "%s%zu %s", sep, t->n[s], plural(s, t->n[s]));
                sep = ", ";
            }
        if (!*sep)
            put(out, n, &len, "none identical");
        put(out, n, &len, ")");
        char ex[160];
        bp_tally_excused(t, ex, sizeof ex);
        put(out, n, &len, "%s", ex);
    } else {
        put(out, n, &len, "nothing compared");
    }
    /* The rest by status; skipped backends by name and reason, once each. */
    for (int s = BP_RS_ONLY_A; s < BP_RS_COUNT; s++)
        if (t->n[s] && s != BP_RS_SKIPPED_BACKEND)
            put(out, n, &len, "; %zu %s", t->n[s], plural(s, t->n[s]));
    for (size_t i = 0; i < rep->n; i++) {
        const bp_result_t *r = &rep->r[i];
        if (bp_result_status(r) != BP_RS_SKIPPED_BACKEND)
            continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = bp_result_status(&rep->r[k]) == BP_RS_SKIPPED_BACKEND &&
                   strcmp(rep->r[k].b, r->b) == 0;
        if (!seen)
            put(out, n, &len, "; %s skipped: %s", r->b, r->note ? r->note : "unavailable");
    }
}

void bp_tally_excused(const bp_tally_t *t, char *out, size_t n)
{
    size_t z = t->zero_signs_excused, p = t->nan_payloads_excused, len = 0;
    out[0] = '\0';
    if (!z && !p)
        return;
    put(out, n, &len, "; excused: ");
    if (z)
        put(out, n, &len, "%zu sign%s of %s", z, z == 1 ? "" : "s", z == 1 ? "a zero" : "zeros");
    if (p)
        put(out, n, &len, "%s%zu NaN payload%s", z ? ", " : "", p, p == 1 ? "" : "s");
}

void bp_cmp_class_note(const bp_cmp_t *c, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (c->zero_sign_diffs && !bp_cmp_zero_signs_only(c))
        put(out, n, &len, ", %zu in the sign of a zero", c->zero_sign_diffs);
    if (c->zero_sign_excused)
        put(out, n, &len, c->zero_sign_excused == c->zero_sign_diffs ? " (excused)"
                                                                   : " (%zu excused)",
            c->zero_sign_excused);
    if (c->nan_payload_diffs)
        put(out, n, &len, ", %zu NaN payload%s excused", c->nan_payload_diffs,
            c->nan_payload_diffs == 1 ? "" : "s");
}

void bp_cmp_identical_text(const bp_cmp_t *c, char *out, size_t n)
{
    if (c->nan_payload_diffs)
        snprintf(out, n, "identical but for %zu NaN payload%s, excused (%zu element%s)",
                 c->nan_payload_diffs, c->nan_payload_diffs == 1 ? "" : "s", c->total,
                 c->total == 1 ? "" : "s");
    else
        snprintf(out, n, "bit-identical (%zu element%s)", c->total, c->total == 1 ? "" : "s");
}

void bp_cmp_max_ulp_text(const bp_cmp_t *c, char *out, size_t n)
{
    if (bp_cmp_zero_signs_only(c))
        snprintf(out, n, "in the sign of a zero only");
    else if (c->max_ulp == UINT64_MAX)
        snprintf(out, n, "max class change");
    else
        snprintf(out, n, "max %" PRIu64 " ulp", c->max_ulp);
}

size_t bp_report_failures(const bp_report_t *rep)
{
    size_t f = 0;
    for (size_t i = 0; i < rep->n; i++)
        f += bp_result_outcome(&rep->r[i]) == 1;
    return f;
}

const char *bp_res_kind_name(bp_res_kind_t k)
{
    switch (k) {
    case BP_RES_CROSS: return "cross";
    case BP_RES_GOLDEN: return "golden";
    case BP_RES_REPEAT: return "repeat";
    case BP_RES_DIFF: return "diff";
    }
    return "?";
}

const char *bp_result_dtype(const bp_result_t *r)
{
    return r->dtype_as ? r->dtype_as : bp_dtype_name(r->dtype);
}

void bp_result_dtype_label(const bp_result_t *r, char *out, size_t n)
{
    if (r->in_run && !r->dtype_as && r->run_dtype != r->dtype)
        snprintf(out, n, "%s (%s run)", bp_dtype_name(r->dtype), bp_dtype_name(r->run_dtype));
    else
        snprintf(out, n, "%s", bp_result_dtype(r));
}

static bool same_run(bool ia, bp_dtype_t ra, bool ib, bp_dtype_t rb)
{
    return ia == ib && (!ia || ra == rb);
}

/* qsort has no context argument: the report and key of the sort running
 * on this thread. */
static __thread const bp_report_t *sort_rep;
static __thread int (*sort_cmp)(const bp_result_t *, const bp_result_t *);

static int by_key_then_index(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = sort_cmp(&sort_rep->r[i], &sort_rep->r[j]);
    return c ? c : (i > j) - (i < j);
}

bool bp_report_firsts(const bp_report_t *rep,
                      int (*cmp)(const bp_result_t *, const bp_result_t *),
                      bool (*in)(const bp_result_t *), size_t *first)
{
    size_t *idx = malloc((rep->n ? rep->n : 1) * sizeof *idx), m = 0;
    if (!idx)
        return false;
    for (size_t i = 0; i < rep->n; i++) {
        first[i] = SIZE_MAX;
        if (!in || in(&rep->r[i]))
            idx[m++] = i;
    }
    sort_rep = rep;
    sort_cmp = cmp;
    qsort(idx, m, sizeof *idx, by_key_then_index);
    for (size_t k = 0; k < m; k++)
        first[idx[k]] = k && !cmp(&rep->r[idx[k - 1]], &rep->r[idx[k]]) ? first[idx[k - 1]]
                                                                           : idx[k];
    free(idx);
    return true;
}

bool bp_result_same_group(const bp_result_t *a, const bp_result_t *b)
{
    return strcmp(a->probe, b->probe) == 0 &&
           strcmp(a->output ? a->output : "", b->output ? b->output : "") == 0 &&
           strcmp(bp_result_dtype(a), bp_result_dtype(b)) == 0 &&
           same_run(a->in_run, a->run_dtype, b->in_run, b->run_dtype);
}

bool bp_values_of(const bp_values_t *v, const bp_result_t *r)
{
    return strcmp(v->probe, r->probe) == 0 && r->output && strcmp(v->output, r->output) == 0 &&
           !r->dtype_as && v->dtype == r->dtype &&
           same_run(v->in_run, v->run_dtype, r->in_run, r->run_dtype);
}

bp_result_t bp_values_group(const bp_values_t *v)
{
    return (bp_result_t){.probe = v->probe, .output = v->output, .dtype = v->dtype,
                         .in_run = v->in_run, .run_dtype = v->run_dtype};
}

void bp_result_title(const bp_result_t *r, char *out, size_t n)
{
    const char *output = r->output && *r->output ? r->output : NULL;
    char dt[64];
    bp_result_dtype_label(r, dt, sizeof dt);
    snprintf(out, n, "%s%s%s %s: %s vs %s", r->probe, output ? " " : "",
             output ? output : "", dt, r->b, r->a);
}

void bp_result_summary(const bp_result_t *r, char *out, size_t n)
{
    const bp_cmp_t *c = &r->cmp;
    char note[160];
    if (!r->compared) {
        snprintf(out, n, "%s: %s", bp_res_status_label(r->status),
                 r->note ? r->note : "not compared");
        return;
    }
    bp_cmp_class_note(c, note, sizeof note);
    if (!c->mismatched) {
        bp_cmp_identical_text(c, out, n);
        size_t len = strlen(out);
        if (r->note && len < n)
            snprintf(out + len, n - len, "; %s", r->note);
        return;
    }
    char iu[96], ia[96], ir[96], pol[128], ulp[64], maxima[512];
    bp_cmp_index_format(c, c->max_ulp_idx, iu, sizeof iu);
    bp_cmp_index_format(c, c->max_abs_idx, ia, sizeof ia);
    bp_cmp_index_format(c, c->max_rel_idx, ir, sizeof ir);
    bp_policy_format(&r->policy, pol, sizeof pol);
    bp_cmp_max_ulp_text(c, ulp, sizeof ulp);
    if (bp_cmp_zero_signs_only(c))
        snprintf(maxima, sizeof maxima, "%s", ulp);
    else
        snprintf(maxima, sizeof maxima, "%s at %s, max abs %.6g at %s, max rel %.6g at %s", ulp,
                 iu, c->max_abs, ia, c->max_rel, ir);
    char tail[256];
    if (c->beyond_policy == 0)
        snprintf(tail, sizeof tail, "within policy %s", pol);
    else if (c->allowed)
        snprintf(tail, sizeof tail, "%zu beyond policy %s, %zu allowed", c->beyond_policy,
                 pol, c->allowed);
    else
        snprintf(tail, sizeof tail, "%zu beyond policy %s", c->beyond_policy, pol);
    snprintf(out, n, "%zu of %zu element%s differ%s (%.4g%%), %s%s; %s%s%s%s", c->mismatched,
             c->total, c->total == 1 ? "" : "s", c->total == 1 ? "s" : "",
             100.0 * bp_result_fraction(r), maxima, note, tail,
             !c->pass && !r->counts ? " (informational)" : "", r->note ? "; " : "",
             r->note ? r->note : "");
}

double bp_result_fraction(const bp_result_t *r)
{
    if (!r->compared || !r->cmp.total)
        return 0;
    return (double)r->cmp.mismatched / (double)r->cmp.total;
}

json_t *bp_report_index_json(int ndim, const int64_t *shape, size_t flat)
{
    json_t *a = json_array();
    int64_t idx[BP_MAXDIM];
    for (int d = ndim - 1; d >= 0; d--) {
        size_t s = shape[d] ? (size_t)shape[d] : 1;
        idx[d] = (int64_t)(flat % s);
        flat /= s;
    }
    for (int d = 0; d < ndim; d++)
        json_array_append_new(a, json_integer(idx[d]));
    return a;
}
