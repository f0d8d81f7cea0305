/* run --gpu all: the GPUs of one run compared with each other, output by
 * output (consensus.h): when they disagree, the majority and each GPU
 * outside it are named, each odd one's difference from the majority is a
 * result (drift when the GPUs are of one kind, the same golden key: such
 * GPUs must agree bit for bit), and a note says who agreed with whom.
 * The GPUs are the backends opened as "cuda:K" (backend.h). */
#ifndef BP_RUN_CONSENSUS_H
#define BP_RUN_CONSENSUS_H

#include "backend.h"
#include "compare.h"
#include "probe.h"
#include "report.h"

typedef struct {
    size_t outputs;    /* outputs the GPUs were compared on */
    size_t disagree;   /* outputs with more than one group */
    size_t split;      /* ... of which without a majority */
    size_t odd[32];    /* per backend slot: outputs where it was odd */
} bp_run_cons_t;

/* Output oi of p in dtype dt, bufs[k] holding backend k's buffers;
 * nothing to do with fewer than two GPU backends. */
bp_status bp_run_consensus(bp_run_cons_t *t, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                           bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                           const bp_cmp_opts_t *co, bp_report_t *rep, bp_error_t *err);
/* The run's closing note: how many outputs all GPUs agreed on, and who
 * was odd how often. */
void bp_run_consensus_note(const bp_run_cons_t *t, bp_backend_t *const *bes, int n,
                           bp_report_t *rep);

#endif
