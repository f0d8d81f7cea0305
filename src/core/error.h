/* Status codes and the error record every library call fills on failure.
 * The library never prints: a failing call stores what failed and where in a
 * bp_error_t, the way libyaml keeps problem and problem_mark on its parser;
 * commands decide what to print and which exit status to use. */
#ifndef BP_ERROR_H
#define BP_ERROR_H

#include <stddef.h>

typedef enum {
    BP_OK = 0,
    BP_EINPUT,    /* bad input: file, YAML, tensor container, option value */
    BP_EIO,       /* the operating system refused (open, read, write, rename) */
    BP_ENOMEM,
    BP_EUNAVAIL,  /* a backend or device is not available */
    BP_EINTERNAL  /* a bug: an invariant did not hold */
} bp_status;

typedef struct bp_error {
    bp_status code;
    char msg[1024];
} bp_error_t;

/* Stores a printf-style message (what failed, then where) and returns code. */
bp_status bp_error_set(bp_error_t *err, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the stored message with more context: "cannot read 'x': " + msg. */
bp_status bp_error_prefix(bp_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void bp_error_clear(bp_error_t *err);

#endif
