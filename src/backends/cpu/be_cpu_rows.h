/* The CPU backend's reductions along an axis and its fused row ops
 * (be_cpu_sum.c, be_cpu_rows.c, be_cpu_fused.c); internal to the backend. */
#ifndef BP_BE_CPU_ROWS_H
#define BP_BE_CPU_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "be_cpu.h"

/* ATen's cascade_sum over a [outer, len, inner] block of values of dtype
 * dt (fp64, fp32, bf16 or fp16; each value exact in it): out[o * inner + i]
 * = the sum over len in acc_type (be_cpu_sum.c says in which order), not
 * yet rounded to dt. */
void bp_cpu_cascade_sum(const double *v, size_t outer, size_t len, size_t inner,
                        bp_dtype_t dt, double *out);

/* ATen's RowwiseMoments of the N values x (exact in dt: fp64, fp32, bf16
 * or fp16): the mean and the biased variance in opmath (be_cpu_moments.c
 * says in which order), with the AVX2 build's fused multiply-adds when
 * contract, else ATen's DEFAULT build's (none). */
void bp_cpu_row_moments(const double *x, int64_t N, bp_dtype_t dt, bool contract,
                        double *mean, double *var);

/* v[0..n) summed from +0 left to right, or pairwise (sum(v[:n/2]) +
 * sum(v[n/2:]) down to one element), in float when f32, else double. */
double bp_cpu_sum_vals(const double *v, size_t n, bool pairwise, bool f32);

/* A tensor split around one axis: outer x len x inner elements. */
typedef struct {
    size_t outer, len, inner;
    bool lastdim; /* the axis is the last dimension (softmax's kernels) */
} bp_cpu_span_t;

/* The split of a around op's axis (every element as one row without an
 * axis, when `all` allows it); an error names the op. */
bp_status bp_cpu_span(const bp_exec_t *x, bool all, bp_cpu_span_t *s, bp_error_t *err);

/* Softmax or log-softmax of rows of len values (opmath floats when f32,
 * else doubles) as ATen's CPU kernels compute them; x holds outer * len *
 * inner values, out the same, both in opmath; dt is the storage dtype. */
void bp_cpu_softmax_rows(const bp_cpu_t *c, bool log, bp_dtype_t dt, const double *x,
                         const bp_cpu_span_t *s, double *out);

bp_status bp_cpu_op_softmax(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_reduce(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_cumsum(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_rms_norm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_layer_norm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_bmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_baddbmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_linear(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_addmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_sdpa(bp_backend_t *, const bp_exec_t *, bp_error_t *);

#endif
