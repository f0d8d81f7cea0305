/* Tests of the shape helpers of buf.c (the one home of shape equality,
 * axis wrapping and broadcasting that op inference and every backend use)
 * and of bp_dtype_is_int.  Expected values follow PyTorch's documented
 * rules (torch.broadcast_shapes, maybe_wrap_dim), written out by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

START_TEST(t_shape_equal)
{
    int64_t a[2] = {4, 5}, b[2] = {4, 5}, c[2] = {5, 4};
    ck_assert(bp_shape_equal(2, a, 2, b));
    ck_assert(!bp_shape_equal(2, a, 2, c));
    ck_assert(!bp_shape_equal(1, a, 2, b));
    ck_assert(bp_shape_equal(0, NULL, 0, NULL));
    bp_buf_t x = {.ndim = 2, .shape = {4, 5}}, y = {.ndim = 1, .shape = {20}};
    ck_assert(bp_buf_same_shape(&x, &x) && !bp_buf_same_shape(&x, &y));
}
END_TEST

START_TEST(t_axis)
{
    int ax = -7;
    ck_assert(bp_axis_norm(-1, 3, &ax) && ax == 2);
    ck_assert(bp_axis_norm(-3, 3, &ax) && ax == 0);
    ck_assert(bp_axis_norm(2, 3, &ax) && ax == 2);
    ck_assert(!bp_axis_norm(3, 3, &ax));
    ck_assert(!bp_axis_norm(-4, 3, &ax));
    ck_assert(!bp_axis_norm(0, 0, &ax));
    bp_error_t err = {0};
    ck_assert_int_eq(bp_axis_check(5, 2, &ax, &err), BP_EINPUT);
    ck_assert_str_eq(err.msg, "axis 5 is out of range for 2 dimensions");
    ck_assert_int_eq(bp_axis_check(-2, 2, &ax, &err), BP_OK);
    ck_assert_int_eq(ax, 0);
}
END_TEST

START_TEST(t_bcast_strides)
{
    /* [3, 1] over [2, 3, 4]: the leading dimension and the 1 stretch */
    int64_t s[2] = {3, 1}, o[3] = {2, 3, 4}, st[3] = {9, 9, 9};
    ck_assert(bp_bcast_strides(2, s, 3, o, st));
    ck_assert(st[0] == 0 && st[1] == 1 && st[2] == 0);
    /* [4] over [2, 3, 4]: contiguous along the last */
    int64_t v[1] = {4};
    ck_assert(bp_bcast_strides(1, v, 3, o, st));
    ck_assert(st[0] == 0 && st[1] == 0 && st[2] == 1);
    /* the same shape: row-major strides */
    ck_assert(bp_bcast_strides(3, o, 3, o, st));
    ck_assert(st[0] == 12 && st[1] == 4 && st[2] == 1);
    /* [3] does not broadcast to [2, 3, 4]; nor more dimensions than out */
    int64_t w[1] = {3};
    ck_assert(!bp_bcast_strides(1, w, 3, o, st));
    int64_t big[4] = {1, 2, 3, 4};
    ck_assert(!bp_bcast_strides(4, big, 3, o, st));
    /* a 0-D operand broadcasts anywhere */
    ck_assert(bp_bcast_strides(0, NULL, 3, o, st));
    ck_assert(st[0] == 0 && st[1] == 0 && st[2] == 0);
}
END_TEST

START_TEST(t_bcast_shape)
{
    int n;
    int64_t out[BP_MAXDIM];
    /* torch.broadcast_shapes((4096,), (2, 1, 1)) == (2, 1, 4096) */
    int64_t a[1] = {4096}, b[3] = {2, 1, 1};
    ck_assert(bp_bcast_shape(1, a, 3, b, &n, out));
    ck_assert(n == 3 && out[0] == 2 && out[1] == 1 && out[2] == 4096);
    /* (5, 1, 7) with (3, 1): (5, 3, 7) */
    int64_t c[3] = {5, 1, 7}, d[2] = {3, 1};
    ck_assert(bp_bcast_shape(3, c, 2, d, &n, out));
    ck_assert(n == 3 && out[0] == 5 && out[1] == 3 && out[2] == 7);
    /* a zero-size dimension meets 1: 0 (PyTorch keeps the 0) */
    int64_t e[1] = {0}, f[1] = {1};
    ck_assert(bp_bcast_shape(1, e, 1, f, &n, out) && n == 1 && out[0] == 0);
    /* (4,) with (5,): no */
    int64_t g[1] = {4}, h[1] = {5};
    ck_assert(!bp_bcast_shape(1, g, 1, h, &n, out));
    /* 0-D with 0-D: 0-D */
    ck_assert(bp_bcast_shape(0, NULL, 0, NULL, &n, out) && n == 0);
}
END_TEST

START_TEST(t_dtype_is_int)
{
    ck_assert(bp_dtype_is_int(BP_I64) && bp_dtype_is_int(BP_I32));
    ck_assert(bp_dtype_is_int(BP_U8) && bp_dtype_is_int(BP_I8));
    ck_assert(!bp_dtype_is_int(BP_BOOL));
    ck_assert(!bp_dtype_is_int(BP_F32) && !bp_dtype_is_int(BP_BF16) &&
              !bp_dtype_is_int(BP_F8_E4M3));
    ck_assert(!bp_dtype_is_int(BP_NDTYPES));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("buf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_shape_equal);
    tcase_add_test(tc, t_axis);
    tcase_add_test(tc, t_bcast_strides);
    tcase_add_test(tc, t_bcast_shape);
    tcase_add_test(tc, t_dtype_is_int);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
