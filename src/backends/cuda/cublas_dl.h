/* cuBLAS and cuBLASLt, opened with dlopen when the CUDA backend first needs
 * them rather than by the dynamic loader at process start: loading libcublas
 * (and the libcublasLt it pulls in) costs about 0.1 s and 215 MiB of RSS,
 * which every command paid, with or without a GPU, and a machine without the
 * library could not even start bitprobe.  Callers name each cuBLAS function
 * through BP_BLAS(f) after bp_cublas_load has succeeded, and each cuBLASLt
 * function through BP_BLASLT(f) after bp_cublaslt_load (PyTorch's
 * cuBLASLt paths, and the invariance sweeps' algorithm choice and its
 * configuration). */
#ifndef BP_CUBLAS_DL_H
#define BP_CUBLAS_DL_H

#include <cublasLt.h>
#include <cublas_v2.h>

#include "error.h"

/* Every cuBLAS function bitprobe calls (the _v2 names come from
 * cublas_v2.h's macros, in the member names and the symbols alike). */
#define BP_CUBLAS_FNS(X)                                                       \
    X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasSetWorkspace)  \
    X(cublasSetMathMode) X(cublasSetAtomicsMode) X(cublasSetPointerMode)       \
    X(cublasGetVersion) X(cublasGetProperty) X(cublasGetStatusName)            \
    X(cublasGetStatusString) X(cublasGemmEx) X(cublasGemmStridedBatchedEx)    \
    X(cublasSgemm) X(cublasGetMathMode) X(cublasSgemmStridedBatched)           \
    X(cublasDgemm) X(cublasDgemmStridedBatched)

/* Every cuBLASLt function bitprobe calls. */
#define BP_CUBLASLT_FNS(X)                                                     \
    X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion)                 \
    X(cublasLtMatmul) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) \
    X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)            \
    X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute)         \
    X(cublasLtMatmulPreferenceCreate)                                          \
    X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute) \
    X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoConfigGetAttribute)  \
    X(cublasLtMatmulAlgoConfigSetAttribute) X(cublasLtMatmulAlgoCheck)         \
    X(cublasLtLoggerSetCallback) X(cublasLtLoggerSetMask)                     \
    X(cublasLtLoggerSetFile)

#define BP_DL_MEMBER(f) __typeof__(&f) f;
typedef struct {
    BP_CUBLAS_FNS(BP_DL_MEMBER)
} bp_cublas_t;

typedef struct {
    BP_CUBLASLT_FNS(BP_DL_MEMBER)
} bp_cublaslt_t;
#undef BP_DL_MEMBER

extern bp_cublas_t bp_cublas_fns;
extern bp_cublaslt_t bp_cublaslt_fns;

/* Opens libcublas.so.<major of the headers> once per process (any thread,
 * any number of times); BP_EUNAVAIL naming the library and dlerror's reason
 * when it or one of the functions is missing. */
bp_status bp_cublas_load(bp_error_t *err);
/* The same for libcublasLt.so.<major>. */
bp_status bp_cublaslt_load(bp_error_t *err);

#define BP_BLAS(f) (bp_cublas_fns.f)
#define BP_BLASLT(f) (bp_cublaslt_fns.f)

#endif
