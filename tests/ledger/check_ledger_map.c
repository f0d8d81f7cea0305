/* Tests for writing recorded ATen ops as probes (ledger_map.h): for each
 * mapped op, the probe line written by hand from PyTorch's meaning of the
 * call, and the probe must load and infer the recorded result dtype and
 * shape; ops and arguments without a counterpart are refused, naming why. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_map.h"
#include "probe.h"

/* One op record: its name, "args" (and "kwargs") JSON, input and output
 * tensors as "DTYPE:d0xd1" (":" alone: 0-d). */
static void one_op(const char *name, const char *call, const char *ins, const char *outs,
                   bp_ledger_t *l)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "{\"format\":\"bitprobe-ledger\",\"version\":1,\"hash\":\"fmix64-sum/1\"}\n"
               "{\"seq\":0,\"op\":\"%s\",\"module\":\"m\",%s,", name, call);
    const char *lists[2] = {ins, outs};
    for (int s = 0; s < 2; s++) {
        fprintf(f, "\"%s\":[", s ? "out" : "in");
        char spec[256];
        snprintf(spec, sizeof spec, "%s", lists[s]);
        int k = 0;
        for (char *t = strtok(spec, " "); t; t = strtok(NULL, " ")) {
            char *colon = strchr(t, ':');
            *colon = '\0';
            size_t es = 4;
            bp_ledger_dtype_size(t, &es);
            long n = 1;
            fprintf(f, "%s{\"dtype\":\"%s\",\"shape\":[", k++ ? "," : "", t);
            int nd = 0;
            for (char *d = colon + 1; *d; d = strchr(d, 'x') ? strchr(d, 'x') + 1 : d + strlen(d)) {
                long v = strtol(d, NULL, 10);
                fprintf(f, "%s%ld", nd++ ? "," : "", v);
                n *= v;
            }
            fprintf(f, "],\"stride\":null,\"device\":\"cpu\",\"nbytes\":%ld,\"hash\":"
                       "\"0000000000000001\"}", n * (long)es);
        }
        fprintf(f, "]%s", s ? "}\n" : ",");
    }
    fprintf(f, "{\"end\":{\"records\":1,\"captures\":0}}\n");
    fclose(f);
    FILE *r = fmemopen(buf, strlen(buf), "r");
    bp_error_t e = {0};
    ck_assert_msg(bp_ledger_read_stream(r, "t.ledger", l, &e) == BP_OK, "%s\n%s", e.msg, buf);
    fclose(r);
    free(buf);
}

static const struct map_case {
    const char *op, *call, *ins, *outs;
    const char *line; /* the op's line in the probe */
    bp_dtype_t dtype; /* the result dtype the probe infers */
} cases[] = {
    {"aten::div.Tensor", "\"args\":[{\"t\":0},10]", "F32:8", "F32:8",
     "  - {out: y, op: div, a: x0, b: 10, dtype: fp32}", BP_F32},
    {"aten::div.Tensor", "\"args\":[{\"t\":0},{\"t\":1}]", "BF16:2x3 BF16:3", "BF16:2x3",
     "  - {out: y, op: div, a: x0, b: x1, dtype: bf16}", BP_BF16},
    {"aten::div.Tensor_mode", "\"args\":[{\"t\":0},2.5],\"kwargs\":{\"rounding_mode\":null}",
     "F32:4", "F32:4", "  - {out: y, op: div, a: x0, b: 2.5, dtype: fp32}", BP_F32},
    {"aten::mul.Tensor", "\"args\":[{\"t\":0},1.0]", "F32:4", "F32:4",
     "  - {out: y, op: mul, a: x0, b: 1.0, dtype: fp32}", BP_F32},
    {"aten::add.Tensor", "\"args\":[{\"t\":0},1e-06]", "F32:4x1", "F32:4x1",
     "  - {out: y, op: add, a: x0, b: 9.9999999999999995e-07, dtype: fp32}", BP_F32},
    {"aten::sub.Tensor", "\"args\":[{\"t\":0},{\"t\":1}],\"kwargs\":{\"alpha\":1}",
     "F16:4 F16:4", "F16:4", "  - {out: y, op: sub, a: x0, b: x1, dtype: fp16}", BP_F16},
    {"aten::pow.Tensor_Scalar", "\"args\":[{\"t\":0},2]", "F32:4", "F32:4",
     "  - {out: y, op: pow, a: x0, b: 2, dtype: fp32}", BP_F32},
    {"aten::pow.Scalar", "\"args\":[10000,{\"t\":0}]", "F32:64", "F32:64",
     "  - {out: y, op: pow, a: 10000, b: x0, dtype: fp32}", BP_F32},
    {"aten::pow.Tensor_Tensor", "\"args\":[{\"t\":0},{\"t\":1}]", "F32: F32:8", "F32:8",
     "  - {out: y, op: pow, a: x0, b: x1, dtype: fp32}", BP_F32},
    {"aten::rsqrt", "\"args\":[{\"t\":0}]", "F32:4x1", "F32:4x1",
     "  - {out: y, op: rsqrt, a: x0, dtype: fp32}", BP_F32},
    {"aten::neg", "\"args\":[{\"t\":0}]", "I64:3", "I64:3",
     "  - {out: y, op: neg, a: x0, dtype: i64}", BP_I64},
    {"aten::arange", "\"args\":[300],\"kwargs\":{\"dtype\":{\"dtype\":\"F32\"}}", "", "F32:300",
     "  - {out: y, op: arange, end: 300, dtype: fp32}", BP_F32},
    {"aten::arange.start_step", "\"args\":[0,128,2]", "", "I64:64",
     "  - {out: y, op: arange, start: 0, end: 128, step: 2, dtype: i64}", BP_I64},
    {"aten::_to_copy", "\"args\":[{\"t\":0}],\"kwargs\":{\"dtype\":{\"dtype\":\"BF16\"}}",
     "F32:300", "BF16:300", "  - {out: y, op: cast, a: x0, dtype: bf16}", BP_BF16},
    {"aten::mm", "\"args\":[{\"t\":0},{\"t\":1}]", "F32:3x4 F32:4x5", "F32:3x5",
     "  - {out: y, op: matmul, a: x0, b: x1, dtype: fp32}", BP_F32},
    {"aten::sum.dim_IntList", "\"args\":[{\"t\":0},[-1],true]", "F32:4x8", "F32:4x1",
     "  - {out: y, op: sum, a: x0, axis: -1, keepdim: true, dtype: fp32}", BP_F32},
    {"aten::sum", "\"args\":[{\"t\":0}]", "F32:4x8", "F32:",
     "  - {out: y, op: sum, a: x0, dtype: fp32}", BP_F32},
    {"aten::cat", "\"args\":[[{\"t\":0},{\"t\":1}],-1]", "F32:2x3 F32:2x3", "F32:2x6",
     "  - {out: y, op: concat, inputs: [x0, x1], axis: -1, dtype: fp32}", BP_F32},
};

START_TEST(t_map)
{
    const struct map_case *c = &cases[_i];
    bp_ledger_t l;
    one_op(c->op, c->call, c->ins, c->outs, &l);
    bp_ledger_map_t m;
    bp_error_t e = {0};
    ck_assert_msg(bp_ledger_map(&l.ops[0], "b0", "# test", &m, &e) == BP_OK, "%s: %s", c->op,
                  e.msg);
    char want[256];
    snprintf(want, sizeof want, "\n%s\n", c->line);
    ck_assert_msg(strstr(m.yaml, want), "%s: lacks\n%s\nin\n%s", c->op, c->line, m.yaml);
    ck_assert(strncmp(m.name, "ledger-b0-", 10) == 0);
    /* It loads (from memory: loads stay empty) and infers the record. */
    char label[128];
    snprintf(label, sizeof label, "%s.yaml", m.name);
    bp_probe_t *p;
    ck_assert_msg(bp_probe_parse(m.yaml, strlen(m.yaml), label, &p, &e) == BP_OK, "%s: %s\n%s",
                  c->op, e.msg, m.yaml);
    bp_meta_t metas[16];
    bp_dtype_t run = BP_F32;
    for (int d = BP_F32; d < BP_NDTYPES; d++)
        if (p->dtypes & (1u << d)) {
            run = (bp_dtype_t)d;
            break;
        }
    ck_assert_msg(bp_probe_infer(p, run, metas, &e) == BP_OK, "%s: %s", c->op, e.msg);
    const bp_meta_t *y = &metas[p->nops - 1];
    ck_assert_int_eq(y->dtype, c->dtype);
    const bp_ledger_tensor_t *o = &l.ops[0].out[0];
    ck_assert_int_eq(y->ndim, o->ndim);
    for (int d = 0; d < o->ndim; d++)
        ck_assert_int_eq(y->shape[d], o->shape[d]);
    bp_probe_free(p);
    bp_ledger_map_free(&m);
    bp_ledger_free(&l);
}
END_TEST

static const struct refuse_case {
    const char *op, *call, *ins, *outs, *why;
} refused[] = {
    {"aten::silu", "\"args\":[{\"t\":0}]", "F32:4", "F32:4", "aten::silu has no bitprobe op yet"},
    {"aten::div.Tensor_mode", "\"args\":[{\"t\":0},2],\"kwargs\":{\"rounding_mode\":\"floor\"}",
     "F32:4", "F32:4", "a rounding mode"},
    {"aten::add.Tensor", "\"args\":[{\"t\":0},{\"t\":1}],\"kwargs\":{\"alpha\":2}",
     "F32:4 F32:4", "F32:4", "alpha other than 1"},
    {"aten::sum.dim_IntList", "\"args\":[{\"t\":0},[0,1]]", "F32:4x8", "F32:", "several dimensions"},
    {"aten::_to_copy", "\"args\":[{\"t\":0}],\"kwargs\":{\"dtype\":{\"dtype\":\"BOOL\"}}",
     "F32:4", "BOOL:4", "result's dtype is not one bitprobe computes in"},
};

START_TEST(t_refused)
{
    const struct refuse_case *c = &refused[_i];
    bp_ledger_t l;
    one_op(c->op, c->call, c->ins, c->outs, &l);
    bp_ledger_map_t m;
    bp_error_t e = {0};
    ck_assert(bp_ledger_map(&l.ops[0], "b0", "# test", &m, &e) == BP_EUNAVAIL);
    ck_assert_msg(strstr(e.msg, c->why), "%s: %s", c->op, e.msg);
    ck_assert_ptr_null(m.yaml);
    bp_ledger_free(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ledger_map");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, t_map, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_loop_test(tc, t_refused, 0, (int)(sizeof refused / sizeof *refused));
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
