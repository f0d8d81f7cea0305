/* Invariance maps, sweeps, arbitration and reports, driven by fake GEMM
 * engines whose boundaries are known by construction (the result's
 * accumulation order switches at M = 17 and M = 65, as a library switching
 * to split-K would), by an engine that is nondeterministic on purpose, and
 * by the real CPU engine (bitprobe's CPU matmul), which must be invariant.
 * The oracle's arbitration is checked against exact dot products computed
 * here with MPFR, independently of the oracle's code.  Inputs come from the
 * counter generator with fixed seeds (printed on failure by the
 * messages). */
#include <check.h>
#include <gmp.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

#include "backend.h"
#include "buf.h"
#include "inv.h"
#include "inv_engine.h"
#include "inv_formula.h"
#include "inv_presets.h"
#include "inv_report.h"
#include "inv_sweep.h"
#include "op.h"
#include "report.h"

/* ---- value lists and placements ---- */

static void values_ok(const char *s, int64_t max, const int64_t *want, size_t n)
{
    int64_t *v;
    size_t got;
    bp_error_t e;
    ck_assert_msg(bp_inv_values_parse(s, max, &v, &got, &e) == BP_OK, "'%s': %s", s,
                  e.msg);
    ck_assert_msg(got == n, "'%s': %zu values, want %zu", s, got, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(v[i] == want[i], "'%s'[%zu] = %lld, want %lld", s, i,
                      (long long)v[i], (long long)want[i]);
    free(v);
}

START_TEST(t_values)
{
    values_ok("1:8", 100, (int64_t[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
    values_ok("8,1,1,4,2", 100, (int64_t[]){1, 2, 4, 8}, 4);
    values_ok("1:10:3", 100, (int64_t[]){1, 4, 7, 10}, 4);
    values_ok("1:1024:x2", 1024,
              (int64_t[]){1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, 11);
    values_ok("3:100:x3", 100, (int64_t[]){3, 9, 27, 81}, 4);
    values_ok("5,1:3,7:7", 100, (int64_t[]){1, 2, 3, 5, 7}, 5);
    static const char *bad[] = {"", "0", "5:3", "1:x", "a", "1:10:x1", "1:10:0",
                                "2000", "1:2000", "1,,2", "1:2:3:4", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t *v = NULL;
        size_t n;
        bp_error_t e = {0};
        ck_assert_msg(bp_inv_values_parse(bad[i], 1024, &v, &n, &e) == BP_EINPUT,
                      "'%s' accepted", bad[i]);
        ck_assert_msg(e.msg[0], "'%s': no message", bad[i]);
    }
}
END_TEST

START_TEST(t_place)
{
    ck_assert_int_eq(bp_inv_place_row(BP_INV_FIRST, 10, 1), 0);
    ck_assert_int_eq(bp_inv_place_row(BP_INV_LAST, 10, 1), 9);
    ck_assert_int_eq(bp_inv_place_row(BP_INV_MIDDLE, 10, 1), 4);
    ck_assert_int_eq(bp_inv_place_row(BP_INV_MIDDLE, 10, 3), 3);
    ck_assert_int_eq(bp_inv_place_row(BP_INV_LAST, 3, 3), 0);
    bp_inv_place_t p;
    ck_assert(bp_inv_place_parse("middle", &p) && p == BP_INV_MIDDLE);
    ck_assert(!bp_inv_place_parse("centre", &p));
}
END_TEST

/* ---- the map alone, with hand-made results ---- */

START_TEST(t_map_groups)
{
    /* results of 2 fp32 elements: ref (1, 2), x = second one ulp up,
     * y = first 8 ulp up */
    float ref[2] = {1.0f, 2.0f}, x[2] = {1.0f, nextafterf(2.0f, 3.0f)},
          y[2] = {1.0f + 8 * 0x1p-23f, 2.0f};
    bp_policy_t pol;
    bp_error_t e;
    ck_assert(bp_policy_parse("ulp=1", &pol, &e) == BP_OK);
    bp_inv_map_t m;
    ck_assert(bp_inv_map_init(&m, BP_F32, 1, 2, ref, &pol, &e) == BP_OK);
    bp_inv_band_t *b;
    ck_assert(bp_inv_map_band(&m, BP_INV_FIRST, &b, &e) == BP_OK);
    const float *seq[] = {ref, ref, x, x, ref, y, y};
    for (int i = 0; i < 7; i++)
        ck_assert(bp_inv_map_add(&m, b, i + 1, seq[i], NULL, NULL, &e) == BP_OK);
    ck_assert(bp_inv_map_finish(&m, &e) == BP_OK);
    ck_assert_uint_eq(m.ng, 3);
    ck_assert_uint_eq(b->niv, 4);
    int want_g[4] = {0, 1, 0, 2};
    size_t want_first[4] = {0, 2, 4, 5}, want_last[4] = {1, 3, 4, 6};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(b->iv[i].group, want_g[i]);
        ck_assert_uint_eq(b->iv[i].first, want_first[i]);
        ck_assert_uint_eq(b->iv[i].last, want_last[i]);
    }
    /* group 1 is 1 ulp away: within ulp=1; group 2 is 8 ulp: beyond */
    ck_assert(bp_inv_group_pass(&m, 1));
    ck_assert(!bp_inv_group_pass(&m, 2));
    ck_assert_uint_eq(m.g[2].cmp.max_ulp, 8);
    ck_assert_uint_eq(bp_inv_band_breaking(&m, b), 2);
    ck_assert(!bp_inv_map_pass(&m));
    /* digests from another process: one differs */
    uint64_t d[7];
    ck_assert_uint_eq(bp_inv_map_nconfigs(&m), 7);
    bp_inv_map_digests(&m, d);
    d[3] ^= 1;
    ck_assert_uint_eq(bp_inv_map_check_digests(&m, d), 1);
    ck_assert_uint_eq(b->cfg[3].process_differ, 1);
    ck_assert_uint_eq(b->cfg[2].process_differ, 0);
    ck_assert_uint_eq(bp_inv_map_unstable(&m), 1);
    char span[64];
    bp_inv_run_format(b, &b->iv[1], span, sizeof span);
    ck_assert_str_eq(span, "3-4");
    bp_inv_run_format(b, &b->iv[2], span, sizeof span);
    ck_assert_str_eq(span, "5");
    bp_inv_map_free(&m);
}
END_TEST

/* Groups are told apart by every element: results of [2, 3] bf16 that
 * differ from the reference only in their last element (one bit each, in
 * two ways) make three groups, their bands and verdicts; a result equal
 * to the reference in its first element but not in the others is never
 * its group (values and bits derived by hand). */
START_TEST(t_map_groups_tail)
{
    /* bf16 bits: 1.0 = 0x3f80, 2.0 = 0x4000 */
    uint16_t ref[6] = {0x3f80, 0x4000, 0x3f80, 0x4000, 0x3f80, 0x4000};
    uint16_t up[6], down[6];
    memcpy(up, ref, sizeof ref);
    memcpy(down, ref, sizeof ref);
    up[5] = 0x4001;   /* last element one ulp up */
    down[5] = 0x3fff; /* one ulp down (below 2.0: half the step) */
    bp_policy_t pol;
    bp_error_t e;
    ck_assert(bp_policy_parse("exact", &pol, &e) == BP_OK);
    bp_inv_map_t m;
    ck_assert(bp_inv_map_init(&m, BP_BF16, 2, 3, ref, &pol, &e) == BP_OK);
    bp_inv_band_t *b;
    ck_assert(bp_inv_map_band(&m, BP_INV_LAST, &b, &e) == BP_OK);
    const uint16_t *seq[] = {ref, up, up, down, ref, down};
    for (int i = 0; i < 6; i++)
        ck_assert(bp_inv_map_add(&m, b, 10 * (i + 1), seq[i], NULL, NULL, &e) == BP_OK);
    ck_assert(bp_inv_map_finish(&m, &e) == BP_OK);
    ck_assert_uint_eq(m.ng, 3);
    ck_assert_uint_eq(b->niv, 5);
    int want_g[5] = {0, 1, 2, 0, 2};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(b->iv[i].group, want_g[i]);
    /* each other group differs in one element by one ulp: exact fails */
    for (int g = 1; g < 3; g++) {
        ck_assert(!bp_inv_group_pass(&m, g));
        ck_assert_uint_eq(m.g[g].cmp.mismatched, 1);
        ck_assert_uint_eq(m.g[g].cmp.max_ulp, 1);
    }
    ck_assert_uint_eq(bp_inv_band_breaking(&m, b), 4);
    ck_assert(!bp_inv_map_pass(&m));
    bp_inv_map_free(&m);
}
END_TEST

/* ---- fake engines ---- */

/* The regime of a batch of m rows: 0 (m <= 16) one accumulation over k
 * ascending; 1 (17..64) split-K 2, halves added; 2 (m >= 65) split-K 4,
 * partials added as a tree. */
static int regime(int64_t m)
{
    return m <= 16 ? 0 : m <= 64 ? 1 : 2;
}

typedef struct {
    bp_inv_problem_t p;
    float *a, *b; /* probed rows [R, K], b [K, N] as floats */
    int calls;
    bool flaky;   /* flips a bit on every second call */
} fake_t;

static float chunk(const fake_t *f, int64_t r, int64_t j, int64_t k0, int64_t k1)
{
    float acc = 0.0f;
    for (int64_t k = k0; k < k1; k++)
        acc = fmaf(f->a[r * f->p.k + k], f->b[k * f->p.n + j], acc);
    return acc;
}

static bp_status fake_setup(bp_inv_engine_t *e, const bp_inv_problem_t *p,
                            bp_error_t *err)
{
    fake_t *f = e->state;
    (void)err;
    f->p = *p;
    free(f->a);
    free(f->b);
    f->a = malloc(sizeof(float) * (size_t)(p->rows * p->k));
    f->b = malloc(sizeof(float) * (size_t)(p->k * p->n));
    ck_assert(f->a && f->b && p->dtype == BP_F32);
    bp_inv_fill(BP_F32, f->a, 0, p->rows, p->k, p->seed, BP_INV_STREAM_PROBE);
    bp_inv_fill(BP_F32, f->b, 0, p->k, p->n, p->seed, BP_INV_STREAM_B);
    snprintf(e->desc, sizeof e->desc, "fake: split-K from M 17 and M 65");
    return BP_OK;
}

static bp_status fake_run(bp_inv_engine_t *e, int64_t m, int64_t pos, void *out,
                          bp_inv_algo_t *algo, bp_error_t *err)
{
    fake_t *f = e->state;
    (void)pos;
    (void)err;
    int rg = regime(m);
    int64_t K = f->p.k;
    float *o = out;
    for (int64_t r = 0; r < f->p.rows; r++)
        for (int64_t j = 0; j < f->p.n; j++) {
            float v;
            if (rg == 0)
                v = chunk(f, r, j, 0, K);
            else if (rg == 1)
                v = chunk(f, r, j, 0, K / 2) + chunk(f, r, j, K / 2, K);
            else
                v = (chunk(f, r, j, 0, K / 4) + chunk(f, r, j, K / 4, K / 2)) +
                    (chunk(f, r, j, K / 2, 3 * K / 4) + chunk(f, r, j, 3 * K / 4, K));
            o[r * f->p.n + j] = v;
        }
    if (f->flaky && f->calls++ % 2)
        o[0] = nextafterf(o[0], INFINITY);
    algo->known = algo->lt = true;
    algo->id = 21 + rg;
    algo->tile = 20;
    algo->stages = 15;
    algo->splitk = rg == 0 ? 1 : rg == 1 ? 2 : 4;
    algo->reduction = rg ? 2 : 0;
    /* within regime 2 the "heuristic" changes tiles at M 80 without a
     * change of bits */
    if (rg == 2 && m >= 80)
        algo->tile = 24;
    snprintf(algo->source, sizeof algo->source, "fake");
    return BP_OK;
}

static void fake_close(bp_inv_engine_t *e)
{
    fake_t *f = e->state;
    free(f->a);
    free(f->b);
    free(f);
    free(e);
}

static bp_inv_engine_t *fake_open(bool flaky)
{
    bp_inv_engine_t *e = calloc(1, sizeof *e);
    fake_t *f = calloc(1, sizeof *f);
    ck_assert(e && f);
    f->flaky = flaky;
    snprintf(e->name, sizeof e->name, flaky ? "flaky" : "fake");
    e->state = f;
    e->setup = fake_setup;
    e->run = fake_run;
    e->close = fake_close;
    return e;
}

static bp_inv_problem_t fake_problem(void)
{
    return (bp_inv_problem_t){.op = BP_OP_MATMUL, .dtype = BP_F32, .k = 512, .n = 48,
                              .rows = 1, .mmax = 96, .seed = 7};
}

static void sweep(bp_inv_engine_t *e, const bp_inv_problem_t *p, const char *values,
                  bool all_places, int repeat, bp_inv_map_t *m)
{
    int64_t *v;
    size_t n;
    bp_error_t err;
    ck_assert(bp_inv_values_parse(values, 1 << 20, &v, &n, &err) == BP_OK);
    bp_inv_sweep_opts_t o = {.values = v, .nvalues = n, .repeat = repeat};
    bp_policy_exact(&o.policy);
    o.place[BP_INV_FIRST] = true;
    o.place[BP_INV_MIDDLE] = o.place[BP_INV_LAST] = all_places;
    bp_status st = bp_inv_sweep(e, p, &o, m, &err);
    ck_assert_msg(st == BP_OK, "sweep: %s", err.msg);
    free(v);
}

START_TEST(t_fake_boundaries)
{
    bp_inv_engine_t *e = fake_open(false);
    bp_inv_problem_t p = fake_problem();
    bp_inv_map_t m;
    sweep(e, &p, "1:96", true, 1, &m);
    ck_assert_int_eq(m.nbands, 3);
    ck_assert_uint_eq(m.ng, 3);
    for (int b = 0; b < 3; b++) {
        const bp_inv_band_t *bd = &m.band[b];
        ck_assert_uint_eq(bd->ncfg, 96);
        ck_assert_uint_eq(bd->niv, 3);
        ck_assert_int_eq(bd->cfg[bd->iv[0].last].value, 16);
        ck_assert_int_eq(bd->cfg[bd->iv[1].first].value, 17);
        ck_assert_int_eq(bd->cfg[bd->iv[1].last].value, 64);
        ck_assert_int_eq(bd->cfg[bd->iv[2].first].value, 65);
        ck_assert_int_eq(bd->iv[0].group, 0);
        ck_assert_int_eq(bd->iv[1].group, 1);
        ck_assert_int_eq(bd->iv[2].group, 2);
        ck_assert_uint_eq(bp_inv_band_breaking(&m, bd), 80);
        /* the algorithm recorded at the boundaries */
        ck_assert_int_eq(bd->cfg[15].algo.splitk, 1);
        ck_assert_int_eq(bd->cfg[16].algo.splitk, 2);
        ck_assert_int_eq(bd->cfg[64].algo.splitk, 4);
    }
    ck_assert(!bp_inv_map_pass(&m));
    ck_assert_uint_eq(bp_inv_map_unstable(&m), 0);
    /* a sweep that stays below the first switch is invariant */
    bp_inv_map_t m2;
    sweep(e, &p, "1:16", false, 3, &m2);
    ck_assert(bp_inv_map_pass(&m2));
    ck_assert_uint_eq(m2.ng, 1);
    ck_assert_uint_eq(m2.band[0].cfg[5].repeats, 2);
    bp_inv_map_free(&m);
    bp_inv_map_free(&m2);
    bp_inv_engine_close(e);
}
END_TEST

START_TEST(t_repeat_flaky)
{
    bp_inv_engine_t *e = fake_open(true);
    bp_inv_problem_t p = fake_problem();
    bp_inv_map_t m;
    sweep(e, &p, "1:8", false, 2, &m);
    /* each configuration's second run has other bits: all unstable */
    ck_assert_uint_eq(bp_inv_map_unstable(&m), 8);
    ck_assert(!bp_inv_map_pass(&m));
    for (size_t i = 0; i < m.band[0].ncfg; i++) {
        ck_assert_uint_eq(m.band[0].cfg[i].repeats, 1);
        ck_assert_uint_eq(m.band[0].cfg[i].repeat_differ, 1);
    }
    bp_inv_map_free(&m);
    bp_inv_engine_close(e);
}
END_TEST

/* ---- arbitration against exact dot products computed here ---- */

static float exact_dot(const float *a, const float *b, int64_t k, int64_t n, int64_t j)
{
    mpfr_t acc, t;
    mpfr_init2(acc, 400);
    mpfr_init2(t, 60);
    mpfr_set_zero(acc, 1);
    for (int64_t i = 0; i < k; i++) {
        mpfr_set_flt(t, a[i], MPFR_RNDN);
        mpfr_mul_d(t, t, (double)b[i * n + j], MPFR_RNDN); /* 48 bits: exact */
        mpfr_add(acc, acc, t, MPFR_RNDN);                 /* exact at 400 bits */
    }
    mpfr_prec_round(acc, 24, MPFR_RNDN);
    float r = mpfr_get_flt(acc, MPFR_RNDN);
    mpfr_clears(acc, t, (mpfr_ptr)0);
    return r;
}

START_TEST(t_arbitration)
{
    bp_inv_engine_t *e = fake_open(false);
    bp_inv_problem_t p = fake_problem();
    bp_inv_map_t m;
    sweep(e, &p, "1:96", false, 1, &m);
    fake_t *f = e->state;
    size_t nout = (size_t)p.n;
    float *ora = malloc(nout * sizeof *ora), *want = malloc(nout * sizeof *want);
    ck_assert(ora && want);
    bp_error_t err;
    ck_assert_msg(bp_inv_oracle(&p, 2, ora, &err) == BP_OK, "%s", err.msg);
    for (size_t j = 0; j < nout; j++) {
        want[j] = exact_dot(f->a, f->b, p.k, p.n, (int64_t)j);
        ck_assert_msg(memcmp(&want[j], &ora[j], 4) == 0, "oracle [%zu] %a, exact %a", j,
                      (double)ora[j], (double)want[j]);
    }
    ck_assert(bp_inv_map_arbitrate(&m, ora, &err) == BP_OK);
    for (size_t g = 0; g < m.ng; g++) {
        const float *r = m.g[g].bits;
        size_t exact = 0;
        uint64_t maxu = 0;
        for (size_t j = 0; j < nout; j++) {
            uint64_t u = bp_ulp_distance(BP_F32, bp_f32_bits(want[j]), bp_f32_bits(r[j]));
            exact += u == 0;
            if (u > maxu)
                maxu = u;
        }
        ck_assert_uint_eq(m.g[g].exact, exact);
        ck_assert_uint_eq(m.g[g].max_ulp, maxu);
    }
    /* at each boundary the closer counts cover every element, and agree
     * with distances computed here */
    for (int a = 0; a < 2; a++) {
        bp_inv_closer_t c;
        bp_inv_closer(&m, a, a + 1, &c);
        ck_assert_uint_eq(c.a_closer + c.b_closer + c.ties, nout);
        size_t ac = 0;
        for (size_t j = 0; j < nout; j++) {
            uint64_t w = bp_f32_bits(want[j]);
            uint64_t ua = bp_ulp_distance(BP_F32, w, bp_f32_bits(((float *)m.g[a].bits)[j]));
            uint64_t ub = bp_ulp_distance(BP_F32, w, bp_f32_bits(((float *)m.g[a + 1].bits)[j]));
            ac += ua < ub;
        }
        ck_assert_uint_eq(c.a_closer, ac);
    }
    free(ora);
    free(want);
    bp_inv_map_free(&m);
    bp_inv_engine_close(e);
}
END_TEST

/* ---- the CPU engine: bitprobe's CPU matmul is invariant ---- */

START_TEST(t_cpu_invariant)
{
    static const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16};
    bp_inv_engine_t *e;
    bp_error_t err;
    ck_assert_msg(bp_inv_engine_open("cpu", 0, &e, &err) == BP_OK, "%s", err.msg);
    for (size_t d = 0; d < 3; d++)
        for (int64_t rows = 1; rows <= 3; rows += 2) {
            bp_inv_problem_t p = {.op = BP_OP_MATMUL, .dtype = dts[d], .k = 40, .n = 24,
                                  .rows = rows, .mmax = 37, .seed = 11};
            bp_inv_map_t m;
            sweep(e, &p, "1:37", true, 2, &m);
            ck_assert_msg(bp_inv_map_pass(&m) && m.ng == 1, "cpu %s rows %lld: %zu groups",
                          bp_dtype_name(dts[d]), (long long)rows, m.ng);
            for (int b = 0; b < 3; b++)
                ck_assert_uint_eq(m.band[b].ncfg, (size_t)(37 - rows + 1));
            bp_inv_map_free(&m);
        }
    /* TF32 is refused as unavailable, not an error */
    bp_inv_problem_t p = {.op = BP_OP_MATMUL, .dtype = BP_F32, .tf32 = true, .k = 8,
                          .n = 8, .rows = 1, .mmax = 4};
    ck_assert(e->setup(e, &p, &err) == BP_EUNAVAIL);
    bp_inv_engine_close(e);
    ck_assert(bp_inv_engine_open("nonsense", 0, &e, &err) == BP_EINPUT);
}
END_TEST

/* ---- reports ---- */

static char *text_of(const bp_inv_study_t *s, bool quiet)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f);
    bp_inv_text_opts_t o = {.quiet = quiet};
    ck_assert_int_eq(bp_inv_text(f, s, &o), 0);
    fclose(f);
    return buf;
}

START_TEST(t_reports)
{
    bp_inv_engine_t *e = fake_open(false);
    bp_inv_problem_t p = fake_problem();
    bp_inv_study_t s;
    bp_inv_study_init(&s);
    bp_inv_map_t m;
    sweep(e, &p, "1:96", false, 1, &m);
    snprintf(m.values, sizeof m.values, "1:96");
    float *ora = malloc((size_t)p.n * sizeof *ora);
    bp_error_t err;
    ck_assert(bp_inv_oracle(&p, 1, ora, &err) == BP_OK);
    ck_assert(bp_inv_map_arbitrate(&m, ora, &err) == BP_OK);
    free(ora);
    ck_assert(bp_inv_study_add(&s, &m, &err) == BP_OK);
    ck_assert_uint_eq(bp_inv_study_failures(&s), 1);

    char *t = text_of(&s, false);
    ck_assert_msg(strncmp(t, "invariance: DRIFT: 1 of 1 maps", 30) == 0, "%s", t);
    ck_assert_msg(strstr(t, "M 17-64") && strstr(t, "M 65-96") && strstr(t, "M 1-16"),
                  "%s", t);
    ck_assert_msg(strstr(t, "at M 16|17: group 0 -> 1") && strstr(t, "at M 64|65"), "%s", t);
    ck_assert_msg(strstr(t, "split-K 2") && strstr(t, "FAILED:"), "%s", t);
    ck_assert_msg(strstr(t, "algorithm changes 1 time inside"), "%s", t);
    free(t);
    t = text_of(&s, true);
    ck_assert_msg(!strstr(t, "M 17-64") && strstr(t, "FAILED:"), "%s", t);
    free(t);

    json_t *j = bp_inv_json(&s);
    ck_assert(j);
    json_t *b0 = json_array_get(json_object_get(json_array_get(json_object_get(j, "maps"), 0),
                                                "bands"), 0);
    json_t *bds = json_object_get(b0, "boundaries");
    ck_assert_uint_eq(json_array_size(bds), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(bds, 0), "left")), 16);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(bds, 1), "right")), 65);
    ck_assert(json_object_get(json_array_get(bds, 0), "closer"));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "failures")), 1);
    json_decref(j);

    /* A non-finite mismatch (ulp UINT64_MAX) is a change of class, written
     * as every report writes it and as the report reader reads it back:
     * "class change", not "inf" (a number's spelling, not a distance's). */
    bp_inv_map_t *m0 = &s.maps[0];
    ck_assert(m0->ng >= 2 && m0->oracle);
    m0->g[1].compared = true;
    m0->g[1].cmp.max_ulp = UINT64_MAX;
    m0->g[1].max_ulp = UINT64_MAX;
    j = bp_inv_json(&s);
    ck_assert(j);
    json_t *g1 = json_array_get(json_object_get(json_array_get(json_object_get(j, "maps"), 0),
                                                "groups"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(g1, "max_ulp")), "class change");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(g1, "oracle"),
                                                       "max_ulp")), "class change");
    json_decref(j);

    bp_report_t rep;
    bp_report_init(&rep, 0, NULL);
    ck_assert(bp_inv_fill_report(&rep, &s));
    ck_assert_uint_eq(rep.n, 3); /* one result per group of the band */
    ck_assert_uint_eq(bp_report_failures(&rep), 2);
    bp_report_free(&rep);

    char path[] = "/tmp/bitprobe-inv-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_int_eq(bp_inv_svg(f, &s), 0);
    fclose(f);
    f = fopen(path, "r");
    char svg[65536];
    size_t n = fread(svg, 1, sizeof svg - 1, f);
    svg[n] = 0;
    fclose(f);
    ck_assert(strstr(svg, "<svg") && strstr(svg, "</svg>"));
    /* three intervals: three rectangles with titles, two boundary lines */
    size_t rects = 0;
    for (char *q = svg; (q = strstr(q, "<title>M ")); q++)
        rects++;
    ck_assert_uint_eq(rects, 3);
    if (system("command -v rsvg-convert >/dev/null 2>&1") == 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rsvg-convert -o %s.png %s", path, path);
        ck_assert_msg(system(cmd) == 0, "rsvg-convert failed on %s", path);
        snprintf(cmd, sizeof cmd, "%s.png", path);
        f = fopen(cmd, "rb");
        unsigned char sig[8] = {0};
        ck_assert(f && fread(sig, 1, 8, f) == 8);
        fclose(f);
        ck_assert(memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0);
        remove(cmd);
    }
    remove(path);
    bp_inv_study_free(&s);
    bp_inv_engine_close(e);
}
END_TEST

/* ---- the formulations, on hand-derived values ---- */

START_TEST(t_combine_orders)
{
    const float u = 0x1p-24f; /* half an ulp of 1 */
    /* sequential: each u is lost to rounding (1 + u ties to even: 1); tree:
     * (1 + u) + (u + u) = 1 + 2u, representable; over three, (1 + u) + u = 1 */
    float v[4] = {1.0f, u, u, u};
    ck_assert(bp_inv_combine(v, 4, BP_INV_SEQ, BP_F32) == 1.0f);
    ck_assert(bp_inv_combine(v, 4, BP_INV_TREE, BP_F32) == 1.0f + 0x1p-23f);
    ck_assert(bp_inv_combine(v, 3, BP_INV_TREE, BP_F32) == 1.0f);
    /* all-reduce of ranks (1, u, u, 2u): rank order keeps 1 + 2u; a ring
     * chunk starting at rank 1 adds the small ones first: 1 + 4u; the tree
     * (1 + u) + (u + 2u) = 1 + 3u rounds to even: 1 + 4u */
    float r[4] = {1.0f, u, u, 2 * u};
    ck_assert(bp_inv_allreduce(r, 4, 0, 8, BP_INV_RANK, BP_F32) == 1.0f + 0x1p-23f);
    ck_assert(bp_inv_allreduce(r, 4, 0, 8, BP_INV_RING, BP_F32) == 1.0f + 0x1p-22f);
    ck_assert(bp_inv_allreduce(r, 4, 6, 8, BP_INV_RING, BP_F32) == 1.0f + 0x1p-23f);
    ck_assert(bp_inv_allreduce(r, 4, 0, 8, BP_INV_TREE, BP_F32) == 1.0f + 0x1p-22f);
    /* bf16 hops round each sum: 1 + 2^-8 is a bf16 tie, to even: 1 */
    float b[2] = {1.0f, 0x1p-8f};
    ck_assert(bp_inv_allreduce(b, 2, 0, 2, BP_INV_RANK, BP_BF16) == 1.0f);
    int64_t k0, k1;
    bp_inv_part(10, 3, 0, &k0, &k1);
    ck_assert(k0 == 0 && k1 == 3);
    bp_inv_part(10, 3, 2, &k0, &k1);
    ck_assert(k0 == 6 && k1 == 10);
}
END_TEST

/* Split-K at S = 1 is the CPU backend's matmul (fmaf over k ascending from
 * +0): the two codes agree bit for bit. */
START_TEST(t_split_one_is_matmul)
{
    const int64_t K = 300, N = 17;
    bp_buf_t a = {0}, b = {0}, c = {0};
    int64_t sa[2] = {1, K}, sb[2] = {K, N}, sc[2] = {1, N};
    bp_error_t err;
    ck_assert(bp_buf_alloc(&a, BP_F32, 2, sa, &err) == BP_OK);
    ck_assert(bp_buf_alloc(&b, BP_F32, 2, sb, &err) == BP_OK);
    ck_assert(bp_buf_alloc(&c, BP_F32, 2, sc, &err) == BP_OK);
    bp_inv_fill(BP_F32, a.data, 0, 1, K, 3, BP_INV_STREAM_PROBE);
    bp_inv_fill(BP_F32, b.data, 0, K, N, 3, BP_INV_STREAM_B);
    bp_backend_t *be;
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    ck_assert(bp_backend_open("cpu", &o, &be, &err) == BP_OK);
    bp_op_t op = {.kind = BP_OP_MATMUL};
    bp_exec_t x = {.op = &op, .a = &a, .b = &b, .out = &c};
    ck_assert(be->op[BP_OP_MATMUL](be, &x, &err) == BP_OK);
    float out[17];
    bp_inv_matmul_split(a.data, b.data, K, N, 1, BP_INV_SEQ, BP_F32, BP_F32, out);
    ck_assert(memcmp(out, c.data, sizeof out) == 0);
    /* S = 2 is ((first half) + (second half)) */
    bp_inv_matmul_split(a.data, b.data, K, N, 2, BP_INV_SEQ, BP_F32, BP_F32, out);
    const float *af = a.data, *bf = b.data;
    for (int64_t j = 0; j < N; j++) {
        float h0 = 0, h1 = 0;
        for (int64_t q = 0; q < K / 2; q++)
            h0 = fmaf(af[q], bf[q * N + j], h0);
        for (int64_t q = K / 2; q < K; q++)
            h1 = fmaf(af[q], bf[q * N + j], h1);
        ck_assert(out[j] == h0 + h1);
    }
    bp_backend_close(be);
    bp_buf_free(&a);
    bp_buf_free(&b);
    bp_buf_free(&c);
}
END_TEST

/* A row op's split formulation at S = 1 (inv_formula.c) is the row the
 * batch axis computes through the CPU backend's op table (its fixed
 * formulation; mean: sum, mul, cast), bit for bit, in every dtype: one
 * definition of the arithmetic checked against the other, on 3 rows of
 * 1000 (not a power of two: mean's 1/h is inexact).  (sum's batch axis is
 * ATen's order, its split formulation left to right.) */
START_TEST(t_split_one_is_the_table)
{
    static const bp_op_kind_t ops[] = {BP_OP_MEAN, BP_OP_RMS_NORM, BP_OP_SOFTMAX,
                                      BP_OP_LOG_SOFTMAX};
    static const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16};
    bp_error_t err;
    bp_inv_engine_t *e;
    ck_assert_msg(bp_inv_engine_cpu(&e, &err) == BP_OK, "%s", err.msg);
    for (size_t t = 0; t < sizeof ops / sizeof ops[0]; t++)
        for (size_t d = 0; d < 3; d++) {
            bp_inv_problem_t p = {.op = ops[t], .dtype = dts[d], .n = 1000, .rows = 3,
                                  .seed = 4, .axis = BP_INV_BATCH, .mmax = 5};
            size_t n = bp_inv_result_elems(&p), es = bp_dtype_info(bp_inv_result_dtype(&p))->size;
            char *whole = malloc(n * es), *one = malloc(n * es);
            bp_inv_algo_t algo = {0};
            ck_assert_msg(e->setup(e, &p, &err) == BP_OK, "%s", err.msg);
            ck_assert_msg(e->run(e, 5, 1, whole, &algo, &err) == BP_OK, "%s", err.msg);
            p.axis = BP_INV_SPLIT;
            p.batch = 5;
            p.combine = BP_INV_SEQ;
            ck_assert_msg(e->setup(e, &p, &err) == BP_OK, "%s", err.msg);
            ck_assert_msg(e->run(e, 1, 1, one, &algo, &err) == BP_OK, "%s", err.msg);
            ck_assert_msg(memcmp(whole, one, n * es) == 0, "%s %s: S = 1 is not the table's",
                          bp_inv_op_name(ops[t]), bp_dtype_name(dts[d]));
            free(whole);
            free(one);
        }
    bp_inv_engine_close(e);
}
END_TEST

/* Flash-decoding at S = 1 is the unsplit softmax-weighted sum, written out
 * here; S > 1 changes bits on these inputs (seed 5) and stays close. */
START_TEST(t_attention_split)
{
    enum { L = 300, D = 16 };
    float q[D], k[L * D], v[L * D];
    bp_inv_fill(BP_F32, q, 0, 1, D, 5, BP_INV_STREAM_PROBE);
    bp_inv_fill(BP_F32, k, 0, L, D, 5, BP_INV_STREAM_B);
    bp_inv_fill(BP_F32, v, 0, L, D, 5, BP_INV_STREAM_W);
    float got[D], want[D], sc[L], o[D] = {0}, mx = -INFINITY, l = 0;
    for (int j = 0; j < L; j++) {
        float acc = 0;
        for (int i = 0; i < D; i++)
            acc = fmaf(q[i], k[j * D + i], acc);
        sc[j] = acc * (1.0f / sqrtf((float)D));
        mx = fmaxf(mx, sc[j]);
    }
    for (int j = 0; j < L; j++) {
        float p = Sleef_expf_u10(sc[j] - mx);
        l += p;
        for (int i = 0; i < D; i++)
            o[i] = fmaf(p, v[j * D + i], o[i]);
    }
    for (int i = 0; i < D; i++)
        want[i] = o[i] / l;
    bp_inv_attention_head(q, k, v, D, L, D, 1, BP_F32, got);
    ck_assert(memcmp(got, want, sizeof got) == 0);
    size_t differ = 0;
    for (int s = 2; s <= 8; s *= 2) {
        bp_inv_attention_head(q, k, v, D, L, D, s, BP_F32, got);
        for (int i = 0; i < D; i++) {
            differ += got[i] != want[i];
            ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f * (fabsf(want[i]) + 1e-3f),
                          "S=%d [%d]: %a vs %a", s, i, (double)got[i], (double)want[i]);
        }
    }
    ck_assert_msg(differ > 0, "splitting changed no bit (seed 5)");
}
END_TEST

/* The oracle's softmax, log_softmax, rms_norm and mean against long double
 * arithmetic done here (exp, log, sqrt of the C library at 64 bits), where
 * the long double value is not within 2^-40 of a float rounding boundary. */
static bool near_boundary(long double x)
{
    float f = (float)x;
    long double lo = nextafterf(f, -INFINITY), hi = nextafterf(f, INFINITY);
    long double m1 = ((long double)f + lo) / 2, m2 = ((long double)f + hi) / 2;
    long double tol = fabsl(x) * 0x1p-40L;
    return fabsl(x - m1) < tol || fabsl(x - m2) < tol;
}

START_TEST(t_oracle_rows)
{
    enum { H = 777 };
    static const bp_op_kind_t ops[] = {BP_OP_SOFTMAX, BP_OP_LOG_SOFTMAX, BP_OP_RMS_NORM,
                                      BP_OP_MEAN};
    float x[H], w[H], got[H];
    bp_inv_fill(BP_F32, x, 0, 1, H, 9, BP_INV_STREAM_PROBE);
    bp_inv_fill(BP_F32, w, 0, 1, H, 9, BP_INV_STREAM_W);
    for (size_t t = 0; t < 4; t++) {
        bp_inv_problem_t p = {.op = ops[t], .dtype = BP_F32, .n = H, .rows = 1, .seed = 9};
        bp_error_t err;
        ck_assert_msg(bp_inv_oracle(&p, 1, got, &err) == BP_OK, "%s", err.msg);
        long double mx = -INFINITY, s = 0;
        for (int i = 0; i < H; i++)
            mx = fmaxl(mx, x[i]);
        for (int i = 0; i < H; i++)
            s += ops[t] == BP_OP_RMS_NORM ? (long double)x[i] * x[i]
                 : ops[t] == BP_OP_MEAN   ? (long double)x[i]
                                           : expl((long double)x[i] - mx);
        size_t checked = 0;
        for (int i = 0; i < (ops[t] == BP_OP_MEAN ? 1 : H); i++) {
            long double r;
            switch (ops[t]) {
            case BP_OP_SOFTMAX: r = expl((long double)x[i] - mx) / s; break;
            case BP_OP_LOG_SOFTMAX: r = ((long double)x[i] - mx) - logl(s); break;
            case BP_OP_RMS_NORM:
                r = (long double)w[i] * x[i] /
                    sqrtl(s / H + (long double)BP_INV_RMS_EPS);
                break;
            default: r = s / H;
            }
            if (near_boundary(r))
                continue;
            checked++;
            ck_assert_msg(got[i] == (float)r, "%s [%d]: oracle %a, long double %La",
                          bp_inv_op_name(ops[t]), i, (double)got[i], r);
        }
        ck_assert(checked > 0);
    }
}
END_TEST

START_TEST(t_presets)
{
    const bp_inv_preset_t *ps[64];
    char bad[64];
    int all = bp_inv_presets_expand("llm", ps, 64, bad, sizeof bad);
    int n = 0;
    for (const bp_inv_preset_t *p = bp_inv_presets(); p->name; p++) {
        n++;
        int64_t *v;
        size_t nv;
        bp_error_t e;
        ck_assert_msg(bp_inv_values_parse(p->values, 1 << 20, &v, &nv, &e) == BP_OK,
                      "%s: %s", p->name, e.msg);
        free(v);
        ck_assert(p->n > 0 && (p->op != BP_OP_MATMUL || p->k > 0));
    }
    ck_assert_int_eq(all, n);
    ck_assert_int_eq(bp_inv_presets_expand("gemm-4096,gemm-4096,decode-32k", ps, 64, bad,
                                           sizeof bad), 2);
    ck_assert_int_eq(bp_inv_presets_expand("llm-rows,nope", ps, 64, bad, sizeof bad), -1);
    ck_assert_str_eq(bad, "nope");
    ck_assert_int_eq(bp_inv_presets_expand("llm-gemm", ps, 64, bad, sizeof bad), 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_values);
    tcase_add_test(tc, t_place);
    tcase_add_test(tc, t_map_groups);
    tcase_add_test(tc, t_map_groups_tail);
    tcase_add_test(tc, t_fake_boundaries);
    tcase_add_test(tc, t_repeat_flaky);
    tcase_add_test(tc, t_arbitration);
    tcase_add_test(tc, t_cpu_invariant);
    tcase_add_test(tc, t_reports);
    tcase_add_test(tc, t_combine_orders);
    tcase_add_test(tc, t_split_one_is_matmul);
    tcase_add_test(tc, t_attention_split);
    tcase_add_test(tc, t_split_one_is_the_table);
    tcase_add_test(tc, t_oracle_rows);
    tcase_add_test(tc, t_presets);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
