/* Windows over mapped files and inflated streams (see tread.h). */
#include "tread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#define INBUF ((size_t)1 << 16)
static size_t map_bytes = BP_TREAD_MAP_MAX;

void bp_tread_set_map(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    bytes = bytes < BP_TREAD_WINDOW ? BP_TREAD_WINDOW
            : bytes > BP_TREAD_MAP_MAX ? BP_TREAD_MAP_MAX : bytes;
    map_bytes = bytes - bytes % page;
}

struct bp_tread {
    char *label;
    int fd; /* borrowed */
    bp_tsrc_t src;
    /* mapped: the current window */
    unsigned char *map;
    size_t maplen;
    uint64_t mapoff; /* file offset of map (page-aligned) */
    /* streams */
    z_stream z;
    bool zinit, zend;
    bool ineof;      /* every compressed byte taken from the file */
    uint64_t cpos;   /* compressed bytes taken from the file */
    unsigned char *in;
    unsigned char *buf; /* content [bstart, bstart + blen) */
    uint64_t bstart;
    size_t blen;
};

bool bp_tread_random(const bp_tsrc_t *src)
{
    return src->kind == BP_TF_MAP;
}

static bp_status io_fail(bp_tread_t *r, const char *what, bp_error_t *err)
{
    return bp_error_set(err, BP_EIO, "%s: %s: %s", r->label, what, strerror(errno));
}

static bp_status z_start(bp_tread_t *r, bp_error_t *err)
{
    if (r->zinit)
        inflateEnd(&r->z);
    memset(&r->z, 0, sizeof r->z);
    int wbits = r->src.kind == BP_TF_GZIP ? 16 + MAX_WBITS : -MAX_WBITS;
    if (inflateInit2(&r->z, wbits) != Z_OK) {
        r->zinit = false;
        return bp_error_set(err, BP_ENOMEM, "%s: cannot start inflate", r->label);
    }
    r->zinit = true;
    r->zend = false;
    r->ineof = false;
    r->cpos = 0;
    r->bstart = 0;
    r->blen = 0;
    return BP_OK;
}

bp_status bp_tread_open(int fd, const char *label, const bp_tsrc_t *src,
                        bp_tread_t **out, bp_error_t *err)
{
    *out = NULL;
    bp_tread_t *r = calloc(1, sizeof *r);
    if (!r || !(r->label = strdup(label))) {
        free(r);
        return bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
    }
    r->src = *src;
    r->fd = fd;
    bp_status st = BP_OK;
    if (src->kind == BP_TF_MAP)
        (void)posix_fadvise(r->fd, (off_t)src->start, (off_t)src->ulen,
                            POSIX_FADV_SEQUENTIAL);
    else if (!(r->in = malloc(INBUF)) || !(r->buf = malloc(BP_TREAD_WINDOW)))
        st = bp_error_set(err, BP_ENOMEM, "%s: out of memory", label);
    else
        st = z_start(r, err);
    if (st) {
        bp_tread_close(r);
        return st;
    }
    *out = r;
    return BP_OK;
}

void bp_tread_close(bp_tread_t *r)
{
    if (!r)
        return;
    if (r->map)
        munmap(r->map, r->maplen);
    if (r->zinit)
        inflateEnd(&r->z);
    free(r->in);
    free(r->buf);
    free(r->label);
    free(r);
}

/* ---- mapped sources --------------------------------------------------- */

static bp_status map_get(bp_tread_t *r, uint64_t off, size_t len, const unsigned char **p,
                         size_t *got, bp_error_t *err)
{
    uint64_t end = r->src.ulen;
    *got = off >= end ? 0 : end - off < len ? (size_t)(end - off) : len;
    if (*got == 0) {
        *p = NULL;
        return BP_OK;
    }
    uint64_t at = r->src.start + off;
    if (!(r->map && at >= r->mapoff && at + *got <= r->mapoff + r->maplen)) {
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        if (r->map)
            munmap(r->map, r->maplen);
        r->map = NULL;
        r->mapoff = at - at % page;
        uint64_t fend = r->src.start + end;
        uint64_t want = (at - r->mapoff) + (map_bytes > len ? map_bytes : len);
        r->maplen = (size_t)(fend - r->mapoff < want ? fend - r->mapoff : want);
        /* Faulted in as compared, the reading ahead left to the kernel
         * (the file is marked sequential at open).  Not MAP_POPULATE: a
         * populated window waits for all its pages before its first is
         * compared.  Neither MADV_SEQUENTIAL nor POSIX_FADV_WILLNEED of
         * the next windows: both made the kernel cache the file in small
         * folios, mapped 64 KiB a fault (33,000 faults and 0.6 s of
         * system CPU for a cold 1 GiB pair, against 2,700 and none
         * without; BENCHMARKS.md, "Kernel read-ahead only"). */
        void *m = mmap(NULL, r->maplen, PROT_READ, MAP_PRIVATE, r->fd, (off_t)r->mapoff);
        if (m == MAP_FAILED)
            return io_fail(r, "cannot map", err);
        r->map = m;
    }
    *p = r->map + (at - r->mapoff);
    return BP_OK;
}

/* ---- streams ---------------------------------------------------------- */

/* Inflates up to cap bytes into dst; fewer only at the stream's end.  The
 * stream is truncated only when inflate can make no progress with all of
 * the compressed bytes taken: having taken them, it may still hold output
 * for a full buffer (a long run of zeros ends in a few bytes). */
static bp_status z_fill(bp_tread_t *r, unsigned char *dst, size_t cap, size_t *made,
                        bp_error_t *err)
{
    *made = 0;
    while (*made < cap && !r->zend) {
        if (r->z.avail_in == 0 && !r->ineof) {
            uint64_t left = r->src.kind == BP_TF_DEFLATE ? r->src.clen - r->cpos : INBUF;
            size_t want = left < INBUF ? (size_t)left : INBUF;
            ssize_t k = want ? pread(r->fd, r->in, want, (off_t)(r->src.start + r->cpos)) : 0;
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return io_fail(r, "cannot read", err);
            r->ineof = k == 0;
            r->cpos += (uint64_t)k;
            r->z.next_in = r->in;
            r->z.avail_in = (uInt)k;
        }
        r->z.next_out = dst + *made;
        r->z.avail_out = (uInt)(cap - *made);
        size_t before = *made;
        int zr = inflate(&r->z, Z_NO_FLUSH);
        *made = cap - r->z.avail_out;
        if (zr == Z_STREAM_END) {
            r->zend = true;
            break;
        }
        if ((zr == Z_OK || zr == Z_BUF_ERROR) && *made == before && r->z.avail_in == 0 &&
            r->ineof)
            return bp_error_set(err, BP_EINPUT,
                                "%s: %s stream truncated at compressed byte %lu",
                                r->label,
                                r->src.kind == BP_TF_GZIP ? "gzip" : "deflate",
                                r->z.total_in);
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return bp_error_set(err, BP_EINPUT,
                                "%s: corrupt %s stream (%s) at compressed byte %lu",
                                r->label, r->src.kind == BP_TF_GZIP ? "gzip" : "deflate",
                                r->z.msg ? r->z.msg : zError(zr), r->z.total_in);
    }
    return BP_OK;
}

static bp_status z_get(bp_tread_t *r, uint64_t off, size_t len, const unsigned char **p,
                       size_t *got, bp_error_t *err)
{
    bp_status st;
    if (off < r->bstart && (st = z_start(r, err)))
        return st;
    /* drop what lies before off; inflate on until off is in the buffer or
     * right after it */
    while (r->bstart + r->blen < off && !r->zend) {
        r->bstart += r->blen;
        r->blen = 0;
        uint64_t gap = off - r->bstart;
        if ((st = z_fill(r, r->buf, gap < BP_TREAD_WINDOW ? (size_t)gap : BP_TREAD_WINDOW,
                         &r->blen, err)))
            return st;
    }
    if (off > r->bstart) {
        size_t drop = off - r->bstart < r->blen ? (size_t)(off - r->bstart) : r->blen;
        memmove(r->buf, r->buf + drop, r->blen - drop);
        r->blen -= drop;
        r->bstart += drop;
    }
    if (r->blen < len && !r->zend) {
        size_t made;
        if ((st = z_fill(r, r->buf + r->blen, len - r->blen, &made, err)))
            return st;
        r->blen += made;
    }
    *got = off < r->bstart ? 0 : r->blen < len ? r->blen : len;
    *p = r->buf;
    return BP_OK;
}

bp_status bp_tread_get(bp_tread_t *r, uint64_t off, size_t len, const unsigned char **p,
                       size_t *got, bp_error_t *err)
{
    if (len > BP_TREAD_WINDOW)
        return bp_error_set(err, BP_EINTERNAL, "%s: read of %zu bytes", r->label, len);
    if (r->src.kind == BP_TF_MAP)
        return map_get(r, off, len, p, got, err);
    return z_get(r, off, len, p, got, err);
}

bp_status bp_tread_finish(bp_tread_t *r, uint64_t limit, uint64_t *len, bp_error_t *err)
{
    if (r->src.kind == BP_TF_MAP) {
        *len = r->src.ulen;
        return BP_OK;
    }
    bp_status st;
    /* on from the end of what was read, up to one byte beyond limit */
    uint64_t at = r->bstart + r->blen;
    while (!r->zend && at <= limit) {
        uint64_t room = limit + 1 - at;
        size_t made;
        if ((st = z_fill(r, r->buf, room < BP_TREAD_WINDOW ? (size_t)room : BP_TREAD_WINDOW,
                         &made, err)))
            return st;
        r->bstart = at;
        r->blen = made;
        at += made;
    }
    *len = at;
    if (!r->zend)
        return BP_OK; /* past limit: the caller says so */
    /* nothing may follow the stream */
    bool more = r->z.avail_in > 0;
    if (!more && r->src.kind == BP_TF_GZIP) {
        unsigned char c;
        ssize_t k = pread(r->fd, &c, 1, (off_t)(r->src.start + r->cpos));
        more = k > 0;
    }
    if (!more && r->src.kind == BP_TF_DEFLATE)
        more = r->cpos < r->src.clen;
    if (more)
        return bp_error_set(err, BP_EINPUT,
                            "%s: trailing garbage after the %s stream at compressed byte %lu",
                            r->label, r->src.kind == BP_TF_GZIP ? "gzip" : "deflate",
                            r->z.total_in);
    return BP_OK;
}
