/* Tests of the oracle's evaluation once per distinct operand value and of
 * the results it keeps across ops (oracle_unique.c, used by be_oracle.c
 * for exp, log, sin, cos and tanh of tensors of BP_ORACLE_UNIQUE_MIN
 * elements or more).
 *
 * Expected values: the distinct values and their order are found here by
 * brute force (a quadratic scan over the bit patterns) and, for one small
 * case, written out by hand; the functions' results come from MPFR at 256
 * bits rounded by the test's own reference rounding (oracle_check.h), one
 * element at a time.  Inputs are random (seed printed) and drawn from a
 * small pool, so that most values repeat, with NaNs of two payloads, both
 * zeros, infinities and subnormals among them. */
#include "oracle_check.h"

#include "oracle_unique.h"

static bool is_costly(bp_op_kind_t k)
{
    return k == BP_OP_EXP || k == BP_OP_LOG || k == BP_OP_SIN || k == BP_OP_COS ||
           k == BP_OP_TANH;
}

/* n elements drawn from a pool of npool patterns (specials first). */
static bp_buf_t pooled(bp_dtype_t dt, size_t n, size_t npool, int lo, int hi)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    unsigned w = (unsigned)in->size * 8;
    uint64_t *pool = calloc(npool, sizeof *pool);
    ck_assert_ptr_nonnull(pool);
    size_t k = 0;
    if (in->is_float) {
        uint64_t inf = ((1ull << in->exp_bits) - 1) << in->man_bits;
        uint64_t sign = 1ull << (w - 1);
        uint64_t specials[] = {0, sign, inf, sign | inf, inf | 1, inf | 3, 1, sign | 5};
        for (; k < 8 && k < npool; k++)
            pool[k] = specials[k];
    }
    for (; k < npool; k++)
        pool[k] = in->is_float ? rnd_input(dt, lo, hi)
                               : (w == 64 ? rnd64() : rnd64() & ((1ull << w) - 1));
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t b = mkbuf(dt, 1, shape);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(dt, b.data, i, pool[rnd64() % npool]);
    free(pool);
    return b;
}

START_TEST(t_small_by_hand)
{
    /* bf16 1, 2, 1, 3, 2, -0, 0: distinct 1, 2, 3, -0, 0 in that order. */
    uint64_t bits[] = {0x3f80, 0x4000, 0x3f80, 0x4040, 0x4000, 0x8000, 0x0000};
    bp_buf_t a = vec_bits(BP_BF16, 7, bits);
    bp_oracle_unique_t u;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_oracle_unique_build(&a, &u, &err), BP_OK);
    uint64_t want_vals[] = {0x3f80, 0x4000, 0x4040, 0x8000, 0x0000};
    uint32_t want_slot[] = {0, 1, 0, 2, 1, 3, 4};
    ck_assert_uint_eq(u.vals.numel, 5);
    ck_assert_int_eq(u.vals.ndim, 1);
    ck_assert_int_eq(u.vals.shape[0], 5);
    for (size_t k = 0; k < 5; k++)
        ck_assert_uint_eq(bp_buf_bits(&u.vals, k), want_vals[k]);
    for (size_t i = 0; i < 7; i++)
        ck_assert_uint_eq(u.slot[i], want_slot[i]);
    bp_oracle_unique_free(&u);
    bp_buf_free(&a);
}
END_TEST

START_TEST(t_distinct_brute_force)
{
    seed_init("distinct_brute_force");
    const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16, BP_F64, BP_I32, BP_I64};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (size_t npool = 1; npool <= 700; npool = npool * 3 + 1) {
            bp_buf_t a = pooled(dts[d], 3000, npool, -30, 30);
            bp_oracle_unique_t u;
            bp_error_t err = {0};
            ck_assert_int_eq(bp_oracle_unique_build(&a, &u, &err), BP_OK);
            /* First occurrences, by a quadratic scan. */
            uint64_t *first = calloc(a.numel, sizeof *first);
            size_t nf = 0;
            for (size_t i = 0; i < a.numel; i++) {
                uint64_t v = bp_buf_bits(&a, i);
                size_t k = 0;
                while (k < nf && first[k] != v)
                    k++;
                if (k == nf)
                    first[nf++] = v;
                ck_assert_msg(u.slot[i] == k, "%s pool %zu element %zu: slot %u, want %zu",
                              bp_dtype_name(dts[d]), npool, i, u.slot[i], k);
            }
            ck_assert_uint_eq(u.vals.numel, nf);
            ck_assert_uint_eq(u.vals.dtype, dts[d]);
            for (size_t k = 0; k < nf; k++)
                ck_assert_uint_eq(bp_buf_bits(&u.vals, k), first[k]);
            free(first);
            bp_oracle_unique_free(&u);
            bp_buf_free(&a);
        }
    }
}
END_TEST

static int ref_fn(bp_op_kind_t k, mpfr_t r, const mpfr_t x)
{
    switch (k) {
    case BP_OP_EXP: return mpfr_exp(r, x, MPFR_RNDN);
    case BP_OP_LOG: return mpfr_log(r, x, MPFR_RNDN);
    case BP_OP_SIN: return mpfr_sin(r, x, MPFR_RNDN);
    case BP_OP_COS: return mpfr_cos(r, x, MPFR_RNDN);
    default: return mpfr_tanh(r, x, MPFR_RNDN);
    }
}

/* Every element of op(a) against MPFR at 256 bits, rounded here. */
static void check_against_ref(bp_backend_t *be, bp_op_kind_t k, const bp_buf_t *a,
                              int ndim, const int64_t *shape)
{
    bp_buf_t in = *a;
    in.ndim = ndim;
    for (int d = 0; d < ndim; d++)
        in.shape[d] = shape[d];
    bp_buf_t out = mkbuf(a->dtype, ndim, shape);
    bp_op_t op = mkop(k);
    exec_ok(be, &op, &in, NULL, &out);
    mpfr_t x, r;
    mpfr_inits2(256, x, r, (mpfr_ptr)0);
    for (size_t i = 0; i < a->numel; i++) {
        mpfr_set_d(x, bp_buf_get(a, i), MPFR_RNDN);
        ref_fn(k, r, x);
        uint64_t want = ref_bits(r, a->dtype), got = bp_buf_bits(&out, i);
        if (!bits_match(a->dtype, got, want))
            CK_BITS(a->dtype, got, want, "%s(%a) element %zu", bp_op_name(k),
                    bp_buf_get(a, i), i);
    }
    mpfr_clears(x, r, (mpfr_ptr)0);
    bp_buf_free(&out);
}

START_TEST(t_functions_vs_mpfr256)
{
    seed_init("functions_vs_mpfr256");
    bp_backend_t *be = open_oracle(2);
    const bp_op_kind_t ks[] = {BP_OP_EXP, BP_OP_LOG, BP_OP_SIN, BP_OP_COS, BP_OP_TANH};
    for (size_t c = 0; c < 5; c++) {
        ck_assert(is_costly(ks[c]));
        for (int d = 0; d < NFLOATS; d++) {
            /* 4096 elements as [64, 64] and as [4096]: above the threshold;
             * 200 distinct values at most. */
            bp_buf_t a = pooled(FLOATS[d], 4096, 200, -8, ks[c] == BP_OP_EXP ? 6 : 24);
            int64_t sq[2] = {64, 64}, flat[1] = {4096};
            check_against_ref(be, ks[c], &a, 2, sq);
            check_against_ref(be, ks[c], &a, 1, flat);
            bp_buf_free(&a);
        }
    }
    bp_backend_close(be);
}
END_TEST

/* The threshold's both sides give the reference's bits, whatever the
 * thread count. */
START_TEST(t_threshold_and_threads)
{
    seed_init("threshold_and_threads");
    for (int threads = 1; threads <= 3; threads++) {
        bp_backend_t *be = open_oracle(threads);
        size_t sizes[] = {BP_ORACLE_UNIQUE_MIN - 1, BP_ORACLE_UNIQUE_MIN,
                          BP_ORACLE_UNIQUE_MIN + 1};
        for (size_t s = 0; s < 3; s++) {
            bp_buf_t a = pooled(BP_F32, sizes[s], 50, -4, 12);
            int64_t shape[1] = {(int64_t)sizes[s]};
            check_against_ref(be, BP_OP_SIN, &a, 1, shape);
            bp_buf_free(&a);
        }
        bp_backend_close(be);
    }
}
END_TEST

/* Results kept across ops: a second op on the same values, the other
 * function on them, another output dtype, and the same bit patterns read
 * as another dtype must each give the reference's bits, not a kept result
 * of another key. */
static void op_into(bp_backend_t *be, bp_op_kind_t k, const bp_buf_t *a, bp_dtype_t out_dt)
{
    bp_buf_t out = mkbuf(out_dt, a->ndim, a->shape);
    bp_op_t op = mkop(k);
    exec_ok(be, &op, a, NULL, &out);
    mpfr_t x, r;
    mpfr_inits2(256, x, r, (mpfr_ptr)0);
    for (size_t i = 0; i < a->numel; i++) {
        mpfr_set_d(x, bp_buf_get(a, i), MPFR_RNDN);
        ref_fn(k, r, x);
        uint64_t want = ref_bits(r, out_dt), got = bp_buf_bits(&out, i);
        if (!bits_match(out_dt, got, want))
            CK_BITS(out_dt, got, want, "%s(%a %s) element %zu", bp_op_name(k),
                    bp_buf_get(a, i), bp_dtype_name(a->dtype), i);
    }
    mpfr_clears(x, r, (mpfr_ptr)0);
    bp_buf_free(&out);
}

START_TEST(t_cache_across_ops)
{
    seed_init("cache_across_ops");
    bp_backend_t *be = open_oracle(2);
    bp_buf_t a = pooled(BP_BF16, 4096, 300, -6, 10);
    /* The same bit patterns as fp16 values: other numbers. */
    bp_buf_t h = a;
    h.dtype = BP_F16;
    for (int rep = 0; rep < 2; rep++) {
        op_into(be, BP_OP_SIN, &a, BP_BF16);
        op_into(be, BP_OP_COS, &a, BP_BF16);
        op_into(be, BP_OP_SIN, &a, BP_F32);
        op_into(be, BP_OP_SIN, &h, BP_F32);
        op_into(be, BP_OP_SIN, &h, BP_F16);
        op_into(be, BP_OP_EXP, &h, BP_F16);
        /* cos of values sin saw: kept from their evaluation together */
        op_into(be, BP_OP_COS, &h, BP_F16);
    }
    bp_buf_free(&a);
    bp_backend_close(be);
}
END_TEST

/* sin and cos evaluated together (mpfr_sin_cos, both kept): whichever
 * comes first, the other's kept results are the reference's bits, with
 * tiny arguments (subnormal results, where the ternary value decides the
 * one rounding), huge ones and the specials among them. */
START_TEST(t_sin_cos_together)
{
    seed_init("sin_cos_together");
    const bp_dtype_t dts[] = {BP_F32, BP_F16, BP_BF16};
    const int lo[] = {-149, -24, -133}, hi[] = {100, 15, 100};
    for (int d = 0; d < 3; d++)
        for (int first = 0; first < 2; first++) {
            bp_backend_t *be = open_oracle(2);
            bp_buf_t a = pooled(dts[d], 4096, 1500, lo[d], hi[d]);
            bp_op_kind_t k1 = first ? BP_OP_COS : BP_OP_SIN;
            bp_op_kind_t k2 = first ? BP_OP_SIN : BP_OP_COS;
            op_into(be, k1, &a, dts[d]);
            op_into(be, k2, &a, dts[d]);
            bp_buf_free(&a);
            bp_backend_close(be);
        }
}
END_TEST

/* gelu's erf and tanh forms are two functions of one op kind: the results
 * one keeps must never answer the other (they did, keyed by the kind alone:
 * gelu-tanh-vs-erf's oracle gelu_tanh was its gelu_erf).  References: both
 * formulas in MPFR at 256 bits, x/2 erfc(-x/sqrt 2) and x / (1 +
 * exp(-2 sqrt(2/pi) (x + 0.044715 x^3))), rounded here. */
static void gelu_into(bp_backend_t *be, bool tanh_form, const bp_buf_t *a)
{
    bp_buf_t out = mkbuf(BP_F32, a->ndim, a->shape);
    bp_op_t op = mkop(BP_OP_GELU);
    op.form = tanh_form ? BP_FORM_TANH : BP_FORM_DEFAULT;
    exec_ok(be, &op, a, NULL, &out);
    mpfr_t x, r, u, v;
    mpfr_inits2(256, x, r, u, v, (mpfr_ptr)0);
    for (size_t i = 0; i < a->numel; i++) {
        mpfr_set_d(x, bp_buf_get(a, i), MPFR_RNDN);
        if (tanh_form) {
            mpfr_pow_ui(u, x, 3, MPFR_RNDN);
            mpfr_set_str(v, "0.044715", 10, MPFR_RNDN);
            mpfr_mul(u, u, v, MPFR_RNDN);
            mpfr_add(u, u, x, MPFR_RNDN);
            mpfr_const_pi(v, MPFR_RNDN);
            mpfr_ui_div(v, 2, v, MPFR_RNDN);
            mpfr_sqrt(v, v, MPFR_RNDN);
            mpfr_mul(u, u, v, MPFR_RNDN);
            mpfr_mul_si(u, u, -2, MPFR_RNDN);
            mpfr_exp(u, u, MPFR_RNDN);
            mpfr_add_ui(u, u, 1, MPFR_RNDN);
            mpfr_div(r, x, u, MPFR_RNDN);
        } else {
            mpfr_sqrt_ui(v, 2, MPFR_RNDN);
            mpfr_div(u, x, v, MPFR_RNDN);
            mpfr_neg(u, u, MPFR_RNDN);
            mpfr_erfc(u, u, MPFR_RNDN);
            mpfr_mul(u, u, x, MPFR_RNDN);
            mpfr_div_2ui(r, u, 1, MPFR_RNDN);
        }
        uint64_t want = ref_bits(r, BP_F32), got = bp_buf_bits(&out, i);
        if (!bits_match(BP_F32, got, want))
            CK_BITS(BP_F32, got, want, "gelu %s(%a) element %zu", tanh_form ? "tanh" : "erf",
                    bp_buf_get(a, i), i);
    }
    mpfr_clears(x, r, u, v, (mpfr_ptr)0);
    bp_buf_free(&out);
}

START_TEST(t_gelu_forms_kept_apart)
{
    /* 4096 elements (above BP_ORACLE_UNIQUE_MIN), 301 distinct values from
     * -6 to 6, the first -6 (gelu-tanh-vs-erf's first element) */
    int64_t shape[1] = {4096};
    bp_buf_t a = mkbuf(BP_F32, 1, shape);
    for (size_t i = 0; i < 4096; i++)
        ((float *)a.data)[i] = (float)(-6.0 + 12.0 * (double)(i % 301) / 300.0);
    for (int first = 0; first < 2; first++) {
        bp_backend_t *be = open_oracle(2);
        gelu_into(be, first == 1, &a);
        gelu_into(be, first == 0, &a);
        bp_backend_close(be);
    }
    bp_buf_free(&a);
}
END_TEST

Suite *oracle_unique_suite(void)
{
    Suite *s = suite_create("oracle_unique");
    TCase *tc = tcase_create("unique");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, t_small_by_hand);
    tcase_add_test(tc, t_distinct_brute_force);
    tcase_add_test(tc, t_functions_vs_mpfr256);
    tcase_add_test(tc, t_threshold_and_threads);
    tcase_add_test(tc, t_cache_across_ops);
    tcase_add_test(tc, t_sin_cos_together);
    tcase_add_test(tc, t_gelu_forms_kept_apart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(oracle_unique_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
