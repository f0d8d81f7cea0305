/* Which items of two JSON descriptions differ: how diff says why two
 * machines disagree ("fingerprints differ in cpu_math (sleef-u10 | libm),
 * simd (avx2 | none (libm))"). */
#ifndef BP_JSONDIFF_H
#define BP_JSONDIFF_H

#include <jansson.h>
#include <stddef.h>

/* Compares the leaves of a and b (objects flattened to dotted keys; other
 * values compared whole), leaving out keys whose last part is in skip
 * (NULL-terminated); writes "key (va | vb), ..." into out, at most max
 * items then "and N more", and returns how many differ (0: out is ""). */
size_t bp_json_diff(const json_t *a, const json_t *b, const char *const *skip, size_t max,
                    char *out, size_t n);

#endif
