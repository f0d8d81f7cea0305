/* Fuzz target: the window reader's streams (tread.h).  The input, as a
 * raw deflate stream (a .npz member) and again as a gzip file, is read in
 * windows whose size the input's first byte picks, with one step back
 * (which restarts the stream), and finished; what it hands out must be
 * exactly what zlib's own inflate of the input gives, and it must fail,
 * with a message naming the input, exactly when zlib finds the stream
 * broken, cut, or followed by other bytes (an all-zero array's stream
 * ends while inflate still holds output: that is no truncation). */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz.h"
#include "tread.h"

#define CAP ((size_t)2 << 20) /* inflated bytes looked at */

typedef struct {
    size_t n;  /* bytes inflated (at most CAP) */
    bool ok;   /* the stream ended, whole, with nothing after it */
    bool more; /* it had more than CAP bytes to give */
} ref_t;

/* zlib's inflate of data (wbits as inflateInit2 takes them) into out. */
static ref_t reference(const uint8_t *data, size_t size, int wbits, unsigned char *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    FUZZ_CHECK(inflateInit2(&z, wbits) == Z_OK, "inflateInit2");
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)CAP;
    int zr;
    do
        zr = inflate(&z, Z_NO_FLUSH);
    while (zr == Z_OK && z.avail_out > 0);
    ref_t r = {CAP - z.avail_out, zr == Z_STREAM_END && z.avail_in == 0,
               zr == Z_OK && z.avail_out == 0};
    if (r.more) { /* past CAP: whether one more byte comes */
        unsigned char one;
        z.next_out = &one;
        z.avail_out = 1;
        zr = inflate(&z, Z_NO_FLUSH);
        r.more = z.avail_out == 0;
    }
    inflateEnd(&z);
    return r;
}

static void check(int fd, size_t size, bool gzip, const unsigned char *want, ref_t ref,
                  size_t step)
{
    bp_tsrc_t src = gzip ? (bp_tsrc_t){BP_TF_GZIP, 0, size, UINT64_MAX}
                         : (bp_tsrc_t){BP_TF_DEFLATE, 0, size, ref.n};
    bp_tread_t *r;
    bp_error_t e = {0};
    FUZZ_CHECK(bp_tread_open(fd, "fuzz.z", &src, &r, &e) == BP_OK, "%s", e.msg);
    uint64_t at = 0;
    bool back = false;
    bp_status st = BP_OK;
    while (at < ref.n) {
        const unsigned char *p;
        size_t got, k = step < ref.n - at ? step : (size_t)(ref.n - at);
        if ((st = bp_tread_get(r, at, k, &p, &got, &e)))
            break;
        FUZZ_CHECK(got <= k && (!got || memcmp(p, want + at, got) == 0),
                   "bytes at %llu differ from zlib's", (unsigned long long)at);
        FUZZ_CHECK(got == k, "the content ended at %llu, zlib's at %zu",
                   (unsigned long long)(at + got), ref.n);
        at += got;
        if (!back && at > step) { /* one step back: the stream restarts */
            back = true;
            at -= step;
        }
    }
    uint64_t len = 0;
    if (!st)
        st = bp_tread_finish(r, CAP, &len, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz.z");
        FUZZ_CHECK(!ref.ok, "a whole stream refused: %s", e.msg);
    } else if (ref.more) {
        FUZZ_CHECK(len == CAP + 1, "length %llu past the limit", (unsigned long long)len);
    } else {
        FUZZ_CHECK(ref.ok, "a stream zlib finds broken or cut accepted (%zu bytes)", ref.n);
        FUZZ_CHECK(len == ref.n, "length %llu, zlib's %zu", (unsigned long long)len, ref.n);
    }
    bp_tread_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    static unsigned char *want;
    if (!want)
        FUZZ_CHECK((want = malloc(CAP)), "out of memory");
    static const size_t steps[] = {1, 7, 4096, 65536, BP_TREAD_WINDOW};
    size_t step = steps[size ? data[0] % 5 : 0];
    int fd = memfd_create("fuzz.z", 0);
    FUZZ_CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size, "memfd");
    for (int gz = 0; gz < 2; gz++) {
        ref_t ref = reference(data, size, gz ? 16 + MAX_WBITS : -MAX_WBITS, want);
        check(fd, size, gz, want, ref, step);
    }
    close(fd);
    return 0;
}
