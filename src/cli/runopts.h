/* The options run and bless share (probes, goldens, devices, dtypes and
 * the backend group), as one getopt group like rep.h's report options,
 * and the hints that repeat them. */
#ifndef BP_RUNOPTS_H
#define BP_RUNOPTS_H

#include <stdbool.h>

#include "cli.h"
#include "compare.h"
#include "probe.h"
#include "rep.h"

#define BP_RUN_MAX_PARAMS 32

typedef struct bp_run_opts {
    char **names;  /* probes named on the command line */
    int nnames;
    const char *probes_dir, *golden_dir; /* as given (NULL: the defaults) */
    const char *save_dir;
    const char *save_stage; /* where the bundle is written until complete */
    bp_cli_devices_t dev;
    uint32_t dtypes;   /* mask of allowed run dtypes */
    bp_cmp_opts_t cmp;
    bool agree;        /* cross-backend differences beyond policy are drift */
    bool golden;       /* compare with goldens (default on) */
    bool missing_skip; /* a missing golden is informational, not an error */
    bool dry_run;      /* bless: print only */
    bool intermediates; /* --save keeps every buffer, not only outputs */
    int repeat;
    bool timing;       /* run --timing */
    bp_rep_targets_t out; /* run's reports */
    bp_param_arg_t params[BP_RUN_MAX_PARAMS]; /* --param NAME=VALUE */
    char param_names[BP_RUN_MAX_PARAMS][BP_CLI_PARAM_NAME];
    size_t nparams;
} bp_run_opts_t;

/* The shared options as getopt_long entries (the caller includes
 * <getopt.h>): --probes, --golden, --device, --dtype, --require, --param
 * (repeatable) and the
 * backend group (cli.h). */
enum { BP_RUN_O_PROBES = 0x280, BP_RUN_O_GOLDEN, BP_RUN_O_DEVICE, BP_RUN_O_DTYPE,
       BP_RUN_O_REQUIRE, BP_RUN_O_PARAM };
#define BP_RUN_LONG_OPTIONS                                                              \
    {"probes", required_argument, 0, BP_RUN_O_PROBES},                                   \
    {"golden", required_argument, 0, BP_RUN_O_GOLDEN},                                   \
    {"device", required_argument, 0, BP_RUN_O_DEVICE},                                   \
    {"dtype", required_argument, 0, BP_RUN_O_DTYPE},                                     \
    {"require", required_argument, 0, BP_RUN_O_REQUIRE},                                 \
    {"param", required_argument, 0, BP_RUN_O_PARAM},                                     \
    BP_BACKEND_LONG_OPTIONS

/* The defaults: every backend here (auto), every dtype, goldens on. */
void bp_run_opts_init(bp_run_opts_t *o);
/* Applies getopt_long's option c when it is one of the group's: -1 when it
 * is not, 0 when applied, else the usage error's exit status. */
int bp_run_opts_option(const char *cmd, bp_run_opts_t *o, int c, const char *arg);

/* A command line for the user to try on probes[nprobes], with the device
 * list, the dtypes (a mask; 0: none named) and their --probes, --golden,
 * --param and the backend options that make the backends' keys (--cpu-math,
 * --cpu-isa, --gpu) as given: "bitprobe bless seed-div --device cpu
 * --cpu-math libm --probes p --golden g". */
void bp_run_hint(const bp_run_opts_t *o, const char *cmd, const char *const *probes,
                 size_t nprobes, const char *device, uint32_t dtypes, char *out, size_t n);

#endif
