/* Fuzz target: what a file looks like (sniff.h: zips, torch.save's among
 * them), the zip directory reader (zip.h) from memory, and each
 * member's content read through the window reader as diff reads .npz
 * members (stored in place, deflate inflated to exactly its size). */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "sniff.h"
#include "tread.h"
#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bp_zip_t z;
    bp_error_t e = {0};
    /* what diff names it by: its first 512 bytes, as tset.c reads them */
    bp_sniff_t k = bp_sniff(data, size < 512 ? size : 512, size);
    FUZZ_CHECK(bp_sniff_name(k) != NULL, "kind %d", (int)k);
    memset(&z, 0xa5, sizeof z);
    bp_status st = bp_zip_parse(data, size, "fuzz.npz", &z, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz.npz");
        return 0;
    }
    FUZZ_CHECK(z.n <= BP_ZIP_MAX_MEMBERS, "%zu members", z.n);
    /* members lie inside the input, without overlapping */
    for (size_t i = 0; i < z.n; i++) {
        const bp_zip_member_t *m = &z.m[i];
        FUZZ_CHECK(m->data_off <= size && m->csize <= size - m->data_off,
                   "member '%s' at %llu + %llu of %zu", m->name,
                   (unsigned long long)m->data_off, (unsigned long long)m->csize, size);
        FUZZ_CHECK(m->deflate || m->csize == m->usize, "stored '%s' sizes", m->name);
        for (size_t j = 0; j < i; j++) {
            const bp_zip_member_t *q = &z.m[j];
            FUZZ_CHECK(m->data_off + m->csize <= q->data_off ||
                           q->data_off + q->csize <= m->data_off || m->csize == 0 ||
                           q->csize == 0,
                       "members '%s' and '%s' overlap", m->name, q->name);
        }
    }
    /* their content, through a file as diff reads it */
    int fd = memfd_create("fuzz.npz", 0);
    if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
        for (size_t i = 0; i < z.n; i++) {
            const bp_zip_member_t *m = &z.m[i];
            bp_tsrc_t src = {m->deflate ? BP_TF_DEFLATE : BP_TF_MAP, m->data_off, m->csize,
                             m->usize};
            bp_tread_t *r;
            if (bp_tread_open(fd, "fuzz.npz", &src, &r, &e))
                continue;
            uint64_t len;
            const unsigned char *p;
            size_t got;
            st = bp_tread_get(r, 0, m->usize < 4096 ? (size_t)m->usize : 4096, &p, &got, &e);
            if (st)
                FUZZ_CHECK_FAIL(st, &e, "fuzz.npz");
            else if (!(st = bp_tread_finish(r, m->usize, &len, &e)))
                FUZZ_CHECK(len <= m->usize + 1, "content of '%s' ran on", m->name);
            else
                FUZZ_CHECK_FAIL(st, &e, "fuzz.npz");
            bp_tread_close(r);
        }
    }
    if (fd >= 0)
        close(fd);
    bp_zip_free(&z);
    return 0;
}
