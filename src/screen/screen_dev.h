/* The screen's devices: a CUDA GPU (screen_cuda.c) or, for tests on
 * machines without one, a fake that computes on the host
 * (screen_fake.c, selected by BP_SCREEN_FAKE).  Both fill a GPU record's
 * identity and SM map when opened and run one job at a time. */
#ifndef BP_SCREEN_DEV_H
#define BP_SCREEN_DEV_H

#include "screen.h"

typedef struct bp_screen_dev bp_screen_dev_t;
struct bp_screen_dev {
    /* Runs job.  Pinned tests: every SM id present in g computes all of
     * its share; out receives g->nsmid rows of per_sm results (row s from
     * SM s) and done[s] = 1 for each SM whose share completed.
     * Device-wide tests (cuBLAS): out receives job->n results.
     * inject_sm >= 0 flips bit 0 of element 0 of that SM's results
     * (device-wide: of the results). */
    bp_status (*run)(bp_screen_dev_t *d, const bp_screen_gpu_t *g,
                     const bp_screen_job_t *job, size_t per_sm, int inject_sm,
                     void *out, unsigned char *done, bp_error_t *err);
    void (*close)(bp_screen_dev_t *d);
    void *state;
};

/* The GPUs CUDA sees (CUDA_VISIBLE_DEVICES applies). */
bp_status bp_screen_cuda_count(int *n, bp_error_t *err);
/* Opens CUDA device `index` and finds its SM map (g->present). */
bp_status bp_screen_cuda_open(int index, bp_screen_gpu_t *g, bp_screen_dev_t **out,
                              bp_error_t *err);

/* BP_SCREEN_FAKE="GxS[,dead=g:s][,skew=TEST]": G fake GPUs of S SMs each,
 * with SM ids 0, 2, 4, ... (not contiguous, as real ids need not be);
 * dead=g:s makes SM s of GPU g run nothing (a coverage failure); skew=TEST
 * makes every SM of every GPU wrong alike in TEST's element 0. */
bp_status bp_screen_fake_count(const char *spec, int *n, bp_error_t *err);
bp_status bp_screen_fake_open(const char *spec, int index, bp_screen_gpu_t *g,
                              bp_screen_dev_t **out, bp_error_t *err);

#endif
