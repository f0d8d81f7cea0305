/* Activations, rounding, clamping, minimum/maximum and the fill and
 * linspace factories on the CPU, as ATen's CPU kernels compute them
 * (PyTorch 2.x; where 1.13 differs, probes/README.md says so).
 *
 * cpu_kernel_vec kernels whose vector and scalar lambdas differ, element by
 * element through the lane model of be_cpu.h (fp32 formulas for f32, bf16
 * and f16, which compute in float; f64 in double):
 *   sigmoid  vector ((0 - x).exp() + 1).reciprocal(), SLEEF's exp;
 *            tail 1 / (1 + std::exp(-x)), glibc (UnaryOpsKernel.cpp)
 *   silu     vector x / (1 + x.neg().exp()); tail x / (1 + std::exp(-x))
 *            (Activation.cpp silu_kernel).  Formulation fixed (the layer
 *            stack's): x / (1 + exp(-x)) with SLEEF's scalar exp for every
 *            element
 *   gelu     vector x * 0.5 * (1 + (x * M_SQRT1_2).erf()), SLEEF's erf
 *            (f64: that of the SLEEF PyTorch bundles, sleef_erf.h);
 *            tail with std::erf.  tanh: inner = kBeta * (x + kKappa * x^3)
 *            (GCC contracts x + kKappa * x^3 into an fma, -ffp-contract=
 *            fast), 0.5 * x * (1 + tanh(inner)), SLEEF's tanh or glibc's
 *            (Activation.cpp GeluKernelImpl).  The vector erf is ATen's
 *            own polynomial (Vectorized<float>::erf), not SLEEF's.  This
 *            kernel serves the erf form only where oneDNN does not:
 *            gelu_out_cpu hands a contiguous fp32 tensor of more than one
 *            element (bf16, fp16 where ideep's checks pass) to oneDNN's
 *            eltwise_gelu_erf (be_cpu_onednn.c), PyTorch 2.11
 *   exp2     vector a.exp2(), SLEEF's exp2 (Sleef_exp2f8_u10, on AVX512
 *            Sleef_exp2f16_u10; double Sleef_exp2d4/d8_u10); tail
 *            std::exp2, glibc (UnaryOpsKernel.cpp exp2_kernel, registered
 *            for AVX-512 too).  PyTorch 1.13 takes std::exp2 on every element
 *   minimum, maximum  vector _mm256_min_ps/_mm256_max_ps(a, b) with NaN
 *            where either is (vec::minimum/maximum: for equal operands the
 *            second, so maximum(-0, +0) is +0); tail NaN, else std::min/
 *            std::max (the first for equal operands: -0) (BinaryOpsKernel.cpp)
 *   linspace every element by the scalar lambda (cpu_serial_kernel, no
 *            vector part since PyTorch 2.x; 1.13 filled registers with
 *            Vectorized::arange from each register's first element):
 *            idx < steps/2 ? start + step*idx : end - step*(steps-idx-1)
 *            with step = (end - start) / (steps - 1) in scalar_t
 *            (RangeFactoriesKernel.cpp linspace_kernel), contracted to fmas
 *            for float and double, every operation rounded to bf16/f16
 * ATen's DEFAULT build (--cpu-isa default) has no fma: linspace's and
 * gelu tanh's multiply-adds round twice there (fz20261125-0000, -0084).
 * The exact ones need no lanes: abs, sign ((0 < x) - (x < 0): 0 for NaN
 * and both zeros), floor, ceil, trunc, round (nearbyint: half to even;
 * decimals d: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d,
 * in float for f32/bf16/f16), clamp (std::min(std::max(x, min), max) and
 * vec::clamp agree: NaN passes, an equal bound leaves x), full/zeros/ones
 * (the value as c10 converts it). */
#include "be_cpu.h"

#include <math.h>
#include <stdlib.h>

#include "op.h"

/* Whether ATen builds op k's kernel for AVX-512 too (its width and
 * SLEEF's 16-lane entry points on the AVX512 capability): sigmoid, silu
 * and gelu are (PyTorch 1.13 under ATEN_CPU_CAPABILITY=avx512 puts their
 * scalar tails after two 16-lane registers), and exp2
 * (ALSO_REGISTER_AVX512_DISPATCH). */
static bool wide_kernel(bp_op_kind_t k)
{
    return k == BP_OP_SIGMOID || k == BP_OP_SILU || k == BP_OP_GELU || k == BP_OP_EXP2;
}

static float act_f32(const bp_cpu_t *c, const bp_op_t *op, float x, bool vec, bool wide)
{
    switch (op->kind) {
    case BP_OP_SIGMOID:
        if (vec)
            return 1.0f / (bp_cpu_lanef(c, BP_OP_EXP, wide, 0.0f - x) + 1.0f);
        return 1.0f / (1.0f + expf(-x));
    case BP_OP_SILU:
        if (op->form == BP_FORM_FIXED)
            return x / (1.0f + bp_cpu_scalarf(c, BP_OP_EXP, -x));
        if (vec)
            return x / (1.0f + bp_cpu_lanef(c, BP_OP_EXP, wide, -x));
        return x / (1.0f + expf(-x));
    case BP_OP_EXP2:
        return vec ? bp_cpu_lanef(c, BP_OP_EXP2, wide, x) : exp2f(x);
    default: /* gelu */
        if (op->form == BP_FORM_TANH) {
            const float kBeta = (float)(M_SQRT2 * M_2_SQRTPI * 0.5);
            const float kKappa = 0.044715f;
            float x_cube = x * x * x;
            float inner = kBeta * (float)bp_cpu_madd(c->simd, true, kKappa, x_cube, x);
            float t = vec ? bp_cpu_lanef(c, BP_OP_TANH, wide, inner) : tanhf(inner);
            return 0.5f * x * (1.0f + t);
        } else {
            const float kAlpha = (float)M_SQRT1_2;
            float e = vec && c->math != BP_CPU_MATH_LIBM ? bp_cpu_erf_poly(x * kAlpha)
                                                         : erff(x * kAlpha);
            return x * 0.5f * (1.0f + e);
        }
    }
}

static double act_f64(const bp_cpu_t *c, const bp_op_t *op, double x, bool vec, bool wide)
{
    switch (op->kind) {
    case BP_OP_SIGMOID:
        if (vec)
            return 1.0 / (bp_cpu_lane(c, BP_OP_EXP, wide, 0.0 - x) + 1.0);
        return 1.0 / (1.0 + exp(-x));
    case BP_OP_SILU:
        if (op->form == BP_FORM_FIXED)
            return x / (1.0 + bp_cpu_scalar(c, BP_OP_EXP, -x));
        if (vec)
            return x / (1.0 + bp_cpu_lane(c, BP_OP_EXP, wide, -x));
        return x / (1.0 + exp(-x));
    case BP_OP_EXP2:
        return vec ? bp_cpu_lane(c, BP_OP_EXP2, wide, x) : exp2(x);
    default:
        if (op->form == BP_FORM_TANH) {
            const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5;
            const double kKappa = 0.044715;
            double x_cube = x * x * x;
            double inner = kBeta * bp_cpu_madd(c->simd, false, kKappa, x_cube, x);
            double t = vec ? bp_cpu_lane(c, BP_OP_TANH, wide, inner) : tanh(inner);
            return 0.5 * x * (1.0 + t);
        } else {
            const double kAlpha = M_SQRT1_2;
            double e = vec ? bp_cpu_lane(c, BP_OP_ERF, wide, x * kAlpha) : erf(x * kAlpha);
            return x * 0.5 * (1.0 + e);
        }
    }
}

bp_status bp_cpu_op_act(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    double *v;
    if (!x->a)
        return bp_error_set(err, BP_EINPUT, "%s needs a tensor operand",
                            bp_op_name(x->op->kind));
    if (!bp_dtype_info(dt)->is_float)
        return bp_error_set(err, BP_EINPUT, "%s of integer dtype %s", bp_op_name(x->op->kind),
                            bp_dtype_name(dt));
    bp_status s = bp_cpu_expand(x->a, out, dt, &v, err);
    if (s)
        return s;
    bool wide = wide_kernel(x->op->kind);
    bp_cpu_loop_t l = bp_cpu_loop(out, x->a, NULL);
    size_t lanes = bp_cpu_lanes(dt, wide ? c->vec_bytes : BP_CPU_VEC_BYTES);
    /* gelu's erf form of more than one element goes to oneDNN
     * (Activation.cpp gelu_out_cpu), whatever ATen's capability */
    bool onednn = x->op->kind == BP_OP_GELU && x->op->form != BP_FORM_TANH &&
                  bp_cpu_onednn_gelu(c->onednn, dt, out->numel);
    for (size_t i = 0; i < out->numel; i++) {
        bool vec = c->simd && bp_cpu_in_vector(&l, i, lanes);
        double r = dt == BP_F64 ? act_f64(c, x->op, v[i], vec, wide)
                   : onednn && dt == BP_BF16
                       ? (double)bp_cpu_onednn_bf16_out(
                             c->onednn, bp_cpu_onednn_gelu_erf(c->onednn, (float)v[i]))
                   : onednn ? (double)bp_cpu_onednn_gelu_erf(c->onednn, (float)v[i])
                               : (double)act_f32(c, x->op, (float)v[i], vec, wide);
        bp_cpu_store(out, i, r);
    }
    free(v);
    return BP_OK;
}

static double round_decimals(bp_dtype_t dt, double x, int64_t d)
{
    int64_t m = d < 0 ? -d : d;
    if (dt == BP_F64) {
        double t = pow(10.0, (double)m);
        return d < 0 ? nearbyint(x / t) * t : nearbyint(x * t) / t;
    }
    float t = (float)pow(10.0, (double)m), f = (float)x;
    return d < 0 ? nearbyintf(f / t) * t : nearbyintf(f * t) / t;
}

static double exact_float(const bp_op_t *op, bp_dtype_t dt, double x)
{
    switch (op->kind) {
    case BP_OP_ABS: return fabs(x);
    case BP_OP_SIGN: return (double)((0 < x) - (x < 0));
    case BP_OP_FLOOR: return floor(x);
    case BP_OP_CEIL: return ceil(x);
    case BP_OP_TRUNC: return trunc(x);
    case BP_OP_ROUND: return op->decimals ? round_decimals(dt, x, op->decimals) : nearbyint(x);
    default: /* clamp, the bounds as scalar_t */
        if (op->has_min) {
            double lo = bp_cpu_round(dt, op->min);
            x = x < lo ? lo : x;
        }
        if (op->has_max) {
            double hi = bp_cpu_round(dt, op->max);
            x = hi < x ? hi : x;
        }
        return x;
    }
}

static int64_t exact_int(const bp_op_t *op, bp_dtype_t dt, int64_t x)
{
    switch (op->kind) {
    case BP_OP_ABS: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case BP_OP_SIGN: return (0 < x) - (x < 0);
    case BP_OP_CLAMP:
        if (op->has_min && x < (int64_t)bp_cpu_round(dt, op->min))
            x = (int64_t)bp_cpu_round(dt, op->min);
        if (op->has_max && x > (int64_t)bp_cpu_round(dt, op->max))
            x = (int64_t)bp_cpu_round(dt, op->max);
        return x;
    default: return x; /* floor, ceil, trunc, round of an integer */
    }
}

bp_status bp_cpu_op_exact1(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    bp_status s;
    if (!x->a)
        return bp_error_set(err, BP_EINPUT, "%s needs a tensor operand",
                            bp_op_name(x->op->kind));
    if (bp_dtype_is_int(dt)) {
        if (x->op->kind == BP_OP_ROUND && x->op->decimals)
            return bp_error_set(err, BP_EINPUT, "round with decimals of integer dtype %s",
                                bp_dtype_name(dt));
        int64_t *v;
        if ((s = bp_cpu_expand_i64(x->a, out, &v, err)))
            return s;
        for (size_t i = 0; i < out->numel; i++)
            bp_cpu_store_i64(out, i, exact_int(x->op, dt, v[i]));
        free(v);
        return BP_OK;
    }
    double *v;
    if ((s = bp_cpu_expand(x->a, out, dt, &v, err)))
        return s;
    for (size_t i = 0; i < out->numel; i++)
        bp_cpu_store(out, i, exact_float(x->op, dt, v[i]));
    free(v);
    return BP_OK;
}

/* torch.maximum (mx) or torch.minimum of tensors ta and tb into out. */
static bp_status minmax(const bp_buf_t *ta, const bp_buf_t *tb, bool mx, bp_buf_t *out,
                        bp_error_t *err)
{
    bp_dtype_t dt = out->dtype;
    bp_status s = BP_OK;
    if (bp_dtype_is_int(dt)) {
        int64_t *a = NULL, *b = NULL;
        if (!(s = bp_cpu_expand_i64(ta, out, &a, err)) &&
            !(s = bp_cpu_expand_i64(tb, out, &b, err)))
            for (size_t i = 0; i < out->numel; i++)
                bp_cpu_store_i64(out, i, mx ? (a[i] < b[i] ? b[i] : a[i])
                                            : (b[i] < a[i] ? b[i] : a[i]));
        free(a);
        free(b);
        return s;
    }
    double *a = NULL, *b = NULL;
    if ((s = bp_cpu_expand(ta, out, dt, &a, err)) ||
        (s = bp_cpu_expand(tb, out, dt, &b, err))) {
        free(a);
        return s;
    }
    bp_cpu_loop_t l = bp_cpu_loop(out, ta, tb);
    size_t lanes = bp_cpu_lanes(dt, BP_CPU_VEC_BYTES);
    for (size_t i = 0; i < out->numel; i++) {
        double p = a[i], q = b[i], r;
        if (isnan(p) || isnan(q))
            r = NAN;
        else if (bp_cpu_in_vector(&l, i, lanes)) /* _mm256_max_ps(p, q) */
            r = mx ? (p > q ? p : q) : (p < q ? p : q);
        else /* std::max(p, q), std::min(p, q) */
            r = mx ? (p < q ? q : p) : (q < p ? q : p);
        bp_cpu_store(out, i, r);
    }
    free(a);
    free(b);
    return BP_OK;
}

bp_status bp_cpu_op_minmax(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    if (!x->a || !x->b)
        return bp_error_set(err, BP_EINPUT, "%s needs two tensors", bp_op_name(x->op->kind));
    return minmax(x->a, x->b, x->op->kind == BP_OP_MAXIMUM, x->out, err);
}

/* clamp_tensor: with one bound, torch.maximum(a, min) or torch.minimum(a,
 * max) (clamp_Tensor_out's maximum_stub / minimum_stub); with both,
 * clamp_kernel_impl: vector vec::minimum(vec::maximum(a, min), max) (NaN
 * where any operand is; equal values give the bound: -0 clamped to [+0, 1]
 * is +0), tail NaN where min or max is, else std::min(std::max(a, min),
 * max) (a NaN a passes; equal values give a); min > max gives max. */
bp_status bp_cpu_op_clamp_tensor(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    if (!x->a || x->ninputs != (int)op->has_min + (int)op->has_max || !x->ninputs)
        return bp_error_set(err, BP_EINPUT, "clamp_tensor needs a and min, max or both");
    if (x->ninputs == 1)
        return minmax(x->a, x->inputs[0], op->has_min, out, err);
    const bp_buf_t *t[3] = {x->a, x->inputs[0], x->inputs[1]};
    bp_status s = BP_OK;
    if (bp_dtype_is_int(dt)) {
        int64_t *v[3] = {NULL, NULL, NULL};
        for (int k = 0; k < 3 && !s; k++)
            s = bp_cpu_expand_i64(t[k], out, &v[k], err);
        for (size_t i = 0; !s && i < out->numel; i++) {
            int64_t m = v[0][i] < v[1][i] ? v[1][i] : v[0][i];
            bp_cpu_store_i64(out, i, v[2][i] < m ? v[2][i] : m);
        }
        for (int k = 0; k < 3; k++)
            free(v[k]);
        return s;
    }
    double *v[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && !s; k++)
        s = bp_cpu_expand(t[k], out, dt, &v[k], err);
    if (!s) {
        bp_cpu_loop_t l = bp_cpu_loop_n(out, t, 3);
        size_t lanes = bp_cpu_lanes(dt, BP_CPU_VEC_BYTES);
        for (size_t i = 0; i < out->numel; i++) {
            double p = v[0][i], lo = v[1][i], hi = v[2][i], m, r;
            if (bp_cpu_in_vector(&l, i, lanes)) { /* _mm256_max_ps(p, lo), min_ps(m, hi) */
                m = p > lo ? p : lo;
                r = isnan(p) || isnan(lo) || isnan(hi) ? NAN : m < hi ? m : hi;
            } else {
                m = p < lo ? lo : p;
                r = isnan(lo) || isnan(hi) ? NAN : hi < m ? hi : m;
            }
            bp_cpu_store(out, i, r);
        }
    }
    for (int k = 0; k < 3; k++)
        free(v[k]);
    return s;
}

bp_status bp_cpu_op_full(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    (void)err;
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    double v = op->kind == BP_OP_FULL ? op->value : op->kind == BP_OP_ONES ? 1.0 : 0.0;
    v = bp_cpu_round(out->dtype, v);
    for (size_t i = 0; i < out->numel; i++)
        bp_cpu_store(out, i, v);
    return BP_OK;
}

/* One element of linspace at index idx (the scalar lambda), its
 * multiply-adds fused as the AVX2 build's, or not (the DEFAULT build). */
static double lin_at(bp_dtype_t dt, bool fused, double s, double e, double st, int64_t steps,
                     int64_t idx)
{
    int64_t half = steps / 2;
    double k = (double)(idx < half ? idx : steps - idx - 1);
    switch (dt) {
    case BP_F64:
    case BP_F32:
        return idx < half ? bp_cpu_madd(fused, dt == BP_F32, st, k, s)
                          : bp_cpu_madd(fused, dt == BP_F32, -st, k, e);
    default: /* c10 BFloat16/Half arithmetic: the index converted first */
        if (idx < half)
            return bp_cpu_round(dt, s + bp_cpu_round(dt, st * bp_cpu_round(dt, (double)idx)));
        return bp_cpu_round(
            dt, e - bp_cpu_round(dt, st * bp_cpu_round(dt, (double)(steps - idx - 1))));
    }
}

bp_status bp_cpu_op_linspace(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bool fused = ((const bp_cpu_t *)be->state)->simd;
    const bp_op_t *op = x->op;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    size_t n = out->numel;
    if (!bp_dtype_info(dt)->is_float)
        return bp_error_set(err, BP_EINPUT, "linspace of integer dtype %s", bp_dtype_name(dt));
    if (n == 1) { /* fill_(start) */
        bp_cpu_store(out, 0, bp_cpu_round(dt, op->start));
        return BP_OK;
    }
    double s, e, st;
    bp_linspace_params(dt, op->start, op->end, (int64_t)n, &s, &e, &st);
    for (size_t i = 0; i < n; i++)
        bp_cpu_store(out, i, lin_at(dt, fused, s, e, st, (int64_t)n, (int64_t)i));
    return BP_OK;
}
