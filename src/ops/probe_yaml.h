/* The YAML layer of the probe reader (probe_schema.c reads the probe from
 * it, probe_load.c drives both): a file of at most 1 MiB parsed with libyaml's event API into a tree
 * of scalars, lists and mappings.  Refused here, each with its position:
 * syntax errors (libyaml's problem and mark), anchors, aliases, tags, more
 * than one document, nesting deeper than 64, a mapping of more than 1024
 * keys, duplicate or non-string keys, NUL characters in strings. */
#ifndef BP_PROBE_YAML_H
#define BP_PROBE_YAML_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef enum { BP_YN_SCALAR, BP_YN_SEQ, BP_YN_MAP } bp_yn_kind_t;

typedef struct bp_ynode {
    bp_yn_kind_t kind;
    int line, col;           /* 1-based position of the node's first character */
    char *str;               /* scalar text */
    bool plain;              /* unquoted: may be a number or a $reference */
    struct bp_ynode **kid;   /* list items; mapping: key, value, key, value... */
    size_t n, cap;
} bp_ynode_t;

/* Reads path into *root (NULL for a file without a document). */
bp_status bp_yaml_read(const char *path, bp_ynode_t **root, bp_error_t *err);
/* The same from memory; label stands for the file name in messages. */
bp_status bp_yaml_parse(const char *text, size_t len, const char *label,
                        bp_ynode_t **root, bp_error_t *err);
void bp_yaml_free(bp_ynode_t *y);
/* The value of key in a mapping, or NULL. */
const bp_ynode_t *bp_yaml_get(const bp_ynode_t *map, const char *key);
/* Recognises a number as YAML 1.2's core schema writes it (42, -1.5, 1e-6,
 * .inf, .nan), plus C99 hex (0x1.8p+3, 0x1f); independent of the locale.
 * Returns 1 and sets *v and *is_int (no fraction, no exponent) for a number,
 * 0 for anything else, 2 for a number beyond the range of a double. */
int bp_yaml_number(const char *s, double *v, bool *is_int);
/* probe_schema.c: the probe of the tree root (NULL: an empty file) read
 * as path, when st (the YAML layer's status) is BP_OK, with the parameter
 * overrides args (bp_param_arg_t[nargs], probe.h); frees the tree.  Fails
 * as bp_probe_load does. */
struct bp_probe;
bp_status bp_probe_from_tree(const char *path, bp_ynode_t *root, bp_status st,
                             const void *args, size_t nargs, struct bp_probe **out,
                             bp_error_t *err);
/* "path:line:col: message" into err, BP_EINPUT. */
bp_status bp_yaml_errorv(bp_error_t *err, const char *path, int line, int col,
                         const char *fmt, va_list ap);

#endif
