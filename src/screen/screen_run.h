/* Screening GPUs (screen_run.c): opens each GPU (or fake) on its own
 * thread, loads its goldens, then runs `depth` rounds of the chosen tests
 * on all of them at once and checks every result (screen.h). */
#ifndef BP_SCREEN_RUN_H
#define BP_SCREEN_RUN_H

#include "screen.h"

typedef struct {
    const int *tests; /* indices into bp_screen_tests */
    int ntests;
    int depth;        /* rounds */
    const char *fake; /* BP_SCREEN_FAKE's value, or NULL: CUDA */
    const char *golden_root; /* NULL: no goldens (the SMs vote) */
    const bp_screen_inject_t *inject;
    int ninject;
    /* after each round when depth > 1 (may be NULL) */
    void (*progress)(void *ctx, int done, int depth);
    void *pctx;
} bp_screen_opts_t;

/* g[k].index names the device of GPU k (the rest of g zeroed by the
 * caller); every GPU's outcome, trouble included, lands in g[k].  The
 * status is not OK only for a failure of the host (memory, the oracle). */
bp_status bp_screen_run(const bp_screen_opts_t *o, bp_screen_gpu_t *g, int ngpus,
                        bp_error_t *err);

#endif
