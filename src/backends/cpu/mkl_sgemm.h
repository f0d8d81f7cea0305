/* MKL's sgemm summation orders, where they were fitted: PyTorch's x86
 * wheels compute an fp32 mm, matmul or F.linear as sgemm_ (ATen's
 * CPUBlas.cpp gemm, called by LinearAlgebra.cpp addmm_impl_cpu_ on the
 * column-major transpose of the row-major result: m = N, n = M, k = K,
 * A the weight, transa 'T' where the weight is a transposed view w.t()
 * of a contiguous [N, K] tensor, 'N' where it is a contiguous [K, N]
 * one).  MKL is closed; these orders are fitted to PyTorch 2.11's bits
 * (MKL 2024.2, its AVX-512 path on a Sapphire Rapids-class host, one
 * thread) by tests/refs/gemm_fit.py, which emulates each candidate
 * exactly and found, every element of every shape measured identical:
 *
 *   panels  K cut into panels of 384 (where K > 384 is not a multiple of
 *           384, the last full panel and the rest are balanced into two
 *           halves: K = 1024 gives 384, 320, 320; 512 gives 256, 256);
 *           each output's panel sum is an fma chain from +0 over the
 *           panel's k ascending, and C = panel 0, C = C + panel i.
 *           'N','N' for M 1..64 (M = 1: K 64 only) and 'T','N' for M
 *           16..64 (N 4..64, K up to 16384: 4,712 and 4,608 elements; and
 *           3,282 cancellation rows of 636 through F.linear, K 16..16384)
 *   dot16   16 fma accumulators, lane k mod 16, over the whole K; the
 *           four 4-lane quarters added in order, q0 + q1, + q2, + q3,
 *           then (l0 + l1) + (l2 + l3).  'T','N' for M 2..4 (N 4..16, K
 *           256..16384, a multiple of 16: 96 elements)
 *
 * Outside those classes (M = 1 or 5..15 with a transposed weight, N or M
 * beyond 64, K not measured, other paths, several threads) the order is
 * not known: UNFITTED, and bitprobe's own order stands with the status
 * "not PyTorch's bits". */
#ifndef BP_MKL_SGEMM_H
#define BP_MKL_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkl_isa.h"

typedef enum { BP_MKL_UNFITTED, BP_MKL_PANELS, BP_MKL_DOT16 } bp_mkl_order_t;

/* The order MKL's sgemm(transa, transb, m, n, k) takes on path isa, in
 * BLAS's terms (PyTorch's mm of [M, K] by [K, N]: m = N, n = M). */
bp_mkl_order_t bp_mkl_sgemm_order(bp_mkl_isa_t isa, bool transa, bool transb, int64_t m,
                                  int64_t n, int64_t k);
/* "panels", "dot16", "unfitted". */
const char *bp_mkl_order_name(bp_mkl_order_t o);
/* The start of each K panel of `panels` into starts (room for max); their
 * count. */
size_t bp_mkl_panels(size_t k, size_t *starts, size_t max);
/* One output element in order o (PANELS or DOT16): sum over k of
 * a[i * sa] * b[i * sb], i = 0..k-1, with alpha 1.  c0 NULL: beta 0 (C
 * not read); else beta 1 and *c0 is C's value before the call, which
 * addmm_impl_cpu_ fills with the bias: C is where the panels accumulate,
 * so the bias comes first, C = ((bias + panel 0) + panel 1) + ...; dot16
 * reduces its lanes, then adds them to C. */
float bp_mkl_sgemm_dot(bp_mkl_order_t o, size_t k, const float *a, size_t sa, const float *b,
                       size_t sb, const float *c0);

#endif
