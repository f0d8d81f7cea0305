/* Tests of the screen's host side (screen.h): the expected bits against
 * independent references (MPFR at a precision where every op is exact or
 * cannot reach a rounding midpoint, rounded by tests/oracle_check.h's own
 * integer rounding; int64 sums for the GEMMs; hand-derived patterns), the
 * inputs' determinism, the parsing of injections, and the checks that
 * name a wrong SM: against expected bits, the SMs' vote, the oracle's
 * bound, coverage, and the JSON rows a collector reads. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"
#include "oracle_check.h"
#include "screen.h"

/* ---- expected bits ---------------------------------------------------- */

/* The host's expected result of element i by MPFR: every operand exact,
 * the operation at `prec` bits (exact for fma, far from any midpoint for
 * the others), then ref_bits' rounding to the format. */
static uint64_t mpfr_ref(const bp_screen_job_t *j, size_t i)
{
    const bp_screen_test_t *T = &bp_screen_tests[j->test];
    mpfr_t x, y, z, r;
    mpfr_prec_t prec = T->dt == BP_F64 ? 3400 : 1400;
    mpfr_inits2(prec, x, y, z, r, (mpfr_ptr)0);
    mpfr_set_d(x, bp_dtype_bits_to_double(T->dt, bp_dtype_load_bits(T->dt, j->in[0], i)),
               MPFR_RNDN);
    if (T->nin > 1)
        mpfr_set_d(y, bp_dtype_bits_to_double(T->dt, bp_dtype_load_bits(T->dt, j->in[1], i)),
                   MPFR_RNDN);
    if (T->nin > 2)
        mpfr_set_d(z, bp_dtype_bits_to_double(T->dt, bp_dtype_load_bits(T->dt, j->in[2], i)),
                   MPFR_RNDN);
    switch (T->code) {
    case BPK_SCR_DIV32:
    case BPK_SCR_DIV64: mpfr_div(r, x, y, MPFR_RNDN); break;
    case BPK_SCR_SQRT32:
    case BPK_SCR_SQRT64: mpfr_sqrt(r, x, MPFR_RNDN); break;
    case BPK_SCR_RCP32: mpfr_ui_div(r, 1, x, MPFR_RNDN); break;
    default: mpfr_fma(r, x, y, z, MPFR_RNDN); break;
    }
    uint64_t b = ref_bits(r, T->dt);
    mpfr_clears(x, y, z, r, (mpfr_ptr)0);
    return b;
}

START_TEST(test_elem_expected)
{
    /* every test whose bits the host or MPFR knows, two rounds */
    for (int t = 0; t < bp_screen_ntests; t++) {
        const bp_screen_test_t *T = &bp_screen_tests[t];
        if (T->family != BP_SCR_ELEM || T->by == BP_SCR_BY_GOLDEN)
            continue;
        for (int round = 0; round < 2; round++) {
            bp_screen_job_t j;
            bp_error_t err = {0};
            ck_assert_int_eq(bp_screen_job_make(t, round, &j, &err), BP_OK);
            ck_assert_uint_eq(j.n, BP_SCREEN_ELEM_N);
            size_t bad = 0;
            for (size_t i = 0; i < j.n; i += round ? 7 : 1) {
                uint64_t want = mpfr_ref(&j, i), got = bp_dtype_load_bits(T->dt, j.expect, i);
                if (want != got && bad++ < 3)
                    fprintf(stderr, "%s round %d [%zu]: expected 0x%llx, MPFR 0x%llx\n",
                            T->name, round, i, (unsigned long long)got,
                            (unsigned long long)want);
            }
            ck_assert_msg(bad == 0, "%s: %zu expected values differ from MPFR", T->name, bad);
            bp_screen_job_free(&j);
        }
    }
}
END_TEST

START_TEST(test_gemm_expected)
{
    for (int t = 0; t < bp_screen_ntests; t++) {
        const bp_screen_test_t *T = &bp_screen_tests[t];
        if (T->family != BP_SCR_GEMM && T->family != BP_SCR_CUBLAS)
            continue;
        bp_screen_job_t j;
        bp_error_t err = {0};
        ck_assert_int_eq(bp_screen_job_make(t, 3, &j, &err), BP_OK);
        bp_dtype_t in = T->family == BP_SCR_CUBLAS ? T->dt
                        : T->code == BPK_SCR_GEMM_MMA16 ? BP_F16
                        : T->code == BPK_SCR_GEMM_MMABF16 ? BP_BF16 : BP_F32;
        /* a sample of outputs, each an int64 sum over k */
        for (size_t e = 0; e < j.n; e += 97) {
            size_t r = e / (size_t)j.nn, c = e % (size_t)j.nn;
            int64_t s = 0;
            for (int k = 0; k < j.k; k++) {
                double a = bp_dtype_bits_to_double(in, bp_dtype_load_bits(in, j.in[0],
                                                                           r * j.k + k));
                double b = bp_dtype_bits_to_double(in, bp_dtype_load_bits(in, j.in[1],
                                                                           k * j.nn + c));
                ck_assert(a == (int64_t)a && b == (int64_t)b);
                s += (int64_t)a * (int64_t)b;
            }
            double got = bp_dtype_bits_to_double(T->dt, bp_dtype_load_bits(T->dt, j.expect, e));
            ck_assert_msg(got == (double)s, "%s [%zu]: %g, sum %lld", T->name, e, got,
                          (long long)s);
        }
        bp_screen_job_free(&j);
    }
}
END_TEST

START_TEST(test_inputs)
{
    bp_error_t err = {0};
    bp_screen_job_t a, b, c;
    int div = bp_screen_test_find("div-fp32"), pow = bp_screen_test_find("pow-fp32");
    /* a pure function of (test, round) */
    ck_assert_int_eq(bp_screen_job_make(div, 1, &a, &err), BP_OK);
    ck_assert_int_eq(bp_screen_job_make(div, 1, &b, &err), BP_OK);
    ck_assert_int_eq(bp_screen_job_make(div, 2, &c, &err), BP_OK);
    ck_assert(memcmp(a.in[0], b.in[0], a.n * 4) == 0);
    ck_assert(memcmp(a.in[0], c.in[0], a.n * 4) != 0);
    for (size_t i = 0; i < a.n; i++) { /* finite, divisor not zero */
        uint32_t x = ((uint32_t *)a.in[0])[i], y = ((uint32_t *)a.in[1])[i];
        ck_assert((x & 0x7f800000u) != 0x7f800000u && (y & 0x7fffffffu) != 0);
    }
    bp_screen_job_free(&a);
    bp_screen_job_free(&b);
    bp_screen_job_free(&c);
    /* the golden sweeps never change: pow(1.1, 53) first, the same inputs
     * in every round, and a CRC that goldens are blessed against (this
     * value changes only with the inputs, which then need a new bless) */
    ck_assert_int_eq(bp_screen_job_make(pow, 0, &a, &err), BP_OK);
    ck_assert_int_eq(bp_screen_job_make(pow, 5, &b, &err), BP_OK);
    ck_assert_uint_eq(a.n, BP_SCREEN_SWEEP_N);
    ck_assert(((float *)a.in[0])[0] == 1.1f && ((float *)a.in[1])[0] == 53.0f);
    ck_assert(memcmp(a.in[1], b.in[1], a.n * 4) == 0);
    ck_assert_uint_eq(a.inputs_crc, b.inputs_crc);
    ck_assert_uint_eq(a.inputs_crc, 0xf7ec2706u);
    ck_assert_ptr_null(a.expect);
    bp_screen_job_free(&a);
    bp_screen_job_free(&b);
}
END_TEST

START_TEST(test_patterns)
{
    bp_screen_job_t j;
    bp_error_t err = {0};
    /* hand-derived: the host checks the complement of what was written */
    ck_assert_int_eq(bp_screen_job_make(bp_screen_test_find("mem-ones"), 0, &j, &err), BP_OK);
    ck_assert_uint_eq(bp_screen_pattern(&j, 100, 0, 0), 0xfffffffeu);  /* ~(1 << 0) */
    ck_assert_uint_eq(bp_screen_pattern(&j, 100, 1, 3), 0xffffff7fu);  /* w 103: bit 7 */
    j.test = bp_screen_test_find("mem-zeros");
    ck_assert_uint_eq(bp_screen_pattern(&j, 100, 0, 33), 0x00000002u); /* ~~(1 << 1) */
    j.test = bp_screen_test_find("mem-addr");
    ck_assert_uint_eq(bp_screen_pattern(&j, 100, 2, 5), ~(uint32_t)(205 * 4));
    j.salt = 1; /* round 1 */
    ck_assert_uint_eq(bp_screen_pattern(&j, 100, 0, 0), ~0x9E3779B9u);
    j.test = bp_screen_test_find("smem");
    j.salt = 0;
    /* element 0: item 0 (walking ones) read word 97: bit 97 % 32 = 1 */
    ck_assert_uint_eq(bp_screen_pattern(&j, 0, 0, 0), 0xfffffffdu);
    /* item 1 (walking zeros), element W - 1 read word (W - 1 + 97) % W = 96
     * of item 1: global word W + 96, bit (8192 + 96) % 32 = 0 */
    ck_assert_uint_eq(bp_screen_pattern(&j, 0, 0, 2 * BPK_SCR_SMEM_WORDS - 1), 0x00000001u);
    bp_screen_job_free(&j);
}
END_TEST

/* ---- injection -------------------------------------------------------- */

START_TEST(test_inject_parse)
{
    bp_screen_inject_t in[BP_SCREEN_MAX_INJECT];
    int n;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_screen_inject_parse("0:17:div-fp32,3:0:mem-addr", in, &n, &err), BP_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(in[0].gpu, 0);
    ck_assert_int_eq(in[0].sm, 17);
    ck_assert_int_eq(in[0].test, bp_screen_test_find("div-fp32"));
    ck_assert_int_eq(in[1].gpu, 3);
    ck_assert_int_eq(in[1].test, bp_screen_test_find("mem-addr"));
    static const struct {
        const char *s, *msg;
    } bad[] = {
        {"", "is empty"},
        {"0:1", "is not GPU:SM:TEST"},
        {"x:1:div-fp32", "GPU 'x' is not an index"},
        {"0:-1:div-fp32", "SM '-1' is not a number"},
        {"0:1024:div-fp32", "SM '1024' is not a number below 1024"},
        {"0:1:nope", "unknown test 'nope'"},
        {"0:1:div-fp32,", "is empty"},
        {"0:1:div-fp32:x", "unknown test 'div-fp32:x'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bp_status st = bp_screen_inject_parse(bad[i].s, in, &n, &err);
        if (strcmp(bad[i].s, "0:1:div-fp32,") == 0) {
            ck_assert_int_eq(st, BP_OK); /* a trailing comma is harmless */
            continue;
        }
        ck_assert_int_eq(st, BP_EINPUT);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "'%s': '%s'", bad[i].s, err.msg);
    }
}
END_TEST

/* ---- checks ----------------------------------------------------------- */

#define NS 5

static void gpu_init(bp_screen_gpu_t *g)
{
    memset(g, 0, sizeof *g);
    g->nsmid = NS + 1; /* SM id 3 absent: ids need not be contiguous */
    g->sms = NS;
    g->present = calloc(g->nsmid, 1);
    g->wrong_by_sm = calloc(g->nsmid, sizeof(uint32_t));
    for (unsigned s = 0; s < g->nsmid; s++)
        g->present[s] = s != 3;
    snprintf(g->uuid, sizeof g->uuid, "GPU-test");
    snprintf(g->pci, sizeof g->pci, "00000000:42:00.0");
}

/* rows of job->n results per SM id, all equal to expect (or filled by fn) */
static uint32_t *rows_of(const bp_screen_gpu_t *g, size_t n, const void *exp)
{
    uint32_t *o = calloc(g->nsmid * n, 4);
    for (unsigned s = 0; s < g->nsmid; s++)
        memcpy(o + s * n, exp, n * 4);
    return o;
}

/* A GPU, test `name`'s round-0 job, and rows that each hold the expected
 * results (or `fill` where the test has none). */
typedef struct {
    bp_screen_gpu_t g;
    bp_screen_job_t j;
    bp_error_t err;
    int t;
    uint32_t *o;
} fix_t;

static void fix_open(fix_t *f, const char *name, const void *fill)
{
    memset(f, 0, sizeof *f);
    gpu_init(&f->g);
    f->t = bp_screen_test_find(name);
    ck_assert_int_eq(bp_screen_job_make(f->t, 0, &f->j, &f->err), BP_OK);
    f->o = rows_of(&f->g, f->j.n, fill ? fill : f->j.expect);
}

static void fix_close(fix_t *f)
{
    free(f->o);
    bp_screen_job_free(&f->j);
    bp_screen_gpu_free(&f->g);
}

START_TEST(test_check_exact)
{
    fix_t f;
    fix_open(&f, "fma-fp32", NULL);
    size_t n = f.j.n;
    const uint32_t *exp = f.j.expect;
    unsigned char done[NS + 1] = {1, 1, 1, 0, 1, 1};
    f.o[4 * n + 9] ^= 0x400000u; /* SM 4, element 9 */
    f.o[5 * n + n - 1] ^= 1u;    /* SM 5, the last element */
    f.o[3 * n] ^= 1u;            /* SM id 3 is absent: not read */
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, NULL, &f.err), BP_OK);
    const bp_screen_tres_t *tr = &f.g.t[f.t];
    ck_assert_int_eq(tr->covered, NS);
    ck_assert_uint_eq(tr->checked, (uint64_t)NS * n);
    ck_assert_uint_eq(tr->wrong, 2);
    ck_assert_int_eq(tr->wrong_sms, 2);
    ck_assert_int_eq(tr->nkept, 2);
    ck_assert_int_eq(tr->kept[0].sm, 4);
    ck_assert_uint_eq(tr->kept[0].index, 9);
    ck_assert_uint_eq(tr->kept[0].expected, exp[9]);
    ck_assert_uint_eq(tr->kept[0].got, exp[9] ^ 0x400000u);
    ck_assert_int_eq(tr->kept[1].sm, 5);
    ck_assert_uint_eq(tr->kept[1].index, n - 1);
    ck_assert_str_eq(tr->by, "host");
    ck_assert_uint_eq(f.g.wrong_by_sm[4], 1);
    ck_assert_int_eq(bp_screen_status(&f.g, 1), 1);
    /* a second round counts the same SM once */
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, NULL, &f.err), BP_OK);
    ck_assert_uint_eq(tr->wrong, 4);
    ck_assert_int_eq(tr->wrong_sms, 2);
    fix_close(&f);
}
END_TEST

START_TEST(test_check_coverage)
{
    fix_t f;
    fix_open(&f, "rcp-fp32", NULL);
    size_t n = f.j.n;
    unsigned char done[NS + 1] = {1, 0, 1, 0, 1, 0};
    f.o[1 * n] ^= 1u; /* SM 1 did not run: its row is not judged */
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, NULL, &f.err), BP_OK);
    ck_assert_int_eq(f.g.t[f.t].covered, NS - 2);
    ck_assert_uint_eq(f.g.t[f.t].wrong, 0);
    /* the same GPU, shared memory: patterns */
    bp_screen_job_t j;
    int t2 = bp_screen_test_find("smem");
    ck_assert_int_eq(bp_screen_job_make(t2, 0, &j, &f.err), BP_OK);
    uint32_t *o = calloc(f.g.nsmid * j.n, 4);
    for (unsigned s = 0; s < f.g.nsmid; s++)
        for (size_t i = 0; i < j.n; i++)
            o[s * j.n + i] = bp_screen_pattern(&j, j.n, s, i);
    unsigned char done2[NS + 1] = {1, 0, 1, 0, 1, 1};
    ck_assert_int_eq(bp_screen_check(&f.g, &j, o, j.n, done2, NULL, NULL, &f.err), BP_OK);
    ck_assert_uint_eq(f.g.t[t2].wrong, 0);
    ck_assert(!f.g.trouble);
    bp_screen_gpu_coverage(&f.g);
    ck_assert(f.g.trouble);
    ck_assert_str_eq(f.g.error, "SM 1, 5 never ran their share of rcp-fp32, smem");
    ck_assert_int_eq(bp_screen_status(&f.g, 1), 2);
    free(o);
    bp_screen_job_free(&j);
    fix_close(&f);
}
END_TEST

START_TEST(test_check_vote)
{
    float *ref = malloc(BP_SCREEN_SWEEP_N * 4);
    for (size_t i = 0; i < BP_SCREEN_SWEEP_N; i++)
        ref[i] = (float)i * 0.25f;
    fix_t f;
    fix_open(&f, "sin-fp32", ref);
    size_t n = f.j.n;
    unsigned char done[NS + 1] = {1, 1, 1, 0, 1, 1};
    f.o[2 * n + 7] ^= 1u; /* SM 2 alone differs at 7 */
    f.o[0 * n + 8] ^= 1u; /* SMs 0 and 1 differ alike at 8: 3 to 2 */
    f.o[1 * n + 8] ^= 1u;
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, NULL, &f.err), BP_OK);
    const bp_screen_tres_t *tr = &f.g.t[f.t];
    ck_assert_str_eq(tr->by, "sm-vote");
    ck_assert_uint_eq(tr->wrong, 3);
    ck_assert_int_eq(tr->kept[0].sm, 2);
    ck_assert_uint_eq(tr->kept[0].index, 7);
    ck_assert_uint_eq(tr->kept[0].expected, bp_f32_bits(7 * 0.25f));
    ck_assert_int_eq(tr->kept[1].sm, 0);
    ck_assert_int_eq(tr->kept[2].sm, 1);
    ck_assert_uint_eq(tr->kept[2].index, 8);
    /* the majority is what a bless would write */
    ck_assert(memcmp(tr->agreed, ref, n * 4) == 0);
    /* a later round whose every SM moved at element 4: the bits of a
     * repeated sweep must not move */
    for (unsigned s = 0; s < f.g.nsmid; s++)
        f.o[s * n + 4] ^= 2u;
    f.o[2 * n + 7] ^= 1u;
    f.o[0 * n + 8] ^= 1u;
    f.o[1 * n + 8] ^= 1u;
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, NULL, &f.err), BP_OK);
    ck_assert_uint_eq(tr->wrong, 4);
    ck_assert_int_eq(tr->kept[3].sm, -1);
    ck_assert_uint_eq(tr->kept[3].index, 4);
    free(ref);
    fix_close(&f);
}
END_TEST

START_TEST(test_check_bound_and_golden)
{
    uint32_t *oracle = malloc(BP_SCREEN_SWEEP_N * 4), *agreed = malloc(BP_SCREEN_SWEEP_N * 4);
    for (size_t i = 0; i < BP_SCREEN_SWEEP_N; i++)
        oracle[i] = agreed[i] = 0x3f800000u + (uint32_t)i;
    agreed[10] += 3;          /* 3 ulps: within 2 (+1 at a binade edge) */
    agreed[11] += 4;          /* 4 ulps: beyond */
    agreed[12] = 0x7fc00000u; /* NaN where the oracle has a number */
    fix_t f;
    fix_open(&f, "exp-fp32", agreed); /* bound 2 ulps */
    size_t n = f.j.n;
    unsigned char done[NS + 1] = {1, 1, 1, 0, 1, 1};
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, NULL, oracle, &f.err), BP_OK);
    const bp_screen_tres_t *tr = &f.g.t[f.t];
    ck_assert_str_eq(tr->by, "sm-vote+oracle");
    ck_assert_uint_eq(tr->wrong, 2);
    ck_assert_int_eq(tr->kept[0].sm, -1);
    ck_assert_uint_eq(tr->kept[0].index, 11);
    ck_assert_uint_eq(tr->kept[0].expected, oracle[11]);
    ck_assert_uint_eq(tr->kept[1].index, 12);
    ck_assert_int_eq(tr->wrong_sms, 0);
    /* with a golden, each SM against it */
    bp_screen_gpu_free(&f.g);
    gpu_init(&f.g);
    f.o[5 * n + 100] ^= 1u;
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, n, done, agreed, oracle, &f.err), BP_OK);
    ck_assert_str_eq(f.g.t[f.t].by, "golden");
    ck_assert_uint_eq(f.g.t[f.t].wrong, 1);
    ck_assert_int_eq(f.g.t[f.t].kept[0].sm, 5);
    ck_assert_uint_eq(f.g.t[f.t].kept[0].index, 100);
    free(oracle);
    free(agreed);
    fix_close(&f);
}
END_TEST

START_TEST(test_json)
{
    fix_t f;
    fix_open(&f, "div-fp32", NULL);
    const uint32_t *exp = f.j.expect;
    unsigned char done[NS + 1] = {1, 1, 1, 0, 1, 1};
    f.o[4 * f.j.n + 0] ^= 1u;
    ck_assert_int_eq(bp_screen_check(&f.g, &f.j, f.o, f.j.n, done, NULL, NULL, &f.err), BP_OK);
    json_t *r = bp_screen_json(&f.g, 1, &f.t, 1, 1, 1.5);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "fail");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "exit_status")), 1);
    json_t *row = json_array_get(json_object_get(r, "faults"), 0);
    ck_assert_ptr_nonnull(row);
    ck_assert_str_eq(json_string_value(json_object_get(row, "uuid")), "GPU-test");
    ck_assert_str_eq(json_string_value(json_object_get(row, "pci_bus_id")), "00000000:42:00.0");
    ck_assert_int_eq(json_integer_value(json_object_get(row, "sm")), 4);
    ck_assert_str_eq(json_string_value(json_object_get(row, "test")), "div-fp32");
    ck_assert_int_eq(json_integer_value(json_object_get(row, "index")), 0);
    char want[16];
    snprintf(want, sizeof want, "0x%08x", exp[0]);
    ck_assert_str_eq(json_string_value(json_object_get(row, "expected")), want);
    snprintf(want, sizeof want, "0x%08x", exp[0] ^ 1u);
    ck_assert_str_eq(json_string_value(json_object_get(row, "got")), want);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(row, "host")));
    json_t *gp = json_array_get(json_object_get(r, "gpus"), 0);
    json_t *tt = json_array_get(json_object_get(gp, "tests"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(tt, "sms_covered")), NS);
    ck_assert_int_eq(json_integer_value(json_object_get(tt, "wrong")), 1);
    json_decref(r);
    fix_close(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("screen");
    TCase *tc = tcase_create("screen");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_elem_expected);
    tcase_add_test(tc, test_gemm_expected);
    tcase_add_test(tc, test_inputs);
    tcase_add_test(tc, test_patterns);
    tcase_add_test(tc, test_inject_parse);
    tcase_add_test(tc, test_check_exact);
    tcase_add_test(tc, test_check_coverage);
    tcase_add_test(tc, test_check_vote);
    tcase_add_test(tc, test_check_bound_and_golden);
    tcase_add_test(tc, test_json);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
