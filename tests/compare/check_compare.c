/* Comparison engine, hand-built tensors: known differences with the
 * expected figures derived by hand from the bit patterns, and the edge
 * rules of compare.h (NaN classes, signed zeros, infinity, policies at
 * their boundaries, shapes).  The kernels, the memcmp blocks and the
 * randomised cross-check live in check_compare_kernels.c. */
#include "compare_fixtures.h"

START_TEST(t_hist_bins)
{
    static const struct {
        uint64_t d;
        int bin;
    } v[] = {
        {0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 4}, {8, 4}, {9, 5},
        {16, 5}, {17, 6}, {1024, 11}, {1025, 12}, {1ull << 62, 63},
        {(1ull << 62) + 1, 64}, {1ull << 63, 64}, {(1ull << 63) + 1, 65},
        {UINT64_MAX, 65},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        ck_assert_msg(bp_hist_bin(v[i].d) == v[i].bin,
                      "distance %" PRIu64 ": bin %d, want %d", v[i].d,
                      bp_hist_bin(v[i].d), v[i].bin);
    ck_assert_str_eq(bp_hist_label(0), "0");
    ck_assert_str_eq(bp_hist_label(1), "1");
    ck_assert_str_eq(bp_hist_label(2), "2");
    ck_assert_str_eq(bp_hist_label(3), "3-4");
    ck_assert_str_eq(bp_hist_label(4), "5-8");
    ck_assert_str_eq(bp_hist_label(5), "9-16");
    ck_assert_str_eq(bp_hist_label(12), "1025-2048");
    ck_assert_str_eq(bp_hist_label(64),
                     "4611686018427387905-9223372036854775808");
    ck_assert_str_eq(bp_hist_label(65),
                     "9223372036854775809-18446744073709551615");
    ck_assert_str_eq(bp_hist_label(BP_HIST_CLASS), "inf/nan");
    ck_assert_str_eq(bp_hist_label(BP_HIST_ZERO), "+0/-0");
    ck_assert_str_eq(bp_hist_label(-1), "?");
    ck_assert_str_eq(bp_hist_label(BP_HIST_BINS), "?");
    /* Every label spells its own lo-hi range. */
    for (int k = 1; k < BP_HIST_CLASS; k++) {
        char want[64];
        uint64_t lo = bp_hist_lo(k), hi = bp_hist_hi(k);
        if (lo == hi)
            snprintf(want, sizeof want, "%" PRIu64, lo);
        else
            snprintf(want, sizeof want, "%" PRIu64 "-%" PRIu64, lo, hi);
        ck_assert_str_eq(bp_hist_label(k), want);
        ck_assert_int_eq(bp_hist_bin(lo), k);
        ck_assert_int_eq(bp_hist_bin(hi), k);
        ck_assert_int_eq(bp_hist_bin(lo - 1), k - 1);
    }
}
END_TEST

/* Distances 0,1,2,3,4,5,8,9 above 1.0f (ulp 2^-23 there). */
START_TEST(t_f32_distances)
{
    static const uint64_t dist[] = {0, 1, 2, 3, 4, 5, 8, 9};
    static const int bins[] = {0, 1, 2, 3, 3, 4, 4, 5};
    bp_buf_t a = mk(BP_F32, 8), b = mk(BP_F32, 8);
    fill(&a, 0x3f800000);
    for (size_t i = 0; i < 8; i++)
        put(&b, i, 0x3f800000 + dist[i]);
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.total, 8);
    ck_assert_uint_eq(c.mismatched, 7);
    ck_assert_uint_eq(c.beyond_policy, 7);
    ck_assert(!c.pass);
    uint64_t want[BP_HIST_BINS] = {0};
    for (size_t i = 0; i < 8; i++)
        want[bins[i]]++;
    for (int k = 0; k < BP_HIST_BINS; k++)
        ck_assert_msg(c.hist[k] == want[k], "bin %d (%s): %" PRIu64
                      ", want %" PRIu64, k, bp_hist_label(k), c.hist[k],
                      want[k]);
    ck_assert_uint_eq(c.max_ulp, 9);
    ck_assert_uint_eq(c.max_ulp_idx, 7);
    ck_assert(c.max_abs == 0x9p-23);
    ck_assert_uint_eq(c.max_abs_idx, 7);
    ck_assert(c.max_rel == 0x9p-23);
    ck_assert_uint_eq(c.max_rel_idx, 7);
    ck_assert_uint_eq(c.class_changes, 0);
    ck_assert_uint_eq(c.nfirst, 7);
    for (size_t k = 0; k < 7; k++) {
        ck_assert_uint_eq(c.first[k].index, k + 1);
        ck_assert_uint_eq(c.first[k].a, 0x3f800000);
        ck_assert_uint_eq(c.first[k].b, 0x3f800000 + dist[k + 1]);
        ck_assert_uint_eq(c.first[k].ulp, dist[k + 1]);
        ck_assert(c.first[k].abs == ldexp((double)dist[k + 1], -23));
        ck_assert(!c.first[k].class_change && c.first[k].beyond_policy);
    }
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* Greatest abs, rel and ulp at three different places; ties keep the
 * lowest index. */
START_TEST(t_maxima_indices)
{
    bp_buf_t a = mk(BP_F32, 6), b = mk(BP_F32, 6);
    /* 1000 -> 1001: abs 1, rel 1/1000, ulp 2^14 (ulp 2^-14 in [512,1024))
     * 1 -> 1.5: abs 0.5, rel 0.5, ulp 2^22
     * -1 -> 1: abs 2, rel 2, ulp 2 * 0x3f800000 (through zero)
     * 4 -> 6: abs 2 again (a tie, later), rel 0.5, ulp 2^22
     * 0 -> 2^-149: abs 2^-149, rel inf, ulp 1 */
    static const uint32_t av[] = {0x447a0000, 0x3f800000, 0xbf800000,
                                  0x40800000, 0x00000000, 0x3f800000};
    static const uint32_t bv[] = {0x447a4000, 0x3fc00000, 0x3f800000,
                                  0x40c00000, 0x00000001, 0x3f800000};
    for (int i = 0; i < 6; i++) {
        put(&a, (size_t)i, av[i]);
        put(&b, (size_t)i, bv[i]);
    }
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.mismatched, 5);
    ck_assert(c.max_abs == 2.0);
    ck_assert_uint_eq(c.max_abs_idx, 2);
    ck_assert(isinf(c.max_rel));
    ck_assert_uint_eq(c.max_rel_idx, 4);
    ck_assert_uint_eq(c.max_ulp, 2ull * 0x3f800000);
    ck_assert_uint_eq(c.max_ulp_idx, 2);
    ck_assert_uint_eq(c.first[0].ulp, 1u << 14);
    ck_assert(c.first[0].rel == 1.0 / 1000.0);
    ck_assert_uint_eq(c.first[1].ulp, 1u << 22);
    ck_assert_uint_eq(c.first[4].ulp, 1);
    ck_assert(c.first[4].abs == 0x1p-149);
    bp_cmp_free(&c);
    /* Make indices 2 and 4 equal: rel 0.5 at 1 and 3 ties, as does
     * ulp 2^22; the lowest index wins. */
    put(&b, 2, 0xbf800000);
    put(&b, 4, 0);
    c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(c.max_rel == 0.5);
    ck_assert_uint_eq(c.max_rel_idx, 1);
    ck_assert(c.max_abs == 2.0);
    ck_assert_uint_eq(c.max_abs_idx, 3);
    ck_assert_uint_eq(c.max_ulp, 1u << 22);
    ck_assert_uint_eq(c.max_ulp_idx, 1);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

START_TEST(t_first_k)
{
    const size_t n = 1000;
    bp_buf_t a = mk(BP_BF16, n), b = mk(BP_BF16, n);
    fill(&a, 0x3f80);
    fill(&b, 0x3f80);
    /* 30 mismatches at 7, 40, 73, ... in increasing order. */
    for (size_t k = 0; k < 30; k++)
        put(&b, 7 + 33 * k, 0x3f81 + k);
    bp_cmp_opts_t o;
    bp_cmp_opts_init(&o);
    ck_assert_uint_eq(o.first_k, 10);
    ck_assert(!o.nan_payload);
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.nfirst, 10);
    for (size_t k = 0; k < 10; k++) {
        ck_assert_uint_eq(c.first[k].index, 7 + 33 * k);
        ck_assert_uint_eq(c.first[k].b, 0x3f81 + k);
        ck_assert_uint_eq(c.first[k].ulp, k + 1);
    }
    bp_cmp_free(&c);
    ck_assert(c.first == NULL && c.nfirst == 0);
    o.first_k = 0;
    c = cmp_pol(&a, &b, "exact", &o);
    ck_assert_uint_eq(c.nfirst, 0);
    ck_assert_uint_eq(c.mismatched, 30);
    bp_cmp_free(&c);
    o.first_k = 1000000;
    c = cmp_pol(&a, &b, "exact", &o);
    ck_assert_uint_eq(c.nfirst, 30);
    for (size_t k = 0; k < 30; k++)
        ck_assert_uint_eq(c.first[k].index, 7 + 33 * k);
    ck_assert_uint_eq(c.max_ulp, 30);
    ck_assert_uint_eq(c.max_ulp_idx, 7 + 33 * 29);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* CPU writes 0xFFFF for a bf16 NaN, CUDA 0x7FFF: equal by class. */
START_TEST(t_nan_class)
{
    bp_buf_t a = mk(BP_BF16, 4), b = mk(BP_BF16, 4);
    put(&a, 0, 0x7fff); put(&b, 0, 0xffff);
    put(&a, 1, 0x7fc0); put(&b, 1, 0x7fc0); /* identical */
    put(&a, 2, 0x3f80); put(&b, 2, 0x3f80);
    put(&a, 3, 0xff81); put(&b, 3, 0x7fc1); /* sNaN-ish payloads */
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.mismatched, 0);
    ck_assert_uint_eq(c.nan_payload_diffs, 2);
    ck_assert_uint_eq(c.hist[0], 4);
    ck_assert(c.pass);
    ck_assert(c.max_abs == 0 && c.max_rel == 0 && c.max_ulp == 0);
    bp_cmp_free(&c);

    bp_cmp_opts_t o;
    bp_cmp_opts_init(&o);
    o.nan_payload = true;
    c = cmp_pol(&a, &b, "ulp=100", &o);
    ck_assert_uint_eq(c.mismatched, 2);
    ck_assert_uint_eq(c.class_changes, 2);
    ck_assert_uint_eq(c.hist[BP_HIST_CLASS], 2);
    ck_assert_uint_eq(c.beyond_policy, 2);
    ck_assert(!c.pass);
    ck_assert_uint_eq(c.nfirst, 2);
    ck_assert_uint_eq(c.first[0].index, 0);
    ck_assert_uint_eq(c.first[0].a, 0x7fff);
    ck_assert_uint_eq(c.first[0].b, 0xffff);
    ck_assert(c.first[0].class_change);
    ck_assert_uint_eq(c.first[1].index, 3);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* +0 against -0 is a mismatch of its own class in every float: the
 * "+0/-0" bin, ulp 0, abs 0, rel 0, beyond every numeric policy (no ulp
 * count or tolerance admits it), within only when the policy or the
 * options excuse it, and then counted as excused.  Bit patterns by hand:
 * the sign bit alone set. */
START_TEST(t_signed_zero)
{
    static const struct {
        bp_dtype_t dt;
        uint64_t neg0;
    } v[] = {{BP_F32, 0x80000000}, {BP_BF16, 0x8000}, {BP_F16, 0x8000},
             {BP_F64, 0x8000000000000000ull}, {BP_F8_E4M3, 0x80}, {BP_F8_E5M2, 0x80}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        bp_buf_t a = mk(v[k].dt, 3), b = mk(v[k].dt, 3);
        put(&a, 1, v[k].neg0);
        put(&b, 2, v[k].neg0);
        /* counted, whatever the numeric policy */
        const char *pols[] = {"exact", "ulp=1000", "abs=1,rel=1"};
        for (int q = 0; q < 3; q++) {
            bp_cmp_t c = cmp_pol(&a, &b, pols[q], NULL);
            ck_assert_msg(c.mismatched == 2 && c.zero_sign_diffs == 2 &&
                              c.zero_sign_excused == 0 && c.beyond_policy == 2 && !c.pass,
                          "%s %s: %zu mismatched, %zu zero signs, %zu beyond",
                          bp_dtype_name(v[k].dt), pols[q], c.mismatched, c.zero_sign_diffs,
                          c.beyond_policy);
            ck_assert_uint_eq(c.hist[0], 1);
            ck_assert_uint_eq(c.hist[BP_HIST_ZERO], 2);
            ck_assert_uint_eq(c.class_changes, 0);
            ck_assert(c.max_abs == 0 && c.max_rel == 0 && c.max_ulp == 0);
            ck_assert(bp_cmp_zero_signs_only(&c));
            ck_assert_uint_eq(c.nfirst, 2);
            ck_assert_uint_eq(c.first[0].index, 1);
            ck_assert_uint_eq(c.first[0].a, v[k].neg0);
            ck_assert_uint_eq(c.first[0].b, 0);
            ck_assert_uint_eq(c.first[1].a, 0);
            ck_assert_uint_eq(c.first[1].b, v[k].neg0);
            for (int m = 0; m < 2; m++) {
                ck_assert(bp_mismatch_zero_sign(&c.first[m]));
                ck_assert(c.first[m].ulp == 0 && c.first[m].abs == 0 && c.first[m].rel == 0);
                ck_assert(!c.first[m].class_change && c.first[m].beyond_policy);
            }
            bp_cmp_free(&c);
        }
        /* a mismatch fraction admits them as it admits any mismatch */
        bp_cmp_t c = cmp_pol(&a, &b, "fraction=0.7", NULL);
        ck_assert(c.pass && c.beyond_policy == 2 && c.allowed == 2);
        bp_cmp_free(&c);
        /* excused by the policy: within it, counted as excused, still
         * mismatches (their bits differ) */
        c = cmp_pol(&a, &b, "zero_sign=ignore", NULL);
        ck_assert_uint_eq(c.mismatched, 2);
        ck_assert_uint_eq(c.zero_sign_diffs, 2);
        ck_assert_uint_eq(c.zero_sign_excused, 2);
        ck_assert_uint_eq(c.beyond_policy, 0);
        ck_assert_uint_eq(c.hist[BP_HIST_ZERO], 2);
        ck_assert(c.pass && !c.first[0].beyond_policy);
        bp_cmp_free(&c);
        /* ... or by the options, whatever the policy */
        bp_cmp_opts_t o;
        bp_cmp_opts_init(&o);
        ck_assert(!o.zero_sign_ignore);
        o.zero_sign_ignore = true;
        c = cmp_pol(&a, &b, "exact", &o);
        ck_assert(c.pass && c.zero_sign_excused == 2 && c.beyond_policy == 0);
        bp_cmp_free(&c);
        /* -0 against the smallest subnormal is one ulp, and no zero sign;
         * with the other element's zero sign excused, the ulp still counts */
        put(&b, 1, 1);
        c = cmp_pol(&a, &b, "exact,zero_sign=ignore", NULL);
        ck_assert_uint_eq(c.mismatched, 2);
        ck_assert_uint_eq(c.zero_sign_diffs, 1);
        ck_assert_uint_eq(c.zero_sign_excused, 1);
        ck_assert_uint_eq(c.beyond_policy, 1);
        ck_assert_uint_eq(c.max_ulp, 1);
        ck_assert_uint_eq(c.max_ulp_idx, 1);
        ck_assert(isinf(c.max_rel));
        ck_assert(!bp_cmp_zero_signs_only(&c));
        ck_assert(!bp_mismatch_zero_sign(&c.first[0]) && bp_mismatch_zero_sign(&c.first[1]));
        bp_cmp_free(&c);
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
    /* the bin's place: reports list it after 0; it ranks at distance 0 */
    ck_assert_str_eq(bp_hist_label(BP_HIST_ZERO), "+0/-0");
    ck_assert(bp_hist_lo(BP_HIST_ZERO) == 0 && bp_hist_hi(BP_HIST_ZERO) == 0);
    ck_assert_int_eq(bp_hist_at(0), 0);
    ck_assert_int_eq(bp_hist_at(1), BP_HIST_ZERO);
    ck_assert_int_eq(bp_hist_at(2), 1);
    ck_assert_int_eq(bp_hist_at(BP_HIST_BINS - 1), BP_HIST_CLASS);
    bp_buf_t a = mk(BP_F32, 4), b = mk(BP_F32, 4);
    put(&a, 0, 0x80000000);                          /* -0 / +0 */
    put(&a, 1, 0x80000000);                          /* -0 / +0 */
    put(&a, 2, 0x3f800000); put(&b, 2, 0x3f800003);  /* 3 ulp */
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(bp_cmp_percentile_ulp(&c, 50) == 0);   /* rank 2: a zero sign */
    ck_assert(bp_cmp_percentile_ulp(&c, 75) == 0);   /* rank 3 */
    ck_assert(bp_cmp_percentile_ulp(&c, 100) == 4);  /* the 3-4 bin */
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* Infinity is a class: FLT_MAX -> inf is a class change even though the
 * two are adjacent on the integer line. */
START_TEST(t_nonfinite)
{
    bp_buf_t a = mk(BP_F32, 7), b = mk(BP_F32, 7);
    put(&a, 0, 0x7f7fffff); put(&b, 0, 0x7f800000); /* max -> +inf */
    put(&a, 1, 0x7f800000); put(&b, 1, 0xff800000); /* +inf -> -inf */
    put(&a, 2, 0x3f800000); put(&b, 2, 0x7fc00000); /* 1 -> NaN */
    put(&a, 3, 0x7fc00000); put(&b, 3, 0x7f800000); /* NaN -> inf */
    put(&a, 4, 0x3f800000); put(&b, 4, 0x3f800001); /* 1 ulp */
    put(&a, 5, 0x7f800000); put(&b, 5, 0x7f800000); /* inf == inf */
    put(&a, 6, 0xffc00000); put(&b, 6, 0x7fc00001); /* NaN == NaN */
    bp_cmp_t c = cmp_pol(&a, &b, "ulp=1000", NULL);
    ck_assert_uint_eq(c.mismatched, 5);
    ck_assert_uint_eq(c.class_changes, 4);
    ck_assert_uint_eq(c.hist[BP_HIST_CLASS], 4);
    ck_assert_uint_eq(c.hist[1], 1);
    ck_assert_uint_eq(c.hist[0], 2);
    ck_assert_uint_eq(c.beyond_policy, 4);
    ck_assert(!c.pass);
    ck_assert(isinf(c.max_abs) && c.max_abs_idx == 0);
    ck_assert(isinf(c.max_rel) && c.max_rel_idx == 0);
    ck_assert(c.max_ulp == UINT64_MAX && c.max_ulp_idx == 0);
    for (size_t k = 0; k < 4; k++) {
        ck_assert(c.first[k].class_change);
        ck_assert(c.first[k].beyond_policy);
        ck_assert_uint_eq(c.first[k].ulp, UINT64_MAX);
        ck_assert(isinf(c.first[k].abs) && isinf(c.first[k].rel));
    }
    ck_assert(!c.first[4].class_change && !c.first[4].beyond_policy);
    ck_assert_uint_eq(c.nan_payload_diffs, 1);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

START_TEST(t_f16_bf16_f64_values)
{
    /* f16: 2^-24 -> 2^-23 (subnormals), 1 -> 1+2^-10, 65504 -> -65504. */
    bp_buf_t a = mk(BP_F16, 3), b = mk(BP_F16, 3);
    put(&a, 0, 0x0001); put(&b, 0, 0x0002);
    put(&a, 1, 0x3c00); put(&b, 1, 0x3c01);
    put(&a, 2, 0x7bff); put(&b, 2, 0xfbff);
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(c.first[0].abs == 0x1p-24 && c.first[0].rel == 1.0);
    ck_assert(c.first[1].abs == 0x1p-10 && c.first[1].rel == 0x1p-10);
    ck_assert(c.first[2].abs == 131008.0 && c.first[2].rel == 2.0);
    ck_assert_uint_eq(c.first[2].ulp, 2 * 0x7bffu);
    ck_assert(c.max_abs == 131008.0 && c.max_abs_idx == 2);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    /* bf16: 0.9 rounds to 0x3f66; 0x3f67 is one ulp (2^-8) above. */
    a = mk(BP_BF16, 1); b = mk(BP_BF16, 1);
    put(&a, 0, 0x3f66); put(&b, 0, 0x3f67);
    c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(c.max_abs == 0x1p-8);
    ck_assert(c.max_rel == 0x1p-8 / 0x1.ccp-1);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    /* f64: DBL_MAX -> -DBL_MAX: abs overflows to inf (still finite
     * values, not a class change); the distance is below 2^64. */
    a = mk(BP_F64, 2); b = mk(BP_F64, 2);
    put(&a, 0, 0x7fefffffffffffffull); put(&b, 0, 0xffefffffffffffffull);
    put(&a, 1, 0x3ff0000000000000ull); put(&b, 1, 0x3ff0000000000003ull);
    c = cmp_pol(&a, &b, "ulp=3", NULL);
    ck_assert_uint_eq(c.class_changes, 0);
    ck_assert_uint_eq(c.first[0].ulp, 0xffdffffffffffffeull);
    ck_assert_int_eq(bp_hist_bin(c.first[0].ulp), 65);
    ck_assert_uint_eq(c.hist[65], 1);
    ck_assert_uint_eq(c.hist[3], 1);
    ck_assert(isinf(c.max_abs) && c.max_abs_idx == 0);
    ck_assert(c.first[1].abs == 0x3p-52);
    ck_assert_uint_eq(c.beyond_policy, 1);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

START_TEST(t_integers)
{
    bp_buf_t a = mk(BP_I32, 4), b = mk(BP_I32, 4);
    put(&a, 0, 5); put(&b, 0, 7);
    put(&a, 1, (uint32_t)-3); put(&b, 1, (uint32_t)-3);
    put(&a, 2, (uint32_t)INT32_MIN); put(&b, 2, (uint32_t)INT32_MAX);
    put(&a, 3, 0); put(&b, 3, 1);
    bp_cmp_t c = cmp_pol(&a, &b, "ulp=2", NULL);
    ck_assert_uint_eq(c.mismatched, 3);
    ck_assert_uint_eq(c.beyond_policy, 1);
    ck_assert_uint_eq(c.first[0].ulp, 2);
    ck_assert(c.first[0].rel == 0.4);
    ck_assert_uint_eq(c.first[1].ulp, 0xffffffffu);
    ck_assert(c.max_abs == 4294967295.0 && c.max_abs_idx == 2);
    ck_assert(isinf(c.max_rel) && c.max_rel_idx == 3);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    a = mk(BP_I64, 1); b = mk(BP_I64, 1);
    put(&a, 0, (uint64_t)INT64_MIN); put(&b, 0, (uint64_t)INT64_MAX);
    c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.max_ulp, UINT64_MAX);
    ck_assert_uint_eq(c.hist[65], 1);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* The storage dtypes, figures worked out by hand: fp8 NaN and infinity
 * rules (e4m3fn has no infinity, so 448 against NaN is its class change),
 * integers of every width and signedness, BOOL as its bytes. */
START_TEST(t_storage_dtypes)
{
    bp_buf_t a = mk(BP_F8_E4M3, 6), b = mk(BP_F8_E4M3, 6);
    static const uint8_t xa[6] = {0x38, 0x7e, 0x7f, 0x00, 0x7e, 0x01};
    static const uint8_t xb[6] = {0x39, 0x7f, 0xff, 0x80, 0xfe, 0x01};
    for (int i = 0; i < 6; i++) {
        put(&a, (size_t)i, xa[i]);
        put(&b, (size_t)i, xb[i]);
    }
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    /* 1 vs 1.125: 1 ulp; 448 vs NaN: class; NaN vs -NaN: equal by class;
     * +0 vs -0: the sign of a zero; 448 vs -448: 252 ulp, abs 896. */
    ck_assert_uint_eq(c.mismatched, 4);
    ck_assert_uint_eq(c.class_changes, 1);
    ck_assert_uint_eq(c.nan_payload_diffs, 1);
    ck_assert_uint_eq(c.zero_sign_diffs, 1);
    ck_assert_uint_eq(c.first[0].ulp, 1);
    ck_assert(c.first[0].abs == 0.125 && c.first[0].rel == 0.125);
    ck_assert(c.first[1].class_change && c.first[1].ulp == UINT64_MAX);
    ck_assert(bp_mismatch_zero_sign(&c.first[2]) && c.first[2].index == 3);
    ck_assert_uint_eq(c.first[3].ulp, 252);
    ck_assert(c.first[3].abs == 896.0);
    ck_assert_uint_eq(c.hist[1], 1);
    ck_assert_uint_eq(c.hist[BP_HIST_ZERO], 1);
    ck_assert_uint_eq(c.hist[bp_hist_bin(252)], 1);
    bp_cmp_free(&c);
    bp_cmp_opts_t o;
    bp_cmp_opts_init(&o);
    o.nan_payload = true; /* the NaNs' signs now count */
    c = cmp_pol(&a, &b, "exact", &o);
    ck_assert_uint_eq(c.mismatched, 5);
    ck_assert_uint_eq(c.class_changes, 2);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    a = mk(BP_F8_E5M2, 3);
    b = mk(BP_F8_E5M2, 3);
    put(&a, 0, 0x7b); put(&b, 0, 0x7c); /* max vs inf: class, not 1 ulp */
    put(&a, 1, 0x7d); put(&b, 1, 0x7e); /* two NaNs */
    put(&a, 2, 0x01); put(&b, 2, 0x02); /* 2^-16 vs 2^-15 */
    c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.mismatched, 2);
    ck_assert_uint_eq(c.class_changes, 1);
    ck_assert_uint_eq(c.nan_payload_diffs, 1);
    ck_assert(c.first[1].ulp == 1 && c.first[1].abs == 0x1p-16 && c.first[1].rel == 1.0);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    static const struct {
        bp_dtype_t dt;
        uint64_t x, y, ulp;
        double abs;
    } iv[] = {
        {BP_U8, 0, 255, 255, 255},       {BP_I8, 0x80, 0x7f, 255, 255},
        {BP_BOOL, 1, 0, 1, 1},           {BP_BOOL, 0, 2, 2, 2},
        {BP_I16, 0xffff, 1, 2, 2},       {BP_U16, 0xffff, 1, 65534, 65534},
        {BP_U32, 0, 0xffffffffu, 0xffffffffu, 4294967295.0},
        {BP_U64, 0, UINT64_MAX, UINT64_MAX, 0x1p64},
        {BP_U64, UINT64_MAX, UINT64_MAX - 3, 3, 3},
    };
    for (size_t i = 0; i < sizeof iv / sizeof *iv; i++) {
        a = mk(iv[i].dt, 2);
        b = mk(iv[i].dt, 2);
        put(&a, 1, iv[i].x);
        put(&b, 1, iv[i].y);
        c = cmp_pol(&a, &b, "exact", NULL);
        ck_assert_msg(c.mismatched == 1 && c.first[0].index == 1 &&
                      c.first[0].ulp == iv[i].ulp && c.first[0].abs == iv[i].abs &&
                      c.max_ulp == iv[i].ulp,
                      "%s 0x%" PRIx64 " vs 0x%" PRIx64 ": ulp %" PRIu64 " abs %g",
                      bp_dtype_name(iv[i].dt), iv[i].x, iv[i].y, c.first[0].ulp,
                      c.first[0].abs);
        ck_assert_uint_eq(c.hist[bp_hist_bin(iv[i].ulp)], 1);
        bp_cmp_free(&c);
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
}
END_TEST

START_TEST(t_shape_dtype_errors)
{
    bp_buf_t a, b;
    bp_error_t e;
    bp_cmp_t c;
    int64_t s1[2] = {4096, 128}, s2[2] = {128, 4096};
    ck_assert_int_eq(bp_buf_alloc(&a, BP_F32, 2, s1, &e), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_BF16, 2, s1, &e), BP_OK);
    ck_assert_int_eq(bp_compare(&a, &b, NULL, NULL, &c, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "dtypes differ") &&
                  strstr(e.msg, "fp32 [4096, 128]") &&
                  strstr(e.msg, "bf16 [4096, 128]"), "%s", e.msg);
    ck_assert(c.first == NULL);
    bp_buf_free(&b);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 2, s2, &e), BP_OK);
    ck_assert_int_eq(bp_compare(&a, &b, NULL, NULL, &c, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "shapes differ") &&
                  strstr(e.msg, "expected fp32 [4096, 128]") &&
                  strstr(e.msg, "actual fp32 [128, 4096]"), "%s", e.msg);
    bp_buf_free(&b);
    /* Same numel, different rank. */
    int64_t s3[1] = {4096 * 128};
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 1, s3, &e), BP_OK);
    ck_assert_int_eq(bp_compare(&a, &b, NULL, NULL, &c, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "[524288]"), "%s", e.msg);
    bp_buf_free(&b);
    bp_buf_free(&a);
}
END_TEST

START_TEST(t_policy_ulp)
{
    bp_buf_t a = mk(BP_F32, 3), b = mk(BP_F32, 3);
    fill(&a, 0x40000000);
    put(&b, 0, 0x40000000);
    put(&b, 1, 0x40000002); /* 2 ulp */
    put(&b, 2, 0x3ffffffe); /* 2 ulp below */
    bp_cmp_t c = cmp_pol(&a, &b, "ulp=2", NULL);
    ck_assert_uint_eq(c.mismatched, 2);
    ck_assert_uint_eq(c.beyond_policy, 0);
    ck_assert(c.pass);
    bp_cmp_free(&c);
    c = cmp_pol(&a, &b, "ulp=1", NULL);
    ck_assert_uint_eq(c.beyond_policy, 2);
    ck_assert(!c.pass);
    bp_cmp_free(&c);
    put(&b, 1, 0x40000003);
    c = cmp_pol(&a, &b, "ulp=2", NULL);
    ck_assert_uint_eq(c.beyond_policy, 1);
    ck_assert(c.first[0].beyond_policy && !c.first[1].beyond_policy);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* abs + rel * |a| at its boundary; the figures are exact binary
 * fractions so the boundary is exact too. */
START_TEST(t_policy_tol)
{
    bp_buf_t a = mk(BP_F32, 2), b = mk(BP_F32, 2);
    put(&a, 0, 0x3f800000); put(&b, 0, 0x3f802000); /* 1 -> 1+2^-10 */
    put(&a, 1, 0x41000000); put(&b, 1, 0x41002000); /* 8 -> 8+2^-7 */
    static const struct {
        const char *pol;
        size_t beyond;
    } v[] = {
        {"abs=0.0078125", 0},          /* 2^-7 covers both */
        {"abs=0.0009765625", 1},       /* 2^-10: only the first */
        {"abs=0.00048828125", 2},      /* 2^-11: neither */
        {"rel=0.0009765625", 0},       /* 2^-10 relative: both */
        {"rel=0.00048828125", 2},
        {"abs=0.00048828125,rel=0.00048828125", 1}, /* 2^-11+2^-11 = 2^-10
                                                       at 1; 2^-11+2^-8 at 8 */
        {"atol=0.0009765625,rtol=0", 1},
        {"ulp=1,abs=0.0009765625", 1}, /* either part admits */
        {"ulp=65536,abs=0", 0},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        bp_cmp_t c = cmp_pol(&a, &b, v[k].pol, NULL);
        ck_assert_msg(c.beyond_policy == v[k].beyond,
                      "policy %s: %zu beyond, want %zu", v[k].pol,
                      c.beyond_policy, v[k].beyond);
        ck_assert(c.pass == (v[k].beyond == 0));
        ck_assert_uint_eq(c.mismatched, 2);
        bp_cmp_free(&c);
    }
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* 100 elements, n of them 1 ulp off. */
START_TEST(t_policy_fraction)
{
    static const struct {
        const char *pol;
        size_t n, allowed;
        bool pass;
    } v[] = {
        {"fraction=0.29", 29, 29, true}, /* 0.29*100 is 28.999... */
        {"fraction=0.29", 30, 29, false},
        {"fraction=0.01", 1, 1, true},
        {"fraction=0.01", 2, 1, false},
        {"fraction=0.015", 1, 1, true},
        {"fraction=0.015", 2, 1, false},
        {"exact", 1, 0, false},
        {"exact", 0, 0, true},
        {"fraction=1", 100, 100, true},
        {"fraction=0", 1, 0, false},
        {"ulp=1,fraction=0.01", 100, 1, true}, /* all within ulp */
        {"exact,fraction=0.07", 7, 7, true},   /* 0.07*100 = 7.000...1 */
        {"exact,fraction=0.07", 8, 7, false},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        bp_buf_t a = mk(BP_F32, 100), b = mk(BP_F32, 100);
        fill(&a, 0x3f800000);
        fill(&b, 0x3f800000);
        for (size_t i = 0; i < v[k].n; i++)
            put(&b, 99 - i, 0x3f800001);
        bp_cmp_t c = cmp_pol(&a, &b, v[k].pol, NULL);
        ck_assert_msg(c.allowed == v[k].allowed && c.pass == v[k].pass,
                      "%s with %zu off: allowed %zu pass %d", v[k].pol,
                      v[k].n, c.allowed, c.pass);
        bp_cmp_free(&c);
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
}
END_TEST

START_TEST(t_percentile)
{
    /* 10 elements: 5 equal, 3 at 1 ulp, 1 at 3 ulp, 1 class change. */
    bp_buf_t a = mk(BP_F32, 10), b = mk(BP_F32, 10);
    fill(&a, 0x3f800000);
    fill(&b, 0x3f800000);
    put(&b, 5, 0x3f800001);
    put(&b, 6, 0x3f7fffff);
    put(&b, 7, 0x3f800001);
    put(&b, 8, 0x3f800003);
    put(&b, 9, 0x7fc00000);
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(bp_cmp_percentile_ulp(&c, 0) == 0);
    ck_assert(bp_cmp_percentile_ulp(&c, 50) == 0);
    ck_assert(bp_cmp_percentile_ulp(&c, 51) == 1);
    ck_assert(bp_cmp_percentile_ulp(&c, 80) == 1);
    ck_assert(bp_cmp_percentile_ulp(&c, 81) == 4);
    ck_assert(bp_cmp_percentile_ulp(&c, 90) == 4);
    ck_assert(isinf(bp_cmp_percentile_ulp(&c, 99)));
    ck_assert(isinf(bp_cmp_percentile_ulp(&c, 100)));
    bp_cmp_free(&c);
    put(&b, 9, 0x3f800000);
    c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert(bp_cmp_percentile_ulp(&c, 100) == 4);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

START_TEST(t_index_format_and_empty)
{
    bp_buf_t a, b;
    bp_error_t e;
    int64_t s[3] = {2, 3, 4};
    ck_assert_int_eq(bp_buf_alloc(&a, BP_F16, 3, s, &e), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F16, 3, s, &e), BP_OK);
    put(&b, 1 * 12 + 2 * 4 + 3, 0x3c00);
    bp_cmp_t c;
    ck_assert_int_eq(bp_compare(&a, &b, NULL, NULL, &c, &e), BP_OK);
    char idx[64];
    bp_cmp_index_format(&c, c.max_abs_idx, idx, sizeof idx);
    ck_assert_str_eq(idx, "[1, 2, 3]");
    ck_assert_int_eq(c.ndim, 3);
    ck_assert_int_eq(c.shape[2], 4);
    ck_assert(c.dtype == BP_F16);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);

    int64_t z[2] = {0, 5};
    ck_assert_int_eq(bp_buf_alloc(&a, BP_F32, 2, z, &e), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 2, z, &e), BP_OK);
    ck_assert_int_eq(bp_compare(&a, &b, NULL, NULL, &c, &e), BP_OK);
    ck_assert(c.total == 0 && c.mismatched == 0 && c.pass);
    ck_assert(hist_sum(&c) == 0);
    ck_assert(bp_cmp_percentile_ulp(&c, 50) == 0);
    bp_cmp_free(&c);
    bp_buf_free(&a);
    bp_buf_free(&b);
}
END_TEST

/* Tensors read from a container may start at any byte. */
START_TEST(t_unaligned)
{
    const size_t n = 40000;
    unsigned char *ra = calloc(n * 4 + 1, 1), *rb = calloc(n * 4 + 1, 1);
    bp_buf_t a = {.dtype = BP_F32, .ndim = 1, .shape = {(int64_t)n},
                  .numel = n, .data = ra + 1};
    bp_buf_t b = a;
    b.data = rb + 1;
    put(&b, 20000, 0x00000005);
    put(&b, n - 1, 0x80000003);
    bp_cmp_t c = cmp_pol(&a, &b, "exact", NULL);
    ck_assert_uint_eq(c.mismatched, 2);
    ck_assert_uint_eq(c.max_ulp, 5);
    ck_assert_uint_eq(c.max_ulp_idx, 20000);
    ck_assert_uint_eq(c.first[1].index, n - 1);
    ck_assert_uint_eq(c.first[1].b, 0x80000003);
    bp_cmp_free(&c);
    free(ra);
    free(rb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_hist_bins);
    tcase_add_test(tc, t_f32_distances);
    tcase_add_test(tc, t_maxima_indices);
    tcase_add_test(tc, t_first_k);
    tcase_add_test(tc, t_nan_class);
    tcase_add_test(tc, t_signed_zero);
    tcase_add_test(tc, t_nonfinite);
    tcase_add_test(tc, t_f16_bf16_f64_values);
    tcase_add_test(tc, t_integers);
    tcase_add_test(tc, t_storage_dtypes);
    tcase_add_test(tc, t_shape_dtype_errors);
    tcase_add_test(tc, t_policy_ulp);
    tcase_add_test(tc, t_policy_tol);
    tcase_add_test(tc, t_policy_fraction);
    tcase_add_test(tc, t_percentile);
    tcase_add_test(tc, t_index_format_and_empty);
    tcase_add_test(tc, t_unaligned);
    bp_test_add_kernel_tests(tc);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
