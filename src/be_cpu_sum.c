/* ATen's CPU summation order (native/cpu/SumKernel.cpp, cascade_sum), which
 * mean and everything built on it (rms_norm, var of a whole tensor) take
 * on the CPU.  The reduction runs per output element over its `len`
 * values; which of SumKernel's loops it takes depends on where the values
 * lie in memory:
 *
 *  - inner (the reduced values contiguous, len >= V): vectorized_inner_sum.
 *    Lane l of a V-lane accumulator sums x[l], x[V + l], ... over the
 *    len / V whole registers with row_sum; then acc = 0, the len % V
 *    trailing elements are added one by one, then the V lanes in order;
 *  - inner with len < V: scalar row_sum over the values;
 *  - outer (the reduced values `inner` apart, the columns contiguous):
 *    vectorized_outer_sum when inner >= V: columns in groups of 4V take
 *    multi_row_sum (a plain cascade per column), then groups of V and the
 *    remaining columns take row_sum; scalar_outer_sum when inner < V:
 *    groups of 4 columns multi_row_sum, the rest row_sum.
 *
 * multi_row_sum keeps 4 levels of accumulators: level 0 takes 2^p values
 * (p = max(4, ceil(log2(n)) / 4)), then is added into level 1 and cleared,
 * and so on up while the count is a multiple of the level's span; the
 * levels are added together at the end.  row_sum reads the row as [n/4, 4]
 * (four interleaved accumulators through multi_row_sum), adds the n % 4
 * trailing values to the first, then the other three to it.  The result is
 * stored as 0 + acc (cascade_sum zero-fills the output and accumulates).
 * V is 8 floats (4 doubles): SumKernel.cpp registers the AVX2 build only.
 * Accumulation in the input's type (float for fp32, double for fp64). */
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

/* multi_row_sum over n rows of `cols` columns: value (i, k) is
 * v[(i * cols + k) * stride]. */
static void multi_row_sum(const double *v, int64_t stride, int cols, int64_t n,
                          bool f32, double *res)
{
    double acc[LEVELS][4] = {{0}};
    int power = ceil_log2(n) / LEVELS;
    if (power < 4)
        power = 4;
    int64_t step = (int64_t)1 << power, mask = step - 1;
    int64_t i = 0;
    while (i + step <= n) {
        for (int64_t j = 0; j < step; j++, i++)
            for (int k = 0; k < cols; k++)
                acc[0][k] = add(f32, acc[0][k], v[(i * cols + k) * stride]);
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
            acc[0][k] = add(f32, acc[0][k], v[(i * cols + k) * stride]);
    for (int j = 1; j < LEVELS; j++)
        for (int k = 0; k < cols; k++)
            acc[0][k] = add(f32, acc[0][k], acc[j][k]);
    for (int k = 0; k < cols; k++)
        res[k] = acc[0][k];
}

/* row_sum over v[0], v[stride], ..., n values. */
static double row_sum(const double *v, int64_t stride, int64_t n, bool f32)
{
    double p[4];
    int64_t ilp = n / 4;
    multi_row_sum(v, stride, 4, ilp, f32, p);
    for (int64_t i = ilp * 4; i < n; i++)
        p[0] = add(f32, p[0], v[i * stride]);
    for (int k = 1; k < 4; k++)
        p[0] = add(f32, p[0], p[k]);
    return p[0];
}

static double cascade_one(const double *v, int64_t stride, int64_t n, bool f32)
{
    double r;
    multi_row_sum(v, stride, 1, n, f32, &r);
    return r;
}

void bp_cpu_cascade_sum(const double *v, size_t outer, size_t len, size_t inner,
                        bool f32, double *out)
{
    const int64_t V = f32 ? 8 : 4, n = (int64_t)len;
    for (size_t o = 0; o < outer; o++) {
        const double *blk = v + o * len * inner;
        double *res = out + o * inner;
        if (inner == 1) {
            double acc;
            if (n >= V) {
                int64_t nv = n / V;
                acc = 0;
                for (int64_t k = nv * V; k < n; k++)
                    acc = add(f32, acc, blk[k]);
                for (int64_t l = 0; l < V; l++)
                    acc = add(f32, acc, row_sum(blk + l, V, nv, f32));
            } else {
                acc = row_sum(blk, 1, n, f32);
            }
            res[0] = add(f32, 0.0, acc);
            continue;
        }
        int64_t cols = (int64_t)inner, j = 0;
        int64_t group = cols >= V ? 4 * V : 4;
        for (; j + group <= cols; j += group)
            for (int64_t c = j; c < j + group; c++)
                res[c] = add(f32, 0.0, cascade_one(blk + c, cols, n, f32));
        for (; j < cols; j++)
            res[j] = add(f32, 0.0, row_sum(blk + j, cols, n, f32));
    }
}
