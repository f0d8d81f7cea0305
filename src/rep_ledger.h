/* A ledger diff (ledger_diff.h) rendered: text here; JSON through the
 * report (diff's "ledger" member, ledger_json.c). */
#ifndef BP_REP_LEDGER_H
#define BP_REP_LEDGER_H

#include <stdio.h>

#include "ledger_diff.h"
#include "rep.h"

/* Writes the text report; returns 0 (2 if f cannot be written). */
int bp_rep_ledger_text(FILE *f, const bp_ledger_diff_t *d, const bp_rep_opts_t *o);

/* bitprobe diff A.ledger B.ledger (cmd_diff_ledger.c): what diff runs when
 * either operand is a ledger; t holds diff's report options, first its
 * --first.  Returns the exit status. */
int cmd_diff_ledger(const char *pa, const char *pb, const bp_rep_targets_t *t, size_t first,
                    int argc, char **argv);

#endif
