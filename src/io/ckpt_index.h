/* A Hugging Face checkpoint's index ("model.safetensors.index.json"):
 *   {"metadata": {...}, "weight_map": {"<tensor>": "<shard file>", ...}}
 * read as hostile input.  Rules, each refused with BP_EINPUT and
 * "<label>: <what> (<rule>)":
 *   - at most BP_INDEX_MAX_BYTES, valid UTF-8 JSON without duplicate keys,
 *     nested at most BP_INDEX_MAX_DEPTH deep (checked before parsing);
 *   - an object with "weight_map", an object of at least one tensor name
 *     mapped to a string; "metadata", when present, an object;
 *   - every shard name a plain relative path: not empty, not absolute, no
 *     ".." component, no backslash (safeopen.h), at most
 *     BP_INDEX_MAX_SHARDS distinct shards.
 * What the shards hold (each listed tensor in its shard, no tensor in two,
 * none unlisted, no shard leaving the directory) is tset_ckpt.c's to check
 * when it opens them. */
#ifndef BP_CKPT_INDEX_H
#define BP_CKPT_INDEX_H

#include <stddef.h>

#include "error.h"

#define BP_INDEX_MAX_DEPTH 64

typedef struct {
    char *tensor;
    size_t shard;      /* index into shards */
} bp_ckpt_entry_t;

typedef struct bp_ckpt_index {
    bp_ckpt_entry_t *e; /* in the index's order */
    size_t n;
    char **shards;      /* distinct, in order of first mention */
    size_t nshards;
} bp_ckpt_index_t;

bp_status bp_ckpt_index_parse(const char *text, size_t len, const char *label,
                              bp_ckpt_index_t *out, bp_error_t *err);
void bp_ckpt_index_free(bp_ckpt_index_t *x);

#endif
