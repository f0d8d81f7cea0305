/* cuBLASLt's descriptors of a planned GEMM (gemm_plan.h), as the GEMM
 * module builds them for PyTorch's Lt paths: for callers that include
 * cuBLASLt's header and ask the heuristic themselves (the invariance
 * sweeps' algorithm attribution and forced split-K). */
#ifndef BP_CUDA_GEMM_LT_H
#define BP_CUDA_GEMM_LT_H

#include <cublasLt.h>

#include "gemm_plan.h"

typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc; /* A, B, C (C is D) */
    cublasLtMatrixLayout_t fb, fc;     /* B and C with n = 2 (lt_fake_n2) */
    cublasLtMatmulPreference_t pref;
} bp_cuda_lt_t;

/* The matmul descriptor (compute and scale type, transposes, the bias
 * epilogue of LT_BIAS), the layouts (batch attributes when batched), and
 * a preference with the reduction-scheme mask, the alignments of A, B, C
 * (and the bias) and a workspace of ws bytes; *l zeroed first.
 * BP_EINTERNAL naming the call on failure (bp_cuda_lt_free then). */
bp_status bp_cuda_lt_build(const bp_gemm_call_t *c, const void *A, const void *B, void *C,
                           const void *bias, size_t ws, bp_cuda_lt_t *l, bp_error_t *err);
void bp_cuda_lt_free(bp_cuda_lt_t *l);

#endif
