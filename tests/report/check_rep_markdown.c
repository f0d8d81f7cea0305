/* Tests of rep_markdown.c: escaping of text and code spans (hand-written
 * expectations), fences longer than any backtick run of the embedded probe
 * file, table rows with as many cells as their header whatever the names
 * hold, the environment table, and the mismatch rows with exact decimals
 * and bits worked out by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "rep.h"
#include "report.h"

typedef void (*piece_t)(FILE *, const char *);

static char *piece(piece_t fn, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

START_TEST(t_code_spans)
{
    static const struct { const char *in, *out; } cases[] = {
        {"plain", "`plain`"},
        {"a|b", "`a\\|b`"},
        {"x`y", "``x`y``"},
        {"`start", "`` `start ``"},
        {"end``", "``` end`` ```"},
        {"two\nlines\tand\x01", "`two lines and `"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = piece(bp_md_code, cases[i].in);
        ck_assert_msg(strcmp(got, cases[i].out) == 0, "code span of '%s': '%s', want '%s'",
                      cases[i].in, got, cases[i].out);
        free(got);
    }
    char *got = piece(bp_md_text, "a|b_c*d<e>&f`g[h]#i~j\\k\nl");
    ck_assert_str_eq(got, "a\\|b\\_c\\*d\\<e\\>&amp;f\\`g\\[h\\]\\#i\\~j\\\\k l");
    free(got);
}
END_TEST

/* Cells of a table row: '|' not preceded by a backslash, less one. */
static int cells(const char *line, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    return n - 1;
}

/* Every table keeps its header's width; every fence closes. */
static void check_tables(const char *doc)
{
    const char *p = doc;
    int width = -1, fence = 0, lineno = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        int ticks = 0;
        while (ticks < (int)len && p[ticks] == '`')
            ticks++;
        if (fence) {
            if (ticks == fence && len == (size_t)ticks)
                fence = 0;
        } else if (ticks >= 3) {
            fence = ticks;
        } else if (len && p[0] == '|') {
            int c = cells(p, len);
            if (width < 0)
                width = c;
            ck_assert_msg(c == width, "line %d has %d cells, its header %d: %.*s", lineno, c,
                          width, (int)len, p);
        } else {
            width = -1;
        }
        p += len + (nl != NULL);
    }
    ck_assert_msg(fence == 0, "a fence is left open");
}

static const uint32_t A[4] = {0x3f800000, 0x3f666666, 0x40fe2f5e, 0x00000001};
static const uint32_t B[4] = {0x3f800000, 0x3f666667, 0x40fe2f60, 0x00000001};

static void add_cmp(bp_report_t *rep, const char *probe, const char *file, const char *la,
                    const char *lb)
{
    bp_buf_t ba, bb;
    bp_error_t err = {0};
    int64_t shape[2] = {2, 2};
    ck_assert_int_eq(bp_buf_alloc(&ba, BP_F32, 2, shape, &err), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&bb, BP_F32, 2, shape, &err), BP_OK);
    memcpy(ba.data, A, sizeof A);
    memcpy(bb.data, B, sizeof B);
    bp_result_t r = {.probe = (char *)probe, .file = (char *)file, .line = 3, .output = "y|z",
                     .dtype = BP_F32, .kind = BP_RES_GOLDEN, .a = (char *)la,
                     .b = (char *)lb, .compared = true, .counts = true};
    bp_policy_exact(&r.policy);
    ck_assert_int_eq(bp_compare(&ba, &bb, &r.policy, NULL, &r.cmp, &err), BP_OK);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
    bp_buf_free(&ba);
    bp_buf_free(&bb);
}

START_TEST(t_report)
{
    char path[] = "/tmp/bp-probe-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    static const char yaml[] = "name: p\n# ``` and ```` inside\nops: []\n";
    ck_assert_int_eq((int)write(fd, yaml, strlen(yaml)), (int)strlen(yaml));
    close(fd);

    char *argv[] = {"run", "p|q", "--markdown", "x.md"};
    bp_report_t rep;
    bp_report_init(&rep, 4, argv);
    rep.env = json_pack("{s:s, s:{s:s}, s:[{s:s, s:{s:s}}]}", "cpu", "X|Y", "libs", "mpfr",
                        "4.2.0", "backends", "name", "cpu", "fingerprint", "sleef", "3.5");
    add_cmp(&rep, "p|`q", path, "golden cpu-sleef", "cpu");
    bp_report_note(&rep, "cuda skipped: <no device>");
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    ck_assert_int_eq(bp_rep_markdown(f, &rep), 0);
    fclose(f);
    check_tables(doc);

    static const char *want[] = {
        "# bitprobe drift: 1 of 1 compared beyond policy (none identical)\n",
        "```sh\nbitprobe run 'p|q' --markdown x.md\n```\n",
        "| | `this host` | `cpu` |\n|---|---|---|\n",
        "| cpu | `X\\|Y` |  |\n",
        "| libs.mpfr | `4.2.0` |  |\n",
        "| sleef |  | `3.5` |\n",
        /* The probe file, verbatim, in a fence longer than its own runs. */
        "`````yaml\nname: p\n# ``` and ```` inside\nops: []\n`````\n",
        "### ``p|`q`` `y|z` fp32 [2, 2]\n",
        "| `golden cpu-sleef` | `cpu` | 2 / 4 | 50 | 9.5367431640625e-07 at [1, 0] | "
        "1.2006048647308515e-07 at [1, 0] | 2 at [1, 0] | `exact` | **DRIFT** |\n",
        "| 0 | 2 | 50 |\n| 1 | 1 | 25 |\n| 2 | 1 | 25 |\n",
        "| [0, 1] | a | `0.89999997615814208984375` | `0x3f666666` | "
        "`0 01111110 11001100110011001100110` | 1 |\n"
        "|  | b | `0.900000035762786865234375` | `0x3f666667` | "
        "`0 01111110 11001100110011001100111` |  |\n",
        "| [1, 0] | a | `7.94328212738037109375` | `0x40fe2f5e` | "
        "`0 10000001 11111100010111101011110` | 2 |\n"
        "|  | b | `7.9432830810546875` | `0x40fe2f60` | "
        "`0 10000001 11111100010111101100000` |  |\n",
        "## Notes\n\n- cuda skipped: \\<no device\\>\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(doc, want[i]) != NULL, "report lacks:\n%s\n--- report:\n%s", want[i],
                      doc);
    /* The pipe in the probe name is escaped in every table cell. */
    ck_assert_ptr_null(strstr(doc, "| ``p|`q`` |"));
    ck_assert_ptr_nonnull(strstr(doc, "| ``p\\|`q`` |"));
    free(doc);
    bp_report_free(&rep);
    unlink(path);
}
END_TEST

START_TEST(t_unreadable_probe)
{
    char *argv[] = {"run"};
    bp_report_t rep;
    bp_report_init(&rep, 1, argv);
    add_cmp(&rep, "p", "/nonexistent-dir/p.yaml", "a", "b");
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    ck_assert_int_eq(bp_rep_markdown(f, &rep), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(doc, "### `/nonexistent-dir/p.yaml`\n\nCannot read it: No such "
                                      "file or directory.\n"));
    ck_assert_ptr_nonnull(strstr(doc, "No environment was recorded."));
    check_tables(doc);
    free(doc);
    bp_report_free(&rep);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rep_markdown");
    TCase *tc = tcase_create("markdown");
    tcase_add_test(tc, t_code_spans);
    tcase_add_test(tc, t_report);
    tcase_add_test(tc, t_unreadable_probe);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
