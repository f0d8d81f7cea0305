/* Tests of report_read.c.  A report is built by hand (comparisons from
 * bp_compare on small buffers that hold every special case: a NaN payload
 * difference, +0 against -0, 1 and 2 ulp, a class change), written with
 * bp_rep_json_build, read back, and compared with the original field by
 * field: the model itself, not any rendering of it.  Then what the reader
 * must refuse, with the path or line and column it must name. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "rep.h"
#include "report.h"
#include "report_read.h"

static bp_buf_t f32s(const uint32_t *bits, size_t n)
{
    bp_buf_t b;
    bp_error_t err = {0};
    int64_t shape[2] = {2, (int64_t)n / 2};
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 2, shape, &err), BP_OK);
    memcpy(b.data, bits, n * 4);
    return b;
}

static void add_cmp(bp_report_t *rep, const char *policy, bool counts)
{
    static const uint32_t a[6] = {0x3f800000, 0x7fc00001, 0x00000000,
                                  0x40000000, 0x40400000, 0x40800000};
    static const uint32_t b[6] = {0x3f800000, 0x7fc00002, 0x80000000,
                                  0x40000001, 0x7f800000, 0x40800002};
    bp_buf_t ba = f32s(a, 6), bb = f32s(b, 6);
    bp_error_t err = {0};
    bp_result_t r = {.probe = "p", .file = "probes/p.yaml", .line = 9, .output = "y",
                     .dtype = BP_F32, .kind = BP_RES_CROSS, .a = "oracle", .b = "cpu",
                     .compared = true, .counts = counts};
    ck_assert_int_eq(bp_policy_parse(policy, &r.policy, &err), BP_OK);
    ck_assert_int_eq(bp_compare(&ba, &bb, &r.policy, NULL, &r.cmp, &err), BP_OK);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
    bp_buf_free(&ba);
    bp_buf_free(&bb);
}

static void build(bp_report_t *rep)
{
    char *argv[] = {"run", "p", "--device", "cpu,oracle", "it's"};
    bp_report_init(rep, 5, argv);
    rep->env = json_pack("{s:s, s:[{s:s}]}", "os", "Linux", "backends", "name", "cpu");
    add_cmp(rep, "ulp=1,fraction=0.5", true);
    add_cmp(rep, "exact", false);
    bp_result_t skip = {.probe = "p", .output = "y", .dtype = BP_F32, .in_run = true,
                        .run_dtype = BP_BF16, .kind = BP_RES_GOLDEN,
                        .a = "golden cpu-sleef", .b = "cpu", .counts = false,
                        .status = BP_RS_MISSING_GOLDEN, .note = "no golden"};
    bp_policy_exact(&skip.policy);
    ck_assert_ptr_nonnull(bp_report_add(rep, &skip));
    /* a tensor of a dtype bitprobe does not read (diff) */
    bp_result_t odd = {.probe = "t", .output = "", .dtype_as = "X9", .kind = BP_RES_DIFF,
                       .a = "a.safetensors", .b = "b.safetensors", .counts = true,
                       .status = BP_RS_NOT_COMPARABLE, .note = "unknown dtype X9"};
    bp_policy_exact(&odd.policy);
    ck_assert_ptr_nonnull(bp_report_add(rep, &odd));
    int32_t ints[3] = {-1, 5, INT32_MIN};
    ck_assert(bp_report_add_values(rep, "p", "n", "cpu", BP_I32, true, BP_F32, ints, 3));
    double f64[2] = {0.1, -INFINITY};
    ck_assert(bp_report_add_values(rep, "p", "d", "oracle", BP_F64, false, BP_F32, f64, 2));
    ck_assert(bp_report_note(rep, "cuda skipped: no CUDA device"));
    ck_assert(bp_report_hint(rep, "bless the missing goldens with 'bitprobe bless p'"));
    ck_assert(bp_report_hint(rep, "bless the missing goldens with 'bitprobe bless p'"));
    rep->explain = json_pack("{s:i}", "outputs", 1);
    rep->extra = json_pack("{s:{s:f}}", "timing", "total", 0.25);
}

static void same_result(const bp_result_t *x, const bp_result_t *y)
{
    char px[128], py[128];
    ck_assert_str_eq(x->probe, y->probe);
    ck_assert_str_eq(x->output, y->output);
    ck_assert_str_eq(x->a, y->a);
    ck_assert_str_eq(x->b, y->b);
    ck_assert_str_eq(bp_result_dtype(x), bp_result_dtype(y));
    ck_assert_int_eq(x->dtype_as == NULL, y->dtype_as == NULL);
    ck_assert_int_eq(x->in_run, y->in_run);
    if (x->in_run)
        ck_assert_int_eq(x->run_dtype, y->run_dtype);
    ck_assert_int_eq(x->kind, y->kind);
    bp_policy_format(&x->policy, px, sizeof px);
    bp_policy_format(&y->policy, py, sizeof py);
    ck_assert_str_eq(px, py);
    ck_assert_int_eq(x->compared, y->compared);
    ck_assert_int_eq(x->counts, y->counts);
    ck_assert_int_eq(x->line, y->line);
    ck_assert_int_eq(x->note == NULL, y->note == NULL);
    if (x->note)
        ck_assert_str_eq(x->note, y->note);
    ck_assert_int_eq(x->file == NULL, y->file == NULL);
    if (x->file)
        ck_assert_str_eq(x->file, y->file);
    const bp_cmp_t *c = &x->cmp, *d = &y->cmp;
    ck_assert_int_eq(c->ndim, d->ndim);
    for (int k = 0; k < c->ndim; k++)
        ck_assert_int_eq(c->shape[k], d->shape[k]);
    ck_assert_uint_eq(c->total, d->total);
    ck_assert_uint_eq(c->mismatched, d->mismatched);
    ck_assert_uint_eq(c->beyond_policy, d->beyond_policy);
    ck_assert_uint_eq(c->allowed, d->allowed);
    ck_assert_int_eq(c->pass, d->pass);
    ck_assert(c->max_abs == d->max_abs);
    ck_assert(c->max_rel == d->max_rel);
    ck_assert_uint_eq(c->max_ulp, d->max_ulp);
    ck_assert_uint_eq(c->max_abs_idx, d->max_abs_idx);
    ck_assert_uint_eq(c->max_rel_idx, d->max_rel_idx);
    ck_assert_uint_eq(c->max_ulp_idx, d->max_ulp_idx);
    for (int b = 0; b < BP_HIST_BINS; b++)
        ck_assert_uint_eq(c->hist[b], d->hist[b]);
    ck_assert_uint_eq(c->class_changes, d->class_changes);
    ck_assert_uint_eq(c->zero_sign_diffs, d->zero_sign_diffs);
    ck_assert_uint_eq(c->zero_sign_excused, d->zero_sign_excused);
    ck_assert_uint_eq(c->nan_payload_diffs, d->nan_payload_diffs);
    ck_assert_uint_eq(c->nfirst, d->nfirst);
    for (size_t k = 0; k < c->nfirst; k++) {
        ck_assert_uint_eq(c->first[k].index, d->first[k].index);
        ck_assert_uint_eq(c->first[k].a, d->first[k].a);
        ck_assert_uint_eq(c->first[k].b, d->first[k].b);
        ck_assert_uint_eq(c->first[k].ulp, d->first[k].ulp);
        ck_assert_int_eq(c->first[k].class_change, d->first[k].class_change);
    }
}

START_TEST(t_roundtrip)
{
    bp_report_t x, y;
    bp_error_t err = {0};
    build(&x);
    /* The cases are there: what the comparison found, written by hand. */
    const bp_cmp_t *c = &x.r[0].cmp;
    /* 1 ulp (within), +0 against -0, class change, 2 ulp (beyond) */
    ck_assert_uint_eq(c->mismatched, 4);
    ck_assert_uint_eq(c->beyond_policy, 3);
    ck_assert_uint_eq(c->allowed, 3);
    ck_assert(c->pass);
    ck_assert_uint_eq(c->zero_sign_diffs, 1);
    ck_assert_uint_eq(c->hist[BP_HIST_ZERO], 1);
    ck_assert_uint_eq(c->nan_payload_diffs, 1);
    ck_assert_uint_eq(c->max_ulp, UINT64_MAX);
    ck_assert(isinf(c->max_abs));
    json_t *doc = bp_rep_json_build(&x);
    ck_assert_ptr_nonnull(doc);
    ck_assert_int_eq(bp_report_from_json(doc, "r.json", &y, &err), BP_OK);
    ck_assert_str_eq(y.command, x.command);
    ck_assert_str_eq(y.command, "bitprobe run p --device cpu,oracle 'it'\\''s'");
    ck_assert_uint_eq(y.n, x.n);
    for (size_t i = 0; i < x.n; i++)
        same_result(&x.r[i], &y.r[i]);
    ck_assert_uint_eq(y.nv, x.nv);
    for (size_t i = 0; i < x.nv; i++) {
        ck_assert_str_eq(y.v[i].probe, x.v[i].probe);
        ck_assert_str_eq(y.v[i].output, x.v[i].output);
        ck_assert_str_eq(y.v[i].side, x.v[i].side);
        ck_assert_int_eq(y.v[i].dtype, x.v[i].dtype);
        ck_assert_int_eq(y.v[i].in_run, x.v[i].in_run);
        if (x.v[i].in_run)
            ck_assert_int_eq(y.v[i].run_dtype, x.v[i].run_dtype);
        ck_assert_uint_eq(y.v[i].n, x.v[i].n);
        for (size_t k = 0; k < x.v[i].n; k++)
            ck_assert_uint_eq(y.v[i].bits[k], x.v[i].bits[k]);
    }
    ck_assert_uint_eq(y.v[0].bits[2], 0x80000000u);
    ck_assert_uint_eq(y.nnotes, 1);
    ck_assert_str_eq(y.notes[0], x.notes[0]);
    ck_assert_uint_eq(x.nhints, 1); /* said twice, held once */
    ck_assert_uint_eq(y.nhints, 1);
    ck_assert_str_eq(y.hints[0], x.hints[0]);
    /* the titles name the run where the output's dtype is another */
    char title[256];
    bp_result_title(&y.r[2], title, sizeof title);
    ck_assert_str_eq(title, "p y fp32 (bf16 run): cpu vs golden cpu-sleef");
    bp_result_title(&y.r[3], title, sizeof title);
    ck_assert_str_eq(title, "t X9: b.safetensors vs a.safetensors");
    ck_assert(json_equal(y.env, x.env));
    ck_assert(json_equal(y.explain, x.explain));
    ck_assert(json_equal(y.extra, x.extra));
    /* And written again, the same document. */
    json_t *again = bp_rep_json_build(&y);
    ck_assert(json_equal(again, doc));
    json_decref(again);
    json_decref(doc);
    bp_report_free(&x);
    bp_report_free(&y);
}
END_TEST

/* A manifest (run --save): "files" dropped, "backends" moved under env. */
START_TEST(t_manifest)
{
    const char *text = "{\"tool\": \"bitprobe\", \"env\": {\"os\": \"Linux\"}, \"results\": [],"
                       " \"files\": [\"p/cpu.safetensors.gz\"], \"backends\": [{\"name\": \"cpu\"}]}";
    bp_report_t rep;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_report_parse(text, strlen(text), "m.json", &rep, &err), BP_OK);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(rep.env, "backends"), 0), "name")),
                     "cpu");
    ck_assert_ptr_null(rep.extra);
    ck_assert_ptr_null(rep.command);
    bp_report_free(&rep);
}
END_TEST

static void refused(const char *text, const char *want)
{
    bp_report_t rep;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_report_parse(text, strlen(text), "r.json", &rep, &err), BP_EINPUT);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "'%s' does not start with '%s'",
                  err.msg, want);
    ck_assert_uint_eq(rep.n, 0);
    ck_assert_ptr_null(rep.r);
}

START_TEST(t_refused)
{
    refused("{\n\"tool\": \"bitprobe\",\n\"results\": [}", "r.json:3:13: invalid JSON: ");
    refused("[1]", "r.json: not a JSON report (it does not begin with '{')");
    refused(" \n\t", "r.json: empty, not a JSON report");
    refused("{\"tool\": 1, \"results\": []}", "r.json: not a bitprobe report");
    refused("{\"tool\": \"bitprobe\", \"results\": {}}",
            "r.json: results: expected an array of results, found an object");
    refused("{\"tool\": \"bitprobe\", \"results\": [], \"env\": 3}",
            "r.json: env: expected an object, found an integer");
    /* The second result is bad: the first, already added, is freed too. */
    refused("{\"tool\": \"bitprobe\", \"results\": [{\"probe\": \"p\", \"output\": \"\","
            " \"dtype\": \"fp32\", \"kind\": \"diff\", \"a\": \"A\", \"b\": \"B\","
            " \"policy\": \"exact\", \"compared\": false, \"counts\": true}, {\"probe\": 1}]}",
            "r.json: results[1].probe: expected a string, found an integer");
    refused("{\"tool\": \"bitprobe\", \"results\": [{\"probe\": \"p\", \"output\": \"\","
            " \"dtype\": \"fp32\", \"kind\": \"diff\", \"a\": \"A\", \"b\": \"B\","
            " \"policy\": \"exact\", \"compared\": false, \"counts\": true, \"line\": -3}]}",
            "r.json: results[0].line: negative count (-3)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report_read");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, t_roundtrip);
    tcase_add_test(tc, t_manifest);
    tcase_add_test(tc, t_refused);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
