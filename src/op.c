/* Op names and shape/dtype inference (see op.h).
 *
 * Inference mirrors what PyTorch would allocate for the same expression, so
 * that a probe's buffers have the dtypes the framework gives them: the type
 * promotion lattice of c10/core/ScalarType.h restricted to the dtypes
 * bitprobe knows, with Python numbers as "wrapped" scalars that never widen a
 * tensor of their own category.  Broadcasting is deliberately absent: an
 * elementwise op takes two tensors of one shape or a tensor and a scalar,
 * which is all the probes need and keeps every backend's indexing trivial. */
#include "op.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const char *const op_names[BP_OP_COUNT] = {
    [BP_OP_TENSOR] = "tensor",   [BP_OP_ARANGE] = "arange",
    [BP_OP_UNIFORM] = "uniform", [BP_OP_CAST] = "cast",
    [BP_OP_ADD] = "add",         [BP_OP_SUB] = "sub",
    [BP_OP_MUL] = "mul",         [BP_OP_DIV] = "div",
    [BP_OP_POW] = "pow",         [BP_OP_RECIPROCAL] = "reciprocal",
    [BP_OP_EXP] = "exp",         [BP_OP_LOG] = "log",
    [BP_OP_SIN] = "sin",         [BP_OP_COS] = "cos",
    [BP_OP_TANH] = "tanh",       [BP_OP_SQRT] = "sqrt",
    [BP_OP_RSQRT] = "rsqrt",     [BP_OP_NEG] = "neg",
    [BP_OP_OUTER] = "outer",     [BP_OP_CONCAT] = "concat",
    [BP_OP_SLICE] = "slice",     [BP_OP_MATMUL] = "matmul",
    [BP_OP_SUM] = "sum",         [BP_OP_ROTATE_HALF] = "rotate_half",
};

static const char *const form_names[] = {
    [BP_FORM_DEFAULT] = "default",       [BP_FORM_TRUE] = "true",
    [BP_FORM_RECIPROCAL] = "reciprocal", [BP_FORM_SEQUENTIAL] = "sequential",
    [BP_FORM_PAIRWISE] = "pairwise",
};

const char *bp_op_name(bp_op_kind_t k)
{
    return (unsigned)k < BP_OP_COUNT ? op_names[k] : "?";
}

bool bp_op_lookup(const char *name, bp_op_kind_t *k)
{
    for (int i = 0; i < BP_OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0) {
            *k = (bp_op_kind_t)i;
            return true;
        }
    return false;
}

const char *bp_form_name(bp_form_t f)
{
    return (unsigned)f < sizeof form_names / sizeof form_names[0]
               ? form_names[f]
               : "?";
}

double bp_div_scalar_reciprocal(double b, bp_dtype_t dt)
{
    double r = 1.0 / b;
    return dt == BP_F64 ? r : (double)(float)r;
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

/* PyTorch's promote_types over {f64, f32, bf16, f16, i64, i32}. */
static bp_dtype_t promote(bp_dtype_t a, bp_dtype_t b)
{
    if (a == b)
        return a;
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

static bool same_shape(const bp_meta_t *a, const bp_meta_t *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static const char *shape_str(const bp_meta_t *m, char *buf, size_t n)
{
    bp_shape_format(m->ndim, m->shape, buf, n);
    return buf;
}

static bool axis_norm(int axis, int ndim, int *out)
{
    if (axis < -ndim || axis >= ndim)
        return false;
    *out = axis < 0 ? axis + ndim : axis;
    return true;
}

static bool is_float_function(bp_op_kind_t k)
{
    switch (k) {
    case BP_OP_RECIPROCAL: case BP_OP_EXP: case BP_OP_LOG: case BP_OP_SIN:
    case BP_OP_COS: case BP_OP_TANH: case BP_OP_SQRT: case BP_OP_RSQRT:
        return true;
    default:
        return false;
    }
}

static bool all_integral(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(v[i] == floor(v[i])) || fabs(v[i]) > 9007199254740992.0)
            return false;
    return true;
}

/* Elementwise binary: same shape, or a tensor with a Python number. */
static bp_status infer_binary(const bp_op_t *op, const bp_meta_t *metas,
                              bp_meta_t *out, bp_error_t *err)
{
    const bool ta = op->a.kind == BP_ARG_BUF, tb = op->b.kind == BP_ARG_BUF;
    if (!ta && !tb)
        return bp_error_set(err, BP_EINPUT,
                            "%s needs at least one buffer operand",
                            bp_op_name(op->kind));
    if (op->a.kind == BP_ARG_NONE || op->b.kind == BP_ARG_NONE)
        return bp_error_set(err, BP_EINPUT, "%s needs operands a and b",
                            bp_op_name(op->kind));
    if (ta && tb) {
        const bp_meta_t *a = &metas[op->a.buf], *b = &metas[op->b.buf];
        if (!same_shape(a, b)) {
            char sa[128], sb[128];
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: a is %s, b is %s "
                                "(no broadcasting)",
                                shape_str(a, sa, sizeof sa),
                                shape_str(b, sb, sizeof sb));
        }
        meta_set(out, promote(a->dtype, b->dtype), a->ndim, a->shape);
        return BP_OK;
    }
    const bp_meta_t *t = ta ? &metas[op->a.buf] : &metas[op->b.buf];
    const bp_arg_t *s = ta ? &op->b : &op->a;
    /* A wrapped number only lifts an integer tensor to the default float. */
    bp_dtype_t dt = !is_float(t->dtype) && !s->is_int ? BP_F32 : t->dtype;
    meta_set(out, dt, t->ndim, t->shape);
    return BP_OK;
}

static bp_status need_buf(const bp_op_t *op, const bp_arg_t *x,
                          const char *which, bp_error_t *err)
{
    if (x->kind != BP_ARG_BUF)
        return bp_error_set(err, BP_EINPUT, "%s needs a buffer as %s",
                            bp_op_name(op->kind), which);
    return BP_OK;
}

static bp_status infer_kind(const bp_op_t *op, const bp_meta_t *metas,
                            bp_meta_t *out, bp_error_t *err)
{
    char s1[128], s2[128];
    bp_status st;
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
        meta_set(out, all_integral(op->values, op->nvalues) ? BP_I64 : BP_F32,
                 op->ndim, op->shape);
        return BP_OK;
    }
    case BP_OP_ARANGE: {
        int64_t n;
        if ((st = bp_arange_length(op->start, op->end, op->step, &n, err)))
            return st;
        double v[3] = {op->start, op->end, op->step};
        meta_set(out, all_integral(v, 3) ? BP_I64 : BP_F32, 1, &n);
        return BP_OK;
    }
    case BP_OP_UNIFORM: {
        size_t n;
        if ((st = bp_shape_numel(op->ndim, op->shape, BP_F32, &n, err)))
            return st;
        meta_set(out, BP_F32, op->ndim, op->shape);
        return BP_OK;
    }
    case BP_OP_CAST:
    case BP_OP_NEG:
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        *out = metas[op->a.buf];
        if (op->kind == BP_OP_CAST && !op->has_dtype)
            return bp_error_set(err, BP_EINPUT, "cast needs a dtype");
        return BP_OK;
    case BP_OP_ADD: case BP_OP_SUB: case BP_OP_MUL: case BP_OP_POW:
        return infer_binary(op, metas, out, err);
    case BP_OP_DIV:
        if ((st = infer_binary(op, metas, out, err)))
            return st;
        if (!is_float(out->dtype)) /* true division of integers */
            out->dtype = BP_F32;
        return BP_OK;
    case BP_OP_RECIPROCAL: case BP_OP_EXP: case BP_OP_LOG: case BP_OP_SIN:
    case BP_OP_COS: case BP_OP_TANH: case BP_OP_SQRT: case BP_OP_RSQRT:
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        *out = metas[op->a.buf];
        if (!is_float(out->dtype))
            out->dtype = BP_F32;
        return BP_OK;
    case BP_OP_ROTATE_HALF: {
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        const bp_meta_t *a = &metas[op->a.buf];
        if (a->ndim < 1 || a->shape[a->ndim - 1] % 2 != 0)
            return bp_error_set(err, BP_EINPUT,
                                "rotate_half needs an even last dimension, "
                                "a is %s", shape_str(a, s1, sizeof s1));
        *out = *a;
        return BP_OK;
    }
    case BP_OP_OUTER: {
        if ((st = need_buf(op, &op->a, "a", err)) ||
            (st = need_buf(op, &op->b, "b", err)))
            return st;
        const bp_meta_t *a = &metas[op->a.buf], *b = &metas[op->b.buf];
        if (a->ndim != 1 || b->ndim != 1)
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: outer needs 1-D operands, "
                                "a is %s, b is %s",
                                shape_str(a, s1, sizeof s1),
                                shape_str(b, s2, sizeof s2));
        int64_t sh[2] = {a->shape[0], b->shape[0]};
        meta_set(out, promote(a->dtype, b->dtype), 2, sh);
        return BP_OK;
    }
    case BP_OP_MATMUL: {
        if ((st = need_buf(op, &op->a, "a", err)) ||
            (st = need_buf(op, &op->b, "b", err)))
            return st;
        const bp_meta_t *a = &metas[op->a.buf], *b = &metas[op->b.buf];
        if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0])
            return bp_error_set(err, BP_EINPUT,
                                "shape mismatch: matmul needs [m, k] x [k, n], "
                                "a is %s, b is %s",
                                shape_str(a, s1, sizeof s1),
                                shape_str(b, s2, sizeof s2));
        /* torch.matmul does not promote: mixed dtypes are an error there. */
        if (a->dtype != b->dtype || !is_float(a->dtype))
            return bp_error_set(err, BP_EINPUT,
                                "matmul needs two float operands of one dtype, "
                                "a is %s, b is %s",
                                bp_dtype_name(a->dtype), bp_dtype_name(b->dtype));
        int64_t sh[2] = {a->shape[0], b->shape[1]};
        meta_set(out, a->dtype, 2, sh);
        return BP_OK;
    }
    case BP_OP_CONCAT: {
        if (op->ninputs < 1 || !op->inputs)
            return bp_error_set(err, BP_EINPUT, "concat needs inputs");
        const bp_meta_t *f = &metas[op->inputs[0]];
        int ax;
        if (f->ndim < 1 || !axis_norm(op->has_axis ? op->axis : 0, f->ndim, &ax))
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
            m.dtype = promote(m.dtype, x->dtype);
        }
        *out = m;
        return BP_OK;
    }
    case BP_OP_SLICE: {
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        const bp_meta_t *a = &metas[op->a.buf];
        int ax;
        if (!axis_norm(op->has_axis ? op->axis : 0, a->ndim, &ax))
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
        return BP_OK;
    }
    case BP_OP_SUM: {
        if ((st = need_buf(op, &op->a, "a", err)))
            return st;
        const bp_meta_t *a = &metas[op->a.buf];
        bp_dtype_t dt = is_float(a->dtype) ? a->dtype : BP_I64;
        if (!op->has_axis) {
            meta_set(out, dt, 0, NULL);
            return BP_OK;
        }
        int ax;
        if (!axis_norm(op->axis, a->ndim, &ax))
            return bp_error_set(err, BP_EINPUT, "sum axis %d out of range for %s",
                                op->axis, shape_str(a, s1, sizeof s1));
        bp_meta_t m;
        memset(&m, 0, sizeof m);
        m.dtype = dt;
        for (int d = 0; d < a->ndim; d++)
            if (d != ax)
                m.shape[m.ndim++] = a->shape[d];
        *out = m;
        return BP_OK;
    }
    case BP_OP_COUNT:
        break;
    }
    return bp_error_set(err, BP_EINTERNAL, "unknown op kind %d", (int)op->kind);
}

static bool form_allowed(bp_op_kind_t k, bp_form_t f)
{
    if (f == BP_FORM_DEFAULT)
        return true;
    if (k == BP_OP_DIV)
        return f == BP_FORM_TRUE || f == BP_FORM_RECIPROCAL;
    if (k == BP_OP_SUM)
        return f == BP_FORM_SEQUENTIAL || f == BP_FORM_PAIRWISE;
    return false;
}

bp_status bp_op_infer(const bp_op_t *op, const bp_meta_t *metas,
                      bp_dtype_t run_dtype, bp_meta_t *out, bp_error_t *err)
{
    if ((unsigned)op->kind >= BP_OP_COUNT)
        return bp_error_set(err, BP_EINTERNAL, "unknown op kind %d",
                            (int)op->kind);
    if (!form_allowed(op->kind, op->form))
        return bp_error_set(err, BP_EINPUT, "formulation '%s' does not apply to %s",
                            bp_form_name(op->form), bp_op_name(op->kind));
    bp_status st = infer_kind(op, metas, out, err);
    if (st)
        return st;
    if (op->has_dtype) {
        bp_dtype_t dt = op->dtype_is_run ? run_dtype : op->dtype;
        if ((unsigned)dt >= BP_NDTYPES)
            return bp_error_set(err, BP_EINPUT, "unknown dtype %d", (int)dt);
        if (!is_float(dt) &&
            (is_float_function(op->kind) || op->kind == BP_OP_DIV ||
             op->kind == BP_OP_UNIFORM))
            return bp_error_set(err, BP_EINPUT,
                                "%s cannot produce the integer dtype %s",
                                bp_op_name(op->kind), bp_dtype_name(dt));
        out->dtype = dt;
    }
    size_t numel;
    if ((st = bp_shape_numel(out->ndim, out->shape, out->dtype, &numel, err)))
        return st;
    return BP_OK;
}
