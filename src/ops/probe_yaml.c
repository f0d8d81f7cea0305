/* The YAML layer of the probe reader (see probe_yaml.h).
 *
 * Only events carry what must be refused (anchors, aliases, explicit tags),
 * so the tree is built from libyaml's event API rather than its document
 * API; refusing aliases outright also rules out alias bombs.  Positions are
 * libyaml's marks plus one. */
#define _GNU_SOURCE /* strtod_l, newlocale: numbers must not follow the locale */
#include "probe_yaml.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "safeopen.h"

#define MAX_BYTES (1 << 20)
#define MAX_DEPTH 64
#define MAX_KEYS 1024

/* ---- the tree ------------------------------------------------------------ */

void bp_yaml_free(bp_ynode_t *y)
{
    if (!y)
        return;
    for (size_t i = 0; i < y->n; i++)
        bp_yaml_free(y->kid[i]);
    free(y->kid);
    free(y->str);
    free(y);
}

bp_status bp_yaml_errorv(bp_error_t *err, const char *path, int line, int col,
                         const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return bp_error_set(err, BP_EINPUT, "%s:%d:%d: %s", path, line, col, msg);
}

static bp_status at(bp_error_t *err, const char *path, int line, int col,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static bp_status at(bp_error_t *err, const char *path, int line, int col,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bp_status st = bp_yaml_errorv(err, path, line, col, fmt, ap);
    va_end(ap);
    return st;
}

static bp_status syntax_error(const char *path, const yaml_parser_t *ps,
                              const char *text, size_t len, bp_error_t *err)
{
    const char *problem = ps->problem ? ps->problem : "unknown error";
    if (ps->error == YAML_MEMORY_ERROR)
        return bp_error_set(err, BP_ENOMEM, "out of memory reading '%s'", path);
    if (ps->error == YAML_READER_ERROR) {
        /* The reader keeps a byte offset, not a mark. */
        int line = 1, col = 1;
        for (size_t i = 0; i < ps->problem_offset && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)text[i] & 0xc0) != 0x80) {
                col++; /* characters, as libyaml's marks count them */
            }
        }
        if (ps->problem_value != -1)
            return at(err, path, line, col, "invalid YAML: %s (byte 0x%02x)",
                      problem, (unsigned)ps->problem_value & 0xffu);
        return at(err, path, line, col, "invalid YAML: %s", problem);
    }
    int line = (int)ps->problem_mark.line + 1;
    int col = (int)ps->problem_mark.column + 1;
    if (ps->context)
        return at(err, path, line, col,
                  "invalid YAML: %s (%s at line %d, column %d)", problem,
                  ps->context, (int)ps->context_mark.line + 1,
                  (int)ps->context_mark.column + 1);
    return at(err, path, line, col, "invalid YAML: %s", problem);
}

static bp_status push_kid(bp_ynode_t *parent, bp_ynode_t *kid, bp_error_t *err)
{
    if (parent->n == parent->cap) {
        size_t nc = parent->cap ? parent->cap * 2 : 8;
        bp_ynode_t **t = realloc(parent->kid, nc * sizeof *t);
        if (!t)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        parent->kid = t;
        parent->cap = nc;
    }
    parent->kid[parent->n++] = kid;
    return BP_OK;
}

/* Adds a finished or opening node under parent; keys must be unique strings. */
static bp_status attach(const char *path, bp_ynode_t *parent, bp_ynode_t *kid,
                        bp_ynode_t **root, bp_error_t *err)
{
    if (!parent) {
        *root = kid;
        return BP_OK;
    }
    if (parent->kind == BP_YN_MAP && parent->n % 2 == 0) {
        if (kid->kind != BP_YN_SCALAR)
            return at(err, path, kid->line, kid->col,
                      "mapping keys must be strings, got a %s",
                      kid->kind == BP_YN_MAP ? "mapping" : "list");
        if (parent->n / 2 >= MAX_KEYS)
            return at(err, path, kid->line, kid->col,
                      "mapping has more than %d keys", MAX_KEYS);
        for (size_t i = 0; i < parent->n; i += 2)
            if (strcmp(parent->kid[i]->str, kid->str) == 0)
                return at(err, path, kid->line, kid->col,
                          "duplicate key '%.80s' (first at line %d, column %d)",
                          kid->str, parent->kid[i]->line, parent->kid[i]->col);
    }
    return push_kid(parent, kid, err);
}

static bp_status no_anchor_tag(const char *path, int line, int col,
                               const yaml_char_t *anchor, const yaml_char_t *tag,
                               bp_error_t *err)
{
    if (anchor)
        return at(err, path, line, col, "anchors are not allowed (&%.80s)",
                  (const char *)anchor);
    if (tag)
        return at(err, path, line, col, "tags are not allowed (%.80s)",
                  (const char *)tag);
    return BP_OK;
}

static bp_status parse_tree(const char *path, const char *text, size_t len,
                            bp_ynode_t **root, bp_error_t *err)
{
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps))
        return bp_error_set(err, BP_ENOMEM, "out of memory reading '%s'", path);
    yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
    bp_ynode_t *stack[MAX_DEPTH];
    int depth = 0, ndocs = 0;
    bool done = false;
    bp_status st = BP_OK;
    *root = NULL;
    while (!st && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            st = syntax_error(path, &ps, text, len, err);
            break;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        bp_ynode_t *parent = depth ? stack[depth - 1] : NULL, *y = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++ndocs > 1)
                st = at(err, path, line, col,
                        "more than one YAML document (a probe file holds one)");
            else if (ev.data.document_start.tag_directives.start !=
                     ev.data.document_start.tag_directives.end)
                st = at(err, path, line, col, "tags are not allowed (%%TAG)");
            break;
        case YAML_ALIAS_EVENT:
            st = at(err, path, line, col, "aliases are not allowed (*%.80s)",
                    (const char *)ev.data.alias.anchor);
            break;
        case YAML_SCALAR_EVENT:
            st = no_anchor_tag(path, line, col, ev.data.scalar.anchor,
                               ev.data.scalar.tag, err);
            if (!st && memchr(ev.data.scalar.value, 0, ev.data.scalar.length))
                st = at(err, path, line, col, "NUL character in a string");
            if (!st && (!(y = calloc(1, sizeof *y)) ||
                        !(y->str = strdup((const char *)ev.data.scalar.value))))
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
            if (!st) {
                y->kind = BP_YN_SCALAR;
                y->line = line;
                y->col = col;
                y->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if ((st = attach(path, parent, y, root, err)) == BP_OK)
                    y = NULL;
            }
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            bool seq = ev.type == YAML_SEQUENCE_START_EVENT;
            st = no_anchor_tag(path, line, col,
                               seq ? ev.data.sequence_start.anchor
                                   : ev.data.mapping_start.anchor,
                               seq ? ev.data.sequence_start.tag
                                   : ev.data.mapping_start.tag,
                               err);
            if (!st && depth >= MAX_DEPTH)
                st = at(err, path, line, col, "nesting deeper than %d levels",
                        MAX_DEPTH);
            if (!st && !(y = calloc(1, sizeof *y)))
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
            if (!st) {
                y->kind = seq ? BP_YN_SEQ : BP_YN_MAP;
                y->line = line;
                y->col = col;
                if ((st = attach(path, parent, y, root, err)) == BP_OK) {
                    stack[depth++] = y;
                    y = NULL;
                }
            }
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0)
                depth--;
            break;
        default:
            break;
        }
        bp_yaml_free(y);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&ps);
    if (st) {
        bp_yaml_free(*root);
        *root = NULL;
    }
    return st;
}

static bp_status read_all(const char *path, char **text, size_t *len,
                          bp_error_t *err)
{
    const char *why;
    FILE *f = bp_safe_fopen(path, &why);
    if (!f)
        return bp_error_set(err, BP_EIO, "cannot open probe '%s': %s", path, why);
    char *buf = malloc(MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, MAX_BYTES + 1, f);
    bool failed = ferror(f);
    int e = errno;
    fclose(f);
    if (failed) {
        free(buf);
        return bp_error_set(err, BP_EIO, "cannot read probe '%s': %s", path,
                            strerror(e));
    }
    if (n > MAX_BYTES) {
        free(buf);
        return bp_error_set(err, BP_EINPUT,
                            "%s:1:1: file too large (more than %d bytes)", path,
                            MAX_BYTES);
    }
    *text = buf;
    *len = n;
    return BP_OK;
}

bp_status bp_yaml_parse(const char *text, size_t len, const char *label,
                        bp_ynode_t **root, bp_error_t *err)
{
    *root = NULL;
    if (len > MAX_BYTES)
        return bp_error_set(err, BP_EINPUT,
                            "%s:1:1: file too large (more than %d bytes)", label,
                            MAX_BYTES);
    return parse_tree(label, text, len, root, err);
}

bp_status bp_yaml_read(const char *path, bp_ynode_t **root, bp_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    *root = NULL;
    bp_status st = read_all(path, &text, &len, err);
    if (st)
        return st;
    st = parse_tree(path, text, len, root, err);
    free(text);
    return st;
}

const bp_ynode_t *bp_yaml_get(const bp_ynode_t *m, const char *key)
{
    for (size_t i = 0; i + 1 < m->n; i += 2)
        if (strcmp(m->kid[i]->str, key) == 0)
            return m->kid[i + 1];
    return NULL;
}

/* ---- numbers ------------------------------------------------------------- */

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static locale_t c_loc;

static void c_locale_init(void)
{
    c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, c_locale_init);
    return c_loc;
}

static size_t span(const char *s, const char *set)
{
    return strspn(s, set);
}

int bp_yaml_number(const char *s, double *v, bool *is_int)
{
    const char *p = s + (*s == '+' || *s == '-');
    static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    if (in_list(p, infs)) {
        *v = *s == '-' ? -INFINITY : INFINITY;
        *is_int = false;
        return 1;
    }
    if (p == s && in_list(p, nans)) {
        *v = NAN;
        *is_int = false;
        return 1;
    }
    const char *q = p;
    bool frac = false, expo = false;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        static const char hex[] = "0123456789abcdefABCDEF";
        size_t nd = span(q += 2, hex);
        q += nd;
        if (*q == '.') {
            frac = true;
            size_t nf = span(++q, hex);
            nd += nf;
            q += nf;
        }
        if (!nd)
            return 0;
        if (*q == 'p' || *q == 'P') {
            expo = true;
            q += q[1] == '+' || q[1] == '-' ? 2 : 1;
            size_t ne = span(q, "0123456789");
            if (!ne)
                return 0;
            q += ne;
        }
    } else {
        size_t nd = span(q, "0123456789");
        q += nd;
        if (*q == '.') {
            frac = true;
            size_t nf = span(++q, "0123456789");
            nd += nf;
            q += nf;
        }
        if (!nd)
            return 0;
        if (*q == 'e' || *q == 'E') {
            expo = true;
            q += q[1] == '+' || q[1] == '-' ? 2 : 1;
            size_t ne = span(q, "0123456789");
            if (!ne)
                return 0;
            q += ne;
        }
    }
    if (*q)
        return 0;
    char *end;
    locale_t loc = c_locale();
    *v = loc ? strtod_l(s, &end, loc) : strtod(s, &end);
    if (*end)
        return 0;
    if (isinf(*v))
        return 2;
    *is_int = !frac && !expo;
    return 1;
}
