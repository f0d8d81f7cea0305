/* The two JSON values every report writes the same way: a double, whose
 * non-finite values JSON cannot carry, and an ulp distance, whose
 * UINT64_MAX (compare.h: a non-finite mismatch, a change of class) is no
 * distance at all.  The report reader (report_read.c) reads the ulp back
 * by BP_JSON_CLASS_CHANGE. */
#ifndef BP_JSONVAL_H
#define BP_JSONVAL_H

#include <jansson.h>
#include <stdint.h>

/* The string an ulp distance of UINT64_MAX is written as. */
#define BP_JSON_CLASS_CHANGE "class change"

/* v as a JSON number; inf, -inf and NaN as the strings "inf", "-inf" and
 * "nan".  A new reference (NULL only when out of memory). */
json_t *bp_json_num(double v);
/* u as a JSON integer; UINT64_MAX as BP_JSON_CLASS_CHANGE.  A new
 * reference (NULL only when out of memory). */
json_t *bp_json_ulp(uint64_t u);

#endif
