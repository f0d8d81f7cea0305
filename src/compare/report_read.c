/* Reading a report back (see report_read.h). */
#include "report_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonread.h"
#include "jsonval.h"
#include "safeopen.h"

#define TRY(x)                                                                           \
    do {                                                                                 \
        bp_status st_ = (x);                                                             \
        if (st_)                                                                         \
            return st_;                                                                  \
    } while (0)

/* Room for a member's path: our own keys and indices only. */
#define PATH_LEN 160

typedef struct {
    const char *label;
    bp_error_t *err;
    long long schema; /* the document's schema_version (1 when absent) */
    /* the results array as text, read an element at a time (its place in
     * the document holds []): NULL when the document holds them */
    const char *text;
    size_t rb, re;
} rd_t;

/* "LABEL: PATH: what". */
static bp_status bad(rd_t *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bp_status bad(rd_t *r, const char *path, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return bp_error_set(r->err, BP_EINPUT, "%s: %s: %s", r->label, path, what);
}

/* (Paths longer than PATH_LEN are cut: messages only.) */
static void key_path(char *out, const char *path, const char *key)
{
    if (snprintf(out, PATH_LEN, "%s%s%s", path, *path ? "." : "", key) < 0)
        *out = '\0';
}

static void item_path(char *out, const char *path, size_t i)
{
    if (snprintf(out, PATH_LEN, "%s[%zu]", path, i) < 0)
        *out = '\0';
}

static const char *type_name(const json_t *v)
{
    if (!v)
        return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* obj[key] of type t (what names it in the message); optional members
 * may be absent (NULL). */
static bp_status member(rd_t *r, const json_t *obj, const char *path, const char *key,
                        json_type t, const char *what, bool need, json_t **out)
{
    char kp[PATH_LEN];
    *out = json_object_get(obj, key);
    if (!*out && !need)
        return BP_OK;
    key_path(kp, path, key);
    if (!*out)
        return bad(r, kp, "missing (%s)", what);
    bool ok = json_typeof(*out) == t || (t == JSON_TRUE && json_is_boolean(*out));
    if (!ok)
        return bad(r, kp, "expected %s, found %s", what, type_name(*out));
    return BP_OK;
}

static bp_status get_str(rd_t *r, const json_t *obj, const char *path, const char *key,
                         bool need, const char **out)
{
    json_t *v;
    TRY(member(r, obj, path, key, JSON_STRING, "a string", need, &v));
    *out = v ? json_string_value(v) : NULL;
    return BP_OK;
}

static bp_status get_bool(rd_t *r, const json_t *obj, const char *path, const char *key,
                          bool *out)
{
    json_t *v;
    TRY(member(r, obj, path, key, JSON_TRUE, "true or false", true, &v));
    *out = json_is_true(v);
    return BP_OK;
}

/* A non-negative integer; noun ("count", "size", "index") names it. */
static bp_status count_of(rd_t *r, const json_t *v, const char *path, const char *noun,
                          size_t *out)
{
    if (!json_is_integer(v))
        return bad(r, path, "expected %s %s (an integer), found %s",
                   *noun == 'i' ? "an" : "a", noun, type_name(v));
    json_int_t n = json_integer_value(v);
    if (n < 0)
        return bad(r, path, "negative %s (%lld)", noun, (long long)n);
    if ((unsigned long long)n > SIZE_MAX)
        return bad(r, path, "%s too large (%lld)", noun, (long long)n);
    *out = (size_t)n;
    return BP_OK;
}

/* A non-negative integer; an optional one absent is 0. */
static bp_status get_count(rd_t *r, const json_t *obj, const char *path, const char *key,
                           bool need, size_t *out)
{
    char kp[PATH_LEN];
    json_t *v = json_object_get(obj, key);
    key_path(kp, path, key);
    *out = 0;
    if (!v && !need)
        return BP_OK;
    if (!v)
        return bad(r, kp, "missing (a count)");
    return count_of(r, v, kp, "count", out);
}

/* A number as rep_json writes it: JSON number, or "inf", "-inf", "nan". */
static bp_status number_of(rd_t *r, const json_t *v, const char *path, double *out)
{
    const char *s = json_string_value(v);
    if (json_is_number(v))
        *out = json_number_value(v);
    else if (s && strcmp(s, "inf") == 0)
        *out = INFINITY;
    else if (s && strcmp(s, "-inf") == 0)
        *out = -INFINITY;
    else if (s && strcmp(s, "nan") == 0)
        *out = NAN;
    else
        return bad(r, path, "expected a number (or \"inf\", \"-inf\", \"nan\"), found %s",
                   type_name(v));
    return BP_OK;
}

/* An ulp distance: a count, or "class change" (UINT64_MAX). */
static bp_status ulp_of(rd_t *r, const json_t *v, const char *path, uint64_t *out)
{
    const char *s = json_string_value(v);
    if (s && strcmp(s, BP_JSON_CLASS_CHANGE) == 0) {
        *out = UINT64_MAX;
        return BP_OK;
    }
    if (s || !json_is_integer(v))
        return bad(r, path, "expected an ulp distance (an integer or \"class change\"), "
                            "found %s", s ? "another string" : type_name(v));
    if (json_integer_value(v) < 0)
        return bad(r, path, "negative ulp distance (%lld)", (long long)json_integer_value(v));
    *out = (uint64_t)json_integer_value(v);
    return BP_OK;
}

static bp_status dtype_of(rd_t *r, const json_t *obj, const char *path, bp_dtype_t *out)
{
    const char *s;
    char kp[PATH_LEN];
    TRY(get_str(r, obj, path, "dtype", true, &s));
    key_path(kp, path, "dtype");
    if (!bp_dtype_parse(s, out))
        return bad(r, kp, "unknown dtype '%.64s'", s);
    return BP_OK;
}

/* The optional "run_dtype": *in_run says whether it is there. */
static bp_status run_dtype_of(rd_t *r, const json_t *obj, const char *path, bool *in_run,
                              bp_dtype_t *out)
{
    const char *s;
    char kp[PATH_LEN];
    TRY(get_str(r, obj, path, "run_dtype", false, &s));
    *in_run = s != NULL;
    key_path(kp, path, "run_dtype");
    if (s && !bp_dtype_parse(s, out))
        return bad(r, kp, "unknown dtype '%.64s'", s);
    return BP_OK;
}

/* VALUE's "hex": "0x" and exactly the dtype's width in hex digits. */
static bp_status value_bits(rd_t *r, const json_t *v, const char *path, bp_dtype_t dt,
                            uint64_t *out)
{
    const char *hx;
    char kp[PATH_LEN];
    if (!json_is_object(v))
        return bad(r, path, "expected a value (an object with \"hex\"), found %s",
                   type_name(v));
    TRY(get_str(r, v, path, "hex", true, &hx));
    key_path(kp, path, "hex");
    size_t digits = bp_dtype_info(dt)->size * 2;
    bool ok = strncmp(hx, "0x", 2) == 0 && strlen(hx) == digits + 2;
    uint64_t bits = 0;
    for (size_t i = 2; ok && hx[i]; i++) {
        char h = hx[i];
        int d = h >= '0' && h <= '9' ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        ok = d >= 0;
        bits = bits << 4 | (uint64_t)(ok ? d : 0);
    }
    if (!ok)
        return bad(r, kp, "'%.40s' is not %s bits (0x and %zu hex digits)", hx,
                   bp_dtype_name(dt), digits);
    *out = bits;
    return BP_OK;
}

/* ---- shapes and indices ---- */

static bp_status read_shape(rd_t *r, const json_t *o, const char *path, bp_cmp_t *c)
{
    json_t *a, *d;
    char kp[PATH_LEN], ip[PATH_LEN];
    size_t i, elems = 1;
    TRY(member(r, o, path, "shape", JSON_ARRAY, "an array of sizes", true, &a));
    key_path(kp, path, "shape");
    if (json_array_size(a) > BP_MAXDIM)
        return bad(r, kp, "%zu dimensions, at most %d", json_array_size(a), BP_MAXDIM);
    c->ndim = (int)json_array_size(a);
    json_array_foreach(a, i, d) {
        size_t n;
        item_path(ip, kp, i);
        TRY(count_of(r, d, ip, "size", &n));
        if (n > INT64_MAX || __builtin_mul_overflow(elems, n, &elems))
            return bad(r, kp, "more elements than a tensor can hold");
        c->shape[i] = (int64_t)n;
    }
    return BP_OK;
}

static size_t shape_elems(const bp_cmp_t *c)
{
    size_t n = 1;
    for (int d = 0; d < c->ndim; d++)
        n *= (size_t)c->shape[d];
    return n;
}

/* obj[key] as a multi-dimensional index into c's shape: its flat position. */
static bp_status read_index(rd_t *r, const json_t *obj, const char *path, const char *key,
                            const bp_cmp_t *c, size_t *flat)
{
    json_t *a, *d;
    char kp[PATH_LEN], ip[PATH_LEN], shape[96];
    size_t i;
    TRY(member(r, obj, path, key, JSON_ARRAY, "an array of indices", true, &a));
    key_path(kp, path, key);
    bp_shape_format(c->ndim, c->shape, shape, sizeof shape);
    if (json_array_size(a) != (size_t)c->ndim)
        return bad(r, kp, "%zu indices for shape %s", json_array_size(a), shape);
    *flat = 0;
    json_array_foreach(a, i, d) {
        size_t k;
        item_path(ip, kp, i);
        TRY(count_of(r, d, ip, "index", &k));
        if (k >= (size_t)c->shape[i])
            return bad(r, ip, "%zu is outside shape %s", k, shape);
        *flat = *flat * (size_t)c->shape[i] + k;
    }
    return BP_OK;
}

/* ---- one result ---- */

/* max_abs / max_rel: {value: number, index}; max_ulp: {value: ulp, index}. */
static bp_status read_max(rd_t *r, const json_t *o, const char *path, const char *key,
                          const bp_cmp_t *c, double *dv, uint64_t *uv, size_t *idx)
{
    json_t *m, *v;
    char kp[PATH_LEN], vp[PATH_LEN];
    TRY(member(r, o, path, key, JSON_OBJECT, "an object {value, index}", true, &m));
    key_path(kp, path, key);
    key_path(vp, kp, "value");
    if (!(v = json_object_get(m, "value")))
        return bad(r, vp, "missing (a value)");
    if (uv)
        TRY(ulp_of(r, v, vp, uv));
    else
        TRY(number_of(r, v, vp, dv));
    return read_index(r, m, kp, "index", c, idx);
}

static bp_status read_histogram(rd_t *r, const json_t *o, const char *path, bp_cmp_t *c)
{
    json_t *h, *v;
    const char *label;
    char kp[PATH_LEN], bp[PATH_LEN];
    uint64_t sum = 0;
    TRY(member(r, o, path, "histogram", JSON_OBJECT, "an object {ulp range: count}", true,
               &h));
    key_path(kp, path, "histogram");
    json_object_foreach(h, label, v) {
        int b = 0;
        while (b < BP_HIST_BINS && strcmp(bp_hist_label(b), label) != 0)
            b++;
        if (snprintf(bp, sizeof bp, "%s.\"%.32s\"", kp, label) < 0)
            *bp = '\0';
        if (b == BP_HIST_BINS)
            return bad(r, bp, "not an ulp range (0, +0/-0, 1, 2, 3-4, 5-8, ..., inf/nan)");
        size_t n;
        TRY(count_of(r, v, bp, "count", &n));
        c->hist[b] = n;
        if (__builtin_add_overflow(sum, (uint64_t)n, &sum))
            sum = UINT64_MAX;
    }
    if (sum != c->total)
        return bad(r, kp, "counts %llu elements, but total is %zu", (unsigned long long)sum,
                   c->total);
    if (c->hist[BP_HIST_CLASS] != c->class_changes)
        return bad(r, kp, "counts %llu under inf/nan, but class_changes is %zu",
                   (unsigned long long)c->hist[BP_HIST_CLASS], c->class_changes);
    if (c->hist[BP_HIST_ZERO] != c->zero_sign_diffs)
        return bad(r, kp, "counts %llu under +0/-0, but zero_sign_diffs is %zu",
                   (unsigned long long)c->hist[BP_HIST_ZERO], c->zero_sign_diffs);
    return BP_OK;
}

static bp_status read_first(rd_t *r, const json_t *o, const char *path, bp_dtype_t dt,
                            bp_cmp_t *c)
{
    json_t *a, *m;
    char kp[PATH_LEN], ip[PATH_LEN], fp[PATH_LEN], sp[PATH_LEN];
    size_t i;
    TRY(member(r, o, path, "first", JSON_ARRAY, "an array of mismatches", true, &a));
    key_path(kp, path, "first");
    if (json_array_size(a) > c->mismatched)
        return bad(r, kp, "%zu mismatches, but mismatched is %zu", json_array_size(a),
                   c->mismatched);
    if (!json_array_size(a))
        return BP_OK;
    c->first = calloc(json_array_size(a), sizeof *c->first);
    if (!c->first)
        return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    json_array_foreach(a, i, m) {
        bp_mismatch_t *x = &c->first[i];
        size_t at;
        item_path(ip, kp, i);
        if (!json_is_object(m))
            return bad(r, ip, "expected an object, found %s", type_name(m));
        TRY(get_count(r, m, ip, "flat", true, &x->index));
        key_path(fp, ip, "flat");
        if (x->index >= c->total)
            return bad(r, fp, "%zu is outside the %zu elements", x->index, c->total);
        if (i && x->index <= c->first[i - 1].index)
            return bad(r, fp, "%zu does not come after the previous mismatch (%zu)", x->index,
                       c->first[i - 1].index);
        TRY(read_index(r, m, ip, "index", c, &at));
        if (at != x->index) {
            key_path(fp, ip, "index");
            return bad(r, fp, "names flat position %zu, but flat is %zu", at, x->index);
        }
        key_path(fp, ip, "ulp");
        if (!json_object_get(m, "ulp"))
            return bad(r, fp, "missing (an ulp distance)");
        TRY(ulp_of(r, json_object_get(m, "ulp"), fp, &x->ulp));
        key_path(sp, ip, "a");
        TRY(value_bits(r, json_object_get(m, "a"), sp, dt, &x->a));
        key_path(sp, ip, "b");
        TRY(value_bits(r, json_object_get(m, "b"), sp, dt, &x->b));
        /* Not in the report, and no format shows them: abs, rel and
         * whether this element alone is beyond the policy. */
        x->class_change = x->ulp == UINT64_MAX;
        c->nfirst = i + 1;
    }
    return BP_OK;
}

/* The figures of a compared result; c->first is c's own even on failure. */
static bp_status read_cmp(rd_t *r, const json_t *o, const char *path, bp_result_t *res)
{
    bp_cmp_t *c = &res->cmp;
    char kp[PATH_LEN], shape[96];
    c->dtype = res->dtype;
    TRY(get_bool(r, o, path, "pass", &c->pass));
    TRY(read_shape(r, o, path, c));
    TRY(get_count(r, o, path, "total", true, &c->total));
    bp_shape_format(c->ndim, c->shape, shape, sizeof shape);
    key_path(kp, path, "total");
    if (c->total != shape_elems(c))
        return bad(r, kp, "%zu, but shape %s holds %zu elements", c->total, shape,
                   shape_elems(c));
    TRY(get_count(r, o, path, "mismatched", true, &c->mismatched));
    key_path(kp, path, "mismatched");
    if (c->mismatched > c->total)
        return bad(r, kp, "%zu is more than total (%zu)", c->mismatched, c->total);
    TRY(get_count(r, o, path, "beyond_policy", true, &c->beyond_policy));
    key_path(kp, path, "beyond_policy");
    if (c->beyond_policy > c->mismatched)
        return bad(r, kp, "%zu is more than mismatched (%zu)", c->beyond_policy,
                   c->mismatched);
    TRY(get_count(r, o, path, "class_changes", true, &c->class_changes));
    key_path(kp, path, "class_changes");
    if (c->class_changes > c->mismatched)
        return bad(r, kp, "%zu is more than mismatched (%zu)", c->class_changes,
                   c->mismatched);
    TRY(get_count(r, o, path, "zero_sign_diffs", true, &c->zero_sign_diffs));
    TRY(get_count(r, o, path, "nan_payload_diffs", false, &c->nan_payload_diffs));
    if (r->schema < 3) {
        /* Schemas 1 and 2 counted +0 against -0 equal: those elements are
         * among the equal ones, and the model has no place for them. */
        key_path(kp, path, "zero_sign_diffs");
        if (c->zero_sign_diffs + c->nan_payload_diffs > c->total - c->mismatched)
            return bad(r, kp, "%zu, with %zu nan_payload_diffs, is more than the %zu equal "
                              "elements",
                       c->zero_sign_diffs, c->nan_payload_diffs, c->total - c->mismatched);
        c->zero_sign_diffs = 0;
    } else {
        TRY(get_count(r, o, path, "zero_sign_excused", true, &c->zero_sign_excused));
        key_path(kp, path, "zero_sign_diffs");
        if (c->zero_sign_diffs > c->mismatched - c->class_changes)
            return bad(r, kp, "%zu is more than the %zu finite mismatches", c->zero_sign_diffs,
                       c->mismatched - c->class_changes);
        key_path(kp, path, "zero_sign_excused");
        if (c->zero_sign_excused > c->zero_sign_diffs)
            return bad(r, kp, "%zu is more than zero_sign_diffs (%zu)", c->zero_sign_excused,
                       c->zero_sign_diffs);
        key_path(kp, path, "nan_payload_diffs");
        if (c->nan_payload_diffs > c->total - c->mismatched)
            return bad(r, kp, "%zu is more than the %zu equal elements", c->nan_payload_diffs,
                       c->total - c->mismatched);
    }
    c->allowed = bp_cmp_allowed(res->policy.max_mismatch_fraction, c->total);
    if (c->mismatched) {
        TRY(read_max(r, o, path, "max_abs", c, &c->max_abs, NULL, &c->max_abs_idx));
        TRY(read_max(r, o, path, "max_rel", c, &c->max_rel, NULL, &c->max_rel_idx));
        TRY(read_max(r, o, path, "max_ulp", c, NULL, &c->max_ulp, &c->max_ulp_idx));
    }
    TRY(read_histogram(r, o, path, c));
    return read_first(r, o, path, res->dtype, c);
}

static bp_status read_kind(rd_t *r, const json_t *o, const char *path, bp_res_kind_t *out)
{
    static const bp_res_kind_t kinds[] = {BP_RES_CROSS, BP_RES_GOLDEN, BP_RES_REPEAT,
                                          BP_RES_DIFF};
    const char *s;
    char kp[PATH_LEN];
    TRY(get_str(r, o, path, "kind", true, &s));
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        if (strcmp(s, bp_res_kind_name(kinds[k])) == 0) {
            *out = kinds[k];
            return BP_OK;
        }
    key_path(kp, path, "kind");
    return bad(r, kp, "unknown result kind '%.64s' (cross, golden, repeat, diff)", s);
}

/* status: what a compared result's figures give (checked after them), or
 * what a result that was not compared says; schema 1 had none (its only
 * results not compared were missing goldens). */
static bp_status read_status(rd_t *r, const json_t *o, const char *path, bp_result_t *res)
{
    const char *s;
    char kp[PATH_LEN];
    TRY(get_str(r, o, path, "status", false, &s));
    key_path(kp, path, "status");
    res->status = BP_RS_MISSING_GOLDEN;
    if (!s && !res->compared)
        res->counts = false; /* schema 1: they never failed a run */
    if (s && !bp_res_status_parse(s, &res->status))
        return bad(r, kp, "unknown status '%.64s'", s);
    if (s && !res->compared && res->status <= BP_RS_DRIFT)
        return bad(r, kp, "'%s' for a result that was not compared", s);
    return BP_OK;
}

/* A compared result's status, when written, is the one its figures give. */
static bp_status check_status(rd_t *r, const json_t *o, const char *path,
                              const bp_result_t *res)
{
    const char *s = json_string_value(json_object_get(o, "status"));
    bp_res_status_t want = bp_result_status(res);
    char kp[PATH_LEN];
    key_path(kp, path, "status");
    if (s && res->compared && res->status != want)
        return bad(r, kp, "'%s', but the comparison gives '%s'", s, bp_res_status_name(want));
    return BP_OK;
}

static bp_status read_result(rd_t *r, const json_t *o, const char *path, bp_report_t *rep)
{
    bp_result_t res = {0};
    const char *probe, *output, *a, *b, *pol, *note, *file;
    char kp[PATH_LEN];
    if (!json_is_object(o))
        return bad(r, path, "expected a result (an object), found %s", type_name(o));
    TRY(get_str(r, o, path, "probe", true, &probe));
    TRY(get_str(r, o, path, "output", true, &output));
    TRY(get_bool(r, o, path, "compared", &res.compared));
    /* a tensor not compared may be of a dtype bitprobe does not read */
    const char *dts = json_string_value(json_object_get(o, "dtype"));
    if (!res.compared && dts && !bp_dtype_parse(dts, &res.dtype))
        res.dtype_as = (char *)dts;
    else
        TRY(dtype_of(r, o, path, &res.dtype));
    TRY(run_dtype_of(r, o, path, &res.in_run, &res.run_dtype));
    TRY(read_kind(r, o, path, &res.kind));
    TRY(get_str(r, o, path, "a", true, &a));
    TRY(get_str(r, o, path, "b", true, &b));
    TRY(get_str(r, o, path, "policy", true, &pol));
    bp_error_t perr = {0};
    if (bp_policy_parse(pol, &res.policy, &perr)) {
        key_path(kp, path, "policy");
        return bad(r, kp, "%s", perr.msg);
    }
    TRY(get_bool(r, o, path, "counts", &res.counts));
    TRY(read_status(r, o, path, &res));
    TRY(get_str(r, o, path, "note", false, &note));
    TRY(get_str(r, o, path, "file", false, &file));
    /* Borrowed from o: bp_report_add copies them. */
    res.probe = (char *)probe, res.output = (char *)output, res.a = (char *)a;
    res.b = (char *)b, res.note = (char *)note, res.file = (char *)file;
    size_t line;
    TRY(get_count(r, o, path, "line", false, &line));
    key_path(kp, path, "line");
    if (line > INT_MAX)
        return bad(r, kp, "%zu is not a line number", line);
    res.line = (int)line;
    bp_status st = res.compared ? read_cmp(r, o, path, &res) : BP_OK;
    if (!st)
        st = check_status(r, o, path, &res);
    if (!st && !bp_report_add(rep, &res))
        st = bp_error_set(r->err, BP_ENOMEM, "out of memory");
    if (st)
        bp_cmp_free(&res.cmp);
    return st;
}

/* ---- the document ---- */

static bp_status read_values(rd_t *r, const json_t *doc, bp_report_t *rep)
{
    json_t *a, *v, *x;
    char ip[PATH_LEN], kp[PATH_LEN], vp[PATH_LEN];
    size_t i, k;
    TRY(member(r, doc, "", "values", JSON_ARRAY, "an array", false, &a));
    json_array_foreach(a, i, v) {
        const char *probe, *output, *side;
        bp_dtype_t dt, run_dt = BP_F32;
        bool in_run;
        uint64_t bits[BP_REPORT_SMALL] = {0}, data[BP_REPORT_SMALL];
        json_t *vals;
        item_path(ip, "values", i);
        if (!json_is_object(v))
            return bad(r, ip, "expected an object, found %s", type_name(v));
        TRY(get_str(r, v, ip, "probe", true, &probe));
        TRY(get_str(r, v, ip, "output", true, &output));
        TRY(get_str(r, v, ip, "side", true, &side));
        TRY(dtype_of(r, v, ip, &dt));
        TRY(run_dtype_of(r, v, ip, &in_run, &run_dt));
        TRY(member(r, v, ip, "values", JSON_ARRAY, "an array of values", true, &vals));
        key_path(kp, ip, "values");
        if (json_array_size(vals) > BP_REPORT_SMALL)
            return bad(r, kp, "%zu values, at most %d", json_array_size(vals),
                       BP_REPORT_SMALL);
        json_array_foreach(vals, k, x) {
            item_path(vp, kp, k);
            TRY(value_bits(r, x, vp, dt, &bits[k]));
            bp_dtype_store_bits(dt, data, k, bits[k]);
        }
        if (!bp_report_add_values(rep, probe, output, side, dt, in_run, run_dt, data,
                                  json_array_size(vals)))
            return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    }
    return BP_OK;
}

/* "notes" or "hints": arrays of strings of at most max bytes. */
static bp_status read_strings(rd_t *r, const json_t *doc, const char *key, size_t max,
                              bp_report_t *rep)
{
    json_t *a, *v;
    char ip[PATH_LEN];
    size_t i;
    bool notes = strcmp(key, "notes") == 0;
    TRY(member(r, doc, "", key, JSON_ARRAY, "an array of strings", false, &a));
    json_array_foreach(a, i, v) {
        item_path(ip, key, i);
        if (!json_is_string(v))
            return bad(r, ip, "expected a string, found %s", type_name(v));
        if (json_string_length(v) > max)
            return bad(r, ip, "longer than %zu bytes", max);
        if (!(notes ? bp_report_note(rep, "%s", json_string_value(v))
                    : bp_report_hint(rep, json_string_value(v))))
            return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    }
    return BP_OK;
}

/* The environment; a manifest keeps the backends beside it, run's report
 * under it. */
static bp_status read_env(rd_t *r, const json_t *doc, bp_report_t *rep)
{
    json_t *env = json_object_get(doc, "env");
    if (env && !json_is_object(env) && !json_is_null(env))
        return bad(r, "env", "expected an object, found %s", type_name(env));
    rep->env = json_is_object(env) ? json_deep_copy(env) : NULL;
    json_t *backs = json_object_get(doc, "backends");
    if (rep->env && json_object_get(doc, "files") && json_is_array(backs) &&
        !json_object_get(rep->env, "backends"))
        json_object_set_new(rep->env, "backends", json_deep_copy(backs));
    return BP_OK;
}

/* summary, when present, must be what the results say. */
static bp_status check_summary(rd_t *r, const json_t *doc, const bp_report_t *rep)
{
    json_t *s, *v;
    TRY(member(r, doc, "", "summary", JSON_OBJECT, "an object", false, &s));
    if (!s)
        return BP_OK;
    bp_tally_t t;
    bp_report_tally(rep, &t);
    size_t want[] = {t.compared, t.n[BP_RS_IDENTICAL], t.compared - t.n[BP_RS_IDENTICAL],
                     t.failed, t.errors, t.skipped, (size_t)t.exit};
    static const char *const keys[] = {"comparisons", "identical", "differ", "drift",
                                       "errors", "skipped", "exit_status"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        size_t got;
        char kp[PATH_LEN];
        /* Schema 1 had the first four only. */
        TRY(get_count(r, s, "summary", keys[k], k < 4, &got));
        key_path(kp, "summary", keys[k]);
        /* Schemas 1 and 2 failed with exit 1 what compared nothing but
         * was one-sided (now exit 2, nothing compared). */
        if (r->schema < 3 && strcmp(keys[k], "exit_status") == 0 && got == 1 &&
            want[k] == 2 && !t.compared)
            continue;
        if (json_object_get(s, keys[k]) && got != want[k])
            return bad(r, kp, "%zu, but the results give %zu", got, want[k]);
    }
    const char *verdict;
    TRY(get_str(r, s, "summary", "verdict", false, &verdict));
    bool old_empty = r->schema < 3 && verdict && strcmp(verdict, "drift") == 0 &&
                     !t.compared && t.exit == 2;
    if (verdict && !old_empty && strcmp(verdict, t.verdict) != 0)
        return bad(r, "summary.verdict", "'%.32s', but the results give '%s'", verdict,
                   t.verdict);
    TRY(member(r, s, "summary", "statuses", JSON_OBJECT, "an object", false, &v));
    for (int k = 0; v && k < BP_RS_COUNT; k++) {
        const char *name = bp_res_status_name((bp_res_status_t)k);
        char kp[PATH_LEN];
        size_t got;
        TRY(get_count(r, v, "summary.statuses", name, true, &got));
        key_path(kp, "summary.statuses", name);
        if (got != t.n[k])
            return bad(r, kp, "%zu, but the results give %zu", got, t.n[k]);
    }
    return BP_OK;
}

/* nothing_compared: why a report compared nothing (kept, as the command
 * said it). */
static bp_status read_nothing(rd_t *r, const json_t *doc, bp_report_t *rep)
{
    json_t *s = json_object_get(doc, "summary"), *ok = NULL;
    const char *why = NULL;
    if (json_is_object(s)) {
        TRY(get_str(r, s, "summary", "nothing_compared", false, &why));
        TRY(member(r, s, "summary", "nothing_compared_ok", JSON_TRUE, "true or false", false,
                   &ok));
    }
    if (why && !bp_report_why_empty(rep, why, json_is_true(ok)))
        return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    return BP_OK;
}

/* Schema 1 diff reports said "only in SIDE: TENSOR" in a note; such a
 * tensor is a result now. */
static bp_status upgrade_notes(rd_t *r, const json_t *doc, bp_report_t *rep)
{
    static const char diff[] = "bitprobe diff ";
    if (json_object_get(doc, "schema_version") || !rep->command ||
        strncmp(rep->command, diff, sizeof diff - 1) != 0)
        return BP_OK;
    size_t keep = 0;
    for (size_t i = 0; i < rep->nnotes; i++) {
        char *n = rep->notes[i], *colon = strrchr(n, ':');
        if (strncmp(n, "only in ", 8) != 0 || !colon) {
            rep->notes[keep++] = n;
            continue;
        }
        *colon = '\0';
        const char *side = n + 8, *tensor = colon[1] == ' ' ? colon + 2 : colon + 1;
        bool in_a = rep->n && rep->r[0].a && strcmp(rep->r[0].a, side) == 0;
        bp_result_t res = {.probe = (char *)tensor, .output = "", .dtype = BP_F32,
                           .kind = BP_RES_DIFF, .a = in_a ? (char *)side : "",
                           .b = in_a ? "" : (char *)side, .counts = true,
                           .status = in_a ? BP_RS_ONLY_A : BP_RS_ONLY_B,
                           .note = (char *)side};
        bp_policy_exact(&res.policy);
        bool ok = bp_report_add(rep, &res) != NULL;
        free(n);
        if (!ok)
            return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    }
    rep->nnotes = keep;
    return BP_OK;
}

/* Top-level members the model holds, and a manifest's own. */
static bool known(const char *key)
{
    static const char *const keys[] = {"tool", "version", "schema_version", "command",
                                       "env", "notes", "hints", "values", "results", "explain",
                                       "summary", "files", "backends"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Line and column (1-based; columns in characters, as jansson counts them)
 * of byte at of text, counted on from *line and *col at byte *from (a
 * report is scanned forward once). */
static void advance(const char *text, size_t *from, size_t at, int *line, int *col)
{
    for (size_t i = *from; i < at; i++)
        if (text[i] == '\n')
            (*line)++, *col = 1;
        else if (((unsigned char)text[i] & 0xc0) != 0x80)
            (*col)++;
    *from = at;
}

/* The results, an element at a time: each parsed alone (its JSON bounded
 * by its own size, jsonread.h), read into the model and let go, so that
 * memory holds the model and one result's JSON, not the whole document's
 * (a result's few dozen JSON values cost jansson several times their
 * text). */
static bp_status read_results_text(rd_t *r, bp_report_t *rep)
{
    size_t at = r->rb, b, e, pos = 0;
    int line = 1, col = 1;
    bool bad_text;
    for (size_t i = 0; bp_json_next(r->text, r->re, &at, &b, &e, &bad_text); i++) {
        bp_json_err_t je;
        json_t *v = bp_json_load(r->text + b, e - b, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        char ip[PATH_LEN];
        item_path(ip, "results", i);
        if (!v && je.over) {
            char where[PATH_LEN + 512];
            snprintf(where, sizeof where, "%s: %s", r->label, ip);
            return bp_json_limit_error(where, e - b, &je, r->err);
        }
        if (!v) { /* jansson's line and column in the element, moved to the file's */
            advance(r->text, &pos, b, &line, &col);
            int l = line + je.je.line - 1, c = je.je.line > 1 ? je.je.column
                                                              : col + je.je.column - 1;
            return bp_error_set(r->err, BP_EINPUT, "%s:%d:%d: invalid JSON: %s", r->label, l,
                                c, je.je.text);
        }
        bp_status st = read_result(r, v, ip, rep);
        json_decref(v);
        if (st)
            return st;
    }
    if (bad_text) /* the scan and jansson disagree: never, for a document jansson read */
        return bp_error_set(r->err, BP_EINPUT, "%s: results: invalid JSON", r->label);
    return BP_OK;
}

static bp_status read_doc(rd_t *r, const json_t *doc, bp_report_t *rep)
{
    const char *tool = json_string_value(json_object_get(doc, "tool")), *s, *key;
    json_t *results, *v;
    size_t i;
    if (!json_is_object(doc))
        return bp_error_set(r->err, BP_EINPUT, "%s: not a bitprobe report (the top level is "
                                               "%s, not an object)", r->label, type_name(doc));
    if (!tool || strcmp(tool, "bitprobe") != 0)
        return bp_error_set(r->err, BP_EINPUT, "%s: not a bitprobe report (no \"tool\": "
                                               "\"bitprobe\")", r->label);
    if (!json_object_get(doc, "results"))
        return bp_error_set(r->err, BP_EINPUT, "%s: bitprobe JSON without \"results\", not a "
                                               "report (list, env and fingerprint write "
                                               "other documents)", r->label);
    TRY(get_str(r, doc, "", "version", false, &s));
    TRY(member(r, doc, "", "schema_version", JSON_INTEGER, "an integer", false, &v));
    if (v && (json_integer_value(v) < 1 || json_integer_value(v) > BP_REPORT_SCHEMA))
        return bad(r, "schema_version", "%lld is not a schema this bitprobe reads (1 to %d)",
                   (long long)json_integer_value(v), BP_REPORT_SCHEMA);
    r->schema = v ? json_integer_value(v) : 1;
    TRY(get_str(r, doc, "", "command", false, &s));
    if (s && !(rep->command = strdup(s)))
        return bp_error_set(r->err, BP_ENOMEM, "out of memory");
    TRY(read_env(r, doc, rep));
    TRY(read_strings(r, doc, "notes", 1000, rep));
    TRY(read_strings(r, doc, "hints", 8000, rep));
    TRY(read_values(r, doc, rep));
    TRY(member(r, doc, "", "results", JSON_ARRAY, "an array of results", true, &results));
    if (r->text)
        TRY(read_results_text(r, rep));
    json_array_foreach(results, i, v) {
        char ip[PATH_LEN];
        item_path(ip, "results", i);
        TRY(read_result(r, v, ip, rep));
    }
    TRY(member(r, doc, "", "explain", JSON_OBJECT, "an object", false, &v));
    rep->explain = v ? json_deep_copy(v) : NULL;
    TRY(read_nothing(r, doc, rep));
    TRY(check_summary(r, doc, rep));
    TRY(upgrade_notes(r, doc, rep));
    json_object_foreach((json_t *)doc, key, v) {
        if (known(key))
            continue;
        if (!rep->extra)
            rep->extra = json_object();
        json_object_set_new(rep->extra, key, json_deep_copy(v));
    }
    return BP_OK;
}

bp_status bp_report_from_json(const json_t *doc, const char *label, bp_report_t *rep,
                              bp_error_t *err)
{
    rd_t r = {.label = label, .err = err};
    memset(rep, 0, sizeof *rep);
    bp_status st = read_doc(&r, doc, rep);
    if (st)
        bp_report_free(rep);
    return st;
}

bp_status bp_report_parse(const char *text, size_t len, const char *label, bp_report_t *rep,
                          bp_error_t *err)
{
    size_t i = 0;
    memset(rep, 0, sizeof *rep);
    while (i < len && strchr(" \t\r\n", text[i]) && text[i])
        i++;
    if (i == len)
        return bp_error_set(err, BP_EINPUT, "%s: empty, not a JSON report", label);
    if (text[i] != '{')
        return bp_error_set(err, BP_EINPUT, "%s: not a JSON report (it does not begin "
                                            "with '{')", label);
    /* The document without its results ([] in their place), then the
     * results an element at a time (read_results_text); a document whose
     * results cannot be found so is read whole, as jansson reads it. */
    rd_t r = {.label = label, .err = err};
    size_t rb, re;
    char *rest = NULL;
    if (bp_json_member(text, len, "results", &rb, &re) && text[rb] == '[' &&
        (rest = malloc(len - (re - rb) + 2))) {
        memcpy(rest, text, rb);
        memcpy(rest + rb, "[]", 2);
        memcpy(rest + rb + 2, text + re, len - re);
        r.text = text, r.rb = rb, r.re = re;
    }
    size_t rlen = rest ? len - (re - rb) + 2 : len;
    bp_json_err_t je;
    json_t *doc = bp_json_load(rest ? rest : text, rlen, JSON_REJECT_DUPLICATES, &je);
    free(rest);
    if (!doc && je.over)
        return bp_json_limit_error(label, rlen, &je, err);
    if (!doc && rest) {
        /* where in the file's own text: jansson on all of it, or, when that
         * is too large, the place past the [] put in, counted here */
        bp_json_err_t whole;
        json_decref(bp_json_load(text, len, JSON_REJECT_DUPLICATES, &whole));
        if (!whole.over) {
            je = whole;
        } else {
            size_t at = je.je.position > 0 ? (size_t)je.je.position - 1 : 0, pos = 0;
            at += at >= rb + 2 ? re - rb - 2 : 0;
            je.je.line = je.je.column = 1;
            advance(text, &pos, at, &je.je.line, &je.je.column);
        }
    }
    if (!doc)
        return bp_error_set(err, BP_EINPUT, "%s:%d:%d: invalid JSON: %s", label, je.je.line,
                            je.je.column, je.je.text);
    bp_status st = read_doc(&r, doc, rep);
    json_decref(doc);
    if (st)
        bp_report_free(rep);
    return st;
}

static bp_status too_large(const char *label, bp_error_t *err)
{
    return bp_error_set(err, BP_EINPUT, "%s: larger than %u bytes, the most a report may have",
                        label, BP_REPORT_READ_MAX);
}

/* The whole of f, at most BP_REPORT_READ_MAX bytes. */
static bp_status slurp(FILE *f, const char *label, char **out, size_t *len, bp_error_t *err)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = NULL;
    for (;;) {
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        }
        buf = nb;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || n > BP_REPORT_READ_MAX)
            break;
        cap = cap * 2 > BP_REPORT_READ_MAX ? BP_REPORT_READ_MAX + 1 : cap * 2;
    }
    bp_status st = BP_OK;
    if (ferror(f))
        st = bp_error_set(err, BP_EIO, "cannot read '%s': %s", label, strerror(errno));
    else if (n > BP_REPORT_READ_MAX)
        st = too_large(label, err);
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *len = n;
    return BP_OK;
}

bp_status bp_report_read(const char *path, bp_report_t *rep, bp_error_t *err)
{
    char file[PATH_MAX];
    struct stat sb;
    memset(rep, 0, sizeof *rep);
    bool in = strcmp(path, "-") == 0;
    if (!in && stat(path, &sb) != 0)
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, strerror(errno));
    bool dir = !in && S_ISDIR(sb.st_mode);
    if (dir) {
        if (snprintf(file, sizeof file, "%s/manifest.json", path) >= (int)sizeof file)
            return bp_error_set(err, BP_EINPUT, "path too long: '%s'", path);
        if (stat(file, &sb) != 0)
            return bp_error_set(err, BP_EINPUT, "%s: a directory without manifest.json, "
                                                "not a bundle (run --save DIR writes one)",
                                path);
    } else {
        snprintf(file, sizeof file, "%s", in ? "(standard input)" : path);
    }
    if (!in && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > BP_REPORT_READ_MAX)
        return too_large(file, err);
    const char *why = NULL;
    FILE *f = in ? stdin : dir ? bp_safe_fopen_in(path, "manifest.json", &why)
                               : bp_safe_fopen(file, &why);
    if (!f)
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", file, why);
    char *text = NULL;
    size_t len = 0;
    bp_status st = slurp(f, file, &text, &len, err);
    if (!in)
        fclose(f);
    if (st)
        return st;
    st = bp_report_parse(text, len, file, rep, err);
    free(text);
    return st;
}
