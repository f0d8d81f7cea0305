/* Tests of the oracle backend's elementwise ops, generators, threading
 * and record (be_oracle.c, oracle_mpfr.c); references: oracle_check.h. */
#include "oracle_check.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- hand-derived values ---- */

START_TEST(t_div_nine_tenths)
{
    bp_backend_t *be = open_oracle(1);
    uint64_t nine = 0x41100000; /* 9.0f */
    /* Either formulation: the oracle gives the true quotient. */
    for (int f = 0; f < 3; f++) {
        bp_buf_t a = vec_bits(BP_F32, 1, &nine);
        int64_t shape[1] = {1};
        bp_buf_t out = mkbuf(BP_F32, 1, shape);
        bp_op_t op = mkop(BP_OP_DIV);
        op.b = (bp_arg_t){.kind = BP_ARG_SCALAR, .buf = -1, .value = 10.0};
        op.form = f == 0 ? BP_FORM_DEFAULT : f == 1 ? BP_FORM_TRUE
                                                    : BP_FORM_RECIPROCAL;
        exec_ok(be, &op, &a, NULL, &out);
        CK_BITS(BP_F32, bp_buf_bits(&out, 0), 0x3f666666, "9/10 form %d", f);
        bp_buf_free(&a);
        bp_buf_free(&out);
    }
    bp_backend_close(be);
}
END_TEST

START_TEST(t_one_third)
{
    bp_backend_t *be = open_oracle(1);
    static const struct { bp_dtype_t dt; uint64_t three, want; } c[] = {
        {BP_F32, 0x40400000, 0x3eaaaaab},
        {BP_BF16, 0x4040, 0x3eab},
        {BP_F16, 0x4200, 0x3555},
        {BP_F64, 0x4008000000000000ull, 0x3fd5555555555555ull},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        CK_BITS(c[i].dt, unary1(be, BP_OP_RECIPROCAL, c[i].dt, c[i].three,
                                c[i].dt), c[i].want, "reciprocal(3)");
        CK_BITS(c[i].dt, binary1(be, BP_OP_DIV, c[i].dt, NULL, 1.0,
                                 &c[i].three, 0, c[i].dt), c[i].want, "1/3");
    }
    /* Computed from an f32 operand straight into bf16/f16: one rounding. */
    CK_BITS(BP_BF16, unary1(be, BP_OP_RECIPROCAL, BP_F32, 0x40400000, BP_BF16),
            0x3eab, "reciprocal(3.0f) to bf16");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_sqrt_exp)
{
    bp_backend_t *be = open_oracle(1);
    CK_BITS(BP_F32, unary1(be, BP_OP_SQRT, BP_F32, 0x40000000, BP_F32),
            0x3fb504f3, "sqrt(2)");
    CK_BITS(BP_F32, unary1(be, BP_OP_EXP, BP_F32, 0x3f800000, BP_F32),
            0x402df854, "exp(1)");
    CK_BITS(BP_F32, unary1(be, BP_OP_RSQRT, BP_F32, 0x40800000, BP_F32),
            0x3f000000, "rsqrt(4)");
    /* IEEE special cases */
    CK_BITS(BP_F32, unary1(be, BP_OP_RSQRT, BP_F32, 0x80000000, BP_F32),
            0xff800000, "rsqrt(-0)");
    CK_BITS(BP_F32, unary1(be, BP_OP_RSQRT, BP_F32, 0x00000000, BP_F32),
            0x7f800000, "rsqrt(+0)");
    CK_BITS(BP_F32, unary1(be, BP_OP_RSQRT, BP_F32, 0xbf800000, BP_F32),
            0x7fc00000, "rsqrt(-1)");
    CK_BITS(BP_F32, unary1(be, BP_OP_SQRT, BP_F32, 0x80000000, BP_F32),
            0x80000000, "sqrt(-0)");
    CK_BITS(BP_F32, unary1(be, BP_OP_LOG, BP_F32, 0x00000000, BP_F32),
            0xff800000, "log(0)");
    CK_BITS(BP_F32, unary1(be, BP_OP_LOG, BP_F32, 0xbf800000, BP_F32),
            0x7fc00000, "log(-1)");
    CK_BITS(BP_F16, unary1(be, BP_OP_LOG, BP_F16, 0xbc00, BP_F16), 0x7fff,
            "log(-1) in f16 is the canonical NaN");
    CK_BITS(BP_F32, unary1(be, BP_OP_RECIPROCAL, BP_F32, 0x80000000, BP_F32),
            0xff800000, "1/-0");
    CK_BITS(BP_F32, unary1(be, BP_OP_NEG, BP_F32, 0x00000000, BP_F32),
            0x80000000, "-(+0)");
    CK_BITS(BP_F32, unary1(be, BP_OP_TANH, BP_F32, 0x7f800000, BP_F32),
            0x3f800000, "tanh(inf)");
    CK_BITS(BP_F32, unary1(be, BP_OP_SIN, BP_F32, 0x7f800000, BP_F32),
            0x7fc00000, "sin(inf)");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_sin_1e22)
{
    /* 1e22 is exact in f64: sin(1e22) = -0.852200849767188801772705893753...
     * f32(1e22) = 9999999778196308361216 = 0x1.0f0cfp+73:
     * sin = -0.734081535296101525955768907692...  (mpmath, 200 bits). */
    bp_backend_t *be = open_oracle(1);
    uint64_t x64 = bp_f64_bits(1e22), x32 = bp_f32_bits(1e22f);
    CK_BITS(BP_F64, unary1(be, BP_OP_SIN, BP_F64, x64, BP_F64),
            0xbfeb453ab76bf397ull, "sin(1e22)");
    CK_BITS(BP_F32, unary1(be, BP_OP_SIN, BP_F64, x64, BP_F32), 0xbf5a29d6,
            "sin(1e22) into f32");
    CK_BITS(BP_F32, unary1(be, BP_OP_SIN, BP_F32, x32, BP_F32), 0xbf3becc4,
            "sin(1e22f)");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_pow_ten)
{
    /* 10 ** f32(0.9) = 7.943281911173254489... -> 0x40fe2f5e
     * (7.94328212738037109375); 10 ** f32(0.4) = 2.5118864659839... ->
     * 0x4020c2bf (mpmath, 200 bits). */
    bp_backend_t *be = open_oracle(1);
    uint64_t x9 = 0x3f666666, x4 = 0x3ecccccd;
    CK_BITS(BP_F32, binary1(be, BP_OP_POW, BP_F32, NULL, 10.0, &x9, 0, BP_F32),
            0x40fe2f5e, "10**0.9");
    CK_BITS(BP_F32, binary1(be, BP_OP_POW, BP_F32, NULL, 10.0, &x4, 0, BP_F32),
            0x4020c2bf, "10**0.4");
    /* The seed chain: 10 ** (arange(0, 10) / 10). */
    int64_t shape[1] = {10};
    bp_buf_t t = mkbuf(BP_F32, 1, shape), q = mkbuf(BP_F32, 1, shape),
             r = mkbuf(BP_F32, 1, shape);
    bp_op_t ar = mkop(BP_OP_ARANGE), dv = mkop(BP_OP_DIV),
            pw = mkop(BP_OP_POW);
    ar.a.kind = BP_ARG_NONE;
    ar.start = 0;
    ar.end = 10;
    ar.step = 1;
    dv.b = (bp_arg_t){.kind = BP_ARG_SCALAR, .buf = -1, .value = 10.0};
    pw.a = (bp_arg_t){.kind = BP_ARG_SCALAR, .buf = -1, .value = 10.0};
    pw.b = (bp_arg_t){.kind = BP_ARG_BUF, .buf = 1, .value = 0};
    exec_ok(be, &ar, NULL, NULL, &t);
    exec_ok(be, &dv, &t, NULL, &q);
    exec_ok(be, &pw, NULL, &q, &r);
    CK_BITS(BP_F32, bp_buf_bits(&q, 9), 0x3f666666, "arange/10 [9]");
    CK_BITS(BP_F32, bp_buf_bits(&r, 9), 0x40fe2f5e, "inv freq [9]");
    CK_BITS(BP_F32, bp_buf_bits(&r, 4), 0x4020c2bf, "inv freq [4]");
    CK_BITS(BP_F32, bp_buf_bits(&r, 0), 0x3f800000, "inv freq [0]");
    bp_buf_free(&t);
    bp_buf_free(&q);
    bp_buf_free(&r);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_f16_subnormals)
{
    bp_backend_t *be = open_oracle(1);
    static const struct { double x; uint64_t want; } c[] = {
        {0x1.8p-24, 0x0002},               /* tie 1.5 ulp: to even 2 */
        {0x1p-25, 0x0000},                 /* tie 0.5 ulp: to even 0 */
        {0x1.0000000001p-25, 0x0001},      /* just above the tie */
        {0x1.7ffp-24, 0x0001},             /* rounds to 1.5 at 11 bits, but is
                                              below the tie: 1 (no double
                                              rounding) */
        {0x1.4p-24, 0x0001},
        {-0x1.8p-24, 0x8002},
        {0x1.ffcp-15, 0x0400},             /* rounds up to the least normal */
        {0x1p-14, 0x0400},
        {0x1.ff4p-15, 0x03fe},             /* tie between 0x3fe and 0x3ff */
        {0x1p-30, 0x0000},
        {-0x1p-30, 0x8000},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        CK_BITS(BP_F16, unary1(be, BP_OP_CAST, BP_F64, bp_f64_bits(c[i].x),
                               BP_F16), c[i].want, "f16(%a)", c[i].x);
    /* 1.5 * 2^-13 / (2048 * (1 + 2^-20)) lies just below the tie 1.5 * 2^-24:
     * rounding to 11 bits first would land on the tie and give 0x0002. */
    uint64_t a = 0x0a00; /* 1.5 * 2^-13 */
    CK_BITS(BP_F16, binary1(be, BP_OP_DIV, BP_F16, &a, 0, NULL,
                            2048.0 * (1.0 + 0x1p-20), BP_F16),
            0x0001, "f16 subnormal quotient");
    uint64_t m1 = 0x0c00, m2 = 0x0e00; /* 2^-12 * 1.5 * 2^-12 */
    CK_BITS(BP_F16, binary1(be, BP_OP_MUL, BP_F16, &m1, 0, &m2, 0, BP_F16),
            0x0002, "f16 subnormal product");
    /* f32: 2^-149 * 0.75 rounds up to the least subnormal. */
    CK_BITS(BP_F32, unary1(be, BP_OP_CAST, BP_F64, bp_f64_bits(0x1.8p-150),
                           BP_F32), 0x00000001, "f32(0.75 * 2^-149)");
    CK_BITS(BP_BF16, unary1(be, BP_OP_CAST, BP_F64, bp_f64_bits(0x1.8p-134),
                            BP_BF16), 0x0001, "bf16(1.5 * 2^-134)");
    CK_BITS(BP_BF16, unary1(be, BP_OP_CAST, BP_F64, bp_f64_bits(0x1.8p-133),
                            BP_BF16), 0x0002, "bf16(1.5 * 2^-133)");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_overflow)
{
    bp_backend_t *be = open_oracle(1);
    CK_BITS(BP_F16, unary1(be, BP_OP_CAST, BP_F32, bp_f32_bits(65520.0f),
                           BP_F16), 0x7c00, "f16(65520)");
    CK_BITS(BP_F16, unary1(be, BP_OP_CAST, BP_F32,
                           bp_f32_bits(65519.99609375f), BP_F16),
            0x7bff, "f16(65519.996)");
    CK_BITS(BP_F16, unary1(be, BP_OP_CAST, BP_F32, bp_f32_bits(-1e10f),
                           BP_F16), 0xfc00, "f16(-1e10)");
    uint64_t mx = 0x7bff; /* 65504 */
    CK_BITS(BP_F16, binary1(be, BP_OP_ADD, BP_F16, &mx, 0, NULL, 16.0, BP_F16),
            0x7c00, "65504 + 16");
    CK_BITS(BP_F16, binary1(be, BP_OP_ADD, BP_F16, &mx, 0, NULL, 15.9, BP_F16),
            0x7bff, "65504 + 15.9");
    CK_BITS(BP_F16,
            binary1(be, BP_OP_SUB, BP_F16, NULL, -16.0, &mx, 0, BP_F16),
            0xfc00, "-16 - 65504");
    CK_BITS(BP_BF16, unary1(be, BP_OP_CAST, BP_F32, 0x7f7fffff, BP_BF16),
            0x7f80, "bf16(FLT_MAX)");
    uint64_t big = 0x7f000000; /* 2^127 */
    CK_BITS(BP_F32, binary1(be, BP_OP_MUL, BP_F32, &big, 0, NULL, 2.0, BP_F32),
            0x7f800000, "2^127 * 2");
    CK_BITS(BP_F32, unary1(be, BP_OP_EXP, BP_F32, bp_f32_bits(89.0f), BP_F32),
            0x7f800000, "exp(89)");
    CK_BITS(BP_F16, unary1(be, BP_OP_EXP, BP_F16, 0x4a00 /* 12 */, BP_F16),
            0x7c00, "exp(12) in f16");
    bp_backend_close(be);
}
END_TEST

START_TEST(t_rounded_once)
{
    bp_backend_t *be = open_oracle(1);
    /* (1 + 2^-24 - 2^-30)(1 + 2^-30) = 1 + 2^-24 + 2^-54 - 2^-60: through
     * f64 it would be the f32 tie 1 + 2^-24 and go to 1.0. */
    double a = 1.0 + 0x1p-24 - 0x1p-30, b = 1.0 + 0x1p-30;
    uint64_t ab = bp_f64_bits(a), bb = bp_f64_bits(b);
    CK_BITS(BP_F32, binary1(be, BP_OP_MUL, BP_F64, &ab, 0, &bb, 0, BP_F32),
            0x3f800001, "f64 product into f32");
    /* A literal 1 + 2^-8 + 2^-30 in bf16: through f32 it is the tie 1+2^-8. */
    int64_t shape[1] = {2};
    double vals[2] = {1.0 + 0x1p-8 + 0x1p-30, 0.1};
    bp_op_t op = mkop(BP_OP_TENSOR);
    op.a.kind = BP_ARG_NONE;
    op.values = vals;
    op.nvalues = 2;
    bp_buf_t out = mkbuf(BP_BF16, 1, shape);
    exec_ok(be, &op, NULL, NULL, &out);
    CK_BITS(BP_BF16, bp_buf_bits(&out, 0), 0x3f81, "bf16 literal");
    CK_BITS(BP_BF16, bp_buf_bits(&out, 1), 0x3dcd, "bf16(0.1)");
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_integers)
{
    bp_backend_t *be = open_oracle(1);
    uint64_t imax = 0x7fffffff, imin = 0x80000000, one = 1;
    CK_BITS(BP_I32, binary1(be, BP_OP_ADD, BP_I32, &imax, 0, &one, 0, BP_I32),
            0x80000000, "INT_MAX + 1 wraps");
    CK_BITS(BP_I32, unary1(be, BP_OP_NEG, BP_I32, imin, BP_I32), 0x80000000,
            "-INT_MIN wraps");
    uint64_t p62 = 1ull << 62, four = 4;
    CK_BITS(BP_I64, binary1(be, BP_OP_MUL, BP_I64, &p62, 0, &four, 0, BP_I64),
            0, "2^62 * 4 wraps");
    CK_BITS(BP_I32, unary1(be, BP_OP_CAST, BP_F32, bp_f32_bits(-2.7f), BP_I32),
            (uint32_t)-2, "i32(-2.7)");
    CK_BITS(BP_I32, unary1(be, BP_OP_CAST, BP_F32, bp_f32_bits(3.99f), BP_I32),
            3, "i32(3.99)");
    CK_BITS(BP_I32, unary1(be, BP_OP_CAST, BP_F32, 0x7fc00000, BP_I32),
            0x80000000, "i32(NaN)");
    /* Exact integer inputs: 2^53+1 and 2^53+3 are not doubles. */
    CK_BITS(BP_F64, unary1(be, BP_OP_CAST, BP_I64, (1ull << 53) + 1, BP_F64),
            bp_f64_bits(0x1p53), "f64(2^53+1)");
    CK_BITS(BP_F64, unary1(be, BP_OP_CAST, BP_I64, (1ull << 53) + 3, BP_F64),
            bp_f64_bits(0x1p53 + 4), "f64(2^53+3)");
    CK_BITS(BP_F32, unary1(be, BP_OP_CAST, BP_I64, (1ull << 62) + 1, BP_F32),
            0x5e800000, "f32(2^62+1)");
    CK_BITS(BP_F32, unary1(be, BP_OP_CAST, BP_I64, (1ull << 24) + 1, BP_F32),
            0x4b800000, "f32(2^24+1)");
    CK_BITS(BP_F32, unary1(be, BP_OP_CAST, BP_I64, (1ull << 24) + 3, BP_F32),
            0x4b800002, "f32(2^24+3)");
    /* Integer pow: 3^40 wraps to 12157665459056928801 - 2^64. */
    uint64_t three = 3, forty = 40, m1 = (uint64_t)-1, m3 = (uint64_t)-3,
             two = 2, zero = 0;
    CK_BITS(BP_I64, binary1(be, BP_OP_POW, BP_I64, &three, 0, &forty, 0,
                            BP_I64), (uint64_t)-6289078614652622815ll,
            "3^40 wraps");
    CK_BITS(BP_I64, binary1(be, BP_OP_POW, BP_I64, &m1, 0, &m3, 0, BP_I64),
            (uint64_t)-1, "(-1)^-3");
    CK_BITS(BP_I64, binary1(be, BP_OP_POW, BP_I64, &two, 0, &m1, 0, BP_I64),
            0, "2^-1 truncates");
    CK_BITS(BP_I64, binary1(be, BP_OP_POW, BP_I64, &zero, 0, &zero, 0, BP_I64),
            1, "0^0");
    bp_buf_t a = vec_bits(BP_I64, 1, &zero), b = vec_bits(BP_I64, 1, &m1);
    int64_t shape[1] = {1};
    bp_buf_t out = mkbuf(BP_I64, 1, shape);
    bp_op_t op = mkop(BP_OP_POW);
    op.b.kind = BP_ARG_BUF;
    bp_error_t err = {0};
    ck_assert_int_eq(exec(be, &op, &a, &b, &out, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "negative power") != NULL, "%s", err.msg);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

/* clamp_tensor: the exact min(max(a, lo), hi) of the operands' values,
 * NaN where any operand is, max(-0, +0) = +0 (IEEE 754-2019 maximum), a
 * crossed pair gives hi; one bound is maximum or minimum; a 0-D bound
 * broadcasts; an fp64 bound promotes the result to fp64 (exact); by hand. */
START_TEST(t_clamp_tensor)
{
    bp_backend_t *be = open_oracle(1);
    int64_t seven = 7, none[1] = {0};
    double av[] = {-2.0, 0.5, 3.0, 0.0, 1.0, -0.0, 0.5};
    double lv[] = {-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0};
    double hv[] = {1.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0};
    bp_buf_t a = vec_vals(BP_F32, 7, av), lo = vec_vals(BP_F32, 7, lv),
             hi = vec_vals(BP_F32, 7, hv), out = mkbuf(BP_F32, 1, &seven);
    bp_buf_set(&a, 3, NAN); /* NaN a, then NaN lo */
    bp_buf_set(&lo, 4, NAN);
    bp_op_t op = mkop(BP_OP_CLAMP_TENSOR);
    op.has_min = op.has_max = true;
    const bp_buf_t *both[2] = {&lo, &hi};
    bp_exec_t x = {.op = &op, .a = &a, .inputs = both, .ninputs = 2, .out = &out};
    bp_error_t err = {0};
    ck_assert_msg(be->op[op.kind](be, &x, &err) == BP_OK, "%s", err.msg);
    static const uint32_t want[] = {0xbf800000u, 0x3f000000u, 0x40000000u, 0x7fc00000u,
                                    0x7fc00000u, 0x00000000u, 0x40000000u};
    for (int i = 0; i < 7; i++)
        CK_BITS(BP_F32, bp_buf_bits(&out, (size_t)i), want[i], "clamp_tensor[%d]", i);
    /* min alone: maximum(a, lo); max alone: minimum(a, hi) */
    op.has_max = false;
    x.ninputs = 1;
    ck_assert_int_eq(be->op[op.kind](be, &x, &err), BP_OK);
    CK_BITS(BP_F32, bp_buf_bits(&out, 2), 0x40400000u, "maximum(3, 0)");
    CK_BITS(BP_F32, bp_buf_bits(&out, 6), 0x40800000u, "maximum(0.5, 4)");
    op.has_min = false;
    op.has_max = true;
    both[0] = &hi;
    ck_assert_int_eq(be->op[op.kind](be, &x, &err), BP_OK);
    CK_BITS(BP_F32, bp_buf_bits(&out, 2), 0x40000000u, "minimum(3, 2)");
    CK_BITS(BP_F32, bp_buf_bits(&out, 5), 0x80000000u, "minimum(-0, 1)");
    /* a 0-D fp64 max of 0.1: the result is fp64, 0.1 exactly where it wins */
    double tenth = 0.1;
    bp_buf_t h0 = mkbuf(BP_F64, 0, none), o64 = mkbuf(BP_F64, 1, &seven);
    bp_buf_set(&h0, 0, tenth);
    both[0] = &h0;
    x.out = &o64;
    ck_assert_int_eq(be->op[op.kind](be, &x, &err), BP_OK);
    CK_BITS(BP_F64, bp_buf_bits(&o64, 1), bp_f64_bits(0.1), "minimum(0.5f, 0.1)");
    CK_BITS(BP_F64, bp_buf_bits(&o64, 0), bp_f64_bits(-2.0), "minimum(-2f, 0.1)");
    bp_buf_free(&a);
    bp_buf_free(&lo);
    bp_buf_free(&hi);
    bp_buf_free(&out);
    bp_buf_free(&h0);
    bp_buf_free(&o64);
    bp_backend_close(be);
}
END_TEST

/* clamp, round(decimals), linspace, full: hand-derived. */
START_TEST(t_elem_hand)
{
    bp_backend_t *be = open_oracle(1);
    int64_t three = 3, seven = 7, one = 1;
    double cv[] = {-2.0, 0.5, 3.0};
    bp_buf_t c = vec_vals(BP_F32, 3, cv), co = mkbuf(BP_F32, 1, &three);
    bp_op_t oc = mkop(BP_OP_CLAMP);
    oc.has_min = oc.has_max = true;
    oc.min = -1.0;
    oc.max = 0.25;
    exec_ok(be, &oc, &c, NULL, &co);
    ck_assert_uint_eq(bp_buf_bits(&co, 0), 0xbf800000u);
    ck_assert_uint_eq(bp_buf_bits(&co, 1), 0x3e800000u);
    ck_assert_uint_eq(bp_buf_bits(&co, 2), 0x3e800000u);
    /* 1.2345f = 1.23450005054473876953125: times 100 rounds to 123, and
     * 1.23 rounds to 0x3f9d70a4 */
    double rv[] = {(double)1.2345f};
    bp_buf_t r = vec_vals(BP_F32, 1, rv), ro = mkbuf(BP_F32, 1, &one);
    bp_op_t orn = mkop(BP_OP_ROUND);
    orn.decimals = 2;
    exec_ok(be, &orn, &r, NULL, &ro);
    ck_assert_uint_eq(bp_buf_bits(&ro, 0), 0x3f9d70a4u);
    /* linspace(0, 1, 7): i/6 rounded once: 1/6 = 0x3e2aaaab, 3/6 = 0.5 */
    bp_op_t ol = mkop(BP_OP_LINSPACE);
    ol.start = 0;
    ol.end = 1;
    ol.steps = 7;
    bp_buf_t lo = mkbuf(BP_F32, 1, &seven);
    exec_ok(be, &ol, NULL, NULL, &lo);
    ck_assert_uint_eq(bp_buf_bits(&lo, 1), 0x3e2aaaabu);
    ck_assert_uint_eq(bp_buf_bits(&lo, 3), 0x3f000000u);
    ck_assert_uint_eq(bp_buf_bits(&lo, 6), 0x3f800000u);
    /* full(0.1) in bf16: 0.1 rounded once is 0x3dcd */
    bp_op_t of = mkop(BP_OP_FULL);
    of.value = 0.1;
    bp_buf_t fo = mkbuf(BP_BF16, 1, &three);
    exec_ok(be, &of, NULL, NULL, &fo);
    ck_assert_uint_eq(bp_buf_bits(&fo, 2), 0x3dcd);
    bp_buf_free(&c);
    bp_buf_free(&co);
    bp_buf_free(&r);
    bp_buf_free(&ro);
    bp_buf_free(&lo);
    bp_buf_free(&fo);
    bp_backend_close(be);
}
END_TEST

/* ---- random inputs against MPFR at 256 bits, rounded by ref_bits ---- */

static int ref_apply(bp_op_kind_t k, mpfr_t r, mpfr_t x, mpfr_t y)
{
    switch (k) {
    case BP_OP_ADD: return mpfr_add(r, x, y, MPFR_RNDN);
    case BP_OP_SUB: return mpfr_sub(r, x, y, MPFR_RNDN);
    case BP_OP_MUL: return mpfr_mul(r, x, y, MPFR_RNDN);
    case BP_OP_DIV: return mpfr_div(r, x, y, MPFR_RNDN);
    case BP_OP_POW: return mpfr_pow(r, x, y, MPFR_RNDN);
    case BP_OP_RECIPROCAL: return mpfr_d_div(r, 1.0, x, MPFR_RNDN);
    case BP_OP_EXP: return mpfr_exp(r, x, MPFR_RNDN);
    case BP_OP_LOG: return mpfr_log(r, x, MPFR_RNDN);
    case BP_OP_SIN: return mpfr_sin(r, x, MPFR_RNDN);
    case BP_OP_COS: return mpfr_cos(r, x, MPFR_RNDN);
    case BP_OP_TANH: return mpfr_tanh(r, x, MPFR_RNDN);
    case BP_OP_SQRT: return mpfr_sqrt(r, x, MPFR_RNDN);
    case BP_OP_RSQRT: /* 1/sqrt: IEEE's rSqrt(-0) = -inf on the way */
        mpfr_sqrt(r, x, MPFR_RNDN);
        return mpfr_d_div(r, 1.0, r, MPFR_RNDN);
    case BP_OP_NEG: return mpfr_neg(r, x, MPFR_RNDN);
    case BP_OP_ERF: return mpfr_erf(r, x, MPFR_RNDN);
    case BP_OP_EXP2: return mpfr_exp2(r, x, MPFR_RNDN);
    case BP_OP_LOG2: return mpfr_log2(r, x, MPFR_RNDN);
    case BP_OP_LOG1P: return mpfr_log1p(r, x, MPFR_RNDN);
    case BP_OP_EXPM1: return mpfr_expm1(r, x, MPFR_RNDN);
    case BP_OP_ABS: return mpfr_abs(r, x, MPFR_RNDN);
    case BP_OP_FLOOR: return mpfr_floor(r, x);
    case BP_OP_CEIL: return mpfr_ceil(r, x);
    case BP_OP_TRUNC: return mpfr_trunc(r, x);
    case BP_OP_ROUND: return mpfr_rint(r, x, MPFR_RNDN);
    case BP_OP_SIGN: return mpfr_set_si(r, mpfr_nan_p(x) ? 0 : mpfr_sgn(x), MPFR_RNDN);
    case BP_OP_MAXIMUM:
    case BP_OP_MINIMUM:
        if (mpfr_nan_p(x) || mpfr_nan_p(y)) {
            mpfr_set_nan(r);
            return 0;
        }
        return k == BP_OP_MAXIMUM ? mpfr_max(r, x, y, MPFR_RNDN) : mpfr_min(r, x, y, MPFR_RNDN);
    case BP_OP_SIGMOID:
    case BP_OP_SILU:
    case BP_OP_GELU: { /* at r's precision: 1/(1+e^-x), x/(1+e^-x), x/2 erfc(-x/sqrt2) */
        mpfr_t u;
        mpfr_init2(u, mpfr_get_prec(r));
        if (k == BP_OP_GELU) {
            mpfr_sqrt_ui(u, 2, MPFR_RNDN);
            mpfr_div(u, x, u, MPFR_RNDN);
            mpfr_neg(u, u, MPFR_RNDN);
            mpfr_erfc(u, u, MPFR_RNDN);
            mpfr_mul(r, u, x, MPFR_RNDN);
            mpfr_div_2ui(r, r, 1, MPFR_RNDN);
        } else {
            mpfr_neg(u, x, MPFR_RNDN);
            mpfr_exp(u, u, MPFR_RNDN);
            mpfr_add_ui(u, u, 1, MPFR_RNDN);
            if (k == BP_OP_SIGMOID)
                mpfr_ui_div(r, 1, u, MPFR_RNDN);
            else
                mpfr_div(r, x, u, MPFR_RNDN);
        }
        mpfr_clear(u);
        return 0;
    }
    default: return mpfr_set(r, x, MPFR_RNDN);
    }
}

typedef struct {
    bp_op_kind_t kind;
    bool binary;
    int lo, hi;   /* exponent range of moderate inputs; hi 0: the dtype's */
    int blo, bhi; /* for b */
} rcase_t;

static const rcase_t RCASES[] = {
    {BP_OP_ADD, true, 0, 0, 0, 0},     {BP_OP_SUB, true, 0, 0, 0, 0},
    {BP_OP_MUL, true, 0, 0, 0, 0},     {BP_OP_DIV, true, 0, 0, 0, 0},
    {BP_OP_POW, true, -3, 4, -4, 4},   {BP_OP_RECIPROCAL, false, 0, 0, 0, 0},
    {BP_OP_EXP, false, -6, 8, 0, 0},   {BP_OP_LOG, false, 0, 0, 0, 0},
    {BP_OP_SIN, false, -12, 40, 0, 0}, {BP_OP_COS, false, -12, 40, 0, 0},
    {BP_OP_TANH, false, -14, 4, 0, 0}, {BP_OP_SQRT, false, 0, 0, 0, 0},
    {BP_OP_RSQRT, false, 0, 0, 0, 0},  {BP_OP_NEG, false, 0, 0, 0, 0},
    {BP_OP_CAST, false, 0, 0, 0, 0},
    {BP_OP_ERF, false, -14, 3, 0, 0},   {BP_OP_EXP2, false, -6, 8, 0, 0},
    {BP_OP_LOG2, false, 0, 0, 0, 0},    {BP_OP_LOG1P, false, -14, 8, 0, 0},
    {BP_OP_EXPM1, false, -14, 6, 0, 0}, {BP_OP_ABS, false, 0, 0, 0, 0},
    {BP_OP_FLOOR, false, -4, 30, 0, 0}, {BP_OP_CEIL, false, -4, 30, 0, 0},
    {BP_OP_TRUNC, false, -4, 30, 0, 0}, {BP_OP_ROUND, false, -4, 30, 0, 0},
    {BP_OP_SIGN, false, 0, 0, 0, 0},    {BP_OP_MAXIMUM, true, 0, 0, 0, 0},
    {BP_OP_MINIMUM, true, 0, 0, 0, 0},  {BP_OP_SIGMOID, false, -10, 7, 0, 0},
    {BP_OP_SILU, false, -10, 7, 0, 0},  {BP_OP_GELU, false, -10, 4, 0, 0},
};

static void random_case(bp_backend_t *be, const rcase_t *rc, bp_dtype_t dt,
                        size_t n)
{
    int bias = (1 << (bp_dtype_info(dt)->exp_bits - 1)) - 1;
    int lo = rc->hi ? rc->lo : -bias - 8, hi = rc->hi ? rc->hi : bias;
    int blo = rc->bhi ? rc->blo : lo, bhi = rc->bhi ? rc->bhi : hi;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(dt, 1, shape), b = mkbuf(dt, 1, shape);
    for (size_t i = 0; i < n; i++) {
        bp_dtype_store_bits(dt, a.data, i, rnd_input(dt, lo, hi));
        bp_dtype_store_bits(dt, b.data, i, rnd_input(dt, blo, bhi));
    }
    /* Casts go from the widest dtype into dt. */
    bp_buf_t wide = mkbuf(BP_F64, 1, shape);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(BP_F64, wide.data, i,
                            rnd_input(BP_F64, lo - 20, hi + 2));
    const bp_buf_t *src = rc->kind == BP_OP_CAST ? &wide : &a;
    bp_buf_t out = mkbuf(dt, 1, shape);
    bp_op_t op = mkop(rc->kind);
    if (rc->binary)
        op.b.kind = BP_ARG_BUF;
    exec_ok(be, &op, src, rc->binary ? &b : NULL, &out);
    mpfr_t x, y, r;
    /* 256 bits, but the composites (x / (1 + exp(-x)) ...) of a tiny x
     * differ from x/2 by about x^2/4: a subnormal result can sit that
     * close to a tie, which only ~1100 bits resolve (silu of
     * 0x1.534b88061d819p-1022 is just above the midpoint of two fp64
     * subnormals) */
    bool composite = rc->kind == BP_OP_SIGMOID || rc->kind == BP_OP_SILU ||
                     rc->kind == BP_OP_GELU;
    mpfr_inits2(composite ? 2400 : 256, x, y, r, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(x, bp_buf_get(src, i), MPFR_RNDN);
        mpfr_set_d(y, bp_buf_get(&b, i), MPFR_RNDN);
        ref_apply(rc->kind, r, x, y);
        uint64_t want = ref_bits(r, dt), got = bp_buf_bits(&out, i);
        if (!bits_match(dt, got, want))
            CK_BITS(dt, got, want, "%s(%a, %a) element %zu",
                    bp_op_name(rc->kind), bp_buf_get(src, i),
                    bp_buf_get(&b, i), i);
    }
    mpfr_clears(x, y, r, (mpfr_ptr)0);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&wide);
    bp_buf_free(&out);
}

START_TEST(t_random_vs_mpfr256)
{
    seed_init("random_vs_mpfr256");
    bp_backend_t *be = open_oracle(2);
    for (size_t c = 0; c < sizeof RCASES / sizeof RCASES[0]; c++)
        for (int d = 0; d < NFLOATS; d++)
            random_case(be, &RCASES[c], FLOATS[d], 1500);
    bp_backend_close(be);
}
END_TEST

/* Scalar operands are doubles: tensor / scalar and scalar ** tensor. */
START_TEST(t_random_scalar_operands)
{
    seed_init("random_scalar_operands");
    bp_backend_t *be = open_oracle(1);
    mpfr_t x, y, r;
    mpfr_inits2(256, x, y, r, (mpfr_ptr)0);
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = FLOATS[d];
        for (int it = 0; it < 300; it++) {
            uint64_t t = rnd_input(dt, -6, 6);
            double s = ldexp(1.0 + rnd_unit(), (int)(rnd64() % 8)) + 1.0;
            mpfr_set_d(x, bp_dtype_bits_to_double(dt, t), MPFR_RNDN);
            mpfr_set_d(y, s, MPFR_RNDN);
            mpfr_div(r, x, y, MPFR_RNDN);
            CK_BITS(dt, binary1(be, BP_OP_DIV, dt, &t, 0, NULL, s, dt),
                    ref_bits(r, dt), "%a / %a", mpfr_get_d(x, MPFR_RNDN), s);
            mpfr_pow(r, y, x, MPFR_RNDN);
            CK_BITS(dt, binary1(be, BP_OP_POW, dt, NULL, s, &t, 0, dt),
                    ref_bits(r, dt), "%a ** %a", s, mpfr_get_d(x, MPFR_RNDN));
        }
    }
    mpfr_clears(x, y, r, (mpfr_ptr)0);
    bp_backend_close(be);
}
END_TEST

/* Casts against dtype.c's bit-level conversions and the FPU's f64->f32. */
START_TEST(t_cast_vs_dtype)
{
    seed_init("cast_vs_dtype");
    bp_backend_t *be = open_oracle(2);
    size_t n = 200000;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(BP_F32, 1, shape), d = mkbuf(BP_F64, 1, shape);
    for (size_t i = 0; i < n; i++) {
        bp_dtype_store_bits(BP_F32, a.data, i, (uint32_t)rnd64());
        bp_dtype_store_bits(BP_F64, d.data, i, rnd_input(BP_F64, -160, 130));
    }
    bp_buf_t h = mkbuf(BP_F16, 1, shape), bf = mkbuf(BP_BF16, 1, shape),
             f = mkbuf(BP_F32, 1, shape);
    bp_op_t op = mkop(BP_OP_CAST);
    exec_ok(be, &op, &a, NULL, &h);
    exec_ok(be, &op, &a, NULL, &bf);
    exec_ok(be, &op, &d, NULL, &f);
    for (size_t i = 0; i < n; i++) {
        float x = bp_f32_from_bits((uint32_t)bp_buf_bits(&a, i));
        CK_BITS(BP_F16, bp_buf_bits(&h, i), bp_f32_to_f16(x), "f16(%a)",
                (double)x);
        CK_BITS(BP_BF16, bp_buf_bits(&bf, i), bp_f32_to_bf16(x), "bf16(%a)",
                (double)x);
        double y = bp_buf_get(&d, i);
        CK_BITS(BP_F32, bp_buf_bits(&f, i), bp_f32_bits((float)y), "f32(%a)",
                y);
    }
    bp_buf_free(&a);
    bp_buf_free(&d);
    bp_buf_free(&h);
    bp_buf_free(&bf);
    bp_buf_free(&f);
    bp_backend_close(be);
}
END_TEST

/* The oracle's casts to fp8 and bool: one MPFR rounding to the format
 * (bp_oracle_round) against dtype.c's bit-level encoder (itself checked
 * by enumeration in check_dtype_fp8), which for an f32 operand is the
 * same single rounding, non-saturating; bool is x != 0, NaN true.  The
 * f32 values span fp8's binades, the subnormals, ties and overflow. */
START_TEST(t_cast_fp8_bool)
{
    seed_init("cast_fp8_bool");
    bp_backend_t *be = open_oracle(2);
    size_t n = 100000;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(BP_F32, 1, shape);
    for (size_t i = 0; i < n; i++) {
        uint64_t b = rnd_input(BP_F32, -20, 17);
        if (i % 7 == 0) /* a tie or a near-tie of the 2- and 3-bit mantissas */
            b = (b & ~0xfffffull) | (i % 14 ? 0x80000u : 0x100000u) | (rnd64() & 1);
        bp_dtype_store_bits(BP_F32, a.data, i, b);
    }
    bp_buf_t e4 = mkbuf(BP_F8_E4M3, 1, shape), e5 = mkbuf(BP_F8_E5M2, 1, shape),
             bo = mkbuf(BP_BOOL, 1, shape);
    bp_op_t op = mkop(BP_OP_CAST);
    exec_ok(be, &op, &a, NULL, &e4);
    exec_ok(be, &op, &a, NULL, &e5);
    exec_ok(be, &op, &a, NULL, &bo);
    for (size_t i = 0; i < n; i++) {
        float x = bp_f32_from_bits((uint32_t)bp_buf_bits(&a, i));
        CK_BITS(BP_F8_E4M3, bp_buf_bits(&e4, i), bp_f32_to_f8e4m3(x, false), "e4m3(%a)",
                (double)x);
        CK_BITS(BP_F8_E5M2, bp_buf_bits(&e5, i), bp_f32_to_f8e5m2(x, false), "e5m2(%a)",
                (double)x);
        ck_assert_uint_eq(bp_buf_bits(&bo, i), x != 0.0f || isnan(x));
    }
    /* by hand: 464 ties to 448 (0x7e), 465 is NaN in e4m3fn; 61440 is
     * e5m2's infinity */
    static const struct { uint32_t x; uint64_t e4, e5; } h[] = {
        {0x43e80000u /* 464 */, 0x7e, 0x5f}, {0x43e88000u /* 465 */, 0x7f, 0x5f},
        {0x476f0000u /* 61184 */, 0x7f, 0x7b}, {0x47700000u /* 61440 */, 0x7f, 0x7c},
        {0xff800000u /* -inf */, 0xff, 0xfc}, {0x3a800000u /* 2^-10 */, 0x00, 0x14},
    };
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
        CK_BITS(BP_F8_E4M3, unary1(be, BP_OP_CAST, BP_F32, h[i].x, BP_F8_E4M3), h[i].e4,
                "e4m3(0x%08x)", h[i].x);
        CK_BITS(BP_F8_E5M2, unary1(be, BP_OP_CAST, BP_F32, h[i].x, BP_F8_E5M2), h[i].e5,
                "e5m2(0x%08x)", h[i].x);
    }
    bp_buf_free(&a);
    bp_buf_free(&e4);
    bp_buf_free(&e5);
    bp_buf_free(&bo);
    bp_backend_close(be);
}
END_TEST

/* ---- generators ---- */

static void check_arange(bp_backend_t *be, double start, double end,
                         double step, size_t n, bp_dtype_t dt)
{
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t out = mkbuf(dt, 1, shape);
    bp_op_t op = mkop(BP_OP_ARANGE);
    op.a.kind = BP_ARG_NONE;
    op.start = start;
    op.end = end;
    op.step = step;
    exec_ok(be, &op, NULL, NULL, &out);
    mpfr_t v, t;
    mpfr_inits2(256, v, t, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, step, MPFR_RNDN);
        mpfr_mul_ui(t, t, (unsigned long)i, MPFR_RNDN);
        mpfr_set_d(v, start, MPFR_RNDN);
        mpfr_add(v, v, t, MPFR_RNDN); /* exact at 256 bits here */
        uint64_t want;
        if (bp_dtype_info(dt)->is_float) {
            want = ref_bits(v, dt);
        } else {
            want = (uint64_t)mpfr_get_sj(v, MPFR_RNDZ);
            if (dt == BP_I32)
                want &= 0xffffffffu;
        }
        CK_BITS(dt, bp_buf_bits(&out, i), want, "arange(%g, %g, %g)[%zu]",
                start, end, step, i);
    }
    mpfr_clears(v, t, (mpfr_ptr)0);
    bp_buf_free(&out);
}

START_TEST(t_arange)
{
    bp_backend_t *be = open_oracle(2);
    check_arange(be, 0, 100, 0.3, 334, BP_F32);
    check_arange(be, 0, 100, 0.3, 334, BP_BF16);
    check_arange(be, 1, -1, -0.1, 20, BP_F16);
    check_arange(be, 0, 4096, 1, 4096, BP_BF16);
    check_arange(be, 0, 4096, 1, 4096, BP_F16);
    check_arange(be, -5, 5, 2, 5, BP_I64);
    check_arange(be, 0.5, 3, 0.5, 5, BP_I32);
    /* The odd positions above 256 that bf16 loses. */
    int64_t shape[1] = {300};
    bp_buf_t out = mkbuf(BP_BF16, 1, shape);
    bp_op_t op = mkop(BP_OP_ARANGE);
    op.a.kind = BP_ARG_NONE;
    op.end = 300;
    op.step = 1;
    exec_ok(be, &op, NULL, NULL, &out);
    CK_BITS(BP_BF16, bp_buf_bits(&out, 257), 0x4380, "bf16 arange [257]");
    CK_BITS(BP_BF16, bp_buf_bits(&out, 259), 0x4382, "bf16 arange [259]");
    CK_BITS(BP_BF16, bp_buf_bits(&out, 255), 0x437f, "bf16 arange [255]");
    op.step = 0;
    bp_error_t err = {0};
    ck_assert_int_eq(exec(be, &op, NULL, NULL, &out, &err), BP_EINPUT);
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_uniform)
{
    bp_backend_t *be = open_oracle(2);
    size_t n = 5000;
    int64_t shape[1] = {(int64_t)n};
    bp_op_t op = mkop(BP_OP_UNIFORM);
    op.a.kind = BP_ARG_NONE;
    op.seed = 1234;
    op.stream = 7;
    op.low = -2;
    op.high = 3;
    mpfr_t v;
    mpfr_init2(v, 64);
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = FLOATS[d];
        bp_buf_t out = mkbuf(dt, 1, shape);
        exec_ok(be, &op, NULL, NULL, &out);
        for (size_t i = 0; i < n; i++) {
            float u = bp_rng_uniform(1234, 7, i, -2.0f, 3.0f);
            mpfr_set_d(v, (double)u, MPFR_RNDN);
            CK_BITS(dt, bp_buf_bits(&out, i), ref_bits(v, dt), "uniform[%zu]",
                    i);
        }
        bp_buf_free(&out);
    }
    mpfr_clear(v);
    bp_backend_close(be);
}
END_TEST

/* randn and normal: the stream's double (bp_rng_normal) rounded once by
 * ref_bits, in fp64 and every float dtype; and the CPU backend's bits, which
 * reach the same rounding through float rounded to odd, identical. */
START_TEST(t_normal)
{
    bp_backend_t *be = open_oracle(2), *cpu = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK, "%s", err.msg);
    size_t n = 20000;
    int64_t shape[1] = {(int64_t)n};
    mpfr_t v;
    mpfr_init2(v, 64);
    for (int k = 0; k < 2; k++) {
        bp_op_t op = mkop(k ? BP_OP_NORMAL : BP_OP_RANDN);
        op.a.kind = BP_ARG_NONE;
        op.seed = 99;
        op.stream = 3;
        /* normal: a large mean and std reach fp16's overflow and bf16's
         * rounding of large values; randn: mean 0, std 1 */
        op.mean = k ? 3000.0 : 0.0;
        op.std = k ? 7777.0 : 1.0;
        for (int d = 0; d < NFLOATS; d++) {
            bp_dtype_t dt = FLOATS[d];
            bp_buf_t out = mkbuf(dt, 1, shape), c = mkbuf(dt, 1, shape);
            exec_ok(be, &op, NULL, NULL, &out);
            exec_ok(cpu, &op, NULL, NULL, &c);
            for (size_t i = 0; i < n; i++) {
                double x = bp_rng_normal(99, 3, i, op.mean, op.std);
                mpfr_set_d(v, x, MPFR_RNDN);
                uint64_t want = ref_bits(v, dt);
                CK_BITS(dt, bp_buf_bits(&out, i), want, "%s[%zu] oracle", bp_op_name(op.kind), i);
                CK_BITS(dt, bp_buf_bits(&c, i), want, "%s[%zu] cpu", bp_op_name(op.kind), i);
            }
            bp_buf_free(&out);
            bp_buf_free(&c);
        }
    }
    mpfr_clear(v);
    bp_backend_close(cpu);
    bp_backend_close(be);
}
END_TEST

/* ---- broadcasting and outer ---- */

START_TEST(t_broadcast_outer)
{
    bp_backend_t *be = open_oracle(1);
    double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {10, 20, 30}, cv[] = {100, 200};
    bp_buf_t a = mat_vals(BP_F32, 2, 3, av), b = vec_vals(BP_F32, 3, bv),
             c = mat_vals(BP_F32, 2, 1, cv), d = mat_vals(BP_F32, 1, 3, bv);
    int64_t s23[2] = {2, 3};
    bp_buf_t out = mkbuf(BP_F32, 2, s23);
    bp_op_t op = mkop(BP_OP_ADD);
    op.b.kind = BP_ARG_BUF;
    exec_ok(be, &op, &a, &b, &out);
    double w1[] = {11, 22, 33, 14, 25, 36};
    check_vals(&out, w1, "[2,3] + [3]");
    exec_ok(be, &op, &c, &d, &out);
    double w2[] = {110, 120, 130, 210, 220, 230};
    check_vals(&out, w2, "[2,1] + [1,3]");
    bp_error_t err = {0};
    bp_buf_t e = vec_vals(BP_F32, 2, cv);
    ck_assert_int_eq(exec(be, &op, &a, &e, &out, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "broadcast") != NULL, "%s", err.msg);
    /* outer: products rounded once, here into f16 */
    double xv[] = {3, 0x1.004p0, -7}, yv[] = {0x1.002p0, 1000, 0x1p-20, 5};
    bp_buf_t x = vec_vals(BP_F32, 3, xv), y = vec_vals(BP_F32, 4, yv);
    int64_t s34[2] = {3, 4};
    bp_buf_t o = mkbuf(BP_F16, 2, s34);
    bp_op_t oo = mkop(BP_OP_OUTER);
    oo.b.kind = BP_ARG_BUF;
    exec_ok(be, &oo, &x, &y, &o);
    mpfr_t p;
    mpfr_init2(p, 64);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            mpfr_set_d(p, xv[i] * yv[j], MPFR_RNDN); /* exact in double */
            CK_BITS(BP_F16, bp_buf_bits(&o, (size_t)(i * 4 + j)),
                    ref_bits(p, BP_F16), "outer [%d, %d]", i, j);
        }
    mpfr_clear(p);
    ck_assert_int_eq(exec(be, &oo, &a, &y, &o, &err), BP_EINPUT);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&c);
    bp_buf_free(&d);
    bp_buf_free(&e);
    bp_buf_free(&x);
    bp_buf_free(&y);
    bp_buf_free(&o);
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

/* ---- thread-count independence ---- */

/* The oracle keeps its worker threads from one map to the next
 * (oracle_mpfr.c): three oracles mapping at once (sharing the kept
 * workers) and a child forked after the workers started (it has none of
 * them) give the bits of one thread. */
typedef struct {
    const bp_buf_t *a;
    bp_buf_t out;
    int threads;
} conc_t;

static void *conc_run(void *p)
{
    conc_t *c = p;
    bp_backend_t *be = open_oracle(c->threads);
    bp_op_t op = mkop(BP_OP_SIN);
    for (int r = 0; r < 4; r++)
        exec_ok(be, &op, c->a, NULL, &c->out);
    bp_backend_close(be);
    return NULL;
}

START_TEST(t_threads_kept)
{
    seed_init("threads_kept");
    size_t n = 8192;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(BP_F32, 1, shape);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, rnd_input(BP_F32, -10, 30));
    conc_t one = {&a, mkbuf(BP_F32, 1, shape), 1};
    conc_run(&one);
    conc_t c[3] = {{&a, mkbuf(BP_F32, 1, shape), 4}, {&a, mkbuf(BP_F32, 1, shape), 3},
                   {&a, mkbuf(BP_F32, 1, shape), 4}};
    pthread_t t[3];
    for (int k = 0; k < 3; k++)
        ck_assert(pthread_create(&t[k], NULL, conc_run, &c[k]) == 0);
    for (int k = 0; k < 3; k++) {
        pthread_join(t[k], NULL);
        ck_assert_msg(memcmp(c[k].out.data, one.out.data, bp_buf_nbytes(&a)) == 0,
                      "oracle %d of 3 at once differs from one thread", k);
    }
#ifndef __SANITIZE_THREAD__ /* ThreadSanitizer cannot start threads in a forked child */
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        alarm(120); /* a child waiting for workers it lacks would hang */
        conc_t ch = {&a, mkbuf(BP_F32, 1, shape), 4};
        conc_run(&ch);
        _exit(memcmp(ch.out.data, one.out.data, bp_buf_nbytes(&a)) == 0 ? 0 : 1);
    }
    int ws = 0;
    ck_assert(waitpid(pid, &ws, 0) == pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                  "the forked child's oracle failed or hung (status %d)", ws);
#endif
    for (int k = 0; k < 3; k++)
        bp_buf_free(&c[k].out);
    bp_buf_free(&one.out);
    bp_buf_free(&a);
}
END_TEST

/* One oracle, three threads at once (run --jobs): sin and cos of values
 * that overlap, so that the results kept across ops are looked up, added
 * and grown (two functions per sin_cos) by several threads, give the bits
 * of a fresh oracle on one thread each. */
typedef struct {
    bp_backend_t *be;
    bp_op_kind_t kind;
    const bp_buf_t *a;
    bp_buf_t out;
} shared_t;

static void *shared_run(void *p)
{
    shared_t *c = p;
    bp_op_t op = mkop(c->kind);
    for (int r = 0; r < 2; r++)
        exec_ok(c->be, &op, c->a, NULL, &c->out);
    bp_backend_thread_done(); /* MPFR's constants of this thread */
    return NULL;
}

START_TEST(t_threads_shared)
{
    seed_init("threads_shared");
    size_t n = 6000;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(BP_F32, 1, shape), b = mkbuf(BP_F32, 1, shape);
    for (size_t i = 0; i < n; i++) {
        bp_dtype_store_bits(BP_F32, a.data, i, rnd_input(BP_F32, -10, 30));
        /* b: a's second half, then values of its own */
        bp_dtype_store_bits(BP_F32, b.data, i,
                            i < n / 2 ? bp_dtype_load_bits(BP_F32, a.data, n / 2 + i)
                                      : rnd_input(BP_F32, -10, 30));
    }
    bp_backend_t *be = open_oracle(2);
    shared_t c[4] = {{be, BP_OP_SIN, &a, mkbuf(BP_F32, 1, shape)},
                     {be, BP_OP_COS, &b, mkbuf(BP_F32, 1, shape)},
                     {be, BP_OP_SIN, &b, mkbuf(BP_F32, 1, shape)},
                     {be, BP_OP_COS, &a, mkbuf(BP_F32, 1, shape)}};
    pthread_t t[4];
    for (int k = 0; k < 4; k++)
        ck_assert(pthread_create(&t[k], NULL, shared_run, &c[k]) == 0);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    bp_backend_close(be);
    for (int k = 0; k < 4; k++) {
        shared_t one = {open_oracle(1), c[k].kind, c[k].a, mkbuf(BP_F32, 1, shape)};
        shared_run(&one);
        bp_backend_close(one.be);
        for (size_t i = 0; i < n; i++)
            CK_BITS(BP_F32, bp_buf_bits(&c[k].out, i), bp_buf_bits(&one.out, i),
                    "%s of thread %d of 4 [%zu]", bp_op_name(c[k].kind), k, i);
        bp_buf_free(&one.out);
        bp_buf_free(&c[k].out);
    }
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

START_TEST(t_threads_identical)
{
    seed_init("threads_identical");
    size_t n = 100000;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t a = mkbuf(BP_F32, 1, shape);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(BP_F32, a.data, i, rnd_input(BP_F32, -10, 30));
    bp_buf_t out[3];
    static const bp_op_kind_t kinds[] = {BP_OP_SIN, BP_OP_EXP};
    for (size_t k = 0; k < 2; k++) {
        bp_op_t op = mkop(kinds[k]);
        for (int t = 0; t < 3; t++) {
            bp_backend_t *be = open_oracle(t + 1);
            out[t] = mkbuf(k ? BP_F16 : BP_F32, 1, shape);
            exec_ok(be, &op, &a, NULL, &out[t]);
            bp_backend_close(be);
        }
        for (int t = 1; t < 3; t++) {
            for (size_t i = 0; i < n; i++)
                CK_BITS(out[0].dtype, bp_buf_bits(&out[t], i),
                        bp_buf_bits(&out[0], i), "%s on %d threads [%zu]",
                        bp_op_name(kinds[k]), t + 1, i);
            ck_assert(memcmp(out[0].data, out[t].data, bp_buf_nbytes(&out[0]))
                      == 0);
        }
        for (int t = 0; t < 3; t++)
            bp_buf_free(&out[t]);
    }
    /* A matmul and a sum whose rows straddle the chunk boundaries. */
    int64_t sa[2] = {37, 50}, sb[2] = {50, 29}, so[2] = {37, 29}, ss[1] = {37};
    bp_buf_t m = mkbuf(BP_F32, 2, sa), w = mkbuf(BP_F32, 2, sb);
    for (size_t i = 0; i < m.numel; i++)
        bp_dtype_store_bits(BP_F32, m.data, i, rnd_input(BP_F32, -10, 10));
    for (size_t i = 0; i < w.numel; i++)
        bp_dtype_store_bits(BP_F32, w.data, i, rnd_input(BP_F32, -10, 10));
    bp_buf_t mo[3], so3[3];
    bp_op_t mm = mkop(BP_OP_MATMUL), sm = mkop(BP_OP_SUM);
    mm.b.kind = BP_ARG_BUF;
    sm.has_axis = true;
    sm.axis = 1;
    for (int t = 0; t < 3; t++) {
        bp_backend_t *be = open_oracle(t + 1);
        mo[t] = mkbuf(BP_BF16, 2, so);
        so3[t] = mkbuf(BP_F32, 1, ss);
        exec_ok(be, &mm, &m, &w, &mo[t]);
        exec_ok(be, &sm, &m, NULL, &so3[t]);
        bp_backend_close(be);
    }
    for (int t = 1; t < 3; t++) {
        ck_assert(memcmp(mo[0].data, mo[t].data, bp_buf_nbytes(&mo[0])) == 0);
        ck_assert(memcmp(so3[0].data, so3[t].data, bp_buf_nbytes(&so3[0])) ==
                  0);
    }
    for (int t = 0; t < 3; t++) {
        bp_buf_free(&mo[t]);
        bp_buf_free(&so3[t]);
    }
    bp_buf_free(&m);
    bp_buf_free(&w);
    bp_buf_free(&a);
}
END_TEST

/* ---- the backend record and bad input ---- */

START_TEST(t_backend_record)
{
    bp_backend_t *be = open_oracle(0);
    ck_assert_str_eq(be->name, "oracle");
    ck_assert_str_eq(be->key, "oracle");
    ck_assert(!be->device);
    for (int k = 0; k < BP_OP_COUNT; k++)
        ck_assert_msg(be->op[k] != NULL, "op %d missing", k);
    json_t *fp = be->fingerprint;
    ck_assert_ptr_nonnull(fp);
    ck_assert_str_eq(json_string_value(json_object_get(fp, "mpfr")),
                     mpfr_get_version());
    ck_assert_str_eq(json_string_value(json_object_get(fp, "gmp")),
                     gmp_version);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(fp, "precision"), "bf16")), 8);
    ck_assert_int_ge(json_integer_value(json_object_get(fp, "threads")), 1);
    bp_backend_close(be);
    /* Through the registry too. */
    bp_error_t err = {0};
    ck_assert_int_eq(bp_backend_open("oracle", NULL, &be, &err), BP_OK);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_bad_input)
{
    bp_backend_t *be = open_oracle(2);
    bp_error_t err = {0};
    uint64_t one = 0x3f800000;
    bp_buf_t a = vec_bits(BP_F32, 1, &one);
    int64_t s1[1] = {1};
    bp_buf_t io = mkbuf(BP_I32, 1, s1);
    bp_op_t op = mkop(BP_OP_SIN);
    ck_assert_int_eq(exec(be, &op, &a, NULL, &io, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "float dtype") != NULL, "%s", err.msg);
    op = mkop(BP_OP_ADD); /* b missing */
    bp_buf_t fo = mkbuf(BP_F32, 1, s1);
    ck_assert_int_eq(exec(be, &op, &a, NULL, &fo, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "missing") != NULL, "%s", err.msg);
    op = mkop(BP_OP_TENSOR);
    double vals[3] = {1, 2, 3};
    op.values = vals;
    op.nvalues = 3;
    ck_assert_int_eq(exec(be, &op, NULL, NULL, &fo, &err), BP_EINPUT);
    op = mkop(BP_OP_SUM);
    op.has_axis = true;
    op.axis = 3;
    ck_assert_int_eq(exec(be, &op, &a, NULL, &fo, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "axis 3") != NULL, "%s", err.msg);
    bp_buf_free(&a);
    bp_buf_free(&io);
    bp_buf_free(&fo);
    bp_backend_close(be);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("be_oracle");
    TCase *hand = tcase_create("hand-derived");
    tcase_add_test(hand, t_div_nine_tenths);
    tcase_add_test(hand, t_one_third);
    tcase_add_test(hand, t_sqrt_exp);
    tcase_add_test(hand, t_sin_1e22);
    tcase_add_test(hand, t_pow_ten);
    tcase_add_test(hand, t_f16_subnormals);
    tcase_add_test(hand, t_overflow);
    tcase_add_test(hand, t_rounded_once);
    tcase_add_test(hand, t_integers);
    tcase_add_test(hand, t_elem_hand);
    suite_add_tcase(s, hand);
    TCase *ref = tcase_create("reference");
    tcase_set_timeout(ref, 300);
    tcase_add_test(ref, t_random_vs_mpfr256);
    tcase_add_test(ref, t_random_scalar_operands);
    tcase_add_test(ref, t_cast_vs_dtype);
    tcase_add_test(ref, t_cast_fp8_bool);
    tcase_add_test(ref, t_arange);
    tcase_add_test(ref, t_uniform);
    tcase_add_test(ref, t_normal);
    tcase_add_test(hand, t_clamp_tensor);
    suite_add_tcase(s, ref);
    TCase *rest = tcase_create("shapes, threads, record");
    tcase_set_timeout(rest, 300);
    tcase_add_test(rest, t_broadcast_outer);
    tcase_add_test(rest, t_threads_identical);
    tcase_add_test(rest, t_threads_kept);
    tcase_add_test(rest, t_threads_shared);
    tcase_add_test(rest, t_backend_record);
    tcase_add_test(rest, t_bad_input);
    suite_add_tcase(s, rest);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
