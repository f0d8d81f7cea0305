/* A recorded ATen op as a bitprobe probe (contract in ledger_map.h).
 *
 * The op's tensor inputs become load ops (x0, x1, ...: the tensor file
 * next to the probe holds them), its numbers stay numbers, written the way
 * Python wrote them (an int without a fraction, a float with one: type
 * promotion depends on it), and the op itself becomes the bitprobe op of
 * the same meaning with the recorded result dtype spelt out. */
#include "ledger_map.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "jsonread.h"

typedef enum { M_BIN, M_BIN_ALPHA, M_BIN_MODE, M_UN, M_ARANGE, M_CAST, M_MM, M_SUM,
               M_CAT } mkind_t;

static const struct {
    const char *aten, *op;
    mkind_t kind;
} table[] = {
    {"aten::div.Tensor", "div", M_BIN},         {"aten::div.Scalar", "div", M_BIN},
    {"aten::div.Tensor_mode", "div", M_BIN_MODE}, {"aten::div.Scalar_mode", "div", M_BIN_MODE},
    {"aten::mul.Tensor", "mul", M_BIN},         {"aten::mul.Scalar", "mul", M_BIN},
    {"aten::add.Tensor", "add", M_BIN_ALPHA},   {"aten::add.Scalar", "add", M_BIN_ALPHA},
    {"aten::sub.Tensor", "sub", M_BIN_ALPHA},   {"aten::sub.Scalar", "sub", M_BIN_ALPHA},
    {"aten::pow.Tensor_Scalar", "pow", M_BIN},  {"aten::pow.Scalar", "pow", M_BIN},
    {"aten::pow.Tensor_Tensor", "pow", M_BIN},  {"aten::reciprocal", "reciprocal", M_UN},
    {"aten::exp", "exp", M_UN},                 {"aten::log", "log", M_UN},
    {"aten::sin", "sin", M_UN},                 {"aten::cos", "cos", M_UN},
    {"aten::tanh", "tanh", M_UN},               {"aten::sqrt", "sqrt", M_UN},
    {"aten::rsqrt", "rsqrt", M_UN},             {"aten::neg", "neg", M_UN},
    {"aten::arange", "arange", M_ARANGE},       {"aten::arange.start", "arange", M_ARANGE},
    {"aten::arange.start_step", "arange", M_ARANGE},
    {"aten::_to_copy", "cast", M_CAST},         {"aten::mm", "matmul", M_MM},
    {"aten::sum", "sum", M_SUM},                {"aten::sum.dim_IntList", "sum", M_SUM},
    {"aten::cat", "concat", M_CAT},
};

bool bp_ledger_map_known(const char *aten)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i].aten, aten) == 0)
            return true;
    return false;
}

typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} sb_t;

static void sb_printf(sb_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb_t *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt,
                          ap);
        va_end(ap);
        if (n < 0) {
            s->oom = true;
            return;
        }
        if (s->buf && s->len + (size_t)n < s->cap) {
            s->len += (size_t)n;
            return;
        }
        size_t nc = (s->cap ? s->cap * 2 : 1024) + (size_t)n;
        char *nb = realloc(s->buf, nc);
        if (!nb) {
            s->oom = true;
            return;
        }
        s->buf = nb;
        s->cap = nc;
    }
}

/* A number as Python wrote it: integers without a fraction, floats with
 * one (or an exponent), C99 hex where %.17g would lose nothing anyway. */
static void number(sb_t *s, double v, bool is_int)
{
    if (isnan(v))
        sb_printf(s, ".nan");
    else if (isinf(v))
        sb_printf(s, v > 0 ? ".inf" : "-.inf");
    else if (is_int)
        sb_printf(s, "%.0f", v);
    else {
        char t[40];
        snprintf(t, sizeof t, "%.17g", v);
        sb_printf(s, "%s%s", t, strpbrk(t, ".e") ? "" : ".0");
    }
}

/* An argument as a number: a JSON number or {"float": "inf"|"-inf"|"nan"}. */
static bool arg_number(json_t *v, double *d, bool *is_int)
{
    if (json_is_integer(v)) {
        *d = (double)json_integer_value(v);
        *is_int = true;
        return true;
    }
    if (json_is_real(v)) {
        *d = json_real_value(v);
        *is_int = false;
        return true;
    }
    const char *f = json_string_value(json_object_get(v, "float"));
    if (!f)
        return false;
    *is_int = false;
    *d = strcmp(f, "nan") == 0 ? NAN : strcmp(f, "-inf") == 0 ? -INFINITY : INFINITY;
    return true;
}

static long arg_tensor(json_t *v)
{
    json_t *t = json_object_get(v, "t");
    return json_is_integer(t) && json_object_size(v) == 1 ? (long)json_integer_value(t) : -1;
}

typedef struct {
    const bp_ledger_op_t *op;
    bp_ledger_map_t *m;
    sb_t ops;
    bp_error_t *err;
} mctx_t;

static bp_status unsupported(mctx_t *c, const char *why)
{
    return bp_error_set(c->err, BP_EUNAVAIL, "%s %s cannot be written as a probe: %s",
                        c->op->op, c->op->call, why);
}

/* A bitprobe dtype name of a ledger dtype that bitprobe computes in. */
static bool probe_dtype(const char *ledger_dt, bp_dtype_t *dt)
{
    return bp_dtype_from_st(ledger_dt, dt) && (BP_DTYPE_BIT(*dt) & BP_DTYPES_ARITH);
}

/* The operand a or b: a loaded input, or a number. */
static bp_status operand(mctx_t *c, json_t *v, const char *key)
{
    double d;
    bool is_int;
    long k = arg_tensor(v);
    if (k >= 0) {
        if ((uint32_t)k >= c->op->nin)
            return unsupported(c, "a tensor reference out of range");
        sb_printf(&c->ops, ", %s: x%ld", key, k);
        return BP_OK;
    }
    if (!arg_number(v, &d, &is_int))
        return unsupported(c, "an operand is neither a tensor nor a number");
    sb_printf(&c->ops, ", %s: ", key);
    number(&c->ops, d, is_int);
    return BP_OK;
}

static json_t *kwarg(json_t *call, const char *k)
{
    return json_object_get(json_object_get(call, "kwargs"), k);
}

static bp_status map_op(mctx_t *c, json_t *call, mkind_t kind, const char *bop,
                        const char *out_dtype)
{
    json_t *args = json_object_get(call, "args");
    size_t na = json_array_size(args);
    json_t *x;
    double d;
    bool is_int;
    sb_printf(&c->ops, "  - {out: y, op: %s", bop);
    switch (kind) {
    case M_BIN_MODE:
        x = kwarg(call, "rounding_mode");
        if (na >= 3)
            x = json_array_get(args, 2);
        if (x && !json_is_null(x))
            return unsupported(c, "a rounding mode (bitprobe's div is true division)");
        /* fall through */
    case M_BIN_ALPHA:
        x = kwarg(call, "alpha");
        if (!x && na >= 3 && kind == M_BIN_ALPHA)
            x = json_array_get(args, 2);
        if (x && !(arg_number(x, &d, &is_int) && d == 1))
            return unsupported(c, "alpha other than 1");
        /* fall through */
    case M_BIN:
    case M_MM: {
        bp_status st;
        if (na < 2)
            return unsupported(c, "fewer than two operands");
        if ((st = operand(c, json_array_get(args, 0), "a")) ||
            (st = operand(c, json_array_get(args, 1), "b")))
            return st;
        if (kind == M_MM && (arg_tensor(json_array_get(args, 0)) < 0 ||
                             arg_tensor(json_array_get(args, 1)) < 0))
            return unsupported(c, "mm of a number");
        break;
    }
    case M_UN:
        if (na < 1 || arg_tensor(json_array_get(args, 0)) < 0)
            return unsupported(c, "its operand is not a tensor");
        sb_printf(&c->ops, ", a: x%ld", arg_tensor(json_array_get(args, 0)));
        break;
    case M_CAST:
        if (na < 1 || arg_tensor(json_array_get(args, 0)) < 0)
            return unsupported(c, "its operand is not a tensor");
        sb_printf(&c->ops, ", a: x%ld", arg_tensor(json_array_get(args, 0)));
        break;
    case M_ARANGE: {
        const char *keys[] = {"start", "end", "step"};
        size_t first = na == 1 ? 1 : 0; /* arange(end) */
        for (size_t i = 0; i < na && i < 3; i++) {
            if (!arg_number(json_array_get(args, i), &d, &is_int))
                return unsupported(c, "a bound that is not a number");
            sb_printf(&c->ops, ", %s: ", keys[first + i]);
            number(&c->ops, d, is_int);
        }
        break;
    }
    case M_SUM: {
        if (na < 1 || arg_tensor(json_array_get(args, 0)) < 0)
            return unsupported(c, "its operand is not a tensor");
        sb_printf(&c->ops, ", a: x%ld", arg_tensor(json_array_get(args, 0)));
        json_t *dims = na >= 2 ? json_array_get(args, 1) : kwarg(call, "dim");
        json_t *keep = na >= 3 ? json_array_get(args, 2) : kwarg(call, "keepdim");
        if (dims && json_is_array(dims) && json_array_size(dims) == 1)
            dims = json_array_get(dims, 0);
        if (dims && json_is_integer(dims))
            sb_printf(&c->ops, ", axis: %lld", (long long)json_integer_value(dims));
        else if (dims && !json_is_null(dims) && !(json_is_array(dims) && !json_array_size(dims)))
            return unsupported(c, "a sum over several dimensions");
        if (keep && json_is_true(keep))
            sb_printf(&c->ops, ", keepdim: true");
        break;
    }
    case M_CAT: {
        json_t *list = json_array_get(args, 0);
        size_t i;
        if (!json_is_array(list) || !json_array_size(list))
            return unsupported(c, "no tensors to concatenate");
        sb_printf(&c->ops, ", inputs: [");
        json_array_foreach(list, i, x) {
            if (arg_tensor(x) < 0)
                return unsupported(c, "a concatenated value that is not a tensor");
            sb_printf(&c->ops, "%sx%ld", i ? ", " : "", arg_tensor(x));
        }
        sb_printf(&c->ops, "]");
        json_t *dim = na >= 2 ? json_array_get(args, 1) : kwarg(call, "dim");
        if (dim && json_is_integer(dim))
            sb_printf(&c->ops, ", axis: %lld", (long long)json_integer_value(dim));
        break;
    }
    }
    sb_printf(&c->ops, ", dtype: %s}\n", out_dtype);
    return BP_OK;
}

/* YAML double-quoted text: printable ASCII, quotes and backslashes
 * escaped, anything else as '?'. */
static void quoted(sb_t *s, const char *t)
{
    sb_printf(s, "\"");
    for (; *t; t++) {
        unsigned char ch = (unsigned char)*t;
        if (ch == '"' || ch == '\\')
            sb_printf(s, "\\%c", ch);
        else
            sb_printf(s, "%c", ch >= 32 && ch < 127 ? ch : '?');
    }
    sb_printf(s, "\"");
}

bp_status bp_ledger_map(const bp_ledger_op_t *op, const char *tag, const char *origin,
                        bp_ledger_map_t *m, bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    mctx_t c = {.op = op, .m = m, .err = err};
    size_t i = 0;
    while (i < sizeof table / sizeof *table && strcmp(table[i].aten, op->op) != 0)
        i++;
    if (i == sizeof table / sizeof *table)
        return bp_error_set(err, BP_EUNAVAIL, "%s has no bitprobe op yet (ops that map: div, "
                            "mul, add, sub, pow, reciprocal, exp, log, sin, cos, tanh, sqrt, "
                            "rsqrt, neg, arange, _to_copy, mm, sum, cat)", op->op);
    if (op->nout != 1)
        return unsupported(&c, "it has other than one output");
    bp_dtype_t odt;
    if (!probe_dtype(op->out[0].dtype, &odt))
        return unsupported(&c, "its result's dtype is not one bitprobe computes in");
    bp_json_err_t je;
    json_t *call = bp_json_load(op->call, strlen(op->call), 0, &je);
    if (!call)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    /* Every tensor input, loaded. */
    bp_status st = BP_OK;
    for (uint32_t k = 0; !st && k < op->nin; k++) {
        const bp_ledger_tensor_t *t = &op->in[k];
        bp_dtype_t dt;
        if (!probe_dtype(t->dtype, &dt))
            st = unsupported(&c, "an input's dtype is not one bitprobe computes in");
        else if (t->ndim > 8)
            st = unsupported(&c, "an input has more than 8 dimensions");
        if (st)
            break;
        sb_printf(&c.ops, "  - {out: x%u, op: load, dtype: %s, shape: [", k, bp_dtype_name(dt));
        for (int d = 0; d < t->ndim; d++)
            sb_printf(&c.ops, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        sb_printf(&c.ops, "]}\n");
    }
    if (!st)
        st = map_op(&c, call, table[i].kind, table[i].op, bp_dtype_name(odt));
    json_decref(call);
    snprintf(m->name, sizeof m->name, "ledger-%s-%s", tag, table[i].op);
    sb_t y = {0};
    sb_printf(&y, "# Written by bitprobe explain from two op ledgers: the op that introduced\n"
                  "# their difference, its recorded inputs in %s.safetensors next to\n"
                  "# this file, with the outputs each side recorded (recorded.a.y,\n"
                  "# recorded.b.y) where they were captured.\n# %s\n", m->name, origin);
    sb_printf(&y, "name: %s\ndescription: ", m->name);
    char desc[600];
    snprintf(desc, sizeof desc, "%s%s in module '%s', as recorded by bitprobe_torch", op->op,
             op->call, op->module);
    quoted(&y, desc);
    sb_printf(&y, "\ndtypes: [%s]\nops:\n%s",
              bp_dtype_is_run(odt) ? bp_dtype_name(odt) : "fp32",
              c.ops.buf ? c.ops.buf : "");
    sb_printf(&y, "outputs:\n  - {name: y}\n");
    free(c.ops.buf);
    if (!st && (y.oom || c.ops.oom))
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (st) {
        free(y.buf);
        return st;
    }
    m->yaml = y.buf;
    m->dtype = odt;
    return BP_OK;
}

void bp_ledger_map_free(bp_ledger_map_t *m)
{
    free(m->yaml);
    memset(m, 0, sizeof *m);
}
