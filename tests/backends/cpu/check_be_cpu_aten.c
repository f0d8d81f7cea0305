/* The CPU backend against PyTorch 2.11.0's CPU results where they involve
 * no SLEEF function, so hold on any machine: arange (ATen's chunks,
 * registers and fused multiply-adds), rsqrt (its two roundings), the
 * scalar operand rules and the division formulations, and the casts and
 * IEEE functions of check_be_cpu.c.  PyTorch's results are FNV-1a 64
 * hashes of the output bits in tests/data/torch/torch_cpu.json (written by
 * tests/refs/torch_cpu_ref.py, which states each case's expression;
 * torch_ref.h); where a rule can be stated by hand it is checked element
 * by element with MPFR too.  The SLEEF-dependent comparisons are in
 * check_be_cpu_torch.c, a binary of their own. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cpu_ref.h"
#include "torch_ref.h"

/* ---- arange ------------------------------------------------------- */

/* ATen's arange_kernel written out again from RangeFactoriesKernel.cpp and
 * Loops.h: chunks of parallel_for, two registers per step of
 * vectorized_loop, the tail by the scalar lambda; every a + b*c fused. */
static double ref_round(bp_dtype_t dt, double v)
{
    if (dt == BP_F64)
        return v;
    if (dt == BP_F32)
        return (float)v;
    return mp_round(dt, MP_SET, (float)v, 0);
}

static void ref_arange(bp_dtype_t dt, double start, double step, size_t n,
                       int threads, double *out)
{
    size_t V = dt == BP_F64 ? 4 : dt == BP_F32 ? 8 : 16;
    bool dacc = dt == BP_F64 || dt == BP_F32;
    size_t nt = (size_t)threads, grain = 32768;
    if (nt > (n + grain - 1) / grain)
        nt = (n + grain - 1) / grain;
    if (nt == 0)
        nt = 1;
    size_t chunk = (n + nt - 1) / nt;
    for (size_t b = 0; b < n; b += chunk) {
        size_t len = b + chunk < n ? chunk : n - b, idx = b;
        int64_t i = 0;
        for (; i <= (int64_t)len - (int64_t)(2 * V); i += 2 * V)
            for (int reg = 0; reg < 2; reg++, idx += V) {
                double base =
                    dacc ? ref_round(dt, fma(step, (double)idx, start))
                         : ref_round(dt, fmaf((float)step, (float)idx,
                                              (float)start));
                for (size_t k = 0; k < V; k++)
                    out[idx + k] =
                        k == 0 ? base
                        : dacc ? ref_round(dt, fma((double)k, step, base))
                               : ref_round(dt, fmaf((float)k, (float)step,
                                                    (float)base));
            }
        for (; (size_t)i < len; i++, idx++)
            out[idx] = dacc ? ref_round(dt, fma(step, (double)idx, start))
                            : ref_round(dt, fmaf((float)step, (float)idx,
                                                 (float)start));
    }
}

static const struct {
    bp_dtype_t dt;
    double start, step;
    size_t n;
    int threads;
    const char *ref; /* the case in torch_cpu.json */
} ar_cases[] = {
    /* torch.arange(0, 100, 0.3): the arange-step probe */
    {BP_F32, 0, 0.3, 334, 1, "arange.f32.0.0.3.334.t1"},
    {BP_F64, 0, 0.3, 334, 1, "arange.f64.0.0.3.334.t1"},
    {BP_BF16, -3.7, 1.1, 913, 1, "arange.bf16.-3.7.1.1.913.t1"},
    {BP_F16, 0.3, 1.3, 539, 1, "arange.f16.0.3.1.3.539.t1"},
    {BP_F32, -50, 0.37, 271, 1, "arange.f32.-50.0.37.271.t1"},
    /* inputs where fused and unfused arithmetic part ways */
    {BP_F32, -0.1416, 0.0001, 30000, 1, "arange.f32.-0.1416.0.0001.30000.t1"},
    {BP_F32, -2.9974, 1.8375, 57, 1, "arange.f32.-2.9974.1.8375.57.t1"},
    {BP_BF16, 0.1, 0.3, 4000, 1, "arange.bf16.0.1.0.3.4000.t1"},
    {BP_F16, 0.3, 1.3, 4000, 1, "arange.f16.0.3.1.3.4000.t1"},
    /* above the grain: 16 threads cut the range into 4 chunks */
    {BP_F32, 0.05, 0.37, 100000, 1, "arange.f32.0.05.0.37.100000.t1"},
    {BP_F32, 0.05, 0.37, 100000, 16, "arange.f32.0.05.0.37.100000.t16"},
    {BP_BF16, 0.05, 0.37, 100000, 16, "arange.bf16.0.05.0.37.100000.t16"},
};

START_TEST(t_arange_float)
{
    bp_backend_t *be = cpu();
    const __typeof__(ar_cases[0]) *c = &ar_cases[_i];
    bp_buf_t out = vec_of(c->dt, c->n);
    ck_assert_int_eq(
        bp_cpu_arange_fill(&out, c->start, c->step, c->threads, true, &err), BP_OK);
    double *want = malloc(c->n * sizeof *want);
    ref_arange(c->dt, c->start, c->step, c->n, c->threads, want);
    for (size_t i = 0; i < c->n; i++)
        ck_assert_msg(bp_buf_get(&out, i) == want[i],
                      "arange(%g, step %g) %s [%zu]: got %a, want %a",
                      c->start, c->step, bp_dtype_name(c->dt), i,
                      bp_buf_get(&out, i), want[i]);
    free(want);
    ck_hash(&out, torch_ref(c->ref), c->ref);
    ref_free(&out);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_arange_fused_hand)
{
    /* f64 arange(0, 100, 0.3), lane 3 of the second register: base 1.2 +
     * 3 * 0.3 fused is 2.1 (0x4000cccccccccccd); rounding 3 * 0.3 first
     * would give 2.0999999999999996 (...cc). */
    bp_backend_t *be = cpu();
    bp_buf_t a = arange(be, BP_F64, 0, 0.3, 334);
    ck_bits(&a, 7, 0x4000cccccccccccdull);
    ck_bits(&a, 4, 0x3ff3333333333333ull);
    /* bf16 lanes are not fused (PyTorch 2.11, regress fz777-0094): lane 3
     * of arange(-1, 41.17, 1/3) is -1 + 3 * 0.33333334f, the product
     * rounded to 1.0f first: 0; fused it would be 2.98e-8 (0x3300). */
    bp_buf_t b = arange(be, BP_BF16, -1, 1.0 / 3.0, 127);
    ck_bits(&b, 3, 0x0000);
    ck_bits(&b, 4, 0x3eab); /* -1 + 4 * 0.33333334f = 0.33333337f */
    bp_backend_close(be);
}
END_TEST
START_TEST(t_pow_int)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = arange(be, BP_I64, -5, 1, 11);
    bp_buf_t sq = op2(be, BP_OP_POW, &a, NAN, NULL, 3, BP_I64);
    for (int i = 0; i < 11; i++)
        ck_assert_int_eq((int64_t)bits(&sq, i), (i - 5) * (i - 5) * (i - 5));
    bp_op_t op = {.kind = BP_OP_POW};
    bp_buf_t out = vec_of(BP_I64, 11);
    ck_assert_int_eq(run_op(be, &op, &a, NAN, NULL, -1, &out), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_rsqrt_tail)
{
    bp_backend_t *be = cpu();
    bp_buf_t t = t50(be, BP_BF16);
    bp_buf_t r = op2(be, BP_OP_RSQRT, &t, NAN, NULL, NAN, BP_BF16);
    ck_hash(&r, torch_ref("rsqrt.bf16.t50"), "rsqrt bf16");
    /* Hand rule: the first 32 go through float, the last 18 round sqrt to
     * bf16 first (c10's std::sqrt(BFloat16)). */
    for (size_t i = 0; i < 50; i++) {
        double x = bp_buf_get(&t, i);
        double s = mp_round(i < 32 ? BP_F32 : BP_BF16, MP_SQRT, x, 0);
        double q = mp_round(BP_F32, MP_RECIP, s, 0);
        ck_bits(&r, i, encode(BP_BF16, mp_round(BP_BF16, MP_SET, q, 0)));
    }
    bp_buf_t h = t50(be, BP_F16);
    bp_buf_t rh = op2(be, BP_OP_RSQRT, &h, NAN, NULL, NAN, BP_F16);
    ck_hash(&rh, torch_ref("rsqrt.f16.t50"), "rsqrt f16");
    bp_backend_close(be);
}
END_TEST
/* ---- scalar operands ----------------------------------------------- */

static const struct {
    bp_op_kind_t k;
    bool scalar_first;
    double s;
    bp_dtype_t dt;
    const char *ref; /* the case in torch_cpu.json */
} scal_cases[] = {
    {BP_OP_DIV, false, 10, BP_BF16, "div.bf16.t50_10"},
    {BP_OP_DIV, false, 3, BP_F16, "div.f16.t50_3"},
    {BP_OP_DIV, true, 3, BP_BF16, "rdiv.bf16.3_t50"}, /* 3 / t */
    {BP_OP_DIV, true, 3, BP_F32, "rdiv.f32.3_t50"},
    {BP_OP_ADD, false, 0.3, BP_BF16, "add.bf16.t50_0.3"},
    {BP_OP_SUB, true, 0.3, BP_F16, "rsub.f16.0.3_t50"}, /* 0.3 - t */
    {BP_OP_MUL, false, 0.3, BP_BF16, "mul.bf16.t50_0.3"},
};

START_TEST(t_scalar_operands)
{
    bp_backend_t *be = cpu();
    const __typeof__(scal_cases[0]) *c = &scal_cases[_i];
    bp_buf_t t = t50(be, c->dt);
    bp_buf_t r = c->scalar_first ? op2(be, c->k, NULL, c->s, &t, NAN, c->dt)
                                 : op2(be, c->k, &t, NAN, NULL, c->s, c->dt);
    ck_hash(&r, torch_ref(c->ref), c->ref);
    /* The same by hand with MPFR: add/sub round the scalar to the dtype,
     * mul/div take it in float, s / t is reciprocal then multiply. */
    for (size_t i = 0; i < 50; i++) {
        double x = bp_buf_get(&t, i), want;
        double sf = (float)c->s, sd = mp_round(c->dt, MP_SET, sf, 0);
        switch (c->k) {
        case BP_OP_ADD: want = mp_round(c->dt, MP_ADD, x, sd); break;
        case BP_OP_SUB:
            want = c->scalar_first ? mp_round(c->dt, MP_SUB, sd, x)
                                   : mp_round(c->dt, MP_SUB, x, sd);
            break;
        case BP_OP_MUL:
            want = mp_round(c->dt, MP_SET, mp_round(BP_F32, MP_MUL, x, sf), 0);
            break;
        default:
            if (c->scalar_first)
                want = mp_round(c->dt, MP_SET,
                                mp_round(BP_F32, MP_MUL,
                                         mp_round(c->dt, MP_RECIP, x, 0), sf),
                                0);
            else
                want = mp_round(c->dt, MP_SET, mp_round(BP_F32, MP_DIV, x, sf),
                                0);
        }
        ck_bits(&r, i, encode(c->dt, want));
    }
    bp_backend_close(be);
}
END_TEST

/* A one-element tensor of another dtype as the second operand of a
 * bf16/f16 mul or div: ATen's CPU kernels see iter.is_scalar(2) and read
 * it with original_scalar_value<float>, so its value enters in float, not
 * rounded to the dtype (BinaryOpsKernel.cpp, PyTorch 2.1 and later). */
static const struct {
    bp_op_kind_t k;
    bp_dtype_t dt, sdt;
    double s;
} orig_cases[] = {
    {BP_OP_MUL, BP_BF16, BP_F32, 1.00390625 + 0x1p-20}, /* bf16: 1.0 */
    {BP_OP_MUL, BP_BF16, BP_I64, 257},                  /* bf16: 256 */
    {BP_OP_DIV, BP_F16, BP_F64, 3.3},
    {BP_OP_DIV, BP_BF16, BP_I32, -1028},
    {BP_OP_ADD, BP_BF16, BP_F32, 1.00390625 + 0x1p-20}, /* add: rounded */
};

START_TEST(t_scalar_tensor_operand)
{
    bp_backend_t *be = cpu();
    const __typeof__(orig_cases[0]) *c = &orig_cases[_i];
    bp_buf_t t = t50(be, c->dt);
    bp_buf_t s = alloc(c->sdt, 0, NULL);
    bp_buf_set(&s, 0, c->s);
    bp_buf_t r = op2(be, c->k, &t, NAN, &s, NAN, c->dt);
    double sf = (float)c->s, sd = mp_round(c->dt, MP_SET, sf, 0);
    ck_assert(sf != sd); /* the case tells the two readings apart */
    int changed = 0;
    for (size_t i = 0; i < 50; i++) {
        double x = bp_buf_get(&t, i), want;
        if (c->k == BP_OP_ADD)
            want = mp_round(c->dt, MP_ADD, x, sd);
        else
            want = mp_round(c->dt, MP_SET,
                            mp_round(BP_F32, c->k == BP_OP_MUL ? MP_MUL : MP_DIV,
                                     x, sf),
                            0);
        double other = mp_round(c->dt, c->k == BP_OP_MUL   ? MP_MUL
                                        : c->k == BP_OP_DIV ? MP_DIV
                                                            : MP_ADD,
                                x, sd);
        changed += encode(c->dt, want) != encode(c->dt, other);
        ck_bits(&r, i, encode(c->dt, want));
    }
    if (c->k != BP_OP_ADD)
        ck_assert_int_gt(changed, 0);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_div_forms)
{
    bp_backend_t *be = cpu();
    bp_buf_t t = t50(be, BP_BF16);
    bp_buf_t u = op2(be, BP_OP_ADD, &t, NAN, NULL, 1, BP_BF16);
    bp_buf_t rt = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, &t, NAN, &u, NAN,
                       BP_BF16, 1, t.shape);
    bp_buf_t rs = op2f(be, BP_OP_DIV, BP_FORM_RECIPROCAL, NULL, 3, &u, NAN,
                       BP_BF16, 1, t.shape);
    bp_buf_t ts = op2f(be, BP_OP_DIV, BP_FORM_TRUE, NULL, 3, &u, NAN, BP_BF16,
                       1, t.shape);
    for (size_t i = 0; i < 50; i++) {
        double a = bp_buf_get(&t, i), b = bp_buf_get(&u, i);
        double inv = mp_round(BP_F32, MP_RECIP, b, 0);
        ck_bits(&rt, i,
                mp_bits(BP_BF16, MP_SET, mp_round(BP_F32, MP_MUL, a, inv), 0));
        ck_bits(&rs, i,
                mp_bits(BP_BF16, MP_SET, mp_round(BP_F32, MP_MUL, 3, inv), 0));
        ck_bits(&ts, i, mp_bits(BP_BF16, MP_DIV, 3, b));
    }
    bp_op_t op = {.kind = BP_OP_DIV, .form = BP_FORM_PAIRWISE};
    bp_buf_t out = vec_of(BP_BF16, 50);
    ck_assert_int_eq(run_op(be, &op, &t, NAN, NULL, 3, &out), BP_EINPUT);
    bp_backend_close(be);
}
END_TEST

/* rsqrt of every f16 bit pattern: sqrt and the division both IEEE, no
 * SLEEF. */
START_TEST(t_rsqrt_all)
{
    bp_backend_t *be = cpu();
    bp_buf_t a = every16(BP_F16);
    bp_buf_t r = op2(be, BP_OP_RSQRT, &a, NAN, NULL, NAN, BP_F16);
    ck_hash(&r, torch_ref("rsqrt.f16.all"), "rsqrt of every f16");
    bp_backend_close(be);
}
END_TEST

void be_cpu_aten_tests(TCase *tc)
{
    tcase_add_loop_test(tc, t_arange_float, 0,
                        (int)(sizeof ar_cases / sizeof ar_cases[0]));
    tcase_add_test(tc, t_arange_fused_hand);
    tcase_add_test(tc, t_pow_int);
    tcase_add_test(tc, t_rsqrt_tail);
    tcase_add_test(tc, t_rsqrt_all);
    tcase_add_loop_test(tc, t_scalar_operands, 0,
                        (int)(sizeof scal_cases / sizeof scal_cases[0]));
    tcase_add_loop_test(tc, t_scalar_tensor_operand, 0,
                        (int)(sizeof orig_cases / sizeof orig_cases[0]));
    tcase_add_test(tc, t_div_forms);
}
