/* The op table's look-ups (built from op_list.h) and shape/dtype
 * inference (see op.h).
 *
 * Inference mirrors what PyTorch would allocate for the same expression, so
 * that a probe's buffers have the dtypes the framework gives them: the type
 * promotion lattice of c10/core/ScalarType.h restricted to the dtypes
 * bitprobe knows, with Python numbers as "wrapped" scalars that never widen a
 * tensor of their own category.  Elementwise ops broadcast as PyTorch's
 * do; reductions keep the reduced dimension as 1 with keepdim. */
#include "op.h"

#include <inttypes.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "suggest.h"

static const bp_op_info_t op_info[BP_OP_COUNT] = {
#define BP_OP(ID, NAME, OPD, KEYS, REQ, FORMS, RULE, KIND, FLAGS, TORCH)      \
    [BP_OP_##ID] = {NAME,                                                     \
                    BP_OPD_##OPD,                                             \
                    (KEYS) | BP_K(DTYPE) | opd_keys(BP_OPD_##OPD) |           \
                        ((FORMS) && !((KEYS) & BP_K(APPROXIMATE))             \
                             ? BP_K(FORMULATION)                              \
                             : 0),                                            \
                    (REQ) | opd_required(BP_OPD_##OPD),                       \
                    FORMS,                                                    \
                    BP_DT_##RULE,                                             \
                    BP_KIND_##KIND,                                           \
                    FLAGS,                                                    \
                    TORCH},
#define opd_keys(o)                                                             \
    ((o) == BP_OPD_A ? BP_K(A)                                                  \
     : (o) == BP_OPD_AB || (o) == BP_OPD_AB_TS ? BP_K(A) | BP_K(B)              \
     : (o) == BP_OPD_INPUTS                   ? BP_K(INPUTS)                    \
     : (o) == BP_OPD_COND_AB                  ? BP_K(COND) | BP_K(A) | BP_K(B)  \
     : (o) == BP_OPD_A_BOUNDS ? BP_K(A) | BP_K(LOWER) | BP_K(UPPER)             \
                                              : 0)
/* clamp_tensor's bounds are optional (one at least: need_operands). */
#define opd_required(o) ((o) == BP_OPD_A_BOUNDS ? BP_K(A) : opd_keys(o))
#include "op_list.h"
#undef opd_required
#undef opd_keys
#undef BP_OP
};

static const struct {
    const char *name;
    bp_key_type_t type;
} key_info[BP_KEY_COUNT] = {
#define BP_KEY(ID, NAME, TYPE) [BP_KEY_##ID] = {NAME, BP_KT_##TYPE},
#include "op_list.h"
#undef BP_KEY
};

static const char *const form_names[BP_FORM_COUNT] = {
#define BP_FORM(ID, NAME) [BP_FORM_##ID] = NAME,
#include "op_list.h"
#undef BP_FORM
};

#define NAME_OF(table, i)                                                      \
    ((unsigned)(i) < sizeof table / sizeof table[0] ? table[i] : "?")

const bp_op_info_t *bp_op_info(bp_op_kind_t k)
{
    return (unsigned)k < BP_OP_COUNT ? &op_info[k] : NULL;
}

const char *bp_op_name(bp_op_kind_t k)
{
    return (unsigned)k < BP_OP_COUNT ? op_info[k].name : "?";
}

bool bp_op_lookup(const char *name, bp_op_kind_t *k)
{
    for (int i = 0; i < BP_OP_COUNT; i++)
        if (strcmp(name, op_info[i].name) == 0) {
            *k = (bp_op_kind_t)i;
            return true;
        }
    return false;
}

const char *bp_op_suggest(const char *name)
{
    const char *names[BP_OP_COUNT];
    for (int i = 0; i < BP_OP_COUNT; i++)
        names[i] = op_info[i].name;
    return bp_suggest(name, names, BP_OP_COUNT);
}

bool bp_op_has(bp_op_kind_t k, unsigned flags)
{
    return (unsigned)k < BP_OP_COUNT && (op_info[k].flags & flags) == flags;
}

bool bp_op_takes(bp_op_kind_t k, bp_key_t key)
{
    return (unsigned)k < BP_OP_COUNT && (unsigned)key < BP_KEY_COUNT &&
           (op_info[k].keys & (UINT64_C(1) << key));
}

bool bp_op_form_ok(bp_op_kind_t k, bp_form_t f)
{
    if (f == BP_FORM_DEFAULT)
        return true;
    return (unsigned)k < BP_OP_COUNT && (unsigned)f < BP_FORM_COUNT &&
           (op_info[k].forms & (1u << f));
}

int bp_op_reads(const bp_op_t *op, int *idx)
{
    int n = 0;
    if (op->a.kind == BP_ARG_BUF)
        idx[n++] = op->a.buf;
    if (op->b.kind == BP_ARG_BUF)
        idx[n++] = op->b.buf;
    for (int k = 0; k < op->ninputs && k < BP_OP_MAXINPUTS; k++)
        idx[n++] = op->inputs[k];
    return n;
}

const char *bp_form_name(bp_form_t f)
{
    return NAME_OF(form_names, f);
}

bool bp_form_lookup(const char *name, bp_form_t *f)
{
    for (int i = 0; i < BP_FORM_COUNT; i++)
        if (strcmp(name, form_names[i]) == 0) {
            *f = (bp_form_t)i;
            return true;
        }
    return false;
}

const char *bp_key_name(bp_key_t key)
{
    return (unsigned)key < BP_KEY_COUNT ? key_info[key].name : "?";
}

bp_key_type_t bp_key_type(bp_key_t key)
{
    return (unsigned)key < BP_KEY_COUNT ? key_info[key].type : BP_KT_NUMBER;
}

const char *bp_key_type_name(bp_key_type_t t)
{
    static const char *const names[] = {
        [BP_KT_BUFFER] = "buffer",   [BP_KT_BUFFERS] = "buffers",
        [BP_KT_NUMBER] = "number",   [BP_KT_NUMBERS] = "numbers",
        [BP_KT_INTEGER] = "integer", [BP_KT_SHAPE] = "shape",
        [BP_KT_DIMS] = "integers",
        [BP_KT_DTYPE] = "dtype",     [BP_KT_FORM] = "formulation",
        [BP_KT_BOOL] = "bool",
    };
    return NAME_OF(names, t);
}

const char *bp_opd_name(bp_opd_t o)
{
    static const char *const names[] = {
        [BP_OPD_NONE] = "none",   [BP_OPD_A] = "a",
        [BP_OPD_AB] = "a,b",      [BP_OPD_AB_TS] = "a,b:tensor-or-number",
        [BP_OPD_INPUTS] = "inputs",
        [BP_OPD_COND_AB] = "cond,a,b:tensor-or-number",
        [BP_OPD_A_BOUNDS] = "a,min:optional,max:optional",
    };
    return NAME_OF(names, o);
}

const char *bp_dtype_rule_name(bp_dtype_rule_t r)
{
    static const char *const names[] = {
        [BP_DT_LITERAL] = "literal", [BP_DT_F32] = "fp32",
        [BP_DT_SAME] = "same",       [BP_DT_PROMOTE] = "promote",
        [BP_DT_ACC] = "accumulate",  [BP_DT_MATMUL] = "matmul",
        [BP_DT_B] = "b",              [BP_DT_BOOL] = "bool",
    };
    return NAME_OF(names, r);
}

const char *bp_op_class_name(bp_op_class_t c)
{
    static const char *const names[] = {
        [BP_KIND_CREATION] = "creation",   [BP_KIND_ELEMWISE] = "elementwise",
        [BP_KIND_LAYOUT] = "layout",       [BP_KIND_REDUCTION] = "reduction",
        [BP_KIND_FUSED] = "fused",
    };
    return NAME_OF(names, c);
}

const char *bp_op_flag_name(int i)
{
    static const char *const names[BP_OPF_NFLAGS] = {"float_fn", "int", "costly",
                                                      "bool", "fp8", "views",
                                                      "float_in"};
    return NAME_OF(names, i);
}

double bp_div_scalar_reciprocal(double b, bp_dtype_t dt)
{
    double r = 1.0 / b;
    return dt == BP_F64 ? r : (double)(float)r;
}

void bp_linspace_params(bp_dtype_t dt, double start, double end, int64_t steps,
                        double *s, double *e, double *step)
{
    *s = bp_dtype_round(dt, start);
    *e = bp_dtype_round(dt, end);
    double n = bp_dtype_round(dt, (double)(steps - 1));
    *step = bp_dtype_round(dt, bp_dtype_round(dt, *e - *s) / n);
}

bp_status bp_arange_length(double start, double end, double step,
                           int64_t *n, bp_error_t *err)
{
    /* The checks and the formula of ATen's compute_arange_size
     * (native/RangeUtils.h): the size is computed in double on every device
     * so that CPU and GPU allocate the same length. */
    if (!(step > 0 || step < 0))
        return bp_error_set(err, BP_EINPUT, "arange step must be nonzero");
    if (!isfinite(start) || !isfinite(end))
        return bp_error_set(err, BP_EINPUT, "unsupported arange range: %g -> %g",
                            start, end);
    if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
        return bp_error_set(err, BP_EINPUT,
                            "arange bounds inconsistent with step sign: "
                            "start %g, end %g, step %g",
                            start, end, step);
    double size_d = ceil((end - start) / step);
    if (!(size_d >= 0 && size_d < 9223372036854775807.0))
        return bp_error_set(err, BP_EINPUT,
                            "arange size overflows: start %g, end %g, step %g",
                            start, end, step);
    *n = (int64_t)size_d;
    return BP_OK;
}

void bp_slice_resolve(const bp_op_t *op, int64_t dim, int64_t *first,
                      int64_t *len)
{
    int64_t s = op->s_start, e = op->s_end, st = op->s_step > 0 ? op->s_step : 1;
    if (s < 0)
        s = s < -dim ? 0 : s + dim;
    if (e < 0)
        e = e < -dim ? 0 : e + dim;
    if (s > dim)
        s = dim;
    if (e > dim)
        e = dim;
    *first = s;
    *len = e > s ? (e - s - 1) / st + 1 : 0;
}

static bool is_float(bp_dtype_t d) { return bp_dtype_info(d)->is_float; }

/* PyTorch's promote_types over {f64, f32, bf16, f16, i64, i32, bool}:
 * bool gives way to any other dtype. */
static bp_dtype_t promote(bp_dtype_t a, bp_dtype_t b)
{
    if (a == b || b == BP_BOOL)
        return a;
    if (a == BP_BOOL)
        return b;
    bool fa = is_float(a), fb = is_float(b);
    if (fa != fb)
        return fa ? a : b;
    if (!fa)
        return BP_I64;
    if (a == BP_F64 || b == BP_F64)
        return BP_F64;
    return BP_F32; /* f32 with a half type, or bf16 with f16 */
}

static void meta_set(bp_meta_t *m, bp_dtype_t dt, int ndim,
                     const int64_t *shape)
{
    memset(m, 0, sizeof *m);
    m->dtype = dt;
    m->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        m->shape[d] = shape[d];
}

static const char *shape_str(const bp_meta_t *m, char *buf, size_t n)
{
    bp_shape_format(m->ndim, m->shape, buf, n);
    return buf;
}

static bool all_integral(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(v[i] == floor(v[i])) || fabs(v[i]) > 9007199254740992.0)
            return false;
    return true;
}

static bp_status need_buf(const bp_op_t *op, const bp_arg_t *x,
                          const char *which, bp_error_t *err)
{
    if (x->kind != BP_ARG_BUF)
        return bp_error_set(err, BP_EINPUT, "%s needs a buffer as %s",
                            bp_op_name(op->kind), which);
    return BP_OK;
}

/* The operands the op's class names are there (buffers where it must). */
static bp_status need_operands(const bp_op_t *op, bp_error_t *err)
{
    bp_status st = BP_OK;
    switch (bp_op_info(op->kind)->operands) {
    case BP_OPD_A:
        return need_buf(op, &op->a, "a", err);
    case BP_OPD_AB:
        if (!(st = need_buf(op, &op->a, "a", err)))
            st = need_buf(op, &op->b, "b", err);
        return st;
    case BP_OPD_AB_TS:
        if (op->a.kind != BP_ARG_BUF && op->b.kind != BP_ARG_BUF)
            return bp_error_set(err, BP_EINPUT,
                                "%s needs at least one buffer operand",
                                bp_op_name(op->kind));
        if (op->a.kind == BP_ARG_NONE || op->b.kind == BP_ARG_NONE)
            return bp_error_set(err, BP_EINPUT, "%s needs operands a and b",
                                bp_op_name(op->kind));
        return BP_OK;
    case BP_OPD_INPUTS:
        if (op->ninputs < 1 || !op->inputs)
            return bp_error_set(err, BP_EINPUT, "%s needs inputs",
                                bp_op_name(op->kind));
        if (op->ninputs > BP_OP_MAXINPUTS)
            return bp_error_set(err, BP_EINPUT, "%s of more than %d inputs",
                                bp_op_name(op->kind), BP_OP_MAXINPUTS);
        return BP_OK;
    case BP_OPD_COND_AB:
        if (op->ninputs != 1 || !op->inputs)
            return bp_error_set(err, BP_EINPUT, "%s needs cond", bp_op_name(op->kind));
        if (op->a.kind == BP_ARG_NONE || op->b.kind == BP_ARG_NONE)
            return bp_error_set(err, BP_EINPUT, "%s needs operands a and b",
                                bp_op_name(op->kind));
        return BP_OK;
    case BP_OPD_A_BOUNDS:
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        if ((!op->has_min && !op->has_max) || !op->inputs ||
            op->ninputs != (int)op->has_min + (int)op->has_max)
            return bp_error_set(err, BP_EINPUT, "%s needs min or max (a tensor), or both",
                                bp_op_name(op->kind));
        return BP_OK;
    case BP_OPD_NONE:
        break;
    }
    return BP_OK;
}

/* c10's categories: bool < integer < float. */
static int category(bp_dtype_t d)
{
    return d == BP_BOOL ? 0 : is_float(d) ? 2 : 1;
}

/* The result dtype by the op's rule (op_list.h, DTYPE), before FLOAT_FN
 * and an explicit dtype apply. */
static bp_dtype_t rule_dtype(const bp_op_t *op, const bp_meta_t *metas)
{
    const bp_meta_t *a = op->a.kind == BP_ARG_BUF ? &metas[op->a.buf] : NULL;
    switch (bp_op_info(op->kind)->dtype) {
    case BP_DT_LITERAL: {
        /* The loader sets dtype from how the numbers are written; this is
         * for ops built in C without one. */
        double v[3] = {op->start, op->end, op->step};
        bool lit = op->nvalues ? all_integral(op->values, op->nvalues)
                               : all_integral(v, 3);
        return lit ? BP_I64 : BP_F32;
    }
    case BP_DT_F32:
        return BP_F32;
    case BP_DT_SAME:
    case BP_DT_MATMUL:
        if (!a && op->ninputs > 0 && op->inputs)
            return metas[op->inputs[0]].dtype; /* layer_norm, sdpa: x, q */
        return a ? a->dtype : BP_F32;
    case BP_DT_ACC:
        return !a ? BP_F32 : is_float(a->dtype) ? a->dtype : BP_I64;
    case BP_DT_B:
        return op->b.kind == BP_ARG_BUF ? metas[op->b.buf].dtype : BP_F32;
    case BP_DT_PROMOTE:
    case BP_DT_BOOL: /* what a comparison computes in (bp_op_promote) */
        break;
    }
    int reads[BP_OP_MAXREADS], ndims[BP_OP_MAXREADS];
    bp_dtype_t dts[BP_OP_MAXREADS];
    int n = bp_op_reads(op, reads);
    if (bp_op_info(op->kind)->operands == BP_OPD_COND_AB)
        n -= op->ninputs; /* where's cond (read last) takes no part */
    for (int r = 0; r < n; r++) {
        dts[r] = metas[reads[r]].dtype;
        ndims[r] = metas[reads[r]].ndim;
    }
    return bp_op_promote(op, n, dts, ndims);
}

bp_dtype_t bp_op_promote(const bp_op_t *op, int n, const bp_dtype_t *dtypes,
                         const int *ndims)
{
    /* c10's ResultTypeState: tensors with dimensions first, then 0-D
     * tensors, then wrapped numbers; a lower group only decides when it is
     * of a higher category (float over integer over bool): bf16[n] + f32
     * 0-D gives bf16, i64[n] + f32 0-D gives f32, i32[n] + i64 0-D gives
     * i32. */
    bp_dtype_t dim = BP_NDTYPES, zero = BP_NDTYPES;
    for (int r = 0; r < n; r++) {
        bp_dtype_t *g = ndims[r] > 0 ? &dim : &zero;
        *g = *g == BP_NDTYPES ? dtypes[r] : promote(*g, dtypes[r]);
    }
    bp_dtype_t dt = dim == BP_NDTYPES                                   ? zero
                    : zero == BP_NDTYPES || category(dim) >= category(zero) ? dim
                                                                        : zero;
    /* A wrapped number lifts a tensor of a lower category only: an
     * integer to i64 (the bool case), a float to the default fp32; two
     * numbers (where) give i64 or fp32 by the same rule. */
    const bp_arg_t *num[2] = {&op->a, &op->b};
    for (int k = 0; k < 2; k++) {
        if (num[k]->kind != BP_ARG_SCALAR)
            continue;
        int c = num[k]->is_int ? 1 : 2;
        if (dt == BP_NDTYPES || category(dt) < c)
            dt = c == 1 ? BP_I64 : BP_F32;
    }
    return dt;
}

/* The shapes of the layout ops that read one tensor's elements into a new
 * arrangement (layout.c maps their elements), as PyTorch checks them. */
static bp_status infer_layout(const bp_op_t *op, const bp_meta_t *a,
                              const bp_meta_t *b, bp_dtype_t dt, bp_meta_t *out,
                              bp_error_t *err)
{
    char s1[128], s2[128];
    const char *name = bp_op_name(op->kind);
    bp_meta_t m;
    memset(&m, 0, sizeof m);
    m.dtype = dt;
    size_t an = 1;
    for (int d = 0; d < a->ndim; d++)
        an *= (size_t)a->shape[d];
    switch (op->kind) {
    case BP_OP_RESHAPE:
    case BP_OP_VIEW: {
        int infer = -1;
        size_t known = 1;
        for (int d = 0; d < op->ndim; d++) {
            if (op->shape[d] == -1 && infer < 0) {
                infer = d;
                continue;
            }
            if (op->shape[d] < 0)
                return bp_error_set(err, BP_EINPUT, "%s: only one dimension can be "
                                    "-1 and none below it, got %s", name,
                                    (bp_shape_format(op->ndim, op->shape, s1, sizeof s1), s1));
            known *= (size_t)op->shape[d];
        }
        m.ndim = op->ndim;
        for (int d = 0; d < op->ndim; d++)
            m.shape[d] = op->shape[d];
        if (infer >= 0 && known && an % known == 0)
            m.shape[infer] = (int64_t)(an / known);
        size_t mn = 1;
        for (int d = 0; d < m.ndim; d++)
            mn *= (size_t)m.shape[d];
        if ((infer >= 0 && (!known || an % known)) || (infer < 0 && mn != an))
            return bp_error_set(err, BP_EINPUT, "%s: shape %s is invalid for input "
                                "of size %zu (a is %s)", name,
                                (bp_shape_format(op->ndim, op->shape, s1, sizeof s1), s1),
                                an, shape_str(a, s2, sizeof s2));
        break;
    }
    case BP_OP_TRANSPOSE:
    case BP_OP_PERMUTE: {
        int p[BP_MAXDIM], n = op->kind == BP_OP_PERMUTE ? op->ndims : a->ndim;
        bool seen[BP_MAXDIM] = {false}, ok = n == a->ndim;
        int d0 = 0, d1 = 0;
        if (op->kind == BP_OP_TRANSPOSE) {
            /* a 0-D a takes dims 0 and -1, as maybe_wrap_dim's scalars */
            int nd = a->ndim ? a->ndim : 1;
            ok = op->ndims == 2 && bp_axis_norm((int)op->dims[0], nd, &d0) &&
                 bp_axis_norm((int)op->dims[1], nd, &d1);
            for (int d = 0; ok && d < n; d++)
                p[d] = d == d0 ? d1 : d == d1 ? d0 : d;
        } else {
            for (int d = 0; ok && d < n; d++)
                ok = bp_axis_norm((int)op->dims[d], a->ndim, &p[d]) && !seen[p[d]] &&
                     (seen[p[d]] = true);
        }
        if (!ok)
            return bp_error_set(err, BP_EINPUT, "%s: %s of a %d-dimensional a (%s)",
                                name,
                                op->kind == BP_OP_TRANSPOSE
                                    ? "dim0 or dim1 out of range"
                                    : "dims is not a permutation of the dimensions",
                                a->ndim, shape_str(a, s1, sizeof s1));
        m.ndim = n;
        for (int d = 0; d < n; d++)
            m.shape[d] = a->shape[p[d]];
        break;
    }
    case BP_OP_UNSQUEEZE: {
        int ax;
        if (a->ndim >= BP_MAXDIM || !bp_axis_norm(op->axis, a->ndim + 1, &ax))
            return bp_error_set(err, BP_EINPUT, "unsqueeze axis %d out of range for %s",
                                op->axis, shape_str(a, s1, sizeof s1));
        for (int d = 0, k = 0; d <= a->ndim; d++)
            m.shape[m.ndim++] = d == ax ? 1 : a->shape[k++];
        break;
    }
    case BP_OP_SQUEEZE: {
        int ax = -1;
        if (op->has_axis && !bp_axis_norm(op->axis, a->ndim ? a->ndim : 1, &ax))
            return bp_error_set(err, BP_EINPUT, "squeeze axis %d out of range for %s",
                                op->axis, shape_str(a, s1, sizeof s1));
        for (int d = 0; d < a->ndim; d++)
            if (a->shape[d] != 1 || (op->has_axis && d != ax))
                m.shape[m.ndim++] = a->shape[d];
        break;
    }
    case BP_OP_EXPAND: {
        int lead = op->ndim - a->ndim;
        if (lead < 0)
            return bp_error_set(err, BP_EINPUT, "expand: shape %s has fewer dimensions "
                                "than a (%s)",
                                (bp_shape_format(op->ndim, op->shape, s1, sizeof s1), s1),
                                shape_str(a, s2, sizeof s2));
        m.ndim = op->ndim;
        for (int d = 0; d < op->ndim; d++) {
            int64_t want = op->shape[d], have = d < lead ? -2 : a->shape[d - lead];
            if (want == -1 && have >= 0)
                want = have;
            if (want < 0 || (have >= 0 && have != 1 && want != have))
                return bp_error_set(err, BP_EINPUT, "expand: a (%s) cannot be expanded "
                                    "to %s (dimension %d)",
                                    shape_str(a, s2, sizeof s2),
                                    (bp_shape_format(op->ndim, op->shape, s1, sizeof s1), s1),
                                    d);
            m.shape[d] = want;
        }
        break;
    }
    case BP_OP_INDEX_SELECT:
    case BP_OP_EMBEDDING: {
        const bp_meta_t *ix = op->kind == BP_OP_EMBEDDING ? a : b,
                        *from = op->kind == BP_OP_EMBEDDING ? b : a;
        if (ix->dtype != BP_I64 && ix->dtype != BP_I32)
            return bp_error_set(err, BP_EINPUT, "%s: the index (%s) must be i64 or i32, "
                                "not %s", name, op->kind == BP_OP_EMBEDDING ? "a" : "b",
                                bp_dtype_name(ix->dtype));
        size_t k = 1;
        for (int d = 0; d < ix->ndim; d++)
            k *= (size_t)ix->shape[d];
        if (op->kind == BP_OP_EMBEDDING) {
            if (from->ndim != 2 || ix->ndim + 1 > BP_MAXDIM)
                return bp_error_set(err, BP_EINPUT, "embedding: the weight b must be "
                                    "2-D, got %s", shape_str(from, s1, sizeof s1));
            m = *ix;
            m.shape[m.ndim++] = from->shape[1];
        } else {
            int ax;
            if (ix->ndim > 1)
                return bp_error_set(err, BP_EINPUT, "index_select: the index b must be "
                                    "1-D, got %s", shape_str(ix, s1, sizeof s1));
            if (!bp_axis_norm(op->axis, from->ndim, &ax))
                return bp_error_set(err, BP_EINPUT, "index_select axis %d out of range "
                                    "for %s", op->axis, shape_str(from, s1, sizeof s1));
            m = *from;
            m.shape[ax] = (int64_t)k;
        }
        m.dtype = dt;
        break;
    }
    default:
        return bp_error_set(err, BP_EINTERNAL, "no layout rule for op '%s'", name);
    }
    *out = m;
    return BP_OK;
}

double bp_op_norm_eps(const bp_op_t *op, bp_dtype_t dt)
{
    if (op->has_eps)
        return op->eps;
    if (op->kind == BP_OP_LAYER_NORM)
        return 1e-5;
    return dt == BP_F64 ? DBL_EPSILON : FLT_EPSILON;
}

double bp_op_sdpa_scale(const bp_op_t *op, int64_t e)
{
    return op->has_scale ? op->scale : 1.0 / sqrt((double)e);
}

/* The fused ops' shapes: every operand of the input's float dtype.
 * rms_norm: a [..., H], b [H]; layer_norm: x [..., H], weight and bias
 * [H]; bmm: [B, m, k] x [B, k, n]; baddbmm: input broadcasting to
 * [B, m, n], batch1 [B, m, k], batch2 [B, k, n]; sdpa: q [..., L, E],
 * k [..., S, E], v [..., S, Ev] with equal leading dimensions, giving
 * [..., L, Ev]; linear: x [..., k], weight [n, k], bias broadcasting to
 * [..., n]; addmm: input broadcasting to [m, n], mat1 [m, k], mat2 [k, n]. */
static bp_status infer_fused(const bp_op_t *op, const bp_meta_t *metas,
                             bp_dtype_t dt, bp_meta_t *out, bp_error_t *err)
{
    char s1[128], s2[128], s3[128];
    const char *name = bp_op_name(op->kind);
    const bp_meta_t *t[3] = {NULL, NULL, NULL};
    int nt = 0;
    if (op->a.kind == BP_ARG_BUF)
        t[nt++] = &metas[op->a.buf];
    if (op->b.kind == BP_ARG_BUF)
        t[nt++] = &metas[op->b.buf];
    for (int k = 0; k < op->ninputs && nt < 3; k++)
        t[nt++] = &metas[op->inputs[k]];
    int want = op->kind == BP_OP_LAYER_NORM ? 0 : op->kind == BP_OP_RMS_NORM ? 2 : nt;
    bool three = op->kind == BP_OP_SDPA || op->kind == BP_OP_BADDBMM || op->kind == BP_OP_ADDMM;
    if ((three && op->ninputs != 3) ||
        (op->kind == BP_OP_LINEAR && op->ninputs != 2 && op->ninputs != 3) ||
        (op->kind == BP_OP_LAYER_NORM && op->ninputs > 3) || (want && nt != want))
        return bp_error_set(err, BP_EINPUT, "%s takes %s", name,
                            op->kind == BP_OP_SDPA      ? "inputs [q, k, v]"
                            : op->kind == BP_OP_BADDBMM ? "inputs [input, batch1, batch2]"
                            : op->kind == BP_OP_ADDMM   ? "inputs [input, mat1, mat2]"
                            : op->kind == BP_OP_LINEAR  ? "inputs [x, weight] or [x, weight, bias]"
                            : op->kind == BP_OP_LAYER_NORM
                                ? "inputs [x], [x, weight] or [x, weight, bias]"
                                : "a and b");
    for (int k = 0; k < nt; k++)
        if (!is_float(t[k]->dtype) || t[k]->dtype != t[0]->dtype)
            return bp_error_set(err, BP_EINPUT,
                                "%s needs operands of one float dtype, got %s and %s",
                                name, bp_dtype_name(t[0]->dtype),
                                bp_dtype_name(t[k]->dtype));
    const bp_meta_t *x = t[0];
    if (op->kind == BP_OP_RMS_NORM || op->kind == BP_OP_LAYER_NORM) {
        if (x->ndim < 1)
            return bp_error_set(err, BP_EINPUT, "%s needs at least one dimension", name);
        for (int k = 1; k < nt; k++)
            if (t[k]->ndim != 1 || t[k]->shape[0] != x->shape[x->ndim - 1])
                return bp_error_set(err, BP_EINPUT,
                                    "shape mismatch: %s's weight and bias must be "
                                    "[%" PRId64 "] for input %s, got %s", name,
                                    x->shape[x->ndim - 1], shape_str(x, s1, sizeof s1),
                                    shape_str(t[k], s2, sizeof s2));
        meta_set(out, dt, x->ndim, x->shape);
        return BP_OK;
    }
    if (op->kind == BP_OP_BADDBMM) {
        const bp_meta_t *in = t[0], *a = t[1], *b = t[2];
        if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] ||
            a->shape[2] != b->shape[1])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: baddbmm needs batch1 [B, m, k] and "
                                "batch2 [B, k, n], got %s and %s",
                                shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
        int64_t sh[3] = {a->shape[0], a->shape[1], b->shape[2]}, st[BP_MAXDIM];
        if (!bp_bcast_strides(in->ndim, in->shape, 3, sh, st)) {
            bp_meta_t r = *a;
            memcpy(r.shape, sh, sizeof sh);
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: baddbmm's input %s does not broadcast "
                                "to %s", shape_str(in, s1, sizeof s1),
                                shape_str(&r, s3, sizeof s3));
        }
        meta_set(out, dt, 3, sh);
        return BP_OK;
    }
    if (op->kind == BP_OP_LINEAR) {
        const bp_meta_t *w = t[1];
        if (x->ndim < 1 || w->ndim != 2 || w->shape[1] != x->shape[x->ndim - 1])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: linear needs x [..., k] and weight [n, k], "
                                "got %s and %s", shape_str(x, s1, sizeof s1),
                                shape_str(w, s2, sizeof s2));
        bp_meta_t m = *x;
        m.dtype = dt;
        m.shape[m.ndim - 1] = w->shape[0];
        int64_t st[BP_MAXDIM];
        if (nt == 3 && !bp_bcast_strides(t[2]->ndim, t[2]->shape, m.ndim, m.shape, st))
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: linear's bias %s does not broadcast to %s",
                                shape_str(t[2], s1, sizeof s1), shape_str(&m, s3, sizeof s3));
        *out = m;
        return BP_OK;
    }
    if (op->kind == BP_OP_ADDMM) {
        const bp_meta_t *in = t[0], *a = t[1], *b = t[2];
        if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: addmm needs mat1 [m, k] and mat2 [k, n], "
                                "got %s and %s",
                                shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
        int64_t sh[2] = {a->shape[0], b->shape[1]}, st[BP_MAXDIM];
        bp_meta_t r = *a;
        r.dtype = dt;
        memcpy(r.shape, sh, sizeof sh);
        if (!bp_bcast_strides(in->ndim, in->shape, 2, sh, st))
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: addmm's input %s does not broadcast to %s",
                                shape_str(in, s1, sizeof s1), shape_str(&r, s3, sizeof s3));
        *out = r;
        return BP_OK;
    }
    if (op->kind == BP_OP_BMM) {
        const bp_meta_t *a = t[0], *b = t[1];
        if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] ||
            a->shape[2] != b->shape[1])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: bmm needs [B, m, k] x [B, k, n], "
                                "a is %s, b is %s", shape_str(a, s1, sizeof s1),
                                shape_str(b, s2, sizeof s2));
        int64_t sh[3] = {a->shape[0], a->shape[1], b->shape[2]};
        meta_set(out, dt, 3, sh);
        return BP_OK;
    }
    const bp_meta_t *q = t[0], *k = t[1], *v = t[2];
    bool ok = q->ndim >= 2 && k->ndim == q->ndim && v->ndim == q->ndim;
    for (int d = 0; ok && d < q->ndim - 2; d++)
        ok = k->shape[d] == q->shape[d] && v->shape[d] == q->shape[d];
    int n = q->ndim;
    ok = ok && k->shape[n - 1] == q->shape[n - 1] && v->shape[n - 2] == k->shape[n - 2];
    if (!ok)
        return bp_error_set(err, BP_EINPUT,
                            "shape mismatch: sdpa needs q [..., L, E], k [..., S, E], "
                            "v [..., S, Ev], got %s, %s, %s",
                            shape_str(q, s1, sizeof s1), shape_str(k, s2, sizeof s2),
                            shape_str(v, s3, sizeof s3));
    bp_meta_t m = *q;
    m.dtype = dt;
    m.shape[n - 1] = v->shape[n - 1];
    *out = m;
    return BP_OK;
}

/* The result shape (and dtype, from rule_dtype). */
static bp_status infer_kind(const bp_op_t *op, const bp_meta_t *metas,
                            bp_meta_t *out, bp_error_t *err)
{
    char s1[128], s2[128];
    bp_status st = need_operands(op, err);
    if (st)
        return st;
    const bp_meta_t *a = op->a.kind == BP_ARG_BUF ? &metas[op->a.buf] : NULL;
    const bp_meta_t *b = op->b.kind == BP_ARG_BUF ? &metas[op->b.buf] : NULL;
    const bp_dtype_t dt = rule_dtype(op, metas);
    switch (op->kind) {
    case BP_OP_TENSOR: {
        size_t n;
        if ((st = bp_shape_numel(op->ndim, op->shape, BP_F64, &n, err)))
            return st;
        if (n != op->nvalues)
            return bp_error_set(err, BP_EINPUT,
                                "shape %s holds %zu values but values has %zu",
                                (bp_shape_format(op->ndim, op->shape, s1,
                                                 sizeof s1), s1),
                                n, op->nvalues);
        meta_set(out, dt, op->ndim, op->shape);
        return BP_OK;
    }
    case BP_OP_ARANGE: {
        int64_t n;
        if ((st = bp_arange_length(op->start, op->end, op->step, &n, err)))
            return st;
        meta_set(out, dt, 1, &n);
        return BP_OK;
    }
    case BP_OP_LOAD: {
        size_t n;
        if (!op->has_dtype || op->dtype_is_run)
            return bp_error_set(err, BP_EINPUT, "load needs the tensor's dtype, not $dtype");
        if ((st = bp_shape_numel(op->ndim, op->shape, op->dtype, &n, err)))
            return st;
        meta_set(out, op->dtype, op->ndim, op->shape);
        return BP_OK;
    }
    case BP_OP_UNIFORM:
    case BP_OP_RANDN:
    case BP_OP_NORMAL:
    case BP_OP_FULL:
    case BP_OP_ZEROS:
    case BP_OP_ONES: {
        size_t n;
        if ((st = bp_shape_numel(op->ndim, op->shape, BP_F32, &n, err)))
            return st;
        meta_set(out, dt, op->ndim, op->shape);
        return BP_OK;
    }
    case BP_OP_LINSPACE: {
        if (op->steps < 0)
            return bp_error_set(err, BP_EINPUT, "linspace needs steps >= 0, got %" PRId64,
                                op->steps);
        meta_set(out, dt, 1, &op->steps);
        return BP_OK;
    }
    case BP_OP_CAST:
        if (!op->has_dtype)
            return bp_error_set(err, BP_EINPUT, "cast needs a dtype");
        break;
    case BP_OP_ROTATE_HALF:
        if (a->ndim < 1 || a->shape[a->ndim - 1] % 2 != 0)
            return bp_error_set(err, BP_EINPUT,
                                "rotate_half needs an even last dimension, "
                                "a is %s", shape_str(a, s1, sizeof s1));
        break;
    case BP_OP_OUTER: {
        if (a->ndim != 1 || b->ndim != 1)
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: outer needs 1-D operands, "
                                "a is %s, b is %s",
                                shape_str(a, s1, sizeof s1),
                                shape_str(b, s2, sizeof s2));
        int64_t sh[2] = {a->shape[0], b->shape[0]};
        meta_set(out, dt, 2, sh);
        return BP_OK;
    }
    case BP_OP_MATMUL: {
        if (a->ndim < 2 || b->ndim != 2 || a->shape[a->ndim - 1] != b->shape[0])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: matmul needs [..., m, k] x [k, n], "
                                "a is %s, b is %s",
                                shape_str(a, s1, sizeof s1),
                                shape_str(b, s2, sizeof s2));
        /* torch.matmul does not promote: mixed dtypes are an error there. */
        if (a->dtype != b->dtype || !is_float(a->dtype))
            return bp_error_set(err, BP_EINPUT,
                                "matmul needs two float operands of one dtype, "
                                "a is %s, b is %s",
                                bp_dtype_name(a->dtype), bp_dtype_name(b->dtype));
        bp_meta_t m = *a; /* torch.matmul folds a's leading dimensions */
        m.dtype = dt;
        m.shape[m.ndim - 1] = b->shape[1];
        *out = m;
        return BP_OK;
    }
    case BP_OP_CONCAT: {
        const bp_meta_t *f = &metas[op->inputs[0]];
        int ax;
        if (f->ndim < 1 || !bp_axis_norm(op->has_axis ? op->axis : 0, f->ndim, &ax))
            return bp_error_set(err, BP_EINPUT,
                                "concat axis %d out of range for %s",
                                op->has_axis ? op->axis : 0,
                                shape_str(f, s1, sizeof s1));
        bp_meta_t m = *f;
        for (int k = 1; k < op->ninputs; k++) {
            const bp_meta_t *x = &metas[op->inputs[k]];
            bool ok = x->ndim == f->ndim;
            for (int d = 0; ok && d < f->ndim; d++)
                ok = d == ax || x->shape[d] == f->shape[d];
            if (!ok)
                return bp_error_set(err, BP_EINPUT,
                                    "shape mismatch: concat along axis %d of "
                                    "%s and %s (input %d)",
                                    ax, shape_str(f, s1, sizeof s1),
                                    shape_str(x, s2, sizeof s2), k + 1);
            m.shape[ax] += x->shape[ax];
        }
        m.dtype = dt;
        *out = m;
        return BP_OK;
    }
    case BP_OP_SLICE: {
        int ax;
        if (!bp_axis_norm(op->has_axis ? op->axis : 0, a->ndim, &ax))
            return bp_error_set(err, BP_EINPUT,
                                "slice axis %d out of range for %s",
                                op->has_axis ? op->axis : 0,
                                shape_str(a, s1, sizeof s1));
        if (op->s_step < 1)
            return bp_error_set(err, BP_EINPUT,
                                "slice step must be positive, got %" PRId64,
                                op->s_step);
        int64_t first, len;
        bp_slice_resolve(op, a->shape[ax], &first, &len);
        *out = *a;
        out->shape[ax] = len;
        out->dtype = dt;
        return BP_OK;
    }
    case BP_OP_RESHAPE: case BP_OP_VIEW: case BP_OP_TRANSPOSE: case BP_OP_PERMUTE:
    case BP_OP_UNSQUEEZE: case BP_OP_SQUEEZE: case BP_OP_EXPAND:
    case BP_OP_INDEX_SELECT: case BP_OP_EMBEDDING:
        return infer_layout(op, a, b, dt, out, err);
    case BP_OP_SOFTMAX: case BP_OP_LOG_SOFTMAX: case BP_OP_CUMSUM: {
        /* One result per element, along axis (a 0-D tensor has axis 0 or
         * -1, as PyTorch's maybe_wrap_dim allows). */
        int ax;
        if (!bp_axis_norm(op->axis, a->ndim ? a->ndim : 1, &ax))
            return bp_error_set(err, BP_EINPUT, "%s axis %d out of range for %s",
                                bp_op_name(op->kind), op->axis,
                                shape_str(a, s1, sizeof s1));
        meta_set(out, dt, a->ndim, a->shape);
        return BP_OK;
    }
    case BP_OP_RMS_NORM: case BP_OP_LAYER_NORM: case BP_OP_BMM: case BP_OP_SDPA:
    case BP_OP_BADDBMM: case BP_OP_LINEAR: case BP_OP_ADDMM:
        return infer_fused(op, metas, dt, out, err);
    case BP_OP_SUM: case BP_OP_MEAN: case BP_OP_VAR: case BP_OP_AMAX:
    case BP_OP_AMIN: case BP_OP_LOGSUMEXP: case BP_OP_PROD: {
        /* Without axis, every dimension; keepdim keeps each reduced one
         * as 1 (torch.sum(a, dim, keepdim)). */
        int ax = -1;
        if (op->has_axis && !bp_axis_norm(op->axis, a->ndim ? a->ndim : 1, &ax))
            return bp_error_set(err, BP_EINPUT, "%s axis %d out of range for %s",
                                bp_op_name(op->kind), op->axis,
                                shape_str(a, s1, sizeof s1));
        if (op->kind == BP_OP_AMAX || op->kind == BP_OP_AMIN) {
            bool empty = false; /* no identity: PyTorch raises */
            for (int d = 0; d < a->ndim; d++)
                empty = empty || ((!op->has_axis || d == ax) && a->shape[d] == 0);
            if (empty)
                return bp_error_set(err, BP_EINPUT, "%s over an empty dimension of %s "
                                    "(it has no identity)", bp_op_name(op->kind),
                                    shape_str(a, s1, sizeof s1));
        }
        bp_meta_t m;
        memset(&m, 0, sizeof m);
        m.dtype = dt;
        for (int d = 0; d < a->ndim; d++)
            if (op->has_axis && d != ax)
                m.shape[m.ndim++] = a->shape[d];
            else if (op->keepdim)
                m.shape[m.ndim++] = 1;
        *out = m;
        return BP_OK;
    }
    default:
        break;
    }
    /* Elementwise: the operand's shape, or the operands' broadcast
     * (torch.broadcast_shapes: aligned at the right, a size 1 or a missing
     * dimension stretches). */
    const bp_op_info_t *info = bp_op_info(op->kind);
    if (info->kind != BP_KIND_ELEMWISE &&
        !(info->kind == BP_KIND_LAYOUT && info->operands == BP_OPD_A))
        return bp_error_set(err, BP_EINTERNAL, "no shape rule for op '%s'",
                            bp_op_name(op->kind));
    const bp_meta_t *c = info->operands == BP_OPD_COND_AB ? &metas[op->inputs[0]] : NULL;
    const bp_meta_t *t = a ? a : b ? b : c;
    meta_set(out, dt, t->ndim, t->shape);
    if (a && b && !bp_bcast_shape(a->ndim, a->shape, b->ndim, b->shape,
                                  &out->ndim, out->shape))
        return bp_error_set(err, BP_EINPUT,
                            "shape mismatch: a is %s, b is %s "
                            "(they do not broadcast)",
                            shape_str(a, s1, sizeof s1),
                            shape_str(b, s2, sizeof s2));
    if (info->operands == BP_OPD_A_BOUNDS)
        for (int k = 0; k < op->ninputs; k++) {
            const bp_meta_t *bd = &metas[op->inputs[k]];
            bp_meta_t sofar = *out;
            if (!bp_bcast_shape(bd->ndim, bd->shape, sofar.ndim, sofar.shape, &out->ndim,
                                out->shape))
                return bp_error_set(err, BP_EINPUT,
                                    "shape mismatch: %s %s, %s is %s "
                                    "(they do not broadcast)",
                                    k ? "a and min give" : "a is",
                                    shape_str(&sofar, s1, sizeof s1),
                                    k == 0 && op->has_min ? "min" : "max",
                                    shape_str(bd, s2, sizeof s2));
        }
    if (c) {
        bp_meta_t ab = *out;
        if (c->dtype != BP_BOOL)
            return bp_error_set(err, BP_EINPUT, "%s expects cond to be a bool tensor, "
                                "not %s (compare, or cast it to bool)",
                                bp_op_name(op->kind), bp_dtype_name(c->dtype));
        if (!bp_bcast_shape(c->ndim, c->shape, ab.ndim, ab.shape, &out->ndim, out->shape))
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: cond is %s, a and b give %s "
                                "(they do not broadcast)",
                                shape_str(c, s1, sizeof s1),
                                shape_str(&ab, s2, sizeof s2));
    }
    return BP_OK;
}

/* tensor ** number converts the number with Scalar::to<scalar_t>() for
 * f16, bf16 and integer tensors on every device (PowKernel.cpp, .cu), and
 * c10's checked conversion refuses finite values beyond the type's range
 * (c10/util/TypeCast.h overflows(): infinities and NaN pass).  f32 takes
 * the exponent as a double on the CPU; only CUDA would refuse there. */
static bool scalar_fits(bp_dtype_t dt, double v)
{
    switch (dt) {
    case BP_F16: return !(fabs(v) > 65504.0) || isinf(v);
    case BP_BF16: return !(fabs(v) > 0x1.fep127) || isinf(v);
    case BP_I32: return v >= -2147483648.0 && v <= 2147483647.0;
    default: return true;
    }
}

static bool is_fp8(bp_dtype_t d)
{
    return d == BP_F8_E4M3 || d == BP_F8_E5M2;
}

/* bool and fp8 reach only the ops that take them (op_list.h, BP_OPF_BOOL
 * and BP_OPF_FP8); fp8 meets no other dtype but in a cast (c10's
 * promoteTypes refuses to promote the Float8 types). */
static bp_status storage_ok(const bp_op_t *op, const bp_meta_t *metas, bp_dtype_t out,
                            bp_error_t *err)
{
    int reads[BP_OP_MAXREADS];
    int n = bp_op_reads(op, reads);
    const char *name = bp_op_name(op->kind);
    for (int r = -1; r < n; r++) {
        bp_dtype_t d = r < 0 ? out : metas[reads[r]].dtype;
        const char *what = r < 0 ? "its result" : "an operand";
        if (d == BP_BOOL && !bp_op_has(op->kind, BP_OPF_BOOL))
            return bp_error_set(err, BP_EINPUT, "%s does not take bool (%s is bool); "
                                "cast it to a number dtype first", name, what);
        if (is_fp8(d) && !bp_op_has(op->kind, BP_OPF_FP8))
            return bp_error_set(err, BP_EINPUT, "%s does not compute in %s (%s is): "
                                "fp8 is a storage dtype, cast it to a float dtype first",
                                name, bp_dtype_name(d), what);
        if (r >= 0 && op->kind != BP_OP_CAST && (is_fp8(d) || is_fp8(out)) && d != out &&
            op->kind != BP_OP_INDEX_SELECT && op->kind != BP_OP_EMBEDDING)
            return bp_error_set(err, BP_EINPUT, "%s of %s into %s: PyTorch does not "
                                "promote fp8 with another dtype; cast first",
                                name, bp_dtype_name(d), bp_dtype_name(out));
    }
    return BP_OK;
}

bp_status bp_op_infer(const bp_op_t *op, const bp_meta_t *metas,
                      bp_dtype_t run_dtype, bp_meta_t *out, bp_error_t *err)
{
    if ((unsigned)op->kind >= BP_OP_COUNT)
        return bp_error_set(err, BP_EINTERNAL, "unknown op kind %d",
                            (int)op->kind);
    if (!bp_op_form_ok(op->kind, op->form))
        return bp_error_set(err, BP_EINPUT, "formulation '%s' does not apply to %s",
                            bp_form_name(op->form), bp_op_name(op->kind));
    bp_status st = infer_kind(op, metas, out, err);
    if (st)
        return st;
    if (bp_op_has(op->kind, BP_OPF_FLOAT_IN) &&
        !(op->has_dtype && is_float(op->dtype_is_run ? run_dtype : op->dtype))) {
        int reads[BP_OP_MAXREADS];
        int n = bp_op_reads(op, reads);
        for (int k = 0; k < n; k++)
            if (!is_float(metas[reads[k]].dtype))
                return bp_error_set(err, BP_EINPUT,
                                    "%s of a tensor of dtype %s: PyTorch has no integer kernel for "
                                    "it and refuses it; cast to a float dtype first",
                                    bp_op_name(op->kind), bp_dtype_name(metas[reads[k]].dtype));
    }
    if (bp_op_has(op->kind, BP_OPF_FLOAT_FN) && !is_float(out->dtype))
        out->dtype = BP_F32; /* the default dtype */
    /* A comparison computes in the promoted dtype (out->dtype so far) and
     * gives bool. */
    bp_dtype_t cdt = out->dtype;
    if (bp_op_info(op->kind)->dtype == BP_DT_BOOL) {
        if (op->has_dtype && (op->dtype_is_run || op->dtype != BP_BOOL))
            return bp_error_set(err, BP_EINPUT, "%s gives bool: it takes no other dtype",
                                bp_op_name(op->kind));
        out->dtype = BP_BOOL;
    } else if (op->has_dtype) {
        bp_dtype_t dt = op->dtype_is_run ? run_dtype : op->dtype;
        if ((unsigned)dt >= BP_NDTYPES)
            return bp_error_set(err, BP_EINPUT, "unknown dtype %d", (int)dt);
        if (!is_float(dt) && !bp_op_has(op->kind, BP_OPF_INT))
            return bp_error_set(err, BP_EINPUT,
                                "%s cannot produce the integer dtype %s",
                                bp_op_name(op->kind), bp_dtype_name(dt));
        out->dtype = cdt = dt;
    }
    if ((st = storage_ok(op, metas, out->dtype, err)))
        return st;
    /* A number meets an integer result only as an integer: an integer
     * dtype asked of `x + 0.5` has no counterpart (PyTorch would promote). */
    const bp_arg_t *num[2] = {&op->a, &op->b};
    for (int k = 0; k < 2 && !is_float(cdt); k++) {
        double v = num[k]->value;
        if (num[k]->kind == BP_ARG_SCALAR && !(v == trunc(v) && fabs(v) < 0x1p63))
            return bp_error_set(err, BP_EINPUT,
                                "%s: the number %.17g is not an integer, but the "
                                "result dtype is %s",
                                k ? "b" : "a", v, bp_dtype_name(out->dtype));
    }
    /* A comparison with a number takes it as the compute dtype does
     * (CUDA: iter.scalar_value<scalar_t>, the checked conversion). */
    for (int k = 0; k < 2 && bp_op_info(op->kind)->dtype == BP_DT_BOOL; k++)
        if (num[k]->kind == BP_ARG_SCALAR && !scalar_fits(cdt, num[k]->value))
            return bp_error_set(err, BP_EINPUT,
                                "%s: the number %.17g overflows %s, the dtype the "
                                "comparison computes in (PyTorch's CUDA kernel "
                                "refuses it: value cannot be converted without "
                                "overflow)",
                                k ? "b" : "a", num[k]->value, bp_dtype_name(cdt));
    if (op->kind == BP_OP_POW && op->a.kind == BP_ARG_BUF &&
        op->b.kind == BP_ARG_SCALAR && !scalar_fits(out->dtype, op->b.value))
        return bp_error_set(err, BP_EINPUT,
                            "b: the exponent %.17g overflows %s (PyTorch "
                            "refuses it: value cannot be converted without "
                            "overflow)",
                            op->b.value, bp_dtype_name(out->dtype));
    size_t numel;
    if ((st = bp_shape_numel(out->ndim, out->shape, out->dtype, &numel, err)))
        return st;
    return BP_OK;
}
