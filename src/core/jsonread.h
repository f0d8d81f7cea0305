/* JSON from outside files, read with jansson in memory bounded by what is
 * read: one parse may take BP_JSON_MEM_PER_BYTE bytes of memory per byte
 * of its text, at least BP_JSON_MEM_MIN and at most BP_JSON_MEM_MAX
 * (jansson takes about 50 bytes for a value written in 2, "0,": without a
 * bound, a 60 MB manifest of zeros took 3.7 GB).  What real files need
 * stays well inside: a manifest, a checkpoint index or a safetensors header
 * takes 4 to 9 bytes per byte, and a report is read a result at a time
 * (bp_json_member, bp_json_next).  Past the bound the parse stops at once
 * and the reader says which file and what limit (bp_json_limit_error).
 *
 * The bound is kept by jansson's allocation functions (set once, for the
 * process, before main), counting per thread only while a parse runs;
 * everything jansson allocates is still freed with free(). */
#ifndef BP_JSONREAD_H
#define BP_JSONREAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define BP_JSON_MEM_PER_BYTE 16
#define BP_JSON_MEM_MIN ((size_t)16 << 20)
#define BP_JSON_MEM_MAX ((size_t)256 << 20)

typedef struct {
    json_error_t je; /* what is wrong with the JSON, when not over */
    bool over;       /* the parse passed the bound, or memory ran out: */
    bool oom;        /* the system's memory, not the bound */
    size_t limit;    /* the bound, bytes */
} bp_json_err_t;

/* json_loadb(text, len, flags) within the bound; NULL on failure, e says
 * why. */
json_t *bp_json_load(const char *text, size_t len, size_t flags, bp_json_err_t *e);
/* The message for a parse that passed the bound: BP_EINPUT, "<label>: its
 * JSON takes more than N MiB of memory to read (...)"; BP_ENOMEM when the
 * system's memory ran out first. */
bp_status bp_json_limit_error(const char *label, size_t len, const bp_json_err_t *e,
                              bp_error_t *err);
/* The same words without the label, for readers that place them. */
void bp_json_limit_text(size_t len, const bp_json_err_t *e, char *out, size_t n);

/* Spans of JSON text, found without building anything (to read a large
 * array an element at a time); each is checked only as far as needed to
 * find its end: jansson reads what it spans.  False on text that is not
 * well-formed there (the caller then lets jansson say what is wrong). */
/* The value of the first top-level member key (matched as written, without
 * escapes) of the object text[0, len): [*b, *e). */
bool bp_json_member(const char *text, size_t len, const char *key, size_t *b, size_t *e);
/* The elements of the array text[b, e), one per call: *at starts at b;
 * true with the next element's span [*eb, *ee), false at the array's end
 * (*bad false) or on malformed text (*bad true). */
bool bp_json_next(const char *text, size_t e, size_t *at, size_t *eb, size_t *ee, bool *bad);

#endif
