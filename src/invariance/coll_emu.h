/* The collectives emulated on the CPU: a model of where NCCL's orders come
 * from, for machines without GPUs and as a prediction to check against
 * the orders inferred from NCCL (coll_order.h).
 *
 * Orders, W ranks:
 *   ring      the message is cut into loops of nch x W x chunk elements;
 *             in a loop, channel ch takes nch's share and cuts it into W
 *             pieces of chunk elements; piece c is reduced around the ring
 *             starting at rank c + 1 and ending at rank c (NCCL's ring
 *             reduce-scatter step: ((x[c+1] + x[c+2]) + ...) + x[c]);
 *             chunk 0: one loop, piece c = [c*n/W, (c+1)*n/W) (the textbook
 *             ring, and the emulation `invariance --ranks` uses).
 *             Reduce-scatter: piece c is rank c's output.
 *   chain     one chain for every element: ((x[W-1] + x[W-2]) + ...) + x[0]
 *             (a tree inside one node is a chain ending at its root).
 *   pairwise  (x0 + x1) + (x2 + x3) ...
 *   rank      ((x0 + x1) + x2) + ...
 * Each partial sum is rounded to the dtype (wide: kept in fp32, the result
 * rounded once).  avg multiplies every input by 1/W rounded to the dtype
 * first, as NCCL's PreMulSum does for floating types.  All-gather copies.
 *
 * A configuration maps to a model: Ring and default -> ring, Tree ->
 * chain, Pairwise and Rank -> theirs; the protocol sets the chunk (LL 4 KiB,
 * LL128 32 KiB, Simple and default 128 KiB, in bytes of the dtype); the
 * channel count nch (default 1).  These chunk sizes are the emulation's
 * choice, not NCCL's: NCCL's own cut is what the nccl engine infers. */
#ifndef BP_COLL_EMU_H
#define BP_COLL_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "coll_order.h"

typedef enum { BP_EMU_RING, BP_EMU_CHAIN, BP_EMU_PAIRWISE, BP_EMU_RANK } bp_coll_emu_algo_t;

typedef struct {
    bp_coll_emu_algo_t algo;
    int nch;          /* ring: channels (>= 1) */
    uint64_t chunk;   /* ring: elements per piece; 0: W equal parts */
    bool wide;        /* partial sums kept in fp32 */
} bp_coll_emu_t;

/* The model for a configuration (desc: one line); BP_EUNAVAIL naming what
 * the emulation does not model (NVLS, CollNet, PAT). */
bp_status bp_coll_emu_for(const bp_coll_cfg_t *c, bp_dtype_t dt, bp_coll_emu_t *m,
                          char *desc, size_t n, bp_error_t *err);
/* Which of the model's W orders element i of n gets (the ring's piece;
 * 0 for the others). */
int bp_coll_emu_piece(const bp_coll_emu_t *m, bp_coll_kind_t kind, int world, uint64_t i,
                      uint64_t n);
/* The order of piece p. */
void bp_coll_emu_tree(const bp_coll_emu_t *m, int world, int piece, bp_coll_tree_t *t);
/* The collective on the CPU over n elements of the message (kind as
 * coll.h counts them): in[r] is rank r's input (the all-gather's: its
 * n / W elements), out the whole result. */
bp_status bp_coll_emu_run(const bp_coll_emu_t *m, bp_coll_kind_t kind, bp_coll_redop_t op,
                          bp_dtype_t dt, int world, const void *const *in, uint64_t n,
                          void *out, bp_error_t *err);

#endif
