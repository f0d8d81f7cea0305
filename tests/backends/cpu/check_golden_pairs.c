/* The shipped cuda goldens pinned without a GPU.  make check recomputes
 * the cpu and oracle goldens (tests/cli/golden_shipped.sh) but can
 * recompute the cuda ones only on a GPU machine (golden_shipped_cuda.sh),
 * so a cuda golden edited by hand (one element changed, its CRCs made
 * valid) would pass everywhere else.  This test holds every tensor of
 * every golden/<probe>/cuda-sm90 against the oracle's golden of the same
 * probe and compares, per tensor, the number of elements that differ and
 * the sum and maximum of their ulp distances with tests/data/golden_pairs.txt.
 * A one-ulp change to any element changes that element's distance to the
 * oracle by one, so the sum moves; a tensor or golden added or removed
 * fails too.  The distances are computed here (bits mapped to a monotonic
 * integer line; NaNs counted apart), not by bitprobe's comparison code.
 *
 * The table records the goldens' relation as blessed; when the cuda
 * goldens are blessed again on the GPU machine (and checked there by
 * golden_shipped_cuda.sh and tests/refs/torch_probe.py), write it anew
 * with BP_PAIRS_WRITE=tests/data/golden_pairs.txt tests/backends/cpu/check_golden_pairs
 * and review its diff. */
#include <check.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_cpu_ref.h"
#include "st.h"
#include "test_files.h"

/* Position on a line where neighbouring floats are 1 apart (+0 and -0
 * both at 0); w is the width in bits. */
static int64_t line_pos(uint64_t v, int w)
{
    uint64_t sign = 1ull << (w - 1), mag = v & (sign - 1);
    return (v & sign) ? -(int64_t)mag : (int64_t)mag;
}

/* One line of the table for tensor t of probe p: cuda's against the
 * oracle's. */
static void pair_line(const char *p, const bp_st_tensor_t *c, const bp_st_file_t *o,
                      char *out, size_t n)
{
    const bp_st_tensor_t *r = bp_st_find(o, c->name);
    ck_assert_msg(r != NULL, "%s: cuda's %s has no oracle counterpart", p, c->name);
    const bp_buf_t *a = &c->buf, *b = &r->buf;
    ck_assert_msg(a->dtype == b->dtype && a->numel == b->numel, "%s %s: dtype or size differ",
                  p, c->name);
    int w = 8 * (int)bp_dtype_info(a->dtype)->size;
    bool fl = bp_dtype_info(a->dtype)->is_float;
    uint64_t differ = 0, nan = 0, sum = 0, max = 0;
    for (size_t i = 0; i < a->numel; i++) {
        uint64_t x = bp_buf_bits(a, i), y = bp_buf_bits(b, i);
        if (x == y)
            continue;
        differ++;
        if (fl && (isnan_bits(a->dtype, x) || isnan_bits(a->dtype, y))) {
            nan++;
            continue;
        }
        int64_t d = fl ? line_pos(x, w) - line_pos(y, w) : (int64_t)(x - y);
        uint64_t u = d < 0 ? (uint64_t)-d : (uint64_t)d;
        sum += u;
        max = u > max ? u : max;
    }
    snprintf(out, n, "%s %s %zu differ %llu ulp-sum %llu ulp-max %llu nan %llu", p, c->name,
             a->numel, (unsigned long long)differ, (unsigned long long)sum,
             (unsigned long long)max, (unsigned long long)nan);
}

/* Every line, in probe and tensor name order, malloc'd as one text. */
static char *table(void)
{
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/golden/*/cuda-sm90.safetensors.gz", test_top_srcdir());
    glob_t g;
    ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    t[0] = 0;
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char probe[256], opath[1024];
        const char *end = strrchr(g.gl_pathv[k], '/'), *beg = end - 1;
        while (beg > g.gl_pathv[k] && beg[-1] != '/')
            beg--;
        snprintf(probe, sizeof probe, "%.*s", (int)(end - beg), beg);
        snprintf(opath, sizeof opath, "%.*s/oracle.safetensors.gz",
                 (int)(end - g.gl_pathv[k]), g.gl_pathv[k]);
        bp_st_file_t c, o;
        bp_error_t err = {0};
        ck_assert_msg(bp_st_read(g.gl_pathv[k], &c, &err) == BP_OK, "%s", err.msg);
        ck_assert_msg(bp_st_read(opath, &o, &err) == BP_OK, "%s", err.msg);
        /* tensor names sorted: the file lists them in data order */
        const bp_st_tensor_t **ts = malloc(c.n * sizeof *ts);
        for (size_t i = 0; i < c.n; i++)
            ts[i] = &c.t[i];
        for (size_t i = 1; i < c.n; i++)
            for (size_t j = i; j > 0 && strcmp(ts[j - 1]->name, ts[j]->name) > 0; j--) {
                const bp_st_tensor_t *x = ts[j];
                ts[j] = ts[j - 1];
                ts[j - 1] = x;
            }
        for (size_t i = 0; i < c.n; i++) {
            char line[512];
            pair_line(probe, ts[i], &o, line, sizeof line);
            if (len + strlen(line) + 2 > cap)
                t = realloc(t, cap *= 2);
            len += (size_t)sprintf(t + len, "%s\n", line);
        }
        free(ts);
        bp_st_free(&c);
        bp_st_free(&o);
    }
    globfree(&g);
    return t;
}

START_TEST(t_pairs)
{
    char *got = table();
    const char *w = getenv("BP_PAIRS_WRITE");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/golden_pairs.txt", test_top_srcdir());
    if (w && *w) {
        FILE *f = fopen(w, "w");
        ck_assert_msg(f != NULL, "cannot write %s", w);
        fprintf(f, "# golden/*/cuda-sm90 against golden/*/oracle, per tensor: elements, "
                   "how many differ,\n# the sum and the largest of their ulp distances, "
                   "NaN mismatches (tests/backends/cpu/check_golden_pairs.c)\n%s", got);
        fclose(f);
        printf("check_golden_pairs: wrote %s\n", w);
    }
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char line[512];
    size_t at = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        size_t l = strcspn(got + at, "\n");
        ck_assert_msg(got[at] != 0, "%s line %zu: '%.*s' is no longer a cuda golden tensor",
                      path, n + 1, (int)strcspn(line, "\n"), line);
        ck_assert_msg(strncmp(got + at, line, l) == 0 && line[l] == '\n',
                      "cuda golden against the oracle's: now '%.*s', %s says '%.*s' (a "
                      "golden edited, or blessed again without the table: see "
                      "tests/backends/cpu/check_golden_pairs.c)",
                      (int)l, got + at, path, (int)strcspn(line, "\n"), line);
        at += l + 1;
        n++;
    }
    fclose(f);
    ck_assert_msg(got[at] == 0, "a cuda golden tensor %s lacks: '%.*s'", path,
                  (int)strcspn(got + at, "\n"), got + at);
    printf("check_golden_pairs: %zu cuda golden tensors as %s records them\n", n, path);
    free(got);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("golden_pairs");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_pairs);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
