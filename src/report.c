/* The report model (see report.h). */
#include "report.h"

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
