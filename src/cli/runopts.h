/* The options run and bless share (probes, goldens, devices, dtypes,
 * parameters), as one group of option-table entries (opt.h), and the
 * hints that repeat them. */
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
    int jobs;          /* run --jobs: probes at once on a host backend (0: by the cores) */
    bool timing;       /* run --timing */
    bp_rep_targets_t out; /* run's reports */
    bp_param_arg_t params[BP_RUN_MAX_PARAMS]; /* --param NAME=VALUE */
    char param_names[BP_RUN_MAX_PARAMS][BP_CLI_PARAM_NAME];
    size_t nparams;
} bp_run_opts_t;

/* The shared options as entries of an option table (opt.h; the caller
 * includes it), applied to o (a bp_run_opts_t *): --device, --require,
 * --dtype, --probes, --golden, --param (repeatable).  The command says
 * what --device, --require, --dtype and --param do for it (their usage
 * lines); --probes and --golden read the same everywhere.  The backend
 * group (BP_OPT_BACKEND_, cli.h) goes where the command lists it. */
#define BP_RUN_PROBES_HELP                                                               \
    "  --probes DIR      read probes from DIR (default: ./probes, then the installed set)\n"
#define BP_RUN_GOLDEN_HELP                                                               \
    "  --golden DIR      goldens under DIR (default: beside the probes: beside a probe\n"   \
    "                    file's directory, or --probes DIR, ./probes, the installed\n"     \
    "                    set; beside D is D/../golden when D is named probes, else\n"      \
    "                    D/golden; nothing under the installation is ever written)\n"
#define BP_OPT_RUN_(o, hdevice, hrequire, hdtype, hparam)                                \
    BP_OPT_STRING_("device", 0, &(o)->dev.list, hdevice),                                \
    BP_OPT_STRING_("require", 0, &(o)->dev.require, hrequire),                           \
    BP_OPT_DTYPES_(&(o)->dtypes, hdtype),                                                \
    BP_OPT_STRING_("probes", 0, &(o)->probes_dir, BP_RUN_PROBES_HELP),                   \
    BP_OPT_STRING_("golden", 0, &(o)->golden_dir, BP_RUN_GOLDEN_HELP),                   \
    {"param", 0, BP_OPT_CALL, o, 0, 0, bp_run_param_entry, 0, true, hparam}
struct bp_opt;
int bp_run_param_entry(const char *cmd, const struct bp_opt *e, const char *arg, void *ctx);

/* The defaults: every backend here (auto), every dtype, goldens on. */
void bp_run_opts_init(bp_run_opts_t *o);

/* A command line for the user to try on probes[nprobes], with the device
 * list, the dtypes (a mask; 0: none named) and their --probes, --golden,
 * --param and the backend options that make the backends' keys (--cpu-math,
 * --cpu-isa, --gpu) as given: "bitprobe bless seed-div --device cpu
 * --cpu-math libm --probes p --golden g". */
void bp_run_hint(const bp_run_opts_t *o, const char *cmd, const char *const *probes,
                 size_t nprobes, const char *device, uint32_t dtypes, char *out, size_t n);

#endif
