/* The one CPU GEMM: every matrix product bitprobe computes on the CPU
 * (the CPU backend's matmul, bmm, baddbmm, linear, addmm and sdpa, the
 * layer stack, invariance through the backend) goes through it.  Its
 * order is fixed and documented, not PyTorch's (MKL's and oneDNN's
 * blocking are not open): each output starts from +0 and takes one fused
 * multiply-add per k, k ascending, in float (or double), rounded to the
 * dtype once by the caller.  The AVX2 path computes the same chains eight
 * outputs at a time, so its bits are the scalar path's. */
#ifndef BP_CPU_GEMM_H
#define BP_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* c[m * ldc + n] = sum over k ascending of a[m * lda + k] * b[k * ldb + n],
 * each step one fmaf, from +0. */
void bp_cpu_gemm_f32(size_t M, size_t N, size_t K, const float *a, size_t lda, const float *b,
                     size_t ldb, float *c, size_t ldc);
/* The same in double (fma). */
void bp_cpu_gemm_f64(size_t M, size_t N, size_t K, const double *a, size_t lda,
                     const double *b, size_t ldb, double *c, size_t ldc);
/* c [M, N] = a [M, K] @ b, b [K, N] (or [N, K] read transposed with b_t),
 * on values held as doubles: in float when f32 (every value a float, as
 * widened bf16, fp16 and f32 values are), else in double.  BP_ENOMEM. */
bp_status bp_cpu_gemm_vals(size_t M, size_t N, size_t K, const double *a, const double *b,
                           bool b_t, bool f32, double *c, bp_error_t *err);

#endif
