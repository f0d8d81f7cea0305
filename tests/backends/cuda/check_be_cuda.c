/* Tests of the CUDA backend (be_cuda.c, be_cuda_ops.c, kernels/).  Exits
 * 77 (SKIP) where the machine has no GPU (tests/gpu_rule.h).  Expected
 * values are independent of the code under test: hand-derived bit
 * patterns, the host's IEEE arithmetic (C float operations and fmaf are
 * correctly rounded), src/core/dtype.c's conversions, published Philox known
 * answers, and, for the transcendental functions CUDA does not round
 * correctly, double-precision libm with CUDA's documented ulp bounds.
 *
 * Environment: BP_GPU=N picks the device; BP_SEED=N the random seed. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gpu_rule.h"
#include "be_cuda_harness.h"

bp_backend_t *tb_be;
static uint64_t rng_state;

uint64_t tb_rand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A float with a random sign, mantissa and exponent in [lo, hi). */
float tb_rand_float(int lo, int hi)
{
    uint64_t r = tb_rand();
    float m = 1.0f + (float)(r & 0x7fffff) * 0x1p-23f;
    int e = lo + (int)((r >> 23) % (uint64_t)(hi - lo));
    float v = ldexpf(m, e);
    return (r >> 40) & 1 ? -v : v;
}

void tb_check(bp_status st, const bp_error_t *err, const char *what)
{
    ck_assert_msg(st == BP_OK, "%s: %s", what, err->msg);
}

void tb_make(bp_buf_t *b, bp_dtype_t dt, int ndim, const int64_t *shape)
{
    bp_error_t err = {0};
    memset(b, 0, sizeof *b);
    tb_check(bp_buf_alloc(b, dt, ndim, shape, &err), &err, "bp_buf_alloc");
    tb_check(tb_be->dev_alloc(tb_be, b, &err), &err, "dev_alloc");
}

void tb_make1(bp_buf_t *b, bp_dtype_t dt, int64_t n)
{
    tb_make(b, dt, 1, &n);
}

void tb_upload(bp_buf_t *b)
{
    bp_error_t err = {0};
    tb_check(tb_be->upload(tb_be, b, &err), &err, "upload");
}

void tb_download(bp_buf_t *b)
{
    bp_error_t err = {0};
    tb_check(tb_be->download(tb_be, b, &err), &err, "download");
}

void tb_drop(bp_buf_t *b)
{
    tb_be->dev_free(tb_be, b);
    bp_buf_free(b);
}

bp_op_t tb_op(bp_op_kind_t kind)
{
    static char name[] = "t";
    bp_op_t op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.out = name;
    op.s_step = 1;
    return op;
}

void tb_arg_scalar(bp_arg_t *arg, double v)
{
    arg->kind = BP_ARG_SCALAR;
    arg->value = v;
}

bp_status tb_try(bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                 const bp_buf_t *const *inputs, int ninputs, bp_buf_t *out,
                 bp_error_t *err)
{
    if (a && op->a.kind == BP_ARG_NONE)
        op->a.kind = BP_ARG_BUF;
    if (b && op->b.kind == BP_ARG_NONE)
        op->b.kind = BP_ARG_BUF;
    bp_exec_t x = {.op = op, .a = a, .b = b, .inputs = inputs, .ninputs = ninputs, .out = out};
    bp_status st = tb_be->enter ? tb_be->enter(tb_be, err) : BP_OK;
    if (!st)
        st = tb_be->op[op->kind](tb_be, &x, err);
    if (!st)
        st = tb_be->download(tb_be, out, err);
    return st;
}

void tb_exec(bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
             bp_buf_t *out)
{
    bp_error_t err = {0};
    tb_check(tb_try(op, a, b, NULL, 0, out, &err), &err, "op");
}

uint64_t tb_bits_of(bp_dtype_t dt, float v)
{
    switch (dt) {
    case BP_BF16: return bp_f32_to_bf16(v);
    case BP_F16: return bp_f32_to_f16(v);
    case BP_F64: return bp_f64_bits((double)v);
    default: return bp_f32_bits(v);
    }
}

float tb_round(bp_dtype_t dt, float v)
{
    switch (dt) {
    case BP_BF16: return bp_bf16_to_f32(bp_f32_to_bf16(v));
    case BP_F16: return bp_f16_to_f32(bp_f32_to_f16(v));
    default: return v;
    }
}

void tb_expect_bits(const bp_buf_t *got, size_t i, uint64_t want,
                    const char *what)
{
    uint64_t g = bp_buf_bits(got, i);
    ck_assert_msg(g == want,
                  "%s [%zu] (%s): got %a (0x%0*" PRIx64 "), want %a (0x%0*"
                  PRIx64 ")", what, i, bp_dtype_name(got->dtype),
                  bp_dtype_bits_to_double(got->dtype, g),
                  (int)bp_dtype_info(got->dtype)->size * 2, g,
                  bp_dtype_bits_to_double(got->dtype, want),
                  (int)bp_dtype_info(got->dtype)->size * 2, want);
}

/* Ulp distance of element i from the f32 rounding of a double reference. */
uint64_t tb_ulps(const bp_buf_t *got, size_t i, double ref)
{
    uint64_t want = bp_dtype_bits_from_double(got->dtype, ref);
    return bp_ulp_distance(got->dtype, bp_buf_bits(got, i), want);
}

/* ---- suites live in check_be_cuda_ops.c and check_be_cuda_data.c ---- */

static bool seed_from_env(void)
{
    const char *s = getenv("BP_SEED");
    rng_state = s ? strtoull(s, NULL, 0) : 0x5eedb17b0beull;
    if (!rng_state)
        rng_state = 1;
    return s != NULL;
}

int main(void)
{
    bp_error_t err = {0};
    json_t *env = bp_be_cuda_env(&err);
    if (!env)
        return bp_test_gpu_skip("check_be_cuda", err.msg);
    json_decref(env);
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    const char *g = getenv("BP_GPU");
    if (g)
        o.gpu = atoi(g);
    bp_status st = bp_be_cuda_open(&o, &tb_be, &err);
    if (st) {
        /* A device is present, so failing to open it is a failure. */
        fprintf(stderr, "bp_be_cuda_open (gpu %d): %s\n", o.gpu, err.msg);
        return EXIT_FAILURE;
    }
    bool given = seed_from_env();
    printf("random seed %#" PRIx64 "%s\n", rng_state,
           given ? " (BP_SEED)" : " (default; set BP_SEED to change)");
    char *fp = json_dumps(tb_be->fingerprint, JSON_SORT_KEYS);
    printf("backend %s: %s\n", tb_be->key, fp ? fp : "?");
    free(fp);

    Suite *s = suite_create("be_cuda");
    suite_add_tcase(s, tb_tcase_backend());
    suite_add_tcase(s, tb_tcase_seed());
    suite_add_tcase(s, tb_tcase_elementwise());
    suite_add_tcase(s, tb_tcase_data());
    SRunner *r = srunner_create(s);
    /* A CUDA context does not survive fork(): run in this process. */
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    bp_backend_close(tb_be);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
