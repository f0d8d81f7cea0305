/* MKL's sgemm orders as the CPU backend replays them (mkl_sgemm.h), MKL's
 * code path (mkl_isa.h) and the operand layouts that pick the BLAS call
 * (bp_probe_gemm_layout), against bits derived by hand.
 *
 * The cancellation rows hold s = 2^-30 everywhere but +2^30 at p and
 * -2^30 at q, times ones: a partial sum that holds a spike absorbs every
 * s added to it (2^30 + 2^-30 rounds to 2^30), and the result counts, in
 * units of s, the small terms added where no spike is, exactly.  Worked
 * by hand for each order:
 *   panels, K = 1024 (panels [0,384) [384,704) [704,1024)):
 *     p 64, q 512: panel 0 sums to 2^30, panel 1 to -2^30, C = 0, panel 2
 *       adds 320 -> 320 (PyTorch 2.11 gave 320);
 *     p 384, q 512: panel 0 is 384, panel 1 cancels at 512 then takes
 *       513..703 (191), panel 2 320 -> 895 (PyTorch: 895);
 *     p 0, q 1: everything after 1 in panel 0 (382), then 640 -> 1022;
 *     k ascending alone (bitprobe's own order) gives 1023 - max(p, q):
 *       511, 511, 1022.
 *   dot16, K = 256 (lane k mod 16, 16 terms a lane; quarters Q0 = lanes
 *   0-3 ..., lane j of q = ((l[j] + l[4+j]) + l[8+j]) + l[12+j], then
 *   (q0 + q1) + (q2 + q3)):
 *     p 0, q 16 (both lane 0): lane 0 cancels at 16, keeps 32..240 (14);
 *       the 15 other lanes 240 -> 254 (k ascending: 239);
 *     p 0, q 1: q0 = 2^30, q1 = -2^30 (their 48 s each absorbed), q2 and
 *       q3 64 each -> 0 + 128 = 128;
 *     p 0, q 2: q0 + q1 = 2^30, q2 + q3 = -2^30 -> 0;
 *     p 0, q 4: q0 = (2^30 - 2^30) + 16 + 16 = 32, q1..q3 64 -> 224. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "mkl_isa.h"
#include "mkl_sgemm.h"
#include "probe.h"
#include "test_files.h"

static const float S = 0x1p-30f;

static void spike_row(float *a, size_t k, size_t p, size_t q)
{
    for (size_t i = 0; i < k; i++)
        a[i] = S;
    a[p] = 0x1p30f;
    a[q] = -0x1p30f;
}

static float count(bp_mkl_order_t o, size_t k, size_t p, size_t q)
{
    float *a = malloc(k * sizeof *a), *b = malloc(k * sizeof *b);
    ck_assert(a && b);
    spike_row(a, k, p, q);
    for (size_t i = 0; i < k; i++)
        b[i] = 1.0f;
    float r = bp_mkl_sgemm_dot(o, k, a, 1, b, 1, NULL) / S;
    free(a);
    free(b);
    return r;
}

START_TEST(t_panels)
{
    size_t st[64];
    static const struct {
        size_t k, n, prev, last; /* panels, the last two's starts */
    } c[] = {
        {16, 1, 0, 0},          {384, 1, 0, 0},           {512, 2, 0, 256},
        {768, 2, 0, 384},       {1024, 3, 384, 704},      {4096, 11, 3456, 3776},
        {16384, 43, 15744, 16064},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = bp_mkl_panels(c[i].k, st, 64);
        ck_assert_msg(n == c[i].n, "K %zu: %zu panels", c[i].k, n);
        ck_assert_uint_eq(st[0], 0);
        ck_assert_msg(st[n - 1] == c[i].last, "K %zu: last panel at %zu", c[i].k, st[n - 1]);
        ck_assert_msg(n < 2 || st[n - 2] == c[i].prev, "K %zu: panel before it at %zu", c[i].k,
                      st[n - 2]);
        for (size_t j = 1; j + 1 < n; j++)
            ck_assert_uint_eq(st[j] - st[j - 1], 384);
    }
    /* 385: a remainder of 1 is not a measured class, but the rule cuts it
     * as 384 + 1 -> two halves of 192 and 193 */
    ck_assert_uint_eq(bp_mkl_panels(385, st, 64), 2);
    ck_assert_uint_eq(st[1], 192);
}
END_TEST

START_TEST(t_panels_spikes)
{
    ck_assert_float_eq(count(BP_MKL_PANELS, 1024, 64, 512), 320.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 1024, 384, 512), 895.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 1024, 0, 1), 1022.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 1024, 400, 0), 320.0f);
    /* K = 4096: panels of 384 to 3456, then 3456-3775 and 3776-4095:
     * with q 0 (panel 0 sums to -2^30), p in a panel makes that panel
     * 2^30 and C 0, and only the panels after it count: p 3456 leaves
     * 320.  K = 16384 (41 panels of 384, then 15744-16063, 16064-16383):
     * p 15616 leaves 640, 15872 320, 16128 0 (PyTorch 2.11's counts for
     * those rows) */
    ck_assert_float_eq(count(BP_MKL_PANELS, 4096, 3456, 0), 320.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 4096, 3455, 0), 640.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 16384, 15616, 0), 640.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 16384, 15872, 0), 320.0f);
    ck_assert_float_eq(count(BP_MKL_PANELS, 16384, 16128, 0), 0.0f);
    /* one panel: k ascending */
    ck_assert_float_eq(count(BP_MKL_PANELS, 256, 12, 7), 243.0f);
}
END_TEST

START_TEST(t_dot16_spikes)
{
    ck_assert_float_eq(count(BP_MKL_DOT16, 256, 0, 16), 254.0f);
    ck_assert_float_eq(count(BP_MKL_DOT16, 256, 0, 1), 128.0f);
    ck_assert_float_eq(count(BP_MKL_DOT16, 256, 0, 2), 0.0f);
    ck_assert_float_eq(count(BP_MKL_DOT16, 256, 0, 4), 224.0f);
    ck_assert_float_eq(count(BP_MKL_DOT16, 256, 1, 3), 0.0f);
}
END_TEST

/* Values whose rounding shows the tree: lanes 0 and 1 hold 1 and
 * 2^-24 (their sum rounds to 1), lanes 2 and 3 the same, so (l0 + l1) +
 * (l2 + l3) = 2 while a sum that meets both small ones first keeps them:
 * lanes in order give ((1 + 2^-24) + 1) + 2^-24 = 2 too, but (l1 + l3) +
 * (l0 + l2) = 2^-23 + 2 = 2 + 2^-23 (exact in fp32). */
START_TEST(t_dot16_tree)
{
    float a[16] = {0}, b[16];
    for (int i = 0; i < 16; i++)
        b[i] = 1.0f;
    a[0] = 1.0f;
    a[1] = 0x1p-24f;
    a[2] = 1.0f;
    a[3] = 0x1p-24f;
    ck_assert_float_eq(bp_mkl_sgemm_dot(BP_MKL_DOT16, 16, a, 1, b, 1, NULL), 2.0f);
    /* quarters in order before the pairs: lane 0 gets 1, lane 4 the
     * small one: q0 = 1 + 2^-24 = 1; q1 (lanes 1, 5) 2^-24 + 2^-24 =
     * 2^-23; (q0 + q1) = 1 + 2^-23 exactly */
    memset(a, 0, sizeof a);
    a[0] = 1.0f;
    a[4] = 0x1p-24f;
    a[1] = 0x1p-24f;
    a[5] = 0x1p-24f;
    ck_assert_float_eq(bp_mkl_sgemm_dot(BP_MKL_DOT16, 16, a, 1, b, 1, NULL), 1.0f + 0x1p-23f);
    /* strides: b read down a column of a row-major [16, 3] */
    float bm[48];
    for (int i = 0; i < 48; i++)
        bm[i] = (i % 3 == 1) ? 1.0f : 0.0f;
    ck_assert_float_eq(bp_mkl_sgemm_dot(BP_MKL_DOT16, 16, a, 1, bm + 1, 3, NULL), 1.0f + 0x1p-23f);
}
END_TEST

START_TEST(t_classes)
{
    static const struct {
        bp_mkl_isa_t isa;
        bool ta;
        int64_t m, n, k;
        bp_mkl_order_t o;
    } c[] = {
        /* 'N','N': M (n) 1..64, N (m) 4..64, K measured */
        {BP_MKL_AVX512, false, 8, 1, 64, BP_MKL_PANELS},
        {BP_MKL_AVX512, false, 8, 1, 1024, BP_MKL_UNFITTED}, /* one row: gemv? */
        {BP_MKL_AVX512, false, 4, 2, 16384, BP_MKL_PANELS},
        {BP_MKL_AVX512, false, 64, 64, 512, BP_MKL_PANELS},
        {BP_MKL_AVX512, false, 32, 16, 1024, BP_MKL_PANELS},
        {BP_MKL_AVX512, false, 32, 16, 768, BP_MKL_UNFITTED},  /* K % 384 = 0 */
        {BP_MKL_AVX512, false, 32, 16, 1000, BP_MKL_UNFITTED}, /* 232 */
        {BP_MKL_AVX512, false, 128, 16, 1024, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, false, 2, 16, 1024, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, false, 32, 65, 1024, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, false, 32, 16, 16768, BP_MKL_UNFITTED},
        /* 'T','N': M 16..64 panels, 2..4 dot16, 1 and 5..15 not known */
        {BP_MKL_AVX512, true, 32, 16, 1024, BP_MKL_PANELS},
        {BP_MKL_AVX512, true, 64, 64, 512, BP_MKL_PANELS},
        {BP_MKL_AVX512, true, 16, 4, 256, BP_MKL_DOT16},
        {BP_MKL_AVX512, true, 4, 2, 16384, BP_MKL_DOT16},
        {BP_MKL_AVX512, true, 8, 3, 4096, BP_MKL_DOT16},
        {BP_MKL_AVX512, true, 8, 3, 4100, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, true, 32, 3, 4096, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, true, 8, 1, 64, BP_MKL_UNFITTED},
        {BP_MKL_AVX512, true, 8, 8, 1024, BP_MKL_UNFITTED},
        /* other paths, transposed x */
        {BP_MKL_AVX2, false, 8, 1, 64, BP_MKL_UNFITTED},
        {BP_MKL_CNR, true, 32, 16, 1024, BP_MKL_UNFITTED},
        {BP_MKL_SSE42, true, 16, 4, 256, BP_MKL_UNFITTED},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        bp_mkl_order_t o = bp_mkl_sgemm_order(c[i].isa, c[i].ta, false, c[i].m, c[i].n, c[i].k);
        ck_assert_msg(o == c[i].o, "case %zu (%s %c m %lld n %lld k %lld): %s, not %s", i,
                      bp_mkl_isa_name(c[i].isa), c[i].ta ? 'T' : 'N', (long long)c[i].m,
                      (long long)c[i].n, (long long)c[i].k, bp_mkl_order_name(o),
                      bp_mkl_order_name(c[i].o));
    }
    ck_assert_int_eq(bp_mkl_sgemm_order(BP_MKL_AVX512, false, true, 8, 8, 64), BP_MKL_UNFITTED);
}
END_TEST

START_TEST(t_isa)
{
    static const char *const ok[] = {"auto", "cnr", "sse42", "avx2", "avx512"};
    for (int i = 0; i < 5; i++) {
        bp_mkl_isa_t v;
        ck_assert(bp_mkl_isa_parse(ok[i], &v));
        ck_assert_str_eq(bp_mkl_isa_name(v), ok[i]);
    }
    bp_mkl_isa_t v;
    ck_assert(bp_mkl_isa_parse("AVX512_E4", &v) && v == BP_MKL_AVX512);
    ck_assert(bp_mkl_isa_parse("AVX2_E1", &v) && v == BP_MKL_AVX2);
    ck_assert(bp_mkl_isa_parse("SSE4_2", &v) && v == BP_MKL_SSE42);
    ck_assert(!bp_mkl_isa_parse("avx-512", &v));
    ck_assert(!bp_mkl_isa_parse("", &v));
    bp_error_t err = {0};
    const char *src;
    unsetenv("MKL_CBWR");
    unsetenv("MKL_ENABLE_INSTRUCTIONS");
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, bp_mkl_isa_detect());
    ck_assert_str_eq(src, "detected");
    setenv("MKL_ENABLE_INSTRUCTIONS", "SSE4_2", 1);
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, BP_MKL_SSE42);
    ck_assert_str_eq(src, "MKL_ENABLE_INSTRUCTIONS");
    /* a cap above the CPU leaves the CPU's path */
    setenv("MKL_ENABLE_INSTRUCTIONS", "AVX512", 1);
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, bp_mkl_isa_detect());
    setenv("MKL_ENABLE_INSTRUCTIONS", "AVX-512", 1);
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "MKL_ENABLE_INSTRUCTIONS='AVX-512'"), "%s", err.msg);
    /* the option wins over both variables */
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AVX512, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, BP_MKL_AVX512);
    ck_assert_str_eq(src, "--mkl-isa");
    unsetenv("MKL_ENABLE_INSTRUCTIONS");
    setenv("MKL_CBWR", "AUTO", 1);
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, BP_MKL_CNR);
    ck_assert_str_eq(src, "MKL_CBWR");
    setenv("MKL_CBWR", "OFF", 1);
    ck_assert_int_eq(bp_mkl_isa_resolve(BP_MKL_AUTO, &v, &src, &err), BP_OK);
    ck_assert_int_eq(v, bp_mkl_isa_detect());
    unsetenv("MKL_CBWR");
}
END_TEST

static bp_probe_t *parse(const char *text)
{
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_parse(text, strlen(text), "lay.yaml", &p, &err) == BP_OK, "%s",
                  err.msg);
    return p;
}

/* Which sgemm call PyTorch makes, from the chain of views (only the
 * buffers' ndim matters to it). */
START_TEST(t_layout)
{
    bp_probe_t *p = parse(
        "name: lay\ndescription: d\ndtypes: [fp32]\nops:\n"
        "  - {out: x, op: normal, shape: [4, 8], seed: 1, mean: 0, std: 1}\n"
        "  - {out: w, op: normal, shape: [6, 8], seed: 2, mean: 0, std: 1}\n"
        "  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}\n"
        "  - {out: y1, op: matmul, a: x, b: wt}\n"           /* 3: TN */
        "  - {out: wtt, op: transpose, a: wt, dim0: -1, dim1: -2}\n"
        "  - {out: y2, op: matmul, a: y1, b: wtt}\n"         /* 5: NN (y1 fresh) */
        "  - {out: ws, op: silu, a: wt}\n"                   /* follows wt's layout */
        "  - {out: y3, op: matmul, a: x, b: ws}\n"           /* 7: unknown */
        "  - {out: xt, op: transpose, a: x, dim0: 0, dim1: 1}\n"
        "  - {out: y4, op: matmul, a: xt, b: y1}\n"          /* 9: x transposed */
        "  - {out: wp, op: permute, a: w, dims: [1, 0]}\n"
        "  - {out: y5, op: matmul, a: x, b: wp}\n"           /* 11: TN */
        "  - {out: x2, op: mul, a: x, b: 2}\n"
        "  - {out: wr, op: reshape, a: wt, shape: [8, 6]}\n"
        "  - {out: y6, op: matmul, a: x2, b: wr}\n"          /* 14: unknown */
        "  - {out: wc, op: reshape, a: w, shape: [8, 6]}\n"
        "  - {out: y7, op: matmul, a: x2, b: wc}\n"          /* 16: NN */
        "  - {out: w3, op: slice, a: wc, axis: 1, start: 0, end: 4}\n"
        "  - {out: y8, op: matmul, a: x2, b: w3}\n"          /* 18: unknown */
        "outputs:\n  - {name: y8}\n");
    bp_buf_t bufs[32];
    memset(bufs, 0, sizeof bufs);
    for (size_t i = 0; i < p->nops; i++)
        bufs[i].ndim = 2;
    static const struct {
        size_t op;
        bp_gemm_layout_t l;
    } want[] = {{3, BP_GEMM_LAYOUT_TN},      {5, BP_GEMM_LAYOUT_NN},
                {7, BP_GEMM_LAYOUT_UNKNOWN}, {9, BP_GEMM_LAYOUT_UNKNOWN},
                {11, BP_GEMM_LAYOUT_TN},     {14, BP_GEMM_LAYOUT_UNKNOWN},
                {16, BP_GEMM_LAYOUT_NN},     {18, BP_GEMM_LAYOUT_UNKNOWN},
                {2, BP_GEMM_LAYOUT_UNKNOWN}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(bp_probe_gemm_layout(p, bufs, want[i].op) == want[i].l, "op %zu: %d",
                      want[i].op, (int)bp_probe_gemm_layout(p, bufs, want[i].op));
    /* a transpose of a 3-D tensor is no 2-D swap */
    bufs[1].ndim = 3;
    ck_assert_int_eq(bp_probe_gemm_layout(p, bufs, 3), BP_GEMM_LAYOUT_UNKNOWN);
    bp_probe_free(p);
}
END_TEST

/* linear multiplies by weight.t(): a contiguous weight is 'T','N', a
 * transposed one 'N','N'; addmm reads mat2's layout as matmul does; a
 * linear of a 4-D x with a bias of 2-D is matmul then add (not modelled). */
START_TEST(t_layout_linear)
{
    bp_probe_t *p = parse(
        "name: lay\ndescription: d\ndtypes: [fp32]\nops:\n"
        "  - {out: x, op: ones, shape: [4, 6]}\n"
        "  - {out: w, op: ones, shape: [8, 6]}\n"
        "  - {out: y0, op: linear, inputs: [x, w]}\n"               /* 2: TN */
        "  - {out: v, op: ones, shape: [6, 8]}\n"
        "  - {out: vt, op: transpose, a: v, dim0: 0, dim1: 1}\n"
        "  - {out: y1, op: linear, inputs: [x, vt]}\n"              /* 5: NN */
        "  - {out: b, op: ones, shape: [8]}\n"
        "  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}\n"
        "  - {out: y2, op: addmm, inputs: [b, x, wt]}\n"            /* 8: TN */
        "  - {out: y3, op: addmm, inputs: [b, x, v]}\n"             /* 9: NN */
        "  - {out: x4, op: ones, shape: [2, 2, 1, 6]}\n"
        "  - {out: b2, op: ones, shape: [1, 8]}\n"
        "  - {out: y4, op: linear, inputs: [x4, w, b2]}\n"          /* 12: unknown */
        "  - {out: y5, op: linear, inputs: [x4, w, b]}\n"           /* 13: TN */
        "  - {out: u, op: ones, shape: [3, 4]}\n"
        "  - {out: xt, op: transpose, a: x, dim0: 0, dim1: 1}\n"
        "  - {out: y6, op: linear, inputs: [xt, u]}\n"              /* 16: unknown */
        "outputs:\n  - {name: y6}\n");
    bp_buf_t bufs[32];
    memset(bufs, 0, sizeof bufs);
    for (size_t i = 0; i < p->nops; i++)
        bufs[i].ndim = 2;
    bufs[6].ndim = 1;
    bufs[10].ndim = bufs[12].ndim = bufs[13].ndim = 4;
    static const struct {
        size_t op;
        bp_gemm_layout_t l;
    } want[] = {{2, BP_GEMM_LAYOUT_TN},  {5, BP_GEMM_LAYOUT_NN},       {8, BP_GEMM_LAYOUT_TN},
                {9, BP_GEMM_LAYOUT_NN},  {12, BP_GEMM_LAYOUT_UNKNOWN}, {13, BP_GEMM_LAYOUT_TN},
                {16, BP_GEMM_LAYOUT_UNKNOWN}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(bp_probe_gemm_layout(p, bufs, want[i].op) == want[i].l, "op %zu: %d",
                      want[i].op, (int)bp_probe_gemm_layout(p, bufs, want[i].op));
    bp_probe_free(p);
}
END_TEST

/* The probe text of x [m, k] (cancellation rows (p, q) pairs), then
 * tail: the ops that read it, the last one y (the output). */
static char *spike_probe_ops(size_t m, size_t k, const size_t *pq, const char *tail)
{
    size_t cap = 64 + m * k * 16 + strlen(tail) + 512;
    char *t = malloc(cap);
    ck_assert(t);
    size_t len = (size_t)snprintf(t, cap,
                                  "name: lay\ndescription: d\ndtypes: [fp32]\nops:\n"
                                  "  - {out: x, op: tensor, shape: [%zu, %zu], values: [",
                                  m, k);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k; j++)
            len += (size_t)snprintf(t + len, cap - len, "%s%s", i + j ? ", " : "",
                                    j == pq[2 * i] ? "0x1p30" : j == pq[2 * i + 1] ? "-0x1p30"
                                                                                 : "0x1p-30");
    snprintf(t + len, cap - len, "]}\n%soutputs:\n  - {name: y}\n", tail);
    return t;
}

/* x @ ones, the weight [k, n] contiguous (nn) or [n, k] transposed. */
static char *spike_probe(size_t m, size_t k, size_t n, const size_t *pq, bool nn)
{
    char tail[256];
    snprintf(tail, sizeof tail,
             "  - {out: w, op: ones, shape: [%zu, %zu]}\n"
             "%s  - {out: y, op: matmul, a: x, b: %s}\n",
             nn ? k : n, nn ? n : k,
             nn ? "" : "  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}\n", nn ? "w" : "wt");
    return spike_probe_ops(m, k, pq, tail);
}

/* y[i][0] in units of 2^-30 for the probe text, with the cpu backend on
 * MKL path isa; *pt whether it calls the result PyTorch's. */
static void run_text(bp_mkl_isa_t isa, char *text, size_t m, size_t n, float *got, bool *pt)
{
    bp_probe_t *p = parse(text);
    free(text);
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.mkl_isa = isa;
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_be_cpu_open(&o, &be, &err) == BP_OK, "%s", err.msg);
    bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
    ck_assert(bufs);
    ck_assert_msg(bp_backend_run(be, p, BP_F32, bufs, &err) == BP_OK, "%s", err.msg);
    const bp_buf_t *y = &bufs[p->nops - 1];
    for (size_t i = 0; i < m; i++)
        got[i] = ((const float *)y->data)[i * n] / S;
    *pt = bp_cpu_gemm_pytorch(be, p, p->nops - 1, bufs);
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_backend_close(be);
    bp_probe_free(p);
}

static void run_spikes(bp_mkl_isa_t isa, size_t m, size_t k, size_t n, const size_t *pq, bool nn,
                       float *got, bool *pt)
{
    run_text(isa, spike_probe(m, k, n, pq, nn), m, n, got, pt);
}

/* Through the backend's matmul: the layout picks the order, the path
 * whether any is replayed; the counts are the hand-derived ones above. */
START_TEST(t_backend)
{
    float got[4];
    bool pt;
    size_t pq1[] = {64, 512, 384, 512};
    run_spikes(BP_MKL_AVX512, 2, 1024, 4, pq1, true, got, &pt);
    ck_assert_float_eq(got[0], 320.0f);
    ck_assert_float_eq(got[1], 895.0f);
    ck_assert(pt);
    run_spikes(BP_MKL_AVX2, 2, 1024, 4, pq1, true, got, &pt);
    ck_assert_float_eq(got[0], 511.0f); /* bitprobe's own order */
    ck_assert_float_eq(got[1], 511.0f);
    ck_assert(!pt);
    /* one row (sgemv's business, not measured beyond K 64) and one row
     * with the weight transposed: not fitted */
    run_spikes(BP_MKL_AVX512, 1, 1024, 4, pq1, true, got, &pt);
    ck_assert_float_eq(got[0], 511.0f);
    ck_assert(!pt);
    run_spikes(BP_MKL_AVX512, 1, 1024, 4, pq1, false, got, &pt);
    ck_assert_float_eq(got[0], 511.0f);
    ck_assert(!pt);
    size_t pq2[] = {0, 1, 0, 2, 0, 16};
    run_spikes(BP_MKL_AVX512, 3, 256, 4, pq2, false, got, &pt);
    ck_assert_float_eq(got[0], 128.0f);
    ck_assert_float_eq(got[1], 0.0f);
    ck_assert_float_eq(got[2], 254.0f);
    ck_assert(pt);
    /* the same rows, weight contiguous: one panel, k ascending */
    run_spikes(BP_MKL_AVX512, 3, 256, 4, pq2, true, got, &pt);
    ck_assert_float_eq(got[0], 254.0f);
    ck_assert_float_eq(got[1], 253.0f);
    ck_assert_float_eq(got[2], 239.0f);
    ck_assert(pt);
}
END_TEST

/* F.linear and addmm with a bias: addmm_impl_cpu_ copies the bias into
 * the result and calls sgemm with beta 1, so C holds the bias before the
 * first panel is added.  Bias 1000 (units of 2^-30), K = 1024, row p 64,
 * q 512 (panels 2^30, -2^30, 320): bias first, 1000 + 2^30 rounds to
 * 2^30 and the result is 320; the bias added after the panels gives
 * 1320; bitprobe's own order (k ascending: 511) then the bias, 1511.
 * Row p 384, q 512 tells none apart (1384 + 191 + 320 = 895 + 1000). */
START_TEST(t_bias)
{
    float got[16];
    bool pt;
    size_t pq[32];
    for (size_t i = 0; i < 16; i++) {
        pq[2 * i] = i == 1 ? 384 : 64;
        pq[2 * i + 1] = 512;
    }
#define W_T "  - {out: w, op: ones, shape: [4, 1024]}\n"
#define W_N "  - {out: w, op: ones, shape: [1024, 4]}\n"
#define BIAS "  - {out: b, op: full, shape: [4], value: 0x1.f4p-21}\n"
    static const struct {
        const char *tail;
        bp_mkl_isa_t isa;
        size_t rows;
        float y0, y1; /* y1 < 0: not checked */
        bool pt;
    } c[] = {
        /* 16 rows against a contiguous weight: 'T','N', panels */
        {W_T BIAS "  - {out: y, op: linear, inputs: [x, w, b]}\n", BP_MKL_AVX512, 16, 320,
         1895, true},
        {W_T BIAS "  - {out: y, op: linear, inputs: [x, w, b]}\n", BP_MKL_AVX2, 16, 1511, -1,
         false},
        /* the same rows as [2, 8, 1024]: F.linear flattens them */
        {"  - {out: x3, op: reshape, a: x, shape: [2, 8, 1024]}\n" W_T BIAS
         "  - {out: y, op: linear, inputs: [x3, w, b]}\n",
         BP_MKL_AVX512, 16, 320, -1, true},
        /* addmm, two rows against a contiguous mat2: 'N','N', panels */
        {W_N BIAS "  - {out: y, op: addmm, inputs: [b, x, w]}\n", BP_MKL_AVX512, 2, 320, 1895,
         true},
        /* beta 0: C is not read (a NaN input is not seen) */
        {W_N "  - {out: b, op: full, shape: [4], value: .nan}\n"
             "  - {out: y, op: addmm, inputs: [b, x, w], beta: 0}\n",
         BP_MKL_AVX512, 2, 320, -1, true},
        /* alpha 2 was not fitted: bitprobe's order (2 * 511 + 1000) */
        {W_N BIAS "  - {out: y, op: addmm, inputs: [b, x, w], alpha: 2}\n", BP_MKL_AVX512, 2,
         2022, -1, false},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        run_text(c[i].isa, spike_probe_ops(c[i].rows, 1024, pq, c[i].tail), c[i].rows, 4, got,
                 &pt);
        ck_assert_msg(got[0] == c[i].y0, "case %zu: %g", i, (double)got[0]);
        ck_assert_msg(c[i].y1 < 0 || got[1] == c[i].y1, "case %zu: %g", i, (double)got[1]);
        ck_assert_msg(pt == c[i].pt, "case %zu", i);
    }
#undef W_T
#undef W_N
#undef BIAS
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mkl_sgemm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_panels);
    tcase_add_test(tc, t_panels_spikes);
    tcase_add_test(tc, t_dot16_spikes);
    tcase_add_test(tc, t_dot16_tree);
    tcase_add_test(tc, t_classes);
    tcase_add_test(tc, t_isa);
    tcase_add_test(tc, t_layout);
    tcase_add_test(tc, t_layout_linear);
    tcase_add_test(tc, t_backend);
    tcase_add_test(tc, t_bias);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
