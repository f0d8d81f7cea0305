/* cuBLAS and cuBLASLt by dlopen (cublas_dl.h). */
#include "cublas_dl.h"

#include "dl.h"

#define BP_STR2(x) #x
#define BP_STR(x) BP_STR2(x)

bp_cublas_t bp_cublas_fns;
bp_cublaslt_t bp_cublaslt_fns;

#define NAME(f) BP_STR(f),
#define BLAS_SLOT(f) (void **)&bp_cublas_fns.f,
#define LT_SLOT(f) (void **)&bp_cublaslt_fns.f,
static const char *const blas_names[] = {BP_CUBLAS_FNS(NAME)};
static void **const blas_slots[] = {BP_CUBLAS_FNS(BLAS_SLOT)};
static const char *const lt_names[] = {BP_CUBLASLT_FNS(NAME)};
static void **const lt_slots[] = {BP_CUBLASLT_FNS(LT_SLOT)};
#undef NAME
#undef BLAS_SLOT
#undef LT_SLOT

static bp_dl_lib_t blas = {"libcublas.so." BP_STR(CUBLAS_VER_MAJOR), NULL, "cuBLAS",
                           "cuBLAS " BP_STR(CUBLAS_VER_MAJOR), blas_names, blas_slots,
                           sizeof blas_names / sizeof blas_names[0], &bp_cublas_fns,
                           sizeof bp_cublas_fns, PTHREAD_ONCE_INIT, ""};
static bp_dl_lib_t blaslt = {"libcublasLt.so." BP_STR(CUBLAS_VER_MAJOR), NULL, "cuBLASLt",
                             "cuBLAS " BP_STR(CUBLAS_VER_MAJOR), lt_names, lt_slots,
                             sizeof lt_names / sizeof lt_names[0], &bp_cublaslt_fns,
                             sizeof bp_cublaslt_fns, PTHREAD_ONCE_INIT, ""};

static void load_blas(void)
{
    bp_dl_open(&blas);
}

static void load_blaslt(void)
{
    bp_dl_open(&blaslt);
}

bp_status bp_cublas_load(bp_error_t *err)
{
    return bp_dl_loaded(&blas, load_blas, err);
}

bp_status bp_cublaslt_load(bp_error_t *err)
{
    return bp_dl_loaded(&blaslt, load_blaslt, err);
}
