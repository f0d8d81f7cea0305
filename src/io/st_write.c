/* Safetensors writer and the in-memory file API (see st.h).
 *
 * Output is a pure function of the tensors and metadata: tensors in
 * insertion order, JSON keys sorted, header padded with spaces to a
 * multiple of 8, CRC-32 entries recomputed.  The gzip wrapper is written
 * with a fixed header (mtime 0, OS 255, no name) and FHCRC set, so that
 * zlib verifies the gzip header too and no byte of a compressed file goes
 * unchecked on read. */
#include "st.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

void bp_st_init(bp_st_file_t *f)
{
    memset(f, 0, sizeof *f);
}

void bp_st_free(bp_st_file_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->t[i].name);
        bp_buf_free(&f->t[i].buf);
    }
    free(f->t);
    if (f->meta)
        json_decref(f->meta);
    bp_st_init(f);
}

const bp_st_tensor_t *bp_st_find(const bp_st_file_t *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->t[i].name, name) == 0)
            return &f->t[i];
    return NULL;
}

bp_status bp_st_add(bp_st_file_t *f, const char *name, const bp_buf_t *b,
                    bp_error_t *err)
{
    json_t *js = json_string(name);
    if (!js)
        return bp_error_set(err, BP_EINPUT,
                            "tensor name is not valid UTF-8");
    json_decref(js);
    if (strcmp(name, "__metadata__") == 0 || strcmp(name, "__header__") == 0)
        return bp_error_set(err, BP_EINPUT,
                            "'%s' is reserved, not a tensor name", name);
    if (bp_st_find(f, name))
        return bp_error_set(err, BP_EINPUT, "duplicate tensor name '%.200s'",
                            name);
    if (!b->data && b->numel)
        return bp_error_set(err, BP_EINTERNAL,
                            "tensor '%.200s' has no host data", name);
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        bp_st_tensor_t *t = realloc(f->t, cap * sizeof *t);
        if (!t)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        f->t = t;
        f->cap = cap;
    }
    bp_st_tensor_t *t = &f->t[f->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = bp_buf_copy(&t->buf, b, err);
    if (st) {
        free(t->name);
        return st;
    }
    t->buf.dev = NULL;
    f->n++;
    return BP_OK;
}

bp_status bp_st_set_meta(bp_st_file_t *f, const char *key, const char *value,
                         bp_error_t *err)
{
    if (!f->meta && !(f->meta = json_object()))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    json_t *v = json_string(value);
    if (!v)
        return bp_error_set(err, BP_EINPUT,
                            "metadata value for '%.200s' is not valid UTF-8",
                            key);
    if (json_object_set_new(f->meta, key, v))
        return bp_error_set(err, BP_EINPUT,
                            "metadata key is not valid UTF-8");
    return BP_OK;
}

const char *bp_st_get_meta(const bp_st_file_t *f, const char *key)
{
    return f->meta ? json_string_value(json_object_get(f->meta, key)) : NULL;
}

/* The 8-byte length and the padded header, malloc'd. */
static bp_status make_header(const bp_st_file_t *f, char **out, size_t *len,
                             bp_error_t *err)
{
    json_t *root = json_object(), *meta = json_object();
    bp_status st = BP_OK;
    char *text = NULL;
    if (!root || !meta) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    size_t plen = strlen(BP_ST_CRC_PREFIX);
    const char *k;
    json_t *v;
    if (f->meta)
        json_object_foreach(f->meta, k, v) {
            if (!json_is_string(v)) {
                st = bp_error_set(err, BP_EINPUT, "metadata value for "
                                  "'%.200s' is not a string", k);
                goto done;
            }
            if (strncmp(k, BP_ST_CRC_PREFIX, plen) != 0)
                json_object_set(meta, k, v);
        }
    uint64_t off = 0;
    for (size_t i = 0; i < f->n; i++) {
        const bp_st_tensor_t *t = &f->t[i];
        if (strcmp(t->name, "__header__") == 0) {
            st = bp_error_set(err, BP_EINPUT, "'__header__' is reserved, "
                              "not a tensor name (its CRC key is the "
                              "header's)");
            goto done;
        }
        size_t nb = bp_buf_nbytes(&t->buf);
        char crc[16], *ck = malloc(plen + strlen(t->name) + 1);
        json_t *shape = json_array(), *e;
        if (!ck || !shape) {
            free(ck);
            json_decref(shape);
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
            goto done;
        }
        for (int d = 0; d < t->buf.ndim; d++)
            json_array_append_new(shape, json_integer(t->buf.shape[d]));
        snprintf(crc, sizeof crc, "0x%08lx",
                 crc32_z(0, t->buf.data, nb) & 0xffffffffUL);
        sprintf(ck, "%s%s", BP_ST_CRC_PREFIX, t->name);
        json_object_set_new(meta, ck, json_string(crc));
        free(ck);
        e = json_pack("{s:s, s:o, s:[I, I]}",
                      "dtype", bp_dtype_info(t->buf.dtype)->st_name,
                      "shape", shape, "data_offsets",
                      (json_int_t)off, (json_int_t)(off + nb));
        if (!e || json_object_set_new(root, t->name, e)) {
            st = bp_error_set(err, BP_EINPUT,
                              "cannot encode tensor '%.200s'", t->name);
            goto done;
        }
        off += nb;
    }
    json_object_set_new(meta, BP_ST_HEADER_CRC, json_string("0x00000000"));
    json_object_set(root, "__metadata__", meta);
    text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    /* Unique: inside any other string the quotes would be escaped. */
    static const char hkey[] = "\"" BP_ST_HEADER_CRC "\":\"0x";
    char *hval = strstr(text, hkey);
    if (!hval) {
        st = bp_error_set(err, BP_EINTERNAL, "header CRC not found");
        goto done;
    }
    hval += strlen(hkey);
    size_t n = strlen(text), padded = (n + 7) / 8 * 8;
    if (padded > BP_ST_MAX_HEADER) {
        st = bp_error_set(err, BP_EINPUT, "header of %zu bytes exceeds "
                          "100 MB", padded);
        goto done;
    }
    char *h = malloc(8 + padded);
    if (!h) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < 8; i++)
        h[i] = (char)((uint64_t)padded >> (8 * i));
    memcpy(h + 8, text, n);
    memset(h + 8 + n, ' ', padded - n);
    /* The CRC of the header with its digits as '0' is what they become. */
    char digits[9];
    snprintf(digits, sizeof digits, "%08lx",
             crc32_z(0, (const unsigned char *)h + 8, padded) & 0xffffffffUL);
    memcpy(h + 8 + (hval - text), digits, 8);
    *out = h;
    *len = 8 + padded;
done:
    free(text);
    json_decref(meta);
    json_decref(root);
    return st;
}

bp_status bp_st_encode(const bp_st_file_t *f, void **out, size_t *len,
                       bp_error_t *err)
{
    char *h;
    size_t hl, total;
    bp_status st = make_header(f, &h, &hl, err);
    if (st)
        return st;
    total = hl;
    for (size_t i = 0; i < f->n; i++)
        total += bp_buf_nbytes(&f->t[i].buf);
    char *b = realloc(h, total ? total : 1);
    if (!b) {
        free(h);
        return bp_error_set(err, BP_ENOMEM, "out of memory for %zu bytes",
                            total);
    }
    size_t at = hl;
    for (size_t i = 0; i < f->n; i++) {
        size_t nb = bp_buf_nbytes(&f->t[i].buf);
        if (nb)
            memcpy(b + at, f->t[i].buf.data, nb);
        at += nb;
    }
    *out = b;
    *len = total;
    return BP_OK;
}

/* ---- output: plain or through deflate ----------------------------- */

typedef struct {
    int fd;
    z_stream *z;
    unsigned char obuf[1 << 16];
} sink_t;

static bp_status write_all(int fd, const void *d, size_t n, bp_error_t *err)
{
    const char *p = d;
    while (n) {
        ssize_t w = write(fd, p, n < (1u << 30) ? n : (1u << 30));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return bp_error_set(err, BP_EIO, "write failed: %s",
                                strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return BP_OK;
}

static bp_status sink_deflate(sink_t *s, int flush, bp_error_t *err)
{
    int r;
    do {
        s->z->next_out = s->obuf;
        s->z->avail_out = sizeof s->obuf;
        r = deflate(s->z, flush);
        if (r == Z_STREAM_ERROR)
            return bp_error_set(err, BP_EINTERNAL, "deflate failed");
        bp_status st = write_all(s->fd, s->obuf,
                                 sizeof s->obuf - s->z->avail_out, err);
        if (st)
            return st;
    } while (s->z->avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
    return BP_OK;
}

static bp_status sink_put(sink_t *s, const void *d, size_t n, bp_error_t *err)
{
    if (!s->z)
        return write_all(s->fd, d, n, err);
    const unsigned char *p = d;
    while (n) {
        uInt k = n < (1u << 30) ? (uInt)n : (1u << 30);
        s->z->next_in = (unsigned char *)p;
        s->z->avail_in = k;
        bp_status st = sink_deflate(s, Z_NO_FLUSH, err);
        if (st)
            return st;
        p += k;
        n -= k;
    }
    return BP_OK;
}

bp_status bp_st_write_fd(int fd, const bp_st_file_t *f, bool gzip,
                         bp_error_t *err)
{
    char *h;
    size_t hl;
    bp_status st = make_header(f, &h, &hl, err);
    if (st)
        return st;
    sink_t *s = calloc(1, sizeof *s);
    z_stream z;
    gz_header gh;
    if (!s) {
        free(h);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    s->fd = fd;
    if (gzip) {
        memset(&z, 0, sizeof z);
        memset(&gh, 0, sizeof gh);
        gh.os = 255;
        gh.hcrc = 1;
        if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            free(h);
            free(s);
            return bp_error_set(err, BP_ENOMEM, "cannot start deflate");
        }
        deflateSetHeader(&z, &gh);
        s->z = &z;
    }
    st = sink_put(s, h, hl, err);
    for (size_t i = 0; !st && i < f->n; i++)
        st = sink_put(s, f->t[i].buf.data, bp_buf_nbytes(&f->t[i].buf), err);
    if (!st && gzip)
        st = sink_deflate(s, Z_FINISH, err);
    if (gzip)
        deflateEnd(&z);
    free(s);
    free(h);
    return st;
}

bp_status bp_st_write(const char *path, const bp_st_file_t *f, bool gzip,
                      bp_error_t *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return bp_error_set(err, BP_EIO, "cannot create '%s': %s", path,
                            strerror(errno));
    bp_status st = bp_st_write_fd(fd, f, gzip, err);
    if (close(fd) && !st)
        st = bp_error_set(err, BP_EIO, "close failed: %s", strerror(errno));
    if (st)
        bp_error_prefix(err, "cannot write '%s': ", path);
    return st;
}
