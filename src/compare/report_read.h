/* Reading a report back: the JSON that bp_rep_json writes (run, diff,
 * explain and stack --json; a bundle's manifest.json carries the same)
 * turned into the bp_report_t it was written from, so that every format
 * can be rendered again.
 *
 * Every member the writer derives from others (mismatched_percent, each
 * VALUE's decimal forms, the summary) is checked or recomputed, never
 * trusted: the bits come from "hex", the flat index of a maximum from its
 * "index" and the shape.  Bad input is BP_EINPUT with "LABEL: PATH: what"
 * (PATH as in results[3].max_ulp.value), or "LABEL:LINE:COLUMN: invalid
 * JSON: what" for text that does not parse.  What the model does not hold
 * (run --timing's "timing", stack's "stack", unknown members) is kept in
 * rep->extra; a manifest's "files" is dropped and its "backends" go under
 * "env" as run's own report has them. */
#ifndef BP_REPORT_READ_H
#define BP_REPORT_READ_H

#include <jansson.h>

#include "error.h"
#include "report.h"

/* The most bytes a report file may have (a run of the whole suite writes
 * well under 1 MiB). */
#define BP_REPORT_READ_MAX (256u << 20)

/* Rebuilds rep from doc; label names doc in messages.  On failure rep is
 * left empty (nothing to free). */
bp_status bp_report_from_json(const json_t *doc, const char *label, bp_report_t *rep,
                              bp_error_t *err);
/* Parses text (len bytes) as a JSON report, then as above. */
bp_status bp_report_parse(const char *text, size_t len, const char *label, bp_report_t *rep,
                          bp_error_t *err);
/* Reads path: a JSON report file ("-": standard input), or a bundle
 * directory written by run --save, whose manifest.json carries the report.
 * At most BP_REPORT_READ_MAX bytes. */
bp_status bp_report_read(const char *path, bp_report_t *rep, bp_error_t *err);

#endif
