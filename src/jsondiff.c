/* Leaf-by-leaf JSON comparison (see jsondiff.h). */
#include "jsondiff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key;
    char *val;  /* compact JSON, strings without quotes */
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
    char *val = json_is_string(v) ? strdup(json_string_value(v))
                                  : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *key = strdup(prefix);
    if (!val || !key) {
        free(val);
        free(key);
        out->nomem = true;
        return;
    }
    out->l[out->n++] = (leaf_t){key, val};
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const leaf_t *)a)->key, ((const leaf_t *)b)->key);
}

static void add(char *out, size_t n, size_t *len, size_t *shown, size_t max, size_t *count,
                const char *key, const char *va, const char *vb)
{
    (*count)++;
    if (*shown >= max || *len >= n)
        return;
    *len += (size_t)snprintf(out + *len, n - *len, "%s%s (%.60s | %.60s)", *shown ? ", " : "",
                             key, va ? va : "absent", vb ? vb : "absent");
    (*shown)++;
}

size_t bp_json_diff(const json_t *a, const json_t *b, const char *const *skip, size_t max,
                    char *out, size_t n)
{
    leaves_t la = {0}, lb = {0};
    flatten(a, "", skip, &la, 0);
    flatten(b, "", skip, &lb, 0);
    qsort(la.l, la.n, sizeof *la.l, by_key);
    qsort(lb.l, lb.n, sizeof *lb.l, by_key);
    size_t i = 0, j = 0, len = 0, shown = 0, count = 0;
    if (n)
        out[0] = '\0';
    while (i < la.n || j < lb.n) {
        int c = i == la.n ? 1 : j == lb.n ? -1 : strcmp(la.l[i].key, lb.l[j].key);
        if (c < 0) {
            add(out, n, &len, &shown, max, &count, la.l[i].key, la.l[i].val, NULL);
            i++;
        } else if (c > 0) {
            add(out, n, &len, &shown, max, &count, lb.l[j].key, NULL, lb.l[j].val);
            j++;
        } else {
            if (strcmp(la.l[i].val, lb.l[j].val) != 0)
                add(out, n, &len, &shown, max, &count, la.l[i].key, la.l[i].val, lb.l[j].val);
            i++;
            j++;
        }
    }
    if (count > shown && len < n)
        snprintf(out + len, n - len, ", and %zu more", count - shown);
    for (size_t k = 0; k < la.n; k++)
        free(la.l[k].key), free(la.l[k].val);
    for (size_t k = 0; k < lb.n; k++)
        free(lb.l[k].key), free(lb.l[k].val);
    free(la.l);
    free(lb.l);
    return count;
}
