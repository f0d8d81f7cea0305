/* The reductions along an axis and the fused ops on every backend, against
 * values derived by hand (each case says how), and the CPU backend against
 * the MPFR oracle on random rows.  Where a backend's formulation gives
 * other bits than the exact value (ATen's CPU summation order, the pinned
 * CUDA order), the case states each backend's expectation.
 *
 * Built twice: check_rows runs the cases on cpu and oracle; check_rows_cuda
 * (BP_ROWS_CUDA) on cuda, skipping by the GPU rule (tests/gpu_rule.h)
 * where no GPU is usable. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "probe.h"
#ifdef BP_ROWS_CUDA
#include "gpu_rule.h"
#endif

enum { CPU = 1, ORACLE = 2, CUDA = 4, ALL = 7 };

typedef struct {
    const char *name;
    int on;            /* the backends this expectation is for */
    const char *ops;   /* the probe's ops; the result is buffer y */
    const char *dtype; /* y's dtype */
    int ndim;
    int64_t shape[4];
    int n;
    double v[12];
} row_case_t;

typedef struct {
    const char *ops;
    const char *want;
} row_bad_t;

#define CASCADE                                                                  \
    "  - {out: x, op: tensor, values: [1e8, 1, 1, 1, 1, 1, 1, 1, -1e8], dtype: fp32}\n"
#define LN2 0.6931471824645996 /* fp32(log 2): SLEEF's, CUDA's, MPFR's */

static const row_case_t cases[] = {
    /* exp(0) = 1 four times, sum 4, 1/4 exact */
    {"softmax_flat", ALL,
     "  - {out: x, op: tensor, values: [3, 3, 3, 3], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x, axis: -1}\n",
     "fp32", 1, {4}, 4, {0.25, 0.25, 0.25, 0.25}},
    /* along axis 0 (the inner-dimension kernels): two equal rows */
    {"softmax_axis0", ALL,
     "  - {out: x, op: tensor, values: [0, 1, 0, 1], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x, axis: 0}\n",
     "fp32", 2, {2, 2}, 4, {0.5, 0.5, 0.5, 0.5}},
    /* Rows past the persistent kernel (CUDA: cunn_SoftMaxForwardReg for
     * 4096, the ILP kernel with misaligned rows for 32001, the spatial
     * kernel with 64 threads per column for [2, 3000, 3] over axis 1):
     * exp(0) = 1 n times sums to n exactly in any order, 1/n rounded once;
     * amax keeps one value per row */
    {"softmax_long_reg", ALL,
     "  - {out: x, op: full, shape: [2, 4096], value: 0, dtype: fp32}\n"
     "  - {out: p, op: softmax, a: x, axis: -1}\n"
     "  - {out: y, op: amax, a: p, axis: -1}\n",
     "fp32", 1, {2}, 2, {0x1p-12, 0x1p-12}},
    {"softmax_long_ilp", ALL,
     "  - {out: x, op: full, shape: [3, 32001], value: 0, dtype: fp32}\n"
     "  - {out: p, op: softmax, a: x, axis: 1}\n"
     "  - {out: y, op: amax, a: p, axis: 1}\n",
     "fp32", 1, {3}, 3, {3.1249022867996246e-05, 3.1249022867996246e-05, 3.1249022867996246e-05}},
    {"softmax_spatial", ALL,
     "  - {out: x, op: full, shape: [2, 3000, 3], value: 0, dtype: fp32}\n"
     "  - {out: p, op: softmax, a: x, axis: 1}\n"
     "  - {out: y, op: amax, a: p, axis: 1}\n",
     "fp32", 2, {2, 3}, 6,
     {0.00033333332976326346, 0.00033333332976326346, 0.00033333332976326346,
      0.00033333332976326346, 0.00033333332976326346, 0.00033333332976326346}},
    /* The last axis multiplies by the reciprocal of the sum (ATen's
     * _vec_softmax_lastdim: e * (1 / s)), which here differs from e / s in
     * three of five elements ([1], [2], [4]: e / s gives 0x1.b90d7ap-6,
     * 0x1.f19034p-3, 0x1.2ebd18p-4).  The bits are PyTorch's: torch 1.13,
     * torch.softmax(torch.tensor([2.97, -0.18, 2.02, -0.14, 0.83]), -1) on
     * the CPU (AVX2; five values: sums left to right in any capability). */
    {"softmax_reciprocal", CPU,
     "  - {out: x, op: tensor, values: [2.97, -0.18, 2.02, -0.14, 0.83], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x, axis: -1}\n",
     "fp32", 1, {5}, 5, {0x1.41a378p-1, 0x1.b90d78p-6, 0x1.f19032p-3, 0x1.cb0d64p-6, 0x1.2ebd16p-4}},
    /* (x - m) - log(1 + 1) */
    {"log_softmax_pair", ALL,
     "  - {out: x, op: tensor, values: [5, 5], dtype: fp32}\n"
     "  - {out: y, op: log_softmax, a: x, axis: 0}\n",
     "fp32", 1, {2}, 2, {-LN2, -LN2}},
    /* The fixed formulation: exp(0) = 1 four times (and along axis 0 twice)
     * sums exactly in any order */
    {"softmax_fixed", ALL,
     "  - {out: x, op: tensor, values: [3, 3, 3, 3], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x, axis: -1, formulation: fixed}\n",
     "fp32", 1, {4}, 4, {0.25, 0.25, 0.25, 0.25}},
    {"softmax_fixed_axis0", ALL,
     "  - {out: x, op: tensor, values: [0, 1, 0, 1], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x, axis: 0, formulation: fixed}\n",
     "fp32", 2, {2, 2}, 4, {0.5, 0.5, 0.5, 0.5}},
    /* bf16 log_softmax of 257 zeros: s = 257 in float, log(257) =
     * 5.5490761 rounds to bf16 once, -5.5625 (177.57 steps of 2^-5: 178),
     * as the oracle's exact value does.  ATen's CPU kernel (the default)
     * rounds the sum to bf16 first (256) and log(256) = 5.5451775 to bf16
     * (5.53125) */
    {"log_softmax_fixed", ALL,
     "  - {out: x, op: full, shape: [257], value: 0, dtype: bf16}\n"
     "  - {out: z, op: log_softmax, a: x, axis: 0, formulation: fixed}\n"
     "  - {out: y, op: slice, a: z, axis: 0, start: 255, end: 257}\n",
     "bf16", 1, {2}, 2, {-5.5625, -5.5625}},
    {"log_softmax_default_bf16", CPU,
     "  - {out: x, op: full, shape: [257], value: 0, dtype: bf16}\n"
     "  - {out: z, op: log_softmax, a: x, axis: 0}\n"
     "  - {out: y, op: slice, a: z, axis: 0, start: 255, end: 257}\n",
     "bf16", 1, {2}, 2, {-5.53125, -5.53125}},
    /* silu's fixed formulation: x / (1 + exp(-x)): 0 / 2, 20 / (1 + 2e-9)
     * rounds to 20, 100 / (1 + 4e-44) to 100, -100 / (1 + inf) is -0 (the
     * oracle's exact value is a subnormal instead) */
    {"silu_fixed", CPU | CUDA,
     "  - {out: x, op: tensor, values: [0, 20, 100, -100], dtype: fp32}\n"
     "  - {out: y, op: silu, a: x, formulation: fixed}\n",
     "fp32", 1, {4}, 4, {0, 20, 100, -0.0}},
    /* ATen's cascade (9 values >= 8 lanes): acc = 0 + x8, then the lanes
     * in order: -1e8 + 1e8 + 1 * 7 = 7, mean 7/9; the exact sum is 7 too.
     * Reduce.cuh (CUDA): 8 lanes, lane 0 holds x0 and x8 in two
     * accumulators (1e8 + -1e8 = 0), lanes 1-7 a 1 each; the shuffles
     * give 7; 7 * fl(1/9) rounds to fl(7/9) */
    {"mean_cascade", ALL,
     CASCADE "  - {out: y, op: mean, a: x}\n", "fp32", 0, {0}, 1, {0.7777777910232544}},
    {"mean_sequential", CPU | CUDA,
     CASCADE "  - {out: y, op: mean, a: x, formulation: sequential}\n", "fp32", 0, {0}, 1,
     {0}},
    /* the oracle ignores the order */
    {"mean_sequential", ORACLE,
     CASCADE "  - {out: y, op: mean, a: x, formulation: sequential}\n", "fp32", 0, {0}, 1,
     {0.7777777910232544}},
    /* keepdim: rows [1,2,3] and [4,5,6] */
    {"mean_keepdim", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: mean, a: x, axis: 1, keepdim: true}\n",
     "fp32", 2, {2, 1}, 2, {2, 5}},
    /* squares of deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, / 3 */
    {"var_all", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], dtype: fp32}\n"
     "  - {out: y, op: var, a: x}\n",
     "fp32", 0, {0}, 1, {1.6666666269302368}},
    /* population variance of [1, 2] and [3, 5] */
    {"var_axis", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 5], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: var, a: x, axis: 1, correction: 0}\n",
     "fp32", 1, {2}, 2, {0.25, 1}},
    {"amax_axis", ALL,
     "  - {out: x, op: tensor, values: [1, 5, -2, 7, 0, 3], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: amax, a: x, axis: 1}\n",
     "fp32", 1, {2}, 2, {5, 7}},
    {"amin_keepdim", ALL,
     "  - {out: x, op: tensor, values: [1, 5, -2, 7, 0, 3], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: amin, a: x, axis: 0, keepdim: true}\n",
     "fp32", 2, {1, 3}, 3, {1, 0, -2}},
    {"amax_nan", ALL,
     "  - {out: x, op: tensor, values: [1, .nan, 3], dtype: fp32}\n"
     "  - {out: y, op: amax, a: x}\n",
     "fp32", 0, {0}, 1, {NAN}},
    {"amax_int", ALL,
     "  - {out: x, op: tensor, values: [4, -9, 2]}\n"
     "  - {out: y, op: amax, a: x}\n",
     "i64", 0, {0}, 1, {4}},
    /* log(exp(0) + exp(0)) + 0 */
    {"logsumexp_pair", ALL,
     "  - {out: x, op: tensor, values: [0, 0], dtype: fp32}\n"
     "  - {out: y, op: logsumexp, a: x, axis: 0}\n",
     "fp32", 0, {0}, 1, {LN2}},
    /* an infinite maximum is taken as 0: log(exp(inf)) + 0 = inf */
    {"logsumexp_inf", ALL,
     "  - {out: x, op: tensor, values: [.inf, 1], dtype: fp32}\n"
     "  - {out: y, op: logsumexp, a: x, axis: 0}\n",
     "fp32", 0, {0}, 1, {INFINITY}},
    {"prod", ALL,
     "  - {out: x, op: tensor, values: [2, 3, 4], dtype: fp32}\n"
     "  - {out: y, op: prod, a: x}\n",
     "fp32", 0, {0}, 1, {24}},
    /* ATen's CPU prod of 32 floats: four 8-lane registers, lane 0 is
     * (x0 x8)(x16 x24) = (2^100 2^-100)(1 1) = 1, lane 1 likewise; left to
     * right 2^100 2^100 overflows to inf first */
    {"prod_lanes", CPU | ORACLE,
     "  - {out: x, op: tensor, values: [1.2676506002282294e30, 1.2676506002282294e30, 1, 1, 1, "
     "1, 1, 1, 7.888609052210118e-31, 7.888609052210118e-31, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
     "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], dtype: fp32}\n"
     "  - {out: y, op: prod, a: x}\n",
     "fp32", 0, {0}, 1, {1}},
    {"prod_int", ALL,
     "  - {out: x, op: tensor, values: [2, -3, 4], dtype: i32}\n"
     "  - {out: y, op: prod, a: x}\n",
     "i64", 0, {0}, 1, {-24}},
    {"cumsum", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: cumsum, a: x, axis: 0}\n",
     "fp32", 2, {2, 2}, 4, {1, 2, 4, 6}},
    {"cumsum_int", ALL,
     "  - {out: x, op: tensor, values: [5, -1, 7], dtype: i32}\n"
     "  - {out: y, op: cumsum, a: x, axis: -1}\n",
     "i64", 1, {3}, 3, {5, 4, 11}},
    /* A whole-tensor fp32 scan, x = [2^24, 1 (29 times), 0]: CUDA takes
     * cub's order (kernels/scan.cu), thread 0 folding x0..x14 (each 1 lost
     * against 2^24: a tie, to even), thread 1 x15..x29 = 15 exactly; thread
     * 1 scans from thread 0's 2^24 (each 1 lost again), thread 2 from the
     * warp's p0 + p1 = 2^24 + 15, a tie, to even: 2^24 + 16, and adds 0.
     * The CPU sums in double (cpu_cum_base_kernel), the oracle exactly:
     * 2^24 + 29 both times, a tie, to even: 2^24 + 28. */
    {"cumsum_cub_order", CUDA,
     "  - {out: x, op: tensor, values: [16777216, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], dtype: fp32}\n"
     "  - {out: z, op: cumsum, a: x, axis: 0}\n"
     "  - {out: y, op: slice, a: z, axis: 0, start: 29, end: 31}\n",
     "fp32", 1, {2}, 2, {16777216, 16777232}},
    {"cumsum_cub_order", CPU | ORACLE,
     "  - {out: x, op: tensor, values: [16777216, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], dtype: fp32}\n"
     "  - {out: z, op: cumsum, a: x, axis: 0}\n"
     "  - {out: y, op: slice, a: z, axis: 0, start: 29, end: 31}\n",
     "fp32", 1, {2}, 2, {16777244, 16777244}},
    /* cub's thread 0 adds nothing to the first value: -0 stays -0 */
    /* a 0-d tensor is copied (impl_func_cum_ops: result.fill_(self)), on
     * every device: -0.0 stays -0.0, where 0 + -0.0 would be +0.0 */
    {"cumsum_0d_negzero", ALL,
     "  - {out: x, op: tensor, values: [-0.0], shape: [], dtype: fp32}\n"
     "  - {out: y, op: cumsum, a: x, axis: 0}\n",
     "fp32", 0, {0}, 1, {-0.0}},
    {"cumsum_cub_negzero", CUDA,
     "  - {out: x, op: tensor, values: [-0.0, 1], dtype: fp32}\n"
     "  - {out: y, op: cumsum, a: x, axis: 0}\n",
     "fp32", 1, {2}, 2, {-0.0, 1}},
    /* mean(x^2) = 4, rsqrt 0.5 (exact on every backend), x * 0.5 = 1, * w */
    {"rms_norm", ALL,
     "  - {out: x, op: tensor, values: [2, 2, 2, 2], dtype: fp32}\n"
     "  - {out: w, op: tensor, values: [1, 0.5, 2, 3], dtype: fp32}\n"
     "  - {out: y, op: rms_norm, a: x, b: w, eps: 0}\n",
     "fp32", 1, {4}, 4, {1, 0.5, 2, 3}},
    /* The fixed formulation (the layer stack's): ss = 1 + 1 + 9 + 25 = 36
     * in any order, r = 1 / sqrt(36 / 4) = fl(1/3) = 0x1.555556p-2 (CUDA's
     * rsqrtf(9) within an ulp of it gives the same below), x * r in float
     * rounded to bf16: 0.333984375, 1, 1.6640625; times w = 1.25 rounded
     * to bf16: 0.41796875 (213.75 steps of 2^-9: 214), 1.25, 2.078125
     * (133.125 steps of 2^-6: 133).  The default rounds once: fl(x * r) *
     * 1.25 = 0.41666669 (213.33 steps: 213 = 0.416015625) and 2.0833334
     * (2.078125); the oracle's exact 1.25 x / 3 rounds the same. */
    {"rms_norm_fixed", CPU | CUDA,
     "  - {out: x, op: tensor, values: [1, 1, 3, 5], dtype: bf16}\n"
     "  - {out: w, op: full, shape: [4], value: 1.25, dtype: bf16}\n"
     "  - {out: y, op: rms_norm, a: x, b: w, eps: 0, formulation: fixed}\n",
     "bf16", 1, {4}, 4, {0.41796875, 0.41796875, 1.25, 2.078125}},
    {"rms_norm_fixed", ORACLE,
     "  - {out: x, op: tensor, values: [1, 1, 3, 5], dtype: bf16}\n"
     "  - {out: w, op: full, shape: [4], value: 1.25, dtype: bf16}\n"
     "  - {out: y, op: rms_norm, a: x, b: w, eps: 0, formulation: fixed}\n",
     "bf16", 1, {4}, 4, {0.416015625, 0.416015625, 1.25, 2.078125}},
    {"rms_norm_default_bf16", ALL,
     "  - {out: x, op: tensor, values: [1, 1, 3, 5], dtype: bf16}\n"
     "  - {out: w, op: full, shape: [4], value: 1.25, dtype: bf16}\n"
     "  - {out: y, op: rms_norm, a: x, b: w, eps: 0}\n",
     "bf16", 1, {4}, 4, {0.416015625, 0.416015625, 1.25, 2.078125}},
    /* The order, left to right on the CPU: x = [1, 2^-12 (8 times), 1, 0 (6
     * times)], squares 1, 2^-24 ..., 1: each 2^-24 meets 1 and is lost
     * (1 + 2^-24 is a tie, to even), ss = 2, not the exact 2 + 2^-21;
     * ss / 16 = 0.125, r = 1 / fl(sqrt(0.125)) = 0x1.6a09e6p+1 (CUDA's tree
     * keeps 2^-22 of it: ss = 2 + 2^-22, so no CUDA value here); y = x * r
     * with w = 1: r and 2^-12 r, exact. */
    {"rms_norm_fixed_order", CPU,
     "  - {out: x, op: tensor, values: [1, 0.000244140625, 0.000244140625, 0.000244140625,"
     " 0.000244140625, 0.000244140625, 0.000244140625, 0.000244140625, 0.000244140625, 1,"
     " 0, 0, 0, 0, 0, 0], dtype: fp32}\n"
     "  - {out: w, op: full, shape: [16], value: 1, dtype: fp32}\n"
     "  - {out: z, op: rms_norm, a: x, b: w, eps: 0, formulation: fixed}\n"
     "  - {out: y, op: slice, a: z, axis: 0, start: 0, end: 2}\n",
     "fp32", 1, {2}, 2, {0x1.6a09e6p+1, 0x1.6a09e6p-11}},
    /* mean 2, variance 1, rstd 1: [-1, 1] * 2 + [1, -1] */
    {"layer_norm", ALL,
     "  - {out: x, op: tensor, values: [1, 3], shape: [1, 2], dtype: fp32}\n"
     "  - {out: w, op: tensor, values: [2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, -1], dtype: fp32}\n"
     "  - {out: y, op: layer_norm, inputs: [x, w, b], eps: 0}\n",
     "fp32", 2, {1, 2}, 2, {-1, 1}},
    /* CUDA's vectorised kernel (H % 4 == 0): threads 0 and 1 fold [0, 0, 0,
     * 0] and [4, 4, 4, 4] exactly (means 0 and 4, sigma2 0), their combine
     * gives mean 2 and sigma2 0 + 0 + 16 * 4 * (4/8) = 32, / 8 = 4, rstd
     * 0.5; every other backend's mean 2 and variance 4 are exact too */
    {"layer_norm_vec", ALL,
     "  - {out: x, op: tensor, values: [0, 0, 0, 0, 4, 4, 4, 4], dtype: fp32}\n"
     "  - {out: y, op: layer_norm, inputs: [x], eps: 0}\n",
     "fp32", 1, {8}, 8, {-1, -1, -1, -1, 1, 1, 1, 1}},
    {"layer_norm_plain", ALL,
     "  - {out: x, op: tensor, values: [4, 8], dtype: fp32}\n"
     "  - {out: y, op: layer_norm, inputs: [x], eps: 0}\n",
     "fp32", 1, {2}, 2, {-1, 1}},
    /* An explicit dtype: the operands converted to it first, as
     * F.layer_norm(x.to(dtype), ...) (CUDA read fp64 and bf16 operands as
     * if they were fp32: found by the fuzzer).  x as layer_norm_vec's, so
     * mean 2, variance 4, rstd 0.5: [-1, 1] * 2 + 1 */
    {"layer_norm_dtype", ALL,
     "  - {out: x, op: tensor, values: [0, 0, 0, 0, 4, 4, 4, 4], dtype: fp64}\n"
     "  - {out: w, op: tensor, values: [2, 2, 2, 2, 2, 2, 2, 2], dtype: fp64}\n"
     "  - {out: b, op: tensor, values: [1, 1, 1, 1, 1, 1, 1, 1], dtype: fp64}\n"
     "  - {out: y, op: layer_norm, inputs: [x, w, b], eps: 0, dtype: fp32}\n",
     "fp32", 1, {8}, 8, {-1, -1, -1, -1, 3, 3, 3, 3}},
    /* rms_norm's case with bf16 operands and dtype fp32 */
    {"rms_norm_dtype", ALL,
     "  - {out: x, op: tensor, values: [2, 2, 2, 2], dtype: bf16}\n"
     "  - {out: w, op: tensor, values: [1, 0.5, 2, 3], dtype: bf16}\n"
     "  - {out: y, op: rms_norm, a: x, b: w, eps: 0, dtype: fp32}\n",
     "fp32", 1, {4}, 4, {1, 0.5, 2, 3}},
    /* [[1,2],[3,4]] @ I, then [[1,1],[1,1]] @ [[1,2],[3,4]] */
    {"bmm", ALL,
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 1, 1, 1, 1], shape: [2, 2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 0, 0, 1, 1, 2, 3, 4], shape: [2, 2, 2], dtype: fp32}\n"
     "  - {out: y, op: bmm, a: a, b: b}\n",
     "fp32", 3, {2, 2, 2}, 8, {1, 2, 3, 4, 4, 6, 4, 6}},
    /* 0.5 * [10, 20] (broadcast) + 2 * [[1, 2], [3, 4]] @ I: all exact */
    {"baddbmm", ALL,
     "  - {out: c, op: tensor, values: [10, 20], dtype: fp32}\n"
     "  - {out: a, op: tensor, values: [1, 2, 3, 4], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 0, 0, 1], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: y, op: baddbmm, inputs: [c, a, b], beta: 0.5, alpha: 2}\n",
     "fp32", 3, {1, 2, 2}, 4, {7, 14, 11, 18}},
    /* beta 0: the input (NaN) is not read; -1 * a @ I */
    {"baddbmm_beta0", ALL,
     "  - {out: c, op: tensor, values: [.nan], dtype: fp32}\n"
     "  - {out: a, op: tensor, values: [1, 2, 3, 4], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 0, 0, 1], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: y, op: baddbmm, inputs: [c, a, b], beta: 0, alpha: -1}\n",
     "fp32", 3, {1, 2, 2}, 4, {-1, -2, -3, -4}},
    /* k = 0: beta * input (CUDA: result.mul_(beta), no GEMM) */
    {"baddbmm_k0", ALL,
     "  - {out: c, op: tensor, values: [1, 2], dtype: fp32}\n"
     "  - {out: a, op: uniform, shape: [1, 1, 0], seed: 1}\n"
     "  - {out: b, op: uniform, shape: [1, 0, 2], seed: 2}\n"
     "  - {out: y, op: baddbmm, inputs: [c, a, b], beta: 2, alpha: 3}\n",
     "fp32", 3, {1, 1, 2}, 2, {2, 4}},
    /* input = beta = 1 + 2^-23, acc = 2^-12 * 2^-12 = 2^-24, alpha 1: the
     * CPU rounds input * beta = 1 + 2^-22 + 2^-46 to 1 + 2^-22, then
     * 1 + 2^-22 + 2^-24 is a tie that goes to even, 1 + 2^-22 (unfused,
     * baddbmm_cpu_kernel); the exact 1 + 2^-22 + 2^-24 + 2^-46 rounds up
     * to 1 + 3 * 2^-23 (oracle) */
#define BADD_ROUND                                                                         \
    "  - {out: c, op: tensor, values: [1.00000011920928955078125], dtype: fp32}\n"          \
    "  - {out: a, op: tensor, values: [0.000244140625], shape: [1, 1, 1], dtype: fp32}\n"   \
    "  - {out: y, op: baddbmm, inputs: [c, a, a], beta: 1.00000011920928955078125}\n"
    {"baddbmm_round_cpu", CPU, BADD_ROUND, "fp32", 3, {1, 1, 1}, 1, {1.0000002384185791015625}},
    {"baddbmm_round_oracle", ORACLE, BADD_ROUND, "fp32", 3, {1, 1, 1}, 1,
     {1.00000035762786865234375}},
    /* F.linear(x, w): x [[1, 2], [3, 4]] @ w^T, w [[1, 0], [1, 1], [2, -1]]:
     * rows 1, 1 + 2, 2 - 2 and 3, 3 + 4, 6 - 4; all exact */
    {"linear", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], shape: [2, 2], dtype: fp32}\n"
     "  - {out: w, op: tensor, values: [1, 0, 1, 1, 2, -1], shape: [3, 2], dtype: fp32}\n"
     "  - {out: y, op: linear, inputs: [x, w]}\n",
     "fp32", 2, {2, 3}, 6, {1, 3, 0, 3, 7, 2}},
    /* the same with a bias [10, 20, 30] on a 3-D x [1, 2, 2] (bf16: every
     * value exact) */
    {"linear_bias_3d", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], shape: [1, 2, 2], dtype: bf16}\n"
     "  - {out: w, op: tensor, values: [1, 0, 1, 1, 2, -1], shape: [3, 2], dtype: bf16}\n"
     "  - {out: b, op: tensor, values: [10, 20, 30], dtype: bf16}\n"
     "  - {out: y, op: linear, inputs: [x, w, b]}\n",
     "bf16", 3, {1, 2, 3}, 6, {11, 23, 30, 13, 27, 32}},
    /* x @ w.transpose(0, 1) written out: linear's values (CUDA multiplies
     * the transposed view) */
    {"matmul_transposed", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], shape: [2, 2], dtype: fp16}\n"
     "  - {out: w, op: tensor, values: [1, 0, 1, 1, 2, -1], shape: [3, 2], dtype: fp16}\n"
     "  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}\n"
     "  - {out: y, op: matmul, a: x, b: wt}\n",
     "fp16", 2, {2, 3}, 6, {1, 3, 0, 3, 7, 2}},
    /* torch.matmul folds a [2, 1, 2] into [2, 2] */
    {"matmul_3d", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4], shape: [2, 1, 2], dtype: fp32}\n"
     "  - {out: w, op: tensor, values: [1, 1, 2, 0, 1, -1], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: matmul, a: x, b: w}\n",
     "fp32", 3, {2, 1, 3}, 6, {1, 3, 0, 3, 7, 2}},
    /* leading dimensions that do not fold (strides [2, 4, 1]): CUDA's
     * matmul takes bmm with w expanded over the batch (stride 0) */
    {"matmul_3d_unfolded", ALL,
     "  - {out: x, op: tensor, values: [1, 2, 3, 4, 5, 6, 7, 8], shape: [2, 2, 2], dtype: fp32}\n"
     "  - {out: xt, op: transpose, a: x, dim0: 0, dim1: 1}\n"
     "  - {out: w, op: tensor, values: [1, 1, 2, 0, 1, -1], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: matmul, a: xt, b: w}\n",
     "fp32", 3, {2, 2, 3}, 12, {1, 3, 0, 5, 11, 4, 3, 7, 2, 7, 15, 6}},
    /* addmm: 0.5 * [10, 20] (broadcast) + 2 * [[1, 2], [3, 4]] @ I */
    {"addmm", ALL,
     "  - {out: c, op: tensor, values: [10, 20], dtype: fp32}\n"
     "  - {out: a, op: tensor, values: [1, 2, 3, 4], shape: [2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 0, 0, 1], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: addmm, inputs: [c, a, b], beta: 0.5, alpha: 2}\n",
     "fp32", 2, {2, 2}, 4, {7, 14, 11, 18}},
    /* beta 0: the input (NaN) is not read */
    {"addmm_beta0", ALL,
     "  - {out: c, op: tensor, values: [.nan], dtype: fp32}\n"
     "  - {out: a, op: tensor, values: [1, 2, 3, 4], shape: [2, 2], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 0, 0, 1], shape: [2, 2], dtype: fp32}\n"
     "  - {out: y, op: addmm, inputs: [c, a, b], beta: 0, alpha: -1}\n",
     "fp32", 2, {2, 2}, 4, {-1, -2, -3, -4}},
    /* k = 0: beta * input (CUDA: at::mul_out, no GEMM) */
    {"addmm_k0", ALL,
     "  - {out: c, op: tensor, values: [1, 2], dtype: fp32}\n"
     "  - {out: a, op: uniform, shape: [1, 0], seed: 1}\n"
     "  - {out: b, op: uniform, shape: [0, 2], seed: 2}\n"
     "  - {out: y, op: addmm, inputs: [c, a, b], beta: 2, alpha: 3}\n",
     "fp32", 2, {1, 2}, 2, {2, 4}},
    /* baddbmm_round's case as addmm: the CPU's unfused combine gives
     * 1 + 2^-22, the oracle's exact value rounds to 1 + 3 * 2^-23 */
#define ADDMM_ROUND                                                                        \
    "  - {out: c, op: tensor, values: [1.00000011920928955078125], dtype: fp32}\n"          \
    "  - {out: a, op: tensor, values: [0.000244140625], shape: [1, 1], dtype: fp32}\n"      \
    "  - {out: y, op: addmm, inputs: [c, a, a], beta: 1.00000011920928955078125}\n"
    {"addmm_round_cpu", CPU, ADDMM_ROUND, "fp32", 2, {1, 1}, 1, {1.0000002384185791015625}},
    {"addmm_round_oracle", ORACLE, ADDMM_ROUND, "fp32", 2, {1, 1}, 1,
     {1.00000035762786865234375}},
    /* linear's bias added to the accumulator: x [1, 2^-24] . w [1, 1] is
     * 1 + 2^-24 exactly, a tie the CPU's float accumulator rounds to 1,
     * and 1 + bias 2^-24 ties to 1 again; the oracle rounds the exact
     * 1 + 2^-23 once: 1.00000011920928955078125 */
#define LINEAR_ROUND                                                                \
    "  - {out: x, op: tensor, values: [1, 0.000000059604644775390625], shape: [1, 2], " \
    "dtype: fp32}\n"                                                                   \
    "  - {out: w, op: tensor, values: [1, 1], shape: [1, 2], dtype: fp32}\n"           \
    "  - {out: b, op: tensor, values: [0.000000059604644775390625], dtype: fp32}\n"    \
    "  - {out: y, op: linear, inputs: [x, w, b]}\n"
    {"linear_round_cpu", CPU, LINEAR_ROUND, "fp32", 2, {1, 1}, 1, {1}},
    {"linear_round_oracle", ORACLE, LINEAR_ROUND, "fp32", 2, {1, 1}, 1,
     {1.00000011920928955078125}},
    /* q k^T = 0: each of 4 keys weighs 1/4; out = the mean of v's rows */
    {"sdpa_uniform", ALL,
     "  - {out: q, op: tensor, values: [0, 0], shape: [1, 1, 2], dtype: fp32}\n"
     "  - {out: k, op: tensor, values: [0, 0, 0, 0, 0, 0, 0, 0], shape: [1, 4, 2], dtype: fp32}\n"
     "  - {out: v, op: tensor, values: [1, 2, 3, 4, 5, 6, 7, 9], shape: [1, 4, 2], dtype: fp32}\n"
     "  - {out: y, op: sdpa, inputs: [q, k, v]}\n",
     "fp32", 3, {1, 1, 2}, 2, {4, 5.25}},
    /* sdpa_uniform's with fp64 q, k, v and dtype bf16: each converted to
     * bf16 first (exact here), then widened (CUDA widened fp64 operands as
     * fp64 into fp32 buffers, writing past them) */
    {"sdpa_dtype", ALL,
     "  - {out: q, op: tensor, values: [0, 0], shape: [1, 1, 2], dtype: fp64}\n"
     "  - {out: k, op: tensor, values: [0, 0, 0, 0, 0, 0, 0, 0], shape: [1, 4, 2], dtype: fp64}\n"
     "  - {out: v, op: tensor, values: [1, 2, 3, 4, 5, 6, 7, 9], shape: [1, 4, 2], dtype: fp64}\n"
     "  - {out: y, op: sdpa, inputs: [q, k, v], dtype: bf16}\n",
     "bf16", 3, {1, 1, 2}, 2, {4, 5.25}},
    /* causal: query 0 sees key 0 only, query 1 both (1/2 each) */
    {"sdpa_causal", ALL,
     "  - {out: q, op: tensor, values: [0, 0, 0, 0], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: v, op: tensor, values: [2, 4, 6, 8], shape: [1, 2, 2], dtype: fp32}\n"
     "  - {out: y, op: sdpa, inputs: [q, q, v], is_causal: true}\n",
     "fp32", 3, {1, 2, 2}, 4, {2, 4, 4, 6}},
    /* The causal mask is added (attn.add_(mask)): row 0's masked score
     * 1 * inf + -inf is NaN, so the row is NaN (setting -inf there would
     * give softmax [1, 0] and v[0] = 3); row 1 holds +inf unmasked: NaN
     * too (inf - inf in the softmax). */
    {"sdpa_causal_masked_inf", ALL,
     "  - {out: q, op: tensor, values: [1, 1], shape: [2, 1], dtype: fp32}\n"
     "  - {out: k, op: tensor, values: [1, .inf], shape: [2, 1], dtype: fp32}\n"
     "  - {out: v, op: tensor, values: [3, 5], shape: [2, 1], dtype: fp32}\n"
     "  - {out: y, op: sdpa, inputs: [q, k, v], is_causal: true}\n",
     "fp32", 2, {2, 1}, 2, {NAN, NAN}},
    /* A row whose scores are all -inf is 0 (_safe_softmax), not NaN:
     * 1 * -inf; then row 1 of the causal case below: [2 * 1, masked]. */
    {"sdpa_row_all_neg_inf", ALL,
     "  - {out: q, op: tensor, values: [1, 2], shape: [2, 1], dtype: fp32}\n"
     "  - {out: k, op: tensor, values: [-.inf, 1], shape: [2, 1], dtype: fp32}\n"
     "  - {out: v, op: tensor, values: [3, 5], shape: [2, 1], dtype: fp32}\n"
     "  - {out: y, op: sdpa, inputs: [q, k, v], is_causal: true}\n",
     "fp32", 2, {2, 1}, 2, {0, 5}},
};

static const row_bad_t bad[] = {
    {"  - {out: x, op: tensor, values: [1], dtype: fp32}\n"
     "  - {out: y, op: softmax, a: x}\n",
     "'axis'"},
    {"  - {out: x, op: uniform, shape: [2, 0], seed: 1}\n"
     "  - {out: y, op: amax, a: x, axis: 1}\n",
     "amax over an empty dimension"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: w, op: uniform, shape: [2], seed: 2}\n"
     "  - {out: y, op: rms_norm, a: x, b: w}\n",
     "weight and bias must be [3]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: y, op: layer_norm, inputs: [x, x, x, x]}\n",
     "layer_norm takes inputs [x], [x, weight] or [x, weight, bias]"},
    {"  - {out: x, op: uniform, shape: [2, 3, 4], seed: 1}\n"
     "  - {out: y, op: bmm, a: x, b: x}\n",
     "bmm needs [B, m, k] x [B, k, n]"},
    {"  - {out: x, op: uniform, shape: [2, 3, 4], seed: 1}\n"
     "  - {out: y, op: baddbmm, inputs: [x, x, x]}\n",
     "baddbmm needs batch1 [B, m, k] and batch2 [B, k, n]"},
    {"  - {out: x, op: uniform, shape: [2, 3, 3], seed: 1}\n"
     "  - {out: c, op: uniform, shape: [2], seed: 1}\n"
     "  - {out: y, op: baddbmm, inputs: [c, x, x]}\n",
     "baddbmm's input [2] does not broadcast to [2, 3, 3]"},
    {"  - {out: x, op: uniform, shape: [2, 3, 3], seed: 1}\n"
     "  - {out: y, op: baddbmm, inputs: [x, x]}\n",
     "baddbmm takes inputs [input, batch1, batch2]"},
    {"  - {out: q, op: uniform, shape: [2, 3, 4], seed: 1}\n"
     "  - {out: k, op: uniform, shape: [2, 3, 5], seed: 1}\n"
     "  - {out: y, op: sdpa, inputs: [q, k, k]}\n",
     "sdpa needs q [..., L, E]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: y, op: linear, inputs: [x]}\n",
     "linear takes inputs [x, weight] or [x, weight, bias]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: w, op: uniform, shape: [4, 2], seed: 1}\n"
     "  - {out: y, op: linear, inputs: [x, w]}\n",
     "linear needs x [..., k] and weight [n, k], got [2, 3] and [4, 2]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: w, op: uniform, shape: [4, 3], seed: 1}\n"
     "  - {out: b, op: uniform, shape: [3], seed: 1}\n"
     "  - {out: y, op: linear, inputs: [x, w, b]}\n",
     "linear's bias [3] does not broadcast to [2, 4]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: y, op: addmm, inputs: [x, x, x]}\n",
     "addmm needs mat1 [m, k] and mat2 [k, n], got [2, 3] and [2, 3]"},
    {"  - {out: x, op: uniform, shape: [3, 3], seed: 1}\n"
     "  - {out: c, op: uniform, shape: [2], seed: 1}\n"
     "  - {out: y, op: addmm, inputs: [c, x, x]}\n",
     "addmm's input [2] does not broadcast to [3, 3]"},
    {"  - {out: x, op: uniform, shape: [3, 3], seed: 1}\n"
     "  - {out: y, op: addmm, inputs: [x, x]}\n",
     "addmm takes inputs [input, mat1, mat2]"},
    {"  - {out: x, op: uniform, shape: [2, 3], seed: 1}\n"
     "  - {out: w, op: uniform, shape: [4, 3], seed: 1, dtype: bf16}\n"
     "  - {out: y, op: linear, inputs: [x, w]}\n",
     "linear needs operands of one float dtype, got fp32 and bf16"},
    {"  - {out: x, op: uniform, shape: [3], seed: 1}\n"
     "  - {out: y, op: rms_norm, a: x, b: x, eps: -1}\n",
     "eps must be a finite number >= 0"},
};

#ifdef BP_ROWS_CUDA
static const char *const backends[] = {"cuda"};
static const int masks[] = {CUDA};
#else
static const char *const backends[] = {"cpu", "oracle"};
static const int masks[] = {CPU, ORACLE};
#endif
#define NBE (sizeof backends / sizeof backends[0])
#define NCASES (sizeof cases / sizeof cases[0])

static bp_probe_t *load(const char *ops, bp_error_t *err)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "name: t\ndescription: d\ndtypes: [fp32]\nops:\n%soutputs:\n  - {name: y}\n", ops);
    bp_probe_t *p = NULL;
    bp_probe_parse(yaml, strlen(yaml), "t.yaml", &p, err);
    return p;
}

static bp_buf_t *run(const char *bname, bp_probe_t *p, bp_error_t *err)
{
    bp_backend_t *be = NULL;
    ck_assert_msg(bp_backend_open(bname, NULL, &be, err) == BP_OK, "%s", err->msg);
    bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
    bp_status st = bp_backend_run(be, p, BP_F32, bufs, err);
    bp_backend_close(be);
    if (st) {
        bp_backend_bufs_free(bufs, p->nops);
        free(bufs);
        return NULL;
    }
    return bufs;
}

START_TEST(t_case)
{
    const row_case_t *c = &cases[_i % NCASES];
    int b = _i / (int)NCASES;
    if (!(c->on & masks[b]))
        return;
    const char *bname = backends[b];
    bp_error_t err = {0};
    bp_probe_t *p = load(c->ops, &err);
    ck_assert_msg(p, "%s: %s", c->name, err.msg);
    bp_buf_t *bufs = run(bname, p, &err);
    ck_assert_msg(bufs, "%s on %s: %s", c->name, bname, err.msg);
    const bp_buf_t *y = &bufs[bp_probe_find_buf(p, "y")];
    bp_dtype_t dt;
    ck_assert(bp_dtype_parse(c->dtype, &dt));
    ck_assert_msg(y->dtype == dt, "%s on %s: dtype %s", c->name, bname,
                  bp_dtype_name(y->dtype));
    char want[96], got[96];
    bp_shape_format(c->ndim, c->shape, want, sizeof want);
    bp_shape_format(y->ndim, y->shape, got, sizeof got);
    ck_assert_msg(strcmp(want, got) == 0, "%s on %s: shape %s, expected %s", c->name, bname,
                  got, want);
    ck_assert_uint_eq(y->numel, (size_t)c->n);
    for (int i = 0; i < c->n; i++) {
        double v = bp_buf_get(y, (size_t)i);
        ck_assert_msg((v == c->v[i] && !signbit(v) == !signbit(c->v[i])) ||
                          (isnan(v) && isnan(c->v[i])),
                      "%s on %s: element %d is %.17g, expected %.17g", c->name, bname, i, v,
                      c->v[i]);
    }
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_probe_free(p);
}
END_TEST

START_TEST(t_bad)
{
    bp_error_t err = {0};
    bp_probe_t *p = load(bad[_i].ops, &err);
    bp_buf_t *bufs = p ? run(backends[0], p, &err) : NULL;
    ck_assert_msg(!bufs, "case %d ran", _i);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "got '%s', want '%s'", err.msg,
                  bad[_i].want);
    bp_probe_free(p);
}
END_TEST

/* Every row op over empty operands (PyTorch 1.13 and 2.x alike): a result
 * of no elements, or, over an empty extent, PyTorch's fill: sum 0, prod 1,
 * mean and var NaN (0/0), logsumexp -inf (log 0), matmul, bmm and sdpa
 * over no keys 0 (sums of nothing), baddbmm beta * input; amax and amin
 * refused.  [0, 100000] softmax over axis 0 once read 100000 values past
 * an empty buffer on the CPU. */
typedef struct {
    const char *ops; /* y from x (and w, b) */
    int ndim;
    int64_t shape[3];
    double fill; /* every element of y (when it has any) */
} empty_case_t;

#define Z(shape) "  - {out: x, op: zeros, shape: " shape ", dtype: $t}\n"
#define Y(rest) "  - {out: y, op: " rest "}\n"
static const empty_case_t empties[] = {
    {Z("[0, 100000]") Y("softmax, a: x, axis: 0"), 2, {0, 100000}, 0},
    {Z("[0, 4]") Y("softmax, a: x, axis: 1"), 2, {0, 4}, 0},
    {Z("[4, 0]") Y("softmax, a: x, axis: 1"), 2, {4, 0}, 0},
    {Z("[2, 0, 3]") Y("softmax, a: x, axis: 1"), 3, {2, 0, 3}, 0},
    {Z("[0, 4]") Y("log_softmax, a: x, axis: 0"), 2, {0, 4}, 0},
    {Z("[4, 0]") Y("log_softmax, a: x, axis: -1"), 2, {4, 0}, 0},
    {Z("[2, 0, 3]") Y("log_softmax, a: x, axis: 1"), 3, {2, 0, 3}, 0},
    {Z("[0, 4]") Y("cumsum, a: x, axis: 0"), 2, {0, 4}, 0},
    {Z("[4, 0]") Y("cumsum, a: x, axis: 0"), 2, {4, 0}, 0},
    {Z("[0, 4]") Y("sum, a: x, axis: 0"), 1, {4}, 0},
    {Z("[0, 4]") Y("sum, a: x, axis: 1"), 1, {0}, 0},
    {Z("[4, 0]") Y("sum, a: x"), 0, {0}, 0},
    {Z("[2, 0, 3]") Y("sum, a: x, axis: 1, keepdim: true, formulation: pairwise"), 3, {2, 1, 3}, 0},
    {Z("[0, 4]") Y("mean, a: x, axis: 0"), 1, {4}, NAN},
    {Z("[4, 0]") Y("mean, a: x, axis: 1, formulation: sequential"), 1, {4}, NAN},
    {Z("[0]") Y("mean, a: x"), 0, {0}, NAN},
    {Z("[0, 4]") Y("var, a: x, axis: 0"), 1, {4}, NAN},
    {Z("[4, 0]") Y("var, a: x, axis: 1, correction: 0"), 1, {4}, NAN},
    {Z("[0]") Y("var, a: x"), 0, {0}, NAN},
    {Z("[0, 4]") Y("prod, a: x, axis: 0"), 1, {4}, 1},
    {Z("[2, 0, 3]") Y("prod, a: x, axis: 1"), 2, {2, 3}, 1},
    {Z("[0, 4]") Y("logsumexp, a: x, axis: 0"), 1, {4}, -INFINITY},
    {Z("[4, 0]") Y("logsumexp, a: x, axis: 1, keepdim: true"), 2, {4, 1}, -INFINITY},
    {Z("[0, 4]") Y("amax, a: x, axis: 1"), 1, {0}, 0},
    {Z("[0, 4]") Y("amin, a: x, axis: 1"), 1, {0}, 0},
    {Z("[3, 0]") "  - {out: w, op: ones, shape: [0], dtype: $t}\n" Y("rms_norm, a: x, b: w"),
     2, {3, 0}, 0},
    {Z("[0, 4]") "  - {out: w, op: ones, shape: [4], dtype: $t}\n" Y("rms_norm, a: x, b: w"),
     2, {0, 4}, 0},
    {Z("[3, 0]") Y("layer_norm, inputs: [x]"), 2, {3, 0}, 0},
    {Z("[0, 4]") Y("layer_norm, inputs: [x]"), 2, {0, 4}, 0},
    {Z("[3, 0]") "  - {out: w, op: zeros, shape: [0, 2], dtype: $t}\n" Y("matmul, a: x, b: w"),
     2, {3, 2}, 0},
    {Z("[0, 3]") "  - {out: w, op: ones, shape: [3, 2], dtype: $t}\n" Y("matmul, a: x, b: w"),
     2, {0, 2}, 0},
    {Z("[2, 3, 0]") "  - {out: w, op: zeros, shape: [2, 0, 2], dtype: $t}\n"
     Y("bmm, a: x, b: w"), 3, {2, 3, 2}, 0},
    {Z("[1, 2, 0]") "  - {out: w, op: zeros, shape: [1, 0, 2], dtype: $t}\n"
     "  - {out: b, op: full, shape: [1, 2, 2], value: 3, dtype: $t}\n"
     Y("baddbmm, inputs: [b, x, w], beta: 2"), 3, {1, 2, 2}, 6},
    {"  - {out: q, op: ones, shape: [1, 2, 4], dtype: $t}\n"
     "  - {out: x, op: zeros, shape: [1, 0, 4], dtype: $t}\n"
     "  - {out: v, op: zeros, shape: [1, 0, 3], dtype: $t}\n"
     Y("sdpa, inputs: [q, x, v]"), 3, {1, 2, 3}, 0},
    {Z("[1, 0, 4]") "  - {out: k, op: ones, shape: [1, 3, 4], dtype: $t}\n"
     Y("sdpa, inputs: [x, k, k], is_causal: true"), 3, {1, 0, 4}, 0},
};
#undef Z
#undef Y
#define NEMPTY (sizeof empties / sizeof empties[0])
static const char *const empty_dtypes[] = {"fp32", "bf16", "fp64"};
#define NEDT (sizeof empty_dtypes / sizeof empty_dtypes[0])

START_TEST(t_empty)
{
    const empty_case_t *c = &empties[(size_t)_i % NEMPTY];
    const char *dt = empty_dtypes[(size_t)_i / NEMPTY % NEDT];
    const char *bname = backends[(size_t)_i / (NEMPTY * NEDT)];
    char ops[2048], *o = ops;
    for (const char *s = c->ops; *s && o < ops + sizeof ops - 8; s++)
        if (s[0] == '$' && s[1] == 't') {
            o += sprintf(o, "%s", dt);
            s++;
        } else {
            *o++ = *s;
        }
    *o = 0;
    bp_error_t err = {0};
    bp_probe_t *p = load(ops, &err);
    ck_assert_msg(p, "%s: %s", ops, err.msg);
    bp_buf_t *bufs = run(bname, p, &err);
    ck_assert_msg(bufs, "%s in %s on %s: %s", ops, dt, bname, err.msg);
    const bp_buf_t *y = &bufs[bp_probe_find_buf(p, "y")];
    char want[96], got[96];
    bp_shape_format(c->ndim, c->shape, want, sizeof want);
    bp_shape_format(y->ndim, y->shape, got, sizeof got);
    ck_assert_msg(strcmp(want, got) == 0, "%s in %s on %s: shape %s, expected %s", ops, dt,
                  bname, got, want);
    for (size_t i = 0; i < y->numel; i++) {
        double v = bp_buf_get(y, i);
        ck_assert_msg(v == c->fill || (isnan(v) && isnan(c->fill)),
                      "%s in %s on %s: element %zu is %g, expected %g", ops, dt, bname, i, v,
                      c->fill);
    }
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_probe_free(p);
}
END_TEST

/* sum, prod and cumsum of integers over an empty extent (i64: 0, 1). */
START_TEST(t_empty_int)
{
    static const char *const ops[] = {
        "  - {out: x, op: zeros, shape: [0, 3], dtype: i64}\n"
        "  - {out: y, op: sum, a: x, axis: 0}\n",
        "  - {out: x, op: zeros, shape: [0, 3], dtype: i32}\n"
        "  - {out: y, op: prod, a: x, axis: 0}\n",
        "  - {out: x, op: zeros, shape: [3, 0], dtype: i64}\n"
        "  - {out: y, op: cumsum, a: x, axis: 0}\n",
    };
    static const double want[] = {0, 1, 0};
    static const size_t n[] = {3, 3, 0};
    int k = _i % 3;
    const char *bname = backends[_i / 3];
    bp_error_t err = {0};
    bp_probe_t *p = load(ops[k], &err);
    ck_assert_msg(p, "%s", err.msg);
    bp_buf_t *bufs = run(bname, p, &err);
    ck_assert_msg(bufs, "%s on %s: %s", ops[k], bname, err.msg);
    const bp_buf_t *y = &bufs[bp_probe_find_buf(p, "y")];
    ck_assert_msg(y->dtype == BP_I64, "%s: %s", ops[k], bp_dtype_name(y->dtype));
    ck_assert_uint_eq(y->numel, n[k]);
    for (size_t i = 0; i < y->numel; i++)
        ck_assert_msg(bp_buf_get(y, i) == want[k], "%s on %s: element %zu", ops[k], bname, i);
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_probe_free(p);
}
END_TEST

#ifndef BP_ROWS_CUDA
/* ulps between two finite floats of one sign */
static double ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    return fabs((double)ia - (double)ib);
}

/* The CPU backend against the oracle (MPFR) on random rows: every ATen
 * formulation of these ops is within a few ulps of the exact value (a
 * wrong lane order or a missing rounding is not: it shows as a failure of
 * the hand-derived cases or of the fidelity fuzzer, but a wrong formula
 * shows here). */
START_TEST(t_cpu_near_oracle)
{
    /* linear and addmm: sums of 77 positive products, each fma chain's
     * error within about 77/2 ulps */
    static const char *const ops[] = {"softmax", "log_softmax", "mean", "var", "logsumexp",
                                      "rms_norm", "layer_norm", "linear", "addmm"};
    static const double tol[] = {4, 4, 8, 8, 4, 8, 64, 48, 48};
    char text[1024];
    const char *op = ops[_i];
    bool norm = strcmp(op, "rms_norm") == 0, ln = strcmp(op, "layer_norm") == 0;
    bool lin = strcmp(op, "linear") == 0, mm = strcmp(op, "addmm") == 0;
    snprintf(text, sizeof text,
             "  - {out: x, op: uniform, shape: [5, 77], seed: %d, low: 0.5, high: 3}\n"
             "  - {out: w, op: uniform, shape: [77], seed: 9, low: 0.5, high: 2}\n"
             "  - {out: m, op: uniform, shape: [13, 77], seed: 10, low: 0.5, high: 2}\n"
             "  - {out: mt, op: transpose, a: m, dim0: 0, dim1: 1}\n"
             "  - {out: bias, op: uniform, shape: [13], seed: 11, low: 0.5, high: 2}\n"
             "  - {out: y, op: %s, %s}\n",
             _i + 1, op,
             norm ? "a: x, b: w" : ln ? "inputs: [x, w]"
             : lin ? "inputs: [x, m, bias]" : mm ? "inputs: [bias, x, mt], beta: 0.5, alpha: 3"
                   : "a: x, axis: 1");
    bp_error_t err = {0};
    bp_probe_t *p = load(text, &err);
    ck_assert_msg(p, "%s", err.msg);
    bp_buf_t *c = run("cpu", p, &err), *o = run("oracle", p, &err);
    ck_assert_msg(c && o, "%s", err.msg);
    int k = bp_probe_find_buf(p, "y");
    double worst = 0;
    for (size_t i = 0; i < c[k].numel; i++) {
        /* layer_norm's outputs near 0 come from cancellation: its error
         * is measured in ulps of 1 */
        double a = bp_buf_get(&c[k], i), b = bp_buf_get(&o[k], i);
        double d = ln ? fabs(a - b) / 0x1p-23 : ulps((float)a, (float)b);
        worst = d > worst ? d : worst;
    }
    ck_assert_msg(worst <= tol[_i], "%s: CPU %g ulps from the oracle", op, worst);
    bp_backend_bufs_free(c, p->nops);
    bp_backend_bufs_free(o, p->nops);
    free(c);
    free(o);
    bp_probe_free(p);
}
END_TEST
#endif

int main(void)
{
#ifdef BP_ROWS_CUDA
    int skip = bp_test_cuda_suite("check_rows_cuda");
    if (skip >= 0)
        return skip;
#endif
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, t_case, 0, (int)(NBE * NCASES));
    tcase_add_loop_test(tc, t_bad, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_loop_test(tc, t_empty, 0, (int)(NBE * NEDT * NEMPTY));
    tcase_add_loop_test(tc, t_empty_int, 0, (int)(NBE * 3));
#ifndef BP_ROWS_CUDA
    tcase_add_loop_test(tc, t_cpu_near_oracle, 0, 9);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
