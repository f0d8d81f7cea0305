/* The reduction order of a collective, inferred from cancellation probes.
 *
 * A reduction of W values, one per rank, is modelled as a rooted binary
 * tree over the ranks: every internal node adds its two children's partial
 * sums and rounds the result to some precision (the dtype's when the
 * partial sum travels between GPUs, maybe wider inside one).  Addition
 * commutes, so the tree is the whole order; it may depend on the element's
 * position in the message (a ring starts each chunk at another rank).
 *
 * Probe: three ranks a, b, c hold +B, -B and s = B * 2^-k, the others 0.
 * If a and b meet before c joins them, B - B = 0 exactly and s survives;
 * if c meets a (or b) first, B + s is rounded and s is absorbed when that
 * node keeps at most k - 1 bits (s is below half an ulp of B on both sides
 * of B).  So for a triple {x, y, z} the three probes (s on z, on y, on x)
 * say which pair forms first: one survives.  Every triple's answer fixes
 * the tree (a rooted binary tree is determined by its triplets; built here
 * as Aho, Sagiv, Szymanski and Ullman's BUILD does).  All three surviving
 * means the node kept more than k - 1 bits.  Two levels are probed for
 * bf16 and fp16: k = p + 2 (p the dtype's precision: 8, 11) and k = 26
 * (fp32's 24 + 2); fp32 only k = 26.  The topology comes from the lowest
 * level that answers every triple; a node's width is bracketed by the
 * levels at which it absorbs.  B = 1 (fp16: 1024, so that s = 2^-16 is
 * representable); with avg NCCL multiplies every input by 1/W first, which
 * keeps the answers (survived = the result is not zero).
 *
 * Layout: a probe block is `levels` x 3 x C(W, 3) elements (level, then
 * triple in lexicographic order, then the holder of s: z, y, x), repeated
 * over the message from element 0.  Each whole block gives one answer
 * pattern; runs of equal patterns are runs of one order; a block whose
 * answers fit no tree (a change of order inside it) is "mixed".  The last
 * n mod Q elements are not probed.  W = 2 has no triple: one addition,
 * nothing to infer.  Orders are inferred up to BP_COLL_ORDER_MAX ranks. */
#ifndef BP_COLL_ORDER_H
#define BP_COLL_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "dtype.h"
#include "error.h"

#define BP_COLL_ORDER_MAX 16
#define BP_COLL_TREE_TEXT 192

/* Leaves 0..n-1 are the ranks; internal node n + k adds a[k] and b[k]
 * (node ids, children before parents), so the root is node 2n - 2.  prec[k]:
 * the bits node k's sum keeps (0: the dtype's). */
typedef struct {
    int n;
    int8_t a[BP_COLL_ORDER_MAX], b[BP_COLL_ORDER_MAX];
    uint8_t prec[BP_COLL_ORDER_MAX];
} bp_coll_tree_t;

/* The chain that adds ranks in the order given: ((r[0] + r[1]) + r[2]) ... */
void bp_coll_tree_chain(bp_coll_tree_t *t, int n, const int *ranks);
/* Pairwise: (r0 + r1) + (r2 + r3) ..., halves split at (n + 1) / 2. */
void bp_coll_tree_pairwise(bp_coll_tree_t *t, int n);
/* Canonical text: the partial sum formed from more ranks first (ties: the
 * lower rank first), outer parentheses dropped: "((r1+r2)+r3)+r0".  Two
 * trees are the same order exactly when their texts are equal. */
void bp_coll_tree_format(const bp_coll_tree_t *t, char *out, size_t n);
/* v rounded once to dt (nearest even, subnormals included; no overflow
 * handling: the values here are small). */
double bp_coll_round(bp_dtype_t dt, double v);
/* The sum of v[0..n) in t's order, every node rounded to dt (or to its
 * prec), the result rounded to dt. */
float bp_coll_tree_eval(const bp_coll_tree_t *t, const float *v, bp_dtype_t dt);

/* ---- the probe layout -------------------------------------------------- */

/* Probe levels for dt (k values, ascending) into lv; returns their count. */
int bp_coll_probe_levels(bp_dtype_t dt, int lv[2]);
/* Elements of one probe block for W ranks (0 when W < 3 or W > max). */
size_t bp_coll_probe_block(bp_dtype_t dt, int world);
/* Rank r's probe input at element i, as a double (exact in dt). */
double bp_coll_probe_value(bp_dtype_t dt, int world, int rank, uint64_t i);

/* ---- what was inferred -------------------------------------------------- */

typedef enum {
    BP_ORD_TREE,   /* one binary tree answers every probe */
    BP_ORD_EXACT,  /* every probe survived at every level: no rounding seen */
    BP_ORD_MIXED,  /* the answers fit no tree (an order change in the block) */
    BP_ORD_SINGLE  /* W = 2 (or 1): one addition */
} bp_coll_ord_kind_t;

typedef struct {
    bp_coll_ord_kind_t kind;
    bp_coll_tree_t tree;           /* BP_ORD_TREE */
    char text[BP_COLL_TREE_TEXT];  /* the tree, or what kind says */
    char width[128];               /* "every partial sum rounded to bf16" */
    uint64_t elements;             /* probed elements with this order */
    size_t runs;
} bp_coll_ord_t;

typedef struct {
    uint64_t first, count; /* elements */
    int ord;               /* index into ords; -1 mixed */
    uint64_t amb_lo, amb_hi; /* the change into this run may lie anywhere
                              from first - amb_lo to first + amb_hi: the
                              probes there answer alike for both orders
                              (first is the roundest position there) */
} bp_coll_orun_t;

#define BP_COLL_MAX_ORDS 64
#define BP_COLL_MAX_RUNS (1u << 20)

typedef struct {
    bool done;             /* inferred (false: not probed, see why) */
    char why[160];
    int world;
    bp_dtype_t dtype;
    size_t block;          /* elements per probe block */
    uint64_t n, probed;    /* message elements; in whole blocks */
    bp_coll_ord_t ords[BP_COLL_MAX_ORDS];
    size_t nords;
    bool too_many_ords;    /* more patterns than BP_COLL_MAX_ORDS: the rest
                              counted as mixed */
    bp_coll_orun_t *runs;  /* maximal runs, in element order */
    size_t nruns;
    bool runs_cut;         /* more than BP_COLL_MAX_RUNS: the rest not kept */
    uint64_t mixed;        /* probed elements in mixed blocks */
} bp_coll_order_t;

/* Infers the order from the result of the probe input (n elements of dt,
 * the reduced message) over W ranks.  A message shorter than one block
 * gives done = false with the reason. */
bp_status bp_coll_order_infer(bp_dtype_t dt, int world, const void *result, uint64_t n,
                              bp_coll_order_t *o, bp_error_t *err);
void bp_coll_order_free(bp_coll_order_t *o);
/* Index of the order at element i (in a whole block), or -1; alt: the
 * other order that may hold there (i inside a change's window), or -1. */
int bp_coll_order_at(const bp_coll_order_t *o, uint64_t i);
int bp_coll_order_alt(const bp_coll_order_t *o, uint64_t i);
/* "2 orders in 16 runs of 4096 elements: ((r1+r2)+r3)+r0 50%, ...". */
void bp_coll_order_summary(const bp_coll_order_t *o, char *out, size_t n);
/* The orders' texts sorted and joined with "; ": equal exactly when two
 * results hold the same orders (wherever they sit). */
void bp_coll_order_set(const bp_coll_order_t *o, char *out, size_t n);

/* Recomputes the values result from the inferred order at ns elements
 * idx[k] of the message: the inputs in[k * W + r] of every rank (already
 * in the dtype) summed in the order at that element (avg: each input
 * times 1/W rounded to the dtype first, as NCCL's PreMulSum), compared
 * with result (the whole message).  *checked: elements with a known
 * order; *same: those whose bits equal result's. */
void bp_coll_order_verify(const bp_coll_order_t *o, bp_coll_redop_t op, const uint64_t *idx,
                          size_t ns, const double *in, const void *result, uint64_t *checked,
                          uint64_t *same);

#endif
