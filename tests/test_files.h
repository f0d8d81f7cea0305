/* Test helpers for data files under tests/: where one is (srcdir-relative,
 * so that out-of-tree builds find it) and its whole contents. */
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

#endif
