/* Tests of rep_github.c: the workflow-command escaping, the choice and
 * order of the annotated failures (expected order worked out by hand from
 * the planted mismatch counts and ulp distances), annotation file paths,
 * and the step summary (appended, and trouble when it cannot be). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "rep.h"
#include "report.h"

/* A result over 4 f32 ones whose first k elements are u ulps higher in b
 * (u == 0: +inf, a class change). */
static void add(bp_report_t *rep, const char *probe, const char *file, int k, unsigned u,
                bool counts)
{
    uint32_t a[4], b[4];
    for (int i = 0; i < 4; i++) {
        a[i] = 0x3f800000u;
        b[i] = i < k ? (u ? 0x3f800000u + u : 0x7f800000u) : 0x3f800000u;
    }
    bp_buf_t ba, bb;
    bp_error_t err = {0};
    int64_t shape[1] = {4};
    ck_assert_int_eq(bp_buf_alloc(&ba, BP_F32, 1, shape, &err), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&bb, BP_F32, 1, shape, &err), BP_OK);
    memcpy(ba.data, a, sizeof a);
    memcpy(bb.data, b, sizeof b);
    bp_result_t r = {.probe = (char *)probe, .file = (char *)file, .line = 9, .output = "y",
                     .dtype = BP_F32, .kind = BP_RES_GOLDEN, .a = "golden cpu-sleef",
                     .b = "cpu", .compared = true, .counts = counts};
    bp_policy_exact(&r.policy);
    ck_assert_int_eq(bp_compare(&ba, &bb, &r.policy, NULL, &r.cmp, &err), BP_OK);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
    bp_buf_free(&ba);
    bp_buf_free(&bb);
}

typedef int (*writer_t)(FILE *, const bp_report_t *);

static char *render(writer_t fn, const bp_report_t *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(fn(f, rep), 0);
    fclose(f);
    return buf;
}

static void init(bp_report_t *rep)
{
    char *argv[] = {"run"};
    bp_report_init(rep, 1, argv);
}

START_TEST(t_order_and_limit)
{
    static const struct { int k; unsigned u; } plan[12] = {
        {1, 1}, {2, 1}, {2, 5}, {4, 1}, {1, 0}, {3, 2},
        {3, 2}, {1, 3}, {4, 7}, {2, 3}, {1, 2}, {1, 9}};
    /* By fraction, then ulp (a class change above all), then order. */
    static const int want[10] = {8, 3, 5, 6, 2, 9, 1, 4, 11, 7};
    bp_report_t rep;
    init(&rep);
    char name[16];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "p%d", i);
        add(&rep, name, "probes/p.yaml", plan[i].k, plan[i].u, true);
    }
    add(&rep, "informational", "probes/p.yaml", 4, 0, false);
    add(&rep, "identical", "probes/p.yaml", 0, 1, true);
    char *out = render(bp_rep_github_annotations, &rep);
    char *line = out, *nl;
    for (int i = 0; i < 10; i++) {
        char head[256];
        snprintf(head, sizeof head,
                 "::error file=probes/p.yaml,line=9,title=bitprobe drift%%3A p%d y fp32%%3A "
                 "cpu vs golden cpu-sleef::p%d y fp32: cpu vs golden cpu-sleef: ",
                 want[i], want[i]);
        ck_assert_msg(strncmp(line, head, strlen(head)) == 0, "annotation %d: %s", i, line);
        nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        line = nl + 1;
    }
    ck_assert_str_eq(line, "::warning title=bitprobe::2 more results fail "
                           "(see the step summary or the report)\n");
    ck_assert_ptr_nonnull(strstr(out, "p4 y fp32: cpu vs golden cpu-sleef: 1 of 4 elements "
                                      "differ (25%25), max class change at [0]"));
    ck_assert_ptr_nonnull(strstr(out, "p8 y fp32: cpu vs golden cpu-sleef: 4 of 4 elements "
                                      "differ (100%25), max 7 ulp at [0]"));
    free(out);
    bp_report_free(&rep);
}
END_TEST

START_TEST(t_escaping)
{
    bp_report_t rep;
    init(&rep);
    add(&rep, "a%b,c:d\ne\rf", "././/probes/x,y:z%.yaml", 1, 1, true);
    char *out = render(bp_rep_github_annotations, &rep);
    static const char want[] =
        "::error file=probes/x%2Cy%3Az%25.yaml,line=9,"
        "title=bitprobe drift%3A a%25b%2Cc%3Ad%0Ae%0Df y fp32%3A cpu vs golden cpu-sleef"
        "::a%25b,c:d%0Ae%0Df y fp32: cpu vs golden cpu-sleef: 1 of 4 elements differ "
        "(25%25), max 1 ulp at [0],";
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "got:  %s\nwant: %s", out, want);
    ck_assert_int_eq((int)(strchr(out, '\n') - out), (int)strlen(out) - 1);
    free(out);
    bp_report_free(&rep);
}
END_TEST

START_TEST(t_paths)
{
    bp_report_t rep;
    init(&rep);
    add(&rep, "ws", "/work/repo/probes/w.yaml", 1, 1, true);
    add(&rep, "elsewhere", "/opt/probes/o.yaml", 1, 1, true);
    add(&rep, "nofile", NULL, 1, 1, true);
    setenv("GITHUB_WORKSPACE", "/work/repo/", 1);
    char *out = render(bp_rep_github_annotations, &rep);
    unsetenv("GITHUB_WORKSPACE");
    ck_assert_ptr_nonnull(strstr(out, "::error file=probes/w.yaml,line=9,title="));
    ck_assert_ptr_nonnull(strstr(out, "::error file=/opt/probes/o.yaml,line=9,title="));
    ck_assert_ptr_nonnull(strstr(out, "::error title=bitprobe drift%3A nofile y fp32"));
    free(out);
    /* A workspace that is only a prefix of a directory name does not count. */
    setenv("GITHUB_WORKSPACE", "/work/rep", 1);
    out = render(bp_rep_github_annotations, &rep);
    unsetenv("GITHUB_WORKSPACE");
    ck_assert_ptr_nonnull(strstr(out, "::error file=/work/repo/probes/w.yaml,"));
    free(out);
    bp_report_free(&rep);
}
END_TEST

START_TEST(t_summary_file)
{
    bp_report_t rep;
    init(&rep);
    add(&rep, "drifts", "probes/d.yaml", 2, 3, true);
    add(&rep, "same", "probes/s.yaml", 0, 1, true);
    bp_result_t skip = {.probe = "gone", .output = "y", .dtype = BP_BF16,
                        .kind = BP_RES_GOLDEN, .a = "golden oracle", .b = "oracle",
                        .counts = false, .status = BP_RS_MISSING_GOLDEN,
                        .note = "no golden | here"};
    bp_policy_exact(&skip.policy);
    ck_assert_ptr_nonnull(bp_report_add(&rep, &skip));
    char path[] = "/tmp/bp-summary-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq((int)write(fd, "before\n", 7), 7);
    close(fd);
    setenv("GITHUB_STEP_SUMMARY", path, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *ann = open_memstream(&buf, &len);
    ck_assert_int_eq(bp_rep_github(ann, &rep), 0);
    fclose(ann);
    ck_assert_int_eq((int)(strstr(buf, "::error file=probes/d.yaml,") == buf), 1);
    free(buf);
    FILE *f = fopen(path, "r");
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    static const char want[] =
        "before\n"
        "### bitprobe: drift\n\n"
        "drift: 1 of 2 compared beyond policy (1 identical); 1 missing golden.\n\n"
        "| probe | output | dtype | b vs a | mismatched | % | max ulp | policy | verdict |\n"
        "|---|---|---|---|---:|---:|---:|---|---|\n"
        "| `drifts` | `y` | fp32 | `cpu` vs `golden cpu-sleef` | 2 / 4 | 50 | 3 | `exact` "
        "| **DRIFT** |\n"
        "| `gone` | `y` | bf16 | `oracle` vs `golden oracle` | | | | `exact` "
        "| missing golden: no golden \\| here |\n\n";
    ck_assert_str_eq(text, want);
    /* Unwritable: trouble, nothing thrown away silently. */
    setenv("GITHUB_STEP_SUMMARY", "/nonexistent-dir/summary.md", 1);
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_int_eq(bp_rep_github(devnull, &rep), 2);
    fclose(devnull);
    unsetenv("GITHUB_STEP_SUMMARY");
    unlink(path);
    bp_report_free(&rep);
}
END_TEST

int main(void)
{
    unsetenv("GITHUB_WORKSPACE");
    unsetenv("GITHUB_STEP_SUMMARY");
    Suite *s = suite_create("rep_github");
    TCase *tc = tcase_create("github");
    tcase_add_test(tc, t_order_and_limit);
    tcase_add_test(tc, t_escaping);
    tcase_add_test(tc, t_paths);
    tcase_add_test(tc, t_summary_file);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
