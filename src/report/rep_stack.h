/* Writers of the stack's result (bp_stack_result_t): the text report, its
 * JSON object (added under "stack" to the common JSON report) and the SVG
 * plot of drift against depth.  Each returns 0, or 2 when f cannot be
 * written. */
#ifndef BP_REP_STACK_H
#define BP_REP_STACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "stack.h"

int bp_rep_stack_text(FILE *f, const bp_stack_result_t *r, bool color);
/* The "stack" object of the JSON report (caller owns it); NULL when out of
 * memory. */
json_t *bp_rep_stack_json(const bp_stack_result_t *r);
/* A self-contained SVG: one line per metric over the layers, log scale. */
int bp_rep_svg(FILE *f, const bp_stack_result_t *r);

#endif
