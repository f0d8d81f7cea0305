/* CUDA backend, op semantics: checks each op's operands, converts scalars
 * the way PyTorch does on the host, picks the kernel formulation PyTorch's
 * CUDA code uses, and launches it (kernels/bpk.h).
 *
 * Scalars (Python numbers) reach PyTorch's kernels in one of two forms,
 * and which one is part of the formulation:
 *  - opmath: iter.scalar_value<opmath_t>(), float for f32/bf16/f16
 *    results (add, sub, mul);
 *  - double: the divisor of tensor / scalar (BinaryDivTrueKernel.cu reads
 *    iter.scalar_value<double>, takes 1.0 / b in double and rounds the
 *    reciprocal once to opmath_t; bp_div_scalar_reciprocal);
 *  - storage: converted to scalar_t, the result dtype (the base of
 *    scalar ** tensor, wrapped into a device tensor by pow_Scalar_out; the
 *    exponent of tensor ** scalar, exp_scalar.to<scalar_t>()).
 * `scalar / tensor` is Python's Tensor.__rtruediv__, which PyTorch defines
 * as `tensor.reciprocal() * scalar`: the reciprocal is rounded to the
 * result dtype, then multiplied by the scalar in opmath. */
#include "be_cuda.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"
#include "layout.h"

_Static_assert(BPK_F64 == (int)BP_F64 && BPK_F32 == (int)BP_F32 &&
                   BPK_BF16 == (int)BP_BF16 && BPK_F16 == (int)BP_F16 &&
                   BPK_I64 == (int)BP_I64 && BPK_I32 == (int)BP_I32 &&
                   BPK_NDTYPES == (int)BP_I32 + 1,
               "kernel dtype codes must equal bp_dtype_t's arithmetic ones");
_Static_assert(BPK_BOOL == (int)BP_BOOL && BPK_F8E4M3 == (int)BP_F8_E4M3 &&
                   BPK_F8E5M2 == (int)BP_F8_E5M2,
               "kernel dtype codes must equal bp_dtype_t's bool and fp8 ones");
_Static_assert(BPK_MAXDIM == BP_MAXDIM, "kernel and buffer rank limits");

static const char *dname(bp_dtype_t dt)
{
    return bp_dtype_name(dt);
}

/* An integer scalar for an integer result: integral and within int64. */
static bp_status int_scalar(double v, double *res, bp_error_t *err)
{
    if (v != trunc(v) || !(fabs(v) < 0x1p63))
        return bp_error_set(err, BP_EINPUT,
                            "scalar %.17g is not an integer, but the result "
                            "dtype is an integer type", v);
    *res = v;
    return BP_OK;
}

/* The scalar as opmath_t holds it (iter.scalar_value<opmath_t>). */
static bp_status scalar_opmath(double v, bp_dtype_t out, double *res,
                               bp_error_t *err)
{
    if (bp_dtype_is_int(out))
        return int_scalar(v, res, err);
    *res = out == BP_F64 ? v : (double)(float)v;
    return BP_OK;
}

/* The scalar converted to the result dtype (scalar_t), widened back. */
static bp_status scalar_storage(double v, bp_dtype_t out, double *res,
                                bp_error_t *err)
{
    switch (out) {
    case BP_F64: case BP_F32: case BP_BF16: case BP_F16:
        *res = bp_dtype_round(out, v);
        return BP_OK;
    default: return int_scalar(v, res, err);
    }
}

static bp_status dev_of(const bp_buf_t *t, const char *which, bp_error_t *err)
{
    if (!t)
        return bp_error_set(err, BP_EINPUT, "operand %s is missing", which);
    if (!t->dev)
        return bp_error_set(err, BP_EINTERNAL,
                            "operand %s has no device copy", which);
    if (!(BP_DTYPES_COMPUTE & BP_DTYPE_BIT(t->dtype)))
        return bp_error_set(err, BP_EINTERNAL,
                            "operand %s has dtype code %d", which, t->dtype);
    return BP_OK;
}

static bpk_arg_t tensor_arg(const bp_buf_t *t)
{
    bpk_arg_t a = {t->dev, (int)t->dtype, 0.0};
    return a;
}

static bpk_arg_t scalar_arg(double v)
{
    bpk_arg_t a = {NULL, 0, v};
    return a;
}

static bp_status shape_error(bp_error_t *err, const char *what,
                             const bp_buf_t *t, const bp_buf_t *out)
{
    char ts[160], os[160];
    bp_shape_format(t->ndim, t->shape, ts, sizeof ts);
    bp_shape_format(out->ndim, out->shape, os, sizeof os);
    return bp_error_set(err, BP_EINPUT, "%s of shape %s does not fit the "
                        "result shape %s", what, ts, os);
}

/* Strides of t's elements along each dimension of out (0 where t
 * broadcasts). */
static bp_status strides_for(const bp_buf_t *t, const bp_buf_t *out,
                             int64_t *stride, const char *which,
                             bp_error_t *err)
{
    if (t && !bp_bcast_strides(t->ndim, t->shape, out->ndim, out->shape, stride))
        return shape_error(err, which, t, out);
    return BP_OK;
}

/* TensorIterator's coalescing of bc: dimensions of size 1 dropped, each
 * dimension merged into the one outside it where every operand's strides
 * line up (the outer stride the inner stride times the inner size), so
 * that a kernel finds its offsets with as few divisions as there are
 * dimensions left; ndim 0 where that leaves the operands read in order. */
static void coalesce(bpk_bcast_t *bc, bool has_a, bool has_b)
{
    int n = 0;
    for (int d = 0; d < bc->ndim; d++) {
        int64_t sz = bc->shape[d], sa = bc->stride_a[d], sb = bc->stride_b[d];
        if (sz == 1)
            continue;
        if (n > 0 && bc->stride_a[n - 1] == sa * sz && bc->stride_b[n - 1] == sb * sz) {
            bc->shape[n - 1] *= sz;
        } else {
            bc->shape[n] = sz;
            n++;
        }
        bc->stride_a[n - 1] = sa;
        bc->stride_b[n - 1] = sb;
    }
    for (int d = n; d < BPK_MAXDIM; d++)
        bc->shape[d] = bc->stride_a[d] = bc->stride_b[d] = 0;
    bc->ndim = n;
    if (n == 0 || (n == 1 && (!has_a || bc->stride_a[0] == 1) &&
                   (!has_b || bc->stride_b[0] == 1))) {
        bc->ndim = 0; /* every element read at its own index (or the one element) */
        if (n == 0)
            bc->stride_a[0] = bc->stride_b[0] = 0;
    }
}

bp_status bp_cuda_bcast(const bp_buf_t *out, const bp_buf_t *a, const bp_buf_t *b,
                        bpk_bcast_t *bc, bp_error_t *err)
{
    memset(bc, 0, sizeof *bc);
    bc->narrow = out->numel < ((size_t)1 << 32);
    if ((!a || bp_buf_same_shape(a, out)) && (!b || bp_buf_same_shape(b, out)))
        return BP_OK;
    bc->ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++)
        bc->shape[d] = out->shape[d];
    bp_status st = strides_for(a, out, bc->stride_a, "operand a", err);
    if (!st)
        st = strides_for(b, out, bc->stride_b, "operand b", err);
    if (!st)
        coalesce(bc, a != NULL, b != NULL);
    return st;
}

/* Reads op->a / op->b: the tensor operand (checked) or the scalar. */
static bp_status operands(const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    if (op->a.kind == BP_ARG_BUF) {
        bp_status st = dev_of(x->a, "a", err);
        if (st)
            return st;
    }
    if (op->b.kind == BP_ARG_BUF) {
        bp_status st = dev_of(x->b, "b", err);
        if (st)
            return st;
    }
    if (op->a.kind != BP_ARG_BUF && op->b.kind != BP_ARG_BUF)
        return bp_error_set(err, BP_EINPUT,
                            "needs at least one tensor operand");
    if (op->a.kind == BP_ARG_NONE || op->b.kind == BP_ARG_NONE)
        return bp_error_set(err, BP_EINPUT, "needs two operands, a and b");
    return dev_of(x->out, "out", err);
}

static int64_t numel(const bp_buf_t *t)
{
    return (int64_t)t->numel;
}

static bp_status op_tensor(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    if (op->nvalues != out->numel && op->nvalues != 1)
        return bp_error_set(err, BP_EINPUT,
                            "%zu literal values for %zu elements",
                            op->nvalues, out->numel);
    if (out->numel && !out->data)
        return bp_error_set(err, BP_EINTERNAL, "result has no host buffer");
    for (size_t i = 0; i < out->numel; i++)
        bp_buf_set(out, i, op->values[op->nvalues == 1 ? 0 : i]);
    return be->upload(be, out, err);
}

static bp_status op_arange(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_status st = dev_of(x->out, "out", err);
    if (st)
        return st;
    if (bp_dtype_is_int(x->out->dtype) &&
        !(fabs(op->start) < 0x1p63 && fabs(op->step) < 0x1p63))
        return bp_error_set(err, BP_EINPUT,
                            "arange start %.17g or step %.17g outside int64",
                            op->start, op->step);
    int rc = bpk_arange(bp_cuda_stream(be), x->out->dev, (int)x->out->dtype,
                        numel(x->out), op->start, op->step);
    return bp_cuda_finish(be, "bpk_arange", rc, err);
}

static bp_status op_load(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = bp_op_load_host(x, err);
    return st ? st : be->upload(be, x->out, err);
}

static bp_status op_uniform(bp_backend_t *be, const bp_exec_t *x,
                            bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_status st = dev_of(x->out, "out", err);
    if (st)
        return st;
    if (!bp_dtype_info(x->out->dtype)->is_float)
        return bp_error_set(err, BP_EINPUT,
                            "uniform needs a float dtype, not %s",
                            dname(x->out->dtype));
    int rc = bpk_uniform(bp_cuda_stream(be), x->out->dev, (int)x->out->dtype,
                         numel(x->out), op->seed, op->stream,
                         (float)op->low, (float)op->high);
    return bp_cuda_finish(be, "bpk_uniform", rc, err);
}

static bp_status op_normal(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_status st = dev_of(x->out, "out", err);
    if (st)
        return st;
    int rc = bpk_normal(bp_cuda_stream(be), x->out->dev, (int)x->out->dtype,
                        numel(x->out), op->seed, op->stream, op->mean, op->std);
    return bp_cuda_finish(be, "bpk_normal", rc, err);
}

/* Copies (or converts) a into out, shapes permitting. */
static bp_status copy_into(bp_backend_t *be, const bp_buf_t *a, bp_buf_t *out,
                           bp_error_t *err)
{
    if (a->numel != out->numel)
        return shape_error(err, "operand a", a, out);
    int rc = bpk_cast(bp_cuda_stream(be), out->dev, (int)out->dtype, a->dev,
                      (int)a->dtype, numel(out));
    return bp_cuda_finish(be, "bpk_cast", rc, err);
}

static bp_status op_cast(bp_backend_t *be, const bp_exec_t *x,
                         bp_error_t *err)
{
    bp_status st = dev_of(x->a, "a", err);
    if (!st)
        st = dev_of(x->out, "out", err);
    return st ? st : copy_into(be, x->a, x->out, err);
}

static bp_status fill(bp_backend_t *be, bp_buf_t *out, double v,
                      bp_error_t *err)
{
    int rc = bpk_fill(bp_cuda_stream(be), out->dev, (int)out->dtype, v,
                      numel(out));
    return bp_cuda_finish(be, "bpk_fill", rc, err);
}

/* An elementwise function of one operand: unary.cu's kernel for op k. */
static bp_status unary(bp_backend_t *be, bp_op_kind_t k, const bp_buf_t *a,
                       bp_buf_t *out, bp_error_t *err)
{
    if (!bp_buf_same_shape(a, out))
        return shape_error(err, "operand a", a, out);
    if (bp_dtype_is_int(out->dtype) && !bp_op_has(k, BP_OPF_INT))
        return bp_error_set(err, BP_EINPUT,
                            "%s with integer result dtype %s", bp_op_name(k),
                            dname(out->dtype));
    int rc = bpk_unary(bp_cuda_stream(be), (int)k, out->dev, (int)out->dtype,
                       a->dev, (int)a->dtype, numel(out));
    char kernel[64];
    snprintf(kernel, sizeof kernel, "bpk_unary(%s)", bp_op_name(k));
    return bp_cuda_finish(be, kernel, rc, err);
}

static bp_status binary(bp_backend_t *be, int code, const char *name,
                        bpk_arg_t a, const bp_buf_t *ta, bpk_arg_t b,
                        const bp_buf_t *tb, bp_buf_t *out, bp_error_t *err)
{
    bpk_bcast_t bc;
    bp_status st = bp_cuda_bcast(out, ta, tb, &bc, err);
    if (st)
        return st;
    int rc = bpk_binary(bp_cuda_stream(be), code, out->dev, (int)out->dtype,
                        a, b, &bc, numel(out));
    char kernel[64];
    snprintf(kernel, sizeof kernel, "bpk_binary(%s)", name);
    return bp_cuda_finish(be, kernel, rc, err);
}

/* tensor / scalar, scalar / tensor, tensor / tensor (see the top). */
static bp_status div_op(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    if (bp_dtype_is_int(dt))
        return bp_error_set(err, BP_EINPUT,
                            "true division with integer result dtype %s",
                            dname(dt));
    bp_form_t form = op->form;
    if (form != BP_FORM_DEFAULT && form != BP_FORM_TRUE &&
        form != BP_FORM_RECIPROCAL)
        return bp_error_set(err, BP_EINPUT, "div has no formulation '%s'",
                            bp_form_name(form));
    double s = 0.0;
    bp_status st;
    if (!x->b) { /* tensor / scalar */
        if ((st = scalar_opmath(op->b.value, dt, &s, err)))
            return st;
        if (form == BP_FORM_TRUE)
            return binary(be, BPK_DIV, "div", tensor_arg(x->a), x->a,
                          scalar_arg(s), NULL, out, err);
        double inv = bp_div_scalar_reciprocal(op->b.value, dt);
        return binary(be, BPK_MUL, "div-reciprocal", tensor_arg(x->a), x->a,
                      scalar_arg(inv), NULL, out, err);
    }
    if (!x->a) { /* scalar / tensor */
        /* `true`: the number cast to the dtype first, as the CPU backend
         * and the replay (torch.tensor(s, dtype) / b) take it; the others
         * take it in opmath */
        if ((st = (form == BP_FORM_TRUE ? scalar_storage : scalar_opmath)(op->a.value, dt, &s,
                                                                          err)))
            return st;
        if (form == BP_FORM_TRUE)
            return binary(be, BPK_DIV, "div", scalar_arg(s), NULL,
                          tensor_arg(x->b), x->b, out, err);
        if (form == BP_FORM_RECIPROCAL)
            return binary(be, BPK_DIV_RCP, "div-reciprocal", scalar_arg(s),
                          NULL, tensor_arg(x->b), x->b, out, err);
        /* Tensor.__rtruediv__: b.reciprocal() * a. */
        if ((st = unary(be, BP_OP_RECIPROCAL, x->b, out, err)))
            return st;
        return binary(be, BPK_MUL, "mul", tensor_arg(out), out,
                      scalar_arg(s), NULL, out, err);
    }
    if (form == BP_FORM_RECIPROCAL)
        return binary(be, BPK_DIV_RCP, "div-reciprocal", tensor_arg(x->a),
                      x->a, tensor_arg(x->b), x->b, out, err);
    return binary(be, BPK_DIV, "div", tensor_arg(x->a), x->a,
                  tensor_arg(x->b), x->b, out, err);
}

static bp_status op_arith(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    bp_status st = operands(x, err);
    if (st)
        return st;
    const bp_op_t *op = x->op;
    int code;
    const char *name;
    switch (op->kind) {
    case BP_OP_ADD: code = BPK_ADD, name = "add"; break;
    case BP_OP_SUB: code = BPK_SUB, name = "sub"; break;
    case BP_OP_MUL: code = BPK_MUL, name = "mul"; break;
    case BP_OP_DIV: return div_op(be, x, err);
    default:
        return bp_error_set(err, BP_EINTERNAL, "op kind %d is not arithmetic",
                            (int)op->kind);
    }
    bpk_arg_t a, b;
    double s = 0.0;
    if (x->a) {
        a = tensor_arg(x->a);
    } else {
        if ((st = scalar_opmath(op->a.value, x->out->dtype, &s, err)))
            return st;
        a = scalar_arg(s);
    }
    if (x->b) {
        b = tensor_arg(x->b);
    } else {
        if ((st = scalar_opmath(op->b.value, x->out->dtype, &s, err)))
            return st;
        b = scalar_arg(s);
    }
    return binary(be, code, name, a, x->a, b, x->b, x->out, err);
}

static bp_status pow_launch(bp_backend_t *be, int mode, bpk_arg_t a,
                            const bp_buf_t *ta, bpk_arg_t b,
                            const bp_buf_t *tb, bp_buf_t *out, bp_error_t *err)
{
    bpk_bcast_t bc;
    bp_status st = bp_cuda_bcast(out, ta, tb, &bc, err);
    if (st)
        return st;
    int rc = bpk_pow(bp_cuda_stream(be), mode, out->dev, (int)out->dtype, a,
                     b, &bc, numel(out));
    return bp_cuda_finish(be, "bpk_pow", rc, err);
}

/* PowKernel.cu's pow_tensor_scalar_kernel, after pow_Tensor_Scalar_out's
 * exponents 0 (fill 1) and 1 (copy). */
static bp_status pow_tensor_scalar(bp_backend_t *be, const bp_buf_t *a,
                                   double e, bp_buf_t *out, bp_error_t *err)
{
    bp_dtype_t dt = out->dtype;
    if (e == 0.0)
        return bp_buf_same_shape(a, out) ? fill(be, out, 1.0, err)
                                  : shape_error(err, "operand a", a, out);
    if (e == 1.0)
        return copy_into(be, a, out, err);
    if (bp_dtype_is_int(dt) && e < 0)
        return bp_error_set(err, BP_EINPUT, "Integers to negative integer "
                            "powers are not allowed (exponent %.17g)", e);
    if (e == 0.5)
        return unary(be, BP_OP_SQRT, a, out, err);
    if (e == -0.5)
        return unary(be, BP_OP_RSQRT, a, out, err);
    if (e == -1.0)
        return unary(be, BP_OP_RECIPROCAL, a, out, err);
    double es;
    bp_status st = scalar_storage(e, dt, &es, err);
    if (st)
        return st;
    int mode = es == 2.0    ? BPK_POW_SQUARE
               : es == 3.0  ? BPK_POW_CUBE
               : es == -2.0 ? BPK_POW_INV_SQUARE
                            : BPK_POW_GENERIC;
    return pow_launch(be, mode, tensor_arg(a), a, scalar_arg(es), NULL, out,
                      err);
}

static bp_status op_pow(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = operands(x, err);
    if (st)
        return st;
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    if (!x->b)
        return pow_tensor_scalar(be, x->a, op->b.value, out, err);
    if (!x->a) {
        /* pow_Scalar_out: a base of 1 fills ones; any other base becomes
         * a device tensor cast to the result dtype. */
        if (op->a.value == 1.0)
            return bp_buf_same_shape(x->b, out)
                       ? fill(be, out, 1.0, err)
                       : shape_error(err, "operand b", x->b, out);
        double base;
        if ((st = scalar_storage(op->a.value, out->dtype, &base, err)))
            return st;
        return pow_launch(be, BPK_POW_GENERIC, scalar_arg(base), NULL,
                          tensor_arg(x->b), x->b, out, err);
    }
    return pow_launch(be, BPK_POW_GENERIC, tensor_arg(x->a), x->a,
                      tensor_arg(x->b), x->b, out, err);
}

static bp_status op_unary(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    bp_status st = dev_of(x->a, "a", err);
    if (!st)
        st = dev_of(x->out, "out", err);
    return st ? st : unary(be, x->op->kind, x->a, x->out, err);
}

/* elem.cu's ops: the parameters converted as ATen converts them on the
 * host (Scalar::to<scalar_t>, checked). */
static bp_status op_elem(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    bp_status st = dev_of(x->a, "a", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (st)
        return st;
    if (!bp_buf_same_shape(x->a, out))
        return shape_error(err, "operand a", x->a, out);
    if (bp_dtype_is_int(dt) && !bp_op_has(op->kind, BP_OPF_INT))
        return bp_error_set(err, BP_EINPUT, "%s with integer result dtype %s",
                            bp_op_name(op->kind), dname(dt));
    bpk_elem_par_t p = {0};
    /* gelu's tanh; silu's fixed formulation is its default kernel here
     * (expf on every element, as PyTorch's CUDA silu) */
    p.form = op->form == BP_FORM_TANH;
    if (op->kind == BP_OP_ROUND && op->decimals) {
        if (bp_dtype_is_int(dt))
            return bp_error_set(err, BP_EINPUT, "round with decimals of integer dtype %s",
                                dname(dt));
        p.decimals = 1;
        p.neg = op->decimals < 0;
        double ten = pow(10.0, (double)(op->decimals < 0 ? -op->decimals : op->decimals));
        if ((st = scalar_storage(ten, dt, &p.scale, err)))
            return st;
    }
    if (op->kind == BP_OP_CLAMP) {
        p.has_lo = op->has_min;
        p.has_hi = op->has_max;
        if (op->has_min && (st = scalar_storage(bp_dtype_is_int(dt) ? trunc(op->min) : op->min,
                                                dt, &p.lo, err)))
            return st;
        if (op->has_max && (st = scalar_storage(bp_dtype_is_int(dt) ? trunc(op->max) : op->max,
                                                dt, &p.hi, err)))
            return st;
    }
    int rc = bpk_elem(bp_cuda_stream(be), (int)op->kind, out->dev, (int)dt, x->a->dev,
                      (int)x->a->dtype, numel(out), &p);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "bpk_elem(%s)", bp_op_name(op->kind));
    return bp_cuda_finish(be, kernel, rc, err);
}

/* torch.minimum / torch.maximum: MaxMinElementwiseKernel.cu, broadcast. */
static bp_status op_minmax(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = operands(x, err);
    if (st)
        return st;
    if (!x->a || !x->b)
        return bp_error_set(err, BP_EINPUT, "%s needs two tensors",
                            bp_op_name(x->op->kind));
    bool mx = x->op->kind == BP_OP_MAXIMUM;
    return binary(be, mx ? BPK_MAXIMUM : BPK_MINIMUM, mx ? "maximum" : "minimum",
                  tensor_arg(x->a), x->a, tensor_arg(x->b), x->b, x->out, err);
}

/* op_list.h's BP_FN2 functions of two float tensors, broadcast (binary.cu). */
bp_status bp_cuda_op_fn2(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = operands(x, err);
    if (st)
        return st;
    const char *name = bp_op_name(x->op->kind);
    bp_buf_t *out = x->out;
    if (!x->a || !x->b)
        return bp_error_set(err, BP_EINPUT, "%s needs two tensors", name);
    if (bp_dtype_is_int(out->dtype))
        return bp_error_set(err, BP_EINPUT, "%s with integer result dtype %s", name,
                            dname(out->dtype));
    bpk_bcast_t bc;
    if ((st = bp_cuda_bcast(out, x->a, x->b, &bc, err)))
        return st;
    int rc = bpk_binary_fn(bp_cuda_stream(be), (int)x->op->kind, out->dev, (int)out->dtype,
                           tensor_arg(x->a), tensor_arg(x->b), &bc, numel(out));
    char kernel[64];
    snprintf(kernel, sizeof kernel, "bpk_binary_fn(%s)", name);
    return bp_cuda_finish(be, kernel, rc, err);
}

/* torch.clamp(a, min, max) with tensor bounds (clamp_Tensor_out): one
 * bound is torch.maximum(a, min) or torch.minimum(a, max), both are
 * clamp_kernel_impl (compare.cu), in the common dtype. */
static bp_status op_clamp_tensor(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    if (!x->a || !x->ninputs || x->ninputs != (int)op->has_min + (int)op->has_max)
        return bp_error_set(err, BP_EINPUT, "clamp_tensor needs a and min, max or both");
    bp_status st = dev_of(x->a, "a", err);
    for (int k = 0; k < x->ninputs && !st; k++)
        st = dev_of(x->inputs[k], k || !op->has_min ? "max" : "min", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (st)
        return st;
    const bp_buf_t *lo = x->inputs[0];
    if (x->ninputs == 1)
        return binary(be, op->has_min ? BPK_MAXIMUM : BPK_MINIMUM,
                      op->has_min ? "maximum" : "minimum", tensor_arg(x->a), x->a,
                      tensor_arg(lo), lo, out, err);
    const bp_buf_t *hi = x->inputs[1];
    bpk_bcast_t bc, bch;
    if ((st = bp_cuda_bcast(out, x->a, lo, &bc, err)) ||
        (st = bp_cuda_bcast(out, hi, NULL, &bch, err)))
        return st;
    int rc = bpk_clamp(bp_cuda_stream(be), out->dev, (int)out->dtype, tensor_arg(x->a),
                       tensor_arg(lo), tensor_arg(hi), &bc, &bch, numel(out));
    return bp_cuda_finish(be, "bpk_clamp", rc, err);
}

/* full, zeros, ones: fill_ with the value as scalar_t. */
static bp_status op_full(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_status st = dev_of(x->out, "out", err);
    if (st)
        return st;
    double v = op->kind == BP_OP_FULL ? op->value : op->kind == BP_OP_ONES ? 1.0 : 0.0;
    if (bp_dtype_is_int(x->out->dtype))
        v = trunc(v);
    double s;
    if ((st = scalar_storage(v, x->out->dtype, &s, err)))
        return st;
    return fill(be, x->out, s, err);
}

/* linspace_cuda_out: nothing for 0 steps, fill_(start) for 1. */
static bp_status op_linspace(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_dtype_t dt = x->out->dtype;
    bp_status st = dev_of(x->out, "out", err);
    if (st)
        return st;
    if (bp_dtype_is_int(dt))
        return bp_error_set(err, BP_EINPUT, "linspace of integer dtype %s", dname(dt));
    if (op->steps == 1) {
        double s;
        if ((st = scalar_storage(op->start, dt, &s, err)))
            return st;
        return fill(be, x->out, s, err);
    }
    double s, e, step;
    bp_linspace_params(dt, op->start, op->end, op->steps, &s, &e, &step);
    int rc = bpk_linspace(bp_cuda_stream(be), x->out->dev, (int)dt, numel(x->out), s, e, step);
    return bp_cuda_finish(be, "bpk_linspace", rc, err);
}

/* torch.outer(a, b) = a.reshape(-1, 1) * b: the mul kernel, broadcast. */
static bp_status op_outer(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    bp_status st = operands(x, err);
    if (st)
        return st;
    const bp_buf_t *a = x->a, *b = x->b;
    bp_buf_t *out = x->out;
    if (!a || !b || a->ndim != 1 || b->ndim != 1 || out->ndim != 2 ||
        out->shape[0] != a->shape[0] || out->shape[1] != b->shape[0])
        return bp_error_set(err, BP_EINPUT,
                            "outer needs two 1-D tensors and an [m, n] result");
    bpk_bcast_t bc;
    memset(&bc, 0, sizeof bc);
    bc.ndim = 2;
    bc.shape[0] = out->shape[0];
    bc.shape[1] = out->shape[1];
    bc.stride_a[0] = 1;
    bc.stride_b[1] = 1;
    int rc = bpk_binary(bp_cuda_stream(be), BPK_MUL, out->dev,
                        (int)out->dtype, tensor_arg(a), tensor_arg(b), &bc,
                        numel(out));
    return bp_cuda_finish(be, "bpk_binary(outer)", rc, err);
}

/* Products of the dimensions before and after axis. */
static void split_at(const bp_buf_t *t, int axis, int64_t *outer,
                     int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= t->shape[d];
    for (int d = axis + 1; d < t->ndim; d++)
        *inner *= t->shape[d];
}

/* t has out's shape except, possibly, along axis. */
static bool same_but(const bp_buf_t *t, const bp_buf_t *out, int axis)
{
    if (t->ndim != out->ndim)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (d != axis && t->shape[d] != out->shape[d])
            return false;
    return true;
}

static bp_status op_concat(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    bp_buf_t *out = x->out;
    int axis = 0;
    bp_status st = dev_of(out, "out", err);
    if (!st)
        st = bp_axis_check(x->op->has_axis ? x->op->axis : 0, out->ndim, &axis,
                       err);
    if (st)
        return st;
    if (x->ninputs < 1)
        return bp_error_set(err, BP_EINPUT, "concat needs inputs");
    int64_t outer, inner, offset = 0;
    split_at(out, axis, &outer, &inner);
    /* Every input is checked before anything is launched, so a bad shape
     * never leaves a half-written output behind. */
    for (int k = 0; k < x->ninputs; k++) {
        const bp_buf_t *in = x->inputs[k];
        char which[32];
        snprintf(which, sizeof which, "input %d", k);
        if ((st = dev_of(in, which, err)))
            return st;
        if (!same_but(in, out, axis) ||
            offset + in->shape[axis] > out->shape[axis])
            return shape_error(err, which, in, out);
        offset += in->shape[axis];
    }
    if (offset != out->shape[axis])
        return bp_error_set(err, BP_EINPUT,
                            "concat inputs cover %lld of %lld positions",
                            (long long)offset, (long long)out->shape[axis]);
    offset = 0;
    for (int k = 0; k < x->ninputs; k++) {
        const bp_buf_t *in = x->inputs[k];
        int rc = bpk_concat_part(bp_cuda_stream(be), out->dev, (int)out->dtype,
                                 out->shape[axis], offset, in->dev,
                                 (int)in->dtype, in->shape[axis], outer,
                                 inner);
        if ((st = bp_cuda_finish(be, "bpk_concat_part", rc, err)))
            return st;
        offset += in->shape[axis];
    }
    return BP_OK;
}

static bp_status op_slice(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    const bp_op_t *op = x->op;
    const bp_buf_t *a = x->a;
    bp_buf_t *out = x->out;
    int axis = 0;
    bp_status st = dev_of(a, "a", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (!st)
        st = bp_axis_check(op->has_axis ? op->axis : 0, a->ndim, &axis, err);
    if (st)
        return st;
    if (!same_but(a, out, axis))
        return shape_error(err, "operand a", a, out);
    if (op->s_step <= 0)
        return bp_error_set(err, BP_EINPUT, "slice step %lld is not positive",
                            (long long)op->s_step);
    /* Python's rule for the start: negative counts from the end, then
     * clamped to [0, dim]. */
    int64_t dim = a->shape[axis], start = op->s_start;
    if (start < 0)
        start += dim;
    start = start < 0 ? 0 : start > dim ? dim : start;
    int64_t len = out->shape[axis];
    if (len > 0 && (len - 1 > (dim - 1 - start) / op->s_step || start >= dim))
        return bp_error_set(err, BP_EINPUT,
                            "slice of %lld elements from %lld step %lld "
                            "exceeds dimension %lld", (long long)len,
                            (long long)start, (long long)op->s_step,
                            (long long)dim);
    if (a->dtype != out->dtype)
        return bp_error_set(err, BP_EINTERNAL, "slice changes dtype %s to %s",
                            dname(a->dtype), dname(out->dtype));
    int64_t outer, inner;
    split_at(a, axis, &outer, &inner);
    int rc = bpk_slice(bp_cuda_stream(be), out->dev, a->dev, (int)a->dtype,
                       outer, dim, len, start, op->s_step, inner);
    return bp_cuda_finish(be, "bpk_slice", rc, err);
}

static bp_status op_rotate_half(bp_backend_t *be, const bp_exec_t *x,
                                bp_error_t *err)
{
    const bp_buf_t *a = x->a;
    bp_buf_t *out = x->out;
    bp_status st = dev_of(a, "a", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (st)
        return st;
    if (!bp_buf_same_shape(a, out) || a->dtype != out->dtype || a->ndim < 1)
        return shape_error(err, "operand a", a, out);
    int64_t d = a->shape[a->ndim - 1];
    if (d % 2)
        return bp_error_set(err, BP_EINPUT,
                            "rotate_half needs an even last dimension, not "
                            "%lld", (long long)d);
    int64_t rows = d ? numel(a) / d : 0;
    int rc = bpk_rotate_half(bp_cuda_stream(be), out->dev, a->dev,
                             (int)a->dtype, rows, d);
    return bp_cuda_finish(be, "bpk_rotate_half", rc, err);
}

static bp_status op_sum(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    const bp_buf_t *a = x->a;
    bp_buf_t *out = x->out;
    bp_status st = dev_of(a, "a", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (st)
        return st;
    int64_t outer = 1, len = numel(a), inner = 1;
    if (op->has_axis) {
        int axis = 0;
        if ((st = bp_axis_check(op->axis, a->ndim, &axis, err)))
            return st;
        split_at(a, axis, &outer, &inner);
        len = a->shape[axis];
    }
    if (numel(out) != outer * inner)
        return shape_error(err, "operand a", a, out);
    int pairwise;
    switch (op->form) {
    case BP_FORM_DEFAULT: /* Reduce.cuh's order (be_cuda_rows.c) */
        return bp_cuda_tree(be, x, BPK_TREE_SUM, outer, len, inner, 0, err);
    case BP_FORM_SEQUENTIAL: pairwise = 0; break;
    case BP_FORM_PAIRWISE: pairwise = 1; break;
    default:
        return bp_error_set(err, BP_EINPUT, "sum has no formulation '%s'",
                            bp_form_name(op->form));
    }
    int rc = bpk_sum(bp_cuda_stream(be), pairwise, out->dev, (int)out->dtype,
                     a->dev, (int)a->dtype, outer, len, inner);
    return bp_cuda_finish(be, pairwise ? "bpk_sum(pairwise)"
                                       : "bpk_sum(sequential)", rc, err);
}

/* x's a and b for a kernel: a tensor as it is, a number converted to dt
 * (scalar_t: what iter.scalar_value<scalar_t> and .to(dt) give). */
static bp_status args_as(const bp_exec_t *x, bp_dtype_t dt, bpk_arg_t *arg, bp_error_t *err)
{
    const bp_buf_t *t[2] = {x->a, x->b};
    const double v[2] = {x->op->a.value, x->op->b.value};
    for (int k = 0; k < 2; k++) {
        double s = 0.0;
        bp_status st;
        if (t[k])
            arg[k] = tensor_arg(t[k]);
        else if (dt == BP_BOOL)
            return bp_error_set(err, BP_EINTERNAL, "a number taken as bool");
        else if ((st = scalar_storage(v[k], dt, &s, err)))
            return st;
        else
            arg[k] = scalar_arg(s);
    }
    return BP_OK;
}

/* lt le gt ge eq ne: both operands in the common dtype (bp_exec_promote),
 * a number converted to it as iter.scalar_value<scalar_t> does. */
static bp_status op_compare(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    static const int codes[] = {[BP_OP_LT] = BPK_LT, [BP_OP_LE] = BPK_LE,
                                [BP_OP_GT] = BPK_GT, [BP_OP_GE] = BPK_GE,
                                [BP_OP_EQ] = BPK_EQ, [BP_OP_NE] = BPK_NE};
    bp_status st = operands(x, err);
    if (st)
        return st;
    const bp_op_t *op = x->op;
    bp_dtype_t dt = bp_exec_promote(x);
    bpk_arg_t arg[2];
    if ((st = args_as(x, dt, arg, err)))
        return st;
    bpk_bcast_t bc;
    if ((st = bp_cuda_bcast(x->out, x->a, x->b, &bc, err)))
        return st;
    int rc = bpk_compare(bp_cuda_stream(be), codes[op->kind], x->out->dev, (int)dt,
                         arg[0], arg[1], &bc, numel(x->out));
    return bp_cuda_finish(be, "bpk_compare", rc, err);
}

/* torch.where(cond, a, b): a number taken in the result dtype (.to()). */
static bp_status op_where(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    const bp_buf_t *cond = x->ninputs == 1 ? x->inputs[0] : NULL;
    bp_status st = dev_of(cond, "cond", err);
    if (!st)
        st = dev_of(out, "out", err);
    for (int k = 0; k < 2 && !st; k++)
        if ((k ? op->b.kind : op->a.kind) == BP_ARG_BUF)
            st = dev_of(k ? x->b : x->a, k ? "b" : "a", err);
    if (st)
        return st;
    if (cond->dtype != BP_BOOL)
        return bp_error_set(err, BP_EINPUT, "where's cond must be bool, not %s",
                            dname(cond->dtype));
    bpk_arg_t arg[2];
    if ((st = args_as(x, out->dtype, arg, err)))
        return st;
    bpk_bcast_t bc, bcc;
    if ((st = bp_cuda_bcast(out, x->a, x->b, &bc, err)) ||
        (st = bp_cuda_bcast(out, cond, NULL, &bcc, err)))
        return st;
    int rc = bpk_where(bp_cuda_stream(be), out->dev, (int)out->dtype, cond->dev, arg[0],
                       arg[1], &bc, &bcc, numel(out));
    return bp_cuda_finish(be, "bpk_where", rc, err);
}

/* The layout ops: the host computes each output element's source
 * (src/layout.c; an index tensor's values are read back first, so that an
 * index out of range is refused by name, where PyTorch's kernel would
 * raise a device-side assert), and one gather kernel copies. */
static bp_status op_gather(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    const bp_buf_t *from = bp_layout_source(op, x->a, x->b);
    bp_status st = dev_of(x->a, "a", err);
    if (!st && op->b.kind == BP_ARG_BUF)
        st = dev_of(x->b, "b", err);
    if (!st)
        st = dev_of(out, "out", err);
    if (st)
        return st;
    bp_buf_t ix = {0}, offs = {0};
    const bp_buf_t *index = NULL;
    if (!bp_layout_is_view(op->kind)) {
        ix = *(op->kind == BP_OP_EMBEDDING ? x->a : x->b);
        ix.data = malloc(bp_buf_nbytes(&ix) ? bp_buf_nbytes(&ix) : 1);
        st = ix.data ? be->download(be, &ix, err)
                     : bp_error_set(err, BP_ENOMEM, "out of memory");
        index = &ix;
    }
    /* one offset per run of consecutive elements (a row of embedding's
     * weight): n / run offsets to make and upload, not n */
    int64_t n = numel(out), run = (int64_t)bp_layout_run(op, x->a, x->b), nr = n / run;
    if (!st)
        st = bp_buf_alloc(&offs, BP_I64, 1, &nr, err);
    if (!st)
        st = bp_layout_runs(op, x->a, x->b, out, index, offs.data, err);
    if (!st)
        st = be->dev_alloc(be, &offs, err);
    if (!st)
        st = be->upload(be, &offs, err);
    if (!st) {
        int rc = bpk_gather(bp_cuda_stream(be), out->dev, (int)out->dtype, from->dev,
                            (int)from->dtype, offs.dev, n, run);
        st = bp_cuda_finish(be, "bpk_gather", rc, err);
    }
    if (offs.dev)
        be->dev_free(be, &offs);
    bp_buf_free(&offs);
    free(ix.data);
    return st;
}

const bp_op_fn bp_cuda_ops[BP_OP_COUNT] = {
    [BP_OP_TENSOR] = op_tensor,
    [BP_OP_LOAD] = op_load,
    [BP_OP_ARANGE] = op_arange,
    [BP_OP_UNIFORM] = op_uniform,
    [BP_OP_CAST] = op_cast,
    [BP_OP_ADD] = op_arith,
    [BP_OP_SUB] = op_arith,
    [BP_OP_MUL] = op_arith,
    [BP_OP_DIV] = op_arith,
    [BP_OP_POW] = op_pow,
    [BP_OP_RECIPROCAL] = op_unary,
    [BP_OP_EXP] = op_unary,
    [BP_OP_LOG] = op_unary,
    [BP_OP_SIN] = op_unary,
    [BP_OP_COS] = op_unary,
    [BP_OP_TANH] = op_unary,
    [BP_OP_SQRT] = op_unary,
    [BP_OP_RSQRT] = op_unary,
    [BP_OP_NEG] = op_unary,
    [BP_OP_OUTER] = op_outer,
    [BP_OP_CONCAT] = op_concat,
    [BP_OP_SLICE] = op_slice,
    [BP_OP_MATMUL] = bp_cuda_op_matmul,
    [BP_OP_SUM] = op_sum,
    [BP_OP_ROTATE_HALF] = op_rotate_half,
    [BP_OP_RESHAPE] = op_gather,
    [BP_OP_VIEW] = op_gather,
    [BP_OP_TRANSPOSE] = op_gather,
    [BP_OP_PERMUTE] = op_gather,
    [BP_OP_UNSQUEEZE] = op_gather,
    [BP_OP_SQUEEZE] = op_gather,
    [BP_OP_EXPAND] = op_gather,
    [BP_OP_INDEX_SELECT] = op_gather,
    [BP_OP_EMBEDDING] = op_gather,
    [BP_OP_LT] = op_compare,
    [BP_OP_LE] = op_compare,
    [BP_OP_GT] = op_compare,
    [BP_OP_GE] = op_compare,
    [BP_OP_EQ] = op_compare,
    [BP_OP_NE] = op_compare,
    [BP_OP_WHERE] = op_where,
    [BP_OP_SOFTMAX] = bp_cuda_op_softmax,
    [BP_OP_LOG_SOFTMAX] = bp_cuda_op_softmax,
    [BP_OP_MEAN] = bp_cuda_op_reduce,
    [BP_OP_VAR] = bp_cuda_op_reduce,
    [BP_OP_AMAX] = bp_cuda_op_reduce,
    [BP_OP_AMIN] = bp_cuda_op_reduce,
    [BP_OP_RMS_NORM] = bp_cuda_op_norm,
    [BP_OP_LAYER_NORM] = bp_cuda_op_norm,
    [BP_OP_BMM] = bp_cuda_op_bmm,
    [BP_OP_SDPA] = bp_cuda_op_sdpa,
    [BP_OP_LOGSUMEXP] = bp_cuda_op_reduce,
    [BP_OP_PROD] = bp_cuda_op_reduce,
    [BP_OP_CUMSUM] = bp_cuda_op_reduce,
    [BP_OP_SIGMOID] = op_elem,
    [BP_OP_SILU] = op_elem,
    [BP_OP_GELU] = op_elem,
    [BP_OP_ERF] = op_elem,
    [BP_OP_EXP2] = op_elem,
    [BP_OP_LOG1P] = op_elem,
    [BP_OP_ABS] = op_elem,
    [BP_OP_SIGN] = op_elem,
    [BP_OP_FLOOR] = op_elem,
    [BP_OP_CEIL] = op_elem,
    [BP_OP_ROUND] = op_elem,
    [BP_OP_TRUNC] = op_elem,
    [BP_OP_MINIMUM] = op_minmax,
    [BP_OP_MAXIMUM] = op_minmax,
    [BP_OP_CLAMP] = op_elem,
    [BP_OP_FULL] = op_full,
    [BP_OP_ZEROS] = op_full,
    [BP_OP_ONES] = op_full,
    [BP_OP_LINSPACE] = op_linspace,
    [BP_OP_RANDN] = op_normal,
    [BP_OP_NORMAL] = op_normal,
    [BP_OP_CLAMP_TENSOR] = op_clamp_tensor,
    [BP_OP_BADDBMM] = bp_cuda_op_baddbmm,
    [BP_OP_LINEAR] = bp_cuda_op_linear,
    [BP_OP_ADDMM] = bp_cuda_op_addmm,
/* op_list.h's BP_FN functions: elem.cu's kernel */
#define BP_FN(ID, ...) [BP_OP_##ID] = op_elem,
#include "op_list.h"
#undef BP_FN
#define BP_FN2(ID, ...) [BP_OP_##ID] = bp_cuda_op_fn2,
#include "op_list.h"
#undef BP_FN2
};
