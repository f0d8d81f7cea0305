/* ATen's CPU summation order (native/cpu/SumKernel.cpp, cascade_sum), which
 * sum, mean and everything built on them (rms_norm, var of a whole tensor,
 * logsumexp) take on the CPU.  The reduction runs per output element over
 * its `len` values; which of SumKernel's loops it takes depends on where
 * the values lie in memory:
 *
 *  - inner (the reduced values contiguous, len >= W): vectorized_inner_sum.
 *    Lane l of a V-lane accumulator sums the loads L[0][l], L[1][l], ...
 *    over the len / W whole registers with row_sum; then acc = 0, the
 *    len % W trailing elements are added one by one, then the V lanes in
 *    order.  A load is the register's value itself (fp32: W = V = 8; fp64:
 *    W = V = 4); bf16/fp16 load W = 16 values and widen them into two float
 *    registers that InnerSumCastLoadPolicy adds, L[j][l] = x[16j + l] +
 *    x[16j + 8 + l] (V = 8);
 *  - inner with len < W: scalar row_sum over the values;
 *  - outer (the reduced values `inner` apart, the columns contiguous):
 *    vectorized_outer_sum when inner >= W: columns in groups of 4V take
 *    multi_row_sum (a plain cascade per column), then groups of V and the
 *    remaining columns take row_sum; scalar_outer_sum when inner < W:
 *    groups of 4 columns multi_row_sum, the rest row_sum.
 *
 * multi_row_sum keeps 4 levels of accumulators: level 0 takes 2^p values
 * (p = max(4, ceil(log2(n)) / 4)), then is added into level 1 and cleared,
 * and so on up while the count is a multiple of the level's span; the
 * levels are added together at the end.  row_sum reads the row as [n/4, 4]
 * (four interleaved accumulators through multi_row_sum), adds the n % 4
 * trailing values to the first, then the other three to it.  The result is
 * stored as 0 + acc (cascade_sum zero-fills the output and accumulates).
 * W and V are AVX2's: SumKernel.cpp registers sum_stub with
 * REGISTER_DISPATCH, so the AVX-512 capability runs the same build.
 * Accumulation in acc_type<T, true>: float for fp32, bf16 and fp16 (their
 * result rounded once), double for fp64. */
#include "be_cpu_rows.h"

#include <math.h>

#define LEVELS 4

static int ceil_log2(int64_t n)
{
    int p = 0;
    while (p < 62 && ((int64_t)1 << p) < n)
        p++;
    return p;
}

static double add(bool f32, double a, double b)
{
    return f32 ? (double)((float)a + (float)b) : a + b;
}

/* The values one loop reads: element e is v[e * stride], plus
 * v[e * stride + pair] in float when pair is not 0 (a bf16/fp16 register
 * widened into two float halves and added: InnerSumCastLoadPolicy). */
typedef struct {
    const double *v;
    int64_t stride, pair;
    bool f32;
} src_t;

static double load(const src_t *s, int64_t e)
{
    const double *p = s->v + e * s->stride;
    return s->pair ? add(true, p[0], p[s->pair]) : p[0];
}

/* multi_row_sum over n rows of `cols` columns: value (i, k) is element
 * i * cols + k. */
static void multi_row_sum(const src_t *s, int cols, int64_t n, double *res)
{
    bool f32 = s->f32;
    double acc[LEVELS][4] = {{0}};
    int power = ceil_log2(n) / LEVELS;
    if (power < 4)
        power = 4;
    int64_t step = (int64_t)1 << power, mask = step - 1;
    int64_t i = 0;
    while (i + step <= n) {
        for (int64_t j = 0; j < step; j++, i++)
            for (int k = 0; k < cols; k++)
                acc[0][k] = add(f32, acc[0][k], load(s, i * cols + k));
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < cols; k++) {
                acc[j][k] = add(f32, acc[j][k], acc[j - 1][k]);
                acc[j - 1][k] = 0;
            }
            if ((i & (mask << (j * power))) != 0)
                break;
        }
    }
    for (; i < n; i++)
        for (int k = 0; k < cols; k++)
            acc[0][k] = add(f32, acc[0][k], load(s, i * cols + k));
    for (int j = 1; j < LEVELS; j++)
        for (int k = 0; k < cols; k++)
            acc[0][k] = add(f32, acc[0][k], acc[j][k]);
    for (int k = 0; k < cols; k++)
        res[k] = acc[0][k];
}

/* row_sum over elements 0 .. n-1. */
static double row_sum(const src_t *s, int64_t n)
{
    double p[4];
    int64_t ilp = n / 4;
    multi_row_sum(s, 4, ilp, p);
    for (int64_t i = ilp * 4; i < n; i++)
        p[0] = add(s->f32, p[0], load(s, i));
    for (int k = 1; k < 4; k++)
        p[0] = add(s->f32, p[0], p[k]);
    return p[0];
}

static double cascade_one(const src_t *s, int64_t n)
{
    double r;
    multi_row_sum(s, 1, n, &r);
    return r;
}

void bp_cpu_cascade_sum(const double *v, size_t outer, size_t len, size_t inner,
                        bp_dtype_t dt, double *out)
{
    const bool f32 = dt != BP_F64, lp = dt == BP_BF16 || dt == BP_F16;
    const int64_t V = f32 ? 8 : 4, W = lp ? 16 : V, n = (int64_t)len;
    for (size_t o = 0; o < outer; o++) {
        const double *blk = v + o * len * inner;
        double *res = out + o * inner;
        if (inner == 1) {
            double acc;
            if (n >= W) {
                int64_t nv = n / W;
                acc = 0;
                for (int64_t k = nv * W; k < n; k++)
                    acc = add(f32, acc, blk[k]);
                for (int64_t l = 0; l < V; l++) {
                    src_t lane = {blk + l, W, lp ? V : 0, f32};
                    acc = add(f32, acc, row_sum(&lane, nv));
                }
            } else {
                src_t row = {blk, 1, 0, f32};
                acc = row_sum(&row, n);
            }
            res[0] = add(f32, 0.0, acc);
            continue;
        }
        int64_t cols = (int64_t)inner, j = 0;
        int64_t group = cols >= W ? 4 * V : 4;
        for (; j + group <= cols; j += group)
            for (int64_t c = j; c < j + group; c++) {
                src_t col = {blk + c, cols, 0, f32};
                res[c] = add(f32, 0.0, cascade_one(&col, n));
            }
        for (; j < cols; j++) {
            src_t col = {blk + j, cols, 0, f32};
            res[j] = add(f32, 0.0, row_sum(&col, n));
        }
    }
}
