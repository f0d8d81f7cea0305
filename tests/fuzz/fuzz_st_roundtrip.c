/* Fuzz target: parse -> encode -> parse of the safetensors container,
 * plain (bp_st_encode) and gzip'd (bp_st_write_fd into a memory file).
 * Whatever the reader accepts, the writer must write, and reading that
 * back must give the same tensors and metadata (CRC entries are
 * recomputed: those the input had were verified, so they must come back
 * unchanged); writing again must give the same bytes. */
#define _GNU_SOURCE /* memfd_create */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_st.h"

/* The writer refuses a tensor named "__header__": its CRC key would be
 * the header's. */
static bool has_reserved_name(const bp_st_file_t *f)
{
    return bp_st_find(f, "__header__") != NULL;
}

static void read_back(const void *buf, size_t n, const bp_st_file_t *f,
                      const char *how)
{
    bp_st_file_t g;
    bp_error_t e = {0};
    bp_status st = bp_st_parse(buf, n, how, &g, &e);
    FUZZ_CHECK(st == BP_OK, "reading the %s output back: %s", how, e.msg);
    fuzz_st_same_tensors(f, &g);
    FUZZ_CHECK(fuzz_st_same_meta(f, &g, true), "%s: metadata differs", how);
    /* Every CRC the input carried was checked, so it comes back as is. */
    const char *k;
    json_t *v;
    if (f->meta)
        json_object_foreach(f->meta, k, v) {
            if (strncmp(k, BP_ST_CRC_PREFIX, strlen(BP_ST_CRC_PREFIX)) ||
                strcmp(k, BP_ST_CRC_PREFIX "__header__") == 0)
                continue;
            const char *w = bp_st_get_meta(&g, k);
            FUZZ_CHECK(w && strcmp(w, json_string_value(v)) == 0,
                       "%s: CRC '%s' was %s, now %s", how, k,
                       json_string_value(v), w ? w : "absent");
        }
    bp_st_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bp_st_file_t f;
    bp_error_t e = {0};
    if (bp_st_parse(data, size, "fuzz", &f, &e))
        return 0;
    void *enc = NULL, *enc2 = NULL;
    size_t n = 0, n2 = 0;
    bp_status st = bp_st_encode(&f, &enc, &n, &e);
    if (st) {
        FUZZ_CHECK(has_reserved_name(&f), "encode failed: %s", e.msg);
        bp_st_free(&f);
        return 0;
    }
    read_back(enc, n, &f, "plain");

    /* Deterministic: the file read back encodes to the same bytes. */
    bp_st_file_t g;
    FUZZ_CHECK(bp_st_parse(enc, n, "plain", &g, &e) == BP_OK, "%s", e.msg);
    FUZZ_CHECK(bp_st_encode(&g, &enc2, &n2, &e) == BP_OK, "%s", e.msg);
    FUZZ_CHECK(n == n2 && memcmp(enc, enc2, n) == 0,
               "encoding is not deterministic");
    bp_st_free(&g);
    free(enc2);

    int fd = memfd_create("fuzz", 0);
    FUZZ_CHECK(fd >= 0, "memfd_create");
    FUZZ_CHECK(bp_st_write_fd(fd, &f, true, &e) == BP_OK, "gzip: %s", e.msg);
    off_t zn = lseek(fd, 0, SEEK_END);
    unsigned char *z = malloc(zn > 0 ? (size_t)zn : 1);
    FUZZ_CHECK(z && pread(fd, z, (size_t)zn, 0) == zn, "pread");
    close(fd);
    FUZZ_CHECK(bp_st_is_gzip(z, (size_t)zn), "gzip output lacks the magic");
    read_back(z, (size_t)zn, &f, "gzip");
    free(z);
    free(enc);
    bp_st_free(&f);
    return 0;
}
