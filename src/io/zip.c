/* Zip directories (see zip.h).  Every field is read through one bounds-
 * checked accessor, from a file (pread) or from memory. */
#include "zip.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOC64 0x07064b50u

typedef struct {
    int fd;                   /* -1: mem */
    const unsigned char *mem;
    uint64_t size;
    const char *label;
    bp_error_t *err;
} src_t;

static bp_status zfail(const src_t *s, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bp_status zfail(const src_t *s, uint64_t off, const char *fmt, ...)
{
    char rule[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return bp_error_set(s->err, BP_EINPUT, "%s: %s at byte %" PRIu64, s->label, rule, off);
}

/* n bytes at off, all inside the file; false otherwise. */
static bool get(const src_t *s, uint64_t off, void *buf, size_t n)
{
    if (off > s->size || n > s->size - off)
        return false;
    if (s->fd < 0) {
        memcpy(buf, s->mem + off, n);
        return true;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    return true;
}

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t u64(const unsigned char *p) { return u32(p) | (uint64_t)u32(p + 4) << 32; }

static const char *method_name(unsigned m)
{
    switch (m) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "LZMA";
    case 93: return "zstd";
    case 95: return "xz";
    case 99: return "AES encryption";
    default: return "unknown";
    }
}

/* The end record (and zip64's): where the central directory is. */
static bp_status find_end(const src_t *s, uint64_t *cd_off, uint64_t *cd_size,
                          uint64_t *count, uint64_t *end_at)
{
    unsigned char buf[65536 + 22];
    uint64_t span = s->size < sizeof buf ? s->size : sizeof buf;
    if (s->size < 22 || !get(s, s->size - span, buf, (size_t)span))
        return zfail(s, 0, "no end of central directory record (not a zip, or cut short)");
    int64_t at = -1;
    for (int64_t i = (int64_t)span - 22; i >= 0; i--)
        if (u32(buf + i) == SIG_END && i + 22 + u16(buf + i + 20) == (int64_t)span) {
            at = i;
            break;
        }
    if (at < 0)
        return zfail(s, s->size, "no end of central directory record (not a zip, or cut "
                                 "short)");
    const unsigned char *e = buf + at;
    *end_at = s->size - span + (uint64_t)at;
    if (u16(e + 4) != 0 || u16(e + 6) != 0 || u16(e + 8) != u16(e + 10))
        return zfail(s, *end_at, "a zip split over several disks is not read");
    *count = u16(e + 10);
    *cd_size = u32(e + 12);
    *cd_off = u32(e + 16);
    if (*count != 0xffff && *cd_size != 0xffffffffu && *cd_off != 0xffffffffu)
        return BP_OK;
    /* zip64: the locator sits right before the end record.  Without one,
     * a count of exactly 0xffff is the count (Python's zipfile writes
     * 65,535 members so, and reads them back so); all-ones offsets or
     * sizes cannot be. */
    unsigned char loc[20], rec[56];
    bool has_loc = *end_at >= 20 && get(s, *end_at - 20, loc, 20) && u32(loc) == SIG_LOC64;
    if (!has_loc && *cd_size != 0xffffffffu && *cd_off != 0xffffffffu)
        return BP_OK;
    if (!has_loc)
        return zfail(s, *end_at, "the end record says zip64 but no zip64 locator precedes it");
    uint64_t r = u64(loc + 8);
    if (u32(loc + 4) != 0 || u32(loc + 16) != 1)
        return zfail(s, *end_at - 20, "a zip split over several disks is not read");
    if (r > *end_at - 20 || !get(s, r, rec, 56) || u32(rec) != SIG_END64)
        return zfail(s, *end_at - 20, "the zip64 locator points at %" PRIu64 ", where no "
                     "zip64 end record is", r);
    if (u32(rec + 16) != 0 || u32(rec + 20) != 0 || u64(rec + 24) != u64(rec + 32))
        return zfail(s, r, "a zip split over several disks is not read");
    *count = u64(rec + 32);
    *cd_size = u64(rec + 40);
    *cd_off = u64(rec + 48);
    *end_at = r;
    return BP_OK;
}

static int cmp_off(const void *a, const void *b)
{
    const bp_zip_member_t *x = *(bp_zip_member_t *const *)a, *y = *(bp_zip_member_t *const *)b;
    return (x->data_off > y->data_off) - (x->data_off < y->data_off);
}

/* One central entry at *at: fills m (name malloc'd) and its local header
 * offset; advances *at. */
static bp_status entry(const src_t *s, uint64_t *at, uint64_t cd_end, bp_zip_member_t *m,
                       uint64_t *local)
{
    unsigned char h[46];
    uint64_t here = *at;
    if (here + 46 > cd_end || !get(s, here, h, 46) || u32(h) != SIG_CENTRAL)
        return zfail(s, here, "central directory entry %s", here + 46 > cd_end
                     ? "runs past the directory's end" : "without its signature");
    unsigned flags = u16(h + 8), method = u16(h + 10), nlen = u16(h + 28), xlen = u16(h + 30),
             clen = u16(h + 32);
    if (here + 46 + nlen + xlen + clen > cd_end)
        return zfail(s, here, "central directory entry runs past the directory's end");
    if (nlen == 0 || nlen > BP_ZIP_MAX_NAME)
        return zfail(s, here + 28, "member name of %u bytes (1 to %d)", nlen, BP_ZIP_MAX_NAME);
    if (!(m->name = malloc(nlen + 1)))
        return bp_error_set(s->err, BP_ENOMEM, "%s: out of memory", s->label);
    if (!get(s, here + 46, m->name, nlen))
        return zfail(s, here + 46, "member name outside the file");
    m->name[nlen] = '\0';
    if (strlen(m->name) != nlen)
        return zfail(s, here + 46, "member name holds a NUL byte");
    if (flags & 1)
        return zfail(s, here + 8, "member '%s' is encrypted", m->name);
    if (method != 0 && method != 8)
        return zfail(s, here + 10, "member '%s' uses compression method %u (%s); only stored "
                     "(0) and deflate (8) are read", m->name, method, method_name(method));
    m->deflate = method == 8;
    m->crc = u32(h + 16);
    m->csize = u32(h + 20);
    m->usize = u32(h + 24);
    *local = u32(h + 42);
    bool need_u = m->usize == 0xffffffffu, need_c = m->csize == 0xffffffffu,
         need_o = *local == 0xffffffffu;
    /* zip64 extra: the 64-bit values of the fields set to all ones, in order */
    uint64_t x = here + 46 + nlen, xend = x + xlen;
    while ((need_u || need_c || need_o) && x + 4 <= xend) {
        unsigned char xh[4], v[24];
        get(s, x, xh, 4);
        unsigned id = u16(xh), sz = u16(xh + 2);
        if (x + 4 + sz > xend)
            return zfail(s, x, "extra field of member '%s' runs past its entry", m->name);
        if (id == 1) {
            size_t want = 8u * (need_u + need_c + need_o), k = 0;
            if (sz < want || !get(s, x + 4, v, want))
                return zfail(s, x, "zip64 extra field of member '%s' is too short", m->name);
            if (need_u)
                m->usize = u64(v + 8 * k++);
            if (need_c)
                m->csize = u64(v + 8 * k++);
            if (need_o)
                *local = u64(v + 8 * k++);
            need_u = need_c = need_o = false;
        }
        x += 4 + sz;
    }
    if (need_u || need_c || need_o)
        return zfail(s, here, "member '%s' needs a zip64 extra field and has none", m->name);
    if (!m->deflate && m->csize != m->usize)
        return zfail(s, here + 20, "stored member '%s' has %" PRIu64 " bytes compressed but "
                     "%" PRIu64 " not", m->name, m->csize, m->usize);
    *at = here + 46 + nlen + xlen + clen;
    return BP_OK;
}

/* The member's local header: same name, data inside the file. */
static bp_status local_header(const src_t *s, uint64_t local, uint64_t cd_off,
                              bp_zip_member_t *m)
{
    unsigned char h[30];
    if (local >= cd_off || !get(s, local, h, 30) || u32(h) != SIG_LOCAL)
        return zfail(s, local, "no local header for member '%s' where the directory says",
                     m->name);
    unsigned nlen = u16(h + 26), xlen = u16(h + 28);
    char name[BP_ZIP_MAX_NAME + 1];
    if (nlen != strlen(m->name) || !get(s, local + 30, name, nlen) ||
        memcmp(name, m->name, nlen) != 0)
        return zfail(s, local + 26, "local header names another member than '%s'", m->name);
    m->data_off = local + 30 + nlen + xlen;
    if (m->data_off > cd_off || m->csize > cd_off - m->data_off)
        return zfail(s, local, "data of member '%s' (%" PRIu64 " bytes) runs into the "
                     "central directory or past the file", m->name, m->csize);
    return BP_OK;
}

static bp_status parse(const src_t *s, bp_zip_t *out)
{
    memset(out, 0, sizeof *out);
    uint64_t cd_off, cd_size, count, end_at;
    bp_status st = find_end(s, &cd_off, &cd_size, &count, &end_at);
    if (st)
        return st;
    if (cd_off > end_at || cd_size > end_at - cd_off)
        return zfail(s, end_at, "the central directory (%" PRIu64 " bytes at %" PRIu64
                     ") is not inside the file before its end record", cd_size, cd_off);
    if (count > BP_ZIP_MAX_MEMBERS || count > cd_size / 46)
        return zfail(s, end_at, "%" PRIu64 " members claimed (at most %d, and 46 bytes "
                     "each)", count, BP_ZIP_MAX_MEMBERS);
    out->m = calloc(count ? count : 1, sizeof *out->m);
    uint64_t *locals = calloc(count ? count : 1, sizeof *locals);
    bp_zip_member_t **order = calloc(count ? count : 1, sizeof *order);
    if (!out->m || !locals || !order)
        st = bp_error_set(s->err, BP_ENOMEM, "%s: out of memory", s->label);
    uint64_t at = cd_off;
    for (uint64_t i = 0; !st && i < count; i++) {
        st = entry(s, &at, cd_off + cd_size, &out->m[i], &locals[i]);
        out->n = (size_t)i + 1;
        if (!st)
            st = local_header(s, locals[i], cd_off, &out->m[i]);
    }
    if (!st && at != cd_off + cd_size)
        st = zfail(s, at, "%" PRIu64 " bytes of the central directory follow its %" PRIu64
                   " entries", cd_off + cd_size - at, count);
    /* no two members share data: sorted by offset, each ends before the
     * next one's local header */
    for (size_t i = 0; !st && i < out->n; i++)
        order[i] = &out->m[i];
    if (!st)
        qsort(order, out->n, sizeof *order, cmp_off);
    for (size_t i = 1; !st && i < out->n; i++) {
        const bp_zip_member_t *p = order[i - 1], *q = order[i];
        uint64_t qlocal = locals[q - out->m];
        if (p->data_off + p->csize > qlocal)
            st = zfail(s, qlocal, "members '%s' and '%s' overlap", p->name, q->name);
    }
    free(locals);
    free(order);
    if (st)
        bp_zip_free(out);
    return st;
}

bp_status bp_zip_read(int fd, uint64_t size, const char *label, bp_zip_t *out,
                      bp_error_t *err)
{
    src_t s = {fd, NULL, size, label, err};
    return parse(&s, out);
}

bp_status bp_zip_parse(const unsigned char *data, size_t len, const char *label,
                       bp_zip_t *out, bp_error_t *err)
{
    src_t s = {-1, data, len, label, err};
    return parse(&s, out);
}

void bp_zip_free(bp_zip_t *z)
{
    for (size_t i = 0; z->m && i < z->n; i++)
        free(z->m[i].name);
    free(z->m);
    memset(z, 0, sizeof *z);
}
