/* Tests of PyTorch's view geometry (ops/strided.c).  Every expected size,
 * stride and offset is written by hand from the rules of c10 and ATen
 * (contiguous strides use max(size, 1); is_contiguous skips size-1
 * dimensions; is_non_overlapping_and_dense sorts the strides;
 * computeStride maps contiguous chunks; unsqueeze's stride is
 * size * stride of the dimension it lands before; expand gives stride 0),
 * and checked against PyTorch (Debian's 1.13: the strides, storage
 * offsets and whether reshape kept the data_ptr, as the comments say),
 * not computed by the code under test. */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "probe_build.h"
#include "strided.h"

static bp_strided_t geo(int nd, const int64_t *shape, const int64_t *strides, int64_t off)
{
    bp_strided_t g;
    memset(&g, 0, sizeof g);
    g.ndim = nd;
    g.offset = off;
    for (int d = 0; d < nd; d++) {
        g.shape[d] = shape[d];
        g.strides[d] = strides[d];
    }
    return g;
}

static void expect(const bp_strided_t *g, int nd, const int64_t *shape, const int64_t *strides,
                   int64_t off)
{
    ck_assert_int_eq(g->ndim, nd);
    for (int d = 0; d < nd; d++) {
        ck_assert_msg(g->shape[d] == shape[d], "shape[%d] %lld, not %lld", d,
                      (long long)g->shape[d], (long long)shape[d]);
        ck_assert_msg(g->strides[d] == strides[d], "stride[%d] %lld, not %lld", d,
                      (long long)g->strides[d], (long long)strides[d]);
    }
    ck_assert_int_eq(g->offset, off);
}

START_TEST(t_contiguous)
{
    bp_strided_t g;
    /* torch.empty(2, 3, 4).stride() == (12, 4, 1) */
    bp_strided_contiguous(3, (int64_t[]){2, 3, 4}, &g);
    expect(&g, 3, (int64_t[]){2, 3, 4}, (int64_t[]){12, 4, 1}, 0);
    /* torch.empty(3, 1, 4).stride() == (4, 4, 1); torch.empty(2, 0, 3): (3, 3, 1) */
    bp_strided_contiguous(3, (int64_t[]){3, 1, 4}, &g);
    expect(&g, 3, (int64_t[]){3, 1, 4}, (int64_t[]){4, 4, 1}, 0);
    bp_strided_contiguous(3, (int64_t[]){2, 0, 3}, &g);
    expect(&g, 3, (int64_t[]){2, 0, 3}, (int64_t[]){3, 3, 1}, 0);
    bp_strided_contiguous(0, NULL, &g);
    ck_assert_int_eq(g.ndim, 0);
}
END_TEST

START_TEST(t_is_contiguous_dense)
{
    /* w = torch.empty(5, 1); w.t(): size (1, 5), stride (1, 1): contiguous */
    bp_strided_t g = geo(2, (int64_t[]){1, 5}, (int64_t[]){1, 1}, 0);
    ck_assert(bp_strided_is_contiguous(&g) && bp_strided_is_dense(&g));
    /* torch.empty(2, 3).t(): (3, 2), stride (1, 3): dense, not contiguous */
    g = geo(2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    ck_assert(!bp_strided_is_contiguous(&g) && bp_strided_is_dense(&g));
    /* torch.empty(4, 1).t(): (1, 4), stride (1, 1); torch.empty(4, 1) itself
     * (4, 1) stride (1, 1): both contiguous */
    g = geo(2, (int64_t[]){4, 1}, (int64_t[]){1, 7}, 0); /* size-1 stride ignored */
    ck_assert(bp_strided_is_contiguous(&g) && bp_strided_is_dense(&g));
    /* torch.empty(3, 8)[:, :4]: (3, 4) stride (8, 1): neither */
    g = geo(2, (int64_t[]){3, 4}, (int64_t[]){8, 1}, 0);
    ck_assert(!bp_strided_is_contiguous(&g) && !bp_strided_is_dense(&g));
    /* torch.empty(1, 4).expand(3, 4): stride (0, 1): neither */
    g = geo(2, (int64_t[]){3, 4}, (int64_t[]){0, 1}, 0);
    ck_assert(!bp_strided_is_contiguous(&g) && !bp_strided_is_dense(&g));
    /* torch.empty(2, 3, 4).permute(2, 0, 1): (4, 2, 3) stride (1, 12, 4): dense */
    g = geo(3, (int64_t[]){4, 2, 3}, (int64_t[]){1, 12, 4}, 0);
    ck_assert(!bp_strided_is_contiguous(&g) && bp_strided_is_dense(&g));
    /* an empty tensor is contiguous whatever its strides */
    g = geo(2, (int64_t[]){0, 5}, (int64_t[]){9, 9}, 0);
    ck_assert(bp_strided_is_contiguous(&g));
    /* 1-D: stride 1, or fewer than two elements */
    g = geo(1, (int64_t[]){5}, (int64_t[]){2}, 0);
    ck_assert(!bp_strided_is_dense(&g));
    g = geo(1, (int64_t[]){1}, (int64_t[]){2}, 0);
    ck_assert(bp_strided_is_dense(&g));
}
END_TEST

/* The layout of x * s: the strides each case printed as (x * 2).stride()
 * in PyTorch (CPU and CUDA build the same TensorIterator). */
START_TEST(t_like)
{
    static const struct {
        int nd;
        int64_t shape[3], strides[3], want[3];
    } c[] = {
        {2, {3, 2}, {1, 3}, {1, 3}},        /* empty(2, 3).t(): dense, kept */
        {2, {3, 4}, {2, 6}, {1, 3}},        /* empty(4, 6).t()[::2]: dense, transposed */
        {2, {3, 4}, {0, 1}, {4, 1}},        /* empty(1, 4).expand(3, 4) */
        {3, {2, 3, 4}, {12, 1, 3}, {12, 1, 3}}, /* empty(2, 4, 3).permute(0, 2, 1) */
        {2, {3, 4}, {8, 1}, {4, 1}},        /* empty(3, 8)[:, :4] */
        {3, {4, 2, 2}, {1, 12, 8}, {1, 8, 4}}, /* empty(2, 3, 4).permute(2, 0, 1)[..., ::2] */
        {3, {3, 3, 5}, {1, 7, 21}, {1, 3, 9}}, /* empty(5, 3, 7).transpose(0, 2)[1:4] */
        {2, {4, 3}, {1, 0}, {3, 1}},        /* empty(1, 4).t().expand(4, 3) */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        bp_strided_t g = geo(c[i].nd, (int64_t *)c[i].shape, (int64_t *)c[i].strides, 5), o;
        bp_strided_like(&g, &o);
        ck_assert_int_eq(o.offset, 0);
        for (int d = 0; d < c[i].nd; d++)
            ck_assert_msg(o.strides[d] == c[i].want[d], "case %zu dim %d: stride %" PRId64
                          ", PyTorch %" PRId64, i, d, o.strides[d], c[i].want[d]);
    }
}
END_TEST

START_TEST(t_reshape)
{
    bp_strided_t in, out;
    /* contiguous [2, 3, 4] -> [6, 4]: (4, 1) */
    bp_strided_contiguous(3, (int64_t[]){2, 3, 4}, &in);
    ck_assert(bp_strided_reshape(&in, 2, (int64_t[]){6, 4}, &out));
    expect(&out, 2, (int64_t[]){6, 4}, (int64_t[]){4, 1}, 0);
    /* torch.empty(2, 3).t().reshape(6) copies: no strides view it */
    in = geo(2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    ck_assert(!bp_strided_reshape(&in, 1, (int64_t[]){6}, &out));
    /* ... .reshape(3, 2, 1) is a view: stride (1, 3, 3) */
    ck_assert(bp_strided_reshape(&in, 3, (int64_t[]){3, 2, 1}, &out));
    expect(&out, 3, (int64_t[]){3, 2, 1}, (int64_t[]){1, 3, 3}, 0);
    /* torch.empty(4, 6)[:, :3] (stride (6, 1), offset 0): reshape(12) copies,
     * reshape(4, 3, 1) views with stride (6, 1, 1), offset kept */
    in = geo(2, (int64_t[]){4, 3}, (int64_t[]){6, 1}, 2);
    ck_assert(!bp_strided_reshape(&in, 1, (int64_t[]){12}, &out));
    ck_assert(bp_strided_reshape(&in, 3, (int64_t[]){4, 3, 1}, &out));
    expect(&out, 3, (int64_t[]){4, 3, 1}, (int64_t[]){6, 1, 1}, 2);
    /* a [1, k] view of [k] (stride 1): (k, 1) */
    in = geo(1, (int64_t[]){5}, (int64_t[]){1}, 0);
    ck_assert(bp_strided_reshape(&in, 2, (int64_t[]){1, 5}, &out));
    expect(&out, 2, (int64_t[]){1, 5}, (int64_t[]){5, 1}, 0);
    /* torch.empty(2, 3, 4).transpose(0, 1): (3, 2, 4) stride (4, 12, 1);
     * reshape(6, 4) and reshape(3, 8) both copy (PyTorch 1.13: a new
     * data_ptr for each) */
    in = geo(3, (int64_t[]){3, 2, 4}, (int64_t[]){4, 12, 1}, 0);
    ck_assert(!bp_strided_reshape(&in, 2, (int64_t[]){6, 4}, &out));
    ck_assert(!bp_strided_reshape(&in, 2, (int64_t[]){3, 8}, &out));
}
END_TEST

static bp_op_t op_of(bp_op_kind_t k)
{
    bp_op_t op;
    memset(&op, 0, sizeof op);
    op.kind = k;
    return op;
}

START_TEST(t_view_ops)
{
    bp_strided_t w, out;
    bp_strided_contiguous(2, (int64_t[]){4, 6}, &w); /* [N, K] = [4, 6] */
    /* w.t() / w.transpose(0, 1): (6, 4) stride (1, 6) */
    bp_op_t t = op_of(BP_OP_TRANSPOSE);
    t.ndims = 2;
    t.dims[0] = 0;
    t.dims[1] = -1;
    ck_assert(bp_strided_of_op(&t, &w, false, 2, (int64_t[]){6, 4}, &out));
    expect(&out, 2, (int64_t[]){6, 4}, (int64_t[]){1, 6}, 0);
    /* a dtype change copies */
    ck_assert(!bp_strided_of_op(&t, &w, true, 2, (int64_t[]){6, 4}, &out));
    /* torch.empty(2, 3, 4).permute(2, 0, 1): stride (1, 12, 4) */
    bp_strided_t x;
    bp_strided_contiguous(3, (int64_t[]){2, 3, 4}, &x);
    bp_op_t p = op_of(BP_OP_PERMUTE);
    p.ndims = 3;
    p.dims[0] = 2;
    p.dims[1] = 0;
    p.dims[2] = 1;
    ck_assert(bp_strided_of_op(&p, &x, false, 3, (int64_t[]){4, 2, 3}, &out));
    expect(&out, 3, (int64_t[]){4, 2, 3}, (int64_t[]){1, 12, 4}, 0);
    /* torch.empty(3).unsqueeze(0): (1, 3) stride (3, 1); unsqueeze(-1):
     * (3, 1) stride (1, 1) */
    bp_strided_t v;
    bp_strided_contiguous(1, (int64_t[]){3}, &v);
    bp_op_t u = op_of(BP_OP_UNSQUEEZE);
    ck_assert(bp_strided_of_op(&u, &v, false, 2, (int64_t[]){1, 3}, &out));
    expect(&out, 2, (int64_t[]){1, 3}, (int64_t[]){3, 1}, 0);
    u.axis = -1;
    ck_assert(bp_strided_of_op(&u, &v, false, 2, (int64_t[]){3, 1}, &out));
    expect(&out, 2, (int64_t[]){3, 1}, (int64_t[]){1, 1}, 0);
    /* w.t().unsqueeze(1): (6, 1, 4) stride (1, 4 * 6, 6) */
    bp_strided_t wt;
    bp_strided_of_op(&t, &w, false, 2, (int64_t[]){6, 4}, &wt);
    u.axis = 1;
    ck_assert(bp_strided_of_op(&u, &wt, false, 3, (int64_t[]){6, 1, 4}, &out));
    expect(&out, 3, (int64_t[]){6, 1, 4}, (int64_t[]){1, 24, 6}, 0);
    /* squeeze() of that: (6, 4) stride (1, 6) */
    bp_op_t sq = op_of(BP_OP_SQUEEZE);
    bp_strided_t in3 = out;
    ck_assert(bp_strided_of_op(&sq, &in3, false, 2, (int64_t[]){6, 4}, &out));
    expect(&out, 2, (int64_t[]){6, 4}, (int64_t[]){1, 6}, 0);
    /* torch.empty(1, 4).expand(3, 4): (0, 1); torch.empty(4).expand(2, 3, 4):
     * (0, 0, 1) */
    bp_strided_t r;
    bp_strided_contiguous(2, (int64_t[]){1, 4}, &r);
    bp_op_t e = op_of(BP_OP_EXPAND);
    ck_assert(bp_strided_of_op(&e, &r, false, 2, (int64_t[]){3, 4}, &out));
    expect(&out, 2, (int64_t[]){3, 4}, (int64_t[]){0, 1}, 0);
    bp_strided_contiguous(1, (int64_t[]){4}, &r);
    ck_assert(bp_strided_of_op(&e, &r, false, 3, (int64_t[]){2, 3, 4}, &out));
    expect(&out, 3, (int64_t[]){2, 3, 4}, (int64_t[]){0, 0, 1}, 0);
    /* torch.empty(4, 6)[:, 1:5:2]: (4, 2) stride (6, 2), storage offset 1 */
    bp_op_t sl = op_of(BP_OP_SLICE);
    sl.has_axis = true;
    sl.axis = 1;
    sl.s_start = 1;
    sl.s_end = 5;
    sl.s_step = 2;
    ck_assert(bp_strided_of_op(&sl, &w, false, 2, (int64_t[]){4, 2}, &out));
    expect(&out, 2, (int64_t[]){4, 2}, (int64_t[]){6, 2}, 1);
    /* reshape and view: computeStride (t_reshape); a copy where none views */
    bp_op_t rs = op_of(BP_OP_RESHAPE);
    ck_assert(!bp_strided_of_op(&rs, &wt, false, 1, (int64_t[]){24}, &out));
    ck_assert(bp_strided_of_op(&rs, &w, false, 1, (int64_t[]){24}, &out));
    expect(&out, 1, (int64_t[]){24}, (int64_t[]){1}, 0);
    /* not views: index_select, concat, rotate_half */
    bp_op_t ix = op_of(BP_OP_ROTATE_HALF);
    ck_assert(!bp_strided_of_op(&ix, &w, false, 2, (int64_t[]){4, 6}, &out));
}
END_TEST

/* A probe's chain of views back to the buffer it reads. */
START_TEST(t_resolve)
{
    bp_probe_build_t b;
    bp_probe_build_init(&b, "views", 1u << BP_F32);
    bp_op_t *w = bp_probe_build_op(&b, BP_OP_UNIFORM, "w", BP_NDTYPES); /* 0: [4, 6] */
    w->ndim = 2;
    w->shape[0] = 4;
    w->shape[1] = 6;
    w->seed = 1;
    w->high = 1;
    bp_op_t *t = bp_probe_build_op(&b, BP_OP_TRANSPOSE, "wt", BP_NDTYPES); /* 1 */
    t->a = bp_arg_buf(0);
    t->ndims = 2;
    t->dims[0] = 0;
    t->dims[1] = 1;
    bp_op_t *u = bp_probe_build_op(&b, BP_OP_UNSQUEEZE, "wt3", BP_NDTYPES); /* 2 */
    u->a = bp_arg_buf(1);
    bp_op_t *r = bp_probe_build_op(&b, BP_OP_RESHAPE, "flat", BP_NDTYPES); /* 3: copy */
    r->a = bp_arg_buf(1);
    r->ndim = 1;
    r->shape[0] = 24;
    bp_op_t *r2 = bp_probe_build_op(&b, BP_OP_RESHAPE, "back", BP_NDTYPES); /* 4: view of 3 */
    r2->a = bp_arg_buf(3);
    r2->ndim = 2;
    r2->shape[0] = 6;
    r2->shape[1] = 4;
    bp_op_t *c = bp_probe_build_op(&b, BP_OP_TRANSPOSE, "wtb", BP_BF16); /* 5: a cast */
    *c = *t;
    c->out = (char *)"wtb";
    c->has_dtype = true;
    c->dtype = BP_BF16;
    bp_probe_build_done(&b);
    bp_meta_t metas[6];
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_infer(&b.p, BP_F32, metas, &err) == BP_OK, "%s", err.msg);
    int base;
    bp_strided_t g;
    bp_strided_resolve(&b.p, metas, 0, &base, &g);
    ck_assert_int_eq(base, 0);
    expect(&g, 2, (int64_t[]){4, 6}, (int64_t[]){6, 1}, 0);
    bp_strided_resolve(&b.p, metas, 1, &base, &g);
    ck_assert_int_eq(base, 0);
    expect(&g, 2, (int64_t[]){6, 4}, (int64_t[]){1, 6}, 0);
    bp_strided_resolve(&b.p, metas, 2, &base, &g); /* [1, 6, 4] */
    ck_assert_int_eq(base, 0);
    expect(&g, 3, (int64_t[]){1, 6, 4}, (int64_t[]){6, 1, 6}, 0);
    bp_strided_resolve(&b.p, metas, 4, &base, &g); /* reshape's copy, viewed */
    ck_assert_int_eq(base, 3);
    expect(&g, 2, (int64_t[]){6, 4}, (int64_t[]){4, 1}, 0);
    bp_strided_resolve(&b.p, metas, 5, &base, &g); /* the cast copies */
    ck_assert_int_eq(base, 5);
    expect(&g, 2, (int64_t[]){6, 4}, (int64_t[]){4, 1}, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("strided");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_contiguous);
    tcase_add_test(tc, t_is_contiguous_dense);
    tcase_add_test(tc, t_like);
    tcase_add_test(tc, t_reshape);
    tcase_add_test(tc, t_view_ops);
    tcase_add_test(tc, t_resolve);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
