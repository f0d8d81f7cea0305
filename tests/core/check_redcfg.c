/* Tests of redcfg.c, the host's copy of Reduce.cuh's setReduceConfig and
 * ScanUtils.cuh's inner-scan width, for an H100 (132 multiprocessors of
 * 2048 threads, warps of 32).  Each expected configuration is derived by
 * hand from setReduceConfig's steps, written out in the comment above it
 * (dim0/dim1 after vectorisation, set_block_dimension, the input/output
 * splits, the global split), with the newer Reduce.cuh's rules unless the
 * case says otherwise. */
#include <check.h>
#include <stdlib.h>

#include "redcfg.h"

static const bp_gpu_props_t H100 = {132, 2048, 32};
#define ALIGNED 0x7f0000000000ull /* a cudaMalloc address: 256-byte aligned */
static unsigned FLAGS = BP_REDCFG_NEWER;

static bp_redcfg_t make(int64_t outer, int64_t len, int64_t inner, int scalar, int vt0,
                        int ivs)
{
    bp_redcfg_t c;
    ck_assert_int_eq(
        bp_redcfg_make(&c, outer, len, inner, scalar, 4, vt0, ivs, ALIGNED, &H100, FLAGS), 0);
    return c;
}

/* fp32 sum of 4096: vectorised (4096 >= 128), dim0 1024 -> 512 lanes wide
 * (bw 32, bh min(1, 16) = 1, bw min(512, 512)); step 512; 8 values per
 * thread < 16: no warp split; one block. */
START_TEST(t_all_fp32)
{
    bp_redcfg_t c = make(1, 4096, 1, 4, 4, 4);
    ck_assert_int_eq(c.vectorize_input, 1);
    ck_assert_int_eq(c.block_x, 512);
    ck_assert_int_eq(c.block_y, 1);
    ck_assert_int_eq(c.input_mult[0], 1);
    ck_assert_int_eq(c.input_mult[1], 0);
    ck_assert_int_eq(c.output_mult[1], 1);
    ck_assert_int_eq(c.step_input, 512);
    ck_assert_int_eq(c.grid_x, 1);
    ck_assert_int_eq(c.grid_y, 1);
    ck_assert_int_eq(c.shared_bytes, 4 * 512);
    ck_assert_int_eq(c.staging_elems, 0);
}
END_TEST

/* bf16 with sum_functor's 8-wide request: the newer Reduce.cuh vectorises
 * it (dim0 512 -> 512 lanes); the older refuses (vt0 4 < 8): dim0 4096,
 * 512 lanes all the same, values read one at a time. */
START_TEST(t_all_bf16)
{
    bp_redcfg_t c = make(1, 4096, 1, 2, 4, 8);
    ck_assert_int_eq(c.vectorize_input, 1);
    ck_assert_int_eq(c.input_vec, 8);
    ck_assert_int_eq(c.block_x, 512);
    FLAGS = 0;
    c = make(1, 4096, 1, 2, 4, 8);
    FLAGS = BP_REDCFG_NEWER;
    ck_assert_int_eq(c.vectorize_input, 0);
    ck_assert_int_eq(c.output_vec, 1);
    ck_assert_int_eq(c.block_x, 512);
    ck_assert_int_eq(c.step_input, 512);
}
END_TEST

/* 128 values: vectorised by the newer rule (>= 128: dim0 32, one warp),
 * not by the older (> 128: dim0 128, 32 lanes wide as well). */
START_TEST(t_vec_threshold)
{
    bp_redcfg_t c = make(1, 128, 1, 4, 4, 4);
    ck_assert_int_eq(c.vectorize_input, 1);
    ck_assert_int_eq(c.block_x, 32);
    ck_assert_int_eq(c.x_first, 1);
    ck_assert_int_eq(c.shfl_desc, 1);
    FLAGS = 0;
    c = make(1, 128, 1, 4, 4, 4);
    FLAGS = BP_REDCFG_NEWER;
    ck_assert_int_eq(c.vectorize_input, 0);
    ck_assert_int_eq(c.block_x, 128);
    ck_assert_int_eq(c.x_first, 0);
    ck_assert_int_eq(c.shfl_desc, 0);
}
END_TEST

START_TEST(t_flags)
{
    ck_assert_int_eq(bp_redcfg_flags(NULL), BP_REDCFG_NEWER);
    ck_assert_int_eq(bp_redcfg_flags(""), BP_REDCFG_NEWER);
    ck_assert_int_eq(bp_redcfg_flags("run=yx"), BP_REDCFG_NEWER & ~BP_REDCFG_X_FIRST);
    ck_assert_int_eq(bp_redcfg_flags("vec128=gt,run=yx,shfl=asc"), 0);
    ck_assert_int_eq(bp_redcfg_flags("shfl=asc,shfl=desc"), BP_REDCFG_NEWER);
    ck_assert_int_eq(bp_redcfg_flags("run=zz"), -1);
    ck_assert_int_eq(bp_redcfg_flags("run=xy,"), BP_REDCFG_NEWER);
    ck_assert_int_eq(bp_redcfg_flags("run"), -1);
}
END_TEST

/* 2^20 values: vectorised, 512 x 1, 2048 values per thread >= 16: warp
 * split (multiplier 512, step 512); 4 blocks per SM, target 528 blocks,
 * one output: ctas = max(min(528, 2048/16 = 128), 2048/256 = 8) = 128,
 * step 65536. */
START_TEST(t_global)
{
    bp_redcfg_t c = make(1, 1 << 20, 1, 4, 4, 4);
    ck_assert_int_eq(c.input_mult[1], 512);
    ck_assert_int_eq(c.ctas_per_output, 128);
    ck_assert_int_eq(c.input_mult[2], 512);
    ck_assert_int_eq(c.step_input, 65536);
    ck_assert_int_eq(c.grid_y, 128);
    ck_assert_int_eq(c.staging_elems, 128);
}
END_TEST

/* [64, 64] over the last axis: dim0 64 (not vectorised), dim1 64: bw 32,
 * bh 16; 2 values per thread: outputs split over warps, step_output 16,
 * grid 4; warp-sized rows need no shared memory. */
START_TEST(t_rows)
{
    bp_redcfg_t c = make(64, 64, 1, 4, 4, 4);
    ck_assert_int_eq(c.vectorize_input, 0);
    ck_assert_int_eq(c.block_x, 32);
    ck_assert_int_eq(c.block_y, 16);
    ck_assert_int_eq(c.output_mult[1], 1);
    ck_assert_int_eq(c.step_output, 16);
    ck_assert_int_eq(c.grid_x, 4);
    ck_assert_int_eq(c.shared_bytes, 0);
}
END_TEST

/* [8, 100, 6] over the middle axis: not the fastest dimension; outputs
 * vectorised by 2 (6 is not a multiple of 4); dim0 48/2 = 24, at most 256
 * threads: bw 16, bh 16; outputs split over lanes (step 16) and, with
 * 100 < 256 values per thread, over warps (step 256): one block. */
START_TEST(t_middle_axis)
{
    bp_redcfg_t c = make(8, 100, 6, 4, 4, 4);
    ck_assert_int_eq(c.output_vec, 2);
    ck_assert_int_eq(c.block_x, 16);
    ck_assert_int_eq(c.block_y, 16);
    ck_assert_int_eq(c.input_mult[0], 0);
    ck_assert_int_eq(c.output_mult[0], 1);
    ck_assert_int_eq(c.output_mult[1], 16);
    ck_assert_int_eq(c.step_output, 256);
    ck_assert_int_eq(c.grid_x, 1);
    /* a misaligned input halves it again */
    bp_redcfg_t m;
    ck_assert_int_eq(bp_redcfg_make(&m, 8, 100, 6, 4, 4, 4, 4, ALIGNED + 4, &H100, FLAGS), 0);
    ck_assert_int_eq(m.output_vec, 1);
}
END_TEST

/* A reduced axis of 1 leaves nothing reduced: every output its own. */
START_TEST(t_len_one)
{
    bp_redcfg_t c = make(4, 1, 8, 4, 4, 4);
    ck_assert_int_eq(c.num_inputs, 1);
    ck_assert_int_eq(c.input_mult[0], 0);
    ck_assert_int_eq(c.output_vec, 4);
}
END_TEST

START_TEST(t_refused)
{
    bp_redcfg_t c;
    ck_assert_int_eq(bp_redcfg_make(&c, 1, (int64_t)1 << 31, 1, 4, 4, 4, 4, ALIGNED, &H100, FLAGS), -1);
    ck_assert_int_eq(bp_redcfg_make(&c, 0, 5, 1, 4, 4, 4, 4, ALIGNED, &H100, FLAGS), -1);
}
END_TEST

/* get_log_num_threads_x_inner_scan: 2^20 rows of 1: 9 + 0 - 20 wraps in
 * uint32_t and clamps to 9; 4 rows of 1000: (9 + 10 - 2) / 2 = 8; 1000
 * rows of 10: (9 + 4 - 10) / 2 = 1, clamped to 4. */
START_TEST(t_scan_width)
{
    ck_assert_uint_eq(bp_scan_log_threads_x(1u << 20, 1), 9);
    ck_assert_uint_eq(bp_scan_log_threads_x(4, 1000), 8);
    ck_assert_uint_eq(bp_scan_log_threads_x(1000, 10), 4);
    ck_assert_uint_eq(bp_scan_log_threads_x(2, 1u << 20), 9);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("redcfg");
    TCase *tc = tcase_create("redcfg");
    tcase_add_test(tc, t_all_fp32);
    tcase_add_test(tc, t_all_bf16);
    tcase_add_test(tc, t_vec_threshold);
    tcase_add_test(tc, t_flags);
    tcase_add_test(tc, t_global);
    tcase_add_test(tc, t_rows);
    tcase_add_test(tc, t_middle_axis);
    tcase_add_test(tc, t_len_one);
    tcase_add_test(tc, t_refused);
    tcase_add_test(tc, t_scan_width);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
