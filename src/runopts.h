/* Options shared by run and bless, and the pieces of run that are not the
 * main loop: golden comparison and report output. */
#ifndef BP_RUNOPTS_H
#define BP_RUNOPTS_H

#include <stdbool.h>

#include "backend.h"
#include "compare.h"
#include "probe.h"
#include "report.h"
#include "st.h"

typedef struct bp_run_opts {
    char **names;  /* probes named on the command line */
    int nnames;
    const char *probes_dir, *golden_dir, *save_dir;
    const char *devices;
    const char *gpus;  /* --gpu all or a list: one cuda:K backend per GPU */
    uint32_t dtypes;   /* mask of allowed run dtypes */
    bp_backend_opts_t be;
    bp_cmp_opts_t cmp;
    bool agree;        /* cross-backend differences beyond policy are drift */
    bool golden;       /* compare with goldens (default on) */
    bool missing_skip; /* a missing golden is a note, not an error */
    bool dry_run;      /* bless: print only */
    bool intermediates; /* --save keeps every buffer, not only outputs */
    int repeat;
    bool timing;       /* run --timing */
    const char *json, *junit, *markdown;
    bool github;
} bp_run_opts_t;

/* Parses argv for cmd ("run" or "bless").  Returns -1 to go on, or the exit
 * status to return at once (help printed, usage error). */
int bp_run_opts_parse(const char *cmd, int argc, char **argv, bp_run_opts_t *o);
void bp_run_opts_free(bp_run_opts_t *o);

#define BP_RUN_MAX_BACKENDS 16

/* Opens the backends of --device: explicit names must be available; auto
 * adds every backend that opens here and notes (in rep, when given) those
 * that do not.  Each gets the memo (backend.h) unless BP_NO_MEMO=1; with
 * rep->timing, each open is timed.  Returns the exit status (0: go on). */
int bp_run_open_backends(const char *cmd, const bp_run_opts_t *o, bp_backend_t **bes,
                         int *n, bp_report_t *rep);
/* The backends --device names, without duplicates, for opening one by one
 * with bp_run_open_one (on any thread).  Returns -1 to go on, 0 when the
 * list holds auto (open with bp_run_open_backends), or an exit status after
 * a usage error. */
#define BP_RUN_NAME_MAX 32
int bp_run_backend_names(const char *cmd, const bp_run_opts_t *o,
                         char names[][BP_RUN_NAME_MAX], int *n);
/* Opens backend name as bp_run_open_backends does (timing, memo,
 * behaviour for saved runs).  With a timing record, name must already be
 * in it (bp_timing_backend) when other threads use the record. */
bp_status bp_run_open_one(const char *cmd, const bp_run_opts_t *o, const char *name,
                          struct bp_timing *t, bp_backend_t **out, bp_error_t *err);
/* The probes named (all when none is): unknown names are an error. */
int bp_run_select(const char *cmd, bp_probe_t **all, size_t nall, char **names,
                  int nnames, bp_probe_t ***sel, size_t *nsel);

/* Compares output oi of p (dtype dt) on each backend with its golden. */
int bp_run_golden(const bp_run_opts_t *o, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                  bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                  bp_report_t *rep);
/* Loads backend k's golden of p ahead of bp_run_golden (safe to call from
 * backend k's worker thread while other threads load or compare theirs). */
struct bp_timing;
void bp_run_golden_prepare(const bp_run_opts_t *o, const bp_probe_t *p, int k,
                           const char *key, struct bp_timing *t, const char *be_name);
/* Frees the goldens of p (run is done with it). */
void bp_run_golden_done(const bp_probe_t *p);
/* Frees every golden run kept loaded. */
void bp_run_golden_release(void);
/* --save: writes one probe's container for one backend; appends its
 * relative path to files. */
int bp_run_save_probe(const bp_run_opts_t *o, const bp_probe_t *p, const bp_backend_t *be,
                      bp_st_file_t *f, json_t *files);
/* --save: writes the manifest (report, backends, files). */
int bp_run_save_manifest(const bp_run_opts_t *o, bp_backend_t *const *bes, int n,
                         const bp_report_t *rep, json_t *files);
/* Writes the report in every requested format; returns the exit status. */
int bp_run_report(const bp_run_opts_t *o, bp_backend_t *const *bes, int n,
                  bp_report_t *rep);

#endif
