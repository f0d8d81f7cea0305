/* Libraries opened with dlopen on first use (cuBLAS, cuBLASLt, NCCL):
 * nothing is loaded at process start, a machine without the library can
 * still run every command that does not need it, and each caller says
 * why one is missing.  A library is described once (its file, its name in
 * messages, its functions and the table slots they go to) and opened once
 * per process from any thread; on any failure its table stays zeroed. */
#ifndef BP_DL_H
#define BP_DL_H

#include <pthread.h>
#include <stddef.h>

#include "error.h"

typedef struct {
    const char *lib;     /* "libnccl.so.2": found through the run path
                            (the toolkit's library directory) or the usual
                            search */
    const char *env;     /* environment variable naming another file, or NULL */
    const char *what;    /* "NCCL", for messages */
    const char *expect;  /* "NCCL 2.x": what a missing function means */
    const char *const *names;
    void **const *slots; /* where each function's address goes */
    size_t n;
    void *table;         /* zeroed on failure */
    size_t table_size;
    pthread_once_t once;
    char why[512];       /* empty: loaded */
} bp_dl_lib_t;

/* Opens l (call it from l's own pthread_once routine). */
void bp_dl_open(bp_dl_lib_t *l);
/* Runs once_fn once, then BP_EUNAVAIL with the reason if l did not load. */
bp_status bp_dl_loaded(bp_dl_lib_t *l, void (*once_fn)(void), bp_error_t *err);

#endif
