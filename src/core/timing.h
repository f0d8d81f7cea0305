/* Where a run's time goes (run --timing): opening each backend (a device's
 * context start on its own), each probe's run per dtype and backend, golden
 * loads, comparisons and reports, with the process's CPU time next to the
 * wall time, and the elements each backend computed.  Wall time is
 * CLOCK_MONOTONIC.  The front end fills it; the JSON report carries it
 * under "timing" (bp_timing_json) and run prints it on stderr. */
#ifndef BP_TIMING_H
#define BP_TIMING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define BP_TIMING_MAX_BACKENDS 8

typedef struct {
    char name[16];
    bool opened;           /* false: open failed (skipped by auto) */
    double open_s;         /* bp_backend_open, all of it */
    double init_s;         /* device driver start within open; 0: none */
    double ctx_s;          /* device context start within open; 0: none */
    double run_s;          /* bp_backend_run, every probe and dtype */
    double golden_load_s;  /* reading and inflating its goldens */
    double golden_cmp_s;   /* comparing its outputs with them */
    uint64_t elems;        /* output elements computed */
    uint64_t reused;       /* output elements taken from the memo */
} bp_timing_be_t;

typedef struct {
    char *probe;
    bp_dtype_t dtype;
    int be;                /* index into bp_timing_t.be */
    size_t seq;            /* its place among the runs (run's job) */
    size_t ins;            /* the order it was recorded in */
    double s;
    uint64_t elems, reused;
    uint64_t bytes;        /* the run's buffers, all ops */
} bp_timing_run_t;

typedef struct bp_timing {
    double t0;             /* monotonic start */
    double user0, sys0;    /* CPU time at start */
    double load_s;         /* reading the probes */
    bp_timing_be_t be[BP_TIMING_MAX_BACKENDS];
    int nbe;
    bp_timing_run_t *runs;
    size_t nruns, cap;
    double cross_cmp_s;    /* backend against backend */
    uint64_t held_peak;    /* most result bytes computed and not yet compared */
    double report_s;       /* writing the reports; < 0 until measured */
    double total_s;        /* wall time since t0 (bp_timing_stop) */
    double user_s, sys_s;  /* CPU time since t0, all threads */
} bp_timing_t;

/* Seconds on CLOCK_MONOTONIC. */
double bp_timing_now(void);
/* CPU time of the process so far (every thread), user and system. */
void bp_timing_cpu(double *user, double *sys);

void bp_timing_init(bp_timing_t *t);
void bp_timing_free(bp_timing_t *t);
/* The index of backend name, added on first use (-1: table full). */
int bp_timing_backend(bp_timing_t *t, const char *name);
/* Records one run of probe in dt on backend be, whose place among the runs
 * is seq: the runs are listed by seq, then backend, then the order they
 * were recorded in, whatever order they finished in (after
 * bp_timing_stop). */
bool bp_timing_run(bp_timing_t *t, const char *probe, bp_dtype_t dt, int be, size_t seq,
                   double s, uint64_t elems, uint64_t reused, uint64_t bytes);
/* Sets total_s, user_s and sys_s to the time since bp_timing_init; puts
 * the runs in their order. */
void bp_timing_stop(bp_timing_t *t);
/* {total, user, sys, probes_load, cross_compare, held_peak_bytes, report?,
 *  backends[{name, opened, open, driver_init, context_start, run, golden_load,
 *            golden_compare, elements, reused, elements_per_second}],
 *  runs[{probe, dtype, backend, seconds, elements, reused, bytes}]};
 * times in seconds. */
json_t *bp_timing_json(const bp_timing_t *t);

#endif
