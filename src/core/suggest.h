/* "Did you mean": the candidate nearest a misspelt name.  Used where a
 * name from the user must be one of a known set (ops, parameters) so that
 * the message can offer the likely one. */
#ifndef BP_SUGGEST_H
#define BP_SUGGEST_H

#include <stddef.h>

/* The candidate nearest word, or NULL when none is near: an edit distance
 * (insertions, deletions, substitutions, swaps of neighbours) of at most a
 * third of the longer name (at least 1), or one name a prefix of the other
 * (two letters at least).  Ties go to the earlier candidate. */
const char *bp_suggest(const char *word, const char *const *cands, size_t n);

/* The edit distance above (optimal string alignment), capped at 64 for
 * names longer than that. */
size_t bp_suggest_distance(const char *a, const char *b);

#endif
