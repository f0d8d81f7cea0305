/* Tests of the oracle's whole-tensor ops (oracle_tensor.c): copies against
 * hand-written results, sums and matmuls against exact integer arithmetic
 * rounded by ref_bits (oracle_check.h). */
#include "oracle_check.h"

/* ---- copies ---- */

START_TEST(t_concat)
{
    bp_backend_t *be = open_oracle(2);
    double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {-1, -2};
    bp_buf_t a = mat_vals(BP_F32, 2, 3, av), b = mat_vals(BP_BF16, 2, 1, bv);
    const bp_buf_t *ins[2] = {&a, &b};
    int64_t shape[2] = {2, 4};
    bp_buf_t out = mkbuf(BP_F32, 2, shape);
    bp_op_t op = mkop(BP_OP_CONCAT);
    op.a.kind = BP_ARG_NONE;
    op.has_axis = true;
    op.axis = -1;
    bp_exec_t x = {.op = &op, .inputs = ins, .ninputs = 2, .out = &out};
    bp_error_t err = {0};
    ck_assert_msg(be->op[BP_OP_CONCAT](be, &x, &err) == BP_OK, "%s", err.msg);
    double want[] = {1, 2, 3, -1, 4, 5, 6, -2};
    check_vals(&out, want, "concat axis -1");
    bp_buf_free(&out);
    /* Axis 0 into bf16: 257 rounds (one rounding from f32). */
    double cv[] = {257, 1, 2}, dv[] = {3, 4, 5, 6, 7, 8};
    bp_buf_t c = mat_vals(BP_F32, 1, 3, cv), d = mat_vals(BP_F32, 2, 3, dv);
    const bp_buf_t *ins2[2] = {&c, &d};
    int64_t s3[2] = {3, 3};
    out = mkbuf(BP_BF16, 2, s3);
    op.axis = 0;
    x.inputs = ins2;
    ck_assert_msg(be->op[BP_OP_CONCAT](be, &x, &err) == BP_OK, "%s", err.msg);
    double want2[] = {256, 1, 2, 3, 4, 5, 6, 7, 8};
    check_vals(&out, want2, "concat axis 0");
    /* A misfit is an error, not a crash. */
    x.inputs = ins;
    ck_assert_int_eq(be->op[BP_OP_CONCAT](be, &x, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "does not fit") != NULL, "%s", err.msg);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&c);
    bp_buf_free(&d);
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_slice)
{
    bp_backend_t *be = open_oracle(1);
    double v[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    bp_buf_t a = vec_vals(BP_F32, 10, v);
    bp_op_t op = mkop(BP_OP_SLICE);
    op.s_start = 2;
    op.s_step = 3;
    int64_t s3[1] = {3}, s4[1] = {4};
    bp_buf_t out = mkbuf(BP_F32, 1, s3);
    exec_ok(be, &op, &a, NULL, &out);
    double w1[] = {2, 5, 8};
    check_vals(&out, w1, "slice 2::3");
    bp_buf_free(&out);
    op.s_start = -4;
    op.s_step = 1;
    out = mkbuf(BP_F32, 1, s4);
    exec_ok(be, &op, &a, NULL, &out);
    double w2[] = {6, 7, 8, 9};
    check_vals(&out, w2, "slice -4:");
    op.s_start = 7;
    bp_error_t err = {0};
    ck_assert_int_eq(exec(be, &op, &a, NULL, &out, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "runs past") != NULL, "%s", err.msg);
    bp_buf_free(&out);
    /* 2-D, along axis 1. */
    double m[] = {0, 1, 2, 3, 10, 11, 12, 13};
    bp_buf_t b = mat_vals(BP_F16, 2, 4, m);
    int64_t s22[2] = {2, 2};
    out = mkbuf(BP_F16, 2, s22);
    op.s_start = 1;
    op.s_step = 2;
    op.has_axis = true;
    op.axis = 1;
    exec_ok(be, &op, &b, NULL, &out);
    double w3[] = {1, 3, 11, 13};
    check_vals(&out, w3, "slice axis 1");
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&out);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_rotate_half)
{
    bp_backend_t *be = open_oracle(1);
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    bp_buf_t a = mat_vals(BP_BF16, 2, 4, v);
    int64_t s[2] = {2, 4};
    bp_buf_t out = mkbuf(BP_BF16, 2, s);
    bp_op_t op = mkop(BP_OP_ROTATE_HALF);
    exec_ok(be, &op, &a, NULL, &out);
    double want[] = {-3, -4, 1, 2, -7, -8, 5, 6};
    check_vals(&out, want, "rotate_half");
    /* Negation is exact: a NaN keeps its payload with the sign flipped, an
     * integer wraps. */
    uint64_t nb[2] = {0x7fc00123, 0x7fc00456};
    bp_buf_t n = vec_bits(BP_F32, 2, nb);
    int64_t s2[1] = {2};
    bp_buf_t no = mkbuf(BP_F32, 1, s2);
    exec_ok(be, &op, &n, NULL, &no);
    CK_BITS(BP_F32, bp_buf_bits(&no, 0), 0xffc00456, "rotate_half NaN");
    ck_assert_uint_eq(bp_buf_bits(&no, 0), 0xffc00456);
    uint64_t ib[2] = {5, 0x80000000};
    bp_buf_t ia = vec_bits(BP_I32, 2, ib), io = mkbuf(BP_I32, 1, s2);
    exec_ok(be, &op, &ia, NULL, &io);
    CK_BITS(BP_I32, bp_buf_bits(&io, 0), 0x80000000, "rotate_half INT_MIN");
    CK_BITS(BP_I32, bp_buf_bits(&io, 1), 5, "rotate_half int");
    bp_buf_t odd = mkbuf(BP_BF16, 1, (int64_t[1]){3});
    bp_error_t err = {0};
    ck_assert_int_eq(exec(be, &op, &odd, NULL, &odd, &err), BP_EINPUT);
    bp_buf_free(&a);
    bp_buf_free(&out);
    bp_buf_free(&n);
    bp_buf_free(&no);
    bp_buf_free(&ia);
    bp_buf_free(&io);
    bp_buf_free(&odd);
    bp_backend_close(be);
}
END_TEST

/* ---- reductions against exact integer arithmetic ---- */

static uint64_t sum1(bp_backend_t *be, bp_dtype_t in, size_t n,
                     const double *v, bp_dtype_t out_dt)
{
    bp_buf_t a = vec_vals(in, n, v);
    int64_t shape[1] = {1};
    bp_buf_t out = mkbuf(out_dt, 0, shape);
    bp_op_t op = mkop(BP_OP_SUM);
    op.form = BP_FORM_SEQUENTIAL;
    exec_ok(be, &op, &a, NULL, &out);
    uint64_t r = bp_buf_bits(&out, 0);
    bp_buf_free(&a);
    bp_buf_free(&out);
    return r;
}

START_TEST(t_sum_small)
{
    bp_backend_t *be = open_oracle(1);
    double c1[] = {0x1p30, 1, -0x1p30};
    CK_BITS(BP_F32, sum1(be, BP_F32, 3, c1, BP_F32), 0x3f800000, "cancel");
    double c2[] = {1, 0x1p-24, 0x1p-24};
    CK_BITS(BP_F32, sum1(be, BP_F32, 3, c2, BP_F32), 0x3f800001,
            "1 + 2^-24 + 2^-24");
    double c3[] = {65504, 65504, -65504};
    CK_BITS(BP_F16, sum1(be, BP_F16, 3, c3, BP_F16), 0x7bff,
            "no intermediate overflow");
    double c4[] = {1e300, 1e-300, -1e300};
    CK_BITS(BP_F64, sum1(be, BP_F64, 3, c4, BP_F64), bp_f64_bits(1e-300),
            "f64 span");
    double c5[] = {-0.0, -0.0};
    CK_BITS(BP_F32, sum1(be, BP_F32, 2, c5, BP_F32), 0x80000000, "-0 + -0");
    CK_BITS(BP_F32, sum1(be, BP_F32, 0, c5, BP_F32), 0, "empty sum");
    double c6[] = {2147483647, 1};
    CK_BITS(BP_I32, sum1(be, BP_I32, 2, c6, BP_I32), 0x80000000, "i32 wraps");
    double c7[] = {1, 0x1p-8, 0x1p-30};
    CK_BITS(BP_BF16, sum1(be, BP_F64, 3, c7, BP_BF16), 0x3f81,
            "rounded once into bf16");
    double c8[] = {INFINITY, -INFINITY};
    ck_assert(bp_dtype_bits_isnan(BP_F32, sum1(be, BP_F32, 2, c8, BP_F32)));
    bp_backend_close(be);
}
END_TEST

/* Small integers times 2^-12: every partial sum is exact in int64. */
START_TEST(t_sum_exact)
{
    seed_init("sum_exact");
    bp_backend_t *be = open_oracle(2);
    int64_t R = 3, C = 5000; /* rows longer than one mpfr_sum block */
    int64_t shape[2] = {R, C};
    bp_buf_t a = mkbuf(BP_F32, 2, shape);
    int64_t *iv = malloc((size_t)(R * C) * sizeof *iv);
    for (int64_t i = 0; i < R * C; i++) {
        iv[i] = (int64_t)(rnd64() % (1u << 21)) - (1 << 20);
        bp_buf_set(&a, (size_t)i, ldexp((double)iv[i], -12));
    }
    for (int d = 0; d < 3; d++) {
        bp_dtype_t dt = FLOATS[d];
        bp_op_t op = mkop(BP_OP_SUM);
        /* all elements */
        int64_t one[1] = {1};
        bp_buf_t out = mkbuf(dt, 0, one);
        exec_ok(be, &op, &a, NULL, &out);
        int64_t s = 0;
        for (int64_t i = 0; i < R * C; i++)
            s += iv[i];
        CK_BITS(dt, bp_buf_bits(&out, 0), ref_scaled(s, -12, dt), "sum all");
        bp_buf_free(&out);
        /* along axis 1 and axis 0 */
        op.has_axis = true;
        op.axis = 1;
        int64_t sr[1] = {R}, sc[1] = {C};
        out = mkbuf(dt, 1, sr);
        exec_ok(be, &op, &a, NULL, &out);
        for (int64_t r = 0; r < R; r++) {
            s = 0;
            for (int64_t c = 0; c < C; c++)
                s += iv[r * C + c];
            CK_BITS(dt, bp_buf_bits(&out, (size_t)r), ref_scaled(s, -12, dt),
                    "sum row %lld", (long long)r);
        }
        bp_buf_free(&out);
        op.axis = -2;
        out = mkbuf(dt, 1, sc);
        exec_ok(be, &op, &a, NULL, &out);
        for (int64_t c = 0; c < C; c++) {
            s = 0;
            for (int64_t r = 0; r < R; r++)
                s += iv[r * C + c];
            CK_BITS(dt, bp_buf_bits(&out, (size_t)c), ref_scaled(s, -12, dt),
                    "sum column %lld", (long long)c);
        }
        bp_buf_free(&out);
    }
    /* f64 operands spanning the whole range, in the blocked path. */
    size_t n = 9000;
    double *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = 0x1p-1074;
    v[0] = 0x1p1023;
    v[n - 1] = -0x1p1023;
    CK_BITS(BP_F64, sum1(be, BP_F64, n, v, BP_F64),
            bp_f64_bits((double)(n - 2) * 0x1p-1074), "f64 span, blocked");
    free(v);
    free(iv);
    bp_buf_free(&a);
    bp_backend_close(be);
}
END_TEST

START_TEST(t_matmul_exact)
{
    seed_init("matmul_exact");
    bp_backend_t *be = open_oracle(2);
    int64_t M = 7, K = 64, N = 9;
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N};
    bp_buf_t a = mkbuf(BP_F32, 2, sa), b = mkbuf(BP_F32, 2, sb);
    int64_t *ia = malloc((size_t)(M * K) * sizeof *ia),
            *ib = malloc((size_t)(K * N) * sizeof *ib);
    for (int64_t i = 0; i < M * K; i++) {
        ia[i] = (int64_t)(rnd64() % 4097) - 2048;
        bp_buf_set(&a, (size_t)i, ldexp((double)ia[i], -3));
    }
    for (int64_t i = 0; i < K * N; i++) {
        ib[i] = (int64_t)(rnd64() % 4097) - 2048;
        bp_buf_set(&b, (size_t)i, ldexp((double)ib[i], -5));
    }
    bp_op_t op = mkop(BP_OP_MATMUL);
    op.b.kind = BP_ARG_BUF;
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = FLOATS[d];
        bp_buf_t out = mkbuf(dt, 2, so);
        exec_ok(be, &op, &a, &b, &out);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t s = 0;
                for (int64_t l = 0; l < K; l++)
                    s += ia[i * K + l] * ib[l * N + j];
                CK_BITS(dt, bp_buf_bits(&out, (size_t)(i * N + j)),
                        ref_scaled(s, -8, dt), "matmul [%lld, %lld]",
                        (long long)i, (long long)j);
            }
        bp_buf_free(&out);
    }
    /* [k] @ [k, n] */
    int64_t sv[1] = {K}, sn[1] = {N};
    bp_buf_t row = mkbuf(BP_F32, 1, sv), out = mkbuf(BP_F32, 1, sn);
    memcpy(row.data, a.data, (size_t)K * 4);
    exec_ok(be, &op, &row, &b, &out);
    for (int64_t j = 0; j < N; j++) {
        int64_t s = 0;
        for (int64_t l = 0; l < K; l++)
            s += ia[l] * ib[l * N + j];
        CK_BITS(BP_F32, bp_buf_bits(&out, (size_t)j),
                ref_scaled(s, -8, BP_F32),
                "vector-matrix [%lld]", (long long)j);
    }
    /* A shape mismatch is an error. */
    bp_error_t err = {0};
    ck_assert_int_eq(exec(be, &op, &a, &a, &out, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "do not match") != NULL, "%s", err.msg);
    /* Integer matmul wraps: 2^30*2 + 2^30*2 = 2^32 = 0 in i32. */
    uint64_t x2[2] = {1u << 30, 1u << 30}, y2[2] = {2, 2};
    bp_buf_t ix = vec_bits(BP_I32, 2, x2), iy = vec_bits(BP_I32, 2, y2);
    int64_t s1[1] = {1};
    bp_buf_t io = mkbuf(BP_I32, 0, s1);
    exec_ok(be, &op, &ix, &iy, &io);
    CK_BITS(BP_I32, bp_buf_bits(&io, 0), 0, "i32 dot wraps");
    bp_buf_free(&ix);
    bp_buf_free(&iy);
    bp_buf_free(&io);
    bp_buf_free(&row);
    bp_buf_free(&out);
    bp_buf_free(&a);
    bp_buf_free(&b);
    free(ia);
    free(ib);
    bp_backend_close(be);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("oracle_tensor");
    TCase *cp = tcase_create("copies");
    tcase_add_test(cp, t_concat);
    tcase_add_test(cp, t_slice);
    tcase_add_test(cp, t_rotate_half);
    suite_add_tcase(s, cp);
    TCase *red = tcase_create("reductions");
    tcase_set_timeout(red, 300);
    tcase_add_test(red, t_sum_small);
    tcase_add_test(red, t_sum_exact);
    tcase_add_test(red, t_matmul_exact);
    suite_add_tcase(s, red);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
