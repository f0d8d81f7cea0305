/* Reading a probe from its YAML tree, checked against the schema
 * (probes/README.md) and the op table (probe_load.c reads files and
 * directories through it).
 *
 * Contract: bp_probe_load either returns a probe whose every buffer
 * reference points to an earlier op, whose shapes and dtypes infer for every
 * run dtype it lists, and whose hash is set; or fails with BP_EINPUT and a
 * message "FILE:LINE:COL: what is wrong" (1-based, at the offending node),
 * BP_EIO when the file cannot be read, BP_ENOMEM.
 *
 * Everything is a string in the tree; numbers are recognised only in plain
 * (unquoted) scalars, so "10" in quotes is a string, as YAML means it.  How
 * a number is written (10 or 10.0) is kept where Python would keep it: it
 * decides the dtype of arange and tensor and the promotion of a scalar with
 * an integer tensor. */
#include "probe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_yaml.h"

#define MAX_INT 9007199254740992.0 /* 2^53: integers exact in a double */

typedef bp_ynode_t yn_t;

typedef struct {
    const char *path;
    bp_error_t *err;
    bp_probe_t *p;
    bool *param_int;    /* per param: written as an integer */
    const yn_t **defs;  /* per op: its out: node (first definitions win) */
    size_t ndefs;
    const bp_param_arg_t *args; /* --param overrides */
    size_t nargs;
} ld_t;

static bp_status bad(ld_t *L, const yn_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bp_status bad(ld_t *L, const yn_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bp_status st = bp_yaml_errorv(L->err, L->path, n->line, n->col, fmt, ap);
    va_end(ap);
    return st;
}

static bp_status oom(ld_t *L)
{
    return bp_error_set(L->err, BP_ENOMEM, "out of memory");
}

static const char *kind_name(const yn_t *n)
{
    if (n->kind == BP_YN_MAP)
        return "a mapping";
    if (n->kind == BP_YN_SEQ)
        return "a list";
    return n->str[0] ? "a string" : "an empty value";
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static bp_status map_check(ld_t *L, const yn_t *m, const char *const *keys,
                           const char *where)
{
    for (size_t i = 0; i < m->n; i += 2) {
        if (in_list(m->kid[i]->str, keys))
            continue;
        char list[256] = "";
        for (const char *const *k = keys; *k; k++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", *k);
        }
        return bad(L, m->kid[i], "unknown key '%.80s' in %s (expected %s)",
                   m->kid[i]->str, where, list);
    }
    return BP_OK;
}

static bp_status map_need(ld_t *L, const yn_t *m, const char *key,
                          const char *where, const yn_t **out)
{
    if (!(*out = bp_yaml_get(m, key)))
        return bad(L, m, "missing required key '%s' in %s", key, where);
    return BP_OK;
}

static bp_status want(ld_t *L, const yn_t *n, bp_yn_kind_t kind, const char *what)
{
    if (n->kind == kind)
        return BP_OK;
    static const char *const names[] = {"a string", "a list", "a mapping"};
    return bad(L, n, "%s must be %s, got %s", what, names[kind], kind_name(n));
}

static size_t span(const char *s, const char *set)
{
    return strspn(s, set);
}

static bool is_ident(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    size_t n = span(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789_");
    return s[n] == '\0' && n <= 128;
}

static bp_status get_str(ld_t *L, const yn_t *n, const char *what,
                         const char **out)
{
    bp_status st = want(L, n, BP_YN_SCALAR, what);
    if (!st)
        *out = n->str;
    return st;
}

static bp_status get_num(ld_t *L, const yn_t *n, const char *what, double *v,
                         bool *is_int)
{
    bool dummy;
    if (!is_int)
        is_int = &dummy;
    if (n->kind != BP_YN_SCALAR)
        return bad(L, n, "%s must be a number, got %s", what, kind_name(n));
    if (!n->plain)
        return bad(L, n, "%s must be a number, got the quoted string \"%.80s\"",
                   what, n->str);
    if (n->str[0] == '$') {
        const char *name = n->str + 1;
        for (size_t i = 0; i < L->p->nparams; i++)
            if (L->p->params[i].name && strcmp(L->p->params[i].name, name) == 0) {
                *v = L->p->params[i].value;
                *is_int = L->param_int[i];
                return BP_OK;
            }
        if (strcmp(name, "dtype") == 0)
            return bad(L, n, "%s must be a number, got $dtype (a dtype)", what);
        return bad(L, n, "unknown parameter '%.80s' in %s", n->str, what);
    }
    int r = bp_yaml_number(n->str, v, is_int);
    if (r == 2)
        return bad(L, n, "%s: number %.80s is out of range of a double", what,
                   n->str);
    if (r == 0)
        return bad(L, n, "%s must be a number, got %s%.80s%s", what,
                   n->str[0] ? "'" : "an empty value", n->str,
                   n->str[0] ? "'" : "");
    return BP_OK;
}

static bp_status get_int(ld_t *L, const yn_t *n, const char *what, double lo,
                         double hi, int64_t *out)
{
    double v;
    bool is_int;
    bp_status st = get_num(L, n, what, &v, &is_int);
    if (st)
        return st;
    if (!is_int)
        return bad(L, n, "%s must be an integer, got %.80s", what, n->str);
    if (!(v >= lo && v <= hi))
        return bad(L, n, "%s must be between %.0f and %.0f, got %.80s", what, lo,
                   hi, n->str);
    *out = (int64_t)v;
    return BP_OK;
}

/* true or false, as YAML 1.2's core schema writes them, unquoted. */
static bp_status get_bool(ld_t *L, const yn_t *n, const char *what, bool *out)
{
    static const char *const t[] = {"true", "True", "TRUE", NULL},
                             *const f[] = {"false", "False", "FALSE", NULL};
    if (n->kind == BP_YN_SCALAR && n->plain && in_list(n->str, t)) {
        *out = true;
        return BP_OK;
    }
    if (n->kind == BP_YN_SCALAR && n->plain && in_list(n->str, f)) {
        *out = false;
        return BP_OK;
    }
    if (n->kind != BP_YN_SCALAR)
        return bad(L, n, "%s must be true or false, got %s", what, kind_name(n));
    return bad(L, n, "%s must be true or false, got %s%.80s%s", what,
               n->plain ? "" : "the quoted string \"", n->str, n->plain ? "" : "\"");
}

static bp_status get_dtype(ld_t *L, const yn_t *n, bool allow_run,
                           bool *is_run, bp_dtype_t *dt)
{
    const char *s;
    bp_status st = get_str(L, n, "dtype", &s);
    if (st)
        return st;
    *is_run = false;
    if (allow_run && strcmp(s, "$dtype") == 0) {
        *is_run = true;
        *dt = BP_F32;
        return BP_OK;
    }
    if (s[0] != '$' && bp_dtype_parse(s, dt))
        return BP_OK;
    return bad(L, n, "unknown dtype '%.80s' (expected fp32, bf16, fp16, fp64, "
                     "i64, i32, another safetensors dtype such as u8, bool or "
                     "fp8_e4m3%s)",
               s, allow_run ? " or $dtype" : "");
}

static bp_status get_shape(ld_t *L, const yn_t *n, int *ndim, int64_t *shape)
{
    bp_status st = want(L, n, BP_YN_SEQ, "shape");
    if (st)
        return st;
    if (n->n > BP_MAXDIM)
        return bad(L, n, "shape has %zu dimensions (at most %d)", n->n, BP_MAXDIM);
    for (size_t d = 0; d < n->n; d++)
        if ((st = get_int(L, n->kid[d], "shape dimension", 0, MAX_INT, &shape[d])))
            return st;
    *ndim = (int)n->n;
    size_t numel;
    bp_error_t e;
    if (bp_shape_numel(*ndim, shape, BP_F64, &numel, &e))
        return bad(L, n, "shape: %s", e.msg);
    return BP_OK;
}


/* A list of at most BP_MAXDIM integers (dimensions, or a shape with -1). */
static bp_status get_dims(ld_t *L, const yn_t *n, const char *what, int *ndim,
                          int64_t *dims)
{
    bp_status st = want(L, n, BP_YN_SEQ, what);
    if (st)
        return st;
    if (n->n > BP_MAXDIM)
        return bad(L, n, "%s has %zu entries (at most %d)", what, n->n, BP_MAXDIM);
    for (size_t d = 0; d < n->n; d++)
        if ((st = get_int(L, n->kid[d], what, -MAX_INT, MAX_INT, &dims[d])))
            return st;
    *ndim = (int)n->n;
    return BP_OK;
}

/* ---- ops ----------------------------------------------------------------- */

/* Index of the first op whose out: is name, or -1. */
static int def_index(ld_t *L, const char *name)
{
    for (size_t j = 0; j < L->ndefs; j++)
        if (L->defs[j] && strcmp(L->defs[j]->str, name) == 0)
            return (int)j;
    return -1;
}

static bp_status get_buf(ld_t *L, size_t i, const yn_t *n, int *buf)
{
    const char *cur = L->p->ops[i].out;
    if (!is_ident(n->str))
        return bad(L, n, "'%.80s' is not a buffer name", n->str);
    int j = def_index(L, n->str);
    if (j < 0)
        return bad(L, n, "undefined buffer '%.80s'", n->str);
    if ((size_t)j == i)
        return bad(L, n, "cycle: op '%s' reads its own output '%s'", cur, n->str);
    if ((size_t)j > i)
        return bad(L, n,
                   "cycle: op '%s' reads '%s' before the op that defines it "
                   "(line %d, column %d)",
                   cur, n->str, L->defs[j]->line, L->defs[j]->col);
    *buf = j;
    return BP_OK;
}

/* a:/b: a buffer name, or (when scalars are allowed) a number or $param. */
static bp_status get_arg(ld_t *L, size_t i, const yn_t *n, const char *key,
                         bool allow_scalar, bp_arg_t *arg)
{
    memset(arg, 0, sizeof *arg);
    if (n->kind != BP_YN_SCALAR)
        return bad(L, n, "%s must be a buffer name%s, got %s", key,
                   allow_scalar ? " or a number" : "", kind_name(n));
    double v;
    bool is_int;
    if (n->plain && (n->str[0] == '$' || bp_yaml_number(n->str, &v, &is_int))) {
        if (!allow_scalar)
            return bad(L, n, "%s must be a buffer name, got the number %.80s",
                       key, n->str);
        bp_status st = get_num(L, n, key, &arg->value, &arg->is_int);
        if (st)
            return st;
        arg->kind = BP_ARG_SCALAR;
        return BP_OK;
    }
    arg->kind = BP_ARG_BUF;
    return get_buf(L, i, n, &arg->buf);
}

static bp_status get_form(ld_t *L, bp_op_t *op, const yn_t *n)
{
    const char *s;
    bp_status st = get_str(L, n, "formulation", &s);
    if (st)
        return st;
    bp_form_t f;
    if (bp_form_lookup(s, &f) && bp_op_form_ok(op->kind, f)) {
        op->form = f;
        return BP_OK;
    }
    /* "true, reciprocal or default": the op's own, then the default. */
    char list[256] = "";
    unsigned forms = bp_op_info(op->kind)->forms;
    for (int k = 0; k < BP_FORM_COUNT; k++)
        if (forms & (1u << k)) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s, ",
                     bp_form_name((bp_form_t)k));
        }
    size_t l = strlen(list);
    if (l >= 2)
        list[l - 2] = '\0';
    return bad(L, n, "unknown formulation '%.80s' for %s (expected %s or default)",
               s, bp_op_name(op->kind), list);
}

/* The keys op k takes, out and op first, then in op_list.h's order,
 * NULL-ended, into keys (room for BP_KEY_COUNT + 3). */
static void op_keys(bp_op_kind_t k, const char **keys)
{
    size_t n = 0;
    keys[n++] = "out";
    keys[n++] = "op";
    keys[n++] = bp_key_name(BP_KEY_DTYPE);
    for (int i = 0; i < BP_KEY_COUNT; i++)
        if (i != BP_KEY_DTYPE && bp_op_takes(k, (bp_key_t)i))
            keys[n++] = bp_key_name((bp_key_t)i);
    keys[n] = NULL;
}

/* "unknown op 'x'", with the nearest op and the list of them. */
static bp_status unknown_op(ld_t *L, const yn_t *n, const char *s)
{
    char list[520] = "";
    for (int k = 0; k < BP_OP_COUNT; k++) {
        size_t l = strlen(list);
        const char *name = bp_op_name((bp_op_kind_t)k);
        if (l + strlen(name) + 8 >= sizeof list) {
            snprintf(list + l, sizeof list - l, ", ...");
            break;
        }
        snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", name);
    }
    const char *near = bp_op_suggest(s);
    if (near)
        return bad(L, n, "unknown op '%.80s'; did you mean '%s'? (ops: %s)", s,
                   near, list);
    return bad(L, n, "unknown op '%.80s' (ops: %s)", s, list);
}

static bp_status op_tensor(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *v, *sh = bp_yaml_get(n, "shape");
    bp_status st = map_need(L, n, "values", where, &v);
    if (st || (st = want(L, v, BP_YN_SEQ, "values")))
        return st;
    if (v->n == 0)
        return bad(L, v, "values is empty");
    if (!(op->values = malloc(v->n * sizeof *op->values)))
        return oom(L);
    op->nvalues = v->n;
    bool all_int = true;
    for (size_t k = 0; k < v->n; k++) {
        bool is_int;
        if ((st = get_num(L, v->kid[k], "values", &op->values[k], &is_int)))
            return st;
        all_int = all_int && is_int;
    }
    if (sh) {
        if ((st = get_shape(L, sh, &op->ndim, op->shape)))
            return st;
        size_t numel = 1;
        for (int d = 0; d < op->ndim; d++)
            numel *= (size_t)op->shape[d];
        if (numel != v->n)
            return bad(L, sh, "shape holds %zu values but values has %zu",
                       numel, v->n);
    } else {
        op->ndim = 1;
        op->shape[0] = (int64_t)v->n;
    }
    if (!op->has_dtype) { /* torch.tensor: i64 for Python ints, else f32 */
        op->has_dtype = true;
        op->dtype = all_int ? BP_I64 : BP_F32;
    }
    return BP_OK;
}

static bp_status op_arange(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *e, *s = bp_yaml_get(n, "start"), *p = bp_yaml_get(n, "step");
    bool i1 = true, i2 = true, i3 = true;
    op->start = 0;
    op->step = 1;
    bp_status st = map_need(L, n, "end", where, &e);
    if (!st)
        st = get_num(L, e, "end", &op->end, &i2);
    if (!st && s)
        st = get_num(L, s, "start", &op->start, &i1);
    if (!st && p)
        st = get_num(L, p, "step", &op->step, &i3);
    if (st)
        return st;
    int64_t len;
    bp_error_t e2;
    if (bp_arange_length(op->start, op->end, op->step, &len, &e2))
        return bad(L, p && !(op->step > 0 || op->step < 0) ? p : n, "%s", e2.msg);
    if (!op->has_dtype) { /* torch.arange: i64 when all three are ints */
        op->has_dtype = true;
        op->dtype = i1 && i2 && i3 ? BP_I64 : BP_F32;
    }
    return BP_OK;
}

/* The generators' shape, seed and stream (0 unless given). */
static bp_status get_draw(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *sh, *seed, *x;
    int64_t v;
    bp_status st = map_need(L, n, "shape", where, &sh);
    if (!st)
        st = get_shape(L, sh, &op->ndim, op->shape);
    if (!st)
        st = map_need(L, n, "seed", where, &seed);
    if (!st && !(st = get_int(L, seed, "seed", 0, MAX_INT, &v)))
        op->seed = (uint64_t)v;
    if (!st && (x = bp_yaml_get(n, "stream")) &&
        !(st = get_int(L, x, "stream", 0, MAX_INT, &v)))
        op->stream = (uint64_t)v;
    return st;
}

static bp_status op_uniform(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *x;
    bp_status st = get_draw(L, op, n, where);
    op->low = 0;
    op->high = 1;
    if (!st && (x = bp_yaml_get(n, "low")))
        st = get_num(L, x, "low", &op->low, NULL);
    if (!st && (x = bp_yaml_get(n, "high")))
        st = get_num(L, x, "high", &op->high, NULL);
    if (!st && !(isfinite(op->low) && isfinite(op->high) && op->low <= op->high))
        st = bad(L, n, "uniform needs finite low <= high, got low %g, high %g",
                 op->low, op->high);
    return st;
}

/* randn: mean 0, std 1; normal: both given, std finite and >= 0 (as
 * torch.normal demands), mean finite. */
static bp_status op_normal(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    bp_status st = get_draw(L, op, n, where);
    op->mean = 0;
    op->std = 1;
    if (st || op->kind == BP_OP_RANDN)
        return st;
    const yn_t *m = bp_yaml_get(n, "mean"), *s = bp_yaml_get(n, "std");
    if ((st = get_num(L, m, "mean", &op->mean, NULL)) ||
        (st = get_num(L, s, "std", &op->std, NULL)))
        return st;
    if (!isfinite(op->mean))
        return bad(L, m, "normal needs a finite mean, got %g", op->mean);
    if (!(op->std >= 0) || !isfinite(op->std))
        return bad(L, s, "normal needs a finite std >= 0, got %g", op->std);
    return BP_OK;
}

/* gelu's approximate: none (erf, the default) or tanh. */
static bp_status get_approximate(ld_t *L, bp_op_t *op, const yn_t *n)
{
    const char *s;
    bp_status st = get_str(L, n, "approximate", &s);
    if (st)
        return st;
    if (strcmp(s, "none") == 0)
        op->form = BP_FORM_DEFAULT;
    else if (strcmp(s, "tanh") == 0)
        op->form = BP_FORM_TANH;
    else
        return bad(L, n, "unknown approximate '%.80s' for gelu (expected none or tanh)", s);
    return BP_OK;
}

static bp_status op_clamp(ld_t *L, bp_op_t *op, const yn_t *n)
{
    const yn_t *x;
    bp_status st = BP_OK;
    for (int k = 0; k < 2; k++) /* torch.clamp's Tensor form is an op of its own */
        if ((x = bp_yaml_get(n, k ? "max" : "min")) && x->kind == BP_YN_SCALAR &&
            x->plain && def_index(L, x->str) >= 0)
            return bad(L, x, "%s must be a number, got the buffer '%.80s' "
                       "(tensor bounds: op clamp_tensor)", k ? "max" : "min", x->str);
    if ((x = bp_yaml_get(n, "min")) && !(st = get_num(L, x, "min", &op->min, NULL)))
        op->has_min = true;
    if (!st && (x = bp_yaml_get(n, "max")) && !(st = get_num(L, x, "max", &op->max, NULL)))
        op->has_max = true;
    if (!st && !op->has_min && !op->has_max)
        st = bad(L, n, "clamp needs min, max or both");
    return st;
}

/* full, zeros, ones: a shape and, for full, the value (torch.full's
 * dtype: i64 for a Python int, else fp32). */
static bp_status op_fill(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *sh, *v;
    bool is_int = false;
    bp_status st = map_need(L, n, "shape", where, &sh);
    if (!st)
        st = get_shape(L, sh, &op->ndim, op->shape);
    if (!st && op->kind == BP_OP_FULL && !(st = map_need(L, n, "value", where, &v)))
        st = get_num(L, v, "value", &op->value, &is_int);
    if (!st && op->kind == BP_OP_FULL && !op->has_dtype) {
        op->has_dtype = true;
        op->dtype = is_int ? BP_I64 : BP_F32;
    }
    return st;
}

static bp_status op_linspace(ld_t *L, bp_op_t *op, const yn_t *n, const char *where)
{
    const yn_t *s, *e, *c;
    bp_status st = map_need(L, n, "start", where, &s);
    if (!st)
        st = get_num(L, s, "start", &op->start, NULL);
    if (!st && !(st = map_need(L, n, "end", where, &e)))
        st = get_num(L, e, "end", &op->end, NULL);
    if (!st && !(st = map_need(L, n, "steps", where, &c)))
        st = get_int(L, c, "steps", 0, MAX_INT, &op->steps);
    if (!st && !(isfinite(op->start) && isfinite(op->end)))
        st = bad(L, n, "linspace needs a finite start and end, got %g and %g", op->start,
                 op->end);
    return st;
}

static bp_status op_slice(ld_t *L, bp_op_t *op, const yn_t *n)
{
    const yn_t *x;
    bp_status st = BP_OK;
    op->s_start = 0;
    op->s_end = INT64_MAX;
    op->s_step = 1;
    if ((x = bp_yaml_get(n, "start")))
        st = get_int(L, x, "start", -MAX_INT, MAX_INT, &op->s_start);
    if (!st && (x = bp_yaml_get(n, "end")))
        st = get_int(L, x, "end", -MAX_INT, MAX_INT, &op->s_end);
    if (!st && (x = bp_yaml_get(n, "step")))
        st = get_int(L, x, "step", 1, MAX_INT, &op->s_step);
    op->has_axis = true; /* axis 0 unless given */
    return st;
}

/* inputs: a list of 1 to BP_OP_MAXINPUTS earlier buffers. */
static bp_status get_inputs(ld_t *L, size_t i, bp_op_t *op, const yn_t *in)
{
    bp_status st = want(L, in, BP_YN_SEQ, "inputs");
    if (st)
        return st;
    if (in->n == 0 || in->n > BP_OP_MAXINPUTS)
        return bad(L, in, "%s takes 1 to %d inputs, got %zu",
                   bp_op_name(op->kind), BP_OP_MAXINPUTS, in->n);
    if (!(op->inputs = calloc(in->n, sizeof *op->inputs)))
        return oom(L);
    op->ninputs = (int)in->n;
    for (size_t k = 0; k < in->n; k++) {
        if ((st = want(L, in->kid[k], BP_YN_SCALAR, "each input")) ||
            (st = get_buf(L, i, in->kid[k], &op->inputs[k])))
            return st;
    }
    return BP_OK;
}

/* The operands op_list.h says the op reads. */
static bp_status get_operands(ld_t *L, size_t i, bp_op_t *op, const yn_t *n,
                              const char *where)
{
    const yn_t *a = bp_yaml_get(n, "a"), *b = bp_yaml_get(n, "b"), *x;
    bp_status st = BP_OK;
    switch (bp_op_info(op->kind)->operands) {
    case BP_OPD_NONE:
        return BP_OK;
    case BP_OPD_A:
        return get_arg(L, i, a, "a", false, &op->a);
    case BP_OPD_AB:
        if (!(st = get_arg(L, i, a, "a", false, &op->a)))
            st = get_arg(L, i, b, "b", false, &op->b);
        return st;
    case BP_OPD_AB_TS:
        if ((st = get_arg(L, i, a, "a", true, &op->a)) ||
            (st = get_arg(L, i, b, "b", true, &op->b)))
            return st;
        if (op->a.kind != BP_ARG_BUF && op->b.kind != BP_ARG_BUF)
            return bad(L, n, "%s needs a buffer as a or b, not two numbers",
                       where);
        return BP_OK;
    case BP_OPD_INPUTS:
        return get_inputs(L, i, op, bp_yaml_get(n, "inputs"));
    case BP_OPD_COND_AB: /* where: cond is read as the op's one input */
        if ((st = get_arg(L, i, a, "a", true, &op->a)) ||
            (st = get_arg(L, i, b, "b", true, &op->b)))
            return st;
        if (!(op->inputs = calloc(1, sizeof *op->inputs)))
            return oom(L);
        op->ninputs = 1;
        x = bp_yaml_get(n, "cond");
        if (!x)
            return bad(L, n, "%s needs cond", where);
        if ((st = want(L, x, BP_YN_SCALAR, "cond")))
            return st;
        return get_buf(L, i, x, &op->inputs[0]);
    case BP_OPD_A_BOUNDS: /* clamp_tensor: the bounds present, min first */
        if ((st = get_arg(L, i, a, "a", false, &op->a)))
            return st;
        if (!(op->inputs = calloc(2, sizeof *op->inputs)))
            return oom(L);
        for (int k = 0; k < 2; k++) {
            if (!(x = bp_yaml_get(n, k ? "max" : "min")))
                continue;
            if ((st = want(L, x, BP_YN_SCALAR, k ? "max" : "min")) ||
                (st = get_buf(L, i, x, &op->inputs[op->ninputs])))
                return st;
            op->ninputs++;
            *(k ? &op->has_max : &op->has_min) = true;
        }
        if (!op->ninputs)
            return bad(L, n, "%s needs min, max or both (tensors)", where);
        return BP_OK;
    }
    return BP_OK;
}

static bp_status parse_op(ld_t *L, size_t i, const yn_t *n)
{
    bp_op_t *op = &L->p->ops[i];
    bp_status st = want(L, n, BP_YN_MAP, "each op");
    if (st)
        return st;
    op->line = n->line;
    op->col = n->col;
    char where[160];
    snprintf(where, sizeof where, "op #%zu", i + 1);
    const yn_t *x;
    const char *s;
    if ((st = map_need(L, n, "op", where, &x)) || (st = get_str(L, x, "op", &s)))
        return st;
    if (!bp_op_lookup(s, &op->kind))
        return unknown_op(L, x, s);
    const bp_op_info_t *info = bp_op_info(op->kind);
    const yn_t *o = bp_yaml_get(n, "out");
    if (o && o->kind == BP_YN_SCALAR && is_ident(o->str))
        snprintf(where, sizeof where, "op '%s' (%s)", o->str, s);
    else
        snprintf(where, sizeof where, "op #%zu (%s)", i + 1, s);
    const char *keys[BP_KEY_COUNT + 3];
    op_keys(op->kind, keys);
    if ((st = map_check(L, n, keys, where)) ||
        (st = map_need(L, n, "out", where, &x)) ||
        (st = get_str(L, x, "out", &s)))
        return st;
    if (!is_ident(s))
        return bad(L, x, "invalid buffer name '%.80s' (letters, digits and _, "
                         "not starting with a digit)", s);
    int j = def_index(L, s);
    if (j >= 0 && (size_t)j < i)
        return bad(L, x, "buffer '%s' redefined (first defined at line %d, "
                         "column %d)", s, L->defs[j]->line, L->defs[j]->col);
    if (!(op->out = strdup(s)))
        return oom(L);
    if ((x = bp_yaml_get(n, "dtype"))) {
        if ((st = get_dtype(L, x, true, &op->dtype_is_run, &op->dtype)))
            return st;
        op->has_dtype = true;
    }
    if ((x = bp_yaml_get(n, "formulation")) && (st = get_form(L, op, x)))
        return st;
    for (int k = 0; k < BP_KEY_COUNT; k++)
        if ((info->required & (UINT64_C(1) << k)) &&
            (st = map_need(L, n, bp_key_name((bp_key_t)k), where, &x)))
            return st;
    if ((st = get_operands(L, i, op, n, where)))
        return st;
    if ((x = bp_yaml_get(n, "axis"))) {
        int64_t v;
        if ((st = get_int(L, x, "axis", -BP_MAXDIM, BP_MAXDIM - 1, &v)))
            return st;
        op->has_axis = true;
        op->axis = (int)v;
    }
    if ((x = bp_yaml_get(n, "keepdim")) && (st = get_bool(L, x, "keepdim", &op->keepdim)))
        return st;
    if ((x = bp_yaml_get(n, "correction"))) {
        if ((st = get_num(L, x, "correction", &op->correction, NULL)))
            return st;
        op->has_correction = true;
    }
    if ((x = bp_yaml_get(n, "eps"))) {
        if ((st = get_num(L, x, "eps", &op->eps, NULL)))
            return st;
        if (!(op->eps >= 0) || !isfinite(op->eps))
            return bad(L, x, "eps must be a finite number >= 0, got %g", op->eps);
        op->has_eps = true;
    }
    if ((x = bp_yaml_get(n, "is_causal")) &&
        (st = get_bool(L, x, "is_causal", &op->is_causal)))
        return st;
    if ((x = bp_yaml_get(n, "scale"))) {
        if ((st = get_num(L, x, "scale", &op->scale, NULL)))
            return st;
        if (!isfinite(op->scale))
            return bad(L, x, "scale must be finite, got %g", op->scale);
        op->has_scale = true;
    }
    if (bp_op_takes(op->kind, BP_KEY_VSHAPE) && (x = bp_yaml_get(n, "shape")) &&
        (st = get_dims(L, x, "shape", &op->ndim, op->shape)))
        return st;
    if ((x = bp_yaml_get(n, "dims")) && (st = get_dims(L, x, "dims", &op->ndims, op->dims)))
        return st;
    if (bp_op_takes(op->kind, BP_KEY_DIM0)) {
        if ((st = get_int(L, bp_yaml_get(n, "dim0"), "dim0", -BP_MAXDIM, BP_MAXDIM - 1,
                          &op->dims[0])) ||
            (st = get_int(L, bp_yaml_get(n, "dim1"), "dim1", -BP_MAXDIM, BP_MAXDIM - 1,
                          &op->dims[1])))
            return st;
        op->ndims = 2;
    }
    switch (op->kind) {
    case BP_OP_TENSOR:
        return op_tensor(L, op, n, where);
    case BP_OP_ARANGE:
        return op_arange(L, op, n, where);
    case BP_OP_UNIFORM:
        return op_uniform(L, op, n, where);
    case BP_OP_RANDN:
    case BP_OP_NORMAL:
        return op_normal(L, op, n, where);
    case BP_OP_BADDBMM: /* beta and alpha: finite numbers, 1 unless given */
    case BP_OP_ADDMM:
        op->beta = op->alpha = 1;
        for (int k = 0; k < 2; k++) {
            const char *key = k ? "alpha" : "beta";
            double *v = k ? &op->alpha : &op->beta;
            if (!(x = bp_yaml_get(n, key)))
                continue;
            if ((st = get_num(L, x, key, v, NULL)))
                return st;
            if (!isfinite(*v))
                return bad(L, x, "%s must be finite, got %g", key, *v);
        }
        return BP_OK;
    case BP_OP_LOAD:
        if (op->dtype_is_run)
            return bad(L, bp_yaml_get(n, "dtype"), "load takes the dtype of the tensor in "
                                                   "its file, not $dtype");
        return get_shape(L, bp_yaml_get(n, "shape"), &op->ndim, op->shape);
    case BP_OP_CONCAT:
        op->has_axis = true; /* axis 0 unless given */
        return BP_OK;
    case BP_OP_SLICE:
        return op_slice(L, op, n);
    case BP_OP_GELU:
        return (x = bp_yaml_get(n, "approximate")) ? get_approximate(L, op, x) : BP_OK;
    case BP_OP_ROUND:
        return (x = bp_yaml_get(n, "decimals"))
                   ? get_int(L, x, "decimals", -300, 300, &op->decimals)
                   : BP_OK;
    case BP_OP_CLAMP:
        return op_clamp(L, op, n);
    case BP_OP_FULL:
    case BP_OP_ZEROS:
    case BP_OP_ONES:
        return op_fill(L, op, n, where);
    case BP_OP_LINSPACE:
        return op_linspace(L, op, n, where);
    default:
        return BP_OK;
    }
}

static bp_status parse_ops(ld_t *L, const yn_t *n)
{
    bp_status st = want(L, n, BP_YN_SEQ, "ops");
    if (st)
        return st;
    if (n->n == 0)
        return bad(L, n, "ops is empty (a probe needs at least one op)");
    bp_probe_t *p = L->p;
    if (!(p->ops = calloc(n->n, sizeof *p->ops)) ||
        !(L->defs = calloc(n->n, sizeof *L->defs)))
        return oom(L);
    p->nops = L->ndefs = n->n;
    /* Every name first, so that a forward reference reads as a cycle. */
    for (size_t i = 0; i < n->n; i++) {
        const yn_t *o = n->kid[i], *out;
        if (o->kind == BP_YN_MAP && (out = bp_yaml_get(o, "out")) &&
            out->kind == BP_YN_SCALAR && def_index(L, out->str) < 0)
            L->defs[i] = out;
    }
    for (size_t i = 0; i < n->n; i++)
        if ((st = parse_op(L, i, n->kid[i])))
            return st;
    return BP_OK;
}

/* ---- the rest of the probe ------------------------------------------------ */

static bp_status parse_policy(ld_t *L, const yn_t *n, bp_policy_t *pol)
{
    bp_policy_exact(pol);
    if (n->kind == BP_YN_SCALAR) {
        if (strcmp(n->str, "exact") == 0)
            return BP_OK;
        return bad(L, n, "unknown policy '%.80s' (expected exact or a mapping "
                         "of ulp, abs, rel, max_mismatch_fraction, zero_sign)", n->str);
    }
    static const char *const keys[] = {"ulp", "abs", "rel",
                                       "max_mismatch_fraction", "zero_sign", NULL};
    bp_status st = want(L, n, BP_YN_MAP, "policy");
    if (st || (st = map_check(L, n, keys, "policy")))
        return st;
    const yn_t *x;
    if ((x = bp_yaml_get(n, "ulp"))) {
        int64_t v;
        if ((st = get_int(L, x, "ulp", 0, MAX_INT, &v)))
            return st;
        pol->has_ulp = true;
        pol->max_ulp = (uint64_t)v;
    }
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "rel" : "abs";
        double *dst = k ? &pol->rel : &pol->abs;
        if (!(x = bp_yaml_get(n, key)))
            continue;
        if ((st = get_num(L, x, key, dst, NULL)))
            return st;
        if (!(*dst >= 0 && isfinite(*dst)))
            return bad(L, x, "%s must be a finite number >= 0, got %.80s", key,
                       x->str);
        pol->has_tol = true;
    }
    if ((x = bp_yaml_get(n, "max_mismatch_fraction"))) {
        double *f = &pol->max_mismatch_fraction;
        if ((st = get_num(L, x, "max_mismatch_fraction", f, NULL)))
            return st;
        if (!(*f >= 0 && *f <= 1))
            return bad(L, x, "max_mismatch_fraction must be between 0 and 1, "
                             "got %.80s", x->str);
    }
    /* +0 against -0 counts unless the policy excuses it by name: no ulp
     * or tolerance admits it (compare.h). */
    if ((x = bp_yaml_get(n, "zero_sign"))) {
        if (x->kind != BP_YN_SCALAR ||
            (strcmp(x->str, "ignore") != 0 && strcmp(x->str, "count") != 0))
            return bad(L, x, "zero_sign must be ignore or count, got %.80s",
                       x->kind == BP_YN_SCALAR ? x->str : "a collection");
        pol->zero_sign_ignore = strcmp(x->str, "ignore") == 0;
    }
    return BP_OK;
}

static bp_status parse_outputs(ld_t *L, const yn_t *n)
{
    bp_status st = want(L, n, BP_YN_SEQ, "outputs");
    if (st)
        return st;
    if (n->n == 0)
        return bad(L, n, "outputs is empty (a probe checks at least one buffer)");
    bp_probe_t *p = L->p;
    if (!(p->outputs = calloc(n->n, sizeof *p->outputs)))
        return oom(L);
    p->noutputs = n->n;
    static const char *const keys[] = {"name", "policy", NULL};
    for (size_t i = 0; i < n->n; i++) {
        const yn_t *o = n->kid[i], *x;
        bp_output_t *out = &p->outputs[i];
        const char *s;
        bp_policy_exact(&out->policy);
        if ((st = want(L, o, BP_YN_MAP, "each output")) ||
            (st = map_check(L, o, keys, "an output")) ||
            (st = map_need(L, o, "name", "an output", &x)) ||
            (st = get_str(L, x, "output name", &s)))
            return st;
        out->line = x->line;
        out->col = x->col;
        if ((out->buf = bp_probe_find_buf(p, s)) < 0)
            return bad(L, x, "output '%.80s' names no buffer (no op has "
                             "out: %.80s)", s, s);
        for (size_t k = 0; k < i; k++)
            if (strcmp(p->outputs[k].name, s) == 0)
                return bad(L, x, "output '%s' listed twice (first at line %d, "
                                 "column %d)", s, p->outputs[k].line,
                           p->outputs[k].col);
        if (!(out->name = strdup(s)))
            return oom(L);
        if ((x = bp_yaml_get(o, "policy")) && (st = parse_policy(L, x, &out->policy)))
            return st;
    }
    return BP_OK;
}

bp_status bp_param_number(const bp_param_arg_t *a, double *v, bool *is_int, bp_error_t *err)
{
    int r = bp_yaml_number(a->value, v, is_int);
    if (r != 1)
        return bp_error_set(err, BP_EINPUT, "--param %s=%s: the value is not a number%s",
                            a->name, a->value, r == 2 ? " within a double's range" : "");
    return BP_OK;
}

/* A --param override of parameter name, if there is one: its value
 * replaces the file's, and the probe notes it. */
static bp_status override(ld_t *L, const char *name, double *v, bool *is_int)
{
    for (size_t a = 0; a < L->nargs; a++) {
        if (strcmp(L->args[a].name, name) != 0)
            continue;
        bp_status st = bp_param_number(&L->args[a], v, is_int, L->err);
        if (st)
            return st;
        bp_probe_t *p = L->p;
        size_t old = p->overrides ? strlen(p->overrides) : 0,
               len = old + strlen(name) + strlen(L->args[a].value) + 3;
        char *o = realloc(p->overrides, len);
        if (!o)
            return oom(L);
        snprintf(o + old, len - old, "%s%s=%s", old ? "," : "", name, L->args[a].value);
        p->overrides = o;
    }
    return BP_OK;
}

static bp_status parse_params(ld_t *L, const yn_t *n)
{
    bp_status st = want(L, n, BP_YN_MAP, "params");
    if (st)
        return st;
    bp_probe_t *p = L->p;
    size_t np = n->n / 2;
    if (!(p->params = calloc(np ? np : 1, sizeof *p->params)) ||
        !(L->param_int = calloc(np ? np : 1, sizeof *L->param_int)))
        return oom(L);
    for (size_t i = 0; i < np; i++) {
        const yn_t *k = n->kid[2 * i], *v = n->kid[2 * i + 1];
        if (!is_ident(k->str))
            return bad(L, k, "invalid parameter name '%.80s' (letters, digits "
                             "and _, not starting with a digit)", k->str);
        if (strcmp(k->str, "dtype") == 0)
            return bad(L, k, "parameter name 'dtype' is reserved ($dtype is "
                             "the run dtype)");
        if (v->kind == BP_YN_SCALAR && v->plain && v->str[0] == '$')
            return bad(L, v, "parameter '%s' must be a number, not a reference",
                       k->str);
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", k->str);
        /* Look-ups see only the params before this one: none, by the check
         * above; nparams grows as each one is read. */
        if ((st = get_num(L, v, what, &p->params[i].value, &L->param_int[i])))
            return st;
        if ((st = override(L, k->str, &p->params[i].value, &L->param_int[i])))
            return st;
        if (!(p->params[i].name = strdup(k->str)))
            return oom(L);
        p->nparams = i + 1;
    }
    return BP_OK;
}

static bp_status parse_dtypes(ld_t *L, const yn_t *n)
{
    bp_status st = want(L, n, BP_YN_SEQ, "dtypes");
    if (st)
        return st;
    if (n->n == 0)
        return bad(L, n, "dtypes is empty (list some of fp32, bf16, fp16)");
    for (size_t i = 0; i < n->n; i++) {
        bool run;
        bp_dtype_t dt;
        if ((st = get_dtype(L, n->kid[i], false, &run, &dt)))
            return st;
        if (!bp_dtype_is_run(dt))
            return bad(L, n->kid[i], "a probe runs in fp32, bf16 or fp16, "
                                     "not %s", bp_dtype_name(dt));
        if (L->p->dtypes & (1u << dt))
            return bad(L, n->kid[i], "dtype %s listed twice", bp_dtype_name(dt));
        L->p->dtypes |= 1u << dt;
    }
    return BP_OK;
}

static bool is_probe_name(const char *s)
{
    size_t n = span(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
    return n > 0 && n <= 128 && s[n] == '\0';
}

static bp_status parse_probe(ld_t *L, const yn_t *root)
{
    static const char *const keys[] = {"name", "description", "params", "dtypes",
                                       "ops", "outputs", NULL};
    const char *where = "the probe";
    bp_probe_t *p = L->p;
    const yn_t *x;
    const char *s;
    bp_status st = want(L, root, BP_YN_MAP, "a probe");
    if (st || (st = map_check(L, root, keys, where)) ||
        (st = map_need(L, root, "name", where, &x)) ||
        (st = get_str(L, x, "name", &s)))
        return st;
    if (!is_probe_name(s))
        return bad(L, x, "invalid probe name '%.80s' (lower-case letters, "
                         "digits and -)", s);
    const char *base = strrchr(L->path, '/');
    base = base ? base + 1 : L->path;
    size_t nl = strlen(s);
    if (strncmp(base, s, nl) != 0 ||
        (strcmp(base + nl, ".yaml") != 0 && strcmp(base + nl, ".yml") != 0))
        return bad(L, x, "name '%s' does not match the file name '%.80s' "
                         "(expected %s.yaml or %s.yml)", s, base, s, s);
    if (!(p->name = strdup(s)))
        return oom(L);
    if ((st = map_need(L, root, "description", where, &x)) ||
        (st = get_str(L, x, "description", &s)))
        return st;
    if (!(p->description = strdup(s)))
        return oom(L);
    if ((x = bp_yaml_get(root, "params")) && (st = parse_params(L, x)))
        return st;
    if ((st = map_need(L, root, "dtypes", where, &x)) ||
        (st = parse_dtypes(L, x)) ||
        (st = map_need(L, root, "ops", where, &x)) || (st = parse_ops(L, x)) ||
        (st = map_need(L, root, "outputs", where, &x)) ||
        (st = parse_outputs(L, x)))
        return st;
    /* Shapes and dtypes must work out in every dtype the probe lists. */
    bp_meta_t *metas = calloc(p->nops, sizeof *metas);
    if (!metas)
        return oom(L);
    static const bp_dtype_t order[] = {BP_F32, BP_BF16, BP_F16};
    for (size_t k = 0; !st && k < 3; k++)
        if (p->dtypes & (1u << order[k]))
            st = bp_probe_infer(p, order[k], metas, L->err);
    free(metas);
    return st;
}

bp_status bp_probe_from_tree(const char *path, bp_ynode_t *root, bp_status st,
                             const void *args, size_t nargs, bp_probe_t **out,
                             bp_error_t *err)
{
    ld_t L = {.path = path, .err = err, .args = args, .nargs = nargs};
    const yn_t start = {.line = 1, .col = 1};
    if (!st && !root)
        st = bad(&L, &start, "empty file (a probe is a mapping with name, "
                             "description, dtypes, ops and outputs)");
    if (!st && !(L.p = calloc(1, sizeof *L.p)))
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st && !(L.p->path = strdup(path)))
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = parse_probe(&L, root);
    if (!st)
        bp_probe_hash(L.p, L.p->hash);
    bp_yaml_free(root);
    free(L.param_int);
    free(L.defs);
    if (st) {
        bp_probe_free(L.p);
        return st;
    }
    *out = L.p;
    return BP_OK;
}
