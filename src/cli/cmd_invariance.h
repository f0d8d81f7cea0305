/* invariance's two halves: cmd_invariance.c (options, the op sweeps, the
 * reports) and cmd_inv_coll.c (collectives: --collective). */
#ifndef BP_CMD_INVARIANCE_H
#define BP_CMD_INVARIANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "inv_report.h"
#include "policy.h"
#include "rep.h"

/* What the command line said for a collective run (NULL: the default). */
typedef struct {
    const char *collective, *bytes, *algo, *proto, *channels, *redop, *ranks, *engine;
    bp_dtype_t dtypes[4];
    int ndtypes;
    int repeat, processes, threads;
    uint64_t seed;
    bp_policy_t policy;
    bool oracle, verbose, digests;
    const char *svg;
    bp_rep_targets_t rep;
} bp_inv_coll_cl_t;

int cmd_invariance_coll(const bp_inv_coll_cl_t *c, int argc, char **argv);

/* cmd_invariance.c: the study's reports as the options ask (text on
 * stdout unless a report takes it), and a fresh process's arguments (this
 * command's, without what writes reports, repeats, spawns or prints, with
 * --digests). */
int bp_inv_reports(const bp_rep_targets_t *t, const char *svg, bool verbose,
                   const bp_inv_study_t *st, int argc, char **argv);
int bp_inv_child_args(int argc, char **argv, char **out, int max);

#endif
