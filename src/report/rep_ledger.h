/* A ledger diff (ledger_diff.h) rendered: text here; JSON through the
 * report (diff's "ledger" member, ledger_json.c). */
#ifndef BP_REP_LEDGER_H
#define BP_REP_LEDGER_H

#include <stdio.h>

#include "cli.h"
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

/* bitprobe diff A.ledger B.ledger (cmd_diff_ledger.c): what diff runs when
 * either operand is a ledger; t holds diff's report options, first its
 * --first.  Returns the exit status. */
int cmd_diff_ledger(const char *pa, const char *pb, const bp_rep_targets_t *t, size_t first,
                    int argc, char **argv);

/* bitprobe explain A.ledger B.ledger (cmd_explain_ledger.c): the op that
 * introduced the difference, or the op op_id names, as a probe written
 * under out_dir and run on the oracle and dev's backends. */
int cmd_explain_ledger(const char *pa, const char *pb, const char *op_id, const char *out_dir,
                       const bp_cli_devices_t *dev, size_t first, const char *json);

#endif
