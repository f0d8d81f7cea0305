/* explain: the element maps against indices worked out by hand; fractional
 * ulps against hand-computed spacings; attribution (first-divergence and
 * isolated) on small probes whose two sides are built by hand, so that
 * every count, origin and verdict below is derived from the values, not
 * from the code; and the seed repro's reciprocal division on cpu against
 * the oracle, whose bits are derived in the comments. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "explain.h"

static char tmpdir[512];

static void tmp_setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/check_explain.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static bp_probe_t *probe_from(const char *name, const char *yaml)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.yaml", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(yaml, f);
    fclose(f);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load(path, &p, &err) == BP_OK, "%s", err.msg);
    return p;
}

/* ---- element maps ---- */

typedef struct {
    int buf[64];
    size_t idx[64];
    int n;
} deps_t;

static bool collect(void *ctx, int buf, size_t idx)
{
    deps_t *d = ctx;
    if (d->n < 64) {
        d->buf[d->n] = buf;
        d->idx[d->n] = idx;
    }
    d->n++;
    return true;
}

static deps_t deps_of(const bp_probe_t *p, const bp_meta_t *m, const char *op, size_t e)
{
    deps_t d = {.n = 0};
    int i = bp_probe_find_buf(p, op);
    ck_assert_int_ge(i, 0);
    bp_explain_deps(p, m, (size_t)i, e, collect, &d);
    return d;
}

static const char maps_yaml[] =
    "name: maps\n"
    "description: test\n"
    "dtypes: [fp32]\n"
    "ops:\n"
    "  - {out: x, op: tensor, shape: [2, 4], values: [0, 1, 2, 3, 4, 5, 6, 7], dtype: fp32}\n"
    "  - {out: y, op: tensor, shape: [2, 4], values: [0, 1, 2, 3, 4, 5, 6, 7], dtype: fp32}\n"
    "  - {out: v1, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
    "  - {out: v2, op: tensor, values: [1, 2, 3, 4, 5], dtype: fp32}\n"
    "  - {out: w, op: tensor, shape: [4, 3], values: [0,1,2,3,4,5,6,7,8,9,10,11], dtype: fp32}\n"
    "  - {out: c1, op: concat, inputs: [x, y], axis: 1}\n"
    "  - {out: c0, op: concat, inputs: [x, y], axis: 0}\n"
    "  - {out: s, op: slice, a: c1, axis: 1, start: 1, step: 3}\n"
    "  - {out: r, op: rotate_half, a: x}\n"
    "  - {out: o, op: outer, a: v1, b: v2}\n"
    "  - {out: m, op: matmul, a: x, b: w}\n"
    "  - {out: sum0, op: sum, a: x, axis: 0}\n"
    "  - {out: sum1, op: sum, a: x, axis: -1}\n"
    "  - {out: total, op: sum, a: x}\n"
    "  - {out: add, op: add, a: x, b: y}\n"
    "  - {out: adds, op: add, a: x, b: 1.5}\n"
    "  - {out: e, op: exp, a: x}\n"
    "  - {out: col, op: tensor, shape: [2, 1], values: [10, 20], dtype: fp32}\n"
    "  - {out: bc, op: mul, a: col, b: v1}\n"
    "  - {out: skd, op: sum, a: x, axis: 1, keepdim: true}\n"
    "  - {out: xt, op: transpose, a: x, dim0: 0, dim1: 1}\n"
    "outputs:\n"
    "  - {name: e}\n";

START_TEST(t_maps)
{
    bp_probe_t *p = probe_from("maps", maps_yaml);
    bp_meta_t m[32];
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_infer(p, BP_F32, m, &err) == BP_OK, "%s", err.msg);
    int x = 0, y = 1, v1 = 2, v2 = 3, w = 4, c1 = 5;
    /* c1 = cat([x, y], 1) is [2, 8]; c1[1, 5] = y[1, 1], flat 13 -> 5 */
    deps_t d = deps_of(p, m, "c1", 13);
    ck_assert_int_eq(d.n, 1);
    ck_assert_int_eq(d.buf[0], y);
    ck_assert_uint_eq(d.idx[0], 5);
    /* c1[0, 2] = x[0, 2] */
    d = deps_of(p, m, "c1", 2);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 2);
    /* c0 = cat([x, y], 0) is [4, 4]; c0[3, 2] = y[1, 2], flat 14 -> 6 */
    d = deps_of(p, m, "c0", 14);
    ck_assert(d.n == 1 && d.buf[0] == y && d.idx[0] == 6);
    /* s = c1[:, 1::3] keeps columns 1, 4, 7; s[1, 2] = c1[1, 7], 5 -> 15 */
    d = deps_of(p, m, "s", 5);
    ck_assert(d.n == 1 && d.buf[0] == c1 && d.idx[0] == 15);
    /* r = cat(-x[..., 2:], x[..., :2]); r[0, 1] = -x[0, 3]; r[1, 2] = x[1, 0] */
    d = deps_of(p, m, "r", 1);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 3);
    d = deps_of(p, m, "r", 6);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 4);
    /* o = outer(v1[3], v2[5]); o[2, 4] (flat 14) reads v1[2] and v2[4] */
    d = deps_of(p, m, "o", 14);
    ck_assert(d.n == 2 && d.buf[0] == v1 && d.idx[0] == 2 && d.buf[1] == v2 &&
              d.idx[1] == 4);
    /* m = x[2,4] @ w[4,3]; m[1, 2] (flat 5) reads x[1, :] = 4..7 and
     * w[:, 2] = 2, 5, 8, 11 */
    d = deps_of(p, m, "m", 5);
    ck_assert_int_eq(d.n, 8);
    for (int k = 0; k < 4; k++) {
        ck_assert(d.buf[2 * k] == x && d.idx[2 * k] == (size_t)(4 + k));
        ck_assert(d.buf[2 * k + 1] == w && d.idx[2 * k + 1] == (size_t)(2 + 3 * k));
    }
    /* sum over axis 0: sum0[3] reads x[0, 3], x[1, 3] = 3, 7 */
    d = deps_of(p, m, "sum0", 3);
    ck_assert(d.n == 2 && d.idx[0] == 3 && d.idx[1] == 7);
    /* sum over the last axis: sum1[1] reads x[1, :] = 4..7 */
    d = deps_of(p, m, "sum1", 1);
    ck_assert(d.n == 4 && d.idx[0] == 4 && d.idx[3] == 7);
    /* sum of everything reads all 8 */
    d = deps_of(p, m, "total", 0);
    ck_assert_int_eq(d.n, 8);
    /* broadcast: bc = col[2, 1] * v1[3] is [2, 3]; bc[1, 2] (flat 5) reads
     * col[1, 0] (flat 1) and v1[2] */
    d = deps_of(p, m, "bc", 5);
    ck_assert(d.n == 2 && d.idx[0] == 1 && d.idx[1] == 2);
    /* xt = x.T is [4, 2]; xt[3, 1] (flat 7) is x[1, 3] (flat 7), xt[1, 0]
     * (flat 2) is x[0, 1] (flat 1) */
    d = deps_of(p, m, "xt", 7);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 7);
    d = deps_of(p, m, "xt", 2);
    ck_assert(d.n == 1 && d.idx[0] == 1);
    /* keepdim: skd[1, 0] (flat 1) reads x[1, :] = 4..7 */
    d = deps_of(p, m, "skd", 1);
    ck_assert(d.n == 4 && d.idx[0] == 4 && d.idx[3] == 7);
    /* elementwise: the same index of each tensor operand, none of a number */
    d = deps_of(p, m, "add", 6);
    ck_assert(d.n == 2 && d.buf[0] == x && d.idx[0] == 6 && d.buf[1] == y && d.idx[1] == 6);
    d = deps_of(p, m, "adds", 6);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 6);
    d = deps_of(p, m, "e", 3);
    ck_assert(d.n == 1 && d.buf[0] == x && d.idx[0] == 3);
    d = deps_of(p, m, "x", 3);
    ck_assert_int_eq(d.n, 0);
    bp_probe_free(p);
}
END_TEST

START_TEST(t_frac_ulp)
{
    /* f32 spacing at 1 is 2^-23; just below 1 the values are 2^-24 apart,
     * but the unit is the spacing at the reference */
    ck_assert(bp_explain_frac_ulp(BP_F32, 1 + 0x1p-23, 1.0) == 1.0);
    ck_assert(bp_explain_frac_ulp(BP_F32, 1 - 0x1p-24, 1.0) == 0.5);
    ck_assert(bp_explain_frac_ulp(BP_F32, 1.0, 1 + 0x1p-25) == 0.25);
    /* subnormals: spacing 2^-149 */
    ck_assert(bp_explain_frac_ulp(BP_F32, 0x1p-149 * 4, 0x1p-149 * 3) == 1.0);
    ck_assert(bp_explain_frac_ulp(BP_F32, 0x1p-149, 0.0) == 1.0);
    /* bf16 at 1: 2^-7; fp16 at 1024: 1 */
    ck_assert(bp_explain_frac_ulp(BP_BF16, 1 + 0x1p-7, 1.0) == 1.0);
    ck_assert(bp_explain_frac_ulp(BP_F16, 1025.5, 1024.0) == 1.5);
    /* 10 ** 0.9 = 7.9432823472428150207; the CPU's f32 7.94328212738037109375
     * is 2.1986e-7 away, 0.461 of the spacing 2^-21 */
    double r = bp_explain_frac_ulp(BP_F32, 7.94328212738037109375, 7.9432823472428150207);
    ck_assert_msg(fabs(r - 0.4611) < 1e-3, "%.6f", r);
    ck_assert(bp_explain_frac_ulp(BP_F32, NAN, NAN) == 0.0);
    ck_assert(isinf(bp_explain_frac_ulp(BP_F32, INFINITY, 1.0)));
}
END_TEST

/* ---- attribution on hand-built sides ---- */

static const char dag_yaml[] =
    "name: dag\n"
    "description: test\n"
    "dtypes: [fp32]\n"
    "ops:\n"
    "  - {out: a, op: tensor, values: [1, 2, 3, 4], dtype: fp32}\n"
    "  - {out: b, op: tensor, values: [10, 20, 30, 40], dtype: fp32}\n"
    "  - {out: s, op: add, a: a, b: b}\n"
    "  - {out: o, op: outer, a: a, b: b}\n"
    "  - {out: c, op: concat, inputs: [s, s]}\n"
    "  - {out: t, op: sum, a: s}\n"
    "outputs:\n"
    "  - {name: s}\n"
    "  - {name: o}\n"
    "  - {name: c}\n"
    "  - {name: t}\n";

static void fill(bp_buf_t *b, int ndim, int64_t d0, int64_t d1, const double *v)
{
    int64_t shape[2] = {d0, d1};
    bp_error_t err = {0};
    ck_assert(bp_buf_alloc(b, BP_F32, ndim, shape, &err) == BP_OK);
    for (size_t i = 0; i < b->numel; i++)
        bp_buf_set(b, i, v[i]);
}

/* Side a: the exact values.  Side b: a[2] = 3.5 (made by the tensor op),
 * s[0] = 12 with equal inputs (made by add), o[0, 1] = 21 with equal
 * inputs (made by outer); everything else follows from a[2]: s[2] = 33.5,
 * o's row 2 = 3.5 * b, c = cat(s, s), t = sum(s) = 111.5. */
static void dag_sides(bp_buf_t *A, bp_buf_t *B)
{
    double a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, s[4], o[16], c[8], t = 0;
    for (int side = 0; side < 2; side++) {
        bp_buf_t *X = side ? B : A;
        if (side)
            a[2] = 3.5;
        for (int i = 0; i < 4; i++)
            s[i] = a[i] + b[i];
        if (side)
            s[0] = 12;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                o[i * 4 + j] = a[i] * b[j];
        if (side)
            o[1] = 21;
        t = 0;
        for (int i = 0; i < 4; i++) {
            c[i] = c[i + 4] = s[i];
            t += s[i];
        }
        fill(&X[0], 1, 4, 0, a);
        fill(&X[1], 1, 4, 0, b);
        fill(&X[2], 1, 4, 0, s);
        fill(&X[3], 2, 4, 4, o);
        fill(&X[4], 1, 8, 0, c);
        fill(&X[5], 0, 0, 0, &t);
    }
}

static const bp_explain_elem_t *elem(const bp_explain_t *x, int out, size_t index)
{
    for (size_t k = 0; k < x->nelems; k++)
        if (x->elems[k].output == out && x->elems[k].index == index)
            return &x->elems[k];
    ck_abort_msg("no element %zu of output %d", index, out);
    return NULL;
}

static void check_dag_counts(const bp_explain_t *x)
{
    /* per op: end to end, introduced, inherited */
    static const size_t want[6][3] = {
        {1, 1, 0}, /* a[2] */
        {0, 0, 0},
        {2, 1, 1}, /* s[0] made by add; s[2] from a[2] */
        {5, 1, 4}, /* o[0, 1] made by outer; row 2 from a[2] */
        {4, 0, 4}, /* c[0], c[4] from s[0]; c[2], c[6] from a[2] */
        {1, 0, 1}, /* t from s */
    };
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(x->ops[i].e2e == want[i][0] && x->ops[i].introduced == want[i][1] &&
                          x->ops[i].inherited == want[i][2],
                      "op %d: %zu/%zu/%zu", i, x->ops[i].e2e, x->ops[i].introduced,
                      x->ops[i].inherited);
        ck_assert_uint_eq(x->ops[i].masked, 0);
    }
    /* origins per output: s: a 1, add 1; o: a 4, outer 1; c: a 2, add 2;
     * t: a 1 (the earliest op in its cone, through the reduction) */
    ck_assert(x->outs[0].by_origin[0] == 1 && x->outs[0].by_origin[2] == 1);
    ck_assert(x->outs[1].by_origin[0] == 4 && x->outs[1].by_origin[3] == 1);
    ck_assert(x->outs[2].by_origin[0] == 2 && x->outs[2].by_origin[2] == 2);
    ck_assert(x->outs[3].by_origin[0] == 1 && x->outs[3].e2e == 1);
    const bp_explain_elem_t *e = elem(x, 2, 4); /* c[4] = s[0] */
    ck_assert(e->origin == 2 && e->origin_index == 0 && !e->via_reduction);
    e = elem(x, 2, 6); /* c[6] = s[2] <- a[2] */
    ck_assert(e->origin == 0 && e->origin_index == 2);
    e = elem(x, 1, 1); /* o[0, 1] */
    ck_assert(e->origin == 3 && e->origin_index == 1);
    e = elem(x, 3, 0); /* t */
    ck_assert(e->origin == 0 && e->origin_index == 2 && e->via_reduction);
    /* the comparison engine agrees on the end-to-end counts */
    for (int oi = 0; oi < 4; oi++)
        ck_assert_uint_eq(x->outs[oi].cmp.mismatched, x->outs[oi].e2e);
}

START_TEST(t_first_divergence)
{
    bp_probe_t *p = probe_from("dag", dag_yaml);
    bp_buf_t A[6] = {0}, B[6] = {0};
    dag_sides(A, B);
    bp_explain_side_t sa = {.label = "a", .bufs = A}, sb = {.label = "b", .bufs = B};
    bp_explain_opts_t o = {.first_k = 100};
    bp_explain_t x;
    bp_error_t err = {0};
    ck_assert_msg(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK, "%s", err.msg);
    ck_assert(!x.isolated && !x.has_oracle && !x.has_end);
    check_dag_counts(&x);
    ck_assert(!x.ops[0].verdicts_done);
    bp_explain_free(&x);

    /* with the oracle: every introduced difference is b's (the exact values
     * are a's), and the oracle's end result is a's */
    ck_assert(bp_backend_open("oracle", NULL, &o.oracle, &err) == BP_OK);
    ck_assert_msg(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK, "%s", err.msg);
    check_dag_counts(&x);
    for (int i = 0; i < 6; i++)
        if (x.ops[i].introduced) {
            ck_assert(x.ops[i].verdicts_done);
            ck_assert_uint_eq(x.ops[i].verdicts[BP_VERDICT_A], 1);
        }
    const bp_explain_elem_t *e = elem(&x, 0, 2); /* s[2]: origin a[2] */
    ck_assert(e->has_oracle && e->verdict == BP_VERDICT_A && e->oo == 0x40400000 &&
              e->ob == 0x40600000 && e->ulp_b == 0x40600000 - 0x40400000);
    ck_assert(e->has_end && e->end == 0x42040000 /* 33 */ && e->closer == 0);
    ck_assert(x.outs[1].closer[0] == 5);
    bp_explain_free(&x);
    bp_backend_close(o.oracle);
    bp_backend_bufs_free(A, 6);
    bp_backend_bufs_free(B, 6);
    bp_probe_free(p);
}
END_TEST

/* A saved side whose buffer has another shape is refused by name. */
START_TEST(t_bad_side)
{
    bp_probe_t *p = probe_from("dag", dag_yaml);
    bp_buf_t A[6] = {0}, B[6] = {0};
    dag_sides(A, B);
    bp_buf_free(&B[3]);
    fill(&B[3], 1, 16, 0, (double[16]){0});
    bp_explain_side_t sa = {.label = "a", .bufs = A}, sb = {.label = "b", .bufs = B};
    bp_explain_opts_t o = {.first_k = 10};
    bp_explain_t x;
    bp_error_t err = {0};
    ck_assert(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "b: buffer 'o' is fp32 [16], the probe makes it fp32 [4, 4]"),
                  "%s", err.msg);
    bp_backend_bufs_free(A, 6);
    bp_backend_bufs_free(B, 6);
    bp_probe_free(p);
}
END_TEST

/* NaNs differing only in payload: a difference under --nan-payload, and
 * both sides agree with the oracle's NaN (both within 0.5 ulp). */
START_TEST(t_nan_payload_both)
{
    bp_probe_t *p = probe_from("nanlog",
                               "name: nanlog\n"
                               "description: test\n"
                               "dtypes: [fp32]\n"
                               "ops:\n"
                               "  - {out: a, op: tensor, values: [-1, 2], dtype: fp32}\n"
                               "  - {out: l, op: log, a: a}\n"
                               "outputs:\n"
                               "  - {name: l}\n");
    bp_buf_t A[2] = {0}, B[2] = {0};
    fill(&A[0], 1, 2, 0, (double[]){-1, 2});
    fill(&B[0], 1, 2, 0, (double[]){-1, 2});
    fill(&A[1], 1, 2, 0, (double[]){0, log(2)});
    fill(&B[1], 1, 2, 0, (double[]){0, log(2)});
    bp_dtype_store_bits(BP_F32, A[1].data, 0, 0x7fc00001);
    bp_dtype_store_bits(BP_F32, B[1].data, 0, 0x7fc00002);
    bp_explain_side_t sa = {.label = "a", .bufs = A}, sb = {.label = "b", .bufs = B};
    bp_explain_opts_t o = {.first_k = 10};
    bp_explain_t x;
    bp_error_t err = {0};
    ck_assert(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK);
    ck_assert_uint_eq(x.ops[1].e2e, 0); /* NaNs equal by class */
    bp_explain_free(&x);
    o.nan_payload = true;
    ck_assert(bp_backend_open("oracle", NULL, &o.oracle, &err) == BP_OK);
    ck_assert(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK);
    ck_assert(x.ops[1].e2e == 1 && x.ops[1].introduced == 1);
    ck_assert_uint_eq(x.ops[1].verdicts[BP_VERDICT_BOTH], 1);
    bp_explain_free(&x);
    bp_backend_close(o.oracle);
    bp_backend_bufs_free(A, 2);
    bp_backend_bufs_free(B, 2);
    bp_probe_free(p);
}
END_TEST

/* ---- isolated attribution with a backend that misbehaves on purpose ---- */

static bp_op_fn cpu_tensor, cpu_add;

/* The tensor op as the CPU makes it, then element 0 plus one. */
static bp_status bent_tensor(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = cpu_tensor(be, x, err);
    if (!st && strcmp(x->op->out, "a") == 0)
        bp_buf_set(x->out, 0, bp_buf_get(x->out, 0) + 1);
    return st;
}

/* a + b, except: plus one where a is 1, minus one where a is 2. */
static bp_status bent_add(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = cpu_add(be, x, err);
    for (size_t i = 0; !st && i < x->out->numel; i++) {
        double a = bp_buf_get(x->a, i);
        if (a == 1 || a == 2)
            bp_buf_set(x->out, i, bp_buf_get(x->out, i) + (a == 1 ? 1 : -1));
    }
    return st;
}

/* a = [1, 2, 3, 4] on the CPU, [2, 2, 3, 4] on the bent backend; b = 10s.
 * s = a + b: the CPU gives 11, 12, 13, 14.  Bent, end to end: s[0] =
 * 2 + 10 - 1 = 11 (equal: masked), s[1] = 2 + 10 - 1 = 11 (differs, and
 * with the CPU's a[1] = 2 too: introduced).  Bent on the CPU's inputs:
 * s[0] = 1 + 10 + 1 = 12 (differs: the masked one), s[1] = 11.
 * m = s * 2 inherits s[1]. */
START_TEST(t_isolated_masked)
{
    bp_probe_t *p = probe_from("bent",
                               "name: bent\n"
                               "description: test\n"
                               "dtypes: [fp32]\n"
                               "ops:\n"
                               "  - {out: a, op: tensor, values: [1, 2, 3, 4], dtype: fp32}\n"
                               "  - {out: b, op: tensor, values: [10, 10, 10, 10], dtype: fp32}\n"
                               "  - {out: s, op: add, a: a, b: b}\n"
                               "  - {out: m, op: mul, a: s, b: 2}\n"
                               "outputs:\n"
                               "  - {name: m}\n");
    bp_backend_t *cpu, bent;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    bent = *cpu;
    bent.name = "bent";
    cpu_tensor = cpu->op[BP_OP_TENSOR];
    cpu_add = cpu->op[BP_OP_ADD];
    bp_op_fn ops[BP_OP_COUNT];
    memcpy(ops, cpu->op, sizeof ops);
    ops[BP_OP_TENSOR] = bent_tensor;
    ops[BP_OP_ADD] = bent_add;
    bent.op = ops;
    bp_explain_side_t sa = {.label = "cpu", .be = cpu}, sb = {.label = "bent", .be = &bent};
    bp_explain_opts_t o = {.first_k = 10};
    bp_explain_t x;
    ck_assert_msg(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK, "%s", err.msg);
    ck_assert(x.isolated);
    ck_assert(x.ops[0].e2e == 1 && x.ops[0].introduced == 1);
    ck_assert(x.ops[2].e2e == 1 && x.ops[2].introduced == 1 && x.ops[2].inherited == 0 &&
              x.ops[2].masked == 1);
    ck_assert(x.ops[3].e2e == 1 && x.ops[3].introduced == 0 && x.ops[3].inherited == 1);
    /* m[1]: s[1] read a[1] (equal) and b[1] (equal): made by add */
    const bp_explain_elem_t *e = elem(&x, 0, 1);
    ck_assert(e->origin == 2 && e->origin_index == 1);
    ck_assert(e->oa == 0x41400000 /* 12 */ && e->ob == 0x41300000 /* 11 */);
    ck_assert_uint_eq(x.outs[0].by_origin[2], 1);
    bp_explain_free(&x);
    bp_backend_close(cpu);
    bp_probe_free(p);
}
END_TEST

/* The seed repro with the division written x * (1/10) on the CPU.
 * 1/10 rounds to 0x3dcccccd = 0.100000001490116; 9 * that = 0.9000000134,
 * between 0x3f666666 (0.89999997616, 3.7e-8 below) and 0x3f666667
 * (0.90000003576, 2.2e-8 above): the CPU gives 0x3f666667, the oracle the
 * true quotient 0x3f666666.  10 ** 0x3f666667 = 7.9432830013 rounds to
 * 0x40fe2f60 (7.94328308105), the oracle's 10 ** 0x3f666666 to 0x40fe2f5e:
 * y[9] differs by 2 ulp, inherited from x[9]. */
START_TEST(t_seed_recip)
{
    bp_probe_t *p = probe_from("seed-recip",
                               "name: seed-recip\n"
                               "params: {n: 10}\n"
                               "description: test\n"
                               "dtypes: [fp32]\n"
                               "ops:\n"
                               "  - {out: pos, op: arange, start: 0, end: $n, dtype: $dtype}\n"
                               "  - {out: x, op: div, a: pos, b: $n, formulation: reciprocal}\n"
                               "  - {out: y, op: pow, a: 10, b: x}\n"
                               "outputs:\n"
                               "  - {name: x}\n"
                               "  - {name: y}\n");
    bp_backend_t *cpu, *oracle;
    bp_error_t err = {0};
    ck_assert(bp_backend_open("cpu", NULL, &cpu, &err) == BP_OK);
    ck_assert(bp_backend_open("oracle", NULL, &oracle, &err) == BP_OK);
    bp_explain_side_t sa = {.label = "cpu", .be = cpu}, sb = {.label = "oracle", .be = oracle};
    bp_explain_opts_t o = {.first_k = 10, .oracle = oracle};
    bp_explain_t x;
    ck_assert_msg(bp_explain_run(p, BP_F32, &sa, &sb, &o, &x, &err) == BP_OK, "%s", err.msg);
    ck_assert(x.ops[1].e2e == 1 && x.ops[1].introduced == 1 && x.ops[1].max_ulp == 1 &&
              x.ops[1].max_ulp_idx == 9);
    ck_assert_uint_eq(x.ops[1].verdicts[BP_VERDICT_B], 1);
    ck_assert(x.ops[2].e2e == 1 && x.ops[2].introduced == 0 && x.ops[2].inherited == 1);
    ck_assert_uint_eq(x.nelems, 2);
    const bp_explain_elem_t *e = elem(&x, 1, 9);
    ck_assert(e->a == 0x40fe2f60 && e->b == 0x40fe2f5e && e->ulp == 2);
    ck_assert(e->origin == 1 && e->origin_index == 9);
    ck_assert(e->oa == 0x3f666667 && e->oo == 0x3f666666 && e->ulp_a == 1 && e->ulp_b == 0 &&
              e->verdict == BP_VERDICT_B);
    /* the fp64 reference is 10 ** 0.9 = 7.9432823472428150: the oracle's
     * y[9] is 0.461 ulp away (correctly rounded), the CPU's 1.539 */
    ck_assert(x.has_ref && e->has_ref && e->closer == 1);
    ck_assert_msg(fabs(e->ref - 7.943282347242815) < 1e-14, "%.17g", e->ref);
    ck_assert_msg(fabs(e->ref_ulp_b - 0.4611) < 1e-3 && fabs(e->ref_ulp_a - 1.5389) < 1e-3,
                  "%g %g", e->ref_ulp_a, e->ref_ulp_b);
    bp_explain_free(&x);
    bp_backend_close(cpu);
    bp_backend_close(oracle);
    bp_probe_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("explain");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_maps);
    tcase_add_test(tc, t_frac_ulp);
    tcase_add_test(tc, t_first_divergence);
    tcase_add_test(tc, t_bad_side);
    tcase_add_test(tc, t_nan_payload_both);
    tcase_add_test(tc, t_isolated_masked);
    tcase_add_test(tc, t_seed_recip);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
