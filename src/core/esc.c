/* Escaping data inside a line of text output (see esc.h). */
#include "esc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The escape of the byte at s (s[0], s[1] for a C1 control) into e (room
 * for 9), its length written; 0 when the byte stands as it is.  *used is
 * how many bytes of s it takes. */
static size_t esc1(const unsigned char *s, bool first, char *e, size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    *used = 1;
    unsigned c = s[0];
    if (c == '\n' || c == '\r' || c == '\t') {
        e[0] = '\\';
        e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        return 2;
    }
    if (c < 0x20 || c == 0x7f || (first && c == ':')) {
        e[0] = '\\', e[1] = 'x', e[2] = hex[c >> 4], e[3] = hex[c & 15];
        return 4;
    }
    if (c == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) { /* U+0080..U+009F */
        e[0] = '\\', e[1] = 'x', e[2] = 'c', e[3] = '2';
        e[4] = '\\', e[5] = 'x', e[6] = hex[s[1] >> 4], e[7] = hex[s[1] & 15];
        *used = 2;
        return 8;
    }
    return 0;
}

/* Index of the ':' that must be escaped (a leading ':' after blanks), or
 * SIZE_MAX.  Not only "::": a name ":" then a writer's own ": " would make
 * a line start "::" too. */
static size_t lead_colon(const char *s)
{
    size_t i = strspn(s, " ");
    return s[i] == ':' ? i : (size_t)-1;
}

bool bp_esc_needed(const char *s)
{
    if (!s)
        return false;
    if (lead_colon(s) != (size_t)-1)
        return true;
    char e[9];
    size_t used;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (esc1(p, false, e, &used))
            return true;
    return false;
}

/* Calls put(ctx, bytes, n, whole) for each piece of s escaped: whole for an
 * escape, which must not be cut in two. */
typedef void put_fn(void *ctx, const char *p, size_t len, bool whole);

static void walk(const char *s, put_fn *put, void *ctx)
{
    if (!s)
        return;
    size_t colon = lead_colon(s), i = 0, run = 0;
    char e[9];
    while (s[i]) {
        size_t used, k = esc1((const unsigned char *)s + i, i == colon, e, &used);
        if (!k) {
            i++;
            run++;
            continue;
        }
        if (run)
            put(ctx, s + i - run, run, false);
        put(ctx, e, k, true);
        i += used;
        run = 0;
    }
    if (run)
        put(ctx, s + i - run, run, false);
}

typedef struct {
    char *out;
    size_t n, k;
    bool cut;
} sbuf_t;

/* Keeps room for "..." and the NUL; a run of plain bytes is cut where a
 * UTF-8 character starts, an escape only whole. */
static void put_buf(void *vb, const char *p, size_t len, bool whole)
{
    sbuf_t *b = vb;
    if (b->cut)
        return;
    if (b->k + len + 4 > b->n) {
        size_t room = b->n - 4 - b->k;
        if (!whole) {
            while (room && ((unsigned char)p[room] & 0xc0) == 0x80)
                room--;
            memcpy(b->out + b->k, p, room);
            b->k += room;
        }
        b->cut = true;
        return;
    }
    memcpy(b->out + b->k, p, len);
    b->k += len;
}

char *bp_esc_str(const char *s, char *out, size_t n)
{
    if (!n)
        return out;
    sbuf_t b = {out, n, 0, false};
    if (n >= 4)
        walk(s, put_buf, &b);
    if (b.cut)
        memcpy(out + b.k, "...", 3), b.k += 3;
    out[b.k] = '\0';
    return out;
}

static void put_len(void *vn, const char *p, size_t len, bool whole)
{
    (void)p;
    (void)whole;
    *(size_t *)vn += len;
}

char *bp_esc_dup(const char *s)
{
    size_t len = 0;
    walk(s, put_len, &len);
    char *out = malloc(len + 4);
    return out ? bp_esc_str(s, out, len + 4) : NULL;
}

static void put_file(void *f, const char *p, size_t len, bool whole)
{
    (void)whole;
    fwrite(p, 1, len, f);
}

void bp_esc_put(FILE *f, const char *s)
{
    walk(s, put_file, f);
}

void bp_esc_vprintf(FILE *f, const char *fmt, va_list ap)
{
    char small[1024], *msg = small;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= 0 && (size_t)len >= sizeof small && (msg = malloc((size_t)len + 1)))
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    va_end(again);
    if (len < 0)
        return;
    if (!msg)
        msg = small, len = (int)strlen(small);
    bool nl = len && msg[len - 1] == '\n';
    if (nl)
        msg[len - 1] = '\0';
    bp_esc_put(f, msg);
    if (nl)
        fputc('\n', f);
    if (msg != small)
        free(msg);
}

void bp_esc_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bp_esc_vprintf(f, fmt, ap);
    va_end(ap);
}
