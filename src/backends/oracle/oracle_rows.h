/* The oracle's reductions along an axis (softmax, log_softmax, mean, var,
 * amax, amin, logsumexp, prod, cumsum) and fused ops (rms_norm,
 * layer_norm, bmm, sdpa): oracle_rows.c says how exact each is. */
#ifndef BP_ORACLE_ROWS_H
#define BP_ORACLE_ROWS_H

#include "backend.h"

bp_status bp_oracle_rows(int threads, const bp_exec_t *x, bp_error_t *err);

#endif
