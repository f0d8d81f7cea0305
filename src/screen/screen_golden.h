/* The screen's goldens (screen_golden.c): the bits of the golden sweeps
 * (CUDA's math library, the special function unit) per architecture and
 * nvcc, blessed from a GPU whose SMs agreed and stayed within the
 * oracle's bounds. */
#ifndef BP_SCREEN_GOLDEN_H
#define BP_SCREEN_GOLDEN_H

#include <stddef.h>

#include "screen.h"

/* root/screen/<key>.safetensors.gz */
bp_status bp_screen_golden_path(const char *root, const char *key, char *out, size_t n,
                                bp_error_t *err);
/* golden[i] receives the expected bits of jobs[i] (golden tests whose
 * tensor matches the job's inputs) or NULL; what was set aside, or that
 * there is no file, is appended to note.  A damaged file is an error. */
bp_status bp_screen_golden_load(const char *root, const char *key,
                                const bp_screen_job_t *jobs, int njobs, void **golden,
                                char *note, size_t nl, bp_error_t *err);
/* Writes the agreed bits of g's golden tests (round 0) as g->key's golden,
 * atomically; path receives the file's name, *written the tensors. */
bp_status bp_screen_golden_bless(const char *root, const bp_screen_gpu_t *g,
                                 const bp_screen_job_t *jobs, int njobs, char *path,
                                 size_t pn, int *written, bp_error_t *err);

#endif
