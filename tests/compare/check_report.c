/* Tests of report.c: result statuses, the tally every format renders and
 * its verdict (the exit status), and the verdict line.  The results are
 * built by hand and the expected counts derived from the rules in
 * report.h, one case per rule. */
#include <check.h>
#include <string.h>

#include "compare.h"
#include "report.h"

/* A compared result: two fp32 elements, `diff` of them one ulp apart,
 * under policy (exact or ulp=1), counting or not. */
static void compared(bp_report_t *rep, const char *probe, int diff, const char *policy,
                     bool counts)
{
    bp_buf_t a, b;
    bp_error_t err = {0};
    int64_t shape[1] = {2};
    ck_assert_int_eq(bp_buf_alloc(&a, BP_F32, 1, shape, &err), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 1, shape, &err), BP_OK);
    uint32_t va[2] = {0x3f800000, 0x40000000}, vb[2] = {0x3f800000, 0x40000000};
    for (int i = 0; i < diff; i++)
        vb[i]++;
    memcpy(a.data, va, sizeof va);
    memcpy(b.data, vb, sizeof vb);
    bp_result_t r = {.probe = (char *)probe, .output = "y", .dtype = BP_F32,
                     .kind = BP_RES_GOLDEN, .a = "golden cpu-sleef", .b = "cpu",
                     .compared = true, .counts = counts};
    ck_assert_int_eq(bp_policy_parse(policy, &r.policy, &err), BP_OK);
    ck_assert_int_eq(bp_compare(&a, &b, &r.policy, NULL, &r.cmp, &err), BP_OK);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
    bp_buf_free(&a);
    bp_buf_free(&b);
}

static void other(bp_report_t *rep, const char *b, bp_res_status_t st, bool counts,
                  const char *note)
{
    bp_result_t r = {.probe = "p", .output = "", .dtype = BP_F32, .kind = BP_RES_GOLDEN,
                     .a = "golden x", .b = (char *)b, .counts = counts, .status = st,
                     .note = (char *)note};
    bp_policy_exact(&r.policy);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
}

static void tally(const bp_report_t *rep, bp_tally_t *t, char *line, size_t n)
{
    bp_report_tally(rep, t);
    bp_tally_line(rep, t, line, n);
}

START_TEST(t_compared_statuses)
{
    bp_report_t rep;
    bp_report_init(&rep, 0, NULL);
    compared(&rep, "same", 0, "exact", true);
    compared(&rep, "within", 1, "ulp=1", true);
    compared(&rep, "info", 1, "exact", false);
    ck_assert_int_eq(bp_result_status(&rep.r[0]), BP_RS_IDENTICAL);
    ck_assert_int_eq(bp_result_status(&rep.r[1]), BP_RS_WITHIN);
    ck_assert_int_eq(bp_result_status(&rep.r[2]), BP_RS_DIFFERS);
    bp_tally_t t;
    char line[512];
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 0);
    ck_assert_str_eq(t.verdict, "passed");
    ck_assert_uint_eq(t.compared, 3);
    ck_assert_str_eq(line, "passed: 3 compared (1 identical, 1 within policy, "
                           "1 differs (informational))");
    compared(&rep, "drift", 2, "exact", true);
    ck_assert_int_eq(bp_result_status(&rep.r[3]), BP_RS_DRIFT);
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 1);
    ck_assert_uint_eq(t.failed, 1);
    ck_assert_str_eq(line, "drift: 1 of 4 compared beyond policy (1 identical, "
                           "1 within policy, 1 differs (informational))");
    ck_assert_uint_eq(bp_report_failures(&rep), 1);
    bp_report_free(&rep);
}
END_TEST

/* One-sided and not comparable tensors fail (exit 1) when they count. */
START_TEST(t_one_sided)
{
    bp_report_t rep;
    bp_report_init(&rep, 0, NULL);
    compared(&rep, "same", 0, "exact", true);
    other(&rep, "B", BP_RS_ONLY_B, true, "B");
    bp_tally_t t;
    char line[512];
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 1);
    ck_assert_str_eq(t.verdict, "drift");
    ck_assert_str_eq(line, "drift: 1 compared (1 identical); 1 only in b");
    other(&rep, "B", BP_RS_NOT_COMPARABLE, false, "shapes");
    tally(&rep, &t, line, sizeof line);
    ck_assert_uint_eq(t.failed, 1);
    ck_assert_uint_eq(t.skipped, 1);
    bp_report_free(&rep);
    /* Only one-sided tensors: nothing compared is never a pass, and the
     * reason is said: one-sided, no tensor in common, not comparable. */
    bp_report_init(&rep, 0, NULL);
    other(&rep, "B", BP_RS_ONLY_A, true, "A");
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(t.verdict, "error");
    ck_assert_str_eq(line, "error: nothing compared (one-sided); 1 only in a");
    other(&rep, "C", BP_RS_ONLY_B, true, "B");
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(line, "error: nothing compared (no tensor in common); 1 only in a; "
                           "1 only in b");
    bp_report_free(&rep);
    bp_report_init(&rep, 0, NULL);
    other(&rep, "Q", BP_RS_NOT_COMPARABLE, true, "unknown dtype Q8");
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(line, "error: nothing compared (not comparable); 1 not comparable");
    bp_report_free(&rep);
}
END_TEST

/* Errors, and missing goldens or skipped backends that count, give 2;
 * informational ones give nothing. */
START_TEST(t_errors)
{
    bp_report_t rep;
    bp_report_init(&rep, 0, NULL);
    compared(&rep, "drift", 1, "exact", true);
    other(&rep, "cuda", BP_RS_SKIPPED_BACKEND, false, "no CUDA driver");
    other(&rep, "cuda", BP_RS_SKIPPED_BACKEND, false, "no CUDA driver");
    other(&rep, "cpu", BP_RS_MISSING_GOLDEN, false, "no golden");
    bp_tally_t t;
    char line[512];
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 1);
    ck_assert_uint_eq(t.skipped, 3);
    ck_assert_str_eq(line, "drift: 1 of 1 compared beyond policy (none identical); "
                           "1 missing golden; cuda skipped: no CUDA driver");
    other(&rep, "cpu", BP_RS_MISSING_GOLDEN, true, "no golden");
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(t.verdict, "error");
    ck_assert_uint_eq(t.errors, 1);
    other(&rep, "cpu", BP_RS_ERROR, false, "x.yaml:3:4: unknown key");
    tally(&rep, &t, line, sizeof line);
    ck_assert_uint_eq(t.errors, 2);
    ck_assert_int_eq(bp_result_outcome(&rep.r[rep.n - 1]), 2);
    ck_assert_str_eq(line, "error: 1 of 1 compared beyond policy (none identical); "
                           "2 missing golden; 1 error; cuda skipped: no CUDA driver");
    bp_report_free(&rep);
}
END_TEST

/* Nothing compared is an error, saying why; unless it is the point. */
START_TEST(t_nothing)
{
    bp_report_t rep;
    bp_tally_t t;
    char line[512];
    bp_report_init(&rep, 0, NULL);
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(line, "error: nothing compared (nothing to compare)");
    ck_assert(bp_report_why_empty(&rep, "no probes matched", false));
    tally(&rep, &t, line, sizeof line);
    ck_assert_str_eq(line, "error: nothing compared (no probes matched)");
    ck_assert(bp_report_why_empty(&rep, "saved for diff", true));
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 0);
    ck_assert_str_eq(line, "passed: nothing compared (saved for diff)");
    bp_report_free(&rep);
    bp_report_init(&rep, 0, NULL);
    other(&rep, "cpu", BP_RS_MISSING_GOLDEN, false, "no golden");
    tally(&rep, &t, line, sizeof line);
    ck_assert_int_eq(t.exit, 2);
    ck_assert_str_eq(line, "error: nothing compared (no goldens for this backend); "
                           "1 missing golden");
    bp_report_free(&rep);
}
END_TEST

START_TEST(t_names)
{
    for (int s = 0; s < BP_RS_COUNT; s++) {
        bp_res_status_t back;
        ck_assert(bp_res_status_parse(bp_res_status_name((bp_res_status_t)s), &back));
        ck_assert_int_eq(back, s);
    }
    bp_res_status_t x;
    ck_assert(!bp_res_status_parse("passed", &x));
    ck_assert_str_eq(bp_res_status_label(BP_RS_ONLY_A), "only in a");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("tally");
    tcase_add_test(tc, t_compared_statuses);
    tcase_add_test(tc, t_one_sided);
    tcase_add_test(tc, t_errors);
    tcase_add_test(tc, t_nothing);
    tcase_add_test(tc, t_names);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
