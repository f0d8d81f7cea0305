/* Report writers, one per format (rep_*.c).  Each renders a bp_report_t and
 * returns 0, or 2 when the destination cannot be written. */
#ifndef BP_REP_H
#define BP_REP_H

#include <stdbool.h>
#include <stdio.h>

#include "report.h"

typedef struct bp_rep_opts {
    bool quiet;   /* text: only failures and the summary */
    bool color;
    size_t first; /* mismatches shown per comparison */
} bp_rep_opts_t;

int bp_rep_text(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o);

#endif
