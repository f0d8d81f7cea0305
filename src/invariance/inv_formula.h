/* The invariance formulations: the arithmetic of a split reduction and of
 * tensor-parallel ranks and their all-reduce, which no backend computes,
 * written once in plain C so that a sweep's bits are a pure function of
 * the formulation (the CPU engine computes them on the split and ranks
 * axes; the batch axis runs the op table itself: bp_inv_table_op).
 *
 * Every accumulation is in fp32 from +0, left to right, with fmaf for
 * products (the CPU matmul's order); a value "rounded to dt" is stored in
 * dt and read back (bf16/fp16 through float, nearest even).  exp and log
 * are SLEEF's expf_u10 and logf_u10, as the CPU backend's fixed
 * formulation's: a row op cut in one part (s = 1) is that formulation's
 * row, bit for bit (check_inv tests it). */
#ifndef BP_INV_FORMULA_H
#define BP_INV_FORMULA_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "inv_engine.h"

/* n elements of dt widened to float. */
void bp_inv_widen(bp_dtype_t dt, const void *in, size_t n, float *out);
/* n floats rounded to dt and stored. */
void bp_inv_narrow(bp_dtype_t dt, const float *in, size_t n, void *out);

/* The parts [k0, k1) of a split of len into s parts: part i is
 * [i * len / s, (i + 1) * len / s) (integer division). */
void bp_inv_part(int64_t len, int s, int i, int64_t *k0, int64_t *k1);

/* Combines s values in order c (BP_INV_SEQ or BP_INV_TREE), each sum in
 * fp32 and then rounded to dt (BP_F32: kept), as a split's final reduction
 * or an all-reduce's hops do. */
float bp_inv_combine(const float *v, int s, bp_inv_combine_t c, bp_dtype_t dt);
/* An all-reduce of the T ranks' values v[0..t) of element `flat` of a
 * flattened buffer of `total` elements, each hop's sum rounded to dt:
 * rank order, a pairwise tree, or a ring (one channel, T equal chunks:
 * chunk c = flat * t / total is summed from rank c + 1 round to rank c, the
 * textbook reduce-scatter; NCCL's channels and steps cut finer). */
float bp_inv_allreduce(const float *v, int t, size_t flat, size_t total,
                       bp_inv_combine_t c, bp_dtype_t dt);

/* The all-reduce of nn consecutive elements from flat index flat0 on:
 * rank r's values at part[r * nn ...]; results stored in dt into out. */
void bp_inv_allreduce_rows(const float *part, int t, size_t nn, size_t flat0,
                           size_t total, bp_inv_combine_t c, bp_dtype_t dt, void *out);
/* Split matmul: out[j] for j < n = the s parts of a . b[:, j] (fp32 dot
 * products over each part, fmaf ascending), each part rounded to part_dt
 * (BP_F32: a compute-type reduction), combined in order c, then rounded to
 * dt.  a: k floats, b: [k, n] floats. */
void bp_inv_matmul_split(const float *a, const float *b, int64_t k, int64_t n, int s,
                         bp_inv_combine_t c, bp_dtype_t part_dt, bp_dtype_t dt,
                         float *out);
/* One row of a row op (BP_OP_SUM, MEAN, RMS_NORM, SOFTMAX, LOG_SOFTMAX)
 * over h elements (x widened to float), with its reduction split in s
 * parts combined in order c: sum (out[0]), mean (out[0] = sum * (1/h in
 * float)), rms_norm (sum of squares, each square rounded to fp32; r = 1 /
 * sqrtf(ss / h + eps); out = dt(w * dt(x * r))), softmax (dt(exp(x - max)
 * / sum)), log_softmax (fp32: (x - max) - log(sum)).  w: rms_norm's weight
 * (h floats) or NULL. */
void bp_inv_row(bp_op_kind_t op, const float *x, const float *w, int64_t h, int s,
                bp_inv_combine_t c, bp_dtype_t dt, float *out);
/* Decoding attention for one head: q (d floats), keys and values of L
 * positions (row j at k + j * stride, v + j * stride); scores q . k_j in
 * fp32 times scale (1 / sqrtf(d)); flash-decoding over s chunks of the
 * positions: per chunk its max m_c, p_j = exp(s_j - m_c), l_c = sum p_j,
 * o_c = sum p_j v_j; combined in chunk order with w_c = exp(m_c - max m):
 * l = sum l_c w_c, o = sum o_c w_c (fmaf, from 0), out = dt(o / l).  s = 1
 * is the unsplit math (w_0 = 1 exactly). */
void bp_inv_attention_head(const float *q, const float *k, const float *v,
                           int64_t stride, int64_t len, int64_t d, int s,
                           bp_dtype_t dt, float *out);

#endif
