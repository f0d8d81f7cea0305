/* Tests for the ledger diff: alignment (against a dynamic-programming LCS
 * on random streams) and the classification of hand-built pairs of op
 * streams whose right answers are derived by hand: a changed op, a cast
 * one run inserts (zero.Init's), a decomposition that agrees and one that
 * does not, a renamed overload, a parameter that differs, a difference
 * that a cast absorbs, a one-sided op at the end. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger_diff.h"

/* A stream: ops "NAME|MODULE|IN|OUT", IN and OUT comma-separated tensor
 * ids (id 0: no hash, "uninitialized").  Tensor id k is F32 [4] with hash
 * k; ids from 100 on are F32 [8], from 200 on F32 [] (0-d). */
static char *ledger_text(const char *const *ops, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "{\"format\":\"bitprobe-ledger\",\"version\":1,\"hash\":\"fmix64-sum/1\"}\n");
    for (size_t i = 0; i < n; i++) {
        char spec[256], *save = NULL;
        snprintf(spec, sizeof spec, "%s", ops[i]);
        char *name = strtok_r(spec, "|", &save), *mod = strtok_r(NULL, "|", &save);
        char *in = strtok_r(NULL, "|", &save), *out = strtok_r(NULL, "|", &save);
        if (strcmp(mod, "-") == 0)
            mod = "";
        fprintf(f, "{\"seq\":%zu,\"op\":\"%s\",\"module\":\"%s\",\"args\":[", i, name, mod);
        int nin = 0;
        for (char *p = in; p && *p && strcmp(p, "-"); p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        {
            fprintf(f, "%s{\"t\":%d}", nin ? "," : "", nin);
            nin++;
        }
        fprintf(f, "],\"in\":[");
        for (int pass = 0; pass < 2; pass++) {
            char *list = pass ? out : in;
            int k = 0;
            for (char *p = list; p && *p && strcmp(p, "-");
                 p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
                long id = strtol(p, NULL, 10);
                int n4 = id >= 200 ? 1 : id >= 100 ? 8 : 4;
                if (id >= 200)
                    fprintf(f, "%s{\"dtype\":\"F32\",\"shape\":[],\"stride\":[],"
                               "\"device\":\"cpu\",\"nbytes\":4,", k++ ? "," : "");
                else
                    fprintf(f, "%s{\"dtype\":\"F32\",\"shape\":[%d],\"stride\":[1],"
                               "\"device\":\"cpu\",\"nbytes\":%d,", k++ ? "," : "", n4, 4 * n4);
                if (id)
                    fprintf(f, "\"hash\":\"%016lx\"}", id);
                else
                    fprintf(f, "\"hash\":null,\"why\":\"uninitialized\"}");
            }
            fprintf(f, pass ? "]}\n" : "],\"out\":[");
        }
    }
    fprintf(f, "{\"end\":{\"records\":%zu,\"captures\":0}}\n", n);
    fclose(f);
    return buf;
}

static void ledger_of(const char *const *ops, size_t n, const char *name, bp_ledger_t *l)
{
    char *t = ledger_text(ops, n);
    FILE *f = fmemopen(t, strlen(t), "r");
    bp_error_t e = {0};
    ck_assert_msg(bp_ledger_read_stream(f, name, l, &e) == BP_OK, "%s\n%s", e.msg, t);
    fclose(f);
    free(t);
}

typedef struct {
    bp_ledger_t A, B;
    bp_ledger_diff_t d;
} fix_t;

#define DIFF(fx, a, b)                                                                    \
    do {                                                                                  \
        ledger_of(a, sizeof(a) / sizeof *(a), "A", &(fx)->A);                            \
        ledger_of(b, sizeof(b) / sizeof *(b), "B", &(fx)->B);                            \
        bp_error_t e_ = {0};                                                              \
        ck_assert_msg(bp_ledger_diff(&(fx)->A, &(fx)->B, &(fx)->d, &e_) == BP_OK, "%s",  \
                      e_.msg);                                                            \
    } while (0)

static void fix_free(fix_t *fx)
{
    bp_ledger_diff_free(&fx->d);
    bp_ledger_free(&fx->A);
    bp_ledger_free(&fx->B);
}

/* The entry holding A's op a (b < 0) or B's op b. */
static const bp_ledger_entry_t *at(const fix_t *fx, long a, long b)
{
    size_t x = b >= 0 ? bp_ledger_diff_find(&fx->d, 1, b) : bp_ledger_diff_find(&fx->d, 0, a);
    ck_assert(x != SIZE_MAX);
    const bp_ledger_entry_t *e = &fx->d.e[x];
    ck_assert_int_eq(e->a, a);
    ck_assert_int_eq(e->b, b);
    return e;
}

static void counts(const fix_t *fx, size_t id, size_t intro, size_t inh, size_t abs, size_t nc)
{
    const size_t *c = fx->d.count;
    ck_assert_msg(c[BP_LOP_IDENTICAL] == id && c[BP_LOP_INTRODUCED] == intro &&
                      c[BP_LOP_INHERITED] == inh && c[BP_LOP_ABSORBED] == abs &&
                      c[BP_LOP_NOT_COMPARABLE] == nc,
                  "counts %zu %zu %zu %zu %zu, expected %zu %zu %zu %zu %zu",
                  c[BP_LOP_IDENTICAL], c[BP_LOP_INTRODUCED], c[BP_LOP_INHERITED],
                  c[BP_LOP_ABSORBED], c[BP_LOP_NOT_COMPARABLE], id, intro, inh, abs, nc);
}

START_TEST(t_identical)
{
    static const char *const a[] = {"aten::empty|-|-|0", "aten::arange|rope|-|1",
                                    "aten::div.Tensor|rope|1|2", "aten::mul.Tensor|-|1,2|3"};
    fix_t fx;
    DIFF(&fx, a, a);
    ck_assert(fx.d.exact);
    counts(&fx, 4, 0, 0, 0, 0); /* empty: same call, nothing hashed: identical */
    ck_assert_uint_eq(fx.d.first_introduced, SIZE_MAX);
    ck_assert_uint_eq(fx.d.first_differing, SIZE_MAX);
    fix_free(&fx);
}
END_TEST

/* B's division rounds differently: introduced there, inherited after. */
START_TEST(t_changed_op)
{
    static const char *const a[] = {"aten::arange|rope|-|1", "aten::div.Tensor|rope|1|2",
                                    "aten::pow.Scalar|rope|2|3", "aten::mm|attn|3,4|5"};
    static const char *const b[] = {"aten::arange|rope|-|1", "aten::div.Tensor|rope|1|12",
                                    "aten::pow.Scalar|rope|12|13", "aten::mm|attn|13,4|15"};
    fix_t fx;
    DIFF(&fx, a, b);
    ck_assert(fx.d.exact);
    counts(&fx, 1, 1, 2, 0, 0);
    const bp_ledger_entry_t *e = at(&fx, 1, 1);
    ck_assert_int_eq(e->status, BP_LOP_INTRODUCED);
    ck_assert(!e->by_presence && !e->via_provenance);
    ck_assert_uint_eq(fx.d.first_introduced, 1);
    e = at(&fx, 3, 3);
    ck_assert_int_eq(e->status, BP_LOP_INHERITED);
    ck_assert_int_eq(e->from_a, 2);
    ck_assert_int_eq(e->from_b, 2);
    ck_assert(bp_ledger_entry_differs(&fx.d, e, 0, 0));  /* in[0] */
    ck_assert(!bp_ledger_entry_differs(&fx.d, e, 0, 1)); /* in[1]: 4 on both */
    ck_assert(bp_ledger_entry_differs(&fx.d, e, 1, 2));  /* out[0] */
    /* Modules in order: rope first differs at the division. */
    ck_assert_uint_eq(fx.d.nmods, 2);
    ck_assert_str_eq(fx.d.mods[0].module, "rope");
    ck_assert_uint_eq(fx.d.mods[0].first, 1);
    ck_assert_uint_eq(fx.d.mods[0].outs_differ, 2);
    ck_assert_str_eq(fx.d.mods[1].module, "attn");
    fix_free(&fx);
}
END_TEST

/* zero.Init: B casts the positions before using them. */
START_TEST(t_inserted_cast)
{
    static const char *const a[] = {"aten::arange|rope|-|1", "aten::_reshape_alias|rope|1|2",
                                    "aten::mul.Tensor|rope|2,9|3", "aten::cos|rope|3|4"};
    static const char *const b[] = {"aten::arange|rope|-|1", "aten::_to_copy|rope|1|11",
                                    "aten::_reshape_alias|rope|11|12",
                                    "aten::mul.Tensor|rope|12,9|13", "aten::cos|rope|13|14"};
    fix_t fx;
    DIFF(&fx, a, b);
    ck_assert(!fx.d.exact);
    ck_assert_uint_eq(fx.d.paired, 4);
    ck_assert_uint_eq(fx.d.only_b, 1);
    counts(&fx, 1, 1, 3, 0, 0);
    const bp_ledger_entry_t *e = at(&fx, -1, 1);
    ck_assert_int_eq(e->status, BP_LOP_INTRODUCED);
    ck_assert(e->via_provenance && e->by_presence);
    ck_assert_uint_eq(fx.d.first_introduced, bp_ledger_diff_find(&fx.d, 1, 1));
    e = at(&fx, 1, 2);
    ck_assert_int_eq(e->status, BP_LOP_INHERITED);
    ck_assert_int_eq(e->from_b, 1);
    ck_assert_int_eq(e->from_a, 0);
    fix_free(&fx);
}
END_TEST

/* CPU decomposes a softmax, CUDA fuses it, the results agree: nothing
 * differs; the decomposition's ops are on one side only. */
START_TEST(t_decomposition_agrees)
{
    static const char *const a[] = {"aten::mm|attn|1,2|3", "aten::exp|attn|3|4",
                                    "aten::sum|attn|4|5", "aten::div.Tensor|attn|4,5|6",
                                    "aten::mm|attn|6,7|8"};
    static const char *const b[] = {"aten::mm|attn|1,2|3", "aten::_softmax|attn|3|6",
                                    "aten::mm|attn|6,7|8"};
    fix_t fx;
    DIFF(&fx, a, b);
    ck_assert_uint_eq(fx.d.only_a, 3);
    ck_assert_uint_eq(fx.d.only_b, 1);
    counts(&fx, 4, 0, 0, 0, 2);
    ck_assert_int_eq(at(&fx, -1, 1)->status, BP_LOP_IDENTICAL); /* its result is in A */
    ck_assert_int_eq(at(&fx, 3, -1)->status, BP_LOP_IDENTICAL); /* A's div: in B too */
    ck_assert_int_eq(at(&fx, 1, -1)->status, BP_LOP_NOT_COMPARABLE); /* exp: only A's */
    ck_assert_uint_eq(fx.d.first_differing, SIZE_MAX);
    fix_free(&fx);
}
END_TEST

/* The same, but the fused softmax rounds differently: both formulations
 * introduce it (A's first op of the chain, B's fused op), the chain
 * between inherits, the next paired op inherits. */
START_TEST(t_decomposition_differs)
{
    static const char *const a[] = {"aten::mm|attn|1,2|3", "aten::exp|attn|3|4",
                                    "aten::sum|attn|4|5", "aten::div.Tensor|attn|4,5|6",
                                    "aten::mm|attn|6,7|8"};
    static const char *const b[] = {"aten::mm|attn|1,2|3", "aten::_softmax|attn|3|16",
                                    "aten::mm|attn|16,7|18"};
    fix_t fx;
    DIFF(&fx, a, b);
    counts(&fx, 1, 2, 3, 0, 0);
    ck_assert_int_eq(at(&fx, -1, 1)->status, BP_LOP_INTRODUCED);
    ck_assert_int_eq(at(&fx, 1, -1)->status, BP_LOP_INTRODUCED); /* exp */
    ck_assert_int_eq(at(&fx, 2, -1)->status, BP_LOP_INHERITED);  /* sum */
    ck_assert_int_eq(at(&fx, 3, -1)->status, BP_LOP_INHERITED);  /* div */
    ck_assert_int_eq(at(&fx, 4, 2)->status, BP_LOP_INHERITED);
    fix_free(&fx);
}
END_TEST

/* PyTorch 1.13 writes base ** x as lift_fresh + pow.Tensor_Tensor, 2.x as
 * pow.Scalar: paired by name, compared by presence. */
START_TEST(t_renamed_overload)
{
    static const char *const a[] = {"aten::div.Tensor|rope|1|2", "aten::lift_fresh|rope|250|250",
                                    "aten::pow.Tensor_Tensor|rope|250,2|3",
                                    "aten::reciprocal|rope|3|4"};
    static const char *const b[] = {"aten::div.Tensor|rope|1|2", "aten::pow.Scalar|rope|2|13",
                                    "aten::reciprocal|rope|13|14"};
    fix_t fx;
    DIFF(&fx, a, b);
    ck_assert_uint_eq(fx.d.fuzzy, 1);
    const bp_ledger_entry_t *e = at(&fx, 2, 1);
    ck_assert(e->fuzzy && e->by_presence);
    /* A's 0-d base (250) is not in B: a number B passed as a number, not a
     * difference.  The powers differ: introduced. */
    ck_assert_int_eq(e->status, BP_LOP_INTRODUCED);
    ck_assert_int_eq(at(&fx, 3, 2)->status, BP_LOP_INHERITED);
    ck_assert_int_eq(at(&fx, 1, -1)->status, BP_LOP_NOT_COMPARABLE); /* lift_fresh */
    counts(&fx, 1, 1, 1, 0, 1);
    fix_free(&fx);
}
END_TEST

/* A parameter that differs: no recorded op made it. */
START_TEST(t_external)
{
    static const char *const a[] = {"aten::t|q|7|8", "aten::mm|q|1,8|9"};
    static const char *const b[] = {"aten::t|q|17|18", "aten::mm|q|1,18|19"};
    fix_t fx;
    DIFF(&fx, a, b);
    counts(&fx, 0, 0, 2, 0, 0);
    const bp_ledger_entry_t *e = at(&fx, 0, 0);
    ck_assert(e->external);
    ck_assert_uint_eq(fx.d.first_introduced, SIZE_MAX);
    ck_assert_uint_eq(fx.d.first_differing, 0);
    ck_assert(!at(&fx, 1, 1)->external);
    fix_free(&fx);
}
END_TEST

/* A cast to a narrower type rounds the difference away. */
START_TEST(t_absorbed)
{
    static const char *const a[] = {"aten::exp|-|1|2", "aten::_to_copy|-|2|3",
                                    "aten::neg|-|3|4"};
    static const char *const b[] = {"aten::exp|-|1|12", "aten::_to_copy|-|12|3",
                                    "aten::neg|-|3|4"};
    fix_t fx;
    DIFF(&fx, a, b);
    counts(&fx, 1, 1, 0, 1, 0);
    ck_assert_int_eq(at(&fx, 1, 1)->status, BP_LOP_ABSORBED);
    fix_free(&fx);
}
END_TEST

/* B's last op is its own and makes a result A never had: observed, since
 * no later op could show it. */
START_TEST(t_terminal_one_sided)
{
    static const char *const a[] = {"aten::exp|-|1|2"};
    static const char *const b[] = {"aten::exp|-|1|2", "aten::neg|-|2|3"};
    fix_t fx;
    DIFF(&fx, a, b);
    counts(&fx, 1, 1, 0, 0, 0);
    ck_assert(at(&fx, -1, 1)->via_provenance);
    fix_free(&fx);
}
END_TEST

/* Different hashes cannot be compared. */
START_TEST(t_other_hash)
{
    static const char *const a[] = {"aten::exp|-|1|2"};
    bp_ledger_t A, B;
    ledger_of(a, 1, "A", &A);
    ledger_of(a, 1, "B", &B);
    json_object_set_new(B.header, "hash", json_string("other/1"));
    bp_ledger_diff_t d;
    bp_error_t e = {0};
    ck_assert(bp_ledger_diff(&A, &B, &d, &e) == BP_EINPUT);
    ck_assert(strstr(e.msg, "use different hashes"));
    bp_ledger_free(&A);
    bp_ledger_free(&B);
}
END_TEST

/* Alignment: random streams over a small alphabet, B an edit of A; the
 * exact pairs keep both orders, pair equal ops only, and are as many as a
 * longest common subsequence (dynamic programming). */
START_TEST(t_align_lcs)
{
    unsigned seed = (unsigned)time(NULL);
    printf("t_align_lcs seed %u\n", seed);
    srand(seed);
    static const char *names[] = {"aten::add.Tensor", "aten::mul.Tensor", "aten::exp",
                                  "aten::mm", "aten::neg"};
    for (int trial = 0; trial < 60; trial++) {
        int na = rand() % 60, nb = 0;
        int xa[64], xb[128];
        for (int i = 0; i < na; i++)
            xa[i] = rand() % 5;
        for (int i = 0; i < na; i++) { /* B: A with deletions, insertions, changes */
            int r = rand() % 10;
            if (r == 0)
                continue;
            if (r == 1)
                xb[nb++] = rand() % 5;
            xb[nb++] = r == 2 ? rand() % 5 : xa[i];
        }
        char *sa[64], *sb[128];
        for (int i = 0; i < na; i++) {
            sa[i] = malloc(64);
            snprintf(sa[i], 64, "%s|m|1|%d", names[xa[i]], i + 2);
        }
        for (int j = 0; j < nb; j++) {
            sb[j] = malloc(64);
            snprintf(sb[j], 64, "%s|m|1|%d", names[xb[j]], j + 2);
        }
        bp_ledger_t A, B;
        ledger_of((const char *const *)sa, (size_t)na, "A", &A);
        ledger_of((const char *const *)sb, (size_t)nb, "B", &B);
        bp_ledger_pair_t *p;
        size_t np;
        bp_error_t e = {0};
        ck_assert(bp_ledger_align(&A, &B, &p, &np, &e) == BP_OK);
        int L[65][129] = {{0}};
        for (int i = na - 1; i >= 0; i--)
            for (int j = nb - 1; j >= 0; j--)
                L[i][j] = xa[i] == xb[j] ? L[i + 1][j + 1] + 1
                                         : L[i + 1][j] > L[i][j + 1] ? L[i + 1][j] : L[i][j + 1];
        long la = -1, lb = -1;
        int exact = 0;
        size_t seen_a = 0, seen_b = 0;
        for (size_t k = 0; k < np; k++) {
            if (p[k].a >= 0) {
                ck_assert_msg(p[k].a == la + 1, "seed %u: A out of order", seed);
                la = p[k].a;
                seen_a++;
            }
            if (p[k].b >= 0) {
                ck_assert_msg(p[k].b == lb + 1, "seed %u: B out of order", seed);
                lb = p[k].b;
                seen_b++;
            }
            if (p[k].a >= 0 && p[k].b >= 0 && !p[k].fuzzy) {
                ck_assert_msg(xa[p[k].a] == xb[p[k].b], "seed %u: unequal pair", seed);
                exact++;
            }
        }
        ck_assert_uint_eq(seen_a, (size_t)na);
        ck_assert_uint_eq(seen_b, (size_t)nb);
        ck_assert_msg(exact == L[0][0], "seed %u trial %d: %d pairs, LCS %d", seed, trial, exact,
                      L[0][0]);
        free(p);
        bp_ledger_free(&A);
        bp_ledger_free(&B);
        for (int i = 0; i < na; i++)
            free(sa[i]);
        for (int j = 0; j < nb; j++)
            free(sb[j]);
    }
}
END_TEST

/* Past the cost limit (streams that share little, 9000 ops each): the
 * split heuristic still gives a valid alignment, every op once, in order,
 * exact pairs of equal ops only, and finds the long common runs. */
START_TEST(t_align_large)
{
    enum { N = 9000 };
    static const char *names[] = {"aten::add.Tensor", "aten::mul.Tensor", "aten::exp",
                                  "aten::mm", "aten::neg", "aten::cos", "aten::sin"};
    unsigned seed = (unsigned)time(NULL);
    printf("t_align_large seed %u\n", seed);
    srand(seed);
    char **sa = malloc(N * sizeof *sa), **sb = malloc(N * sizeof *sb);
    int *xa = malloc(N * sizeof *xa), *xb = malloc(N * sizeof *xb);
    for (int i = 0; i < N; i++) {
        xa[i] = rand() % 7;
        /* B: A's middle third as it is, random elsewhere */
        xb[i] = i >= N / 3 && i < 2 * N / 3 ? xa[i] : rand() % 7;
        sa[i] = malloc(64);
        sb[i] = malloc(64);
        snprintf(sa[i], 64, "%s|m|1|%d", names[xa[i]], i + 2);
        snprintf(sb[i], 64, "%s|m|1|%d", names[xb[i]], i + 2);
    }
    bp_ledger_t A, B;
    ledger_of((const char *const *)sa, N, "A", &A);
    ledger_of((const char *const *)sb, N, "B", &B);
    bp_ledger_pair_t *p;
    size_t np;
    bp_error_t e = {0};
    ck_assert(bp_ledger_align(&A, &B, &p, &np, &e) == BP_OK);
    long la = -1, lb = -1;
    size_t exact = 0;
    for (size_t k = 0; k < np; k++) {
        if (p[k].a >= 0)
            ck_assert_msg(p[k].a == ++la, "seed %u: A out of order", seed);
        if (p[k].b >= 0)
            ck_assert_msg(p[k].b == ++lb, "seed %u: B out of order", seed);
        if (p[k].a >= 0 && p[k].b >= 0 && !p[k].fuzzy) {
            ck_assert_msg(xa[p[k].a] == xb[p[k].b], "seed %u: unequal pair", seed);
            exact++;
        }
    }
    ck_assert_int_eq(la, N - 1);
    ck_assert_int_eq(lb, N - 1);
    ck_assert_msg(exact >= N / 3, "seed %u: %zu exact pairs, the common third alone is %d",
                  seed, exact, N / 3);
    free(p);
    bp_ledger_free(&A);
    bp_ledger_free(&B);
    for (int i = 0; i < N; i++) {
        free(sa[i]);
        free(sb[i]);
    }
    free(sa);
    free(sb);
    free(xa);
    free(xb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ledger_diff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_identical);
    tcase_add_test(tc, t_changed_op);
    tcase_add_test(tc, t_inserted_cast);
    tcase_add_test(tc, t_decomposition_agrees);
    tcase_add_test(tc, t_decomposition_differs);
    tcase_add_test(tc, t_renamed_overload);
    tcase_add_test(tc, t_external);
    tcase_add_test(tc, t_absorbed);
    tcase_add_test(tc, t_terminal_one_sided);
    tcase_add_test(tc, t_other_hash);
    tcase_add_test(tc, t_align_lcs);
    tcase_add_test(tc, t_align_large);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
