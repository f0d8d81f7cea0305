/* Checked CUDA runtime and cuBLAS calls, for the C files that include CUDA
 * headers (be_cuda.c, stack_cuda.c, inv_cuda.c): a failure names the call
 * and the library's error string and name; an allocation failure is
 * BP_ENOMEM whatever status the caller maps failures to. */
#ifndef BP_CUDA_CHECK_H
#define BP_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "cublas_dl.h"
#include "error.h"

static inline bp_status bp_cuda_fail(bp_error_t *err, bp_status code,
                                     const char *call, cudaError_t e)
{
    if (e == cudaErrorMemoryAllocation)
        code = BP_ENOMEM;
    return bp_error_set(err, code, "%s failed: %s (%s)", call,
                        cudaGetErrorString(e), cudaGetErrorName(e));
}

static inline bp_status bp_blas_fail(bp_error_t *err, bp_status code,
                                     const char *call, cublasStatus_t s)
{
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        code = BP_ENOMEM;
    return bp_error_set(err, code, "%s failed: %s (%s)", call,
                        BP_BLAS(cublasGetStatusString)(s),
                        BP_BLAS(cublasGetStatusName)(s));
}

/* Checked calls in a function with a bp_error_t *err; `code` is the status
 * a failure maps to. */
#define CUDA_TRY(call, code)                                                 \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess)                                               \
            return bp_cuda_fail(err, (code), #call, e_);                     \
    } while (0)
#define BLAS_TRY(call, code)                                                 \
    do {                                                                     \
        cublasStatus_t s_ = (call);                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                     \
            return bp_blas_fail(err, (code), #call, s_);                     \
    } while (0)

#endif
