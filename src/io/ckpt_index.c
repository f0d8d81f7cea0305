/* Checkpoint index rules (see ckpt_index.h). */
#include "ckpt_index.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "safeopen.h"
#include "tset.h"

/* Nesting depth outside strings, before jansson (which recurses) sees it;
 * returns the byte offset where the limit is passed, or len. */
static size_t too_deep(const char *s, size_t len)
{
    int depth = 0;
    bool str = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > BP_INDEX_MAX_DEPTH)
                return i;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return len;
}

typedef struct {
    const char *shard;
    size_t pos;
} ref_t;

/* By shard name, then by position in the index (stable for equal names). */
static int cmp_ref(const void *a, const void *b)
{
    const ref_t *x = a, *y = b;
    int c = strcmp(x->shard, y->shard);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

bp_status bp_ckpt_index_parse(const char *text, size_t len, const char *label,
                              bp_ckpt_index_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (len > BP_INDEX_MAX_BYTES)
        return bp_error_set(err, BP_EINPUT, "%s: %zu bytes (an index is at most %u)", label,
                            len, BP_INDEX_MAX_BYTES);
    size_t deep = too_deep(text, len);
    if (deep < len)
        return bp_error_set(err, BP_EINPUT, "%s: JSON nested deeper than %d levels at byte %zu",
                            label, BP_INDEX_MAX_DEPTH, deep);
    bp_json_err_t je;
    json_t *root = bp_json_load(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root && je.over)
        return bp_json_limit_error(label, len, &je, err);
    if (!root)
        return bp_error_set(err, BP_EINPUT, "%s: not valid JSON: %s at line %d, column %d",
                            label, je.je.text, je.je.line, je.je.column);
    json_t *wm = json_object_get(root, "weight_map"), *meta = json_object_get(root, "metadata");
    bp_status st = BP_OK;
    if (!json_is_object(root))
        st = bp_error_set(err, BP_EINPUT, "%s: not a JSON object (an index is "
                          "{\"weight_map\": {...}})", label);
    else if (!json_is_object(wm) || json_object_size(wm) == 0)
        st = bp_error_set(err, BP_EINPUT, "%s: no \"weight_map\" object naming at least one "
                          "tensor's shard", label);
    else if (meta && !json_is_object(meta))
        st = bp_error_set(err, BP_EINPUT, "%s: \"metadata\" is not an object", label);
    size_t n = st ? 0 : json_object_size(wm);
    /* each entry's shard string (alive while root is), to number the
     * distinct shards in order of first mention by sorting, not by n^2 */
    ref_t *refs = NULL;
    size_t *first = NULL;
    if (!st && (!(out->e = calloc(n, sizeof *out->e)) ||
                !(out->shards = calloc(n, sizeof *out->shards)) ||
                !(refs = calloc(n, sizeof *refs)) || !(first = calloc(n, sizeof *first))))
        st = bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
    const char *k;
    json_t *v;
    if (!st) {
        json_object_foreach(wm, k, v) {
            const char *shard = json_string_value(v), *why;
            if (!shard) {
                st = bp_error_set(err, BP_EINPUT, "%s: weight_map[\"%.200s\"] is not a "
                                  "string (each tensor maps to its shard's file name)",
                                  label, k);
                break;
            }
            if ((why = bp_safe_name_rule(shard))) {
                st = bp_error_set(err, BP_EINPUT, "%s: shard '%.200s' of tensor '%.200s': %s",
                                  label, shard, k, why);
                break;
            }
            if (!(out->e[out->n].tensor = strdup(k))) {
                st = bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
                break;
            }
            refs[out->n] = (ref_t){shard, out->n};
            out->n++;
        }
    }
    if (!st) {
        qsort(refs, out->n, sizeof *refs, cmp_ref);
        /* groups of one shard: numbered by their first entry */
        size_t ng = 0;
        for (size_t i = 0; i < out->n; i++)
            if (i == 0 || strcmp(refs[i].shard, refs[i - 1].shard) != 0)
                first[ng++] = refs[i].pos;
        if (ng > BP_INDEX_MAX_SHARDS)
            st = bp_error_set(err, BP_EINPUT, "%s: %zu shards (at most %d)", label, ng,
                              BP_INDEX_MAX_SHARDS);
        qsort(first, ng, sizeof *first, cmp_size);
        /* each group's id: its first mention's rank among the first mentions */
        for (size_t i = 0, start = 0; !st && i <= out->n; i++) {
            if (i < out->n && (i == 0 || strcmp(refs[i].shard, refs[i - 1].shard) == 0))
                continue;
            /* refs[start, i) is one shard; its first mention is refs[start].pos */
            size_t *at = bsearch(&refs[start].pos, first, ng, sizeof *first, cmp_size);
            size_t id = (size_t)(at - first);
            if (!(out->shards[id] = strdup(refs[start].shard)))
                st = bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
            for (size_t j = start; j < i; j++)
                out->e[refs[j].pos].shard = id;
            start = i;
        }
        out->nshards = st ? 0 : ng;
        for (size_t i = 0; st && i < ng; i++)
            free(out->shards[i]), out->shards[i] = NULL;
    }
    free(refs);
    free(first);
    json_decref(root);
    if (st)
        bp_ckpt_index_free(out);
    return st;
}

void bp_ckpt_index_free(bp_ckpt_index_t *x)
{
    for (size_t i = 0; x->e && i < x->n; i++)
        free(x->e[i].tensor);
    for (size_t i = 0; x->shards && i < x->nshards; i++)
        free(x->shards[i]);
    free(x->e);
    free(x->shards);
    memset(x, 0, sizeof *x);
}
