/* Directories as diff -r walks them: the tensor sets under a directory,
 * each named by its path relative to it, so that two directories pair
 * their sets by relative path.
 *
 * A directory holding manifest.json is a saved run (one set; not walked
 * into); one holding a "*.safetensors.index.json" contributes that
 * checkpoint as one set, named by the index's path, and its shards are not
 * sets of their own; every other file whose content is safetensors (plain
 * or gzip), .npy or a zip is a set.  Other files are listed as skipped,
 * with what they look like ("config.json: JSON").  Symbolic links to
 * directories are not followed (no loops); the walk stops at
 * BP_WALK_MAX_DEPTH levels and BP_WALK_MAX_ENTRIES entries. */
#ifndef BP_DWALK_H
#define BP_DWALK_H

#include <stddef.h>

#include "error.h"

#define BP_WALK_MAX_DEPTH 64
#define BP_WALK_MAX_ENTRIES 1000000

typedef struct {
    char **rel;       /* sorted */
    size_t n, cap;
    char **skipped;   /* "path: what it looks like" */
    size_t nskipped, capskipped;
} bp_walk_t;

bp_status bp_walk(const char *root, bp_walk_t *out, bp_error_t *err);
void bp_walk_free(bp_walk_t *w);

#endif
