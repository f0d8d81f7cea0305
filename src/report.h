/* The report model: what a run, diff, stack or explain found, independent of
 * how it is written.  Commands fill a bp_report_t; one rep_*.c per format
 * renders it (text, JSON, JUnit, Markdown, GitHub).  Results are kept in
 * the order they were added, which groups them by probe, output and dtype. */
#ifndef BP_REPORT_H
#define BP_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "dtype.h"
#include "policy.h"

/* Outputs up to this many elements also have their values reported. */
#define BP_REPORT_SMALL 16

typedef enum {
    BP_RES_CROSS,  /* backend b against the reference backend a */
    BP_RES_GOLDEN, /* backend b against its blessed golden a */
    BP_RES_REPEAT, /* run k of a backend against its first run */
    BP_RES_DIFF    /* tensor b of one file against tensor a of another */
} bp_res_kind_t;

typedef struct bp_result {
    char *probe;      /* probe name, or the tensor name for diff */
    char *file;       /* probe file (for annotations) or NULL */
    int line;         /* line of the output in that file, or 0 */
    char *output;
    bp_dtype_t dtype;
    bp_res_kind_t kind;
    char *a, *b;      /* side labels: "cpu", "golden cpu-sleef", a path */
    bp_policy_t policy;
    bool compared;    /* false: not compared, see note */
    bool counts;      /* whether a failure here is drift (exit 1) */
    char *note;
    bp_cmp_t cmp;
} bp_result_t;

/* The values of a small output on one side, for display. */
typedef struct bp_values {
    char *probe, *output, *side;
    bp_dtype_t dtype;
    size_t n;
    uint64_t bits[BP_REPORT_SMALL];
} bp_values_t;

typedef struct bp_report {
    char *command;  /* how to reproduce: the command line, shell-quoted */
    json_t *env;    /* host fingerprint; backends' under "backends" */
    bp_result_t *r;
    size_t n, cap;
    bp_values_t *v;
    size_t nv, capv;
    char **notes;   /* e.g. "cuda skipped: no CUDA device" */
    size_t nnotes;
    json_t *explain; /* explain's result (explain.h), or NULL; owned */
    struct bp_timing *timing; /* run --timing (timing.h), or NULL; not owned */
    json_t *extra;  /* a read report's top-level members the model does not
                     * hold (run's "timing", stack's "stack"), written back
                     * as they were (report_read.h), or NULL; owned */
} bp_report_t;

void bp_report_init(bp_report_t *rep, int argc, char **argv);
void bp_report_free(bp_report_t *rep);
/* Appends a result (strings copied; cmp moved in: the caller must not free
 * it).  Returns the stored result, or NULL when out of memory. */
bp_result_t *bp_report_add(bp_report_t *rep, const bp_result_t *r);
bool bp_report_add_values(bp_report_t *rep, const char *probe, const char *output,
                          const char *side, bp_dtype_t dt, const void *data, size_t n);
bool bp_report_note(bp_report_t *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Results that count and did not pass. */
size_t bp_report_failures(const bp_report_t *rep);
const char *bp_res_kind_name(bp_res_kind_t k);
/* The multi-dimensional index of flat position `flat` in a row-major
 * shape, as a JSON array of integers (new reference). */
json_t *bp_report_index_json(int ndim, const int64_t *shape, size_t flat);
/* "seed-div y fp32: cuda vs cpu" (diff: "cos bf16: B vs A"). */
void bp_result_title(const bp_result_t *r, char *out, size_t n);
/* One line for CI messages: "329332 of 524288 elements differ (62.82%),
 * max 32512 ulp at [2235, 3], max abs 2 at [2235, 3], max rel 204099 at
 * [3416, 30]; 329332 beyond policy exact", "bit-identical (10 elements)",
 * or "not compared: <note>". */
void bp_result_summary(const bp_result_t *r, char *out, size_t n);
/* Mismatched fraction (0 when nothing was compared), for ranking. */
double bp_result_fraction(const bp_result_t *r);

#endif
