/* cuBLAS by dlopen (cublas_dl.h). */
#include "cublas_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define BP_STR2(x) #x
#define BP_STR(x) BP_STR2(x)
#define LIBNAME "libcublas.so." BP_STR(CUBLAS_VER_MAJOR)

bp_cublas_t bp_cublas_fns;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty: loaded */

static void load(void)
{
    /* RTLD_LOCAL: nothing else resolves against it; found through the
     * executable's run path (the toolkit's library directory) or the
     * usual search. */
    void *h = dlopen(LIBNAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cuBLAS could not be loaded: %s", e ? e : LIBNAME);
        return;
    }
#define LOAD(f)                                                                \
    if (!why[0]) {                                                             \
        *(void **)&bp_cublas_fns.f = dlsym(h, BP_STR(f));                      \
        if (!bp_cublas_fns.f)                                                  \
            snprintf(why, sizeof why, "%s has no %s (cuBLAS %d expected)",     \
                     LIBNAME, BP_STR(f), CUBLAS_VER_MAJOR);                    \
    }
    BP_CUBLAS_FNS(LOAD)
#undef LOAD
    if (why[0]) {
        dlclose(h);
        memset(&bp_cublas_fns, 0, sizeof bp_cublas_fns);
    }
}

bp_status bp_cublas_load(bp_error_t *err)
{
    pthread_once(&once, load);
    if (why[0])
        return bp_error_set(err, BP_EUNAVAIL, "%s", why);
    return BP_OK;
}
