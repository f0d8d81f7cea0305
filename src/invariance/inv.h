/* Invariance maps: the same rows computed inside different configurations
 * (batch size M, split count S, rank count T), grouped by their bits.
 *
 * A map belongs to one subject (an op on a shape and dtype, computed by one
 * engine) along one axis.  Its reference result is the probed rows computed
 * alone (M = R rows, S = 1, T = 1).  Every configuration's result is put in
 * a result group: two configurations share a group exactly when their bits
 * are identical (NaNs included bit for bit: a different NaN payload is a
 * different result), and group 0 is always the reference's.  A band is one
 * sequence of configurations along the axis (one per placement of the
 * probed rows: first, middle or last); its intervals are the maximal runs
 * of consecutive configurations with one group, and a boundary is where
 * two adjacent intervals meet.  Group numbers are shared by a map's bands,
 * so that one colour means one result wherever it appears.
 *
 * A group breaks invariance when its result, compared with the reference's
 * under the map's policy (compare.h: "exact" by default), does not pass.
 * Run-to-run differences (a configuration computed again in the same
 * process, or in a fresh one, giving other bits) break it whatever the
 * policy says nothing about: they are counted per configuration.
 *
 * Arbitration: given the oracle's correctly rounded result of the probed
 * rows (the exact values rounded once to the output dtype), each group gets
 * its distance to it in ulp, and two groups are compared element by
 * element: which of the two is closer to the exact result. */
#ifndef BP_INV_H
#define BP_INV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "dtype.h"
#include "error.h"
#include "policy.h"

typedef enum { BP_INV_BATCH, BP_INV_SPLIT, BP_INV_RANKS, BP_INV_NAXES } bp_inv_axis_t;
typedef enum { BP_INV_FIRST, BP_INV_MIDDLE, BP_INV_LAST, BP_INV_NPLACES } bp_inv_place_t;

/* "M", "S", "T"; "batch", "split", "ranks". */
const char *bp_inv_axis_letter(bp_inv_axis_t a);
const char *bp_inv_axis_name(bp_inv_axis_t a);
/* "first", "middle", "last"; parse accepts those names. */
const char *bp_inv_place_name(bp_inv_place_t p);
bool bp_inv_place_parse(const char *s, bp_inv_place_t *out);
/* Row index of the first of r probed rows in a batch of m (m >= r). */
int64_t bp_inv_place_row(bp_inv_place_t p, int64_t m, int64_t r);

/* What computed one configuration, as far as the engine can tell (GEMMs:
 * the cuBLASLt algorithm and its configuration). */
#define BP_INV_ALGO_TEXT 240
typedef struct {
    bool known;           /* anything recorded at all */
    bool lt;              /* the cuBLASLt fields below are valid */
    int32_t id;           /* CUBLASLT_ALGO_CONFIG_ID */
    uint32_t tile, stages, reduction, swizzle, custom;
    int32_t splitk;
    uint16_t inner, cluster;
    uint64_t workspace;   /* bytes the algorithm needs */
    float waves;          /* the heuristic's wavesCount */
    int same_bits;        /* -1 not checked; 1/0: running this algorithm
                             gave / did not give the configuration's bits */
    char source[32];      /* where it came from: "cuBLASLt heuristic", ... */
    char text[BP_INV_ALGO_TEXT]; /* free text (a log line, a formulation) */
} bp_inv_algo_t;

void bp_inv_algo_init(bp_inv_algo_t *a);
/* Same algorithm: the same cuBLASLt fields, or the same text. */
bool bp_inv_algo_equal(const bp_inv_algo_t *a, const bp_inv_algo_t *b);
/* "algo 21, tile 128x128 (id 20), stages 64x3 (id 23), split-K 1,
 * reduction none, swizzle 0, workspace 0" or the text; "-" when unknown. */
void bp_inv_algo_format(const bp_inv_algo_t *a, char *out, size_t n);
/* Names of cuBLASLt's tile, stages and reduction-scheme ids ("128x128",
 * "64x3", "none"), or NULL for an id not in the table. */
const char *bp_inv_tile_name(uint32_t id);
const char *bp_inv_stages_name(uint32_t id);
const char *bp_inv_reduction_name(uint32_t scheme);

typedef struct {
    int64_t value;         /* M, S or T */
    int group;             /* result group */
    uint64_t digest;       /* of the result's bits (bp_inv_digest) */
    bp_inv_algo_t algo;
    uint32_t repeats;      /* in-process repeats compared with the first */
    uint32_t repeat_differ;  /* of them, those with other bits */
    uint32_t processes;    /* fresh processes compared */
    uint32_t process_differ; /* of them, those with another digest */
} bp_inv_cfg_t;

typedef struct {
    size_t first, last; /* configuration indices, inclusive */
    int group;
} bp_inv_run_t;

typedef struct {
    bp_inv_place_t place;
    bp_inv_cfg_t *cfg;
    size_t ncfg, capcfg;
    bp_inv_run_t *iv; /* intervals, after bp_inv_map_finish */
    size_t niv;
} bp_inv_band_t;

typedef struct {
    void *bits;          /* the result, map->nout elements of map->dtype */
    uint64_t digest;
    size_t nconfigs;     /* configurations in the group */
    bp_cmp_t cmp;        /* against the reference, under the policy */
    bool compared;
    /* against the oracle, after bp_inv_map_arbitrate */
    uint64_t max_ulp;    /* UINT64_MAX: a non-finite mismatch */
    size_t max_ulp_idx;
    size_t exact;        /* elements equal to the correctly rounded value */
    double mean_ulp;     /* finite distances only */
} bp_inv_group_t;

#define BP_INV_MAXBANDS BP_INV_NPLACES

typedef struct bp_inv_map {
    char op[24];          /* "matmul", "rms_norm", ... */
    char shape[96];       /* "[M, 4096] x [4096, 4096]" */
    char dims[40];        /* the same, short: "4096x4096", "H 4096" */
    char engine[48];      /* "cublas", "cpu", "cpu/tree" ... */
    char engine_desc[320];/* its settings, for the report */
    char dtype_name[8];   /* "bf16", "tf32", ... */
    bp_dtype_t dtype;     /* element type of the results */
    bp_inv_axis_t axis;
    char values[96];      /* the axis values as asked: "1:1024" */
    int64_t batch;        /* split and ranks axes: the batch size */
    int64_t rows;         /* result rows (the probed rows; attention: heads) */
    int64_t cols;
    size_t nout;          /* rows * cols */
    bp_policy_t policy;
    bp_inv_group_t *g;    /* g[0]: the reference */
    size_t ng, capg;
    bp_inv_band_t band[BP_INV_MAXBANDS];
    int nbands;
    size_t nskipped;      /* configurations the engine could not run */
    char skipped[160];    /* why, for the first of them */
    void *oracle;         /* the correctly rounded result, or NULL */
    char oracle_note[160];/* why there is none, when there is none */
    bool finished;
} bp_inv_map_t;

/* FNV-1a 64 of n bytes. */
uint64_t bp_inv_digest(const void *bits, size_t n);

/* A map for results of rows x cols elements of dt, with the reference's
 * bits (copied) and the policy (NULL: exact).  Names are set by the caller
 * afterwards. */
bp_status bp_inv_map_init(bp_inv_map_t *m, bp_dtype_t dt, int64_t rows,
                          int64_t cols, const void *ref, const bp_policy_t *pol,
                          bp_error_t *err);
void bp_inv_map_free(bp_inv_map_t *m);
/* Adds a band for placement p (at most BP_INV_MAXBANDS). */
bp_status bp_inv_map_band(bp_inv_map_t *m, bp_inv_place_t p, bp_inv_band_t **out,
                          bp_error_t *err);
/* Appends a configuration with its result (copied when it starts a new
 * group) and algorithm (NULL: unknown); *cfg (may be NULL) receives it,
 * valid until the next add. */
bp_status bp_inv_map_add(bp_inv_map_t *m, bp_inv_band_t *b, int64_t value,
                         const void *bits, const bp_inv_algo_t *algo,
                         bp_inv_cfg_t **cfg, bp_error_t *err);
/* Intervals of every band and each group's comparison with the
 * reference.  Call once, after the last add. */
bp_status bp_inv_map_finish(bp_inv_map_t *m, bp_error_t *err);
/* The oracle's result (copied) and each group's distance to it. */
bp_status bp_inv_map_arbitrate(bp_inv_map_t *m, const void *oracle, bp_error_t *err);

/* Element by element, which of groups a and b is nearer the oracle's
 * value (after bp_inv_map_arbitrate). */
typedef struct {
    size_t a_closer, b_closer, ties;
} bp_inv_closer_t;
void bp_inv_closer(const bp_inv_map_t *m, int a, int b, bp_inv_closer_t *out);

/* Whether group g passes the policy against the reference (group 0 does). */
bool bp_inv_group_pass(const bp_inv_map_t *m, int g);
/* Configurations of band b that break invariance: their group fails the
 * policy, or a repeat or a process gave other bits. */
size_t bp_inv_band_breaking(const bp_inv_map_t *m, const bp_inv_band_t *b);
bool bp_inv_cfg_breaks(const bp_inv_map_t *m, const bp_inv_cfg_t *c);
/* No configuration of the map breaks invariance. */
bool bp_inv_map_pass(const bp_inv_map_t *m);
/* Run-to-run: configurations whose repeats or processes differed. */
size_t bp_inv_map_unstable(const bp_inv_map_t *m);

/* Fresh processes: every configuration's digest, band by band in order
 * (bp_inv_map_nconfigs of them), and the check of another process's
 * digests in that order (returns how many differ, and counts them per
 * configuration). */
size_t bp_inv_map_nconfigs(const bp_inv_map_t *m);
void bp_inv_map_digests(const bp_inv_map_t *m, uint64_t *out);
size_t bp_inv_map_check_digests(bp_inv_map_t *m, const uint64_t *d);

#endif
