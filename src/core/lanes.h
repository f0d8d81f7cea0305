/* Lanes: one or more threads per backend, each lane working through the
 * same ordered list of jobs, while the calling thread consumes job after
 * job once every lane has finished it.  A lane never starts a job more
 * than `ahead` jobs beyond the one being consumed, so the work held at
 * once stays bounded.  Once a lane's begin or a job of it fails, the lane
 * starts no later job (in job order; earlier ones still run); the
 * consumer learns which lane failed when it waits for that job.  Results
 * never depend on the timing: the consumer takes the jobs in order,
 * whichever thread ran them and when.
 *
 * How far ahead: a lane may start job j when j is the job being consumed,
 * or when j is less than `ahead` jobs beyond it and the costs of the jobs
 * from the one being consumed to j add up to at most `budget` (cost NULL:
 * the count alone decides).
 *
 * Several threads on a lane (bp_lanes_start_wide): the jobs fall into
 * groups of consecutive jobs (job j with joined[j] belongs to the group of
 * job j - 1); a thread takes the lane's next group, in order, and runs its
 * jobs in order, so that a group's jobs run one after the other on one
 * thread while other groups run beside them.  With costly_first
 * (bp_lane_spec_t) a thread takes instead, of the groups whose jobs may
 * all start now, the one of the largest cost (the first of equals), and
 * the next group in order only when none may: the longest groups start
 * first, where they end last in order (the oracle's RoPE caches).
 *
 * Late jobs (bp_lane_spec_t.late, a lane of one thread): the lane runs its
 * other jobs first, in order, and a late job only when none of those is
 * left or may start now (the bounds above), the late ones among
 * themselves in order.  The consumer still takes the jobs in order; it
 * waits for a late job while the other lanes run ahead within the
 * bounds.  For work whose first run is slow while something beside the
 * lane prepares it (the CUDA backend's GEMMs while its warm-up loads
 * cuBLAS's kernels). */
#ifndef BP_LANES_H
#define BP_LANES_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct bp_lanes bp_lanes_t;

typedef struct {
    /* Runs once per lane, on one of its threads, before any of its jobs
     * (NULL: none). */
    bp_status (*begin)(void *ctx, int lane);
    /* Job j on lane; nonzero: the lane starts no job after j. */
    bp_status (*job)(void *ctx, int lane, size_t j);
    /* Runs on each of the lane's threads before it exits (NULL: none). */
    void (*end)(void *ctx, int lane);
    void *ctx;
} bp_lane_fns_t;

/* A lane of bp_lanes_start_wide. */
typedef struct {
    int width;        /* threads (at least 1) */
    const bool *late; /* njobs entries or NULL (none), read until
                         bp_lanes_finish; a lane of several threads
                         ignores it */
    bool costly_first; /* a lane of several threads, with cost */
} bp_lane_spec_t;

/* Starts nlanes lanes of one thread each over njobs jobs (cost: njobs
 * entries or NULL, read here).  NULL with err set when a thread cannot be started
 * (those already started are stopped and joined). */
bp_lanes_t *bp_lanes_start(int nlanes, size_t njobs, size_t ahead, const size_t *cost,
                           size_t budget, const bp_lane_fns_t *fns, bp_error_t *err);
/* The same with lane k as spec[k] says (NULL: one thread, no late jobs)
 * and the groups of joined (njobs entries, read until bp_lanes_finish;
 * NULL: every job a group of its own).  A lane whose first thread starts
 * runs with the threads that could be started. */
bp_lanes_t *bp_lanes_start_wide(int nlanes, const bp_lane_spec_t *spec, const bool *joined,
                                size_t njobs, size_t ahead, const size_t *cost,
                                size_t budget, const bp_lane_fns_t *fns, bp_error_t *err);
/* Waits until every lane's begin has returned; the first lane (in lane
 * order) whose begin failed, or -1. */
int bp_lanes_wait_begun(bp_lanes_t *l);
/* Waits until every lane has finished job j or will not run it; the
 * first lane (in lane order) that did not finish it, or -1. */
int bp_lanes_wait(bp_lanes_t *l, size_t j);
/* The consumer is done with job j: lanes may go up to j + ahead. */
void bp_lanes_release(bp_lanes_t *l, size_t j);
/* Stops the lanes after their current jobs, joins and frees them. */
void bp_lanes_finish(bp_lanes_t *l);

#endif
