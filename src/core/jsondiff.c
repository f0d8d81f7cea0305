/* Leaf-by-leaf JSON comparison (see jsondiff.h). */
#include "jsondiff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key;
    const json_t *val; /* borrowed from the compared document */
} leaf_t;

typedef struct {
    leaf_t *l;
    size_t n, cap;
    bool nomem;
} leaves_t;

static bool skipped(const char *last, const char *const *skip)
{
    for (size_t i = 0; skip && skip[i]; i++)
        if (strcmp(last, skip[i]) == 0)
            return true;
    return false;
}

static void flatten(const json_t *v, const char *prefix, const char *const *skip,
                    leaves_t *out, int depth)
{
    if (json_is_object(v) && depth < 32) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            if (skipped(k, skip))
                continue;
            size_t n = strlen(prefix) + strlen(k) + 2;
            char *key = malloc(n);
            if (!key) {
                out->nomem = true;
                return;
            }
            snprintf(key, n, "%s%s%s", prefix, *prefix ? "." : "", k);
            flatten(x, key, skip, out, depth + 1);
            free(key);
        }
        return;
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 32;
        leaf_t *l = realloc(out->l, cap * sizeof *l);
        if (!l) {
            out->nomem = true;
            return;
        }
        out->l = l;
        out->cap = cap;
    }
    char *key = strdup(prefix);
    if (!key) {
        out->nomem = true;
        return;
    }
    out->l[out->n++] = (leaf_t){key, v};
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const leaf_t *)a)->key, ((const leaf_t *)b)->key);
}

static bool add(json_t *out, const char *key, const json_t *va, const json_t *vb)
{
    return json_array_append_new(out, json_pack("{s:s, s:O, s:O}", "item", key, "a",
                                                va ? va : json_null(), "b",
                                                vb ? vb : json_null())) == 0;
}

json_t *bp_json_diff(const json_t *a, const json_t *b, const char *const *skip, size_t *same)
{
    leaves_t la = {0}, lb = {0};
    flatten(a, "", skip, &la, 0);
    flatten(b, "", skip, &lb, 0);
    json_t *out = la.nomem || lb.nomem ? NULL : json_array();
    if (la.n)
        qsort(la.l, la.n, sizeof *la.l, by_key);
    if (lb.n)
        qsort(lb.l, lb.n, sizeof *lb.l, by_key);
    size_t i = 0, j = 0, eq = 0;
    bool ok = out != NULL;
    while (ok && (i < la.n || j < lb.n)) {
        int c = i == la.n ? 1 : j == lb.n ? -1 : strcmp(la.l[i].key, lb.l[j].key);
        if (c < 0) {
            ok = add(out, la.l[i].key, la.l[i].val, NULL);
            i++;
        } else if (c > 0) {
            ok = add(out, lb.l[j].key, NULL, lb.l[j].val);
            j++;
        } else {
            if (json_equal((json_t *)la.l[i].val, (json_t *)lb.l[j].val))
                eq++;
            else
                ok = add(out, la.l[i].key, la.l[i].val, lb.l[j].val);
            i++;
            j++;
        }
    }
    for (size_t k = 0; k < la.n; k++)
        free(la.l[k].key);
    for (size_t k = 0; k < lb.n; k++)
        free(lb.l[k].key);
    free(la.l);
    free(lb.l);
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    if (same)
        *same = eq;
    return out;
}

void bp_json_diff_value(const json_t *v, char *out, size_t n)
{
    if (!n)
        return;
    if (!v || json_is_null(v)) {
        snprintf(out, n, "absent");
        return;
    }
    if (json_is_string(v)) {
        snprintf(out, n, "%s", json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(out, n, "%s", s ? s : "?");
    free(s);
}
