/* explain: which operation introduced each difference between two sides.
 *
 * Two sides (a and b) each provide every buffer of a probe in one dtype:
 * a backend runs the probe, or a saved run (run --save --intermediates)
 * supplies the buffers.  An element differs "end to end" when a's and b's
 * buffers differ there by the comparison engine's rules (compare.h: bits,
 * NaN by class unless nan_payload, +0 against -0 a difference unless
 * zero_sign_ignore).
 *
 * Per op i, in probe order:
 *  - isolated attribution (b is a backend): op i runs alone on b with a's
 *    buffers as its inputs (bp_backend_run_op).  An element where that
 *    result differs from a's is a difference the op makes with identical
 *    inputs.  introduced = differs end to end and with identical inputs;
 *    inherited = differs end to end only; masked = differs with identical
 *    inputs but not end to end (an upstream difference happened to cancel
 *    it).  introduced + inherited == end-to-end mismatches, always.
 *  - first-divergence attribution (b is a saved run: nothing can run on
 *    b): an end-to-end mismatch whose inputs (the elements it reads, see
 *    below) are all equal on both sides was introduced by op i; one with
 *    some input differing is inherited; masked is 0.
 * The b value "with identical inputs" is the isolated result, or b's own
 * buffer in first-divergence mode (its inputs equal a's there).
 *
 * Elements read (the dependency map): elementwise ops read the same index
 * of each tensor operand; outer (i, j) reads a[i] and b[j]; concat, slice
 * and rotate_half read the one element they move; matmul (i, j) reads row i
 * of a and column j of b; sum reads the slice it reduces; tensor, arange
 * and uniform read nothing.
 *
 * Origin of an end-to-end mismatch: the earliest op along its dependency
 * chain where the difference appears: if no element it reads differs, its
 * own op; otherwise the earliest origin (lowest op, then lowest index)
 * among the differing elements it reads.  via_reduction says the chain
 * passed through a matmul or sum with differing inputs.
 *
 * Verdicts, for every introduced mismatch, against the oracle's value of
 * the op on a's inputs (correctly rounded: within 0.5 ulp of the exact
 * value): a side is correct when it has the oracle's bits (NaNs by class;
 * a zero of the other sign is 0 ulp away and not correct).  Round to nearest even
 * decides ties: the other neighbour of an exact tie is 0.5 ulp away too but
 * is not correct.  BP_VERDICT_A / _B: that side alone is correct;
 * _NEITHER: neither is; _BOTH: both have the oracle's bits, which a
 * mismatch allows only for NaNs differing in payload under nan_payload
 * (the difference is not numerical).
 *
 * End results: each differing output element is also measured against the
 * probe run end to end on the oracle in the same dtype (integer ulps), and,
 * where running the probe in fp64 changes some op other than a cast, against
 * that fp64 run on the oracle (the reference: the probe's math with
 * rounding to fp64 wherever it says $dtype), in fractional ulps of the
 * output dtype.  The side with fewer ulps from the reference (else from the
 * oracle end result) is the closer one.
 *
 * The library computes; rep_explain.c prints, explain_json.c serialises. */
#ifndef BP_EXPLAIN_H
#define BP_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "buf.h"
#include "compare.h"
#include "error.h"
#include "probe.h"
#include "st.h"

typedef enum {
    BP_VERDICT_A,
    BP_VERDICT_B,
    BP_VERDICT_NEITHER,
    BP_VERDICT_BOTH,
    BP_VERDICT_COUNT
} bp_verdict_t;

typedef struct bp_explain_side {
    const char *label;  /* short name in tables: "cpu", "cpu-sleef" */
    const char *source; /* where a saved run comes from, or NULL */
    bp_backend_t *be;  /* runs the probe; NULL when bufs is given */
    bp_buf_t *bufs;    /* p->nops saved buffers (host); NULL with be */
} bp_explain_side_t;

typedef struct bp_explain_opts {
    size_t first_k;      /* differing elements detailed per output */
    bool nan_payload;
    bool zero_sign_ignore; /* +0 against -0 is no difference */
    bp_backend_t *oracle; /* verdicts and end results; NULL: none */
} bp_explain_opts_t;

typedef struct bp_explain_op {
    size_t total, e2e, introduced, inherited, masked;
    uint64_t max_ulp;   /* over introduced: a vs b with identical inputs */
    size_t max_ulp_idx;
    bool verdicts_done; /* the oracle ran on this op */
    size_t verdicts[BP_VERDICT_COUNT];
    uint64_t max_ulp_a, max_ulp_b; /* each side vs the oracle, introduced */
} bp_explain_op_t;

/* One differing output element and where its difference came from. */
typedef struct bp_explain_elem {
    int output;          /* index into p->outputs */
    size_t index;        /* flat, in the output's buffer */
    uint64_t a, b, ulp;  /* end-to-end bits and their distance */
    int origin;          /* op that introduced it */
    size_t origin_index; /* flat, in the origin op's buffer */
    bool via_reduction;
    uint64_t oa, ob;     /* at the origin: a's value, b's with a's inputs */
    bool has_oracle;     /* the oracle's value of the origin op on a's inputs */
    uint64_t oo, ulp_a, ulp_b;
    bp_verdict_t verdict;
    bool has_end;        /* the oracle's end result (same dtype) */
    uint64_t end, end_ulp_a, end_ulp_b;
    bool has_ref;        /* the fp64 reference, ulps of the output dtype */
    double ref, ref_ulp_a, ref_ulp_b;
    int closer;          /* 0: a, 1: b, 2: equally close, -1: unknown */
} bp_explain_elem_t;

typedef struct bp_explain_out {
    int buf;           /* op producing the output */
    size_t total, e2e;
    size_t *by_origin; /* per op: end-to-end mismatches it introduced */
    size_t closer[3];  /* a closer, b closer, equally close */
    size_t first, nfirst; /* its elements: elems[first .. first+nfirst) */
    bp_cmp_t cmp;      /* a against b by the comparison engine, under the
                          output's policy; a caller may move it out (then
                          zero it) */
} bp_explain_out_t;

typedef struct bp_explain {
    const bp_probe_t *p;
    bp_dtype_t dtype;
    char *label_a, *label_b;
    char *source_a, *source_b; /* saved runs' directories, or NULL */
    bool isolated;     /* ops re-run on b with a's inputs */
    bool has_oracle, has_end, has_ref;
    bool oracle_is_a, oracle_is_b; /* a side is the oracle backend itself */
    bp_explain_op_t *ops;    /* p->nops */
    bp_meta_t *metas;        /* p->nops */
    bp_explain_out_t *outs;  /* p->noutputs */
    bp_explain_elem_t *elems;
    size_t nelems;
} bp_explain_t;

/* Explains the differences between a and b for probe p in dtype dt.  A
 * side with bufs must hold every buffer with the dtype and shape the probe
 * gives it.  On success out owns its arrays: bp_explain_free. */
bp_status bp_explain_run(const bp_probe_t *p, bp_dtype_t dt,
                         const bp_explain_side_t *a, const bp_explain_side_t *b,
                         const bp_explain_opts_t *o, bp_explain_t *out,
                         bp_error_t *err);
void bp_explain_free(bp_explain_t *x);

/* The buffers of p in dtype dt from a saved run: DIR/<probe>/<key>.
 * safetensors.gz, tensors "<buffer>.<dtype>" (run --save --intermediates).
 * key NULL picks the only key the bundle holds for p (an error lists them
 * when there are several); key_out (64 bytes) receives the key used.  A
 * bundle saved from another definition of p, or without some buffer, is
 * an error saying so.  bufs (p->nops, zeroed) receive copies. */
bp_status bp_explain_load_bundle(const char *dir, const bp_probe_t *p, bp_dtype_t dt,
                                 const char *key, bp_buf_t *bufs, char *key_out,
                                 bp_error_t *err);

/* Dependency map (explain_deps.c): calls fn for each element (buffer,
 * flat index) that element e of op i reads, given the probe's metas; stops
 * early when fn returns false. */
typedef bool (*bp_explain_dep_fn)(void *ctx, int buf, size_t index);
void bp_explain_deps(const bp_probe_t *p, const bp_meta_t *metas, size_t i, size_t e,
                     bp_explain_dep_fn fn, void *ctx);

/* Distance of v from ref in ulps of dt at ref (the spacing of dt's floats
 * around |ref|, subnormal spacing below the normal range): 0 when equal,
 * INFINITY when one is not finite and they differ. */
double bp_explain_frac_ulp(bp_dtype_t dt, double v, double ref);

/* The JSON form of x (explain_json.c); NULL when out of memory. */
json_t *bp_explain_json(const bp_explain_t *x);
const char *bp_verdict_name(bp_verdict_t v, const char *la, const char *lb,
                            char *buf, size_t n);

#endif
