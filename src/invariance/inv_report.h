/* What an invariance run found (a study: its maps and notes) and its
 * writers: the text report (verdict first), the "invariance" object of the
 * JSON report, the results of the common report (report.h: one per map
 * band and result group, so that JSON, JUnit, Markdown and GitHub output
 * carry the verdict), and the SVG strip chart. */
#ifndef BP_INV_REPORT_H
#define BP_INV_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "coll_map.h"
#include "inv.h"
#include "report.h"

typedef struct bp_inv_study {
    bp_inv_map_t *maps;
    size_t nmaps, capmaps;
    bp_coll_map_t *cmaps;  /* collective maps (coll_map.h) */
    size_t ncmaps;
    json_t *notes;         /* strings: engines skipped and why, ... */
    uint64_t seed;
    int repeat;            /* in-process runs per configuration */
    int processes;         /* fresh processes compared */
    bp_policy_t policy;
} bp_inv_study_t;

void bp_inv_study_init(bp_inv_study_t *s);
void bp_inv_study_free(bp_inv_study_t *s);
/* Appends a map (moved in: the caller must not free it). */
bp_status bp_inv_study_add(bp_inv_study_t *s, bp_inv_map_t *m, bp_error_t *err);
bool bp_inv_study_note(bp_inv_study_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends collective maps (moved in: the caller frees only the array). */
bp_status bp_inv_study_add_coll(bp_inv_study_t *s, bp_coll_map_t *m, size_t n,
                                bp_error_t *err);
/* Maps that break invariance beyond the policy (or differ run to run),
 * collective maps included. */
size_t bp_inv_study_failures(const bp_inv_study_t *s);

typedef struct {
    bool quiet;     /* the verdict and the failures only */
    bool verbose;   /* every interval and the first mismatches' bits */
} bp_inv_text_opts_t;

/* The text report; 0, or 2 when f cannot be written. */
int bp_inv_text(FILE *f, const bp_inv_study_t *s, const bp_inv_text_opts_t *o);
/* The "invariance" object of the JSON report (new reference; NULL when out
 * of memory): every map with its groups, bands, configurations (value,
 * group, algorithm, run-to-run counts), intervals and boundaries with the
 * oracle's verdicts. */
json_t *bp_inv_json(const bp_inv_study_t *s);
/* Adds the study's results to rep: per map band, one result per result
 * group it holds (the group against the reference, with the values where
 * it appears); run-to-run differences fail the band's reference result. */
bool bp_inv_fill_report(bp_report_t *rep, const bp_inv_study_t *s);
/* The SVG strip chart: the axis across, one band per map and placement,
 * colour = result group (the reference's is grey); boundaries marked.
 * 0, or 2 when f cannot be written. */
int bp_inv_svg(FILE *f, const bp_inv_study_t *s);

/* The collective maps' parts of the same reports (coll_report.c,
 * coll_json.c, coll_svg.c): the text after the verdict, the
 * "collectives" array of the "invariance" object, the results (one per
 * map, size and result group), the SVG panels (message size across, one
 * row per configuration). */
int bp_coll_text(FILE *f, const bp_inv_study_t *s, const bp_inv_text_opts_t *o);
json_t *bp_coll_json(const bp_inv_study_t *s);
bool bp_coll_fill_report(bp_report_t *rep, const bp_inv_study_t *s);
int bp_coll_svg(FILE *f, const bp_inv_study_t *s);

/* "1-16", "17", for a run of configurations of a band. */
void bp_inv_run_format(const bp_inv_band_t *b, const bp_inv_run_t *r, char *out,
                       size_t n);

#endif
