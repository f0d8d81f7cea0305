/* The pinned summation orders of sum (reduce.cu) and mean (rows.cu), one
 * thread per output element: sequential (acc = 0; acc = acc + x[k] for k
 * ascending) and pairwise (S(x[0:n]) = S(x[0:n/2]) + S(x[n/2:n]), n/2
 * rounded down, S of one element the element, S of none 0), in the
 * accumulate type T.  The pairwise recursion runs on an explicit stack (no
 * device recursion, so ptxas can size the frame); 40 levels cover lengths
 * below 2^39, far beyond the largest tensor bitprobe allocates.  Each
 * element is first converted to as_dt, as `a.to(dtype)` does for a sum
 * with another result dtype (fp32 values summed into bf16 are rounded to
 * bf16 before they are added). */
#ifndef BPK_SUM_CUH
#define BPK_SUM_CUH

#include "bpk_common.cuh"

#define BPK_PAIRWISE_DEPTH 40

template <typename T>
__device__ T bpk_sum_sequential(const void *p, int dt, int64_t base,
                                int64_t stride, int64_t len, int as_dt)
{
    T acc = T(0);
    for (int64_t k = 0; k < len; k++)
        acc = acc + bpk_load_common<T>(p, dt, base + k * stride, as_dt);
    return acc;
}

template <typename T>
__device__ T bpk_sum_pairwise(const void *p, int dt, int64_t base,
                              int64_t stride, int64_t len, int as_dt)
{
    if (len <= 0)
        return T(0);
    /* Frame f covers elements [start[f], start[f] + count[f]); stage 0:
     * not begun, 1: left half summed into left[f], 2: right half begun. */
    int64_t start[BPK_PAIRWISE_DEPTH], count[BPK_PAIRWISE_DEPTH];
    T left[BPK_PAIRWISE_DEPTH];
    unsigned char stage[BPK_PAIRWISE_DEPTH];
    int sp = 0;
    start[0] = 0;
    count[0] = len;
    stage[0] = 0;
    T ret = T(0);
    for (;;) {
        int64_t s = start[sp], c = count[sp];
        if (stage[sp] == 0 && c > 1) {
            stage[sp] = 1;
            sp++;
            start[sp] = s;
            count[sp] = c / 2;
            stage[sp] = 0;
            continue;
        }
        if (stage[sp] == 0) {
            ret = bpk_load_common<T>(p, dt, base + s * stride, as_dt);
        } else if (stage[sp] == 1) {
            left[sp] = ret;
            stage[sp] = 2;
            sp++;
            start[sp] = s + c / 2;
            count[sp] = c - c / 2;
            stage[sp] = 0;
            continue;
        } else {
            ret = left[sp] + ret;
        }
        if (sp == 0)
            return ret;
        sp--;
    }
}

#endif
