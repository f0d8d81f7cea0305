/* Test helpers for data files under tests/: where one is (srcdir-relative,
 * so that out-of-tree builds find it) and its whole contents; where the
 * source tree is; and a suite run as a test program's main() ends it. */
#ifndef BP_TEST_FILES_H
#define BP_TEST_FILES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* tests/<dir>/<file>, under $srcdir when make check sets it. */
static inline void test_data_path(const char *dir, const char *file, char *out, size_t n)
{
    const char *top = getenv("srcdir");
    snprintf(out, n, "%s/%s/%s", top ? top : "tests", dir, file);
}

/* The whole file (caller frees); a missing file fails the test. */
static inline unsigned char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n ? (size_t)n : 1);
    ck_assert(fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The source tree's top: $top_srcdir when make check sets it, else the
 * tree the test was configured in (BP_TEST_SRCDIR), else ".". */
static inline const char *test_top_srcdir(void)
{
    const char *s = getenv("top_srcdir");
#ifdef BP_TEST_SRCDIR
    if (!s || !*s)
        s = BP_TEST_SRCDIR;
#endif
    return s && *s ? s : ".";
}

/* Runs s; main's exit status: 1 when a test failed. */
static inline int test_run_suite(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
