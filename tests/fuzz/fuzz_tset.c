/* Fuzz target: diff's file-set layer (tset.h) on one file: what it is by
 * content (safetensors plain or gzip, .npy, .npz: a zip of .npy members,
 * stored or deflated, each checked against its zip CRC-32), opened as diff
 * opens it, every tensor read whole, and each file's content streamed to
 * its end and checked there as diff does (bp_tset_file_end).  A failure
 * names the file; a set read holds tensors of unique names, and reading
 * fails only for bad input, with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "fuzz.h"
#include "tset.h"

/* Whether zlib inflates the raw deflate stream data[start, start + clen)
 * whole: to its end, taking every byte, into exactly ulen bytes. */
static bool inflates_whole(const uint8_t *data, uint64_t start, uint64_t clen, uint64_t ulen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return false;
    z.next_in = (unsigned char *)data + start;
    z.avail_in = (uInt)clen;
    unsigned char sink[16384];
    int zr;
    do {
        z.next_out = sink;
        z.avail_out = sizeof sink;
        zr = inflate(&z, Z_NO_FLUSH);
    } while (zr == Z_OK && z.total_out <= ulen);
    bool whole = zr == Z_STREAM_END && z.avail_in == 0 && z.total_out == ulen;
    inflateEnd(&z);
    return whole;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/bp-fuzz-tset.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "%s", path);
    bp_tset_t s;
    bp_error_t e = {0};
    bp_tset_opts_t o = {.as_bf16 = size && data[size - 1] & 1};
    bp_status st = bp_tset_open(path, &o, &s, &e);
    if (st) {
        FUZZ_CHECK(st == BP_EINPUT || st == BP_ENOMEM || st == BP_EIO, "status %d: %s",
                   (int)st, e.msg);
        FUZZ_CHECK(strstr(e.msg, path), "the message does not name the file: %s", e.msg);
        unlink(path);
        return 0;
    }
    for (size_t i = 0; i < s.n; i++) {
        const bp_tent_t *t = &s.t[i];
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(s.t[j].name, t->name) != 0, "two tensors '%s'", t->name);
        FUZZ_CHECK(bp_tset_find(&s, t->name) == t, "'%s' not found by name", t->name);
        if (!t->known)
            continue;
        bp_buf_t b;
        bp_error_t re = {0};
        st = bp_tset_read_tensor(&s, t, &b, &re);
        if (st) {
            FUZZ_CHECK(st == BP_EINPUT || st == BP_ENOMEM, "status %d: %s", (int)st, re.msg);
            FUZZ_CHECK(re.msg[0], "a failure without a message");
            continue;
        }
        FUZZ_CHECK(bp_buf_nbytes(&b) == t->nbytes, "'%s': %zu bytes, %llu claimed", t->name,
                   bp_buf_nbytes(&b), (unsigned long long)t->nbytes);
        bp_buf_free(&b);
    }
    /* each file's content front to back, then its end */
    for (size_t i = 0; i < s.nf; i++) {
        const bp_tfile_t *f = &s.f[i];
        bp_tread_t *r;
        bp_error_t re = {0};
        if (bp_tread_open(f->fd, f->label, &f->src, &r, &re))
            continue;
        uint64_t end = f->src.kind == BP_TF_GZIP && f->safetensors ? 8 + f->hlen + f->data_len
                       : f->src.ulen;
        st = BP_OK;
        for (uint64_t at = 0; !st && at < end;) {
            const unsigned char *p;
            size_t got, k = end - at < BP_TREAD_WINDOW ? (size_t)(end - at) : BP_TREAD_WINDOW;
            st = bp_tread_get(r, at, k, &p, &got, &re);
            if (!st && got < k)
                break;
            at += k;
        }
        if (!st)
            st = bp_tset_file_end(f, r, &re);
        if (st) {
            FUZZ_CHECK(st == BP_EINPUT || st == BP_ENOMEM, "status %d: %s", (int)st, re.msg);
            FUZZ_CHECK(re.msg[0], "a failure without a message");
            /* a member zlib inflates whole is no broken stream */
            FUZZ_CHECK(f->src.kind != BP_TF_DEFLATE || st == BP_ENOMEM ||
                           !inflates_whole(data, f->src.start, f->src.clen, f->src.ulen),
                       "a whole deflate stream refused: %s", re.msg);
        }
        bp_tread_close(r);
    }
    bp_tset_free(&s);
    unlink(path);
    return 0;
}
