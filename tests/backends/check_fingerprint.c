/* fingerprint: the verdicts for the CPU and the oracle, derived from their
 * documented formulations (be_cpu_arith.c: true division, arange from a
 * double base per 8-lane register with fused lanes; dtype.h: any NaN to
 * bf16 is 0x7fff; SLEEF u10: at most 1 ulp; the oracle: correctly rounded
 * everything), and a CPU backend bent on purpose (reciprocal division,
 * flushed subnormal products, unfused float arange, TF32 matmul inputs,
 * NaN payloads kept) to show that every classifier can tell. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "fingerprint.h"

static const bp_fp_item_t *item(const bp_fp_item_t *it, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(it[i].key, key) == 0)
            return &it[i];
    ck_abort_msg("no item %s", key);
    return NULL;
}

static void want(const bp_fp_item_t *it, size_t n, const char *key, const char *verdict)
{
    const bp_fp_item_t *x = item(it, n, key);
    ck_assert_msg(strcmp(x->verdict, verdict) == 0, "%s: %s, expected %s (%s)", key,
                  x->verdict, verdict, x->evidence);
}

static void run_items(bp_backend_t *be, bp_fp_item_t *it, size_t *n)
{
    bp_error_t err = {0};
    ck_assert_msg(bp_fingerprint_run(be, it, n, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_eq(*n, 13);
}

START_TEST(t_cpu)
{
    bp_backend_t *be;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("cpu", NULL, &be, &err) == BP_OK);
    bp_fp_item_t it[BP_FP_MAX_ITEMS];
    size_t n;
    run_items(be, it, &n);
    want(it, n, "div_scalar", "true");
    want(it, n, "div_tensor", "true");
    want(it, n, "fma", "on"); /* n = 4 < 16: the scalar tail, fma in double */
    want(it, n, "subnormals", "kept");
    want(it, n, "matmul_fp32", "fp32");
    want(it, n, "matmul_bf16", "fp32-accumulate");
    want(it, n, "nan_bf16", "canonical-7fff");
    want(it, n, "arange", "aten-cpu");
    /* the three formulations over arange(0, 64, 0.1), counted in exact
     * rational arithmetic outside C: float 478, double 499 of 640 */
    ck_assert_msg(strstr(item(it, n, "arange")->evidence,
                         "matches float 478, double 499, ATen CPU lanes 640 of 640"),
                  "%s", item(it, n, "arange")->evidence);
    static const char *const fns[] = {"sin", "cos", "exp", "log", "pow"};
    for (int i = 0; i < 5; i++) {
        const char *v = item(it, n, fns[i])->verdict;
        ck_assert_msg(!strcmp(v, "correctly-rounded") || !strcmp(v, "1-ulp"), "%s: %s",
                      fns[i], v);
    }
    /* 9 / 10 is where true division and the reciprocal part */
    ck_assert(strstr(item(it, n, "div_scalar")->evidence,
                     "9 / 10 -> 0x3f666666 (true 0x3f666666, 9 * fl(1/10 = 0x3dcccccd) "
                     "0x3f666667)"));
    bp_backend_close(be);
}
END_TEST

START_TEST(t_oracle)
{
    bp_backend_t *be;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("oracle", NULL, &be, &err) == BP_OK);
    bp_fp_item_t it[BP_FP_MAX_ITEMS];
    size_t n;
    run_items(be, it, &n);
    want(it, n, "div_scalar", "true");
    want(it, n, "div_tensor", "true");
    want(it, n, "fma", "on");
    want(it, n, "subnormals", "kept");
    want(it, n, "matmul_fp32", "fp32");
    want(it, n, "matmul_bf16", "fp32-accumulate");
    want(it, n, "nan_bf16", "canonical-7fff");
    /* 0.1 * i rounded once from the exact value equals the double product
     * rounded to float for every i < 640 (checked in rationals) */
    want(it, n, "arange", "double");
    static const char *const fns[] = {"sin", "cos", "exp", "log", "pow"};
    for (int i = 0; i < 5; i++)
        want(it, n, fns[i], "correctly-rounded");
    json_t *j;
    ck_assert(bp_fingerprint_probe(be, &j, &err) == BP_OK);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "fma"), "verdict")),
                     "on");
    ck_assert_uint_eq(json_object_size(j), 13);
    json_decref(j);
    bp_backend_close(be);
}
END_TEST

/* ---- a backend that does what other devices do ---- */

static bp_op_fn cpu_div, cpu_mul, cpu_cast;

static bp_status recip_div(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_op_t op = *x->op;
    op.form = BP_FORM_RECIPROCAL;
    bp_exec_t y = *x;
    y.op = &op;
    return cpu_div(be, &y, err);
}

static bp_status ftz_mul(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = cpu_mul(be, x, err);
    for (size_t i = 0; !st && x->out->dtype == BP_F32 && i < x->out->numel; i++) {
        uint64_t b = bp_buf_bits(x->out, i);
        if ((b & 0x7f800000u) == 0)
            bp_dtype_store_bits(BP_F32, x->out->data, i, b & 0x80000000u);
    }
    return st;
}

static bp_status unfused_arange(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    (void)err;
    float s = (float)x->op->start, d = (float)x->op->step;
    for (size_t i = 0; i < x->out->numel; i++) {
        float p = d * (float)i;
        bp_buf_set(x->out, i, s + p);
    }
    return BP_OK;
}

static float tf32(float v)
{
    uint32_t b = bp_f32_bits(v);
    b += 0xfffu + ((b >> 13) & 1u);
    return bp_f32_from_bits(b & ~0x1fffu);
}

static bp_status tf32_matmul(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    (void)be;
    (void)err;
    size_t m = (size_t)x->a->shape[0], k = (size_t)x->a->shape[1], n = (size_t)x->b->shape[1];
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = 0;
            for (size_t p = 0; p < k; p++) {
                float t = tf32((float)bp_buf_get(x->a, i * k + p)) *
                          tf32((float)bp_buf_get(x->b, p * n + j));
                acc += t;
            }
            bp_buf_set(x->out, i * n + j, acc);
        }
    return BP_OK;
}

static bp_status payload_cast(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = cpu_cast(be, x, err);
    for (size_t i = 0; !st && x->out->dtype == BP_BF16 && x->a->dtype == BP_F32 &&
                       i < x->out->numel; i++) {
        uint64_t b = bp_buf_bits(x->a, i);
        if ((b & 0x7fffffffu) > 0x7f800000u)
            bp_dtype_store_bits(BP_BF16, x->out->data, i, (b >> 16) | 0x40u);
    }
    return st;
}

START_TEST(t_bent)
{
    bp_backend_t *cpu, bent;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    bent = *cpu;
    bent.name = "bent";
    cpu_div = cpu->op[BP_OP_DIV];
    cpu_mul = cpu->op[BP_OP_MUL];
    cpu_cast = cpu->op[BP_OP_CAST];
    bp_op_fn ops[BP_OP_COUNT];
    memcpy(ops, cpu->op, sizeof ops);
    ops[BP_OP_DIV] = recip_div;
    ops[BP_OP_MUL] = ftz_mul;
    ops[BP_OP_ARANGE] = unfused_arange;
    ops[BP_OP_MATMUL] = tf32_matmul;
    ops[BP_OP_CAST] = payload_cast;
    bent.op = ops;
    bp_fp_item_t it[BP_FP_MAX_ITEMS];
    size_t n;
    run_items(&bent, it, &n);
    want(it, n, "div_scalar", "reciprocal");
    want(it, n, "div_tensor", "reciprocal");
    want(it, n, "subnormals", "ftz");
    want(it, n, "fma", "off");
    want(it, n, "arange", "float"); /* start 0: fl(0.1f * i) either way */
    want(it, n, "matmul_fp32", "tf32");
    /* a float accumulator: no loss on 1024 ones */
    want(it, n, "matmul_bf16", "fp32-accumulate");
    want(it, n, "nan_bf16", "payload-kept");
    ck_assert(strstr(item(it, n, "nan_bf16")->evidence,
                     "0x7fc12345 -> 0x7fc1, 0xffa00001 -> 0xffe0, 0x7f800001 -> 0x7fc0"));
    bp_backend_close(cpu);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fingerprint");
    TCase *tc = tcase_create("fingerprint");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_cpu);
    tcase_add_test(tc, t_oracle);
    tcase_add_test(tc, t_bent);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
