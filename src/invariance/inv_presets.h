/* The shipped invariance set: the shapes of common LLMs (hidden 4096 with
 * the matmuls' K of 4096, 11008 (Llama-2 7B's MLP) and 14336 (Llama-3 8B's),
 * vocabularies of 32000 and 128256, head dim 128 with up to 32k keys), each
 * a preset of `bitprobe invariance --preset NAME`, and groups of them. */
#ifndef BP_INV_PRESETS_H
#define BP_INV_PRESETS_H

#include <stddef.h>

#include "inv_engine.h"

typedef struct {
    const char *name;
    const char *what;       /* one line for --help and the man page */
    bp_op_kind_t op;
    bp_inv_axis_t axis;
    int64_t k, n, heads;    /* as bp_inv_problem_t */
    const char *values;     /* the axis values */
    const char *combine;    /* split and ranks: the orders, comma-separated */
} bp_inv_preset_t;

/* Every preset, NULL-name-terminated. */
const bp_inv_preset_t *bp_inv_presets(void);
/* Expands a comma-separated list of presets and groups ("llm": all;
 * "llm-gemm", "llm-rows", "llm-split") into out (at most max, no repeats);
 * returns the count, or -1 naming the unknown item in bad (n bytes). */
int bp_inv_presets_expand(const char *list, const bp_inv_preset_t **out, int max,
                          char *bad, size_t n);

#endif
