/* The invariance sweep: one engine, one problem, every configuration of
 * the axis and every placement, into a map (inv.h).
 *
 * The reference is computed once: the probed rows alone (a batch of R
 * rows), or unsplit (S = 1), or on one rank (T = 1).  Then for each value v
 * of the axis (ascending) and each placement, configuration v is computed
 * (batch: v rows with the probed rows at the placement's row; split and
 * ranks: the batch of p->batch rows) and its probed rows' result added to
 * the map; a configuration the engine cannot run (BP_EUNAVAIL) is counted
 * in the map's nskipped with the first reason.  With repeat N > 1 each
 * configuration is computed N times in a row and any run whose bits differ
 * from the first is counted against it (run-to-run nondeterminism). */
#ifndef BP_INV_SWEEP_H
#define BP_INV_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inv.h"
#include "inv_engine.h"
#include "policy.h"

typedef struct {
    const int64_t *values;  /* ascending, distinct, each >= 1 */
    size_t nvalues;
    bool place[BP_INV_NPLACES];
    int repeat;             /* runs per configuration, >= 1 */
    bp_policy_t policy;
    /* called after each value (may be NULL) */
    void (*progress)(void *ctx, const bp_inv_map_t *m, int64_t value);
    void *ctx;
} bp_inv_sweep_opts_t;

/* Runs the sweep; on success m is finished (bp_inv_map_finish) and owned
 * by the caller (bp_inv_map_free).  On the batch axis, values below the
 * probed row count are skipped (a batch cannot hold the probed rows). */
bp_status bp_inv_sweep(bp_inv_engine_t *e, const bp_inv_problem_t *p,
                       const bp_inv_sweep_opts_t *o, bp_inv_map_t *m,
                       bp_error_t *err);

/* Parses a value list: comma-separated items, each N, A:B (inclusive) or
 * A:B:STEP; sorted and deduplicated into *out (malloc'd).  Values must be
 * in 1..max; at most BP_INV_MAX_VALUES of them. */
#define BP_INV_MAX_VALUES 65536
bp_status bp_inv_values_parse(const char *s, int64_t max, int64_t **out,
                              size_t *n, bp_error_t *err);

#endif
