/* A ledger diff (ledger_diff.h) rendered: text here; JSON through the
 * report (diff's "ledger" member, ledger_json.c). */
#ifndef BP_REP_LEDGER_H
#define BP_REP_LEDGER_H

#include <stdio.h>

#include "ledger_diff.h"
#include "rep.h"

/* Writes the text report; returns 0 (2 if f cannot be written). */
int bp_rep_ledger_text(FILE *f, const bp_ledger_diff_t *d, const bp_rep_opts_t *o);
/* "1 introduced, 5 inherited; first at B#46 aten::_to_copy; 6 of 14
 * outputs differ": a module in a line. */
void bp_rep_ledger_module_summary(const bp_ledger_diff_t *d, const bp_ledger_module_t *md,
                                  char *out, size_t n);
/* JUnit: one testcase per module, failing where an op of it introduced,
 * inherited or absorbed a difference (its ops listed in the failure). */
int bp_rep_ledger_junit(FILE *f, const bp_ledger_diff_t *d);
/* Markdown for a ticket: verdict, the two sides, the first introduced op
 * in full, at most first ops of each kind, the modules (at most 200 rows:
 * it stays under GitHub's 65536 characters). */
int bp_rep_ledger_markdown(FILE *f, const bp_ledger_diff_t *d, size_t first);

#endif
