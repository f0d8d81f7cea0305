/* A collective map (coll.h): cells of (message size, configuration), the
 * result groups at each size, the orders inferred there, repeats and fresh
 * processes, and the oracle's arbitration between the groups.
 *
 * Results arrive configuration by configuration, each size's cells in
 * configuration order: the first configuration that runs at a size makes
 * group 0 there and its whole result is kept (host memory) until
 * bp_coll_map_finish, so that every later result is compared with it
 * element by element under the map's policy; other groups are known by
 * their digest and their values at the oracle's sample (up to
 * BP_COLL_SAMPLE elements spread evenly over the message, all of them in a
 * shorter one).
 *
 * The oracle: the exact sum of the W ranks' inputs at each sampled element
 * (avg: divided by W), rounded once to the dtype (MPFR); each group's
 * distance to it in ulps and, against group 0, on how many elements it is
 * nearer.  All-gathers have no oracle: their reference is the copy.
 * An inferred order is checked at the same sample: the values summed in
 * that order must give the result's bits. */
#ifndef BP_COLL_MAP_H
#define BP_COLL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "coll_order.h"
#include "compare.h"
#include "inv.h"
#include "policy.h"

#define BP_COLL_SAMPLE 4096

typedef enum { BP_CELL_NOTRUN, BP_CELL_RAN, BP_CELL_UNAVAIL, BP_CELL_FAILED } bp_coll_state_t;

typedef struct {
    bp_coll_state_t state;
    char why[240];           /* unavailable or failed: NCCL's message */
    int group;               /* at its size (-1 unless it ran) */
    uint64_t digest;         /* of the whole result */
    uint32_t repeats, repeat_differ;     /* in this process, after other allocations */
    uint32_t processes, process_differ;  /* fresh processes */
    uint32_t ranks_differ;   /* ranks whose output is not rank 0's */
    uint64_t copy_differ;    /* all-gather: elements not copied bit for bit */
    bp_coll_order_t order;   /* reductions: inferred from the probes */
    uint64_t verify_checked, verify_same; /* the order recomputing the values */
    double emu_agree;        /* share of probed elements where the emulation
                                predicts the inferred order; < 0 unknown */
    bool emu_same_set;       /* the emulation's set of orders is this one's */
    char emu_desc[96];
    double seconds;
} bp_coll_cell_t;

typedef struct {
    int first;               /* the configuration of its first member */
    uint64_t digest;
    size_t members;
    bp_cmp_t cmp;            /* against group 0, whole message, the policy */
    bool compared;
    void *sample;            /* its values at the oracle's sample */
    bool arbitrated;
    uint64_t max_ulp;        /* UINT64_MAX: a non-finite miss */
    size_t exact;            /* sampled elements correctly rounded */
    double mean_ulp;
    bp_inv_closer_t closer;  /* a: group 0, b: this group */
} bp_coll_group_t;

typedef struct {
    uint64_t bytes, n;       /* message bytes, elements */
    const char *what;        /* a model size's description, or NULL */
    bp_coll_group_t *g;
    size_t ng;
    void *ref;               /* group 0's result, until finish */
    uint64_t *sidx;          /* the oracle's sample */
    size_t ns;
    double *sin;             /* every rank's values there: [ns][W] */
    void *exact;             /* the oracle's values there, once arbitrated */
} bp_coll_slot_t;

typedef struct bp_coll_map {
    bp_coll_kind_t kind;
    bp_dtype_t dtype;
    bp_coll_redop_t op;
    int world;
    char engine[24];         /* "nccl", "emulate" */
    char engine_desc[320];
    char lib[48];            /* "NCCL 2.28.3" */
    uint64_t seed;
    bp_policy_t policy;
    bp_coll_slot_t *sz;
    size_t nsizes;
    bp_coll_cfg_t *cfg;
    size_t ncfg;
    bp_coll_cell_t *cell;    /* [size * ncfg + cfg] */
    char oracle_note[160];
} bp_coll_map_t;

bp_status bp_coll_map_init(bp_coll_map_t *m, bp_coll_kind_t kind, bp_dtype_t dt,
                           bp_coll_redop_t op, int world, const bp_coll_size_t *sizes,
                           size_t nsizes, const bp_coll_cfg_t *cfg, size_t ncfg,
                           const bp_policy_t *pol, uint64_t seed, bp_error_t *err);
void bp_coll_map_free(bp_coll_map_t *m);
bp_coll_cell_t *bp_coll_cell(const bp_coll_map_t *m, size_t s, size_t c);
/* "all_reduce bf16 sum, 4 ranks". */
void bp_coll_map_title(const bp_coll_map_t *m, char *out, size_t n);

/* A cell that did not run: state and why. */
void bp_coll_map_skip(bp_coll_map_t *m, size_t s, size_t c, bp_coll_state_t state,
                      const char *why);
/* The probe result of cell (s, c): its order (call before the values'). */
bp_status bp_coll_map_order(bp_coll_map_t *m, size_t s, size_t c, const void *probe,
                            bp_error_t *err);
/* The values result (the all-gather's bits) of cell (s, c), n elements:
 * its group, its comparison with group 0, its order checked against it. */
bp_status bp_coll_map_result(bp_coll_map_t *m, size_t s, size_t c, const void *bits,
                             uint32_t ranks_differ, uint64_t copy_differ, bp_error_t *err);
/* A repeat's result: counted against the cell when its bits differ. */
void bp_coll_map_repeat(bp_coll_map_t *m, size_t s, size_t c, const void *bits,
                        uint32_t ranks_differ);
/* The oracle's values and every group's distance, for the sizes with
 * more than one group (all: every size); threads as bp_oracle_threads. */
bp_status bp_coll_map_arbitrate(bp_coll_map_t *m, bool all, int threads, bp_error_t *err);
/* Frees the kept references. */
void bp_coll_map_finish(bp_coll_map_t *m);

/* Whether cell (s, c) breaks invariance (coll.h), and the map passes. */
bool bp_coll_cell_breaks(const bp_coll_map_t *m, size_t s, size_t c);
bool bp_coll_map_pass(const bp_coll_map_t *m);
size_t bp_coll_map_unstable(const bp_coll_map_t *m);

/* Sizes s-1 and s put the configurations that ran at both into the same
 * groups (two configurations together at one exactly when together at
 * the other). */
bool bp_coll_same_partition(const bp_coll_map_t *m, size_t s1, size_t s2);
/* Configuration c's set of orders differs between sizes s-1 and s (both
 * inferred). */
bool bp_coll_order_changes(const bp_coll_map_t *m, size_t s, size_t c);

/* Fresh processes: every cell's digest (0 for a cell that did not run),
 * size-major, and the check of another process's. */
size_t bp_coll_map_ncells(const bp_coll_map_t *m);
void bp_coll_map_digests(const bp_coll_map_t *m, uint64_t *out);
size_t bp_coll_map_check_digests(bp_coll_map_t *m, const uint64_t *d);

/* A digest of n bytes (8 at a time: fast enough for 1 GiB messages). */
uint64_t bp_coll_digest(const void *p, size_t n);

#endif
