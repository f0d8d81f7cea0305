/* Tests of the op table (op_list.h through op.h/op.c) and of the backends'
 * op tables keyed by it: every backend fills every op; an op a backend
 * declares unsupported is refused by name before anything computes; the
 * per-op facts read back as op_list.h states them; bp_op_reads; the
 * loader's key lists and unknown-op message come from the table; the
 * nearest-name suggestions.
 *
 * Expected values are written by hand from op_list.h's lines and from
 * PyTorch's documented behaviour (torch.div is a float function, torch.sum
 * of integers gives int64), not computed by the code under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "op.h"
#include "probe.h"
#include "probe_build.h"
#include "suggest.h"

/* ---- the table itself ---------------------------------------------------- */

START_TEST(t_names)
{
    for (int k = 0; k < BP_OP_COUNT; k++) {
        const bp_op_info_t *in = bp_op_info((bp_op_kind_t)k);
        ck_assert_ptr_nonnull(in);
        ck_assert_msg(in->name && in->name[0], "op %d has no name", k);
        ck_assert_msg(in->torch && in->torch[0], "op %s says nothing", in->name);
        bp_op_kind_t back;
        ck_assert(bp_op_lookup(in->name, &back) && back == (bp_op_kind_t)k);
        for (int j = 0; j < k; j++)
            ck_assert_msg(strcmp(in->name, bp_op_name((bp_op_kind_t)j)) != 0,
                          "op name %s twice", in->name);
        /* what must be present is among what it takes */
        ck_assert_msg((in->required & ~in->keys) == 0, "%s", in->name);
        ck_assert_msg(!((in->flags & BP_OPF_FLOAT_FN) && (in->flags & BP_OPF_INT)),
                      "%s: a float function computes no integers", in->name);
        ck_assert_msg(!(in->forms & BP_FM(DEFAULT)), "%s lists default", in->name);
        /* gelu's formulation is its `approximate` key, as in PyTorch */
        ck_assert(bp_op_takes((bp_op_kind_t)k, BP_KEY_FORMULATION) ==
                  (in->forms != 0 && !bp_op_takes((bp_op_kind_t)k, BP_KEY_APPROXIMATE)));
        ck_assert(bp_op_takes((bp_op_kind_t)k, BP_KEY_DTYPE));
    }
    ck_assert_ptr_null(bp_op_info(BP_OP_COUNT));
    ck_assert_str_eq(bp_op_name(BP_OP_COUNT), "?");
    bp_op_kind_t k;
    ck_assert(!bp_op_lookup("divide", &k));
}
END_TEST

/* The enum order is part of every probe's hash: the first ops keep their
 * codes (golden files name probes by a hash over them). */
START_TEST(t_codes_pinned)
{
    ck_assert_int_eq(BP_OP_TENSOR, 0);
    ck_assert_int_eq(BP_OP_CAST, 3);
    ck_assert_int_eq(BP_OP_DIV, 7);
    ck_assert_int_eq(BP_OP_NEG, 17);
    ck_assert_int_eq(BP_OP_SUM, 22);
    ck_assert_int_eq(BP_OP_ROTATE_HALF, 23);
    ck_assert_int_eq(BP_FORM_DEFAULT, 0);
    ck_assert_int_eq(BP_FORM_RECIPROCAL, 2);
    ck_assert_int_eq(BP_FORM_PAIRWISE, 4);
}
END_TEST

START_TEST(t_facts)
{
    /* torch.div and torch.sin are float functions; neg and add keep ints */
    ck_assert(bp_op_has(BP_OP_DIV, BP_OPF_FLOAT_FN));
    ck_assert(bp_op_has(BP_OP_SIN, BP_OPF_FLOAT_FN | BP_OPF_COSTLY));
    ck_assert(!bp_op_has(BP_OP_SQRT, BP_OPF_COSTLY));
    ck_assert(bp_op_has(BP_OP_NEG, BP_OPF_INT) && bp_op_has(BP_OP_ADD, BP_OPF_INT));
    ck_assert(!bp_op_has(BP_OP_UNIFORM, BP_OPF_INT));
    ck_assert(!bp_op_has(BP_OP_COUNT, 0));
    ck_assert_int_eq(bp_op_info(BP_OP_SUM)->kind, BP_KIND_REDUCTION);
    ck_assert_int_eq(bp_op_info(BP_OP_MATMUL)->kind, BP_KIND_REDUCTION);
    ck_assert_int_eq(bp_op_info(BP_OP_OUTER)->kind, BP_KIND_ELEMWISE);
    ck_assert_int_eq(bp_op_info(BP_OP_SLICE)->kind, BP_KIND_LAYOUT);
    ck_assert_int_eq(bp_op_info(BP_OP_ARANGE)->kind, BP_KIND_CREATION);
    ck_assert_int_eq(bp_op_info(BP_OP_SUM)->dtype, BP_DT_ACC);
    ck_assert_int_eq(bp_op_info(BP_OP_POW)->operands, BP_OPD_AB_TS);
    ck_assert_int_eq(bp_op_info(BP_OP_MATMUL)->operands, BP_OPD_AB);
    ck_assert(bp_op_form_ok(BP_OP_DIV, BP_FORM_RECIPROCAL));
    ck_assert(bp_op_form_ok(BP_OP_DIV, BP_FORM_DEFAULT));
    ck_assert(!bp_op_form_ok(BP_OP_DIV, BP_FORM_PAIRWISE));
    ck_assert(bp_op_form_ok(BP_OP_SUM, BP_FORM_PAIRWISE));
    ck_assert(!bp_op_form_ok(BP_OP_ADD, BP_FORM_TRUE));
    ck_assert(bp_op_takes(BP_OP_SLICE, BP_KEY_ISTART) &&
              !bp_op_takes(BP_OP_SLICE, BP_KEY_START));
    ck_assert(bp_op_takes(BP_OP_ARANGE, BP_KEY_START));
    ck_assert(bp_op_takes(BP_OP_CONCAT, BP_KEY_INPUTS) &&
              !bp_op_takes(BP_OP_CONCAT, BP_KEY_A));
    ck_assert(bp_op_takes(BP_OP_ADD, BP_KEY_B) && !bp_op_takes(BP_OP_EXP, BP_KEY_B));
    ck_assert(bp_op_info(BP_OP_CAST)->required & BP_K(DTYPE));
    ck_assert(bp_op_info(BP_OP_UNIFORM)->required == (BP_K(SHAPE) | BP_K(SEED)));
    ck_assert_str_eq(bp_key_name(BP_KEY_ISTART), "start");
    ck_assert_str_eq(bp_key_type_name(bp_key_type(BP_KEY_ISTART)), "integer");
    ck_assert_str_eq(bp_key_type_name(bp_key_type(BP_KEY_START)), "number");
    ck_assert_str_eq(bp_form_name(BP_FORM_SEQUENTIAL), "sequential");
    bp_form_t f;
    ck_assert(bp_form_lookup("reciprocal", &f) && f == BP_FORM_RECIPROCAL);
    ck_assert(!bp_form_lookup("fast", &f));
    ck_assert_str_eq(bp_op_class_name(BP_KIND_ELEMWISE), "elementwise");
    ck_assert_str_eq(bp_op_flag_name(0), "float_fn");
}
END_TEST

/* The GEMMs: F.linear and torch.addmm take inputs lists as baddbmm does
 * (addmm with beta and alpha), appended after every older op (their codes
 * keep older probes' hashes); every GEMM reads its operands as views on a
 * device backend, no other op does. */
START_TEST(t_gemm_ops)
{
    ck_assert_int_eq(BP_OP_LINEAR, BP_OP_BADDBMM + 1);
    ck_assert_int_eq(BP_OP_ADDMM, BP_OP_BADDBMM + 2);
    ck_assert_int_eq(bp_op_info(BP_OP_LINEAR)->operands, BP_OPD_INPUTS);
    ck_assert_int_eq(bp_op_info(BP_OP_ADDMM)->operands, BP_OPD_INPUTS);
    ck_assert(bp_op_takes(BP_OP_ADDMM, BP_KEY_BETA) && bp_op_takes(BP_OP_ADDMM, BP_KEY_ALPHA));
    ck_assert(!bp_op_takes(BP_OP_LINEAR, BP_KEY_BETA));
    ck_assert_str_eq(bp_op_name(BP_OP_LINEAR), "linear");
    ck_assert_str_eq(bp_op_name(BP_OP_ADDMM), "addmm");
    ck_assert_str_eq(bp_op_flag_name(5), "views");
    for (int k = 0; k < BP_OP_COUNT; k++) {
        bool gemm = k == BP_OP_MATMUL || k == BP_OP_BMM || k == BP_OP_BADDBMM ||
                    k == BP_OP_LINEAR || k == BP_OP_ADDMM || k == BP_OP_SDPA;
        ck_assert_msg(bp_op_has((bp_op_kind_t)k, BP_OPF_VIEWS) == gemm, "%s",
                      bp_op_name((bp_op_kind_t)k));
    }
    /* shapes: linear keeps x's leading dimensions, matmul folds them */
    bp_meta_t m[4] = {{BP_F32, 3, {2, 5, 7}}, {BP_F32, 2, {4, 7}}, {BP_F32, 1, {4}},
                      {BP_F32, 2, {7, 4}}};
    int in3[3] = {0, 1, 2}, in2[2] = {0, 1};
    bp_op_t lin = {.kind = BP_OP_LINEAR, .ninputs = 3, .inputs = in3};
    bp_meta_t out;
    bp_error_t err = {0};
    ck_assert_msg(bp_op_infer(&lin, m, BP_F32, &out, &err) == BP_OK, "%s", err.msg);
    ck_assert(out.ndim == 3 && out.shape[0] == 2 && out.shape[1] == 5 && out.shape[2] == 4);
    lin.ninputs = 2;
    lin.inputs = in2;
    ck_assert(bp_op_infer(&lin, m, BP_F32, &out, &err) == BP_OK);
    bp_op_t mm = {.kind = BP_OP_MATMUL, .a = bp_arg_buf(0), .b = bp_arg_buf(3)};
    ck_assert_msg(bp_op_infer(&mm, m, BP_F32, &out, &err) == BP_OK, "%s", err.msg);
    ck_assert(out.ndim == 3 && out.shape[2] == 4);
    int am[3] = {2, 1, 3}; /* addmm(bias [4], w [4, 7], [7, 4]) */
    bp_op_t ad = {.kind = BP_OP_ADDMM, .ninputs = 3, .inputs = am};
    ck_assert_msg(bp_op_infer(&ad, m, BP_F32, &out, &err) == BP_OK, "%s", err.msg);
    ck_assert(out.ndim == 2 && out.shape[0] == 4 && out.shape[1] == 4);
    am[1] = 0; /* a 3-D mat1 */
    ck_assert(bp_op_infer(&ad, m, BP_F32, &out, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "addmm needs mat1 [m, k] and mat2 [k, n]"), "%s", err.msg);
}
END_TEST

START_TEST(t_reads)
{
    int in[3] = {4, 1, 4};
    bp_op_t op = {.kind = BP_OP_CONCAT, .ninputs = 3, .inputs = in};
    int r[BP_OP_MAXREADS];
    ck_assert_int_eq(bp_op_reads(&op, r), 3);
    ck_assert(r[0] == 4 && r[1] == 1 && r[2] == 4);
    bp_op_t add = {.kind = BP_OP_ADD,
                   .a = {.kind = BP_ARG_SCALAR, .value = 2},
                   .b = {.kind = BP_ARG_BUF, .buf = 7}};
    ck_assert_int_eq(bp_op_reads(&add, r), 1);
    ck_assert_int_eq(r[0], 7);
    add.a = (bp_arg_t){.kind = BP_ARG_BUF, .buf = 3};
    ck_assert_int_eq(bp_op_reads(&add, r), 2);
    ck_assert(r[0] == 3 && r[1] == 7);
    bp_op_t ar = {.kind = BP_OP_ARANGE};
    ck_assert_int_eq(bp_op_reads(&ar, r), 0);
}
END_TEST

/* ---- the backends' tables ------------------------------------------------ */

static void table_full(const char *name, const bp_op_fn *t)
{
    for (int k = 0; k < BP_OP_COUNT; k++)
        ck_assert_msg(t[k] != NULL,
                      "backend '%s' has no entry for op '%s' (fill it, or "
                      "declare it bp_op_unsupported)", name,
                      bp_op_name((bp_op_kind_t)k));
}

START_TEST(t_backends_fill_every_op)
{
    table_full("cpu", bp_cpu_ops);
    table_full("oracle", bp_oracle_ops);
#ifdef BP_HAVE_CUDA
    table_full("cuda", bp_cuda_ops);
#endif
    /* and the backends that open use them */
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_backend_open("cpu", NULL, &be, &err) == BP_OK, "%s", err.msg);
    ck_assert_ptr_eq(be->op, bp_cpu_ops);
    ck_assert(bp_backend_supports(be, BP_OP_ADD));
    ck_assert(!bp_backend_supports(be, BP_OP_COUNT));
    bp_backend_close(be);
}
END_TEST

static int tensors_made;
static bp_status count_tensor(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    tensors_made++;
    return bp_cpu_ops[BP_OP_TENSOR](be, x, err);
}

START_TEST(t_unsupported)
{
    static const char yaml[] = "name: t\n"
                               "description: d\n"
                               "dtypes: [fp32]\n"
                               "ops:\n"
                               "  - {out: a, op: tensor, values: [1, 2]}\n"
                               "  - {out: s, op: add, a: a, b: 1}\n"
                               "outputs:\n"
                               "  - {name: s}\n";
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_parse(yaml, sizeof yaml - 1, "t.yaml", &p, &err) == BP_OK,
                  "%s", err.msg);
    bp_backend_t *cpu = NULL, half;
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    bp_op_fn ops[BP_OP_COUNT];
    memcpy(ops, bp_cpu_ops, sizeof ops);
    ops[BP_OP_TENSOR] = count_tensor;
    ops[BP_OP_ADD] = bp_op_unsupported;
    half = *cpu;
    half.name = "half";
    half.op = ops;
    ck_assert(!bp_backend_supports(&half, BP_OP_ADD));
    bp_buf_t bufs[2] = {{0}};
    tensors_made = 0;
    ck_assert_int_eq(bp_backend_run(&half, p, BP_F32, bufs, &err), BP_EUNAVAIL);
    ck_assert_msg(strcmp(err.msg, "t.yaml:6:5: op 'add' is not supported on "
                                  "backend 'half'") == 0, "%s", err.msg);
    ck_assert_int_eq(tensors_made, 0); /* refused before anything ran */
    bp_buf_t out = {0};
    ck_assert_int_eq(bp_backend_run_op(&half, p, 1, BP_F32, bufs, &out, &err),
                     BP_EUNAVAIL);
    ck_assert_msg(strstr(err.msg, "op 'add' is not supported on backend 'half'"),
                  "%s", err.msg);
    /* the entry itself says so too, when called */
    bp_exec_t x = {.op = &p->ops[1]};
    ck_assert_int_eq(bp_op_unsupported(&half, &x, &err), BP_EUNAVAIL);
    ck_assert_str_eq(err.msg, "op 'add' is not supported on backend 'half'");
    bp_backend_bufs_free(bufs, 2);
    bp_buf_free(&out);
    bp_backend_close(cpu);
    bp_probe_free(p);
}
END_TEST

/* ---- the loader reads the table ------------------------------------------ */

static const char *load_err(const char *op_line)
{
    static char msg[1100];
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "name: t\ndescription: d\ndtypes: [fp32]\nops:\n"
             "  - {out: a, op: arange, end: 4}\n"
             "  - %s\n"
             "outputs:\n  - {name: a}\n", op_line);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    bp_status st = bp_probe_parse(yaml, strlen(yaml), "t.yaml", &p, &err);
    bp_probe_free(p);
    snprintf(msg, sizeof msg, "%s", st ? err.msg : "(loaded)");
    return msg;
}

START_TEST(t_loader)
{
    const char *m = load_err("{out: x, op: qqqq, a: a, b: 1}");
    ck_assert_msg(strstr(m, "t.yaml:6:18: unknown op 'qqqq' (ops: tensor, arange, "
                            "uniform, cast, add,"), "%s", m);
    char last[64];
    snprintf(last, sizeof last, ", %s)", bp_op_name((bp_op_kind_t)(BP_OP_COUNT - 1)));
    /* every op to the last, or as many as the message holds */
    ck_assert_msg(strstr(m, last) || strstr(m, ", ...)"), "%s", m);
    m = load_err("{out: x, op: tanhh, a: a}");
    ck_assert_msg(strstr(m, "unknown op 'tanhh'; did you mean 'tanh'?"), "%s", m);
    m = load_err("{out: x, op: exp, a: a, keepdim: true}");
    ck_assert_msg(strstr(m, "unknown key 'keepdim' in op 'x' (exp) (expected out, op, "
                            "dtype, a)"), "%s", m);
    m = load_err("{out: x, op: sum, a: a, keepdims: true}");
    ck_assert_msg(strstr(m, "(expected out, op, dtype, a, axis, keepdim, formulation)"),
                  "%s", m);
    m = load_err("{out: x, op: slice, a: a, stop: 1}");
    ck_assert_msg(strstr(m, "(expected out, op, dtype, a, axis, start, end, step)"),
                  "%s", m);
    m = load_err("{out: x, op: concat, inputs: [a, a], formulation: pairwise}");
    ck_assert_msg(strstr(m, "unknown key 'formulation' in op 'x' (concat) (expected "
                            "out, op, dtype, inputs, axis)"), "%s", m);
    m = load_err("{out: x, op: sum, a: a, formulation: true}");
    ck_assert_msg(strstr(m, "unknown formulation 'true' for sum (expected sequential, "
                            "pairwise or default)"), "%s", m);
    m = load_err("{out: x, op: cast, a: a}");
    ck_assert_msg(strstr(m, "missing required key 'dtype' in op 'x' (cast)"), "%s", m);
    m = load_err("{out: x, op: uniform, shape: [2]}");
    ck_assert_msg(strstr(m, "missing required key 'seed' in op 'x' (uniform)"), "%s", m);
    m = load_err("{out: x, op: outer, a: a, b: 2}");
    ck_assert_msg(strstr(m, "b must be a buffer name, got the number 2"), "%s", m);
    m = load_err("{out: x, op: exp, a: a, dtype: i64}");
    ck_assert_msg(strstr(m, "exp cannot produce the integer dtype i64"), "%s", m);
    ck_assert_str_eq(load_err("{out: x, op: sum, a: a, axis: 0, formulation: pairwise}"),
                     "(loaded)");
}
END_TEST

START_TEST(t_suggest)
{
    static const char *const c[] = {"div", "tanh", "sum", "sin", "sqrt"};
    ck_assert_str_eq(bp_suggest("divide", c, 5), "div");
    ck_assert_str_eq(bp_suggest("tanhh", c, 5), "tanh");
    ck_assert_str_eq(bp_suggest("sqtr", c, 5), "sqrt"); /* a swap */
    ck_assert_str_eq(bp_suggest("sine", c, 5), "sin");
    ck_assert_ptr_null(bp_suggest("gt", c, 5));
    ck_assert_ptr_null(bp_suggest("matmul", c, 5));
    ck_assert_uint_eq(bp_suggest_distance("abc", "abc"), 0);
    ck_assert_uint_eq(bp_suggest_distance("ab", "ba"), 1);
    ck_assert_uint_eq(bp_suggest_distance("kitten", "sitting"), 3);
    ck_assert_uint_eq(bp_suggest_distance("", "abc"), 3);
    ck_assert_str_eq(bp_op_suggest("rotate-half"), "rotate_half");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_names);
    tcase_add_test(tc, t_codes_pinned);
    tcase_add_test(tc, t_facts);
    tcase_add_test(tc, t_reads);
    tcase_add_test(tc, t_gemm_ops);
    tcase_add_test(tc, t_backends_fill_every_op);
    tcase_add_test(tc, t_unsupported);
    tcase_add_test(tc, t_loader);
    tcase_add_test(tc, t_suggest);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
