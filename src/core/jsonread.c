/* JSON in bounded memory (see jsonread.h). */
#include "jsonread.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per thread: whether a bounded parse runs, the bytes it holds, its bound. */
static __thread bool on, over, oom;
static __thread size_t used, limit;

/* A block's cost: what malloc gave and its own bookkeeping. */
static size_t cost(void *p)
{
    return malloc_usable_size(p) + 16;
}

static void *bounded_malloc(size_t n)
{
    if (on && (n > limit || used > limit - n)) {
        over = true;
        return NULL;
    }
    void *p = malloc(n);
    if (p && on)
        used += cost(p);
    else if (on)
        oom = true;
    return p;
}

static void bounded_free(void *p)
{
    if (p && on) {
        size_t c = cost(p);
        used = c > used ? 0 : used - c;
    }
    free(p);
}

__attribute__((constructor)) static void install(void)
{
    json_set_alloc_funcs(bounded_malloc, bounded_free);
}

json_t *bp_json_load(const char *text, size_t len, size_t flags, bp_json_err_t *e)
{
    e->limit = len > (BP_JSON_MEM_MAX - BP_JSON_MEM_MIN) / BP_JSON_MEM_PER_BYTE
                   ? BP_JSON_MEM_MAX
                   : len * BP_JSON_MEM_PER_BYTE + BP_JSON_MEM_MIN;
    on = true;
    over = oom = false;
    used = 0;
    limit = e->limit;
    json_t *doc = json_loadb(text, len, flags, &e->je);
    e->over = !doc && (over || oom);
    e->oom = !doc && oom && !over;
    on = false;
    return doc;
}

bp_status bp_json_limit_error(const char *label, size_t len, const bp_json_err_t *e,
                              bp_error_t *err)
{
    char what[256];
    bp_json_limit_text(len, e, what, sizeof what);
    return bp_error_set(err, e->oom ? BP_ENOMEM : BP_EINPUT, "%s: %s", label, what);
}

void bp_json_limit_text(size_t len, const bp_json_err_t *e, char *out, size_t n)
{
    if (e->oom)
        snprintf(out, n, "out of memory reading its JSON (%zu bytes)", len);
    else
        snprintf(out, n,
                 "its JSON takes more than %zu MiB of memory to read (JSON of %zu bytes "
                 "may take %d bytes of memory per byte, between %zu and %zu MiB)",
                 e->limit >> 20, len, BP_JSON_MEM_PER_BYTE, BP_JSON_MEM_MIN >> 20,
                 BP_JSON_MEM_MAX >> 20);
}

/* ---- spans ------------------------------------------------------------- */

#define SKIP_DEPTH 4096 /* deeper is malformed here (jansson's own limit: 2048) */

static size_t ws(const char *t, size_t i, size_t e)
{
    while (i < e && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* The end of the string starting at t[i] == '"', or 0. */
static size_t skip_string(const char *t, size_t i, size_t e)
{
    for (i++; i < e; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return 0;
}

/* The end of the value starting at t[i] (no blank before it), or 0. */
static size_t skip_value(const char *t, size_t i, size_t e)
{
    if (i >= e)
        return 0;
    if (t[i] == '"')
        return skip_string(t, i, e);
    if (t[i] != '{' && t[i] != '[') { /* a number or a literal */
        size_t j = i;
        while (j < e && !strchr(",]} \t\r\n", t[j]))
            j++;
        return j > i ? j : 0;
    }
    /* brackets, strings skipped whole; depth bounded */
    int depth = 0;
    for (; i < e; i++) {
        char c = t[i];
        if (c == '"') {
            size_t j = skip_string(t, i, e);
            if (!j)
                return 0;
            i = j - 1;
        } else if (c == '{' || c == '[') {
            if (++depth > SKIP_DEPTH)
                return 0;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                return i + 1;
        }
    }
    return 0;
}

bool bp_json_member(const char *text, size_t len, const char *key, size_t *b, size_t *e)
{
    size_t i = ws(text, 0, len), kl = strlen(key);
    if (i >= len || text[i] != '{')
        return false;
    i = ws(text, i + 1, len);
    while (i < len && text[i] == '"') {
        size_t k = skip_string(text, i, len);
        if (!k)
            return false;
        bool match = k - i - 2 == kl && memcmp(text + i + 1, key, kl) == 0;
        i = ws(text, k, len);
        if (i >= len || text[i] != ':')
            return false;
        i = ws(text, i + 1, len);
        size_t v = skip_value(text, i, len);
        if (!v)
            return false;
        if (match) {
            *b = i;
            *e = v;
            return true;
        }
        i = ws(text, v, len);
        if (i < len && text[i] == ',')
            i = ws(text, i + 1, len);
        else
            return false;
    }
    return false;
}

bool bp_json_next(const char *text, size_t e, size_t *at, size_t *eb, size_t *ee, bool *bad)
{
    size_t i = *at;
    *bad = true;
    if (i >= e)
        return false;
    if (text[i] == '[') {
        i = ws(text, i + 1, e);
        if (i < e && text[i] == ']') {
            *bad = false;
            return false;
        }
    } else if (text[i] == ',') {
        i = ws(text, i + 1, e);
    } else {
        *bad = text[i] != ']';
        return false;
    }
    size_t v = skip_value(text, i, e);
    if (!v)
        return false;
    *eb = i;
    *ee = v;
    *at = ws(text, v, e);
    *bad = false;
    return true;
}
