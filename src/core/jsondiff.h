/* Leaf-by-leaf comparison of two JSON descriptions: how diff says why two
 * machines disagree (their fingerprints' items that differ, side by side:
 * "cpu_math: sleef-u10 | libm"). */
#ifndef BP_JSONDIFF_H
#define BP_JSONDIFF_H

#include <jansson.h>
#include <stddef.h>

/* Compares the leaves of a and b (objects flattened to dotted keys, "a.b";
 * other values compared whole, with json_equal), leaving out keys whose
 * last part is in skip (NULL-terminated, or NULL).  Returns the leaves that
 * differ in key order, an array of {"item": KEY, "a": VALUE, "b": VALUE}
 * (null where a side lacks the item), and sets *same (when not NULL) to how
 * many are equal; NULL when out of memory. */
json_t *bp_json_diff(const json_t *a, const json_t *b, const char *const *skip, size_t *same);

/* A leaf's value as the report prints it: a string as it is, "absent" for
 * null, anything else as compact JSON; into out (n bytes, cut when short). */
void bp_json_diff_value(const json_t *v, char *out, size_t n);

#endif
