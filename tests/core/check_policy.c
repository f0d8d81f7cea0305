/* Policy text: every accepted spelling parses to the hand-written policy,
 * every malformed one is refused with a message naming the item, and the
 * formatted form reads back to the same policy. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static bp_policy_t parse_ok(const char *s)
{
    bp_policy_t p;
    bp_error_t e;
    bp_status st = bp_policy_parse(s, &p, &e);
    ck_assert_msg(st == BP_OK, "'%s' refused: %s", s, e.msg);
    return p;
}

static bool same(const bp_policy_t *a, const bp_policy_t *b)
{
    return a->has_ulp == b->has_ulp && a->max_ulp == b->max_ulp &&
           a->has_tol == b->has_tol && a->abs == b->abs && a->rel == b->rel &&
           a->max_mismatch_fraction == b->max_mismatch_fraction &&
           a->zero_sign_ignore == b->zero_sign_ignore;
}

START_TEST(t_accepted)
{
    static const struct {
        const char *s;
        bp_policy_t want;
    } v[] = {
        {"exact", {false, 0, false, 0, 0, 0, false}},
        {"ulp=2", {true, 2, false, 0, 0, 0, false}},
        {"ulp=0", {true, 0, false, 0, 0, 0, false}},
        {"ulp=18446744073709551615", {true, UINT64_MAX, false, 0, 0, 0, false}},
        {"abs=1e-3,rel=1e-2", {false, 0, true, 1e-3, 1e-2, 0, false}},
        {"abs=0.5", {false, 0, true, 0.5, 0, 0, false}},
        {"rel=.25", {false, 0, true, 0, 0.25, 0, false}},
        {"atol=1e-5,rtol=1.3e-6", {false, 0, true, 1e-5, 1.3e-6, 0, false}},
        {"fraction=0.01", {false, 0, false, 0, 0, 0.01, false}},
        {"frac=1", {false, 0, false, 0, 0, 1, false}},
        {"max_mismatch_fraction=0", {false, 0, false, 0, 0, 0, false}},
        {"exact,fraction=0.25", {false, 0, false, 0, 0, 0.25, false}},
        {"ulp=1,fraction=0.01", {true, 1, false, 0, 0, 0.01, false}},
        {"ulp<=3,abs<=2,rel<=0.5,fraction<=0.125",
         {true, 3, true, 2, 0.5, 0.125, false}},
        {" ulp = 4 , abs:1 ", {true, 4, true, 1, 0, 0, false}},
        {"rel=0.01,abs=1e-8", {false, 0, true, 1e-8, 0.01, 0, false}},
        {"zero_sign=ignore", {false, 0, false, 0, 0, 0, true}},
        {"zero_sign=count", {false, 0, false, 0, 0, 0, false}},
        {"exact,zero_sign=ignore", {false, 0, false, 0, 0, 0, true}},
        {"ulp=2, zero_sign:ignore", {true, 2, false, 0, 0, 0, true}},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        bp_policy_t p = parse_ok(v[k].s);
        ck_assert_msg(same(&p, &v[k].want), "'%s' parsed differently",
                      v[k].s);
    }
}
END_TEST

START_TEST(t_refused)
{
    static const struct {
        const char *s, *msg;
    } v[] = {
        {"", "empty item at character 1"},
        {"ulp=2,", "empty item at character 7"},
        {",ulp=2", "empty item at character 1"},
        {"ulp=1,,abs=2", "empty item at character 7"},
        {"fuzzy", "unknown item 'fuzzy'"},
        {"ulp2", "unknown item 'ulp2'"},
        {"ulp", "'ulp' needs a value"},
        {"ulp=", "ulp wants a non-negative integer, got ''"},
        {"ulp=-1", "ulp wants a non-negative integer, got '-1'"},
        {"ulp=1.5", "ulp wants a non-negative integer, got '1.5'"},
        {"ulp=18446744073709551616", "ulp wants a non-negative integer"},
        {"ulp=0x10", "ulp wants a non-negative integer, got '0x10'"},
        {"abs=-1e-3", "abs wants a finite number >= 0, got '-1e-3'"},
        {"abs=inf", "abs wants a finite number >= 0, got 'inf'"},
        {"rel=nan", "rel wants a finite number >= 0, got 'nan'"},
        {"rel=1e999", "rel wants a finite number >= 0, got '1e999'"},
        {"abs=1e-3x", "abs wants a finite number >= 0, got '1e-3x'"},
        {"abs=0x1p-3", "abs wants a finite number >= 0"},
        {"fraction=1.5", "fraction wants a number from 0 to 1, got '1.5'"},
        {"frac=-0.1", "frac wants a number from 0 to 1"},
        {"ulp=1,ulp=2", "'ulp' given twice"},
        {"abs=1,atol=2", "'atol' given twice"},
        {"exact,ulp=1", "'exact' contradicts"},
        {"abs=1,exact", "'exact' contradicts"},
        {"exact=1", "'exact' takes no value"},
        {"ulp=1;abs=2", "ulp wants a non-negative integer, got '1;abs=2'"},
        {"zero_sign=maybe", "zero_sign wants ignore or count, got 'maybe'"},
        {"zero_sign", "'zero_sign' needs a value"},
        {"zero_sign=ignore,zero_sign=count", "'zero_sign' given twice"},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        bp_policy_t p = {true, 77, true, 1, 2, 0.5, false}, before = p;
        bp_error_t e;
        bp_status st = bp_policy_parse(v[k].s, &p, &e);
        ck_assert_msg(st == BP_EINPUT, "'%s' accepted", v[k].s);
        ck_assert_msg(strstr(e.msg, v[k].msg) != NULL,
                      "'%s': message '%s' lacks '%s'", v[k].s, e.msg,
                      v[k].msg);
        ck_assert_msg(strncmp(e.msg, "invalid policy '", 16) == 0, "%s",
                      e.msg);
        ck_assert(same(&p, &before));
    }
    bp_policy_t p;
    bp_error_t e;
    ck_assert_int_eq(bp_policy_parse(NULL, &p, &e), BP_EINPUT);
}
END_TEST

START_TEST(t_format_round_trip)
{
    static const struct {
        bp_policy_t p;
        const char *text;
    } v[] = {
        {{false, 0, false, 0, 0, 0, false}, "exact"},
        {{true, 2, false, 0, 0, 0, false}, "ulp<=2"},
        {{false, 0, true, 1e-3, 1e-2, 0, false}, "abs<=0.001,rel<=0.01"},
        {{false, 0, true, 0.1234567890123, 0, 0, false},
         "abs<=0.1234567890123,rel<=0"},
        {{false, 0, true, 0.1 + 0.2, 0, 0, false}, "abs<=0.30000000000000004,rel<=0"},
        {{true, 1, true, 1e-5, 1.3e-6, 0.01, false},
         "ulp<=1,abs<=1e-05,rel<=1.3e-06,fraction<=0.01"},
        {{false, 0, false, 0, 0, 0.29, false}, "fraction<=0.29"},
        {{false, 0, false, 0, 0, 0, true}, "exact,zero_sign=ignore"},
        {{true, 2, false, 0, 0, 0.5, true}, "ulp<=2,fraction<=0.5,zero_sign=ignore"},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        char buf[128];
        bp_policy_format(&v[k].p, buf, sizeof buf);
        ck_assert_str_eq(buf, v[k].text);
        bp_policy_t q = parse_ok(buf);
        ck_assert_msg(same(&q, &v[k].p), "'%s' does not read back", buf);
    }
}
END_TEST

START_TEST(t_is_exact)
{
    bp_policy_t p;
    bp_policy_exact(&p);
    ck_assert(bp_policy_is_exact(&p));
    p = parse_ok("exact");
    ck_assert(bp_policy_is_exact(&p));
    p = parse_ok("ulp=0");
    ck_assert(!bp_policy_is_exact(&p));
    p = parse_ok("exact,fraction=0.1");
    ck_assert(!bp_policy_is_exact(&p));
    p = parse_ok("exact,fraction=0");
    ck_assert(bp_policy_is_exact(&p));
    /* excusing the sign of a zero admits elements whose bits differ */
    p = parse_ok("exact,zero_sign=ignore");
    ck_assert(!bp_policy_is_exact(&p));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_accepted);
    tcase_add_test(tc, t_refused);
    tcase_add_test(tc, t_format_round_trip);
    tcase_add_test(tc, t_is_exact);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
