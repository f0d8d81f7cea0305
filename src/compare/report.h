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

/* The JSON report's schema_version: 2 added each result's status and the
 * summary's verdict; 3 counts +0 against -0 as a mismatch of its own class
 * (rep_json.c). */
#define BP_REPORT_SCHEMA 3

/* Outputs up to this many elements also have their values reported. */
#define BP_REPORT_SMALL 16

typedef enum {
    BP_RES_CROSS,  /* backend b against the reference backend a */
    BP_RES_GOLDEN, /* backend b against its blessed golden a */
    BP_RES_REPEAT, /* run k of a backend against its first run */
    BP_RES_DIFF    /* tensor b of one file against tensor a of another */
} bp_res_kind_t;

/* What a result found.  A compared result's status follows from its
 * comparison and policy (bp_result_status); the others are set by the
 * command that adds them, with the reason in the note. */
typedef enum {
    BP_RS_IDENTICAL,       /* compared: bit-identical */
    BP_RS_WITHIN,          /* compared: differs, within the policy */
    BP_RS_DIFFERS,         /* compared: beyond the policy, informational (counts off) */
    BP_RS_DRIFT,           /* compared: beyond the policy, and it counts */
    BP_RS_ONLY_A,          /* a tensor on side a only */
    BP_RS_ONLY_B,          /* a tensor on side b only */
    BP_RS_NOT_COMPARABLE,  /* shapes or dtypes that cannot be compared */
    BP_RS_MISSING_GOLDEN,  /* no golden to compare with */
    BP_RS_SKIPPED_BACKEND, /* the backend did not run here */
    BP_RS_ERROR,           /* the probe failed to load or run */
    BP_RS_COUNT
} bp_res_status_t;

typedef struct bp_result {
    char *probe;      /* probe name, or the tensor name for diff */
    char *file;       /* probe file (for annotations) or NULL */
    int line;         /* line of the output in that file, or 0 */
    char *output;
    bp_dtype_t dtype;
    char *dtype_as;   /* a tensor of a dtype bitprobe does not read (diff):
                       * the dtype as its file spells it, shown instead of
                       * dtype; else NULL */
    bool in_run;      /* an output of a probe's run (run; diff of saved
                       * runs): run_dtype is the run's dtype ($dtype), which
                       * the output's own need not be (a sum kept in fp32 in
                       * the bf16 run) */
    bp_dtype_t run_dtype;
    bp_res_kind_t kind;
    char *a, *b;      /* side labels: "cpu", "golden cpu-sleef", a path */
    bp_policy_t policy;
    bool compared;    /* false: not compared, see status and note */
    bool counts;      /* whether this result can fail the verdict: drift,
                       * a one-sided or not comparable tensor (exit 1); a
                       * missing golden or a skipped backend (exit 2).
                       * Off: informational.  Errors always count. */
    bp_res_status_t status; /* of a result that was not compared */
    char *note;
    bp_cmp_t cmp;
} bp_result_t;

/* The values of a small output on one side, for display. */
typedef struct bp_values {
    char *probe, *output, *side;
    bp_dtype_t dtype;
    bool in_run;      /* as bp_result_t's */
    bp_dtype_t run_dtype;
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
    char **notes;   /* e.g. "seed-div: not run (its dtypes are not among --dtype)" */
    size_t nnotes;
    char **hints;   /* what to do next, each once: "bless the missing goldens
                     * with 'bitprobe bless seed-div --device cpu'" */
    size_t nhints;
    char *why_empty; /* why nothing was compared ("no probes matched"), or
                      * NULL to let bp_report_tally say it; owned */
    bool empty_ok;   /* comparing nothing is the point (run --save on one
                      * backend without goldens: the bundle is for diff) */
    json_t *explain; /* explain's result (explain.h), or NULL; owned */
    struct bp_timing *timing; /* run --timing (timing.h), or NULL; not owned */
    json_t *extra;  /* a read report's top-level members the model does not
                     * hold (run's "timing", stack's "stack"), written back
                     * as they were (report_read.h), or NULL; owned */
} bp_report_t;

/* rep->command is "bitprobe" and argv, each a shell word, absolute paths
 * under the project relative to it (bp_report_rel_path). */
void bp_report_init(bp_report_t *rep, int argc, char **argv);
/* An absolute path under the project (the directory bitprobe runs in, or
 * $GITHUB_WORKSPACE when set) relative to it, in out; any other path as
 * it is.  Returns the path to show. */
const char *bp_report_rel_path(const char *path, char *out, size_t n);
/* arg as one POSIX shell word ('...' when it needs quoting) into out (n
 * bytes, cut when short); returns its length. */
size_t bp_report_shell_word(const char *arg, char *out, size_t n);
void bp_report_free(bp_report_t *rep);
/* Appends a result (strings copied; cmp moved in: the caller must not free
 * it).  Returns the stored result, or NULL when out of memory. */
bp_result_t *bp_report_add(bp_report_t *rep, const bp_result_t *r);
/* The values of an output on one side (in_run, run_dt: as bp_result_t's). */
bool bp_report_add_values(bp_report_t *rep, const char *probe, const char *output,
                          const char *side, bp_dtype_t dt, bool in_run, bp_dtype_t run_dt,
                          const void *data, size_t n);
bool bp_report_note(bp_report_t *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Adds a hint (copied) unless the report holds it already. */
bool bp_report_hint(bp_report_t *rep, const char *hint);
/* Sets why_empty (copied) and empty_ok. */
bool bp_report_why_empty(bp_report_t *rep, const char *why, bool ok);

/* The status of r (derived from the comparison when r was compared). */
bp_res_status_t bp_result_status(const bp_result_t *r);
/* What r does to the verdict: 0 nothing, 1 it fails it (drift), 2 it is
 * an error (trouble). */
int bp_result_outcome(const bp_result_t *r);
/* Status names: "identical", "within_policy", "differs", "drift",
 * "only_in_a", "only_in_b", "not_comparable", "missing_golden",
 * "skipped_backend", "error" (JSON), and as people read them ("within
 * policy", "DRIFT", "only in a", ...). */
const char *bp_res_status_name(bp_res_status_t s);
const char *bp_res_status_label(bp_res_status_t s);
bool bp_res_status_parse(const char *name, bp_res_status_t *out);

/* The one count of a report that every format renders, and its verdict,
 * which is the exit status of the command that made the report:
 *   2 (error)  an error result, a missing golden or skipped backend that
 *              counts, or nothing compared at all unless the report says
 *              that is fine (empty_ok); why_empty then says why: the
 *              command's reason, or "no tensor in common" (one-sided
 *              tensors on both sides), "one-sided", "not comparable";
 *   1 (drift)  a result that fails: drift, a one-sided or not comparable
 *              tensor;
 *   0 (passed) otherwise. */
typedef struct bp_tally {
    size_t n[BP_RS_COUNT]; /* results per status */
    size_t results;
    size_t compared;       /* identical + within + differs + drift */
    size_t failed;         /* results with outcome 1 */
    size_t errors;         /* results with outcome 2 */
    size_t skipped;        /* not compared, and informational */
    size_t zero_signs_excused; /* elements excused, over the compared results: */
    size_t nan_payloads_excused; /* +0 against -0, NaNs of other payloads */
    int exit;              /* 0, 1 or 2 */
    const char *verdict;   /* "passed", "drift", "error" */
    char why_empty[256];   /* nothing compared: why; else "" */
} bp_tally_t;
void bp_report_tally(const bp_report_t *rep, bp_tally_t *t);
/* The verdict as one line, e.g. "passed: 327 compared (300 identical,
 * 27 differ, informational); cuda skipped: no CUDA driver" or "error:
 * nothing compared (no probes matched)". */
void bp_tally_line(const bp_report_t *rep, const bp_tally_t *t, char *out, size_t n);
/* "; excused: 2 signs of zeros, 1 NaN payload", or "" when nothing was
 * excused. */
void bp_tally_excused(const bp_tally_t *t, char *out, size_t n);
/* What a compared result's figures do not say, for the line that shows
 * them: "" or e.g. ", 156 in the sign of a zero (156 excused)", ", 2 NaN
 * payloads excused". */
void bp_cmp_class_note(const bp_cmp_t *c, char *out, size_t n);
/* A compared result without mismatches: "bit-identical (9 elements)", or
 * "identical but for 2 NaN payloads, excused (9 elements)". */
void bp_cmp_identical_text(const bp_cmp_t *c, char *out, size_t n);
/* "max 3 ulp", "max class change", or, when every mismatch is a zero's
 * sign, "in the sign of a zero only". */
void bp_cmp_max_ulp_text(const bp_cmp_t *c, char *out, size_t n);
/* Results that fail the verdict (outcome 1). */
size_t bp_report_failures(const bp_report_t *rep);
const char *bp_res_kind_name(bp_res_kind_t k);
/* The multi-dimensional index of flat position `flat` in a row-major
 * shape, as a JSON array of integers (new reference). */
json_t *bp_report_index_json(int ndim, const int64_t *shape, size_t flat);
/* r's dtype: dtype_as, else dtype's name. */
const char *bp_result_dtype(const bp_result_t *r);
/* r's dtype as the reports' titles show it, with the run's dtype where the
 * output's differs: "fp32", "fp32 (bf16 run)", "X9". */
void bp_result_dtype_label(const bp_result_t *r, char *out, size_t n);
/* Whether a and b are of one (probe, output, dtype, run dtype). */
bool bp_result_same_group(const bp_result_t *a, const bp_result_t *b);
/* Results grouped by a key, in n log n (writers must stay fast for the
 * hundred thousand results of a large diff): first[i] is the index of the
 * first result, in report order, whose key cmp says equals result i's,
 * among the results `in` takes (NULL: all); SIZE_MAX for the others.  cmp
 * orders two results by the key (0: the same).  False when out of memory. */
bool bp_report_firsts(const bp_report_t *rep,
                      int (*cmp)(const bp_result_t *, const bp_result_t *),
                      bool (*in)(const bp_result_t *), size_t *first);
/* Whether v holds values of r's (probe, output, dtype, run dtype). */
bool bp_values_of(const bp_values_t *v, const bp_result_t *r);
/* A result naming v's group (strings borrowed from v), for the above. */
bp_result_t bp_values_group(const bp_values_t *v);
/* "seed-div y fp32: cuda vs cpu" (diff: "cos bf16: B vs A"; an output
 * of another dtype than its run's: "sum t fp32 (bf16 run): cuda vs cpu"). */
void bp_result_title(const bp_result_t *r, char *out, size_t n);
/* One line for CI messages: "329332 of 524288 elements differ (62.82%),
 * max 32512 ulp at [2235, 3], max abs 2 at [2235, 3], max rel 204099 at
 * [3416, 30]; 329332 beyond policy exact", "1 of 9 elements differ
 * (11.11%), in the sign of a zero only; 1 beyond policy exact",
 * "bit-identical (10 elements)", or, not compared, "<status>: <note>"
 * ("missing golden: no golden ..."). */
void bp_result_summary(const bp_result_t *r, char *out, size_t n);
/* Mismatched fraction (0 when nothing was compared), for ranking. */
double bp_result_fraction(const bp_result_t *r);

#endif
