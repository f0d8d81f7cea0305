/* Tests of the memo (memo.c, driven by bp_backend_run): a backend with the
 * memo gives bit for bit the buffers the same backend gives without it, for
 * every buffer of every shipped probe in every dtype; and it reuses exactly
 * the results the contract allows: ops whose dtype, shape and operands
 * equal those of the previous dtype's run, never a result whose operands
 * differ, never within one dtype (--repeat), never across probes.
 *
 * This file builds two suites: check_memo (the cpu and oracle backends)
 * and, compiled with BP_MEMO_CUDA, check_memo_cuda (the cuda backend),
 * which exits 77 (SKIP) where the machine has no GPU (tests/gpu_rule.h).
 * A backend that does not open is a failure in either.
 *
 * Expected values: the run without the memo, which executes every op (the
 * memo cannot influence it), compared here with memcmp; which ops may be
 * reused is derived by hand from each test probe's definition. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "probe.h"
#include "test_files.h"
#ifdef BP_MEMO_CUDA
#include "gpu_rule.h"
#endif

static bp_backend_t *open_be(const char *name, bool memo)
{
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    bp_status st = bp_backend_open(name, NULL, &be, &err);
    ck_assert_msg(st == BP_OK, "backend %s: %s", name, err.msg);
    ck_assert_msg(bp_backend_memo(be, memo, &err) == BP_OK, "%s", err.msg);
    return be;
}

static bp_buf_t *run(bp_backend_t *be, const bp_probe_t *p, bp_dtype_t dt)
{
    bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
    bp_error_t err = {0};
    ck_assert_ptr_nonnull(bufs);
    ck_assert_msg(bp_backend_run(be, p, dt, bufs, &err) == BP_OK, "%s", err.msg);
    return bufs;
}

static void release(const bp_probe_t *p, bp_buf_t *bufs)
{
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
}

/* Every buffer: same dtype, shape and bytes; the first difference named. */
static void same_bufs(const char *be, const bp_probe_t *p, bp_dtype_t dt,
                      const bp_buf_t *want, const bp_buf_t *got)
{
    for (size_t i = 0; i < p->nops; i++) {
        const bp_buf_t *w = &want[i], *g = &got[i];
        ck_assert_msg(w->dtype == g->dtype && w->ndim == g->ndim && w->numel == g->numel,
                      "%s %s %s buffer %s: dtype or shape differs with the memo", be,
                      p->name, bp_dtype_name(dt), p->ops[i].out);
        size_t es = bp_dtype_info(w->dtype)->size;
        for (size_t k = 0; k < w->numel; k++) {
            if (memcmp((const char *)w->data + k * es, (const char *)g->data + k * es,
                       es) == 0)
                continue;
            ck_abort_msg("%s %s %s buffer %s element %zu: 0x%llx without the memo, "
                         "0x%llx (%a) with it", be, p->name, bp_dtype_name(dt),
                         p->ops[i].out, k, (unsigned long long)bp_buf_bits(w, k),
                         (unsigned long long)bp_buf_bits(g, k), bp_buf_get(g, k));
        }
    }
}

/* Runs p in every dtype (fp32 first, as run does) with and without the
 * memo on backend name; returns the elements reused. */
static uint64_t check_probe(bp_backend_t *plain, bp_backend_t *memo, const bp_probe_t *p)
{
    uint64_t r0 = memo->elems_reused, c0 = memo->elems, p0 = plain->elems;
    for (int d = 0; d < BP_NDTYPES; d++) {
        if (!(p->dtypes & (1u << d)))
            continue;
        bp_buf_t *want = run(plain, p, (bp_dtype_t)d);
        bp_buf_t *got = run(memo, p, (bp_dtype_t)d);
        same_bufs(plain->name, p, (bp_dtype_t)d, want, got);
        release(p, want);
        release(p, got);
    }
    /* Every element is computed or reused, never both. */
    ck_assert_uint_eq(memo->elems - c0 + memo->elems_reused - r0, plain->elems - p0);
    ck_assert_uint_eq(plain->elems_reused, 0);
    return memo->elems_reused - r0;
}

static void shipped(const char *name, bool skip_large)
{
    bp_backend_t *plain = open_be(name, false), *memo = open_be(name, true);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/probes", test_top_srcdir());
    bp_probe_t **ps = NULL;
    size_t n = 0;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load_dir(dir, &ps, &n, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_gt(n, 5);
    uint64_t reused_rope = 0;
    for (size_t i = 0; i < n; i++) {
        if (skip_large && strncmp(ps[i]->name, "rope-llama2", 11) == 0)
            continue;
        uint64_t r = check_probe(plain, memo, ps[i]);
        if (strcmp(ps[i]->name, "rope-llama2") == 0)
            reused_rope = r;
    }
    /* rope-llama2: idx..sin_f32 (1 + 1 + ... + 2 x 524288 cos/sin) reused
     * in bf16 and fp16. */
    if (!skip_large)
        ck_assert_uint_gt(reused_rope, 2 * 2 * 524288);
    bp_probe_free_all(ps, n);
    bp_backend_close(plain);
    bp_backend_close(memo);
}

#ifdef BP_MEMO_CUDA
static const char *const backends[] = {"cuda"};
#else
static const char *const backends[] = {"cpu", "oracle"};
#endif
#define NBACKENDS (int)(sizeof backends / sizeof backends[0])

/* The oracle's full-size RoPE caches take seconds per dtype: the mini RoPE
 * probes below cover the same op structure. */
START_TEST(t_shipped)
{
    shipped(backends[_i], strcmp(backends[_i], "oracle") == 0);
}
END_TEST

/* ---- which ops are reused: small probes, reuse derived by hand ---- */

static char tmpdir[512];

static bp_probe_t *load_text(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.yaml", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load(path, &p, &err) == BP_OK, "%s", err.msg);
    unlink(path);
    return p;
}

static void tmp_setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/check_memo.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    rmdir(tmpdir);
}

/* rope-llama2 at 16 positions and head dim 8. */
static const char MINI_ROPE[] =
    "name: mini-rope\n"
    "description: rope-llama2's structure, small\n"
    "params: {dim: 8, base: 10000, positions: 16}\n"
    "dtypes: [fp32, bf16, fp16]\n"
    "ops:\n"
    "  - {out: idx, op: arange, start: 0, end: $dim, step: 2}\n"   /* 4 i64 */
    "  - {out: idx_f, op: cast, a: idx, dtype: fp32}\n"            /* 4 */
    "  - {out: expo, op: div, a: idx_f, b: $dim}\n"                /* 4 */
    "  - {out: denom, op: pow, a: $base, b: expo}\n"               /* 4 */
    "  - {out: recip, op: reciprocal, a: denom}\n"                 /* 4 */
    "  - {out: inv_freq_f32, op: mul, a: recip, b: 1.0}\n"         /* 4 */
    "  - {out: t, op: arange, end: $positions, dtype: fp32}\n"     /* 16 */
    "  - {out: freqs, op: outer, a: t, b: inv_freq_f32}\n"         /* 64 */
    "  - {out: emb, op: concat, inputs: [freqs, freqs], axis: -1}\n" /* 128 */
    "  - {out: cos_f32, op: cos, a: emb}\n"                        /* 128 */
    "  - {out: sin_f32, op: sin, a: emb}\n"                        /* 128 */
    "  - {out: inv_freq, op: cast, a: inv_freq_f32, dtype: $dtype}\n"
    "  - {out: cos, op: cast, a: cos_f32, dtype: $dtype}\n"
    "  - {out: sin, op: cast, a: sin_f32, dtype: $dtype}\n"
    "outputs:\n"
    "  - {name: inv_freq}\n"
    "  - {name: cos}\n"
    "  - {name: sin}\n";
/* idx..sin_f32: 4 * 6 + 16 + 64 + 3 * 128; the casts to $dtype: 4 + 256. */
#define MINI_ROPE_SHARED (4 * 6 + 16 + 64 + 3 * 128)
#define MINI_ROPE_ALL (MINI_ROPE_SHARED + 4 + 2 * 128)

/* zero.Init's variant: t is cast to the run dtype before the outer
 * product, so everything from t on depends on the dtype (positions up to
 * 300 are not all exact in bf16 or fp16). */
static const char MINI_ZERO[] =
    "name: mini-zero\n"
    "description: rope-llama2-zero-init's structure, small\n"
    "params: {dim: 8, base: 10000, positions: 300}\n"
    "dtypes: [fp32, bf16, fp16]\n"
    "ops:\n"
    "  - {out: idx, op: arange, start: 0, end: $dim, step: 2}\n"
    "  - {out: idx_f, op: cast, a: idx, dtype: fp32}\n"
    "  - {out: expo, op: div, a: idx_f, b: $dim}\n"
    "  - {out: denom, op: pow, a: $base, b: expo}\n"
    "  - {out: recip, op: reciprocal, a: denom}\n"
    "  - {out: inv_freq_f32, op: mul, a: recip, b: 1.0}\n"
    "  - {out: t_f32, op: arange, end: $positions, dtype: fp32}\n"
    "  - {out: t, op: cast, a: t_f32, dtype: $dtype}\n"
    "  - {out: freqs, op: outer, a: t, b: inv_freq_f32}\n"
    "  - {out: emb, op: concat, inputs: [freqs, freqs], axis: -1}\n"
    "  - {out: cos_f32, op: cos, a: emb}\n"
    "  - {out: cos, op: cast, a: cos_f32, dtype: $dtype}\n"
    "outputs:\n"
    "  - {name: cos}\n";
/* idx..inv_freq_f32 and t_f32 are shared: 4 * 6 + 300. */
#define MINI_ZERO_SHARED (4 * 6 + 300)

/* x is made in the run dtype, then cast to fp32: small integers are exact
 * in every dtype, so xf has the same bits in every run although it is
 * computed each time; y, which reads xf, is reused by comparing xf. */
static const char EXACT[] =
    "name: exact-cast\n"
    "description: a dtype-dependent op with dtype-independent bits\n"
    "dtypes: [fp32, bf16, fp16]\n"
    "ops:\n"
    "  - {out: x, op: arange, end: 64, dtype: $dtype}\n"
    "  - {out: xf, op: cast, a: x, dtype: fp32}\n"
    "  - {out: y, op: sin, a: xf}\n"
    "outputs:\n"
    "  - {name: y}\n";

static uint64_t reused_in(bp_backend_t *be, const bp_probe_t *p, bp_dtype_t dt)
{
    uint64_t r0 = be->elems_reused;
    release(p, run(be, p, dt));
    return be->elems_reused - r0;
}

static void reuse_cases(const char *name)
{
    bp_backend_t *be = open_be(name, true);
    bp_probe_t *rope = load_text("mini-rope", MINI_ROPE);
    bp_probe_t *zero = load_text("mini-zero", MINI_ZERO);
    bp_probe_t *exact = load_text("exact-cast", EXACT);

    ck_assert_uint_eq(reused_in(be, rope, BP_F32), 0);
    ck_assert_uint_eq(reused_in(be, rope, BP_BF16), MINI_ROPE_SHARED);
    ck_assert_uint_eq(reused_in(be, rope, BP_F16), MINI_ROPE_SHARED);
    /* The kept run's dtype again (--repeat): everything recomputed. */
    ck_assert_uint_eq(reused_in(be, rope, BP_F16), 0);
    ck_assert_uint_eq(reused_in(be, rope, BP_F32), MINI_ROPE_SHARED);

    /* Another probe forgets the kept run: nothing of rope is reused after. */
    ck_assert_uint_eq(reused_in(be, zero, BP_F32), 0);
    ck_assert_uint_eq(reused_in(be, zero, BP_BF16), MINI_ZERO_SHARED);
    ck_assert_uint_eq(reused_in(be, zero, BP_F16), MINI_ZERO_SHARED);
    ck_assert_uint_eq(reused_in(be, rope, BP_BF16), 0);

    ck_assert_uint_eq(reused_in(be, exact, BP_F32), 0);
    ck_assert_uint_eq(reused_in(be, exact, BP_BF16), 64);
    ck_assert_uint_eq(reused_in(be, exact, BP_F16), 64);

    /* Off again: nothing reused, nothing kept. */
    bp_error_t err = {0};
    ck_assert_int_eq(bp_backend_memo(be, false, &err), BP_OK);
    ck_assert_ptr_null(be->memo);
    ck_assert_uint_eq(reused_in(be, exact, BP_BF16), 0);

    bp_probe_free(rope);
    bp_probe_free(zero);
    bp_probe_free(exact);
    bp_backend_close(be);
}

START_TEST(t_reuse)
{
    reuse_cases(backends[_i]);
}
END_TEST

/* The small probes, with and without the memo, on each backend. */
START_TEST(t_small_identical)
{
    bp_backend_t *plain = open_be(backends[_i], false), *memo = open_be(backends[_i], true);
    const char *texts[][2] = {{"mini-rope", MINI_ROPE}, {"mini-zero", MINI_ZERO},
                              {"exact-cast", EXACT}};
    for (int k = 0; k < 3; k++) {
        bp_probe_t *p = load_text(texts[k][0], texts[k][1]);
        check_probe(plain, memo, p);
        bp_probe_free(p);
    }
    bp_backend_close(plain);
    bp_backend_close(memo);
}
END_TEST

Suite *memo_suite(void)
{
    Suite *s = suite_create("memo");
    TCase *reuse = tcase_create("reuse");
    tcase_add_checked_fixture(reuse, tmp_setup, tmp_teardown);
    tcase_add_loop_test(reuse, t_reuse, 0, NBACKENDS);
    tcase_add_loop_test(reuse, t_small_identical, 0, NBACKENDS);
    suite_add_tcase(s, reuse);
    TCase *shipped_tc = tcase_create("shipped");
    tcase_set_timeout(shipped_tc, 600);
    tcase_add_loop_test(shipped_tc, t_shipped, 0, NBACKENDS);
    suite_add_tcase(s, shipped_tc);
    return s;
}

int main(void)
{
#ifdef BP_MEMO_CUDA
    int skip = bp_test_cuda_suite("check_memo_cuda");
    if (skip >= 0)
        return skip;
#endif
    return test_run_suite(memo_suite());
}
