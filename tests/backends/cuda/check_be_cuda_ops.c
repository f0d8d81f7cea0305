/* CUDA backend tests: the seed formulations (tensor / scalar, 10 ** x, the
 * Llama-2 RoPE cache) and the elementwise arithmetic (add, sub, mul, div,
 * pow, the unary functions) in f32, bf16 and f16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cuda_harness.h"

static const bp_dtype_t floats[] = {BP_F32, BP_BF16, BP_F16};
#define NFLOATS 3

/* ---- builders ---- */

void tb_arange(bp_dtype_t dt, double start, double end, double step,
               bp_buf_t *out)
{
    /* PyTorch's length: ceil((end - start) / step) in double. */
    int64_t n = (int64_t)ceil((end - start) / step);
    tb_make1(out, dt, n);
    bp_op_t op = tb_op(BP_OP_ARANGE);
    op.start = start;
    op.end = end;
    op.step = step;
    tb_exec(&op, NULL, NULL, out);
}

/* torch.tensor(9., dtype=dt) / 10 with the given formulation. */
void tb_seed_div(bp_dtype_t dt, bp_form_t form, bp_buf_t *out)
{
    bp_buf_t a;
    tb_make(&a, dt, 0, NULL);
    bp_buf_set(&a, 0, 9.0);
    tb_upload(&a);
    tb_make(out, dt, 0, NULL);
    bp_op_t op = tb_op(BP_OP_DIV);
    tb_arg_scalar(&op.b, 10.0);
    op.form = form;
    tb_exec(&op, &a, NULL, out);
    tb_drop(&a);
}

/* 10 ** (arange(0, 10, dtype=dt) / 10); dt BP_I64 gives the integer
 * arange of the seed repro, whose division promotes to f32. */
void tb_seed_inv_freq(bp_dtype_t dt, bp_buf_t *e, bp_buf_t *p)
{
    bp_buf_t r;
    bp_dtype_t fdt = dt == BP_I64 ? BP_F32 : dt;
    tb_arange(dt, 0, 10, 1, &r);
    tb_make1(e, fdt, 10);
    bp_op_t div = tb_op(BP_OP_DIV);
    tb_arg_scalar(&div.b, 10.0);
    tb_exec(&div, &r, NULL, e);
    tb_make1(p, fdt, 10);
    bp_op_t pw = tb_op(BP_OP_POW);
    tb_arg_scalar(&pw.a, 10.0);
    tb_exec(&pw, NULL, e, p);
    tb_drop(&r);
}

/* transformers 4.36 LlamaRotaryEmbedding, in f32:
 *   inv_freq = 1.0 / (base ** (arange(0, dim, 2).float() / dim))
 *   t = arange(positions, dtype=float32); freqs = outer(t, inv_freq)
 *   emb = cat((freqs, freqs), dim=-1); cos = emb.cos(); sin = emb.sin() */
void tb_rope(int dim, int64_t positions, double base, bp_buf_t *inv,
             bp_buf_t *emb, bp_buf_t *cosb, bp_buf_t *sinb)
{
    bp_buf_t r, rf, e, p, t, freqs;
    int64_t h = dim / 2;
    tb_arange(BP_I64, 0, dim, 2, &r);
    tb_make1(&rf, BP_F32, h);
    bp_op_t cast = tb_op(BP_OP_CAST);
    tb_exec(&cast, &r, NULL, &rf);
    tb_make1(&e, BP_F32, h);
    bp_op_t div = tb_op(BP_OP_DIV);
    tb_arg_scalar(&div.b, dim);
    tb_exec(&div, &rf, NULL, &e);
    tb_make1(&p, BP_F32, h);
    bp_op_t pw = tb_op(BP_OP_POW);
    tb_arg_scalar(&pw.a, base);
    tb_exec(&pw, NULL, &e, &p);
    tb_make1(inv, BP_F32, h);
    bp_op_t rdiv = tb_op(BP_OP_DIV);
    tb_arg_scalar(&rdiv.a, 1.0);
    tb_exec(&rdiv, NULL, &p, inv);
    tb_arange(BP_F32, 0, (double)positions, 1, &t);
    int64_t fs[2] = {positions, h}, es[2] = {positions, 2 * h};
    tb_make(&freqs, BP_F32, 2, fs);
    bp_op_t outer = tb_op(BP_OP_OUTER);
    tb_exec(&outer, &t, inv, &freqs);
    tb_make(emb, BP_F32, 2, es);
    bp_op_t cat = tb_op(BP_OP_CONCAT);
    cat.has_axis = true;
    cat.axis = -1;
    const bp_buf_t *ins[2] = {&freqs, &freqs};
    bp_error_t err = {0};
    tb_check(tb_try(&cat, NULL, NULL, ins, 2, emb, &err), &err, "concat");
    tb_make(cosb, BP_F32, 2, es);
    tb_make(sinb, BP_F32, 2, es);
    bp_op_t c = tb_op(BP_OP_COS), s = tb_op(BP_OP_SIN);
    tb_exec(&c, emb, NULL, cosb);
    tb_exec(&s, emb, NULL, sinb);
    tb_drop(&r);
    tb_drop(&rf);
    tb_drop(&e);
    tb_drop(&p);
    tb_drop(&t);
    tb_drop(&freqs);
}

/* ---- seed formulations ---- */

/* 1/10 in f32 is 0x3dcccccd = 0.100000001490116...; 9 times that is
 * 0.9000000134..., above the midpoint 0.90000000596 between 0x3f666666
 * and 0x3f666667, so the reciprocal formulation gives 0x3f666667, while
 * 9/10 = 0.9 lies below the midpoint: 0x3f666666. */
START_TEST(t_seed_div)
{
    static const struct {
        bp_form_t form;
        uint32_t want;
    } cases[] = {{BP_FORM_DEFAULT, 0x3f666667},
                 {BP_FORM_RECIPROCAL, 0x3f666667},
                 {BP_FORM_TRUE, 0x3f666666}};
    for (size_t c = 0; c < 3; c++) {
        bp_buf_t out;
        tb_seed_div(BP_F32, cases[c].form, &out);
        tb_expect_bits(&out, 0, cases[c].want, "tensor(9.) / 10");
        tb_drop(&out);
    }
    for (int d = 1; d < NFLOATS; d++) {
        bp_buf_t out;
        tb_seed_div(floats[d], BP_FORM_DEFAULT, &out);
        tb_expect_bits(&out, 0, tb_bits_of(floats[d], 9.0f * (1.0f / 10.0f)),
                       "tensor(9.) / 10, reciprocal in float");
        tb_drop(&out);
        tb_seed_div(floats[d], BP_FORM_TRUE, &out);
        tb_expect_bits(&out, 0, tb_bits_of(floats[d], 9.0f / 10.0f),
                       "tensor(9.) / 10, true");
        tb_drop(&out);
    }
}
END_TEST

/* arange(0, 65536).float() / 0.001, the case that showed which
 * reciprocal PyTorch takes: 1.0 / 0.001 in double is 1000 exactly (the
 * double nearest 0.001 is 0.001000000000000000020817), so every quotient is
 * x * 1000.0f, rounded once; 1.0f / 0.001f would be 999.99994f
 * (0x4479ffff), which gives other bits for every x but 0.  f64 multiplies
 * by the double 1000. */
START_TEST(t_div_decimal)
{
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t x, out;
        tb_make1(&x, dt, 65536);
        for (size_t i = 0; i < 65536; i++)
            bp_buf_set(&x, i, tb_round(dt, (float)i));
        tb_upload(&x);
        tb_make1(&out, dt, 65536);
        bp_op_t op = tb_op(BP_OP_DIV);
        tb_arg_scalar(&op.b, 0.001);
        tb_exec(&op, &x, NULL, &out);
        size_t old_form = 0;
        for (size_t i = 0; i < 65536; i++) {
            float v = (float)bp_buf_get(&x, i);
            uint64_t want = tb_bits_of(dt, v * 1000.0f);
            if (bp_buf_bits(&out, i) != want)
                tb_expect_bits(&out, i, want, "x / 0.001");
            old_form += want == tb_bits_of(dt, v * (1.0f / 0.001f));
        }
        if (dt == BP_F32)
            ck_assert_msg(old_form == 1, "x * (1.0f / 0.001f) agrees at %zu "
                          "of 65536 (PyTorch 2.11: at x = 0 only)", old_form);
        tb_drop(&x);
        tb_drop(&out);
    }
}
END_TEST

/* 10 ** (arange(0, 10) / 10).  Index 9: the exponent is 0x3f666667 (see
 * t_seed_div); 10^0.90000003576 = 7.94328300135 lies nearer 0x40fe2f60
 * (7.9432830810546875) than 0x40fe2f5f (7.9432826042), and powf rounds it
 * correctly.  Index 4: the exponent is 0.4f exactly (4 * 0.1f is exact);
 * 10^0.4000000060 = 2.51188646598 rounds correctly to 0x4020c2bf, but
 * CUDA's powf (2 ulp) returns 0x4020c2c0, the value PyTorch on CUDA
 * reports. */
START_TEST(t_seed_inv_freq)
{
    bp_buf_t e, p;
    tb_seed_inv_freq(BP_I64, &e, &p);
    tb_expect_bits(&e, 4, 0x3ecccccd, "arange(0, 10) / 10");
    tb_expect_bits(&e, 9, 0x3f666667, "arange(0, 10) / 10");
    tb_expect_bits(&p, 4, 0x4020c2c0, "10 ** (arange(0, 10) / 10)");
    tb_expect_bits(&p, 9, 0x40fe2f60, "10 ** (arange(0, 10) / 10)");
    for (size_t i = 0; i < 10; i++) {
        double x = bp_buf_get(&e, i);
        ck_assert_msg(tb_ulps(&p, i, pow(10.0, x)) <= 2,
                      "10 ** %a: %a is more than 2 ulp from %a", x,
                      bp_buf_get(&p, i), pow(10.0, x));
    }
    tb_drop(&e);
    tb_drop(&p);
}
END_TEST

/* The inv_freq values at 22, 27, 47, 50 are PyTorch's CUDA results (the
 * CPU gives 0x3d2cba15, 0x3ca8398b, 0x3a975c0e, 0x3a44948c). */
START_TEST(t_rope_llama2)
{
    static const struct {
        size_t i;
        uint32_t want;
    } inv_cuda[] = {{22, 0x3d2cba16}, {27, 0x3ca8398a}, {47, 0x3a975c0d},
                    {50, 0x3a44948d}};
    bp_buf_t inv, emb, cosb, sinb;
    tb_rope(128, 4096, 10000.0, &inv, &emb, &cosb, &sinb);
    for (size_t k = 0; k < 4; k++)
        tb_expect_bits(&inv, inv_cuda[k].i, inv_cuda[k].want,
                       "rope-llama2 inv_freq");
    for (size_t j = 0; j < 64; j++) {
        double ref = 1.0 / pow(10000.0, (double)(2 * j) / 128.0);
        ck_assert_msg(tb_ulps(&inv, j, ref) <= 3,
                      "inv_freq[%zu] = %a, more than 3 ulp from %a", j,
                      bp_buf_get(&inv, j), ref);
    }
    uint64_t worst_cos = 0, worst_sin = 0;
    for (size_t pos = 0; pos < 4096; pos++)
        for (size_t j = 0; j < 64; j++) {
            size_t i = pos * 128 + j;
            float f = (float)pos * (float)bp_buf_get(&inv, j);
            tb_expect_bits(&emb, i, bp_f32_bits(f), "emb = outer(t, inv)");
            tb_expect_bits(&emb, i + 64, bp_f32_bits(f), "emb second half");
            uint64_t uc = tb_ulps(&cosb, i, cos((double)f));
            uint64_t us = tb_ulps(&sinb, i, sin((double)f));
            worst_cos = uc > worst_cos ? uc : worst_cos;
            worst_sin = us > worst_sin ? us : worst_sin;
            tb_expect_bits(&cosb, i + 64, bp_buf_bits(&cosb, i), "cos half");
            tb_expect_bits(&sinb, i + 64, bp_buf_bits(&sinb, i), "sin half");
        }
    ck_assert_msg(worst_cos <= 2 && worst_sin <= 2,
                  "cosf/sinf beyond CUDA's 2 ulp bound: %llu, %llu",
                  (unsigned long long)worst_cos, (unsigned long long)worst_sin);
    /* Stored in bf16 / f16: the f32 results rounded once. */
    for (int d = 1; d < NFLOATS; d++) {
        bp_buf_t c;
        tb_make(&c, floats[d], cosb.ndim, cosb.shape);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &cosb, NULL, &c);
        for (size_t i = 0; i < c.numel; i++)
            if (bp_buf_bits(&c, i) !=
                tb_bits_of(floats[d], (float)bp_buf_get(&cosb, i)))
                tb_expect_bits(&c, i,
                               tb_bits_of(floats[d],
                                          (float)bp_buf_get(&cosb, i)),
                               "cos cast");
        tb_drop(&c);
    }
    tb_drop(&inv);
    tb_drop(&emb);
    tb_drop(&cosb);
    tb_drop(&sinb);
}
END_TEST

TCase *tb_tcase_seed(void)
{
    TCase *tc = tcase_create("seed");
    tcase_add_test(tc, t_seed_div);
    tcase_add_test(tc, t_div_decimal);
    tcase_add_test(tc, t_seed_inv_freq);
    tcase_add_test(tc, t_rope_llama2);
    return tc;
}

/* ---- elementwise ---- */

#define N_EW 4096

/* A random tensor of dt whose values are exact in dt, in [2^lo, 2^hi). */
static void rand_tensor(bp_buf_t *b, bp_dtype_t dt, int64_t n, int lo, int hi,
                        bool positive)
{
    tb_make1(b, dt, n);
    for (int64_t i = 0; i < n; i++) {
        float v = tb_round(dt, tb_rand_float(lo, hi));
        bp_buf_set(b, (size_t)i, positive ? fabsf(v) : v);
    }
    tb_upload(b);
}

static float ref_binary(bp_op_kind_t k, bp_form_t form, float x, float y)
{
    volatile float r;
    switch (k) {
    case BP_OP_ADD: return x + y;
    case BP_OP_SUB: return x - y;
    case BP_OP_MUL: return x * y;
    default:
        if (form == BP_FORM_RECIPROCAL) {
            r = 1.0f / y;
            return x * r;
        }
        return x / y;
    }
}

START_TEST(t_binary_tensors)
{
    static const struct {
        bp_op_kind_t kind;
        bp_form_t form;
        const char *name;
    } ops[] = {{BP_OP_ADD, BP_FORM_DEFAULT, "add"},
               {BP_OP_SUB, BP_FORM_DEFAULT, "sub"},
               {BP_OP_MUL, BP_FORM_DEFAULT, "mul"},
               {BP_OP_DIV, BP_FORM_DEFAULT, "div"},
               {BP_OP_DIV, BP_FORM_RECIPROCAL, "div reciprocal"}};
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t a, b, out;
        rand_tensor(&a, dt, N_EW, -8, 8, false);
        rand_tensor(&b, dt, N_EW, -8, 8, false);
        tb_make1(&out, dt, N_EW);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            bp_op_t op = tb_op(ops[k].kind);
            op.form = ops[k].form;
            tb_exec(&op, &a, &b, &out);
            for (size_t i = 0; i < N_EW; i++) {
                float r = ref_binary(ops[k].kind, ops[k].form,
                                     (float)bp_buf_get(&a, i),
                                     (float)bp_buf_get(&b, i));
                if (bp_buf_bits(&out, i) != tb_bits_of(dt, r))
                    tb_expect_bits(&out, i, tb_bits_of(dt, r), ops[k].name);
            }
        }
        tb_drop(&a);
        tb_drop(&b);
        tb_drop(&out);
    }
}
END_TEST

/* Scalars: opmath (float) for add/sub/mul; the divisor's reciprocal is
 * taken in double and rounded once to float; scalar / tensor is
 * reciprocal(t) rounded to the dtype, times the scalar. */
START_TEST(t_binary_scalars)
{
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t a, out;
        rand_tensor(&a, dt, N_EW, -6, 6, false);
        tb_make1(&out, dt, N_EW);
        for (int k = 0; k < 8; k++) {
            bp_op_t op = tb_op(k < 2   ? BP_OP_ADD
                               : k < 4 ? BP_OP_SUB
                               : k < 5 ? BP_OP_MUL
                                       : BP_OP_DIV);
            bool scalar_first = k == 1 || k == 3 || k == 6;
            double s = k == 4 ? 0.3 : k == 7 ? 0.001 : k >= 5 ? 3.0 : 0.1;
            tb_arg_scalar(scalar_first ? &op.a : &op.b, s);
            tb_exec(&op, scalar_first ? NULL : &a, scalar_first ? &a : NULL,
                    &out);
            for (size_t i = 0; i < N_EW; i++) {
                float x = (float)bp_buf_get(&a, i), fs = (float)s, r;
                switch (k) {
                case 0: r = x + fs; break;
                case 1: r = fs + x; break;
                case 2: r = x - fs; break;
                case 3: r = fs - x; break;
                case 4: r = x * fs; break;
                case 5:
                case 7: r = x * (float)(1.0 / s); break;
                default: r = tb_round(dt, 1.0f / x) * fs; break;
                }
                if (bp_buf_bits(&out, i) != tb_bits_of(dt, r))
                    tb_expect_bits(&out, i, tb_bits_of(dt, r), "scalar op");
            }
        }
        tb_drop(&a);
        tb_drop(&out);
    }
}
END_TEST

START_TEST(t_binary_broadcast_int)
{
    int64_t sa[2] = {4, 1}, so[2] = {4, 3};
    bp_buf_t a, b, out, ia, ib, io, fo;
    tb_make(&a, BP_F32, 2, sa);
    tb_make1(&b, BP_F32, 3);
    for (size_t i = 0; i < 4; i++)
        bp_buf_set(&a, i, 0.1 * (double)(i + 1));
    for (size_t j = 0; j < 3; j++)
        bp_buf_set(&b, j, 1e-3 * (double)(j + 7));
    tb_upload(&a);
    tb_upload(&b);
    tb_make(&out, BP_F32, 2, so);
    bp_op_t add = tb_op(BP_OP_ADD);
    tb_exec(&add, &a, &b, &out);
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            tb_expect_bits(&out, i * 3 + j,
                           bp_f32_bits((float)bp_buf_get(&a, i) +
                                       (float)bp_buf_get(&b, j)),
                           "[4,1] + [3]");
    /* int64 arithmetic stays integer; an integer tensor times a float
     * scalar is computed in float. */
    tb_make1(&ia, BP_I64, 5);
    tb_make1(&ib, BP_I64, 5);
    tb_make1(&io, BP_I64, 5);
    tb_make1(&fo, BP_F32, 5);
    const int64_t xs[5] = {0, -3, 16777217, INT64_MAX, 1000000007};
    for (size_t i = 0; i < 5; i++) {
        bp_dtype_store_bits(BP_I64, ia.data, i, (uint64_t)xs[i]);
        bp_dtype_store_bits(BP_I64, ib.data, i, (uint64_t)(i + 1));
    }
    tb_upload(&ia);
    tb_upload(&ib);
    bp_op_t mul = tb_op(BP_OP_MUL);
    tb_exec(&mul, &ia, &ib, &io);
    for (size_t i = 0; i < 5; i++)
        tb_expect_bits(&io, i, (uint64_t)xs[i] * (uint64_t)(i + 1), "i64 mul");
    bp_op_t muls = tb_op(BP_OP_MUL);
    tb_arg_scalar(&muls.b, 2.5);
    tb_exec(&muls, &ia, NULL, &fo);
    for (size_t i = 0; i < 5; i++)
        tb_expect_bits(&fo, i, bp_f32_bits((float)xs[i] * 2.5f),
                       "i64 * 2.5 in float");
    /* True division cannot produce integers. */
    bp_op_t div = tb_op(BP_OP_DIV);
    bp_error_t err = {0};
    ck_assert_int_eq(tb_try(&div, &ia, &ib, NULL, 0, &io, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "integer") != NULL, "message: %s", err.msg);
    tb_drop(&a);
    tb_drop(&b);
    tb_drop(&out);
    tb_drop(&ia);
    tb_drop(&ib);
    tb_drop(&io);
    tb_drop(&fo);
}
END_TEST

/* IEEE-exact functions bit for bit; the others within CUDA's documented
 * maximum ulp errors (CUDA Math API: expf 2, logf 1, sinf 2, cosf 2,
 * tanhf 2, rsqrtf 2).  bf16/f16 must be the f32 result rounded once. */
START_TEST(t_unary)
{
    static const struct {
        bp_op_kind_t kind;
        const char *name;
        int lo, hi;
        bool positive;
        unsigned ulps; /* 0: exact against the host */
    } fns[] = {
        {BP_OP_RECIPROCAL, "reciprocal", -20, 20, false, 0},
        {BP_OP_SQRT, "sqrt", -30, 30, true, 0},
        {BP_OP_NEG, "neg", -30, 30, false, 0},
        {BP_OP_EXP, "exp", -6, 6, false, 2},
        {BP_OP_LOG, "log", -30, 30, true, 1},
        {BP_OP_SIN, "sin", -10, 12, false, 2},
        {BP_OP_COS, "cos", -10, 12, false, 2},
        {BP_OP_TANH, "tanh", -10, 4, false, 2},
        {BP_OP_RSQRT, "rsqrt", -30, 30, true, 2},
    };
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        bp_buf_t a, out, a16, out16;
        rand_tensor(&a, BP_F32, N_EW, fns[f].lo, fns[f].hi, fns[f].positive);
        tb_make1(&out, BP_F32, N_EW);
        bp_op_t op = tb_op(fns[f].kind);
        tb_exec(&op, &a, NULL, &out);
        for (size_t i = 0; i < N_EW; i++) {
            float x = (float)bp_buf_get(&a, i);
            double xd = x;
            if (fns[f].ulps == 0) {
                float r = fns[f].kind == BP_OP_RECIPROCAL ? 1.0f / x
                          : fns[f].kind == BP_OP_SQRT     ? sqrtf(x)
                                                          : -x;
                tb_expect_bits(&out, i, bp_f32_bits(r), fns[f].name);
                continue;
            }
            double ref = fns[f].kind == BP_OP_EXP   ? exp(xd)
                         : fns[f].kind == BP_OP_LOG ? log(xd)
                         : fns[f].kind == BP_OP_SIN ? sin(xd)
                         : fns[f].kind == BP_OP_COS ? cos(xd)
                         : fns[f].kind == BP_OP_TANH ? tanh(xd)
                                                     : 1.0 / sqrt(xd);
            ck_assert_msg(tb_ulps(&out, i, ref) <= fns[f].ulps,
                          "%s(%a) = %a, more than %u ulp from %a",
                          fns[f].name, x, bp_buf_get(&out, i), fns[f].ulps,
                          ref);
        }
        for (int d = 1; d < NFLOATS; d++) {
            /* The same op on values exact in dt. */
            tb_make1(&a16, floats[d], N_EW);
            for (size_t i = 0; i < N_EW; i++)
                bp_buf_set(&a16, i, bp_buf_get(&a, i));
            tb_upload(&a16);
            for (size_t i = 0; i < N_EW; i++)
                bp_buf_set(&a, i, bp_buf_get(&a16, i));
            tb_upload(&a);
            tb_exec(&op, &a, NULL, &out);
            tb_make1(&out16, floats[d], N_EW);
            tb_exec(&op, &a16, NULL, &out16);
            for (size_t i = 0; i < N_EW; i++) {
                uint64_t want =
                    tb_bits_of(floats[d], (float)bp_buf_get(&out, i));
                if (bp_dtype_bits_isnan(floats[d], want) &&
                    bp_dtype_bits_isnan(floats[d], bp_buf_bits(&out16, i)))
                    continue;
                if (bp_buf_bits(&out16, i) != want)
                    tb_expect_bits(&out16, i, want, fns[f].name);
            }
            tb_drop(&a16);
            tb_drop(&out16);
        }
        tb_drop(&a);
        tb_drop(&out);
    }
}
END_TEST

static void pow_scalar_case(const bp_buf_t *a, double e, bp_buf_t *out)
{
    bp_op_t op = tb_op(BP_OP_POW);
    tb_arg_scalar(&op.b, e);
    tb_exec(&op, a, NULL, out);
}

/* PowKernel.cu's scalar exponents: 2 and 3 multiply in scalar_t, -2
 * divides in double, 0.5 / -0.5 / -1 are sqrt / rsqrt / reciprocal,
 * 0 and 1 fill and copy, others call powf. */
START_TEST(t_pow)
{
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t a, out;
        rand_tensor(&a, dt, N_EW, -4, 4, true);
        tb_make1(&out, dt, N_EW);
        static const double exps[] = {2, 3, -2, 0.5, -1, 0, 1};
        for (size_t k = 0; k < sizeof exps / sizeof exps[0]; k++) {
            pow_scalar_case(&a, exps[k], &out);
            for (size_t i = 0; i < N_EW; i++) {
                float x = (float)bp_buf_get(&a, i), r;
                if (exps[k] == 2)
                    r = x * x;
                else if (exps[k] == 3)
                    r = tb_round(dt, x * x) * x;
                else if (exps[k] == -2)
                    r = (float)(1.0 / (double)tb_round(dt, x * x));
                else if (exps[k] == 0.5)
                    r = sqrtf(x);
                else if (exps[k] == -1)
                    r = 1.0f / x;
                else
                    r = exps[k] == 0 ? 1.0f : x;
                if (bp_buf_bits(&out, i) != tb_bits_of(dt, r)) {
                    char what[64];
                    snprintf(what, sizeof what, "x ** %g", exps[k]);
                    tb_expect_bits(&out, i, tb_bits_of(dt, r), what);
                }
            }
        }
        if (dt == BP_F32) {
            pow_scalar_case(&a, 2.5, &out);
            for (size_t i = 0; i < N_EW; i++)
                ck_assert_msg(tb_ulps(&out, i, pow(bp_buf_get(&a, i), 2.5)) <=
                                  2, "powf(%a, 2.5) = %a", bp_buf_get(&a, i),
                              bp_buf_get(&out, i));
            pow_scalar_case(&a, -0.5, &out);
            for (size_t i = 0; i < N_EW; i++)
                ck_assert_msg(tb_ulps(&out, i,
                                      1.0 / sqrt(bp_buf_get(&a, i))) <= 2,
                              "x ** -0.5 (rsqrtf)");
        }
        /* 1 ** t is 1 without computing; 10 ** t is powf(10, t). */
        bp_op_t op = tb_op(BP_OP_POW);
        tb_arg_scalar(&op.a, 1.0);
        tb_exec(&op, NULL, &a, &out);
        for (size_t i = 0; i < N_EW; i++)
            tb_expect_bits(&out, i, tb_bits_of(dt, 1.0f), "1 ** t");
        tb_drop(&a);
        tb_drop(&out);
    }
    /* Integers: powi; negative exponents are refused as in PyTorch. */
    bp_buf_t ia, io;
    tb_make1(&ia, BP_I64, 4);
    tb_make1(&io, BP_I64, 4);
    for (size_t i = 0; i < 4; i++)
        bp_dtype_store_bits(BP_I64, ia.data, i, (uint64_t)(int64_t)i - 1);
    tb_upload(&ia);
    pow_scalar_case(&ia, 5, &io);
    for (size_t i = 0; i < 4; i++) {
        int64_t x = (int64_t)i - 1;
        tb_expect_bits(&io, i, (uint64_t)(x * x * x * x * x), "i64 ** 5");
    }
    bp_op_t neg = tb_op(BP_OP_POW);
    tb_arg_scalar(&neg.b, -2);
    bp_error_t err = {0};
    ck_assert_int_eq(tb_try(&neg, &ia, NULL, NULL, 0, &io, &err), BP_EINPUT);
    tb_drop(&ia);
    tb_drop(&io);
}
END_TEST

/* elem.cu in fp32: the exact ops against the host's C functions, the
 * activations and special functions within a few ulps of double
 * references, minimum/maximum and clamp with NaN, linspace's ends. */
static double elem_ref(bp_op_kind_t k, bool tanh_form, double x)
{
    switch (k) {
    case BP_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case BP_OP_SILU: return x / (1.0 + exp(-x));
    case BP_OP_GELU:
        if (tanh_form)
            return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case BP_OP_ERF: return erf(x);
    case BP_OP_EXP2: return exp2(x);
    case BP_OP_LOG2: return log2(x);
    case BP_OP_LOG1P: return log1p(x);
    default: return expm1(x);
    }
}

/* How far PyTorch's formulations of gelu, 0.5 x (1 + g(w)) in float, may
 * lie from the exact value, from CUDA's documented errors (CUDA Math API:
 * erff and tanhf at most 2 ulp).  erf form: g = erff, w = fl(x * fl(M_SQRT1_2)),
 * w off by 2 roundings; tanh form: g = tanhf, w = fl(kBeta * fl(x + kKappa *
 * fl(fl(x * x) * x))), off by 7 (the two constants, x^3's two products,
 * kKappa x^3 if not fused, the sum, the product; kKappa x^3 and x have one
 * sign, so each is relative to w).  For x < 0, 1 + g cancels: g's absolute
 * error (2 ulp of |g|) and that of w (times g'(w)) become relative errors of
 * the result; plus the rounding of 1 + g and 4 ulp for the products.
 * Within 8 ulp does not hold there: gelu(-3.845), erf form, is 3001 ulp
 * (2.2e-8) from the exact value, the bound 2.3e-7; gelu(-3.445), tanh form,
 * 744 ulp (4.3e-8) with tanhf within half an ulp (a correctly rounded
 * tanhf gives the same bits), the bound 2.1e-7.  Over every float the test
 * draws (|x| in [2^-6, 4)) with g anywhere within its 2 ulp, fused or not,
 * a host emulation stays within 0.999 of the bound; the other form, 8.8e-5
 * from the exact value at -3.845, is outside it at 70% of them. */
static double gelu_bound(double x, double ref, bool tanh_form)
{
    double w, g, dg, rel;
    if (tanh_form) {
        w = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        g = tanh(w);
        dg = 1.0 / (cosh(w) * cosh(w));
        rel = 7;
    } else {
        w = x * M_SQRT1_2;
        g = erf(w);
        dg = 2.0 / sqrt(M_PI) * exp(-w * w);
        rel = 2;
    }
    double ulp_g = ldexp(1.0, ilogb(fabs(g) > 0 ? fabs(g) : 1e-38) - 23);
    double ulp_1g = ldexp(1.0, ilogb(fabs(1.0 + g) > 0 ? fabs(1.0 + g) : 1e-38) - 23);
    double dw = dg * fabs(w) * rel * ldexp(1.0, -24);
    double ulp_r = ldexp(1.0, ilogb(fabs(ref)) - 23);
    return fabs(0.5 * x) * (2.0 * ulp_g + ulp_1g + dw) + 4.0 * ulp_r;
}

START_TEST(t_elem)
{
    static const struct {
        bp_op_kind_t k;
        bool tanh_form;
        int lo, hi;
        bool positive;
        unsigned ulps;
    } fns[] = {{BP_OP_SIGMOID, false, -6, 3, false, 4}, {BP_OP_SILU, false, -6, 3, false, 4},
               {BP_OP_GELU, false, -6, 2, false, 0},    {BP_OP_GELU, true, -6, 2, false, 0},
               {BP_OP_ERF, false, -10, 1, false, 2},    {BP_OP_EXP2, false, -6, 5, false, 2},
               {BP_OP_LOG2, false, -30, 30, true, 2},  {BP_OP_LOG1P, false, -20, 10, true, 2},
               {BP_OP_EXPM1, false, -20, 4, false, 2}};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        bp_buf_t a, out;
        rand_tensor(&a, BP_F32, N_EW, fns[f].lo, fns[f].hi, fns[f].positive);
        tb_make1(&out, BP_F32, N_EW);
        bp_op_t op = tb_op(fns[f].k);
        op.form = fns[f].tanh_form ? BP_FORM_TANH : BP_FORM_DEFAULT;
        tb_exec(&op, &a, NULL, &out);
        for (size_t i = 0; i < N_EW; i++) {
            double x = bp_buf_get(&a, i), ref = elem_ref(fns[f].k, fns[f].tanh_form, x);
            if (fabs(ref) < 1e-30) /* gelu and silu far below 0: tiny, ulps mean little */
                continue;
            if (fns[f].k == BP_OP_GELU) { /* gelu_bound, not ulps */
                double err = fabs(bp_buf_get(&out, i) - ref);
                double bound = gelu_bound(x, ref, fns[f].tanh_form);
                ck_assert_msg(err <= bound, "gelu%s(%a) = %a, %g from %a: more than %g",
                              fns[f].tanh_form ? " (tanh)" : "", x, bp_buf_get(&out, i), err,
                              ref, bound);
                continue;
            }
            ck_assert_msg(tb_ulps(&out, i, ref) <= fns[f].ulps, "%s(%a) = %a, more than %u ulp from %a",
                          bp_op_name(fns[f].k), x, bp_buf_get(&out, i), fns[f].ulps, ref);
        }
        tb_drop(&a);
        tb_drop(&out);
    }
    /* the exact ones, against the host */
    static const bp_op_kind_t ex[] = {BP_OP_ABS,  BP_OP_SIGN,  BP_OP_FLOOR,
                                      BP_OP_CEIL, BP_OP_TRUNC, BP_OP_ROUND};
    bp_buf_t a, out;
    rand_tensor(&a, BP_F32, N_EW, -4, 10, false);
    for (size_t f = 0; f < sizeof ex / sizeof *ex; f++) {
        tb_make1(&out, BP_F32, N_EW);
        bp_op_t op = tb_op(ex[f]);
        tb_exec(&op, &a, NULL, &out);
        for (size_t i = 0; i < N_EW; i++) {
            float x = (float)bp_buf_get(&a, i);
            float r = ex[f] == BP_OP_ABS     ? fabsf(x)
                      : ex[f] == BP_OP_SIGN  ? (float)((0 < x) - (x < 0))
                      : ex[f] == BP_OP_FLOOR ? floorf(x)
                      : ex[f] == BP_OP_CEIL  ? ceilf(x)
                      : ex[f] == BP_OP_TRUNC ? truncf(x)
                                             : nearbyintf(x);
            tb_expect_bits(&out, i, bp_f32_bits(r), bp_op_name(ex[f]));
        }
        tb_drop(&out);
    }
    /* clamp(-1, 0.25) and maximum with NaN */
    tb_make1(&out, BP_F32, N_EW);
    bp_op_t c = tb_op(BP_OP_CLAMP);
    c.has_min = c.has_max = true;
    c.min = -1.0;
    c.max = 0.25;
    tb_exec(&c, &a, NULL, &out);
    for (size_t i = 0; i < N_EW; i++) {
        float x = (float)bp_buf_get(&a, i);
        tb_expect_bits(&out, i, bp_f32_bits(x < -1.0f ? -1.0f : x > 0.25f ? 0.25f : x), "clamp");
    }
    tb_drop(&out);
    bp_buf_t b;
    tb_make1(&b, BP_F32, N_EW);
    for (size_t i = 0; i < N_EW; i++)
        bp_buf_set(&b, i, i % 7 ? 0.5 : NAN);
    tb_upload(&b);
    tb_make1(&out, BP_F32, N_EW);
    bp_op_t mx = tb_op(BP_OP_MAXIMUM);
    mx.b.kind = BP_ARG_BUF;
    tb_exec(&mx, &a, &b, &out);
    for (size_t i = 0; i < N_EW; i++) {
        float x = (float)bp_buf_get(&a, i);
        if (i % 7 == 0)
            ck_assert(isnan(bp_buf_get(&out, i)));
        else if (x != 0.5f)
            tb_expect_bits(&out, i, bp_f32_bits(x > 0.5f ? x : 0.5f), "maximum");
    }
    tb_drop(&out);
    tb_drop(&b);
    tb_drop(&a);
    /* linspace(0, 1, 17): start, end, and i/16 (exact) everywhere */
    tb_make1(&out, BP_F32, 17);
    bp_op_t l = tb_op(BP_OP_LINSPACE);
    l.start = 0;
    l.end = 1;
    l.steps = 17;
    tb_exec(&l, NULL, NULL, &out);
    for (size_t i = 0; i < 17; i++)
        tb_expect_bits(&out, i, bp_f32_bits((float)i / 16.0f), "linspace");
    tb_drop(&out);
}
END_TEST

/* clamp_tensor on the GPU (TensorCompare.cu clamp_kernel_impl): v if v is
 * NaN, else lower if it is, else upper if it is, else fminf(fmaxf(v,
 * lower), upper), in float for f32, bf16 and f16 (random non-zero values:
 * the sign of a zero result is PyTorch's fmaxf's, checked against PyTorch by
 * the fuzzer); a 0-D upper broadcasts; one bound is maximum or minimum;
 * i64 clamps exactly, crossed bounds giving upper. */
START_TEST(t_clamp_tensor)
{
    static const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16};
    for (size_t d = 0; d < 3; d++) {
        bp_dtype_t dt = dts[d];
        bp_buf_t a, lo, hi, h0, out;
        rand_tensor(&a, dt, N_EW, -4, 4, false);
        rand_tensor(&lo, dt, N_EW, -4, 4, false);
        rand_tensor(&hi, dt, N_EW, -4, 4, false);
        bp_buf_set(&a, 0, NAN);
        bp_buf_set(&lo, 1, NAN);
        bp_buf_set(&hi, 2, NAN);
        tb_upload(&a);
        tb_upload(&lo);
        tb_upload(&hi);
        tb_make(&h0, dt, 0, NULL);
        bp_buf_set(&h0, 0, 0.75);
        tb_upload(&h0);
        for (int mode = 0; mode < 4; mode++) { /* both, 0-D upper, min alone, max alone */
            bp_op_t op = tb_op(BP_OP_CLAMP_TENSOR);
            op.has_min = mode != 3;
            op.has_max = mode != 2;
            const bp_buf_t *ins[2] = {mode == 3 ? &hi : &lo, mode == 1 ? &h0 : &hi};
            tb_make1(&out, dt, N_EW);
            bp_error_t err = {0};
            tb_check(tb_try(&op, &a, NULL, ins, mode >= 2 ? 1 : 2, &out, &err), &err,
                     "clamp_tensor");
            for (size_t i = 0; i < N_EW; i++) {
                float v = (float)bp_buf_get(&a, i), l = (float)bp_buf_get(&lo, i),
                      h = mode == 1 ? 0.75f : (float)bp_buf_get(&hi, i), r;
                if (mode == 2)
                    r = isnan(v) || isnan(l) ? NAN : fmaxf(v, l);
                else if (mode == 3)
                    r = isnan(v) || isnan(h) ? NAN : fminf(v, h);
                else
                    r = isnan(v) || isnan(l) || isnan(h) ? NAN : fminf(fmaxf(v, l), h);
                if (isnan(r))
                    ck_assert_msg(isnan(bp_buf_get(&out, i)), "clamp_tensor mode %d [%zu]: NaN",
                                  mode, i);
                else
                    tb_expect_bits(&out, i, tb_bits_of(dt, r), "clamp_tensor");
            }
            tb_drop(&out);
        }
        tb_drop(&a);
        tb_drop(&lo);
        tb_drop(&hi);
        tb_drop(&h0);
    }
    bp_buf_t ia, il, ih, io;
    int64_t av[] = {-7, 5, 100}, lv[] = {-2, 0, 50}, hv[] = {3, 3, 10};
    tb_make1(&ia, BP_I64, 3);
    tb_make1(&il, BP_I64, 3);
    tb_make1(&ih, BP_I64, 3);
    memcpy(ia.data, av, sizeof av);
    memcpy(il.data, lv, sizeof lv);
    memcpy(ih.data, hv, sizeof hv);
    tb_upload(&ia);
    tb_upload(&il);
    tb_upload(&ih);
    tb_make1(&io, BP_I64, 3);
    bp_op_t op = tb_op(BP_OP_CLAMP_TENSOR);
    op.has_min = op.has_max = true;
    const bp_buf_t *ins[2] = {&il, &ih};
    bp_error_t err = {0};
    tb_check(tb_try(&op, &ia, NULL, ins, 2, &io, &err), &err, "clamp_tensor i64");
    tb_expect_bits(&io, 0, (uint64_t)-2, "clamp_tensor i64");
    tb_expect_bits(&io, 1, 3, "clamp_tensor i64");
    tb_expect_bits(&io, 2, 10, "clamp_tensor i64 crossed");
    tb_drop(&ia);
    tb_drop(&il);
    tb_drop(&ih);
    tb_drop(&io);
}
END_TEST

/* where(cond, a, b) keeps the chosen operand's bits (NaN payloads, signaling
 * NaNs, -0 included) and writes a number's bits in the dtype; cond [n]
 * broadcast over [3, n].  n = 40 takes the flat kernel (8 elements a step,
 * cond repeating every 40), n = 41 the general one: both must give the
 * same, hand-derived, bits. */
START_TEST(t_where_bits)
{
    static const uint64_t special[3][4] = {
        {0x7fc12345u, 0x7f800001u, 0x80000000u, 0xff812345u}, /* f32 */
        {0x7fa1u, 0x7f81u, 0x8000u, 0xffa5u},                 /* bf16 */
        {0x7e01u, 0x7c01u, 0x8000u, 0xfe55u}};                /* f16 */
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        for (int64_t n = 40; n <= 41; n++) {
            int64_t sh[2] = {3, n};
            bp_buf_t a, b, c, out;
            tb_make(&a, dt, 2, sh);
            tb_make(&b, dt, 2, sh);
            tb_make(&out, dt, 2, sh);
            tb_make1(&c, BP_BOOL, n);
            for (int64_t i = 0; i < 3 * n; i++) {
                uint64_t r = tb_rand();
                bp_dtype_store_bits(dt, a.data, (size_t)i,
                                    r % 3 ? special[d][r % 4]
                                          : tb_bits_of(dt, tb_rand_float(-4, 4)));
                bp_buf_set(&b, (size_t)i, tb_round(dt, tb_rand_float(-4, 4)));
            }
            for (int64_t j = 0; j < n; j++)
                ((uint8_t *)c.data)[j] = (uint8_t)(tb_rand() & 1);
            tb_upload(&a);
            tb_upload(&b);
            tb_upload(&c);
            const bp_buf_t *in[1] = {&c};
            for (int k = 0; k < 2; k++) { /* b a tensor, then the number -inf */
                bp_op_t op = tb_op(BP_OP_WHERE);
                op.ninputs = 1;
                if (k)
                    tb_arg_scalar(&op.b, -INFINITY);
                bp_error_t err = {0};
                tb_check(tb_try(&op, &a, k ? NULL : &b, in, 1, &out, &err), &err, "where");
                for (int64_t i = 0; i < 3 * n; i++) {
                    bool t = ((const uint8_t *)c.data)[i % n] != 0;
                    uint64_t want = t   ? bp_buf_bits(&a, (size_t)i)
                                    : k ? tb_bits_of(dt, -INFINITY)
                                        : bp_buf_bits(&b, (size_t)i);
                    if (bp_buf_bits(&out, (size_t)i) != want)
                        tb_expect_bits(&out, (size_t)i, want, n == 40 ? "where (flat)" : "where");
                }
            }
            tb_drop(&a);
            tb_drop(&b);
            tb_drop(&c);
            tb_drop(&out);
        }
    }
}
END_TEST

TCase *tb_tcase_elementwise(void)
{
    TCase *tc = tcase_create("elementwise");
    tcase_add_test(tc, t_binary_tensors);
    tcase_add_test(tc, t_binary_scalars);
    tcase_add_test(tc, t_binary_broadcast_int);
    tcase_add_test(tc, t_unary);
    tcase_add_test(tc, t_pow);
    tcase_add_test(tc, t_elem);
    tcase_add_test(tc, t_clamp_tensor);
    tcase_add_test(tc, t_where_bits);
    return tc;
}
