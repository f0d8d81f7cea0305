/* cuBLAS, opened with dlopen when the CUDA backend first needs it rather
 * than by the dynamic loader at process start: loading libcublas (and the
 * libcublasLt it pulls in) costs about 0.1 s and 215 MiB of RSS, which every
 * command paid, with or without a GPU, and a machine without the library
 * could not even start bitprobe.  Callers name each function through
 * BP_BLAS(f) after bp_cublas_load has succeeded. */
#ifndef BP_CUBLAS_DL_H
#define BP_CUBLAS_DL_H

#include <cublas_v2.h>

#include "error.h"

/* Every cuBLAS function bitprobe calls (the _v2 names come from
 * cublas_v2.h's macros, in the member names and the symbols alike). */
#define BP_CUBLAS_FNS(X)                                                       \
    X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasSetWorkspace)  \
    X(cublasSetMathMode) X(cublasSetAtomicsMode) X(cublasSetPointerMode)       \
    X(cublasGetVersion) X(cublasGetProperty) X(cublasGetStatusName)            \
    X(cublasGetStatusString) X(cublasGemmEx) X(cublasGemmStridedBatchedEx)

typedef struct {
#define BP_CUBLAS_MEMBER(f) __typeof__(&f) f;
    BP_CUBLAS_FNS(BP_CUBLAS_MEMBER)
#undef BP_CUBLAS_MEMBER
} bp_cublas_t;

extern bp_cublas_t bp_cublas_fns;

/* Opens libcublas.so.<major of the headers> once per process (any thread,
 * any number of times); BP_EUNAVAIL naming the library and dlerror's reason
 * when it or one of the functions is missing. */
bp_status bp_cublas_load(bp_error_t *err);

#define BP_BLAS(f) (bp_cublas_fns.f)

#endif
