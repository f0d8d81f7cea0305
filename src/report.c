/* The report model (see report.h). */
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Quotes an argument for a POSIX shell when it needs it. */
static void append_quoted(char **buf, size_t *len, size_t *cap, const char *arg)
{
    bool plain = *arg != '\0';
    for (const char *p = arg; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789-_=.,/:+@%", *p))
            plain = false;
    size_t need = *len + strlen(arg) * 4 + 4;
    if (need > *cap) {
        char *nb = realloc(*buf, need * 2);
        if (!nb)
            return;
        *buf = nb;
        *cap = need * 2;
    }
    char *o = *buf + *len;
    if (*len)
        *o++ = ' ';
    if (plain) {
        o += sprintf(o, "%s", arg);
    } else {
        *o++ = '\'';
        for (const char *p = arg; *p; p++) {
            if (*p == '\'') {
                memcpy(o, "'\\''", 4);
                o += 4;
            } else {
                *o++ = *p;
            }
        }
        *o++ = '\'';
        *o = '\0';
    }
    *len = (size_t)(o - *buf);
}

void bp_report_init(bp_report_t *rep, int argc, char **argv)
{
    memset(rep, 0, sizeof *rep);
    size_t len = 0, cap = 0;
    append_quoted(&rep->command, &len, &cap, "bitprobe");
    for (int i = 0; i < argc; i++)
        append_quoted(&rep->command, &len, &cap, argv[i]);
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
    return d;
}

bool bp_report_add_values(bp_report_t *rep, const char *probe, const char *output,
                          const char *side, bp_dtype_t dt, const void *data, size_t n)
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

size_t bp_report_failures(const bp_report_t *rep)
{
    size_t f = 0;
    for (size_t i = 0; i < rep->n; i++)
        if (rep->r[i].compared && rep->r[i].counts && !rep->r[i].cmp.pass)
            f++;
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

void bp_result_title(const bp_result_t *r, char *out, size_t n)
{
    const char *output = r->output && *r->output ? r->output : NULL;
    snprintf(out, n, "%s%s%s %s: %s vs %s", r->probe, output ? " " : "",
             output ? output : "", bp_dtype_name(r->dtype), r->b, r->a);
}

void bp_result_summary(const bp_result_t *r, char *out, size_t n)
{
    const bp_cmp_t *c = &r->cmp;
    if (!r->compared) {
        snprintf(out, n, "not compared: %s", r->note ? r->note : "no data");
        return;
    }
    if (!c->mismatched) {
        snprintf(out, n, "bit-identical (%zu elements)", c->total);
        return;
    }
    char iu[96], ia[96], ir[96], pol[128], ulp[32];
    bp_cmp_index_format(c, c->max_ulp_idx, iu, sizeof iu);
    bp_cmp_index_format(c, c->max_abs_idx, ia, sizeof ia);
    bp_cmp_index_format(c, c->max_rel_idx, ir, sizeof ir);
    bp_policy_format(&r->policy, pol, sizeof pol);
    if (c->max_ulp == UINT64_MAX)
        snprintf(ulp, sizeof ulp, "class change");
    else
        snprintf(ulp, sizeof ulp, "%" PRIu64 " ulp", c->max_ulp);
    char tail[256];
    if (c->beyond_policy == 0)
        snprintf(tail, sizeof tail, "within policy %s", pol);
    else if (c->allowed)
        snprintf(tail, sizeof tail, "%zu beyond policy %s, %zu allowed", c->beyond_policy,
                 pol, c->allowed);
    else
        snprintf(tail, sizeof tail, "%zu beyond policy %s", c->beyond_policy, pol);
    snprintf(out, n,
             "%zu of %zu elements differ (%.4g%%), max %s at %s, max abs %.6g at %s, "
             "max rel %.6g at %s; %s%s",
             c->mismatched, c->total, 100.0 * bp_result_fraction(r), ulp, iu, c->max_abs, ia,
             c->max_rel, ir, tail, !c->pass && !r->counts ? " (informational)" : "");
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
