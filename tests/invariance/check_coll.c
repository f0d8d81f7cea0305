/* Collectives without a GPU: the size lists and configurations, the probe
 * layout against hand-derived values, and the order inference fed with
 * results the CPU emulation computes in known orders (rings with chosen
 * chunkings and channels, chains, pairwise trees, rank order, partial sums
 * kept wide): it must recover every order at every position, say where a
 * block straddles a change, and its inferred order must recompute the
 * values' bits.  Seeds are fixed (the messages print them). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include "coll.h"
#include "coll_emu.h"
#include "coll_map.h"
#include "coll_order.h"
#include "coll_run.h"

/* ---- sizes and configurations ----------------------------------------- */

START_TEST(t_bytes)
{
    static const struct {
        const char *s;
        uint64_t b;
    } ok[] = {{"1K", 1024},      {"4096", 4096},        {"1.5M", 1572864}, {"1G", 1ull << 30},
              {"64KiB", 65536},  {"256MB", 256u << 20}, {"3", 3},          {"2k", 2048}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t b = 0;
        ck_assert_msg(bp_coll_bytes_parse(ok[i].s, &b), "%s", ok[i].s);
        ck_assert_uint_eq(b, ok[i].b);
    }
    static const char *const bad[] = {"", "0", "-1K", "1.3", "K", "1X", "2T5", "1.0000001K",
                                      "2048G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t b;
        ck_assert_msg(!bp_coll_bytes_parse(bad[i], &b), "'%s' accepted", bad[i]);
    }
    char t[32];
    bp_coll_bytes_format(1024, t, sizeof t);
    ck_assert_str_eq(t, "1K");
    bp_coll_bytes_format(1572864, t, sizeof t);
    ck_assert_str_eq(t, "1.5M");
    bp_coll_bytes_format(25u << 20, t, sizeof t);
    ck_assert_str_eq(t, "25M");
    bp_coll_bytes_format(1000, t, sizeof t);
    ck_assert_str_eq(t, "1000");
    bp_coll_bytes_format(17039360, t, sizeof t); /* 1664 x 5120 x 2 */
    ck_assert_str_eq(t, "16640K");
}
END_TEST

START_TEST(t_sizes)
{
    bp_coll_size_t *v;
    size_t n;
    bp_error_t e;
    /* powers of two only: 1K .. 1M is 11 sizes */
    ck_assert_int_eq(bp_coll_sizes_parse("1K:1M:pow2", 4, &v, &n, &e), BP_OK);
    ck_assert_uint_eq(n, 11);
    ck_assert_uint_eq(v[0].bytes, 1024);
    ck_assert_uint_eq(v[10].bytes, 1u << 20);
    free(v);
    /* with the model sizes: fp32's 16 x 4096 partials are 256K (a power of
     * two, described), DDP's first bucket is 1M (described) */
    ck_assert_int_eq(bp_coll_sizes_parse("1K:1M", 4, &v, &n, &e), BP_OK);
    ck_assert_uint_eq(n, 11);
    ck_assert_ptr_nonnull(v[8].what);
    ck_assert_uint_eq(v[8].bytes, 256u << 10);
    ck_assert_ptr_nonnull(strstr(v[10].what, "DDP"));
    free(v);
    /* 1K..256M in bf16 adds the sizes that are not powers of two: 1664 x
     * 5120 (16640K), 2048 x 5120 (20M), 5120 x 4096 (40M), DDP's 25M,
     * 4096 x 11008 (86M), 40M and 50M elements (80M-ish, 100M-ish), 14336
     * x 4096 (112M) */
    ck_assert_int_eq(bp_coll_sizes_parse("1K:256M", 2, &v, &n, &e), BP_OK);
    size_t extra = 0;
    for (size_t i = 0; i < n; i++) {
        extra += (v[i].bytes & (v[i].bytes - 1)) != 0;
        ck_assert(i == 0 || v[i].bytes > v[i - 1].bytes);
    }
    ck_assert_uint_eq(n - extra, 19);
    ck_assert_uint_eq(extra, 8);
    free(v);
    /* a list, sorted and without repeats */
    ck_assert_int_eq(bp_coll_sizes_parse("4K,1K,4K,3000", 4, &v, &n, &e), BP_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(v[0].bytes, 1024);
    ck_assert_uint_eq(v[1].bytes, 3000);
    free(v);
    static const struct {
        const char *s, *msg;
    } bad[] = {{"1M:1K", "is not A:B"},          {"1K:2K:x2", "is not A:B"},
               {"banana", "'banana' is not a size"}, {"", "no size"},
               {"1K:", "is not A:B"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(bp_coll_sizes_parse(bad[i].s, 4, &v, &n, &e), BP_EINPUT);
        ck_assert_msg(strstr(e.msg, bad[i].msg), "'%s': %s", bad[i].s, e.msg);
    }
    ck_assert_uint_eq(bp_coll_elements(BP_COLL_ALL_REDUCE, 1000, 4, 3), 250);
    ck_assert_uint_eq(bp_coll_elements(BP_COLL_REDUCE_SCATTER, 1000, 4, 3), 249);
    ck_assert_uint_eq(bp_coll_elements(BP_COLL_ALL_GATHER, 6, 4, 4), 0);
}
END_TEST

START_TEST(t_cfg)
{
    bp_coll_cfg_t c;
    bp_error_t e;
    char t[64];
    ck_assert_int_eq(bp_coll_cfg_parse("ring/ll128/4ch/bucket=16M", &c, &e), BP_OK);
    ck_assert_str_eq(c.algo, "Ring");
    ck_assert_str_eq(c.proto, "LL128");
    ck_assert_int_eq(c.nch, 4);
    ck_assert_uint_eq(c.bucket, 16u << 20);
    bp_coll_cfg_name(&c, t, sizeof t);
    ck_assert_str_eq(t, "Ring/LL128/4ch/bucket=16M");
    ck_assert_int_eq(bp_coll_cfg_parse("default", &c, &e), BP_OK);
    bp_coll_cfg_name(&c, t, sizeof t);
    ck_assert_str_eq(t, "default");
    ck_assert_int_eq(bp_coll_cfg_parse("default/Simple", &c, &e), BP_OK);
    bp_coll_cfg_name(&c, t, sizeof t);
    ck_assert_str_eq(t, "default/Simple");
    static const struct {
        const char *s, *msg;
    } bad[] = {{"Wheel", "unknown algorithm 'Wheel'"},
               {"Ring/LL/LL128", "two protocols"},
               {"Ring/0ch", "is not a protocol"},
               {"Ring/bucket=x", "bucket= needs a size"},
               {"", "empty"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(bp_coll_cfg_parse(bad[i].s, &c, &e), BP_EINPUT);
        ck_assert_msg(strstr(e.msg, bad[i].msg), "'%s': %s", bad[i].s, e.msg);
    }
    bp_coll_cfg_t v[64];
    size_t n;
    /* default first, then 7 x 3 */
    ck_assert_int_eq(bp_coll_cfg_expand("all", "all", "default", v, 64, &n, &e), BP_OK);
    ck_assert_uint_eq(n, 22);
    bp_coll_cfg_name(&v[0], t, sizeof t);
    ck_assert_str_eq(t, "default");
    bp_coll_cfg_name(&v[1], t, sizeof t);
    ck_assert_str_eq(t, "Ring/LL");
    ck_assert_int_eq(bp_coll_cfg_expand("default,Tree", "default", "default,2", v, 64, &n,
                                        &e),
                     BP_OK);
    /* default, default/2ch, Tree, Tree/2ch */
    ck_assert_uint_eq(n, 4);
    bp_coll_cfg_name(&v[1], t, sizeof t);
    ck_assert_str_eq(t, "default/2ch");
    ck_assert_int_eq(bp_coll_cfg_expand("Ring", "LL", "0", v, 64, &n, &e), BP_EINPUT);
    ck_assert_int_eq(bp_coll_cfg_expand("Ring", "LL9", "1", v, 64, &n, &e), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(e.msg, "'LL9'"));
    bp_coll_kind_t k;
    ck_assert(bp_coll_kind_parse("AllReduce", &k) && k == BP_COLL_ALL_REDUCE);
    ck_assert(bp_coll_kind_parse("reduce-scatter", &k) && k == BP_COLL_REDUCE_SCATTER);
    ck_assert(!bp_coll_kind_parse("broadcast", &k));
}
END_TEST

/* ---- trees and probes --------------------------------------------------- */

START_TEST(t_trees)
{
    bp_coll_tree_t t;
    char s[BP_COLL_TREE_TEXT];
    int r[] = {1, 2, 3, 0};
    bp_coll_tree_chain(&t, 4, r);
    bp_coll_tree_format(&t, s, sizeof s);
    ck_assert_str_eq(s, "((r1+r2)+r3)+r0");
    bp_coll_tree_pairwise(&t, 4);
    bp_coll_tree_format(&t, s, sizeof s);
    ck_assert_str_eq(s, "(r0+r1)+(r2+r3)");
    bp_coll_tree_pairwise(&t, 8);
    bp_coll_tree_format(&t, s, sizeof s);
    ck_assert_str_eq(s, "((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))");
    /* 3 ranks pairwise: (r0 + r1) + r2 */
    bp_coll_tree_pairwise(&t, 3);
    bp_coll_tree_format(&t, s, sizeof s);
    ck_assert_str_eq(s, "(r0+r1)+r2");
    /* (2^24 + 1) + 1 in fp32 loses both ones; 1 + 1 first keeps them */
    float v[3] = {16777216.0f, 1.0f, 1.0f};
    int c1[] = {0, 1, 2}, c2[] = {1, 2, 0};
    bp_coll_tree_chain(&t, 3, c1);
    ck_assert(bp_coll_tree_eval(&t, v, BP_F32) == 16777216.0f);
    bp_coll_tree_chain(&t, 3, c2);
    ck_assert(bp_coll_tree_eval(&t, v, BP_F32) == 16777218.0f);
    /* bf16: 256 + 1 = 256 (8 bits), and kept wide it is 257, rounded once
     * at the end: 256 + 1 + 1 = 258 */
    float w[3] = {256.0f, 1.0f, 1.0f};
    bp_coll_tree_chain(&t, 3, c1);
    ck_assert(bp_coll_tree_eval(&t, w, BP_BF16) == 256.0f);
    t.prec[0] = 24;
    ck_assert(bp_coll_tree_eval(&t, w, BP_BF16) == 258.0f);
    /* single rounding where fp32 then bf16 would round twice: 1 + 2^-8 +
     * 2^-24 is above the tie, so bf16 gives 1 + 2^-7 */
    ck_assert(bp_coll_round(BP_BF16, 1.0 + 0x1p-8 + 0x1p-24) == 1.0 + 0x1p-7);
    ck_assert(bp_coll_round(BP_BF16, 1.0 + 0x1p-8) == 1.0);
    ck_assert(bp_coll_round(BP_F16, 0x1p-25) == 0.0);      /* half the least subnormal: even */
    ck_assert(bp_coll_round(BP_F16, 0x1.8p-24) == 0x1p-23); /* 1.5 quanta: even */
}
END_TEST

START_TEST(t_probe_layout)
{
    /* W = 3: one triple (0, 1, 2); fp32 one level (k = 26): s on z, y, x */
    ck_assert_uint_eq(bp_coll_probe_block(BP_F32, 3), 3);
    ck_assert_uint_eq(bp_coll_probe_block(BP_BF16, 3), 6);
    ck_assert_uint_eq(bp_coll_probe_block(BP_F32, 4), 12);
    ck_assert_uint_eq(bp_coll_probe_block(BP_BF16, 8), 336);
    ck_assert_uint_eq(bp_coll_probe_block(BP_F32, 2), 0);
    static const double want[3][3] = {{1, -1, 0x1p-26}, {1, 0x1p-26, -1}, {0x1p-26, 1, -1}};
    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 3; r++)
            ck_assert_msg(bp_coll_probe_value(BP_F32, 3, r, (uint64_t)i + 3) == want[i][r],
                          "element %d rank %d", i, r);
    /* bf16: level k = 10 first, then 26 */
    ck_assert(bp_coll_probe_value(BP_BF16, 3, 2, 0) == 0x1p-10);
    ck_assert(bp_coll_probe_value(BP_BF16, 3, 2, 3) == 0x1p-26);
    /* fp16: B = 1024, s = 2^(10 - 13) */
    ck_assert(bp_coll_probe_value(BP_F16, 3, 2, 0) == 0.125);
    ck_assert(bp_coll_probe_value(BP_F16, 3, 0, 0) == 1024);
    ck_assert(bp_coll_probe_value(BP_F16, 3, 2, 3) == 0x1p-16);
    /* W = 4, triple 3 is (1, 2, 3): element 9 puts s on z = 3 */
    ck_assert(bp_coll_probe_value(BP_F32, 4, 3, 9) == 0x1p-26);
    ck_assert(bp_coll_probe_value(BP_F32, 4, 1, 9) == 1);
    ck_assert(bp_coll_probe_value(BP_F32, 4, 2, 9) == -1);
    ck_assert(bp_coll_probe_value(BP_F32, 4, 0, 9) == 0);
    /* the tiled input equals the element-wise values */
    uint16_t in[1000];
    bp_coll_input(BP_COLL_PROBES, BP_BF16, 5, 3, 0, 17, 1000, in);
    for (int i = 0; i < 1000; i++)
        ck_assert(bp_dtype_bits_to_double(BP_BF16, in[i]) ==
                  bp_coll_probe_value(BP_BF16, 5, 3, 17 + (uint64_t)i));
}
END_TEST

/* ---- the inference against the emulation ------------------------------- */

static void *run_emu(const bp_coll_emu_t *m, bp_coll_kind_t k, bp_coll_redop_t op,
                     bp_dtype_t dt, int W, bp_coll_input_t in, uint64_t n)
{
    size_t es = bp_dtype_info(dt)->size;
    void *out = malloc((size_t)n * es);
    char *x = malloc((size_t)W * (size_t)n * es);
    const void *ins[BP_COLL_ORDER_MAX];
    for (int r = 0; r < W; r++) {
        bp_coll_input(in, dt, W, r, 7, 0, n, x + (size_t)r * n * es);
        ins[r] = x + (size_t)r * n * es;
    }
    bp_error_t e;
    ck_assert_int_eq(bp_coll_emu_run(m, k, op, dt, W, ins, n, out, &e), BP_OK);
    free(x);
    return out;
}

/* The order checked against the values at every element (or a spread). */
static void verify(const bp_coll_order_t *o, bp_coll_redop_t op, const void *vals,
                   uint64_t n, uint64_t *checked, uint64_t *same)
{
    int W = o->world;
    size_t ns = n < 8192 ? (size_t)n : 8192;
    uint64_t *idx = malloc(ns * sizeof *idx);
    double *in = malloc(ns * (size_t)W * sizeof *in);
    for (size_t k = 0; k < ns; k++) {
        idx[k] = k * n / ns;
        for (int r = 0; r < W; r++) {
            uint32_t b = 0;
            bp_coll_input(BP_COLL_VALUES, o->dtype, W, r, 7, idx[k], 1, &b);
            in[k * (size_t)W + (size_t)r] = bp_dtype_bits_to_double(o->dtype, b);
        }
    }
    bp_coll_order_verify(o, op, idx, ns, in, vals, checked, same);
    free(idx);
    free(in);
}

/* Every probed element's inferred order equals the model's. */
static void recovers(const bp_coll_emu_t *m, bp_coll_kind_t k, bp_coll_redop_t op,
                     bp_dtype_t dt, int W, uint64_t n, bool expect_mixed)
{
    void *res = run_emu(m, k, op, dt, W, BP_COLL_PROBES, n);
    bp_coll_order_t o;
    bp_error_t e;
    ck_assert_int_eq(bp_coll_order_infer(dt, W, res, n, &o, &e), BP_OK);
    ck_assert_msg(o.done, "%s", o.why);
    uint64_t wrong = 0, mixed = 0;
    for (uint64_t i = 0; i < o.probed; i++) {
        int q = bp_coll_order_at(&o, i);
        bp_coll_tree_t t;
        char want[BP_COLL_TREE_TEXT];
        bp_coll_emu_tree(m, W, bp_coll_emu_piece(m, k, W, i, n), &t);
        bp_coll_tree_format(&t, want, sizeof want);
        if (q < 0) {
            mixed++;
            continue;
        }
        int alt = bp_coll_order_alt(&o, i);
        if (strcmp(o.ords[q].text, want) && (alt < 0 || strcmp(o.ords[alt].text, want)))
            wrong++;
    }
    ck_assert_msg(!wrong, "W=%d %s algo %d chunk %llu: %llu elements with another order",
                  W, bp_dtype_name(dt), m->algo, (unsigned long long)m->chunk,
                  (unsigned long long)wrong);
    if (!expect_mixed)
        ck_assert_msg(!mixed && !o.mixed, "W=%d %s: %llu mixed", W, bp_dtype_name(dt),
                      (unsigned long long)mixed);
    for (size_t i = 0; i < o.nords; i++)
        ck_assert_msg(strstr(o.ords[i].width, m->wide ? "kept wider" : "every partial sum "
                                                                     "rounded"),
                      "%s: %s", o.ords[i].text, o.ords[i].width);
    /* the inferred order recomputes the values' bits */
    void *vals = run_emu(m, k, op, dt, W, BP_COLL_VALUES, n);
    uint64_t checked, same;
    verify(&o, op, vals, n, &checked, &same);
    ck_assert_uint_gt(checked, 0);
    ck_assert_msg(same == checked, "W=%d %s: %llu of %llu recomputed", W, bp_dtype_name(dt),
                  (unsigned long long)same, (unsigned long long)checked);
    bp_coll_order_free(&o);
    free(res);
    free(vals);
}

START_TEST(t_infer_known_orders)
{
    static const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16};
    static const int worlds[] = {3, 4, 5, 8};
    for (int d = 0; d < 3; d++)
        for (int w = 0; w < 4; w++) {
            int W = worlds[w];
            uint64_t q = bp_coll_probe_block(dts[d], W);
            /* rings whose pieces are whole blocks: 2 channels, 3 blocks a
             * piece; one piece of 1 block; the textbook ring in W parts */
            bp_coll_emu_t ring2 = {BP_EMU_RING, 2, 3 * q, false};
            bp_coll_emu_t ring1 = {BP_EMU_RING, 1, q, false};
            bp_coll_emu_t chain = {BP_EMU_CHAIN, 1, 0, false};
            bp_coll_emu_t pair = {BP_EMU_PAIRWISE, 1, 0, false};
            bp_coll_emu_t rank = {BP_EMU_RANK, 1, 0, false};
            uint64_t n = q * (uint64_t)W * 12;
            recovers(&ring2, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dts[d], W, n, false);
            recovers(&ring1, BP_COLL_ALL_REDUCE, BP_COLL_AVG, dts[d], W, n + 5, false);
            recovers(&chain, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dts[d], W, q * 3, false);
            recovers(&pair, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dts[d], W, q * 3, false);
            recovers(&rank, BP_COLL_ALL_REDUCE, BP_COLL_AVG, dts[d], W, q * 3, false);
            /* reduce-scatter: the owner's chain */
            recovers(&ring2, BP_COLL_REDUCE_SCATTER, BP_COLL_SUM, dts[d], W, n, false);
        }
}
END_TEST

START_TEST(t_infer_ring_pieces)
{
    /* W = 4, fp32: 4 orders, the chains starting at c + 1, in runs of one
     * piece (q = 12 elements, pieces of 24) */
    bp_coll_emu_t ring = {BP_EMU_RING, 1, 24, false};
    void *res = run_emu(&ring, BP_COLL_ALL_REDUCE, BP_COLL_SUM, BP_F32, 4, BP_COLL_PROBES, 960);
    bp_coll_order_t o;
    bp_error_t e;
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 4, res, 960, &o, &e), BP_OK);
    ck_assert_uint_eq(o.nords, 4);
    ck_assert_str_eq(o.ords[0].text, "((r1+r2)+r3)+r0");
    ck_assert_str_eq(o.ords[1].text, "((r2+r3)+r0)+r1");
    ck_assert_str_eq(o.ords[3].text, "((r0+r1)+r2)+r3");
    ck_assert_uint_eq(o.nruns, 40);
    ck_assert_uint_eq(o.runs[1].first, 24);
    ck_assert_uint_eq(o.runs[1].count, 24);
    ck_assert_str_eq(o.ords[0].width, "every partial sum rounded to fp32");
    char s[512];
    bp_coll_order_summary(&o, s, sizeof s);
    ck_assert_msg(strstr(s, "4 orders in 40 runs of 24 elements"), "%s", s);
    bp_coll_order_set(&o, s, sizeof s);
    ck_assert_str_eq(s, "((r0+r1)+r2)+r3; ((r0+r3)+r1)+r2; ((r1+r2)+r3)+r0; "
                        "((r2+r3)+r0)+r1");
    bp_coll_order_free(&o);
    free(res);
}
END_TEST

START_TEST(t_infer_straddle)
{
    /* pieces of 18 elements against blocks of 12: every other block holds
     * a change; the inference says so rather than guessing */
    bp_coll_emu_t ring = {BP_EMU_RING, 1, 18, false};
    recovers(&ring, BP_COLL_ALL_REDUCE, BP_COLL_SUM, BP_F32, 4, 720, true);
    void *res = run_emu(&ring, BP_COLL_ALL_REDUCE, BP_COLL_SUM, BP_F32, 4, BP_COLL_PROBES, 720);
    bp_coll_order_t o;
    bp_error_t e;
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 4, res, 720, &o, &e), BP_OK);
    /* the changes found inside the blocks: runs of 18, no mixed block,
     * no order invented by a straddling block */
    ck_assert_uint_eq(o.mixed, 0);
    ck_assert_uint_eq(o.nords, 4);
    ck_assert_uint_eq(o.nruns, 40);
    for (size_t k = 1; k < o.nruns; k++)
        ck_assert_msg(o.runs[k].first - o.runs[k].amb_lo <= 18 * k &&
                          o.runs[k].first + o.runs[k].amb_hi >= 18 * k,
                      "run %zu at %llu (-%llu, +%llu)", k, (unsigned long long)o.runs[k].first,
                      (unsigned long long)o.runs[k].amb_lo,
                      (unsigned long long)o.runs[k].amb_hi);
    bp_coll_order_free(&o);
    free(res);
}
END_TEST

START_TEST(t_infer_wide)
{
    /* bf16 partial sums kept in fp32: the order from fp32's level, the
     * width named; fp16 likewise */
    for (int d = 0; d < 2; d++) {
        bp_dtype_t dt = d ? BP_F16 : BP_BF16;
        uint64_t q = bp_coll_probe_block(dt, 4);
        bp_coll_emu_t chain = {BP_EMU_CHAIN, 1, 0, true};
        recovers(&chain, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dt, 4, q * 2, false);
        void *res = run_emu(&chain, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dt, 4, BP_COLL_PROBES,
                            q * 2);
        bp_coll_order_t o;
        bp_error_t e;
        ck_assert_int_eq(bp_coll_order_infer(dt, 4, res, q * 2, &o, &e), BP_OK);
        ck_assert_uint_eq(o.nords, 1);
        ck_assert_str_eq(o.ords[0].text, "((r2+r3)+r1)+r0");
        ck_assert_msg(strstr(o.ords[0].width, "(r2+r3)") && strstr(o.ords[0].width, "fp32"),
                      "%s", o.ords[0].width);
        bp_coll_order_free(&o);
        free(res);
    }
}
END_TEST

START_TEST(t_infer_edges)
{
    bp_coll_order_t o;
    bp_error_t e;
    float one[4] = {0};
    /* two ranks: one addition */
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 2, one, 4, &o, &e), BP_OK);
    ck_assert(o.done);
    ck_assert_str_eq(o.ords[0].text, "r0+r1");
    bp_coll_order_free(&o);
    /* shorter than a block */
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 4, one, 4, &o, &e), BP_OK);
    ck_assert(!o.done);
    ck_assert_ptr_nonnull(strstr(o.why, "shorter than one probe block (12 elements)"));
    bp_coll_order_free(&o);
    /* every probe survived: an exact sum */
    float all[12];
    for (int i = 0; i < 12; i++)
        all[i] = 0x1p-26f;
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 4, all, 12, &o, &e), BP_OK);
    ck_assert_uint_eq(o.nords, 1);
    ck_assert_int_eq(o.ords[0].kind, BP_ORD_EXACT);
    bp_coll_order_free(&o);
    /* nothing survived: no tree fits */
    float none[12] = {0};
    ck_assert_int_eq(bp_coll_order_infer(BP_F32, 4, none, 12, &o, &e), BP_OK);
    ck_assert_uint_eq(o.nords, 0);
    ck_assert_uint_eq(o.mixed, 12);
    bp_coll_order_free(&o);
}
END_TEST

START_TEST(t_verify_tells_orders_apart)
{
    /* Ring's bits recomputed with the chain's order: many elements differ */
    bp_coll_emu_t ring = {BP_EMU_RING, 1, 0, false}, chain = {BP_EMU_CHAIN, 1, 0, false};
    uint64_t n = 4800;
    void *probe = run_emu(&chain, BP_COLL_ALL_REDUCE, BP_COLL_SUM, BP_BF16, 4, BP_COLL_PROBES, n);
    void *vals = run_emu(&ring, BP_COLL_ALL_REDUCE, BP_COLL_SUM, BP_BF16, 4, BP_COLL_VALUES, n);
    bp_coll_order_t o;
    bp_error_t e;
    ck_assert_int_eq(bp_coll_order_infer(BP_BF16, 4, probe, n, &o, &e), BP_OK);
    uint64_t checked, same;
    verify(&o, BP_COLL_SUM, vals, n, &checked, &same);
    ck_assert_uint_eq(checked, n);
    ck_assert_uint_lt(same, checked * 95 / 100);
    bp_coll_order_free(&o);
    free(probe);
    free(vals);
}
END_TEST

/* ---- maps from the emulation's sweep ------------------------------------- */

/* The exact sum of the ranks' values at element i, rounded once to dt,
 * with MPFR here (not the map's code). */
static uint64_t exact_at(bp_dtype_t dt, int W, bp_coll_redop_t op, uint64_t i)
{
    mpfr_t s, t;
    mpfr_inits2(400, s, t, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (int r = 0; r < W; r++) {
        uint32_t b = 0;
        bp_coll_input(BP_COLL_VALUES, dt, W, r, 7, i, 1, &b);
        mpfr_set_d(t, bp_dtype_bits_to_double(dt, b), MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    if (op == BP_COLL_AVG)
        mpfr_div_ui(s, s, (unsigned long)W, MPFR_RNDN);
    /* the values are normal numbers near 1: no subnormal, no overflow */
    mpfr_prec_round(s, dt == BP_F32 ? 24 : dt == BP_BF16 ? 8 : 11, MPFR_RNDN);
    uint64_t bits = bp_dtype_bits_from_double(dt, mpfr_get_d(s, MPFR_RNDN));
    mpfr_clears(s, t, (mpfr_ptr)0);
    return bits;
}

START_TEST(t_map_from_sweep)
{
    static const bp_dtype_t dts[] = {BP_F32, BP_BF16};
    for (int d = 0; d < 2; d++) {
        bp_dtype_t dt = dts[d];
        size_t es = bp_dtype_info(dt)->size;
        bp_coll_engine_t *e;
        bp_error_t err;
        ck_assert_int_eq(bp_coll_engine_emulate(4, 7, &e, &err), BP_OK);
        bp_coll_cfg_t cfg[4];
        size_t nc;
        ck_assert_int_eq(bp_coll_cfg_expand("Ring,Tree", "LL,Simple", "default", cfg, 4, &nc,
                                            &err),
                         BP_EINPUT); /* 5 configurations do not fit in 4 */
        ck_assert_int_eq(bp_coll_cfg_expand("Ring,Tree", "LL", "default", cfg, 4, &nc, &err),
                         BP_OK);
        ck_assert_uint_eq(nc, 3); /* default, Ring/LL, Tree/LL */
        bp_coll_sweep_opts_t o = {.kinds = {BP_COLL_ALL_REDUCE}, .nkinds = 1,
                                  .dtypes = {dt}, .ndtypes = 1, .ops = {BP_COLL_SUM},
                                  .nops = 1, .bytes = "2K:32K:pow2", .cfg = cfg, .ncfg = nc,
                                  .repeat = 2, .probe = true};
        bp_policy_exact(&o.policy);
        bp_coll_map_t *maps;
        size_t nm;
        ck_assert_int_eq(bp_coll_sweep(e, &o, &maps, &nm, &err), BP_OK);
        ck_assert_uint_eq(nm, 1);
        bp_coll_map_t *m = &maps[0];
        ck_assert_int_eq(bp_coll_map_arbitrate(m, true, 1, &err), BP_OK);
        /* the groups hold exactly the configurations with equal bytes, and
         * group k's count of differing elements is the count here */
        for (size_t s = 0; s < m->nsizes; s++) {
            uint64_t n = m->sz[s].n;
            void *res[3];
            for (size_t c = 0; c < nc; c++) {
                bp_coll_emu_t em;
                char desc[128];
                ck_assert_int_eq(bp_coll_emu_for(&cfg[c], dt, &em, desc, sizeof desc, &err),
                                 BP_OK);
                res[c] = run_emu(&em, BP_COLL_ALL_REDUCE, BP_COLL_SUM, dt, 4, BP_COLL_VALUES, n);
            }
            for (size_t a = 0; a < nc; a++)
                for (size_t b = 0; b < nc; b++) {
                    bool same = !memcmp(res[a], res[b], (size_t)n * es);
                    ck_assert_msg(same == (bp_coll_cell(m, s, a)->group ==
                                           bp_coll_cell(m, s, b)->group),
                                  "%s size %zu: configurations %zu and %zu", bp_dtype_name(dt),
                                  s, a, b);
                }
            for (size_t g = 1; g < m->sz[s].ng; g++) {
                size_t c = (size_t)m->sz[s].g[g].first, differ = 0;
                for (uint64_t i = 0; i < n; i++)
                    differ += bp_dtype_load_bits(dt, res[0], (size_t)i) !=
                              bp_dtype_load_bits(dt, res[c], (size_t)i);
                ck_assert_uint_eq(m->sz[s].g[g].cmp.mismatched, differ);
                ck_assert(!m->sz[s].g[g].cmp.pass);
            }
            /* the oracle's values against MPFR here */
            const bp_coll_slot_t *z = &m->sz[s];
            ck_assert_ptr_nonnull(z->exact);
            for (size_t k = 0; k < z->ns; k += 7)
                ck_assert_msg(bp_dtype_load_bits(dt, z->exact, k) ==
                                  exact_at(dt, 4, BP_COLL_SUM, z->sidx[k]),
                              "%s: the oracle at element %llu", bp_dtype_name(dt),
                              (unsigned long long)z->sidx[k]);
            for (size_t c = 0; c < nc; c++) {
                const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
                ck_assert_int_eq(x->state, BP_CELL_RAN);
                ck_assert_uint_eq(x->repeats, 2);
                ck_assert_uint_eq(x->repeat_differ, 0);
                ck_assert_uint_eq(x->verify_same, x->verify_checked);
                ck_assert_uint_gt(x->verify_checked, 0);
                free(res[c]);
            }
        }
        /* Tree's chain differs from the one-piece ring at every size; LL's
         * 4K pieces make Ring/LL differ from 8K on */
        ck_assert(bp_coll_same_partition(m, 0, 1));
        ck_assert(!bp_coll_same_partition(m, 1, 2));
        ck_assert(bp_coll_order_changes(m, 2, 1));
        ck_assert(!bp_coll_map_pass(m));
        /* a fresh process with one other digest is counted against its cell */
        size_t n = bp_coll_map_ncells(m);
        uint64_t *dg = malloc(n * sizeof *dg);
        bp_coll_map_digests(m, dg);
        ck_assert_uint_eq(bp_coll_map_check_digests(m, dg), 0);
        dg[4] ^= 1;
        ck_assert_uint_eq(bp_coll_map_check_digests(m, dg), 1);
        ck_assert_uint_eq(m->cell[4].processes, 2);
        ck_assert_uint_eq(m->cell[4].process_differ, 1);
        ck_assert_uint_eq(bp_coll_map_unstable(m), 1);
        free(dg);
        bp_coll_map_finish(m);
        bp_coll_map_free(m);
        free(maps);
        bp_coll_engine_close(e);
    }
}
END_TEST

START_TEST(t_map_two_ranks_pass)
{
    /* one addition: every configuration gives the same bits, the map
     * passes; an all-gather is a copy */
    bp_coll_engine_t *e;
    bp_error_t err;
    ck_assert_int_eq(bp_coll_engine_emulate(2, 3, &e, &err), BP_OK);
    bp_coll_cfg_t cfg[8];
    size_t nc;
    ck_assert_int_eq(bp_coll_cfg_expand("Ring,Tree", "LL,Simple", "default", cfg, 8, &nc, &err),
                     BP_OK);
    bp_coll_sweep_opts_t o = {.kinds = {BP_COLL_ALL_REDUCE, BP_COLL_ALL_GATHER}, .nkinds = 2,
                              .dtypes = {BP_F16}, .ndtypes = 1, .ops = {BP_COLL_AVG},
                              .nops = 1, .bytes = "1K:64K", .cfg = cfg, .ncfg = nc,
                              .repeat = 1, .probe = true};
    bp_policy_exact(&o.policy);
    bp_coll_map_t *maps;
    size_t nm;
    ck_assert_int_eq(bp_coll_sweep(e, &o, &maps, &nm, &err), BP_OK);
    ck_assert_uint_eq(nm, 2);
    for (size_t i = 0; i < nm; i++) {
        ck_assert(bp_coll_map_pass(&maps[i]));
        for (size_t s = 0; s < maps[i].nsizes; s++) {
            ck_assert_uint_eq(maps[i].sz[s].ng, 1);
            /* the one addition recomputes the values (avg: halves first) */
            for (size_t c = 0; maps[i].kind == BP_COLL_ALL_REDUCE && c < nc; c++) {
                const bp_coll_cell_t *x = bp_coll_cell(&maps[i], s, c);
                ck_assert_uint_gt(x->verify_checked, 0);
                ck_assert_uint_eq(x->verify_same, x->verify_checked);
            }
        }
        bp_coll_map_free(&maps[i]);
    }
    free(maps);
    bp_coll_engine_close(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_bytes);
    tcase_add_test(tc, t_sizes);
    tcase_add_test(tc, t_cfg);
    tcase_add_test(tc, t_trees);
    tcase_add_test(tc, t_probe_layout);
    tcase_add_test(tc, t_infer_known_orders);
    tcase_add_test(tc, t_infer_ring_pieces);
    tcase_add_test(tc, t_infer_straddle);
    tcase_add_test(tc, t_infer_wide);
    tcase_add_test(tc, t_infer_edges);
    tcase_add_test(tc, t_verify_tells_orders_apart);
    tcase_add_test(tc, t_map_from_sweep);
    tcase_add_test(tc, t_map_two_ranks_pass);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
