/* The CUDA GEMM module: the one place bitprobe calls cuBLAS or cuBLASLt
 * for a matrix product.  The CUDA backend's matmul, bmm, baddbmm, linear,
 * addmm and sdpa, the invariance engines and the layer stack all go
 * through it.  A product is described as PyTorch holds its operands
 * (memory and strided geometry: a transposed view stays a view) and
 * computed with the call PyTorch 2.11 makes for it (gemm_plan.h decides;
 * this file makes the calls): the same entry point, transpose flags,
 * leading dimensions, handle math mode, compute type, workspace,
 * reduction-scheme mask and epilogue, under the BLAS settings the handle
 * was opened with (bp_blas_settings_t: allow_tf32, reduced-precision
 * reductions, the preferred library, CUBLAS_WORKSPACE_CONFIG, ...), or
 * bitprobe's pinned pedantic GEMM when the settings say so.
 *
 * Plain C: no CUDA type crosses it.  Every call runs on the backend's
 * stream and is waited for, so that a failure names its call. */
#ifndef BP_CUDA_GEMM_H
#define BP_CUDA_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "gemm_plan.h"
#include "strided.h"

typedef struct bp_cuda_blas bp_cuda_blas_t;

/* A handle on be's device and stream (be must be the CUDA backend), with
 * the workspace PyTorch gives its handle for these settings. */
bp_status bp_cuda_blas_open(bp_backend_t *be, const bp_blas_settings_t *s,
                            bp_cuda_blas_t **out, bp_error_t *err);
void bp_cuda_blas_close(bp_cuda_blas_t *h);
/* Starts, on a thread per dtype (fp32, bf16, fp16) with a handle and
 * stream of its own, a few small GEMMs of that dtype, so that cuBLAS
 * loads their kernels while the backend does other work: a process's
 * first GEMM of a dtype took 0.12-0.16 s on an H200 (CUDA 13), and the
 * three dtypes' loads overlap.  bp_cuda_blas_close waits for them.
 * Nothing of it reaches the handle's results. */
void bp_cuda_blas_warm(bp_cuda_blas_t *h);
const bp_blas_settings_t *bp_cuda_blas_settings(const bp_cuda_blas_t *h);
int bp_cuda_blas_cc_major(const bp_cuda_blas_t *h);
/* The settings and the workspaces, as a fingerprint records them. */
json_t *bp_cuda_blas_json(const bp_cuda_blas_t *h);

/* The view g of base (elements of dt) copied into contiguous out, in
 * row-major order (Tensor.contiguous()), on be's stream. */
bp_status bp_cuda_copy_view(bp_backend_t *be, bp_dtype_t dt, const void *base,
                           const bp_strided_t *g, void *out, bp_error_t *err);

/* An operand on the device: the memory its view starts from (element
 * offset 0) and its geometry over it. */
typedef struct {
    const void *base;
    bp_strided_t geo;
} bp_cuda_mat_t;

/* What was called, for reports: the plan, and for the cuBLASLt paths the
 * heuristic's algorithm (cublasLtMatmulAlgo_t's bytes) and workspace. */
typedef struct {
    bp_gemm_call_t call;
    bool lt_ran;              /* a cuBLASLt matmul ran (not its fallback) */
    uint64_t lt_algo[8];
    size_t lt_workspace;
    float lt_waves;
} bp_cuda_gemm_info_t;

/* torch.addmm(self, mat1, mat2, beta=beta, alpha=alpha) into c, a fresh
 * contiguous [m, n] result of dtype dt on the device; torch.mm with self
 * NULL.  info (may be NULL) receives the call made. */
bp_status bp_cuda_addmm(bp_cuda_blas_t *h, bp_dtype_t dt, const bp_cuda_mat_t *self,
                        const bp_cuda_mat_t *mat1, const bp_cuda_mat_t *mat2, double beta,
                        double alpha, void *c, bp_cuda_gemm_info_t *info, bp_error_t *err);
/* torch.baddbmm / torch.bmm (self NULL) into c: a fresh contiguous
 * [B, m, n] result, or, with res, the view res of c's memory (bmm's out=,
 * as the stack writes heads into its [T, hidden] rows). */
bp_status bp_cuda_baddbmm(bp_cuda_blas_t *h, bp_dtype_t dt, const bp_cuda_mat_t *self,
                          const bp_cuda_mat_t *b1, const bp_cuda_mat_t *b2, double beta,
                          double alpha, const bp_strided_t *res, void *c,
                          bp_cuda_gemm_info_t *info, bp_error_t *err);

#endif
