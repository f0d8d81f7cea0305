/* The one rule for data inside a line of text output (esc.h), against
 * expectations written by hand from the rule. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"

static const struct {
    const char *in, *want;
} cases[] = {
    {"plain name.weight", "plain name.weight"},
    {"a:b: c", "a:b: c"},
    {"", ""},
    {"a\nb", "a\\nb"},
    {"a\r\tb", "a\\r\\tb"},
    {"\x1b]0;title\x07", "\\x1b]0;title\\x07"},
    {"del\x7f", "del\\x7f"},
    {"c1 \xc2\x85 \xc2\x9b \xc2\xa0", "c1 \\xc2\\x85 \\xc2\\x9b \xc2\xa0"}, /* NBSP stays */
    {"::error::x", "\\x3a:error::x"},
    {"  ::warning::y", "  \\x3a:warning::y"},
    {":single", "\\x3asingle"}, /* then a writer's ':' would make "::" */
    {"a::b", "a::b"},
    {"\n::error::z", "\\n::error::z"},
    {"back\\slash", "back\\slash"},
    {"\xff\xfe bytes", "\xff\xfe bytes"},
    {"\xc2", "\xc2"}, /* a cut UTF-8 sequence at the end */
};
#define NCASES (sizeof cases / sizeof cases[0])

START_TEST(t_cases)
{
    char out[256];
    const char *in = cases[_i].in, *want = cases[_i].want;
    ck_assert_str_eq(bp_esc_str(in, out, sizeof out), want);
    ck_assert_int_eq(bp_esc_needed(in), strcmp(in, want) != 0);
    char *d = bp_esc_dup(in);
    ck_assert_str_eq(d, want);
    free(d);
    char *buf;
    size_t n;
    FILE *f = open_memstream(&buf, &n);
    bp_esc_put(f, in);
    fclose(f);
    ck_assert_str_eq(buf, want);
    free(buf);
}
END_TEST

START_TEST(t_cut_and_null)
{
    char out[12];
    /* the escapes are never cut in two: the "..." comes before */
    ck_assert_str_eq(bp_esc_str("abcdef\n\n\n", out, sizeof out), "abcdef\\n...");
    ck_assert_str_eq(bp_esc_str("abcdefgh", out, sizeof out), "abcdefgh");
    ck_assert_str_eq(bp_esc_str("abcdefghijklmn", out, sizeof out), "abcdefgh...");
    ck_assert_str_eq(bp_esc_str(NULL, out, sizeof out), "");
    ck_assert(!bp_esc_needed(NULL));
    ck_assert_str_eq(BP_ESC("x\ny"), "x\\ny");
}
END_TEST

START_TEST(t_printf)
{
    char *buf;
    size_t n;
    FILE *f = open_memstream(&buf, &n);
    /* the formatted text is one string: its final newline ends the line */
    bp_esc_printf(f, "%s: '%s'\n", "::x", "a\nb");
    bp_esc_printf(f, "no end %d", 7);
    char big[3000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    bp_esc_printf(f, "\n%s\t\n", big);
    fclose(f);
    ck_assert_int_eq(strncmp(buf, "\\x3a:x: 'a\\nb'\nno end 7\\nzzz", 28), 0);
    ck_assert_int_eq(strlen(buf), 28 + 2996 + 3);
    ck_assert_str_eq(buf + strlen(buf) - 3, "\\t\n");
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("esc");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, t_cases, 0, (int)NCASES);
    tcase_add_test(tc, t_cut_and_null);
    tcase_add_test(tc, t_printf);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
