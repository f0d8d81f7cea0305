/* Tests of the consensus among saved runs (consensus.h), on bundles
 * written here: five hosts' runs of two probes, one run with a changed
 * bit, one with a tensor missing, one of two GPUs ("@0", "@1" keys), and
 * members that split without a majority.  What each group must hold is
 * decided by which bundle this test altered, not by the code under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "consensus.h"
#include "run_consensus.h"
#include "st.h"

static char root[256];

static void tensor(bp_st_file_t *f, const char *name, int n, float base, int flip_at)
{
    bp_buf_t b;
    int64_t shape[1] = {n};
    bp_error_t err = {0};
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 1, shape, &err), BP_OK);
    for (int i = 0; i < n; i++)
        ((float *)b.data)[i] = base + (float)i;
    if (flip_at >= 0)
        ((uint32_t *)b.data)[flip_at] ^= 1u;
    ck_assert_int_eq(bp_st_add(f, name, &b, &err), BP_OK);
    bp_buf_free(&b);
}

/* A bundle `name` with probe p1 (tensors y.fp32, z.fp32) and p2 (w.fp32)
 * under each key in keys; flip: the element of p1/y flipped (-1: none);
 * drop_w: no p2. */
static void bundle(const char *name, const char *const *keys, int nkeys, int flip,
                   bool drop_w, const char *gpu)
{
    char dir[512], rel[256], fp[256];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    bp_error_t err = {0};
    json_t *files = json_array();
    snprintf(fp, sizeof fp, "{\"backend\": {\"gpu\": \"%s\", \"driver\": \"13.0\", "
                            "\"runtime\": \"13.0\", \"cublas\": \"13.0.1\"}}", gpu);
    for (int k = 0; k < nkeys; k++) {
        bp_st_file_t f;
        bp_st_init(&f);
        tensor(&f, "y.fp32", 64, 1.0f, k == 0 ? flip : -1);
        tensor(&f, "z.fp32", 16, 100.0f, -1);
        ck_assert_int_eq(bp_st_set_meta(&f, "fingerprint", fp, &err), BP_OK);
        ck_assert_int_eq(bp_bundle_save_probe(dir, "p1", keys[k], &f, &err), BP_OK);
        snprintf(rel, sizeof rel, "p1/%s.safetensors.gz", keys[k]);
        json_array_append_new(files, json_string(rel));
        bp_st_free(&f);
        if (drop_w)
            continue;
        bp_st_init(&f);
        tensor(&f, "w.fp32", 8, -3.0f, -1);
        ck_assert_int_eq(bp_bundle_save_probe(dir, "p2", keys[k], &f, &err), BP_OK);
        snprintf(rel, sizeof rel, "p2/%s.safetensors.gz", keys[k]);
        json_array_append_new(files, json_string(rel));
        bp_st_free(&f);
    }
    json_t *m = json_pack("{s:s, s:o}", "tool", "bitprobe", "files", files);
    ck_assert_int_eq(bp_bundle_save_manifest(dir, m, &err), BP_OK);
    json_decref(m);
}

static bp_cons_t *load(const char *const *names, int n)
{
    bp_cons_t *c = bp_cons_new();
    bp_error_t err = {0};
    char dir[512];
    for (int i = 0; i < n; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        ck_assert_msg(bp_cons_add_path(c, dir, names[i], NULL, &err) == BP_OK, "%s", err.msg);
    }
    bp_cons_settle(c);
    return c;
}

static void setup(void)
{
    snprintf(root, sizeof root, "%s/bp-consensus-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                            : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(root));
    const char *one[] = {"cuda-sm90"}, *two[] = {"cuda-sm90@0", "cuda-sm90@1"};
    bundle("a", one, 1, -1, false, "H100");
    bundle("b", one, 1, -1, false, "H100");
    bundle("c", one, 1, 5, false, "H100 (other driver)"); /* y[5] flipped */
    bundle("d", one, 1, -1, true, "H100");                /* no p2 */
    bundle("e", one, 1, -1, false, "H100");
    bundle("g", two, 2, 7, false, "H100");                /* GPU 0 flips y[7] */
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_majority_and_outlier)
{
    const char *names[] = {"a", "b", "c", "d", "e"};
    bp_cons_t *c = load(names, 5);
    ck_assert_int_eq(bp_cons_nmembers(c), 5);
    ck_assert_uint_eq(bp_cons_nitems(c), 3);
    const bp_cons_item_t *y = bp_cons_find(c, "p1/cuda-sm90/y.fp32");
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->present, 5);
    ck_assert_int_eq(y->ngroups, 2);
    ck_assert_int_eq(y->majority, 0);
    ck_assert_int_eq(y->groups[0].n, 4);
    ck_assert_int_eq(y->groups[1].n, 1);
    ck_assert_str_eq(bp_cons_member_at(c, y->groups[1].members[0])->label, "c");
    ck_assert_int_eq(bp_cons_group_of(y, 2), 1);
    /* z and w agree; w is missing from d */
    const bp_cons_item_t *z = bp_cons_find(c, "p1/cuda-sm90/z.fp32"),
                         *w = bp_cons_find(c, "p2/cuda-sm90/w.fp32");
    ck_assert_int_eq(z->ngroups, 1);
    ck_assert_int_eq(w->ngroups, 1);
    ck_assert_int_eq(w->present, 4);
    ck_assert_int_eq(bp_cons_group_of(w, 3), -1);
    bp_cons_tally_t t;
    bp_cons_tally(c, &t);
    ck_assert_uint_eq(t.items, 3);
    ck_assert_uint_eq(t.unanimous, 1);
    ck_assert_uint_eq(t.outliers, 1);
    ck_assert_uint_eq(t.split, 0);
    ck_assert_uint_eq(t.partial, 1);
    ck_assert_uint_eq(bp_cons_outlier_count(c, 2), 1);
    ck_assert_uint_eq(bp_cons_outlier_count(c, 0), 0);
    /* what each ran on, from the containers' fingerprints */
    ck_assert_str_eq(bp_cons_about(c, 2, y->name),
                     "H100 (other driver), CUDA driver 13.0, runtime 13.0, cuBLAS 13.0.1");
    /* JSON: only the items that are not unanimous in every run */
    json_t *j = bp_cons_json(c, false);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 2);
    json_t *it = json_array_get(json_object_get(j, "items"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(it, "item")), "p1/cuda-sm90/y.fp32");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(it, "outliers"), 0)), "c");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "tally"),
                                                        "outliers")), 1);
    json_decref(j);
    bp_cons_free(c);
}
END_TEST

START_TEST(test_instances_and_split)
{
    /* g holds two GPUs, each a member of its own: with a and c, y falls
     * into three groups ({a, g@1}; c, which flips y[5]; g@0, which flips
     * y[7]): two of four is no majority */
    const char *names[] = {"a", "c", "g"};
    bp_cons_t *c = load(names, 3);
    ck_assert_int_eq(bp_cons_nmembers(c), 4);
    ck_assert_str_eq(bp_cons_member_at(c, 2)->label, "g@0");
    ck_assert_str_eq(bp_cons_member_at(c, 2)->inst, "0");
    ck_assert_str_eq(bp_cons_member_at(c, 3)->label, "g@1");
    const bp_cons_item_t *y = bp_cons_find(c, "p1/cuda-sm90/y.fp32");
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->present, 4);
    ck_assert_int_eq(y->ngroups, 3);
    ck_assert_int_eq(y->majority, -1); /* 2 of 4 is no strict majority */
    ck_assert_int_eq(y->groups[0].n, 2);
    ck_assert_int_eq(y->groups[0].members[0], 0); /* a and g@1 */
    ck_assert_int_eq(y->groups[0].members[1], 3);
    bp_cons_tally_t t;
    bp_cons_tally(c, &t);
    ck_assert_uint_eq(t.split, 1);
    ck_assert_uint_eq(t.outliers, 0);
    ck_assert_uint_eq(bp_cons_outlier_count(c, 1), 0); /* no majority: nobody is odd */
    bp_cons_free(c);
    /* with b and e as well, a majority of four of six */
    const char *more[] = {"a", "b", "c", "e", "g"};
    c = load(more, 5);
    y = bp_cons_find(c, "p1/cuda-sm90/y.fp32");
    ck_assert_int_eq(y->majority, 0);
    ck_assert_int_eq(y->groups[0].n, 4);
    ck_assert_uint_eq(bp_cons_outlier_count(c, 2), 1); /* c */
    ck_assert_uint_eq(bp_cons_outlier_count(c, 4), 1); /* g@0 */
    ck_assert_uint_eq(bp_cons_outlier_count(c, 5), 0); /* g@1 */
    bp_cons_free(c);
}
END_TEST

START_TEST(test_memory_members)
{
    /* members given buffers directly (run --gpu all), and the rules on
     * what an item holds */
    bp_cons_t *c = bp_cons_new();
    bp_error_t err = {0};
    int m0 = bp_cons_member(c, "cuda:0", NULL, "H100"), m1 = bp_cons_member(c, "cuda:1", NULL,
                                                                            "H100");
    ck_assert_int_eq(bp_cons_member(c, "cuda:0", NULL, NULL), m0);
    bp_buf_t a, b;
    int64_t s4[1] = {4}, s2[2] = {2, 2};
    ck_assert_int_eq(bp_buf_alloc(&a, BP_F32, 1, s4, &err), BP_OK);
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 2, s2, &err), BP_OK);
    /* same bytes, other shape: other bits of the item, and "mixed" */
    ck_assert_int_eq(bp_cons_add(c, "x", m0, &a, &err), BP_OK);
    ck_assert_int_eq(bp_cons_add(c, "x", m1, &b, &err), BP_OK);
    ck_assert_int_eq(bp_cons_add(c, "x", m1, &b, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "'x' is given twice"));
    bp_cons_settle(c);
    const bp_cons_item_t *x = bp_cons_find(c, "x");
    ck_assert(x->mixed);
    ck_assert_int_eq(x->ngroups, 2);
    ck_assert_str_eq(bp_cons_about(c, m1, "x"), "H100");
    ck_assert_ptr_null(bp_cons_find(c, "nope"));
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_cons_free(c);
}
END_TEST

START_TEST(test_bad_input)
{
    bp_cons_t *c = bp_cons_new();
    bp_error_t err = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/none", root);
    ck_assert_int_eq(bp_cons_add_path(c, dir, "none", NULL, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot read"));
    /* the same bundle twice under one label: each tensor given twice */
    snprintf(dir, sizeof dir, "%s/a", root);
    ck_assert_int_eq(bp_cons_add_path(c, dir, "a", NULL, &err), BP_OK);
    ck_assert_int_eq(bp_cons_add_path(c, dir, "a", NULL, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "is given twice"));
    bp_cons_free(c);
}
END_TEST


/* run --gpu all: four "GPUs" (backends opened as cuda:K) of one kind and
 * a CPU, one output; the third GPU flips a bit.  The CPU is no member. */
START_TEST(test_run_gpus)
{
    bp_backend_t be[5];
    bp_buf_t out[5], *bufs[5];
    bp_error_t err = {0};
    int64_t shape[1] = {8};
    memset(be, 0, sizeof be);
    for (int k = 0; k < 5; k++) {
        be[k].name = k == 0 ? "cpu" : be[k].inst;
        if (k)
            snprintf(be[k].inst, sizeof be[k].inst, "cuda:%d", k - 1);
        snprintf(be[k].key, sizeof be[k].key, "%s", k ? "cuda-sm90" : "cpu-sleef");
        ck_assert_int_eq(bp_buf_alloc(&out[k], BP_F32, 1, shape, &err), BP_OK);
        for (int i = 0; i < 8; i++)
            ((float *)out[k].data)[i] = (float)i / 3.0f;
        bufs[k] = &out[k];
    }
    ((uint32_t *)out[3].data)[5] ^= 1u; /* cuda:2 */
    bp_backend_t *bes[5] = {&be[0], &be[1], &be[2], &be[3], &be[4]};
    bp_output_t o = {.name = (char *)"y", .buf = 0};
    bp_probe_t p = {.name = (char *)"probe", .outputs = &o, .noutputs = 1};
    bp_report_t rep;
    char *argv[] = {(char *)"run"};
    bp_report_init(&rep, 1, argv);
    bp_run_cons_t t;
    memset(&t, 0, sizeof t);
    bp_cmp_opts_t co;
    bp_cmp_opts_init(&co);
    ck_assert_int_eq(bp_run_consensus(&t, &p, 0, BP_F32, bes, bufs, 5, &co, &rep, &err), BP_OK);
    /* one result: the majority's first GPU against the odd one, drift */
    ck_assert_uint_eq(rep.n, 1);
    ck_assert_str_eq(rep.r[0].a, "cuda:0");
    ck_assert_str_eq(rep.r[0].b, "cuda:2");
    ck_assert(rep.r[0].counts);
    ck_assert_uint_eq(rep.r[0].cmp.mismatched, 1);
    ck_assert_uint_eq(rep.r[0].cmp.first[0].index, 5);
    ck_assert_uint_eq(bp_report_failures(&rep), 1);
    ck_assert_uint_eq(rep.nnotes, 1);
    ck_assert_str_eq(rep.notes[0], "consensus probe y fp32: cuda:0, cuda:1 and cuda:3 agree "
                                   "(3 of 4 GPUs); odd one out: cuda:2");
    ck_assert_uint_eq(t.odd[3], 1);
    /* another kind of GPU may differ without drift, and is still named */
    snprintf(be[3].key, sizeof be[3].key, "cuda-sm80");
    ck_assert_int_eq(bp_run_consensus(&t, &p, 0, BP_F32, bes, bufs, 5, &co, &rep, &err), BP_OK);
    ck_assert_uint_eq(rep.n, 2);
    ck_assert(!rep.r[1].counts);
    /* all agree: nothing but the tally */
    ((uint32_t *)out[3].data)[5] ^= 1u;
    ck_assert_int_eq(bp_run_consensus(&t, &p, 0, BP_F32, bes, bufs, 5, &co, &rep, &err), BP_OK);
    ck_assert_uint_eq(rep.n, 2);
    bp_run_consensus_note(&t, bes, 5, &rep);
    ck_assert_str_eq(rep.notes[rep.nnotes - 1], "consensus of 4 GPUs: 2 of 3 outputs differ; "
                                                "odd ones out: cuda:2 in 2");
    /* two against two: no majority, nobody odd, each other group named */
    memset(&t, 0, sizeof t);
    ((uint32_t *)out[1].data)[0] ^= 1u;
    ((uint32_t *)out[2].data)[0] ^= 1u;
    ck_assert_int_eq(bp_run_consensus(&t, &p, 0, BP_F32, bes, bufs, 5, &co, &rep, &err), BP_OK);
    ck_assert_uint_eq(t.split, 1);
    ck_assert_uint_eq(t.odd[1] + t.odd[2] + t.odd[3] + t.odd[4], 0);
    ck_assert_str_eq(rep.notes[rep.nnotes - 1], "consensus probe y fp32: no majority among 4 "
                     "GPUs: cuda:2, cuda:3 in 2 groups (the largest: cuda:0 and cuda:1)");
    /* one GPU: no consensus */
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(bp_run_consensus(&t, &p, 0, BP_F32, bes, bufs, 2, &co, &rep, &err), BP_OK);
    ck_assert_uint_eq(t.outputs, 0);
    bp_report_free(&rep);
    for (int k = 0; k < 5; k++)
        bp_buf_free(&out[k]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("consensus");
    TCase *tc = tcase_create("consensus");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_majority_and_outlier);
    tcase_add_test(tc, test_instances_and_split);
    tcase_add_test(tc, test_memory_members);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_run_gpus);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
