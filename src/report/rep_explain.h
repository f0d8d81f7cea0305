/* explain's text rendering (rep_explain.c): the per-op table, the verdicts
 * and the attribution of the first differing elements of each output. */
#ifndef BP_REP_EXPLAIN_H
#define BP_REP_EXPLAIN_H

#include <stdio.h>

#include "explain.h"

/* Returns 0, or 2 when f cannot be written. */
int bp_rep_explain_text(FILE *f, const bp_explain_t *x);

#endif
