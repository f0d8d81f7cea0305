/* Report writers, one per format (rep_*.c), and their dispatch (rep.c).
 * Each renders a bp_report_t and returns 0, or 2 when the destination
 * cannot be written. */
#ifndef BP_REP_H
#define BP_REP_H

#include <stdbool.h>
#include <stdio.h>

#include "report.h"

typedef struct bp_rep_opts {
    bool quiet;   /* text: only the verdict and the failures */
    int verbose;  /* text: 1 (-v) every difference in detail, 2 (-vv) every result */
    bool color;
    size_t first; /* mismatches shown per comparison */
} bp_rep_opts_t;

int bp_rep_text(FILE *f, const bp_report_t *rep, const bp_rep_opts_t *o);
int bp_rep_json(FILE *f, const bp_report_t *rep);
int bp_rep_junit(FILE *f, const bp_report_t *rep);
int bp_rep_markdown(FILE *f, const bp_report_t *rep);
/* GitHub: annotations on f, and the step summary appended to
 * $GITHUB_STEP_SUMMARY when set (a failure to write it: message, 2). */
int bp_rep_github(FILE *f, const bp_report_t *rep);
int bp_rep_github_annotations(FILE *f, const bp_report_t *rep);
int bp_rep_github_summary(FILE *f, const bp_report_t *rep);
/* run --timing: per backend, per probe and dtype, then the rest. */
struct bp_timing;
int bp_rep_timing(FILE *f, const struct bp_timing *t);
/* Markdown pieces shared by the Markdown and GitHub writers: s as escaped
 * text, and as a code span (also safe inside a table cell). */
void bp_md_text(FILE *f, const char *s);
void bp_md_code(FILE *f, const char *s);

/* Where a command's reports go: text on stdout unless another report is
 * written there ("-"); files for the others; GitHub annotations on stdout
 * (stderr when a report takes stdout).  The options that fill it are the
 * report group of the command line's option tables (cli/opt.h). */
typedef struct bp_rep_targets {
    const char *json, *junit, *markdown; /* NULL: not written */
    bool github;
    bp_rep_opts_t text;
} bp_rep_targets_t;

/* No reports asked for yet; GitHub output on when GITHUB_ACTIONS=true. */
void bp_rep_targets_init(bp_rep_targets_t *t);
/* Usage check: at most one report on stdout, and every report's file can
 * be written (checked before any work).  Returns -1 when fine, else the
 * usage error's exit status. */
int bp_rep_targets_check(const char *cmd, const bp_rep_targets_t *t);
/* Writes every requested report; 0, or 2 when one cannot be written. */
int bp_rep_emit(const bp_rep_targets_t *t, const bp_report_t *rep);
/* Writes rep with fn to path ("-" is stdout); 2 with a message when the
 * file cannot be written. */
int bp_rep_write(const char *path, int (*fn)(FILE *, const bp_report_t *),
                 const bp_report_t *rep);
/* The JSON document bp_rep_json writes (caller owns it), and its
 * "summary" (the tally and verdict). */
json_t *bp_rep_json_build(const bp_report_t *rep);
json_t *bp_rep_json_summary(const bp_report_t *rep);

#endif
