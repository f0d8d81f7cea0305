/* The ledger modes of diff and explain: what those commands run when an
 * operand is an op ledger (cmd_diff_ledger.c, cmd_explain_ledger.c). */
#ifndef BP_CMD_LEDGER_H
#define BP_CMD_LEDGER_H

#include "cli.h"
#include "rep.h"

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
