/* Comparing paired tensors at memory speed (what diff runs): the data
 * streams through the comparison engine in windows (tread.h), never whole,
 * with the work spread over threads, so that memory stays flat in the
 * files' size and the figures are exactly bp_compare's.
 *
 * Work is cut into jobs:
 *  - a pair whose sides are both mapped is cut into segments of
 *    BP_DIFF_SEGMENT bytes (fewer, longer ones beyond
 *    BP_DIFF_MAX_SEGMENTS), compared apart and merged in order
 *    (bp_cmp_merge), so one large tensor uses every thread too.  The
 *    threads take them in turn and so read each file at one place, a few
 *    MiB apart: the disk sees one stream and reads ahead of it (segments
 *    of 64 MiB had each thread read a place of its own: a cold 1 GiB pair
 *    took 1.53 s against 1.09 s, best of 15 interleaved runs here);
 *  - a stream (gzip file, deflated .npz member) is read once, front to
 *    back, by one job: the pairs whose side it holds are compared as its
 *    bytes pass, its other tensors are read through (their CRCs checked)
 *    and its end is checked as bp_st_read checks it;
 *  - a mapped tensor that carries a CRC and is compared with nothing is
 *    read for its CRC.
 * CRCs (bitprobe's files carry one per tensor) are checked on the bytes
 * compared; a mismatch is an error in bp_st_read's words.  The first
 * error stops the work and is returned. */
#ifndef BP_DIFFRUN_H
#define BP_DIFFRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "tpair.h"
#include "tset.h"

#define BP_DIFF_SEGMENT ((uint64_t)8 << 20)
/* A pair's segments at most (their states are held until merged: some
 * 700 bytes each) */
#define BP_DIFF_MAX_SEGMENTS 1024
/* The mapped windows of all threads together (tread.h): 8 MiB each up to
 * 4 threads, less beyond */
#define BP_DIFF_MAP_BUDGET ((size_t)64 << 20)

typedef struct {
    const bp_policy_t *pol;
    const bp_cmp_opts_t *co;
    int threads;     /* 0: one per online CPU (at most 16) */
    uint64_t segment; /* bytes per segment; 0: BP_DIFF_SEGMENT */
    bool in_memory;  /* each tensor read whole, then bp_compare: the path
                      * before streaming, kept to test that both agree */
} bp_drun_opts_t;

/* Compares the BP_PAIR_COMPARE pairs of p; out[i] receives pair i's
 * figures (others zeroed).  On failure out holds nothing. */
bp_status bp_diff_run(const bp_tset_t *a, const bp_tset_t *b, const bp_pairs_t *p,
                      const bp_drun_opts_t *o, bp_cmp_t *out, bp_error_t *err);

#endif
