/* Reuse of op results across the dtypes of one probe.
 *
 * A probe runs once per dtype, and much of it does not depend on the dtype:
 * rope-llama2 computes its cos/sin caches in fp32 whatever dtype it casts
 * them to at the end.  The memo keeps the buffers of a backend's last run
 * of a probe; in the next run of that probe in another dtype, op i takes
 * the kept result instead of computing it when (1) its inferred dtype and
 * shape equal the kept result's and (2) every buffer it reads is the very
 * buffer of the kept run (itself reused) or bitwise equal to it.  An op's
 * result is a function of the op (the same: same probe, same hash, same
 * index), its operands and its output dtype and shape, so for a
 * deterministic backend the reused bits are the bits the op would compute.
 * Runs in the dtype of the kept run never reuse anything (so --repeat
 * re-executes every op).  bp_backend_run drives it; see backend.h. */
#ifndef BP_MEMO_H
#define BP_MEMO_H

#include <stdbool.h>

#include "buf.h"
#include "error.h"
#include "op.h"
#include "probe.h"

typedef struct bp_memo bp_memo_t;

bp_memo_t *bp_memo_new(void);
void bp_memo_free(bp_memo_t *m);

/* A run of p in dt starts: forgets a kept run of another probe.  Returns
 * whether this run may reuse results (a kept run of p in another dtype). */
bool bp_memo_begin(bp_memo_t *m, const bp_probe_t *p, bp_dtype_t dt);

/* The kept result of op i when its dtype and shape are meta's, else NULL. */
const bp_buf_t *bp_memo_match(const bp_memo_t *m, size_t i,
                              const bp_meta_t *meta);

/* The kept result of op i whatever its meta (NULL: none). */
const bp_buf_t *bp_memo_kept(const bp_memo_t *m, size_t i);

/* Same dtype, same shape, same bytes. */
bool bp_memo_same(const bp_buf_t *a, const bp_buf_t *b);

/* The run of p in dt succeeded with host results bufs: keeps them (the
 * reused ones, reused[i], are the kept ones already).  On failure to copy
 * the memo is emptied and the error returned. */
bp_status bp_memo_keep(bp_memo_t *m, const bp_probe_t *p, bp_dtype_t dt,
                       const bp_buf_t *bufs, const bool *reused,
                       bp_error_t *err);

/* Forgets the kept run (a failed run leaves nothing to trust). */
void bp_memo_clear(bp_memo_t *m);

#endif
