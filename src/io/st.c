/* Safetensors reader: the byte pump, gzip and the entry points (see st.h
 * for the rules; st_header.c checks the header).
 *
 * One incremental parser serves memory, plain files and gzip streams: it
 * says where the next bytes must go (the length field, the header, the
 * current tensor's buffer, or a small trap once all claimed data is in)
 * and checks each stage as it completes.  Reading and inflating therefore
 * write straight into the tensors, lengths are checked before anything big
 * is allocated, and the first byte beyond the claimed end stops a gzip
 * bomb. */
#include "st_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "safeopen.h"

bp_status bp_st_fail(bp_st_parser_t *p, uint64_t off, const char *fmt, ...)
{
    char rule[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return bp_error_set(p->err, BP_EINPUT, "%s: %s at byte %" PRIu64 "%s",
                        p->label, rule, off,
                        p->inflated ? " of the inflated stream" : "");
}

/* ---- the byte pump -------------------------------------------------- */

/* Input of unknown length: the buffer *bufp, of which p->have bytes are
 * allocated and all received, doubles (from 64 KiB, up to need). */
static bp_status grow(bp_st_parser_t *p, void **bufp, uint64_t need)
{
    uint64_t cap = p->have ? 2 * p->have : (uint64_t)1 << 16;
    if (cap > need)
        cap = need;
    void *b = realloc(*bufp, (size_t)cap + 1);
    if (!b)
        return bp_error_set(p->err, BP_ENOMEM,
                            "%s: out of memory for %" PRIu64 " bytes",
                            p->label, cap);
    *bufp = b;
    p->have = cap;
    return BP_OK;
}

/* Where the next bytes go, and how many may go there. */
static bp_status dest(bp_st_parser_t *p, unsigned char **ptr, size_t *room)
{
    bp_status st;
    switch (p->stage) {
    case ST_LEN:
        *ptr = p->lenbuf + p->pos;
        *room = (size_t)(8 - p->pos);
        break;
    case ST_HDR: {
        uint64_t at = p->pos - 8;
        if (at == p->have && (st = grow(p, (void **)&p->hdr, p->hlen)))
            return st;
        *ptr = (unsigned char *)p->hdr + at;
        *room = (size_t)(p->have - at);
        break;
    }
    case ST_DATA: {
        bp_st_tensor_t *t = &p->out->t[p->cur];
        uint64_t need = p->ents[p->cur].end - p->ents[p->cur].begin;
        if (p->fill == p->have && (st = grow(p, &t->buf.data, need)))
            return st;
        *ptr = (unsigned char *)t->buf.data + p->fill;
        *room = (size_t)(p->have - p->fill);
        break;
    }
    default:
        *ptr = p->trap;
        *room = sizeof p->trap;
    }
    return BP_OK;
}

static bp_status tensor_done(bp_st_parser_t *p)
{
    const bp_st_ent_t *e = &p->ents[p->cur];
    if (!e->has_crc)
        return BP_OK;
    const bp_st_tensor_t *t = &p->out->t[p->cur];
    uint32_t c =
        (uint32_t)crc32_z(0, t->buf.data, (size_t)(e->end - e->begin));
    if (c != e->crc) {
        return bp_st_crc_error(p->label, p->inflated, 8 + p->hlen + e->begin,
                               t->name, e->crc, c, p->err);
    }
    return BP_OK;
}

/* Moves to the next tensor that still needs bytes, or to ST_END. */
static bp_status next_tensor(bp_st_parser_t *p)
{
    for (; p->cur < p->nents; p->cur++) {
        uint64_t need = p->ents[p->cur].end - p->ents[p->cur].begin;
        if (need) {
            p->fill = 0;
            p->have = p->lazy ? 0 : need;
            return BP_OK;
        }
        bp_status st = tensor_done(p); /* an empty tensor's CRC is 0 */
        if (st)
            return st;
    }
    p->stage = ST_END;
    return BP_OK;
}

/* The length field's rules: at most 100 MB, and within a known length. */
static bp_status head_len(bp_st_parser_t *p)
{
    p->hlen = 0;
    for (int i = 7; i >= 0; i--)
        p->hlen = p->hlen << 8 | p->lenbuf[i];
    if (p->hlen > BP_ST_MAX_HEADER)
        return bp_st_fail(p, 0, "header length %" PRIu64 " exceeds 100 MB",
                          p->hlen);
    if (p->total != UINT64_MAX && 8 + p->hlen > p->total)
        return bp_st_fail(p, 0,
                          "header length %" PRIu64 " runs past the end of "
                          "the %" PRIu64 "-byte file",
                          p->hlen, p->total);
    return BP_OK;
}

static bp_status advance(bp_st_parser_t *p, size_t n)
{
    bp_status st;
    if (n == 0)
        return BP_OK;
    if (p->stage == ST_END)
        return bp_st_fail(p, p->pos,
                          "trailing bytes after the %" PRIu64
                          " data bytes the header claims",
                          p->data_end);
    p->pos += n;
    if (p->stage == ST_LEN && p->pos == 8) {
        if ((st = head_len(p)))
            return st;
        p->have = 0;
        if (!p->lazy) {
            p->hdr = malloc(p->hlen + 1);
            if (!p->hdr)
                return bp_error_set(p->err, BP_ENOMEM,
                                    "%s: out of memory for a %" PRIu64
                                    "-byte header",
                                    p->label, p->hlen);
            p->have = p->hlen;
        }
        p->stage = ST_HDR;
    }
    if (p->stage == ST_HDR && p->pos == 8 + p->hlen) {
        if ((st = bp_st_parse_header(p)))
            return st;
        p->stage = ST_DATA;
        p->cur = 0;
        return next_tensor(p);
    }
    if (p->stage == ST_DATA) {
        p->fill += n;
        if (p->fill == p->ents[p->cur].end - p->ents[p->cur].begin) {
            if ((st = tensor_done(p)))
                return st;
            p->cur++;
            return next_tensor(p);
        }
    }
    return BP_OK;
}

static bp_status finish(bp_st_parser_t *p)
{
    switch (p->stage) {
    case ST_LEN:
        return bp_st_fail(p, p->pos,
                          "input ends before the 8-byte header length");
    case ST_HDR:
        return bp_st_fail(p, p->pos,
                          "input ends inside the %" PRIu64 "-byte header",
                          p->hlen);
    case ST_DATA:
        return bp_st_fail(
            p, p->pos,
            "input ends inside the data: the header claims %" PRIu64
            " data bytes, up to byte %" PRIu64,
            p->data_end, 8 + p->hlen + p->data_end);
    }
    return BP_OK;
}

static void parser_init(bp_st_parser_t *p, const char *label, uint64_t total,
                        bp_st_file_t *out, bp_error_t *err)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->lazy = total == UINT64_MAX;
    p->out = out;
    p->err = err;
    bp_st_init(out);
}

static void parser_done(bp_st_parser_t *p, bp_status st)
{
    for (size_t i = 0; i < p->nents; i++)
        free(p->ents[i].name); /* those not yet handed to out */
    free(p->ents);
    free(p->hdr);
    if (st != BP_OK)
        bp_st_free(p->out);
}

static bp_status feed(bp_st_parser_t *p, const unsigned char *d, size_t n)
{
    while (n) {
        unsigned char *ptr;
        size_t room;
        bp_status st = dest(p, &ptr, &room);
        if (st)
            return st;
        size_t k = n < room ? n : room;
        memcpy(ptr, d, k);
        st = advance(p, k);
        if (st)
            return st;
        d += k;
        n -= k;
    }
    return BP_OK;
}

/* ---- gzip ----------------------------------------------------------- */

typedef struct {
    int fd; /* -1: all input is in mem */
    const unsigned char *mem;
    size_t memlen;
    unsigned char buf[1 << 16];
} src_t;

/* Gives z more compressed input; returns false at the end of input. */
static bool src_more(src_t *s, z_stream *z, bp_status *st, bp_st_parser_t *p)
{
    *st = BP_OK;
    if (s->fd < 0) {
        if (!s->memlen)
            return false;
        size_t k = s->memlen < (1u << 30) ? s->memlen : (1u << 30);
        z->next_in = (unsigned char *)s->mem;
        z->avail_in = (uInt)k;
        s->mem += k;
        s->memlen -= k;
        return true;
    }
    for (;;) {
        ssize_t r = read(s->fd, s->buf, sizeof s->buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *st = bp_error_set(p->err, BP_EIO, "%s: %s", p->label,
                               strerror(errno));
            return false;
        }
        z->next_in = s->buf;
        z->avail_in = (uInt)r;
        return r > 0;
    }
}

static bp_status inflate_all(bp_st_parser_t *p, src_t *s,
                             const unsigned char *pre, size_t npre)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return bp_error_set(p->err, BP_ENOMEM, "%s: cannot start inflate",
                            p->label);
    p->inflated = true;
    p->total = UINT64_MAX;
    p->lazy = true;
    z.next_in = (unsigned char *)pre;
    z.avail_in = (uInt)npre;
    bp_status st = BP_OK;
    bool eof = false;
    for (;;) {
        if (z.avail_in == 0 && !eof) {
            eof = !src_more(s, &z, &st, p);
            if (st)
                break;
        }
        unsigned char *ptr;
        size_t room;
        if ((st = dest(p, &ptr, &room)))
            break;
        uInt give = room < (1u << 30) ? (uInt)room : (1u << 30);
        z.next_out = ptr;
        z.avail_out = give;
        int r = inflate(&z, Z_NO_FLUSH);
        if ((st = advance(p, give - z.avail_out)))
            break;
        if (r == Z_STREAM_END) {
            while (z.avail_in == 0 && !eof)
                eof = !src_more(s, &z, &st, p);
            if (st)
                break;
            if (z.avail_in)
                st = bp_error_set(p->err, BP_EINPUT,
                                  "%s: trailing garbage after the gzip "
                                  "stream at compressed byte %lu",
                                  p->label, z.total_in);
            else
                st = finish(p);
            break;
        }
        if (r == Z_BUF_ERROR && eof && z.avail_in == 0) {
            st = bp_error_set(p->err, BP_EINPUT,
                              "%s: gzip stream truncated at compressed "
                              "byte %lu",
                              p->label, z.total_in);
            break;
        }
        if (r != Z_OK && r != Z_BUF_ERROR) {
            st = bp_error_set(p->err, BP_EINPUT,
                              "%s: corrupt gzip stream (%s) at compressed "
                              "byte %lu",
                              p->label, z.msg ? z.msg : zError(r), z.total_in);
            break;
        }
    }
    inflateEnd(&z);
    return st;
}

/* ---- entry points --------------------------------------------------- */

bool bp_st_is_gzip(const void *data, size_t len)
{
    const unsigned char *d = data;
    return len >= 2 && d[0] == 0x1f && d[1] == 0x8b;
}

bp_status bp_st_parse(const void *data, size_t len, const char *label,
                      bp_st_file_t *out, bp_error_t *err)
{
    bp_st_parser_t p;
    bp_status st;
    parser_init(&p, label, len, out, err);
    if (bp_st_is_gzip(data, len)) {
        src_t *s = malloc(sizeof *s);
        if (!s)
            return bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
        s->fd = -1;
        s->mem = data;
        s->memlen = len;
        st = inflate_all(&p, s, NULL, 0);
        free(s);
    } else {
        st = feed(&p, data, len);
        if (!st)
            st = finish(&p);
    }
    parser_done(&p, st);
    return st;
}

static bp_status read_plain(bp_st_parser_t *p, int fd,
                            const unsigned char *pre, size_t npre)
{
    bp_status st = feed(p, pre, npre);
    while (!st) {
        unsigned char *ptr;
        size_t room;
        if ((st = dest(p, &ptr, &room)))
            break;
        ssize_t r = read(fd, ptr, room < (1u << 30) ? room : (1u << 30));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return bp_error_set(p->err, BP_EIO, "%s: %s", p->label,
                                strerror(errno));
        if (r == 0)
            return finish(p);
        st = advance(p, (size_t)r);
    }
    return st;
}

/* Reads the file open as fd (closed here), named path in messages. */
static bp_status read_fd(int fd, const char *path, bp_st_file_t *out, bp_error_t *err)
{
    bp_status st = BP_OK;
    char *label = malloc(strlen(path) + 16);
    src_t *s = malloc(sizeof *s);
    if (!label || !s) {
        st = bp_error_set(err, BP_ENOMEM, "cannot read '%s': out of memory",
                          path);
        goto done;
    }
    sprintf(label, "cannot read '%s'", path);
    struct stat sb;
    uint64_t total = UINT64_MAX;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
        total = (uint64_t)sb.st_size;
    unsigned char magic[2];
    size_t nm = 0;
    while (nm < 2) {
        ssize_t r = read(fd, magic + nm, 2 - nm);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = bp_error_set(err, BP_EIO, "%s: %s", label, strerror(errno));
            goto done;
        }
        if (r == 0)
            break;
        nm += (size_t)r;
    }
    bp_st_parser_t p;
    parser_init(&p, label, total, out, err);
    if (bp_st_is_gzip(magic, nm)) {
        s->fd = fd;
        st = inflate_all(&p, s, magic, nm);
    } else {
        st = read_plain(&p, fd, magic, nm);
    }
    parser_done(&p, st);
done:
    free(s);
    free(label);
    close(fd);
    return st;
}

/* A file refused by a rule (safeopen.h) is bad input; one the system
 * cannot open, an I/O error. */
static bp_status open_failed(const char *path, const char *why, bp_error_t *err)
{
    bool rule = errno == EACCES || errno == EXDEV || errno == ELOOP || errno == EINVAL ||
                errno == ENOTDIR;
    return bp_error_set(err, rule ? BP_EINPUT : BP_EIO, "cannot open '%s': %s", path, why);
}

bp_status bp_st_read(const char *path, bp_st_file_t *out, bp_error_t *err)
{
    bp_st_init(out);
    const char *why;
    int fd = bp_safe_path(path, &why);
    if (fd < 0)
        return open_failed(path, why, err);
    return read_fd(fd, path, out, err);
}

bp_status bp_st_read_in(const char *dir, const char *rel, bp_st_file_t *out,
                        bp_error_t *err)
{
    bp_st_init(out);
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
        return bp_error_set(err, BP_EINPUT, "path too long under '%s'", dir);
    const char *why;
    int fd = bp_safe_in_dir(dir, rel, &why);
    if (fd < 0)
        return open_failed(path, why, err);
    return read_fd(fd, path, out, err);
}

/* ---- layouts (no data) ---------------------------------------------- */

bp_status bp_st_head_len(const unsigned char len8[8], uint64_t total,
                         const char *label, bool inflated, uint64_t *hlen,
                         bp_error_t *err)
{
    bp_st_parser_t p;
    bp_st_file_t none;
    parser_init(&p, label, total, &none, err);
    p.inflated = inflated;
    memcpy(p.lenbuf, len8, 8);
    bp_status st = head_len(&p);
    *hlen = p.hlen;
    return st;
}

bp_status bp_st_layout_parse(const char *hdr, uint64_t hlen, uint64_t total,
                             const char *label, bool inflated,
                             bool allow_unknown, bp_st_layout_t *out,
                             bp_error_t *err)
{
    bp_st_parser_t p;
    bp_st_file_t none;
    memset(out, 0, sizeof *out);
    parser_init(&p, label, total, &none, err);
    p.inflated = inflated;
    p.layout_only = true;
    p.allow_unknown = allow_unknown;
    p.hdr = (char *)hdr;
    p.hlen = hlen;
    bp_status st = bp_st_parse_header(&p);
    p.hdr = NULL; /* the caller's */
    if (!st) {
        out->e = calloc(p.nents ? p.nents : 1, sizeof *out->e);
        if (!out->e)
            st = bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
    }
    if (!st) {
        for (size_t i = 0; i < p.nents; i++) {
            const bp_st_ent_t *e = &p.ents[i];
            bp_st_entry_t *o = &out->e[i];
            o->name = e->name;
            p.ents[i].name = NULL;
            memcpy(o->dtype, e->dtname, sizeof o->dtype);
            o->known = e->known;
            o->dt = e->dt;
            o->ndim = e->ndim;
            memcpy(o->shape, e->shape, sizeof o->shape);
            o->begin = e->begin;
            o->end = e->end;
            o->has_crc = e->has_crc;
            o->crc = e->crc;
        }
        out->n = p.nents;
        out->meta = p.layout_meta;
        p.layout_meta = NULL;
        out->data_start = 8 + hlen;
        out->data_len = p.data_end;
    }
    json_decref(p.layout_meta);
    parser_done(&p, BP_OK);
    if (st)
        bp_st_layout_free(out);
    return st;
}

void bp_st_layout_free(bp_st_layout_t *l)
{
    for (size_t i = 0; l->e && i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    json_decref(l->meta);
    memset(l, 0, sizeof *l);
}

bp_status bp_st_stream_error(const char *label, bool inflated, uint64_t pos,
                             uint64_t hlen, uint64_t data_end, bp_error_t *err)
{
    bp_st_parser_t p;
    bp_st_file_t none;
    parser_init(&p, label, UINT64_MAX, &none, err);
    p.inflated = inflated;
    p.hlen = hlen;
    p.data_end = data_end;
    uint64_t end = 8 + hlen + data_end;
    if (pos > end)
        return bp_st_fail(&p, end,
                          "trailing bytes after the %" PRIu64
                          " data bytes the header claims", data_end);
    p.pos = pos;
    p.stage = pos < 8 ? ST_LEN : pos < 8 + hlen ? ST_HDR : ST_DATA;
    return finish(&p);
}

bp_status bp_st_crc_error(const char *label, bool inflated, uint64_t off, const char *name,
                          uint32_t stored, uint32_t computed, bp_error_t *err)
{
    bp_st_parser_t p;
    bp_st_file_t none;
    char q[256];
    parser_init(&p, label, UINT64_MAX, &none, err);
    p.inflated = inflated;
    bp_st_quote(name, q, sizeof q);
    return bp_st_fail(&p, off,
                      "CRC mismatch for tensor '%s' (stored 0x%08" PRIx32
                      ", computed 0x%08" PRIx32 ")",
                      q, stored, computed);
}
