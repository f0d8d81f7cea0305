/* Helpers of the safetensors fuzz targets: what a parsed file promises
 * (st.h), whether two files hold the same tensors, and gzip in memory. */
#ifndef BP_FUZZ_ST_H
#define BP_FUZZ_ST_H

#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "st.h"

/* A parsed file: unique names, shapes that match their byte counts, and
 * metadata of strings only. */
static inline void fuzz_st_valid(const bp_st_file_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const bp_buf_t *b = &f->t[i].buf;
        FUZZ_CHECK(f->t[i].name && strcmp(f->t[i].name, "__metadata__") != 0,
                   "tensor %zu name", i);
        size_t numel = 1;
        FUZZ_CHECK(b->ndim >= 0 && b->ndim <= BP_MAXDIM, "ndim %d", b->ndim);
        for (int d = 0; d < b->ndim; d++) {
            FUZZ_CHECK(b->shape[d] >= 0, "negative dimension");
            numel *= (size_t)b->shape[d];
        }
        FUZZ_CHECK(numel == b->numel, "numel %zu, shape gives %zu", b->numel,
                   numel);
        FUZZ_CHECK(b->data != NULL, "tensor '%s' has no data", f->t[i].name);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(f->t[i].name, f->t[j].name) != 0,
                       "duplicate tensor '%s'", f->t[i].name);
    }
    if (f->meta) {
        const char *k;
        json_t *v;
        FUZZ_CHECK(json_is_object(f->meta), "metadata is not an object");
        json_object_foreach(f->meta, k, v)
            FUZZ_CHECK(json_is_string(v), "metadata '%s' is not a string", k);
    }
}

/* Same tensors, in the same order, bit for bit. */
static inline void fuzz_st_same_tensors(const bp_st_file_t *a,
                                        const bp_st_file_t *b)
{
    FUZZ_CHECK(a->n == b->n, "%zu tensors, then %zu", a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const bp_buf_t *x = &a->t[i].buf, *y = &b->t[i].buf;
        FUZZ_CHECK(strcmp(a->t[i].name, b->t[i].name) == 0, "name %s vs %s",
                   a->t[i].name, b->t[i].name);
        FUZZ_CHECK(x->dtype == y->dtype && x->ndim == y->ndim &&
                       x->numel == y->numel,
                   "tensor '%s': dtype or shape differs", a->t[i].name);
        FUZZ_CHECK(memcmp(x->shape, y->shape, sizeof x->shape[0] * x->ndim) ==
                       0,
                   "tensor '%s': shape differs", a->t[i].name);
        size_t nb = bp_buf_nbytes(x);
        FUZZ_CHECK(nb == 0 || memcmp(x->data, y->data, nb) == 0,
                   "tensor '%s': data differs", a->t[i].name);
    }
}

/* Metadata equal, or (with skip_crc) equal apart from "crc32." keys. */
static inline bool fuzz_st_same_meta(const bp_st_file_t *a,
                                     const bp_st_file_t *b, bool skip_crc)
{
    json_t *x = a->meta ? json_deep_copy(a->meta) : json_object();
    json_t *y = b->meta ? json_deep_copy(b->meta) : json_object();
    FUZZ_CHECK(x && y, "out of memory");
    if (skip_crc) {
        json_t *objs[2] = {x, y};
        for (int k = 0; k < 2; k++) {
            const char *key;
            json_t *v;
            void *tmp;
            json_object_foreach_safe(objs[k], tmp, key, v)
                if (strncmp(key, BP_ST_CRC_PREFIX, strlen(BP_ST_CRC_PREFIX)) ==
                    0)
                    json_object_del(objs[k], key);
        }
    }
    bool same = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* data gzip'd (level 1) into a malloc'd buffer. */
static inline unsigned char *fuzz_gzip(const void *data, size_t n,
                                       size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    FUZZ_CHECK(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8,
                            Z_DEFAULT_STRATEGY) == Z_OK,
               "deflateInit2");
    size_t cap = deflateBound(&z, n) + 64;
    unsigned char *out = malloc(cap);
    FUZZ_CHECK(out, "out of memory");
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

#endif
