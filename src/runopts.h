/* Options shared by run and bless, and the pieces of run that are not the
 * main loop: golden comparison and report output. */
#ifndef BP_RUNOPTS_H
#define BP_RUNOPTS_H

#include <stdbool.h>

#include "backend.h"
#include "compare.h"
#include "probe.h"
#include "report.h"

typedef struct bp_run_opts {
    char **names;  /* probes named on the command line */
    int nnames;
    const char *probes_dir, *golden_dir, *save_dir;
    const char *devices;
    uint32_t dtypes;   /* mask of allowed run dtypes */
    bp_backend_opts_t be;
    bp_cmp_opts_t cmp;
    bool agree;        /* cross-backend differences beyond policy are drift */
    bool golden;       /* compare with goldens (default on) */
    bool missing_skip; /* a missing golden is a note, not an error */
    bool dry_run;      /* bless: print only */
    int repeat;
    const char *json, *junit, *markdown;
    bool github;
} bp_run_opts_t;

/* Parses argv for cmd ("run" or "bless").  Returns -1 to go on, or the exit
 * status to return at once (help printed, usage error). */
int bp_run_opts_parse(const char *cmd, int argc, char **argv, bp_run_opts_t *o);
void bp_run_opts_free(bp_run_opts_t *o);

/* Compares output oi of p (dtype dt) on each backend with its golden. */
int bp_run_golden(const bp_run_opts_t *o, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                  bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                  bp_report_t *rep);
/* Writes the report in every requested format; returns the exit status. */
int bp_run_report(const bp_run_opts_t *o, bp_backend_t *const *bes, int n,
                  bp_report_t *rep);

#endif
