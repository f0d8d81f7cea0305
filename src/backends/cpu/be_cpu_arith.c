/* Arithmetic on the CPU: add, sub, mul, div, outer, arange, matmul, sum.
 *
 * add/sub (ufunc add, alpha +-1): a Python scalar operand is first cast to
 *   the result dtype by TensorIterator (bf16 + 0.3 adds bf16(0.3)); the sum
 *   is computed in float for f32/bf16/f16 and rounded once.
 * mul, div by a scalar (BinaryOpsKernel.cpp mul_kernel, div_true_kernel):
 *   for bf16/f16 the scalar is taken in float (original_scalar_value), not
 *   rounded to the dtype; for f32 it is rounded to float; one rounding of
 *   the result.  div formulation `true` (the CPU default) divides;
 *   `reciprocal` multiplies by the reciprocal of the number taken in
 *   double and rounded once to opmath, as PyTorch's CUDA kernel does
 *   (bp_div_scalar_reciprocal); by a tensor, by 1/b rounded in float
 *   (f64: double).
 *   The same path takes a one-element second operand of another dtype
 *   (a 0-D f32, f64 or integer tensor against a bf16/f16 one: the kernels
 *   test iter.is_scalar(2), and original_scalar_value reads the tensor as
 *   it was before TensorIterator cast it): its value in float, not rounded
 *   to the dtype (bf16 t * torch.tensor(1.0039) multiplies by 1.0039f).
 * scalar / tensor (Tensor.__rtruediv__): reciprocal(b) rounded to the
 *   dtype, then times the scalar as mul does; `true` divides the scalar,
 *   cast to the dtype, by b; `reciprocal` is s * (1/b in float).
 * outer(a, b): a[i] * b[j], one rounding (torch.outer is a broadcast mul).
 * arange (RangeFactoriesKernel.cpp arange_kernel): accscalar_t is double for
 *   f32/f64 and float for bf16/f16 (acc_type<T, false>), start and step
 *   converted to it.  at::parallel_for(0, n, GRAIN_SIZE) splits the range
 *   over the threads; each chunk runs cpu_serial_kernel_vec, whose
 *   vectorized_loop fills two registers per step while 2*V elements remain,
 *   each from Vectorized<T>::arange(base, step): base = T(start + step*idx)
 *   once per register, lane k = T(base + k*step) computed in accscalar_t
 *   (lane 0 is base itself); the last n % (2*V) elements of a chunk are
 *   T(start + step*idx).  Each a + b*c written as one expression there
 *   is one fused multiply-add, as PyTorch's compiler emits it; a bf16/f16
 *   lane is not (see arange_chunk).  The kernel is
 *   registered for AVX2 only, so V is 8 for f32, 16 for bf16/f16, 4 for
 *   f64 on every x86 host.  Integer dtypes: exact, start and step
 *   truncated to int64.
 * matmul (and linear, addmm: be_cpu_fused.c): fp32 where PyTorch's
 *   sgemm call (the operands' layout: b a contiguous [k, n] or a
 *   transposed view of an [n, k]) falls in a class whose MKL order was
 *   fitted, on MKL's modelled path: that order (mkl_sgemm.h).  Elsewhere not what PyTorch does (MKL/oneDNN blocking
 *   varies by kernel and build): the one CPU GEMM's fixed order
 *   (cpu_gemm.h).  For out[i][j] the accumulator starts at +0 and takes
 *   acc = fma(a[i][k], b[k][j], acc) for k ascending, in float for
 *   f32/bf16/f16 (inputs widened exactly, one rounding to the dtype at the
 *   end) and in double for f64; a's leading dimensions fold into m
 *   (torch.matmul); integers wrap in int64.
 * sum (SumKernel.cpp sum_kernel_impl): by default ATen's cascade_sum order
 *   (be_cpu_sum.c), bf16/f16 accumulated in float; `sum(dtype=fp32)` of
 *   bf16/f16 sums the input converted to fp32 (make_reduction's in_dtype
 *   is the out dtype on the CPU), so fp32's cascade.  `sequential` (left
 *   to right) and `pairwise` (sum(x[0:n/2]) + sum(x[n/2:n]), one element
 *   as the base case) are pinned orders, accumulating in float for
 *   f32/bf16/f16, double for f64.  Integers in int64 (wrapping: no order
 *   to pin).  The result rounds to the dtype once; optional axis.
 * lt le gt ge eq ne (BinaryCompareKernel.cpp, comparison ops built with
 *   build_comparison_op): both operands converted to the common dtype
 *   (TensorIterator's promote_inputs_to_common_dtype; a Python number is
 *   a wrapped 0-D double tensor, .to(common dtype), i.e. through float for
 *   bf16/f16), then compared exactly in it: `a < b` on scalar_t, NaN
 *   unordered (only ne is true). */
#include "be_cpu.h"
#include "be_cpu_rows.h"
#include "cpu_gemm.h"
#include "mkl_sgemm.h"

#include <math.h>
#include <stdlib.h>

static bp_status binary_int(const bp_exec_t *x, bp_error_t *err)
{
    bp_buf_t *out = x->out;
    bp_op_kind_t k = x->op->kind;
    if (k == BP_OP_DIV)
        return bp_error_set(err, BP_EINTERNAL,
                            "true division gives a float, not %s",
                            bp_dtype_name(out->dtype));
    int64_t *as = NULL, *bs = NULL;
    bp_status s = BP_OK;
    if (x->a)
        s = bp_cpu_expand_i64(x->a, out, &as, err);
    if (!s && x->b)
        s = bp_cpu_expand_i64(x->b, out, &bs, err);
    for (size_t i = 0; !s && i < out->numel; i++) {
        uint64_t a = (uint64_t)(as ? as[i] : (int64_t)x->op->a.value);
        uint64_t b = (uint64_t)(bs ? bs[i] : (int64_t)x->op->b.value);
        uint64_t r = k == BP_OP_ADD ? a + b : k == BP_OP_SUB ? a - b : a * b;
        bp_cpu_store_i64(out, i, (int64_t)r);
    }
    free(as);
    free(bs);
    return s;
}

/* A scalar operand as the kernel sees it. */
static double scalar_as(bp_op_kind_t k, bp_dtype_t dt, double v, bool is_a,
                        bp_form_t form)
{
    bool f32 = bp_cpu_opmath_f32(dt);
    if (k == BP_OP_ADD || k == BP_OP_SUB ||
        (k == BP_OP_DIV && is_a && form == BP_FORM_TRUE))
        return bp_cpu_round(dt, v);    /* cast to the common dtype */
    return f32 ? (double)(float)v : v; /* opmath: original_scalar_value */
}

static double compute_f32(bp_op_kind_t k, bp_form_t form, bool scalar_a,
                          bp_dtype_t dt, float a, float b)
{
    switch (k) {
    case BP_OP_ADD: return a + b;
    case BP_OP_SUB: return a - b;
    case BP_OP_MUL: return a * b;
    default: break;
    }
    if (form == BP_FORM_RECIPROCAL)
        return a * (1.0f / b);
    if (scalar_a && form != BP_FORM_TRUE)
        return (float)bp_cpu_round(dt, 1.0f / b) * a;
    return a / b;
}

static double compute_f64(bp_op_kind_t k, bp_form_t form, bool scalar_a,
                          double a, double b)
{
    switch (k) {
    case BP_OP_ADD: return a + b;
    case BP_OP_SUB: return a - b;
    case BP_OP_MUL: return a * b;
    default: break;
    }
    if (form == BP_FORM_RECIPROCAL)
        return a * (1.0 / b);
    if (scalar_a && form != BP_FORM_TRUE)
        return (1.0 / b) * a;
    return a / b;
}

/* A one-element b of another dtype than a bf16/f16 mul or div (default or
 * true): true and its value in float (original_scalar_value<float>: one
 * rounding, also from int64) in *v.  Not with an explicit dtype, which
 * converts the operands first (`op(a.to(dtype), b.to(dtype))`). */
static bool original_scalar(const bp_exec_t *x, bp_dtype_t dt, double *v)
{
    const bp_buf_t *b = x->b;
    bp_op_kind_t k = x->op->kind;
    if ((dt != BP_BF16 && dt != BP_F16) || !b || b->numel != 1 ||
        b->dtype == dt || x->op->has_dtype)
        return false;
    if (k != BP_OP_MUL &&
        !(k == BP_OP_DIV && x->op->form != BP_FORM_RECIPROCAL))
        return false;
    if (b->dtype == BP_I64)
        *v = (float)(int64_t)bp_buf_bits(b, 0);
    else if (b->dtype == BP_I32)
        *v = (float)(int32_t)(uint32_t)bp_buf_bits(b, 0);
    else
        *v = (float)bp_buf_get(b, 0);
    return true;
}

/* t shares memory with out other than as out itself (a view at another
 * offset or of another shape): element i of out may be written before t's
 * element at i's offset is read. */
static bool overlaps(const bp_buf_t *t, const bp_buf_t *out)
{
    size_t tb = t->numel * bp_dtype_info(t->dtype)->size,
           ob = out->numel * bp_dtype_info(out->dtype)->size;
    const char *tp = t->data, *op = out->data;
    if (tp == op && t->numel == out->numel && t->dtype == out->dtype)
        return false; /* in place, element by element */
    return tp < op + ob && op < tp + tb;
}

/* An operand of out's float dtype (f32, bf16, f16) read in place, or a
 * scalar: a walk over out for a tensor. */
static bool typed_operand(const bp_buf_t *t, const bp_buf_t *out, bp_cpu_walk_t *w)
{
    return !t || (t->dtype == out->dtype && !overlaps(t, out) &&
                  bp_cpu_walk_init(w, t, out, NULL) == BP_OK);
}

/* The loop of bp_cpu_op_binary with loads and stores of out's float dtype
 * and no copies, where every operand allows it (ta, tb: the tensors read,
 * NULL for the scalars av, bv).  The same bits: each element computed in
 * float from the same values and rounded once to the dtype. */
static bool binary_typed(bp_buf_t *out, const bp_buf_t *ta, const bp_buf_t *tb, double av,
                         double bv, bp_op_kind_t k, bp_form_t form, bool sa)
{
    bp_dtype_t dt = out->dtype;
    bp_cpu_walk_t wa = {0}, wb = {0};
    if ((dt != BP_F32 && dt != BP_BF16 && dt != BP_F16) || !typed_operand(ta, out, &wa) ||
        !typed_operand(tb, out, &wb))
        return false;
    float fa = (float)av, fb = (float)bv;
    for (size_t i = 0; i < out->numel; i++) {
        if (ta) {
            fa = bp_dtype_ldf(dt, ta->data, (size_t)wa.pos);
            bp_cpu_walk_next(&wa);
        }
        if (tb) {
            fb = bp_dtype_ldf(dt, tb->data, (size_t)wb.pos);
            bp_cpu_walk_next(&wb);
        }
        bp_dtype_stf(dt, out->data, i, (float)compute_f32(k, form, sa, dt, fa, fb));
    }
    return true;
}

bp_status bp_cpu_op_binary(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    bp_op_kind_t k = x->op->kind;
    bp_form_t form = x->op->form;
    if (!x->a && !x->b)
        return bp_error_set(err, BP_EINPUT, "%s needs a tensor operand",
                            bp_op_name(k));
    if (form != BP_FORM_DEFAULT &&
        (k != BP_OP_DIV ||
         (form != BP_FORM_TRUE && form != BP_FORM_RECIPROCAL)))
        return bp_error_set(err, BP_EINPUT, "%s has no formulation '%s'",
                            bp_op_name(k), bp_form_name(form));
    if (bp_dtype_is_int(dt))
        return binary_int(x, err);
    double *as = NULL, *bs = NULL, bv = 0.0;
    bool bo = x->a && original_scalar(x, dt, &bv);
    bool sa = !x->a;
    double av = sa ? scalar_as(k, dt, x->op->a.value, true, form) : 0.0;
    if (!x->b)
        bv = scalar_as(k, dt, x->op->b.value, false, form);
    if (k == BP_OP_DIV && form == BP_FORM_RECIPROCAL && !x->b) {
        k = BP_OP_MUL; /* CUDA's tensor / number, pinned */
        bv = bp_div_scalar_reciprocal(x->op->b.value, dt);
    }
    if (binary_typed(out, x->a, bo ? NULL : x->b, av, bv, k, form, sa))
        return BP_OK;
    bp_status s = BP_OK;
    if (x->a)
        s = bp_cpu_expand(x->a, out, dt, &as, err);
    if (!s && x->b && !bo)
        s = bp_cpu_expand(x->b, out, dt, &bs, err);
    if (s)
        goto done;
    for (size_t i = 0; i < out->numel; i++) {
        double a = as ? as[i] : av, b = bs ? bs[i] : bv;
        double r = bp_cpu_opmath_f32(dt)
                       ? compute_f32(k, form, sa, dt, (float)a, (float)b)
                       : compute_f64(k, form, sa, a, b);
        bp_cpu_store(out, i, r);
    }
done:
    free(as);
    free(bs);
    return s;
}

bp_status bp_cpu_op_outer(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    const bp_buf_t *a = x->a, *b = x->b;
    if (!a || !b || a->ndim != 1 || b->ndim != 1 || out->ndim != 2 ||
        out->shape[0] != a->shape[0] || out->shape[1] != b->shape[0])
        return bp_error_set(err, BP_EINPUT, "outer needs two 1-D tensors");
    bp_buf_t col = *a, row = *b;
    col.ndim = 2;
    col.shape[1] = 1;
    row.ndim = 2;
    row.shape[0] = 1;
    row.shape[1] = b->shape[0];
    x = &(bp_exec_t){
        .op = &(bp_op_t){.kind = BP_OP_MUL, .has_dtype = x->op->has_dtype},
        .a = &col, .b = &row, .out = out};
    return bp_cpu_op_binary(be, x, err);
}

/* a*b + c as one fused multiply-add, or (fused false) rounded twice: ATen's
 * DEFAULT build targets x86-64 without FMA instructions. */
static double madd(double a, double b, double c, bool fused)
{
    if (fused)
        return fma(a, b, c);
    volatile double ab = a * b; /* never contracted by this compiler */
    return ab + c;
}

static float maddf(float a, float b, float c, bool fused)
{
    if (fused)
        return fmaf(a, b, c);
    volatile float ab = a * b;
    return ab + c;
}

/* One chunk [p, e) of ATen's arange_kernel.  PyTorch's x86 builds compile
 * the AVX2 kernel with g++ -O3 -mavx2 -mfma, whose default
 * -ffp-contract=fast fuses start + step*idx and base + k*step into FMAs
 * (fused); f64 arange from PyTorch 2.11 shows it (lane 3 of arange(0, 100,
 * 0.3) is 2.1, not 2.0999999999999996).  A bf16/f16 lane is never fused:
 * Vectorized16<T>::arange's base + k*step adds through c10's
 * operator+(BFloat16, float), a function of its own, to the product
 * k*step already rounded to float (PyTorch 2.11, AVX-512 host:
 * bf16 arange(-1, 41.17, 1/3) element 3 is -1 + 1.0f = 0, not the fused
 * 2.98e-8; 1.13 likewise).  The DEFAULT build (no FMA) rounds the product
 * and the sum apart everywhere, with the same 32-byte registers. */
static void arange_chunk(bp_buf_t *out, double start, double step, size_t p,
                         size_t e, bool fused)
{
    bp_dtype_t dt = out->dtype;
    size_t n = e - p, v = bp_cpu_lanes(dt, BP_CPU_VEC_BYTES), i = 0;
    if (dt == BP_F32 || dt == BP_F64) {
        for (; i + 2 * v <= n; i += 2 * v)
            for (size_t r = i; r < i + 2 * v; r += v) {
                double base = bp_cpu_round(
                    dt, madd(step, (double)(p + r), start, fused));
                for (size_t k = 0; k < v; k++)
                    bp_cpu_store(out, p + r + k,
                                 k ? madd((double)k, step, base, fused)
                                   : base);
            }
        for (; i < n; i++)
            bp_cpu_store(out, p + i,
                         madd(step, (double)(p + i), start, fused));
        return;
    }
    float fs = (float)start, fd = (float)step;
    for (; i + 2 * v <= n; i += 2 * v)
        for (size_t r = i; r < i + 2 * v; r += v) {
            float base = (float)bp_cpu_round(
                dt, maddf(fd, (float)(p + r), fs, fused));
            for (size_t k = 0; k < v; k++)
                bp_cpu_store(out, p + r + k,
                             k ? maddf((float)k, fd, base, false) : base);
        }
    for (; i < n; i++)
        bp_cpu_store(out, p + i, maddf(fd, (float)(p + i), fs, fused));
}

bp_status bp_cpu_arange_fill(bp_buf_t *out, double start, double step,
                             int threads, bool fused, bp_error_t *err)
{
    size_t n = out->numel;
    if (bp_dtype_is_int(out->dtype)) {
        if (!(fabs(start) < 0x1p63 && fabs(step) < 0x1p63))
            return bp_error_set(err, BP_EINPUT,
                                "arange start or step out of int64 range");
        int64_t s0 = (int64_t)start, d = (int64_t)step;
        if (d == 0)
            return bp_error_set(err, BP_EINPUT, "arange step must be nonzero");
        for (size_t i = 0; i < n; i++)
            bp_cpu_store_i64(out, i,
                             (int64_t)((uint64_t)s0 + (uint64_t)d * i));
        return BP_OK;
    }
    if (!bp_dtype_info(out->dtype)->is_float)
        return bp_error_set(err, BP_EINTERNAL, "arange of dtype %s",
                            bp_dtype_name(out->dtype));
    /* at::parallel_for: one chunk per thread, never below the grain. */
    size_t nt = threads > 1 ? (size_t)threads : 1;
    size_t most = (n + BP_CPU_GRAIN - 1) / BP_CPU_GRAIN;
    if (nt > most)
        nt = most ? most : 1;
    size_t chunk = (n + nt - 1) / nt;
    for (size_t p = 0; p < n; p += chunk)
        arange_chunk(out, start, step, p, p + chunk < n ? p + chunk : n,
                     fused);
    return BP_OK;
}

bp_status bp_cpu_op_arange(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    if (x->out->ndim != 1)
        return bp_error_set(err, BP_EINTERNAL, "arange output is not 1-D");
    return bp_cpu_arange_fill(x->out, x->op->start, x->op->step,
                              BP_CPU_THREADS, c->isa != BP_CPU_ISA_DEFAULT,
                              err);
}

bp_mkl_order_t bp_cpu_mkl_order(const bp_cpu_t *c, const bp_op_t *op, bp_gemm_layout_t layout,
                                const bp_buf_t *a, const bp_buf_t *b, const bp_buf_t *in,
                                const bp_buf_t *out)
{
    bool lin = op->kind == BP_OP_LINEAR;
    if ((layout != BP_GEMM_LAYOUT_NN && layout != BP_GEMM_LAYOUT_TN) || !a || !b ||
        a->dtype != BP_F32 || b->dtype != BP_F32 || out->dtype != BP_F32 ||
        (in && in->dtype != BP_F32) || a->ndim < 2 || b->ndim != 2)
        return BP_MKL_UNFITTED;
    /* addmm's alpha and beta reach sgemm; only 1 and 0 or 1 were fitted
     * (PyTorch copies the input into C only where beta is not 0) */
    if (op->kind == BP_OP_ADDMM && (op->alpha != 1.0 || (op->beta != 0.0 && op->beta != 1.0)))
        return BP_MKL_UNFITTED;
    int64_t k = a->shape[a->ndim - 1], n = b->shape[lin ? 0 : 1];
    int64_t m = k ? (int64_t)(a->numel / (size_t)k) : 0;
    /* addmm_impl_cpu_ computes the row-major result as its column-major
     * transpose: sgemm's m is n, its n is m, transa where b is a view */
    return bp_mkl_sgemm_order(c->mkl, layout == BP_GEMM_LAYOUT_TN, false, n, m, k);
}

const bp_buf_t *bp_cpu_gemm_input(const bp_op_t *op, const bp_buf_t *const *inputs,
                                  int ninputs)
{
    if (op->kind == BP_OP_LINEAR)
        return ninputs > 2 ? inputs[2] : NULL;
    if (op->kind == BP_OP_ADDMM)
        return op->beta != 0.0 ? inputs[0] : NULL;
    return NULL;
}

bool bp_cpu_gemm_pytorch(const bp_backend_t *be, const bp_probe_t *p, size_t i,
                         const bp_buf_t *bufs)
{
    if (!be || be->op != bp_cpu_ops || i >= p->nops)
        return false;
    const bp_op_t *op = &p->ops[i];
    const bp_buf_t *a, *b, *in[3] = {NULL, NULL, NULL};
    if (op->kind == BP_OP_MATMUL) {
        if (op->a.kind != BP_ARG_BUF || op->b.kind != BP_ARG_BUF)
            return false;
        a = &bufs[op->a.buf];
        b = &bufs[op->b.buf];
    } else if ((op->kind == BP_OP_LINEAR || op->kind == BP_OP_ADDMM) && op->ninputs <= 3) {
        for (int k = 0; k < op->ninputs; k++)
            in[k] = &bufs[op->inputs[k]];
        bool lin = op->kind == BP_OP_LINEAR;
        a = in[lin ? 0 : 1];
        b = in[lin ? 1 : 2];
    } else {
        return false;
    }
    return bp_cpu_mkl_order(be->state, op, bp_probe_gemm_layout(p, bufs, i), a, b,
                            bp_cpu_gemm_input(op, in, op->ninputs), &bufs[i]) != BP_MKL_UNFITTED;
}

bp_status bp_cpu_mkl_gemm(bp_mkl_order_t o, const bp_exec_t *x, const bp_buf_t *a,
                          const bp_buf_t *b, bp_error_t *err)
{
    bp_buf_t *out = x->out;
    bool lin = x->op->kind == BP_OP_LINEAR;
    const bp_buf_t *in = bp_cpu_gemm_input(x->op, x->inputs, x->ninputs);
    size_t k = (size_t)a->shape[a->ndim - 1], n = (size_t)b->shape[lin ? 0 : 1];
    size_t m = k ? a->numel / k : 0;
    const float *av = a->data, *bv = b->data;
    float *ov = out->data;
    double *iv = NULL;
    bp_status s;
    if (in && (s = bp_cpu_expand(in, out, BP_F32, &iv, err)))
        return s;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float c0 = iv ? (float)iv[i * n + j] : 0.0f;
            ov[i * n + j] = bp_mkl_sgemm_dot(o, k, av + i * k, 1, lin ? bv + j * k : bv + j,
                                             lin ? 1 : n, iv ? &c0 : NULL);
        }
    free(iv);
    return BP_OK;
}

bp_status bp_cpu_op_matmul(bp_backend_t *be, const bp_exec_t *x,
                           bp_error_t *err)
{
    bp_buf_t *out = x->out;
    const bp_buf_t *a = x->a, *b = x->b;
    if (!a || !b || a->ndim < 2 || b->ndim != 2 || out->ndim != a->ndim ||
        a->shape[a->ndim - 1] != b->shape[0] || out->shape[out->ndim - 1] != b->shape[1])
        return bp_error_set(err, BP_EINPUT,
                            "matmul needs [..., m, k] and [k, n] tensors");
    /* torch.matmul folds a's leading dimensions into m */
    size_t kk = (size_t)b->shape[0], n = (size_t)b->shape[1],
           m = kk ? a->numel / kk : (n ? out->numel / n : 0);
    bp_dtype_t dt = out->dtype;
    bp_status s;
    if (dt == BP_F32 && a->dtype == BP_F32 && b->dtype == BP_F32) {
        bp_mkl_order_t o = bp_cpu_mkl_order(be->state, x->op, x->gemm_layout, a, b, NULL, out);
        if (o != BP_MKL_UNFITTED)
            return bp_cpu_mkl_gemm(o, x, a, b, err);
    }
    if (bp_dtype_is_int(dt)) {
        int64_t *av, *bv;
        if ((s = bp_cpu_expand_i64(a, a, &av, err)))
            return s;
        if ((s = bp_cpu_expand_i64(b, b, &bv, err))) {
            free(av);
            return s;
        }
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                uint64_t acc = 0;
                for (size_t p = 0; p < kk; p++)
                    acc += (uint64_t)av[i * kk + p] * (uint64_t)bv[p * n + j];
                bp_cpu_store_i64(out, i * n + j, (int64_t)acc);
            }
        free(av);
        free(bv);
        return BP_OK;
    }
    double *av, *bv, *c = malloc((out->numel ? out->numel : 1) * sizeof *c);
    if (!c)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    if ((s = bp_cpu_expand(a, a, dt, &av, err))) {
        free(c);
        return s;
    }
    if ((s = bp_cpu_expand(b, b, dt, &bv, err))) {
        free(av);
        free(c);
        return s;
    }
    s = bp_cpu_gemm_vals(m, n, kk, av, bv, false, bp_cpu_opmath_f32(dt), c, err);
    for (size_t i = 0; !s && i < out->numel; i++)
        bp_cpu_store(out, i, c[i]);
    free(av);
    free(bv);
    free(c);
    return s;
}

static float pairwise_f(const double *v, size_t n)
{
    if (n == 0)
        return 0.0f;
    if (n == 1)
        return (float)v[0];
    size_t h = n / 2;
    return pairwise_f(v, h) + pairwise_f(v + h, n - h);
}

static double pairwise_d(const double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    if (n == 1)
        return v[0];
    size_t h = n / 2;
    return pairwise_d(v, h) + pairwise_d(v + h, n - h);
}

double bp_cpu_sum_vals(const double *v, size_t n, bool pairwise, bool f32)
{
    if (f32) {
        float acc = 0.0f;
        if (pairwise)
            return pairwise_f(v, n);
        for (size_t t = 0; t < n; t++)
            acc += (float)v[t];
        return acc;
    }
    double acc = 0.0;
    if (pairwise)
        return pairwise_d(v, n);
    for (size_t t = 0; t < n; t++)
        acc += v[t];
    return acc;
}

static int64_t sum_i64(const int64_t *v, size_t n, bool pairwise)
{
    uint64_t acc = 0; /* wrapping: the order cannot matter */
    (void)pairwise;
    for (size_t i = 0; i < n; i++)
        acc += (uint64_t)v[i];
    return (int64_t)acc;
}

bp_status bp_cpu_op_sum(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    const bp_buf_t *a = x->a;
    bp_buf_t *out = x->out;
    bp_form_t form = x->op->form;
    if (!a)
        return bp_error_set(err, BP_EINPUT, "sum needs a tensor operand");
    if (form != BP_FORM_DEFAULT && form != BP_FORM_SEQUENTIAL &&
        form != BP_FORM_PAIRWISE)
        return bp_error_set(err, BP_EINPUT, "sum has no formulation '%s'",
                            bp_form_name(form));
    bool pairwise = form == BP_FORM_PAIRWISE;
    size_t outer = 1, len = a->numel, inner = 1;
    if (x->op->has_axis) {
        int ax;
        if (!bp_axis_norm(x->op->axis, a->ndim, &ax))
            return bp_error_set(err, BP_EINPUT, "sum axis %d out of range",
                                x->op->axis);
        outer = 1;
        for (int d = 0; d < ax; d++)
            outer *= (size_t)a->shape[d];
        len = (size_t)a->shape[ax];
        for (int d = ax + 1; d < a->ndim; d++)
            inner *= (size_t)a->shape[d];
    }
    if (out->numel != outer * inner)
        return bp_error_set(err, BP_EINTERNAL,
                            "sum output has %zu elements, not %zu", out->numel,
                            outer * inner);
    bp_dtype_t dt = out->dtype;
    bool isint = bp_dtype_is_int(dt);
    double *v = NULL, *seq = NULL;
    int64_t *iv = NULL, *iseq = NULL;
    /* the operand as a cast to the result dtype gives it: sum(dtype=i32)
     * of floats is a.to(int32).sum(), INT32_MIN for inf and NaN */
    bp_buf_t as = *a;
    as.dtype = dt;
    bp_status s = isint ? bp_cpu_expand_i64(a, &as, &iv, err)
                        : bp_cpu_expand(a, a, dt, &v, err);
    if (s)
        return s;
    if (isint && dt == BP_I32 && bp_dtype_is_int(a->dtype))
        for (size_t i = 0; i < a->numel; i++) /* an i64 operand wraps */
            iv[i] = (int32_t)(uint32_t)iv[i];
    if (isint)
        iseq = malloc((len ? len : 1) * sizeof *iseq);
    else
        seq = malloc((len ? len : 1) * sizeof *seq);
    if (!iseq && !seq) {
        s = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    if (!isint && form == BP_FORM_DEFAULT) {
        /* seq holds the outer * inner sums */
        free(seq);
        seq = malloc((out->numel ? out->numel : 1) * sizeof *seq);
        if (!seq) {
            s = bp_error_set(err, BP_ENOMEM, "out of memory");
            goto done;
        }
        bp_cpu_cascade_sum(v, outer, len, inner, dt, seq);
        for (size_t j = 0; j < out->numel; j++)
            bp_cpu_store(out, j, seq[j]);
        goto done;
    }
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            size_t j = o * inner + in;
            for (size_t t = 0; t < len; t++) {
                size_t src = (o * len + t) * inner + in;
                if (isint)
                    iseq[t] = iv[src];
                else
                    seq[t] = v[src];
            }
            if (isint) {
                bp_cpu_store_i64(out, j, sum_i64(iseq, len, pairwise));
            } else {
                bp_cpu_store(out, j,
                             bp_cpu_sum_vals(seq, len, pairwise, bp_cpu_opmath_f32(dt)));
            }
        }
done:
    free(v);
    free(seq);
    free(iv);
    free(iseq);
    return s;
}

/* The comparison's answer from the order of its operands (NaN: none of
 * the three holds, so only ne is true). */
static bool compare(bp_op_kind_t k, bool lt, bool eq, bool gt)
{
    switch (k) {
    case BP_OP_LT: return lt;
    case BP_OP_LE: return lt || eq;
    case BP_OP_GT: return gt;
    case BP_OP_GE: return gt || eq;
    case BP_OP_EQ: return eq;
    default: return !eq;
    }
}

bp_status bp_cpu_op_compare(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = bp_exec_promote(x);
    bool isint = bp_dtype_is_int(dt);
    bp_buf_t common = *out; /* out's shape, the common dtype */
    common.dtype = dt;
    const bp_buf_t *t[2] = {x->a, x->b};
    const bp_arg_t *arg[2] = {&x->op->a, &x->op->b};
    double *v[2] = {NULL, NULL}, s[2] = {0, 0};
    int64_t *iv[2] = {NULL, NULL}, is[2] = {0, 0};
    bp_status st = BP_OK;
    for (int k = 0; k < 2 && !st; k++) {
        if (t[k])
            st = isint ? bp_cpu_expand_i64(t[k], &common, &iv[k], err)
                       : bp_cpu_expand(t[k], &common, dt, &v[k], err);
        else if (isint)
            is[k] = (int64_t)arg[k]->value; /* integral: op.c checks */
        else
            s[k] = bp_cpu_round(dt, arg[k]->value);
    }
    for (size_t i = 0; !st && i < out->numel; i++) {
        bool r;
        if (isint) {
            int64_t p = iv[0] ? iv[0][i] : is[0], q = iv[1] ? iv[1][i] : is[1];
            r = compare(x->op->kind, p < q, p == q, p > q);
        } else {
            double p = v[0] ? v[0][i] : s[0], q = v[1] ? v[1][i] : s[1];
            r = compare(x->op->kind, p < q, p == q, p > q);
        }
        bp_dtype_store_bits(BP_BOOL, out->data, i, r);
    }
    for (int k = 0; k < 2; k++) {
        free(v[k]);
        free(iv[k]);
    }
    return st;
}
