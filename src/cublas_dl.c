/* cuBLAS and cuBLASLt by dlopen (cublas_dl.h). */
#include "cublas_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define BP_STR2(x) #x
#define BP_STR(x) BP_STR2(x)

bp_cublas_t bp_cublas_fns;
bp_cublaslt_t bp_cublaslt_fns;

/* One library: its file, what it is called in messages, its function
 * names and the table's slots for them (in the same order), once, and why
 * it failed (empty: loaded). */
typedef struct {
    const char *lib, *what;
    const char *const *names;
    void **const *slots;
    size_t n;
    void *table;
    size_t table_size;
    pthread_once_t once;
    char why[512];
} dl_lib_t;

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

static dl_lib_t blas = {"libcublas.so." BP_STR(CUBLAS_VER_MAJOR), "cuBLAS", blas_names,
                        blas_slots, sizeof blas_names / sizeof blas_names[0],
                        &bp_cublas_fns, sizeof bp_cublas_fns, PTHREAD_ONCE_INIT, ""};
static dl_lib_t blaslt = {"libcublasLt.so." BP_STR(CUBLAS_VER_MAJOR), "cuBLASLt", lt_names,
                          lt_slots, sizeof lt_names / sizeof lt_names[0],
                          &bp_cublaslt_fns, sizeof bp_cublaslt_fns, PTHREAD_ONCE_INIT,
                          ""};

/* RTLD_LOCAL: nothing else resolves against it; found through the
 * executable's run path (the toolkit's library directory) or the usual
 * search.  On any failure the table stays zeroed. */
static void load(dl_lib_t *l)
{
    void *h = dlopen(l->lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s could not be loaded: %s", l->what,
                 e ? e : l->lib);
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        *l->slots[i] = dlsym(h, l->names[i]);
        if (!*l->slots[i]) {
            snprintf(l->why, sizeof l->why, "%s has no %s (cuBLAS %d expected)", l->lib,
                     l->names[i], CUBLAS_VER_MAJOR);
            dlclose(h);
            memset(l->table, 0, l->table_size);
            return;
        }
    }
}

static void load_blas(void)
{
    load(&blas);
}

static void load_blaslt(void)
{
    load(&blaslt);
}

static bp_status loaded(dl_lib_t *l, void (*once)(void), bp_error_t *err)
{
    pthread_once(&l->once, once);
    if (l->why[0])
        return bp_error_set(err, BP_EUNAVAIL, "%s", l->why);
    return BP_OK;
}

bp_status bp_cublas_load(bp_error_t *err)
{
    return loaded(&blas, load_blas, err);
}

bp_status bp_cublaslt_load(bp_error_t *err)
{
    return loaded(&blaslt, load_blaslt, err);
}
