/* How PyTorch calls cuBLAS for a GEMM, decided on the host without CUDA:
 * from the operands' strides (strided.h), the dtype, the device's
 * compute capability and the BLAS settings users change, the entry point
 * (cublasSgemm, cublasGemmEx, their StridedBatched forms, cuBLASLt's
 * matmul, its bias epilogue), the transpose flags, m, n, k, the leading
 * dimensions, the batch strides, which operand PyTorch copies first, the
 * math mode, the compute type and the reduction-scheme mask.  The CUDA
 * backend's GEMM module (backends/cuda/cuda_gemm.c) makes the call; this
 * half is plain C so that every decision is tested on any machine.
 *
 * Taken from PyTorch's aten/src/ATen/native/cuda/Blas.cpp and
 * cuBlasCommonArgs.h (prepare_matrix_for_cublas, cublasCommonArgs,
 * addmm_out_cuda_impl with isInputCompliesAddmmCudaLt,
 * prepare_batch_matrix_for_cublas, baddbmm_out_cuda_impl),
 * aten/src/ATen/cuda/CUDABlas.cpp (gemm_internal_cublas and its bf16 and
 * fp16 helpers, bgemm_internal_cublas, bgemm_internal_cublaslt,
 * gemm_and_bias, _cublasAdjustLdLevel3) and CublasHandlePool.cpp (the
 * handle's math mode and workspace), as stored for the 2.10 line and
 * checked against PyTorch 2.11 on the GPU host (tests/gpu/linear_gpu.sh).
 *
 * Row-major results: PyTorch's result is contiguous, so cuBLAS computes
 * its transpose, C^T = op(B)^T op(A)^T; cuBLAS's A is then mat2 and its
 * B mat1 (a_op below). */
#ifndef BP_GEMM_PLAN_H
#define BP_GEMM_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "strided.h"

/* ---- the settings users change ---------------------------------------- */

typedef enum { BP_BLAS_CUBLAS, BP_BLAS_CUBLASLT } bp_blas_lib_t;

/* torch.backends.cuda.matmul.allow_{bf16,fp16}_reduced_precision_reduction
 * as the pair (allow_reduced_precision, allow_splitk) is stored
 * (at::CuBLASReductionOption). */
typedef enum {
    BP_RPR_ALLOW,            /* (True, True): the default */
    BP_RPR_DISALLOW,         /* (False, True) */
    BP_RPR_DISALLOW_NO_SPLIT /* (False, False): cuBLASLt only */
} bp_rpr_t;

typedef struct bp_blas_settings {
    bool tf32;                /* torch.backends.cuda.matmul.allow_tf32 (or
                                 TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) */
    bool bf16_rpr, bf16_split; /* allow_bf16_reduced_precision_reduction */
    bool fp16_rpr, fp16_split; /* allow_fp16_reduced_precision_reduction */
    bp_blas_lib_t lib;        /* torch.backends.cuda.preferred_blas_library
                                 (TORCH_BLAS_PREFER_CUBLASLT=1) */
    bool addmm_lt_off;        /* DISABLE_ADDMM_CUDA_LT=1 */
    char workspace_config[64]; /* CUBLAS_WORKSPACE_CONFIG, "" when unset */
    size_t lt_workspace_kib;  /* CUBLASLT_WORKSPACE_SIZE (KiB), 1024 */
    bool pedantic;            /* not PyTorch's: bitprobe's pinned GEMM
                                 (CUBLAS_PEDANTIC_MATH, compute 32F_PEDANTIC,
                                 cublasGemmEx, atomics not allowed, 32 MiB) */
} bp_blas_settings_t;

/* PyTorch's defaults. */
void bp_blas_settings_default(bp_blas_settings_t *s);
/* The environment variables PyTorch reads (CUBLAS_WORKSPACE_CONFIG,
 * CUBLASLT_WORKSPACE_SIZE, DISABLE_ADDMM_CUDA_LT, TORCH_BLAS_PREFER_CUBLASLT,
 * TORCH_ALLOW_TF32_CUBLAS_OVERRIDE), through get(name) (getenv). */
void bp_blas_settings_env(bp_blas_settings_t *s, const char *(*get)(const char *));
/* A comma-separated list of KEY=VALUE in PyTorch's names (allow_tf32,
 * allow_bf16_reduced_precision_reduction[_split_k],
 * allow_fp16_reduced_precision_reduction[_split_k], preferred_blas_library
 * (cublas, cublaslt), CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE,
 * DISABLE_ADDMM_CUDA_LT; booleans 0/1/true/false) applied over s;
 * BP_EINPUT naming the item otherwise, or for a pair PyTorch refuses
 * (reduced precision allowed with split-K off). */
bp_status bp_blas_settings_parse(bp_blas_settings_t *s, const char *list, bp_error_t *err);
bp_rpr_t bp_blas_rpr(const bp_blas_settings_t *s, bp_dtype_t dt);
/* The cuBLAS workspace PyTorch gives the handle: CUBLAS_WORKSPACE_CONFIG's
 * :SIZE:COUNT pairs (KiB), else 32 MiB on compute capability 9.x to 12.x
 * and 4096 KiB * 2 + 16 KiB * 8 elsewhere; pedantic: 32 MiB. */
size_t bp_blas_workspace(const bp_blas_settings_t *s, int cc_major);
/* cuBLASLt's workspace: CUBLASLT_WORKSPACE_SIZE KiB, at most the cuBLAS
 * workspace (the two are unified by default). */
size_t bp_blas_lt_workspace(const bp_blas_settings_t *s, int cc_major);
/* The settings as the fingerprint records them. */
json_t *bp_blas_settings_json(const bp_blas_settings_t *s, int cc_major);

/* ---- the call ---------------------------------------------------------- */

typedef enum {
    BP_GEMM_NONE,   /* an empty result: nothing to do */
    BP_GEMM_ZERO,   /* k = 0, beta 0: zeros */
    BP_GEMM_SCALE,  /* k = 0: the result (self, copied) times `scale` */
    BP_GEMM_CUBLAS, /* cublasSgemm / cublasDgemm / cublasGemmEx, or their
                       StridedBatched forms (batched) */
    BP_GEMM_LT,     /* bgemm_internal_cublaslt (preferred library cuBLASLt);
                       cuBLAS with the same arguments when it fails */
    BP_GEMM_LT_BIAS /* gemm_and_bias, cuBLASLt's bias epilogue; when it
                       fails, the addmm again with the Lt path off */
} bp_gemm_api_t;

/* cuBLAS's math mode (cublasMath_t) and compute type, as bitprobe names
 * them (no CUDA header here; the module maps them). */
enum { BP_GEMM_MATH_DEFAULT, BP_GEMM_MATH_TF32, BP_GEMM_MATH_PEDANTIC };
#define BP_GEMM_MATH_NO_RRR 0x10u /* CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION */
typedef enum {
    BP_GEMM_COMPUTE_32F,
    BP_GEMM_COMPUTE_32F_FAST_TF32,
    BP_GEMM_COMPUTE_32F_PEDANTIC,
    BP_GEMM_COMPUTE_64F,
    BP_GEMM_COMPUTE_64F_PEDANTIC
} bp_gemm_compute_t;
/* cublasLtReductionScheme_t's values */
#define BP_GEMM_LT_RED_NONE 0u
#define BP_GEMM_LT_RED_COMPUTE 2u

typedef struct bp_gemm_numerics {
    unsigned math;             /* BP_GEMM_MATH_* (| NO_RRR): the handle's mode */
    bp_gemm_compute_t compute; /* GemmEx's (the C++ overload's migration of
                                  CUDA_R_32F) or cuBLASLt's */
    bool typed;                /* cublasSgemm / cublasDgemm (and batched),
                                  not cublasGemmEx */
    bool tensor_op;            /* CUBLAS_GEMM_DEFAULT_TENSOR_OP, else
                                  CUBLAS_GEMM_DEFAULT */
    bool lt_mask;              /* set CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK */
    uint32_t lt_mask_value;
} bp_gemm_numerics_t;

typedef struct bp_gemm_call {
    bp_gemm_api_t api;
    bp_dtype_t dtype;
    bool batched;           /* the StridedBatched forms (batch > 1) */
    bool transa, transb;
    int64_t m, n, k, lda, ldb, ldc;
    int64_t batch, stridea, strideb, stridec; /* elements */
    int a_op;               /* which operand is cuBLAS's A: 0 mat1/batch1,
                               1 mat2/batch2; B is the other */
    bool clone_a, clone_b;  /* PyTorch copies A (B) contiguous first */
    int64_t a_off, b_off;   /* where A and B start: elements into their
                               memory (0 in a copy) */
    double alpha, beta;     /* opmath values cuBLAS receives */
    bool copy_self;         /* the result holds self (expanded) first */
    bool bias;              /* LT_BIAS: self is the epilogue's bias vector */
    double scale;           /* SCALE's factor */
    bool lt_fake_n2;        /* cuBLASLt's heuristic asked for n = 2 (cc >= 10) */
    bp_gemm_numerics_t num; /* of api (LT: of the Lt call; its cuBLAS
                               fallback: bp_gemm_numerics with BP_GEMM_CUBLAS) */
} bp_gemm_call_t;

/* The numerics of one entry point for dtype dt (batched: the
 * StridedBatched forms); BP_EINPUT where PyTorch refuses the settings
 * (split-K off needs cuBLASLt). */
bp_status bp_gemm_numerics(const bp_blas_settings_t *s, bp_gemm_api_t api, bp_dtype_t dt,
                           bool batched, bp_gemm_numerics_t *num, bp_error_t *err);

/* torch.addmm(self, mat1, mat2, beta, alpha) into a fresh contiguous
 * [m, n] result; torch.mm with self NULL (beta 0, alpha 1).  self
 * broadcasts to the result.  no_lt: the Lt path off (PyTorch's retry when
 * gemm_and_bias fails).  cc_major: the device's. */
bp_status bp_gemm_plan_addmm(const bp_blas_settings_t *s, int cc_major, bp_dtype_t dt,
                             const bp_strided_t *self, const bp_strided_t *mat1,
                             const bp_strided_t *mat2, double beta, double alpha, bool no_lt,
                             bp_gemm_call_t *c, bp_error_t *err);
/* torch.baddbmm(self, batch1, batch2, beta, alpha) and torch.bmm (self
 * NULL) into a fresh contiguous [B, m, n] result, or into the view
 * result (bmm's out=; NULL: fresh), which must be column- or row-major per
 * batch; self (when beta != 0) is copied into the result first. */
bp_status bp_gemm_plan_baddbmm(const bp_blas_settings_t *s, int cc_major, bp_dtype_t dt,
                               const bp_strided_t *self, const bp_strided_t *batch1,
                               const bp_strided_t *batch2, double beta, double alpha,
                               const bp_strided_t *result, bp_gemm_call_t *c,
                               bp_error_t *err);

/* Names for reports: "cublasSgemm", "cublasGemmEx", ...; "N"/"T". */
const char *bp_gemm_entry_name(const bp_gemm_call_t *c);
/* One line: entry, flags, m n k, leading dimensions, compute, math mode. */
void bp_gemm_call_describe(const bp_gemm_call_t *c, char *out, size_t n);

#endif
