/* diff of two saved runs: each pair of backends' fingerprints side by side,
 * and the hosts', with the items that differ named (often the answer to
 * "why do these two machines disagree"). */
#ifndef BP_DIFF_FP_H
#define BP_DIFF_FP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "report.h"
#include "tpair.h"
#include "tset.h"

/* Adds to rep, for each pair of backend keys of P and for the two hosts
 * (the sets named na and nb, their paths or the user's labels):
 * notes (one naming the items that differ, then one per item, "  ITEM: A |
 * B", at most BP_DIFF_FP_SHOWN) and, under rep->extra's "fingerprints",
 * every item that differs with both values in full: [{"what": "backend" or
 * "host", "a": LABEL, "b": LABEL, "same": N, "differ": [{"item", "a", "b"}]
 * or null where a side has no fingerprint}].  False when out of memory. */
bool bp_diff_fingerprints(bp_report_t *rep, const bp_tset_t *a, const bp_tset_t *b,
                          const bp_pairs_t *P, const char *na, const char *nb);

#define BP_DIFF_FP_SHOWN 16

/* One such comparison, of two fingerprints fa and fb (either NULL: "has no
 * fingerprint") labelled la and lb: its notes and its entry under
 * rep->extra's "fingerprints" (what: "backend", "host", "golden").  False
 * when out of memory. */
bool bp_diff_fp_add(bp_report_t *rep, const char *what, const char *la, const char *lb,
                    const json_t *fa, const json_t *fb);

/* The Markdown report's section of those comparisons (rep->extra's
 * "fingerprints"): per pair, a table of the items that differ, both values
 * in full; nothing when fps is not a non-empty array. */
void bp_diff_fp_markdown(FILE *f, const json_t *fps);

#endif
