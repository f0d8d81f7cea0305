/* Comparison policies (see policy.h): the default, the compact text form
 * reports print, and its parser for the command line. */
#include "policy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bp_policy_exact(bp_policy_t *p)
{
    memset(p, 0, sizeof *p);
}

bool bp_policy_is_exact(const bp_policy_t *p)
{
    return !p->has_ulp && !p->has_tol && !(p->max_mismatch_fraction > 0) &&
           !p->zero_sign_ignore;
}

/* Shortest of %.15g..%.17g that reads back to v: "0.001", not
 * "0.0010000000000000000208". */
static void fmt_double(double v, char *out, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

void bp_policy_format(const bp_policy_t *p, char *out, unsigned n)
{
    char x[40], y[40];
    int len = 0;
    if (n == 0)
        return;
    out[0] = '\0';
    if (p->has_ulp)
        len += snprintf(out + len, n - (unsigned)len, "ulp<=%llu",
                        (unsigned long long)p->max_ulp);
    if (p->has_tol && len < (int)n) {
        fmt_double(p->abs, x, sizeof x);
        fmt_double(p->rel, y, sizeof y);
        len += snprintf(out + len, n - (unsigned)len, "%sabs<=%s,rel<=%s",
                        len ? "," : "", x, y);
    }
    if (p->max_mismatch_fraction > 0 && len < (int)n) {
        fmt_double(p->max_mismatch_fraction, x, sizeof x);
        len += snprintf(out + len, n - (unsigned)len, "%sfraction<=%s",
                        len ? "," : "", x);
    }
    if (len == 0)
        len = snprintf(out, n, "exact");
    if (p->zero_sign_ignore && len >= 0 && len < (int)n)
        snprintf(out + len, n - (unsigned)len, ",zero_sign=ignore");
}

enum { K_EXACT, K_ULP, K_ABS, K_REL, K_FRAC, K_ZSIGN, K_N };

static int key_of(const char *k, size_t n)
{
    static const struct {
        const char *name;
        int key;
    } keys[] = {
        {"exact", K_EXACT}, {"ulp", K_ULP},   {"abs", K_ABS},
        {"atol", K_ABS},    {"rel", K_REL},   {"rtol", K_REL},
        {"fraction", K_FRAC}, {"frac", K_FRAC},
        {"max_mismatch_fraction", K_FRAC}, {"zero_sign", K_ZSIGN},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == n && memcmp(keys[i].name, k, n) == 0)
            return keys[i].key;
    return -1;
}

static bool parse_u64(const char *v, uint64_t *out)
{
    if (!isdigit((unsigned char)v[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return false;
    *out = x;
    return true;
}

static bool parse_double(const char *v, double *out)
{
    /* strtod also takes "inf", "nan", hex floats and leading blanks: only
     * plain finite decimals make sense in a policy. */
    if (!isdigit((unsigned char)v[0]) && v[0] != '.')
        return false;
    if (v[strspn(v, "0123456789.eE+-")] != '\0')
        return false;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*end || !isfinite(x) || (errno == ERANGE && x != 0))
        return false;
    *out = x;
    return true;
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

bp_status bp_policy_parse(const char *s, bp_policy_t *p, bp_error_t *err)
{
    bp_policy_t q;
    bool seen[K_N] = {false};
    bp_policy_exact(&q);
    if (!s)
        s = "";
    const char *item = s;
    for (;;) {
        const char *end = strchr(item, ',');
        if (!end)
            end = item + strlen(item);
        const char *b = item, *e = end;
        trim(&b, &e);
        int ilen = (int)(e - b);
        if (ilen == 0)
            return bp_error_set(err, BP_EINPUT,
                                "invalid policy '%s': empty item at "
                                "character %d", s, (int)(item - s) + 1);
        const char *op = b;
        while (op < e && (isalnum((unsigned char)*op) || *op == '_'))
            op++;
        const char *kend = op;
        int key = key_of(b, (size_t)(kend - b));
        if (key < 0)
            return bp_error_set(err, BP_EINPUT,
                                "invalid policy '%s': unknown item '%.*s' "
                                "(expected exact, ulp=N, abs=X, rel=X, "
                                "fraction=F or zero_sign=ignore)", s, ilen, b);
        if (seen[key])
            return bp_error_set(err, BP_EINPUT,
                                "invalid policy '%s': '%.*s' given twice",
                                s, (int)(kend - b), b);
        seen[key] = true;
        if (key == K_EXACT) {
            if (kend != e)
                return bp_error_set(err, BP_EINPUT,
                                    "invalid policy '%s': 'exact' takes no "
                                    "value", s);
        } else {
            while (op < e && isspace((unsigned char)*op))
                op++;
            if (op + 1 < e && op[0] == '<' && op[1] == '=')
                op += 2;
            else if (op < e && (*op == '=' || *op == ':'))
                op++;
            else
                return bp_error_set(err, BP_EINPUT,
                                    "invalid policy '%s': '%.*s' needs a "
                                    "value ('%.*s=...')", s, ilen, b,
                                    (int)(kend - b), b);
            while (op < e && isspace((unsigned char)*op))
                op++;
            char v[64];
            int vlen = (int)(e - op);
            bool ok = vlen > 0 && vlen < (int)sizeof v;
            if (ok) {
                memcpy(v, op, (size_t)vlen);
                v[vlen] = '\0';
            }
            const char *want = NULL;
            switch (key) {
            case K_ULP:
                q.has_ulp = true;
                if (!ok || !parse_u64(v, &q.max_ulp))
                    want = "a non-negative integer";
                break;
            case K_ABS:
            case K_REL:
                q.has_tol = true;
                if (!ok || !parse_double(v, key == K_ABS ? &q.abs : &q.rel))
                    want = "a finite number >= 0";
                break;
            case K_ZSIGN:
                if (ok && (strcmp(v, "ignore") == 0 || strcmp(v, "count") == 0))
                    q.zero_sign_ignore = strcmp(v, "ignore") == 0;
                else
                    want = "ignore or count";
                break;
            default:
                if (!ok || !parse_double(v, &q.max_mismatch_fraction) ||
                    q.max_mismatch_fraction > 1)
                    want = "a number from 0 to 1";
                break;
            }
            if (want)
                return bp_error_set(err, BP_EINPUT,
                                    "invalid policy '%s': %.*s wants %s, "
                                    "got '%.*s'", s, (int)(kend - b), b,
                                    want, vlen, op);
        }
        if (*end == '\0')
            break;
        item = end + 1;
    }
    if (seen[K_EXACT] && (seen[K_ULP] || seen[K_ABS] || seen[K_REL]))
        return bp_error_set(err, BP_EINPUT,
                            "invalid policy '%s': 'exact' contradicts an "
                            "ulp or tolerance item", s);
    *p = q;
    return BP_OK;
}
