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
int bp_rep_json(FILE *f, const bp_report_t *rep);
/* Writes rep with fn to path ("-" is stdout); 2 with a message when the
 * file cannot be written. */
int bp_rep_write(const char *path, int (*fn)(FILE *, const bp_report_t *),
                 const bp_report_t *rep);
/* The JSON document bp_rep_json writes (caller owns it). */
json_t *bp_rep_json_build(const bp_report_t *rep);

#endif
