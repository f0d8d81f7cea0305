/* Tests for the safetensors container.
 *
 * References, all independent of the code under test: the byte vectors of
 * the reference implementation's own tests (tests/st-good/attn0, empty,
 * meta); files written by Python following the reference writer's rules
 * and bitprobe's format (tests/st-good/make.py, with Python's zlib.crc32);
 * one file per reader rule with the message and byte offset derived from
 * how tests/st-bad/make.py built it; hand-computed gzip header bytes.
 * Randomised round trips print their seed (BP_SEED=n repeats one). */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "st.h"
#include "test_files.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------- */

static char tmpdir[256];

/* Each test runs in a child process; they share one directory made by
 * main(), and give each file a name of their own. */
static void tmp_path(const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t seed_once(void)
{
    const char *s = getenv("BP_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    printf("check_st: seed %" PRIu64 " (BP_SEED=%" PRIu64 " repeats it)\n",
           seed, seed);
    return seed;
}

/* A tensor from raw little-endian bytes. */
static void add_raw(bp_st_file_t *f, const char *name, bp_dtype_t dt,
                    int ndim, const int64_t *shape, const void *bytes)
{
    bp_buf_t b;
    bp_error_t e = {0};
    ck_assert(bp_buf_alloc(&b, dt, ndim, shape, &e) == BP_OK);
    memcpy(b.data, bytes, bp_buf_nbytes(&b));
    ck_assert_msg(bp_st_add(f, name, &b, &e) == BP_OK, "%s", e.msg);
    bp_buf_free(&b);
}

static void assert_tensor(const bp_st_file_t *f, const char *name,
                          bp_dtype_t dt, int ndim, const int64_t *shape,
                          const void *bytes, size_t nbytes)
{
    const bp_st_tensor_t *t = bp_st_find(f, name);
    ck_assert_msg(t != NULL, "no tensor '%s'", name);
    ck_assert_msg(t->buf.dtype == dt, "'%s': dtype %d, want %d", name,
                  t->buf.dtype, dt);
    ck_assert_int_eq(t->buf.ndim, ndim);
    for (int d = 0; d < ndim; d++)
        ck_assert_int_eq(t->buf.shape[d], shape[d]);
    ck_assert_uint_eq(bp_buf_nbytes(&t->buf), nbytes);
    ck_assert_msg(nbytes == 0 || memcmp(t->buf.data, bytes, nbytes) == 0,
                  "'%s': data differs", name);
}

/* Same tensors in the same order, same bits; b's metadata is a's plus
 * CRC entries. */
static void assert_same(const bp_st_file_t *a, const bp_st_file_t *b)
{
    ck_assert_uint_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const bp_buf_t *x = &a->t[i].buf, *y = &b->t[i].buf;
        ck_assert_str_eq(a->t[i].name, b->t[i].name);
        ck_assert_int_eq(x->dtype, y->dtype);
        ck_assert_int_eq(x->ndim, y->ndim);
        for (int d = 0; d < x->ndim; d++)
            ck_assert_int_eq(x->shape[d], y->shape[d]);
        ck_assert_uint_eq(bp_buf_nbytes(x), bp_buf_nbytes(y));
        for (size_t k = 0; k < x->numel; k++)
            ck_assert_msg(bp_buf_bits(x, k) == bp_buf_bits(y, k),
                          "'%s'[%zu]: 0x%" PRIx64 " became 0x%" PRIx64,
                          a->t[i].name, k, bp_buf_bits(x, k),
                          bp_buf_bits(y, k));
    }
    const char *k;
    json_t *v;
    if (a->meta)
        json_object_foreach(a->meta, k, v)
            if (strncmp(k, "crc32.", 6) != 0)
                ck_assert_str_eq(json_string_value(v), bp_st_get_meta(b, k));
    if (b->meta)
        json_object_foreach(b->meta, k, v)
            if (strncmp(k, "crc32.", 6) != 0)
                ck_assert_msg(a->meta && json_object_get(a->meta, k),
                              "extra metadata '%s'", k);
    for (size_t i = 0; i < b->n; i++) {
        char key[300], want[16];
        snprintf(key, sizeof key, "crc32.%s", b->t[i].name);
        snprintf(want, sizeof want, "0x%08lx",
                 crc32(0, b->t[i].buf.data,
                       (uInt)bp_buf_nbytes(&b->t[i].buf)));
        ck_assert_str_eq(bp_st_get_meta(b, key), want);
    }
}

static unsigned char *encode(const bp_st_file_t *f, size_t *len)
{
    void *out;
    bp_error_t e = {0};
    ck_assert_msg(bp_st_encode(f, &out, len, &e) == BP_OK, "%s", e.msg);
    return out;
}

static unsigned char *encode_gz(const bp_st_file_t *f, const char *name,
                                size_t *len)
{
    char p[512];
    bp_error_t e = {0};
    tmp_path(name, p, sizeof p);
    ck_assert_msg(bp_st_write(p, f, true, &e) == BP_OK, "%s", e.msg);
    unsigned char *d = test_slurp(p, len);
    unlink(p);
    return d;
}

/* ---- the bad-file corpus ------------------------------------------- */

typedef struct {
    const char *file, *msg;
    long off; /* -1: a gzip-level error, located in its message */
} bad_t;

static const bad_t bads[] = {
    {"short.safetensors",
     "input ends before the 8-byte header length", 5},
    {"header-too-large.safetensors",
     "header length 100000001 exceeds 100 MB", 0},
    {"header-9e18.safetensors",
     "header length 9000000000000000000 exceeds 100 MB", 0},
    {"header-past-end.safetensors",
     "header length 64 runs past the end of the 16-byte file", 0},
    {"leading-space.safetensors",
     "header does not start with '{'", 8},
    {"empty-header.safetensors",
     "header does not start with '{'", 8},
    {"not-utf8.safetensors",
     "header is not valid UTF-8", 11},
    {"surrogate.safetensors",
     "header is not valid UTF-8", 11},
    {"bad-json.safetensors",
     "header is not valid JSON", 63},
    {"json-trailing.safetensors",
     "header is not valid JSON", 64},
    {"duplicate-name.safetensors",
     "duplicate key", 65},
    {"duplicate-field.safetensors",
     "duplicate key", 35},
    {"tensor-not-object.safetensors",
     "tensor 't' is not an object", 13},
    {"missing-offsets.safetensors",
     "tensor 't' has no 'data_offsets'", 13},
    {"unknown-field.safetensors",
     "unknown field 'offsets' in tensor 't'", 61},
    {"unknown-dtype.safetensors",
     "unknown dtype 'F4' for tensor 't'", 22},
    {"dtype-not-string.safetensors",
     "dtype of tensor 't' is not a string", 22},
    {"negative-shape.safetensors",
     "shape of tensor 't' has a dimension that is not a non-negative integer", 36},
    {"float-shape.safetensors",
     "shape of tensor 't' has a dimension that is not a non-negative integer", 36},
    {"shape-not-array.safetensors",
     "shape of tensor 't' is not an array", 36},
    {"too-many-dims.safetensors",
     "shape of tensor 't' has 9 dimensions (at most 8)", 36},
    {"offsets-not-pair.safetensors",
     "data_offsets of tensor 't' is not a pair of non-negative integers", 55},
    {"offsets-reversed.safetensors",
     "data_offsets of tensor 't' end (0) before they begin (8)", 55},
    {"size-mismatch.safetensors",
     "tensor 't' has data_offsets [0, 12] (12 bytes) but shape [2] of F32 needs 8 bytes", 55},
    {"size-overflow.safetensors",
     "size of tensor 't' (shape [4611686018427387904, 4], F32) overflows 64 bits", 36},
    {"tensor-too-large.safetensors",
     "tensor 't' (shape [34359738368], F32) has 137438953472 bytes, more than the limit of 68719476736", 36},
    {"hole.safetensors",
     "hole in the data: tensor 'u' begins at data byte 12 but the data before it ends at 8", 108},
    {"hole-at-start.safetensors",
     "hole in the data: tensor 't' begins at data byte 4 but the data before it ends at 0", 55},
    {"overlap.safetensors",
     "overlap in the data: tensor 'u' begins at data byte 4 but the data before it ends at 8", 108},
    {"truncated-data.safetensors",
     "input ends inside the data: the header claims 16 data bytes, up to byte 136", 133},
    {"trailing-bytes.safetensors",
     "5 trailing bytes after the 16 data bytes the header claims", 136},
    {"meta-not-object.safetensors",
     "__metadata__ is not an object", 24},
    {"meta-not-string.safetensors",
     "__metadata__ value for 'k' is not a string", 29},
    {"crc-mismatch.safetensors",
     "CRC mismatch for tensor 'u' (stored 0x12ea037b, computed 0x12ea027b)", 224},
    {"crc-malformed.safetensors",
     "malformed CRC '0xCCDF2C3A' for tensor 't'", 35},
    {"crc-orphan.safetensors",
     "CRC for tensor 'v', which is not in the file", 48},
    {"crc-missing.safetensors",
     "tensor 'u' has no CRC but other tensors do", 102},
    {"header-crc-mismatch.safetensors",
     "header CRC mismatch (stored 0x7ebc3aad, computed 0x486fa27f): the header was altered", 44},
    {"header-crc-missing.safetensors",
     "tensors carry CRCs but the header has none ('crc32.__header__')", 24},
    {"header-crc-only.safetensors",
     "tensor 't' has no CRC but the header does", 58},
    {"header-crc-malformed.safetensors",
     "malformed header CRC '0x0000000G' (not 0x and 8 lower-case hex digits, written without escapes)", 44},
    {"header-crc-escaped.safetensors",
     "malformed header CRC '0x53e34cf5' (not 0x and 8 lower-case hex digits, written without escapes)", 44},
    {"gz-truncated.safetensors.gz",
     "gzip stream truncated at compressed byte 51", -1},
    {"gz-trailing-garbage.safetensors.gz",
     "trailing garbage after the gzip stream at compressed byte 103", -1},
    {"gz-bad-crc.safetensors.gz",
     "corrupt gzip stream (incorrect data check) at compressed byte 99", -1},
    {"gz-hole.safetensors.gz",
     "hole in the data: tensor 'u' begins at data byte 12 but the data before it ends at 8", 108},
    {"gz-bomb.safetensors.gz",
     "trailing bytes after the 8 data bytes the header claims", 72},
    {"gz-claims-9gib.safetensors.gz",
     "the header claims 9663676496 bytes in all, more than the limit of 8589934592 for streamed input", 64},
};

static void check_bad(const bad_t *c, const char *label, bp_status st,
                      const bp_error_t *e)
{
    char want[600];
    ck_assert_msg(st == BP_EINPUT, "%s: status %d (%s)", c->file, st, e->msg);
    ck_assert_msg(strncmp(e->msg, label, strlen(label)) == 0 &&
                  strncmp(e->msg + strlen(label), ": ", 2) == 0,
                  "%s: message does not start with the label: %s", c->file,
                  e->msg);
    ck_assert_msg(strstr(e->msg, c->msg), "%s: message '%s' lacks '%s'",
                  c->file, e->msg, c->msg);
    if (c->off < 0)
        return;
    bool gz = strstr(c->file, ".gz") != NULL;
    snprintf(want, sizeof want, " at byte %ld%s", c->off,
             gz ? " of the inflated stream" : "");
    size_t ml = strlen(e->msg), wl = strlen(want);
    ck_assert_msg(ml >= wl && strcmp(e->msg + ml - wl, want) == 0,
                  "%s: message '%s' does not end with '%s'", c->file, e->msg,
                  want);
}

START_TEST(t_bad_file)
{
    const bad_t *c = &bads[_i];
    char p[4096], label[4200];
    bp_st_file_t f;
    bp_error_t e = {0};
    test_data_path("st-bad", c->file, p, sizeof p);
    snprintf(label, sizeof label, "cannot read '%s'", p);
    check_bad(c, label, bp_st_read(p, &f, &e), &e);
    ck_assert(f.n == 0 && f.t == NULL && f.meta == NULL);
}
END_TEST

START_TEST(t_bad_mem)
{
    const bad_t *c = &bads[_i];
    char p[4096];
    size_t len;
    bp_st_file_t f;
    bp_error_t e = {0};
    test_data_path("st-bad", c->file, p, sizeof p);
    unsigned char *d = test_slurp(p, &len);
    check_bad(c, "mem", bp_st_parse(d, len, "mem", &f, &e), &e);
    ck_assert(f.n == 0 && f.t == NULL && f.meta == NULL);
    free(d);
}
END_TEST

/* ---- valid files --------------------------------------------------- */

/* huggingface/safetensors tensor.rs test_serialization / test_empty */
START_TEST(t_reference_vectors)
{
    char p[4096];
    bp_st_file_t f;
    bp_error_t e = {0};
    static const uint32_t vals[6] = {0x00000000, 0x3f800000, 0x40000000,
                                     0x40400000, 0x40800000, 0x40a00000};
    static const int64_t sh[3] = {1, 2, 3};
    test_data_path("st-good", "attn0.safetensors", p, sizeof p);
    ck_assert_msg(bp_st_read(p, &f, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(f.n, 1);
    assert_tensor(&f, "attn.0", BP_F32, 3, sh, vals, sizeof vals);
    ck_assert(f.meta == NULL);
    bp_st_free(&f);

    test_data_path("st-good", "empty.safetensors", p, sizeof p);
    ck_assert_msg(bp_st_read(p, &f, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(f.n, 0);
    ck_assert(f.meta == NULL);
    bp_st_free(&f);

    test_data_path("st-good", "meta.safetensors", p, sizeof p);
    ck_assert_msg(bp_st_read(p, &f, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(f.n, 0);
    ck_assert_str_eq(bp_st_get_meta(&f, "framework"), "pt");
    bp_st_free(&f);
}
END_TEST

/* A tensor as raw little-endian bytes. */
typedef struct {
    const char *name;
    bp_dtype_t dt;
    int ndim;
    int64_t shape[2];
    const char *bytes;
    size_t n;
} raw_t;

/* The tensors of tests/st-good/make.py. */
static const raw_t T7[] = {
    {"w", BP_F32, 2, {2, 3},
     "\x00\x00\x80\x3f" "\x00\x00\x00\x80" "\x01\x00\x00\x00"
     "\x00\x00\x80\x7f" "\x01\x00\xc0\x7f" "\x66\x66\x66\x3f", 24},
    {"b", BP_BF16, 1, {4}, "\x80\x3f\x00\x80\xff\x7f\x01\x00", 8},
    {"h", BP_F16, 2, {2, 2}, "\x00\x3c\x00\xfc\xff\x03\x01\x7e", 8},
    {"d", BP_F64, 1, {2},
     "\x01\x00\x00\x00\x00\x00\xf0\x3f" "\x00\x00\x00\x00\x00\x00\x00\x80",
     16},
    {"i", BP_I64, 0, {0}, "\x00\x00\x00\x00\x00\x00\x00\x80", 8},
    {"j", BP_I32, 1, {3},
     "\xff\xff\xff\xff" "\xff\xff\xff\x7f" "\x07\x00\x00\x00", 12},
    {"z", BP_F32, 2, {0, 5}, "", 0},
};

static void assert_t7(const bp_st_file_t *f)
{
    ck_assert_uint_eq(f->n, N(T7));
    for (size_t i = 0; i < N(T7); i++)
        assert_tensor(f, T7[i].name, T7[i].dt, T7[i].ndim, T7[i].shape,
                      T7[i].bytes, T7[i].n);
}

/* Written by the reference writer's rules, plain and by Python's gzip. */
START_TEST(t_python_written)
{
    static const char *files[] = {"python.safetensors",
                                  "python.safetensors.gz"};
    static const char *order[] = {"i", "d", "w", "z", "j", "b", "h"};
    for (size_t k = 0; k < N(files); k++) {
        char p[4096];
        bp_st_file_t f;
        bp_error_t e = {0};
        test_data_path("st-good", files[k], p, sizeof p);
        ck_assert_msg(bp_st_read(p, &f, &e) == BP_OK, "%s", e.msg);
        assert_t7(&f);
        for (size_t i = 0; i < N(order); i++) /* data order */
            ck_assert_str_eq(f.t[i].name, order[i]);
        ck_assert_str_eq(bp_st_get_meta(&f, "format"), "pt");
        bp_st_free(&f);
    }
}
END_TEST

/* Every other safetensors dtype (tests/st-good/make.py): bits as written,
 * values as the dtypes define them, and the file written back by
 * bitprobe's writer reads the same. */
START_TEST(t_storage_dtypes)
{
    static const raw_t S[] = {
        {"bo", BP_BOOL, 1, {4}, "\x00\x01\x01\x00", 4},
        {"u1", BP_U8, 1, {3}, "\x00\xff\x80", 3},
        {"i1", BP_I8, 1, {3}, "\x80\x7f\xff", 3},
        {"i2", BP_I16, 1, {2}, "\x00\x80\xff\x7f", 4},
        {"u2", BP_U16, 1, {2}, "\xff\xff\x01\x00", 4},
        {"u4", BP_U32, 1, {2}, "\xff\xff\xff\xff\x00\x00\x00\x00", 8},
        {"u8", BP_U64, 1, {1}, "\xff\xff\xff\xff\xff\xff\xff\xff", 8},
        {"e4", BP_F8_E4M3, 1, {4}, "\x7e\xff\x01\x80", 4},
        {"e5", BP_F8_E5M2, 2, {2, 2}, "\x7c\x7d\x7b\x01", 4},
    };
    /* values of each tensor's first and last element */
    static const double ends[][2] = {
        {0, 0}, {0, 128}, {-128, -1}, {-32768, 32767}, {65535, 1},
        {4294967295.0, 0}, {0x1p64, 0x1p64}, {448, -0.0}, {INFINITY, 0x1p-16},
    };
    char p[4096];
    bp_st_file_t f, g;
    bp_error_t e = {0};
    test_data_path("st-good", "storage.safetensors", p, sizeof p);
    ck_assert_msg(bp_st_read(p, &f, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(f.n, N(S));
    for (size_t i = 0; i < N(S); i++) {
        assert_tensor(&f, S[i].name, S[i].dt, S[i].ndim, S[i].shape, S[i].bytes, S[i].n);
        const bp_buf_t *b = &bp_st_find(&f, S[i].name)->buf;
        ck_assert_msg(bp_buf_get(b, 0) == ends[i][0] && bp_buf_get(b, b->numel - 1) ==
                      ends[i][1], "'%s': values %g .. %g", S[i].name, bp_buf_get(b, 0),
                      bp_buf_get(b, b->numel - 1));
    }
    size_t len;
    unsigned char *d = encode(&f, &len);
    ck_assert_msg(bp_st_parse(d, len, "enc", &g, &e) == BP_OK, "%s", e.msg);
    for (size_t i = 0; i < N(S); i++)
        assert_tensor(&g, S[i].name, S[i].dt, S[i].ndim, S[i].shape, S[i].bytes, S[i].n);
    free(d);
    bp_st_free(&g);
    bp_st_free(&f);
}
END_TEST

static void build_t7(bp_st_file_t *f)
{
    bp_error_t e = {0};
    bp_st_init(f);
    for (size_t i = 0; i < N(T7); i++)
        add_raw(f, T7[i].name, T7[i].dt, T7[i].ndim, T7[i].shape,
                T7[i].bytes);
    ck_assert(bp_st_set_meta(f, "tool", "bitprobe test", &e) == BP_OK);
    ck_assert(bp_st_set_meta(f, "probe", "seed", &e) == BP_OK);
}

/* The encoder's bytes equal the file Python wrote by bitprobe's rules. */
START_TEST(t_encode_exact)
{
    char p[4096];
    size_t want_len, len;
    bp_st_file_t f, g;
    bp_error_t e = {0};
    test_data_path("st-good", "bitprobe.safetensors", p, sizeof p);
    unsigned char *want = test_slurp(p, &want_len);
    build_t7(&f);
    unsigned char *got = encode(&f, &len);
    ck_assert_uint_eq(len, want_len);
    for (size_t i = 0; i < len; i++)
        ck_assert_msg(got[i] == want[i], "byte %zu: 0x%02x, want 0x%02x", i,
                      got[i], want[i]);
    ck_assert_msg(bp_st_parse(want, want_len, "want", &g, &e) == BP_OK, "%s",
                  e.msg);
    assert_t7(&g);
    ck_assert_str_eq(bp_st_get_meta(&g, "crc32.w"), "0xd0f8fbec");
    bp_st_free(&g);
    bp_st_free(&f);
    free(got);
    free(want);
}
END_TEST

/* ---- round trips --------------------------------------------------- */

static void random_file(bp_st_file_t *f, int ntensors)
{
    bp_error_t e = {0};
    bp_st_init(f);
    for (int t = 0; t < ntensors; t++) {
        bp_buf_t b;
        int64_t shape[BP_MAXDIM];
        int ndim = (int)(rnd() % 4);
        for (int d = 0; d < ndim; d++)
            shape[d] = (int64_t)(rnd() % 7) + (rnd() % 8 == 0 ? 0 : 1);
        bp_dtype_t dt = (bp_dtype_t)(rnd() % BP_NDTYPES);
        ck_assert(bp_buf_alloc(&b, dt, ndim, shape, &e) == BP_OK);
        for (size_t k = 0; k < b.numel; k++)
            bp_dtype_store_bits(dt, b.data, k, rnd());
        char name[64];
        snprintf(name, sizeof name, "t%d.%s\xc3\xa9", t, bp_dtype_name(dt));
        ck_assert_msg(bp_st_add(f, name, &b, &e) == BP_OK, "%s", e.msg);
        bp_buf_free(&b);
    }
    ck_assert(bp_st_set_meta(f, "env", "{\"cpu\": \"x\\ny\"}", &e) == BP_OK);
    ck_assert(bp_st_set_meta(f, "probe", "rope \xe2\x88\x9a", &e) == BP_OK);
}

START_TEST(t_roundtrip)
{
    rng_state = seed_once();
    for (int round = 0; round < 50; round++) {
        bp_st_file_t f, g;
        bp_error_t e = {0};
        size_t len, len2;
        random_file(&f, (int)(rnd() % 9));
        unsigned char *d = encode(&f, &len);
        ck_assert_msg(bp_st_parse(d, len, "enc", &g, &e) == BP_OK, "%s",
                      e.msg);
        assert_same(&f, &g);
        /* re-encoding what was read gives the same bytes */
        unsigned char *d2 = encode(&g, &len2);
        ck_assert(len2 == len && memcmp(d, d2, len) == 0);
        bp_st_free(&g);
        free(d2);

        for (int gz = 0; gz < 2; gz++) {
            char p[512];
            tmp_path(gz ? "rt.safetensors.gz" : "rt.safetensors", p,
                     sizeof p);
            ck_assert_msg(bp_st_write(p, &f, gz, &e) == BP_OK, "%s", e.msg);
            ck_assert_msg(bp_st_read(p, &g, &e) == BP_OK, "%s", e.msg);
            assert_same(&f, &g);
            bp_st_free(&g);
            size_t fl;
            unsigned char *fd = test_slurp(p, &fl);
            if (!gz) /* the plain file is the encoded bytes */
                ck_assert(fl == len && memcmp(fd, d, len) == 0);
            else
                ck_assert(bp_st_is_gzip(fd, fl));
            free(fd);
            unlink(p);
        }
        bp_st_free(&f);
        free(d);
    }
}
END_TEST

/* Gzip output is the same byte for byte every time, with a fixed header:
 * 1f 8b, CM 8, FLG FHCRC, MTIME 0, XFL 0, OS 255, then the low 16 bits of
 * the CRC-32 of those ten bytes (RFC 1952). */
START_TEST(t_gzip_deterministic)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    size_t l1, l2, plain_len;
    rng_state = 12345;
    random_file(&f, 5);
    unsigned char *a = encode_gz(&f, "a.gz", &l1);
    sleep(1); /* a writer that stamped the time would differ now */
    unsigned char *b = encode_gz(&f, "b.gz", &l2);
    ck_assert(l1 == l2 && memcmp(a, b, l1) == 0);
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 2, 0, 0, 0, 0, 0,
                                           255};
    ck_assert(memcmp(a, head, 10) == 0);
    unsigned long hc = crc32(0, head, 10) & 0xffff;
    ck_assert_uint_eq(a[10] | a[11] << 8, hc);
    /* the trailer: CRC-32 and length of the plain bytes */
    unsigned char *plain = encode(&f, &plain_len);
    unsigned long c = crc32(0, plain, (uInt)plain_len);
    const unsigned char *t = a + l1 - 8;
    ck_assert_uint_eq((unsigned long)t[0] | (unsigned long)t[1] << 8 |
                      (unsigned long)t[2] << 16 | (unsigned long)t[3] << 24, c);
    ck_assert_uint_eq((size_t)(t[4] | t[5] << 8 | t[6] << 16 |
                               (size_t)t[7] << 24), plain_len);
    ck_assert_msg(bp_st_parse(a, l1, "gz", &g, &e) == BP_OK, "%s", e.msg);
    assert_same(&f, &g);
    bp_st_free(&g);
    bp_st_free(&f);
    free(a);
    free(b);
    free(plain);
}
END_TEST

/* ---- corruption ---------------------------------------------------- */

static uint64_t le64(const unsigned char *d)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | d[i];
    return v;
}

START_TEST(t_crc_flip)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    size_t len;
    rng_state = seed_once();
    random_file(&f, 4);
    static const int64_t sh[1] = {3};
    add_raw(&f, "last", BP_F32, 1, sh, "\x00\x00\x80\x3f\x00\x00\x00\x40"
            "\x00\x00\x40\x40");
    unsigned char *d = encode(&f, &len);
    uint64_t n = le64(d), begin = len - 8 - n - 12;
    for (int bit = 0; bit < 96; bit++) {
        d[8 + n + begin + (size_t)bit / 8] ^= (unsigned char)(1u << bit % 8);
        ck_assert_int_eq(bp_st_parse(d, len, "x", &g, &e), BP_EINPUT);
        char want[128];
        snprintf(want, sizeof want, "x: CRC mismatch for tensor 'last' "
                 "(stored 0x%08lx, computed 0x", crc32(0, (const unsigned char *)
                 "\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40", 12));
        ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "%s", e.msg);
        snprintf(want, sizeof want, ") at byte %" PRIu64, 8 + n + begin);
        ck_assert_msg(strstr(e.msg, want), "%s", e.msg);
        d[8 + n + begin + (size_t)bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
    ck_assert(bp_st_parse(d, len, "x", &g, &e) == BP_OK);
    bp_st_free(&g);
    bp_st_free(&f);
    free(d);
}
END_TEST

static void small_file(bp_st_file_t *f)
{
    static const int64_t s1[2] = {2, 2}, s2[1] = {3};
    bp_error_t e = {0};
    bp_st_init(f);
    add_raw(f, "cos", BP_BF16, 2, s1, "\x80\x3f\x49\x40\x00\x80\xff\x7f");
    add_raw(f, "sin", BP_F32, 1, s2, "\x00\x00\x80\x3f\x66\x66\x66\x3f"
            "\x01\x00\x00\x00");
    ck_assert(bp_st_set_meta(f, "probe", "rope", &e) == BP_OK);
}

/* Every single-bit flip of a plain bitprobe file is refused: the length
 * field by the layout, the header (user metadata included) by its CRC,
 * the data by the tensors' CRCs.  Gzip'd, the same holds of the inflated
 * bytes whatever the gzip layer does. */
START_TEST(t_bitflip_plain)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    size_t len;
    small_file(&f);
    unsigned char *d = encode(&f, &len);
    for (size_t bit = 0; bit < 8 * len; bit++) {
        d[bit / 8] ^= (unsigned char)(1u << bit % 8);
        bp_status st = bp_st_parse(d, len, "x", &g, &e);
        ck_assert_msg(st == BP_EINPUT, "flip of bit %zu (byte %zu) %s", bit,
                      bit / 8, st ? e.msg : "accepted");
        /* the same bytes gzip'd: the streaming path agrees */
        size_t zl = compressBound(len) + 32;
        unsigned char *z = malloc(zl);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        ck_assert(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8,
                               Z_DEFAULT_STRATEGY) == Z_OK);
        zs.next_in = d;
        zs.avail_in = (uInt)len;
        zs.next_out = z;
        zs.avail_out = (uInt)zl;
        ck_assert(deflate(&zs, Z_FINISH) == Z_STREAM_END);
        st = bp_st_parse(z, zl - zs.avail_out, "z", &g, &e);
        deflateEnd(&zs);
        free(z);
        ck_assert_msg(st == BP_EINPUT, "gzip'd flip of bit %zu %s", bit,
                      st ? e.msg : "accepted");
        d[bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
    bp_st_free(&f);
    free(d);
}
END_TEST

/* Every single-bit flip of a gzip'd file is refused, except where the
 * content read is unchanged (deflate ignores the padding bits of its last
 * byte). */
START_TEST(t_bitflip_gzip)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    size_t len, same = 0;
    small_file(&f);
    unsigned char *d = encode_gz(&f, "flip.gz", &len);
    for (size_t bit = 0; bit < 8 * len; bit++) {
        d[bit / 8] ^= (unsigned char)(1u << bit % 8);
        bp_status st = bp_st_parse(d, len, "x", &g, &e);
        if (st == BP_OK) {
            assert_same(&f, &g);
            bp_st_free(&g);
            same++;
        } else {
            ck_assert_msg(st == BP_EINPUT, "bit %zu: %s", bit, e.msg);
        }
        d[bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
    ck_assert_uint_le(same, 8);
    bp_st_free(&f);
    free(d);
}
END_TEST

/* Every proper prefix is refused: truncation is never silent. */
START_TEST(t_prefixes)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    size_t len, zlen;
    small_file(&f);
    unsigned char *d = encode(&f, &len), *z = encode_gz(&f, "pre.gz", &zlen);
    for (size_t k = 0; k < len; k++)
        ck_assert_msg(bp_st_parse(d, k, "x", &g, &e) == BP_EINPUT,
                      "prefix %zu accepted", k);
    for (size_t k = 0; k < zlen; k++)
        ck_assert_msg(bp_st_parse(z, k, "x", &g, &e) == BP_EINPUT,
                      "gzip prefix %zu accepted", k);
    bp_st_free(&f);
    free(d);
    free(z);
}
END_TEST

/* ---- resource limits ---------------------------------------------- */

/* A 10 MB gzip file holding a valid 8-byte tensor followed by 10 GiB of
 * zeros: deflate's full flush resets its state, so each 1 MiB of zeros
 * compresses to the same block, repeated 10240 times.  Refused at the
 * first byte beyond the claimed data, in bounded memory; and without
 * inflating the rest, which is shown without a clock: with everything after
 * the first 1 MiB of zeros overwritten by garbage that inflate would
 * reject, the message is the same. */
START_TEST(t_gzip_bomb)
{
    static const char hdr[] =
        "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    size_t hl = strlen(hdr), padded = (hl + 7) / 8 * 8;
    unsigned char head[128] = {0};
    head[0] = (unsigned char)padded;
    memcpy(head + 8, hdr, hl);
    memset(head + 8 + hl, ' ', padded - hl);
    size_t plain = 8 + padded + 8; /* + 8 zero data bytes */
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) ==
              Z_OK);
    size_t cap = 12u << 20, at = 0;
    unsigned char *out = malloc(cap), *zeros = calloc(1, 1 << 20);
    z.next_in = head;
    z.avail_in = (uInt)plain;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert(deflate(&z, Z_FULL_FLUSH) == Z_OK);
    size_t blk[3];
    for (int r = 0; r < 3; r++) { /* the third block must equal the second */
        size_t before = cap - z.avail_out;
        z.next_in = zeros;
        z.avail_in = 1 << 20;
        ck_assert(deflate(&z, Z_FULL_FLUSH) == Z_OK && z.avail_in == 0);
        blk[r] = before;
        at = cap - z.avail_out;
    }
    size_t bl = at - blk[2];
    ck_assert_uint_eq(blk[2] - blk[1], bl);
    ck_assert(memcmp(out + blk[1], out + blk[2], bl) == 0);
    deflateEnd(&z);
    while (at + bl <= cap && (at - blk[0]) / bl < 10240) {
        memcpy(out + at, out + blk[2], bl);
        at += bl;
    }
    ck_assert_uint_eq((at - blk[0]) / bl, 10240); /* 10 GiB of zeros */

    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    bp_st_file_t f;
    bp_error_t e = {0};
    ck_assert_int_eq(bp_st_parse(out, at, "bomb", &f, &e), BP_EINPUT);
    getrusage(RUSAGE_SELF, &r1);
    char want[160];
    snprintf(want, sizeof want, "bomb: trailing bytes after the 8 data "
             "bytes the header claims at byte %zu of the inflated stream",
             plain);
    ck_assert_str_eq(e.msg, want);
    printf("check_st: gzip bomb (%zu bytes, 10 GiB inflated) refused, peak "
           "RSS grew by %ld KiB\n", at, r1.ru_maxrss - r0.ru_maxrss);
    ck_assert_int_lt(r1.ru_maxrss - r0.ru_maxrss, 64 * 1024); /* KiB */
    memset(out + blk[1], 0xff, at - blk[1]);
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(bp_st_parse(out, at, "bomb", &f, &e), BP_EINPUT);
    ck_assert_str_eq(e.msg, want);
    /* The garbage itself is refused where it is read. */
    memset(out + blk[0], 0xff, at - blk[0]);
    ck_assert_int_eq(bp_st_parse(out, at, "bomb", &f, &e), BP_EINPUT);
    ck_assert_str_ne(e.msg, want);
    free(out);
    free(zeros);
}
END_TEST

/* Claims of absurd sizes are refused before anything is allocated. */
START_TEST(t_huge_claims)
{
    bp_st_file_t f;
    bp_error_t e = {0};
    unsigned char d[16] = {0};
    uint64_t n = 9000000000000000000ULL;
    for (int i = 0; i < 8; i++)
        d[i] = (unsigned char)(n >> (8 * i));
    d[8] = '{';
    d[9] = '}';
    ck_assert_int_eq(bp_st_parse(d, 16, "x", &f, &e), BP_EINPUT);
    ck_assert_str_eq(e.msg, "x: header length 9000000000000000000 exceeds "
                     "100 MB at byte 0");
    /* 2^62 bytes of data claimed by a 100-byte plain input */
    static const char h[] = "{\"t\":{\"dtype\":\"I64\",\"shape\":"
        "[576460752303423488],\"data_offsets\":[0,4611686018427387904]}}";
    unsigned char b[128] = {0};
    b[0] = (unsigned char)strlen(h);
    memcpy(b + 8, h, strlen(h));
    ck_assert_int_eq(bp_st_parse(b, 8 + strlen(h), "y", &f, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "more than the limit of 68719476736"), "%s",
                  e.msg);
}
END_TEST

/* Input of unknown length claiming 7 GiB (under the streamed-input cap)
 * but holding 8 bytes of data: refused at its end, without the claimed
 * memory ever being allocated (buffers grow with the bytes received). */
START_TEST(t_claims_streamed)
{
    bp_st_file_t f;
    bp_error_t e = {0};
    static const char h[] = "{\"t\":{\"dtype\":\"F32\",\"shape\":"
        "[1879048192],\"data_offsets\":[0,7516192768]}}";
    unsigned char b[128] = {0};
    size_t hl = strlen(h), n = 8 + hl + 8;
    b[0] = (unsigned char)hl;
    memcpy(b + 8, h, hl);
    unsigned char z[256];
    uLongf zl = sizeof z;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ck_assert(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) ==
              Z_OK);
    zs.next_in = b;
    zs.avail_in = (uInt)n;
    zs.next_out = z;
    zs.avail_out = (uInt)zl;
    ck_assert(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    zl -= zs.avail_out;
    deflateEnd(&zs);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    ck_assert_int_eq(bp_st_parse(z, zl, "x", &f, &e), BP_EINPUT);
    getrusage(RUSAGE_SELF, &r1);
    char want[200];
    snprintf(want, sizeof want, "x: input ends inside the data: the header "
             "claims 7516192768 data bytes, up to byte %zu at byte %zu of "
             "the inflated stream", 8 + hl + (size_t)7516192768u, n);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_lt(r1.ru_maxrss - r0.ru_maxrss, 16 * 1024); /* KiB */
    /* "__header__" would share its CRC key with the header */
    bp_buf_t t;
    static const int64_t s1[1] = {1};
    ck_assert(bp_buf_alloc(&t, BP_F32, 1, s1, &e) == BP_OK);
    ck_assert_int_eq(bp_st_add(&f, "__header__", &t, &e), BP_EINPUT);
    ck_assert_str_eq(e.msg, "'__header__' is reserved, not a tensor name");
    bp_buf_free(&t);
}
END_TEST

/* Empty tensors sharing an offset are listed by name, whatever the order
 * of their keys: read, written (keys sorted) and read again, the list is
 * the same.  (Found by fuzzing: tests/fuzz/corpus/st_roundtrip.) */
START_TEST(t_empty_order)
{
    static const char h[] =
        "{\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
        "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"h\":{\"dtype\":\"F32\",\"shape\":[0,2],\"data_offsets\":[4,4]}}";
    unsigned char b[256] = {0};
    size_t hl = strlen(h), len;
    b[0] = (unsigned char)hl;
    memcpy(b + 8, h, hl);
    bp_st_file_t f, g;
    bp_error_t e = {0};
    ck_assert_msg(bp_st_parse(b, 8 + hl + 4, "x", &f, &e) == BP_OK, "%s",
                  e.msg);
    ck_assert_uint_eq(f.n, 3);
    ck_assert_str_eq(f.t[0].name, "w");
    ck_assert_str_eq(f.t[1].name, "h");
    ck_assert_str_eq(f.t[2].name, "z");
    unsigned char *d = encode(&f, &len);
    ck_assert_msg(bp_st_parse(d, len, "y", &g, &e) == BP_OK, "%s", e.msg);
    assert_same(&f, &g);
    bp_st_free(&g);
    bp_st_free(&f);
    free(d);
}
END_TEST

/* ---- the file API -------------------------------------------------- */

START_TEST(t_api)
{
    bp_st_file_t f, g;
    bp_error_t e = {0};
    static const int64_t s1[1] = {1};
    bp_buf_t b;
    size_t len;
    bp_st_init(&f);
    ck_assert(bp_buf_alloc(&b, BP_I32, 1, s1, &e) == BP_OK);
    ck_assert(bp_st_add(&f, "a", &b, &e) == BP_OK);
    ck_assert_int_eq(bp_st_add(&f, "a", &b, &e), BP_EINPUT);
    ck_assert_str_eq(e.msg, "duplicate tensor name 'a'");
    ck_assert_int_eq(bp_st_add(&f, "__metadata__", &b, &e), BP_EINPUT);
    ck_assert_int_eq(bp_st_add(&f, "bad\xff", &b, &e), BP_EINPUT);
    ck_assert(bp_st_find(&f, "a") == &f.t[0]);
    ck_assert(bp_st_find(&f, "b") == NULL);
    ((int32_t *)b.data)[0] = 7; /* add copied the data */
    ck_assert_int_eq(((int32_t *)f.t[0].buf.data)[0], 0);
    bp_buf_free(&b);
    /* stale and forged CRC entries are dropped by the writer */
    ck_assert(bp_st_set_meta(&f, "crc32.gone", "0x12345678", &e) == BP_OK);
    ck_assert(bp_st_set_meta(&f, "crc32.a", "0x00000000", &e) == BP_OK);
    ck_assert(bp_st_get_meta(&f, "nothing") == NULL);
    unsigned char *d = encode(&f, &len);
    ck_assert_msg(bp_st_parse(d, len, "x", &g, &e) == BP_OK, "%s", e.msg);
    ck_assert(bp_st_get_meta(&g, "crc32.gone") == NULL);
    ck_assert_str_eq(bp_st_get_meta(&g, "crc32.a"), "0x2144df1c");
    bp_st_free(&g);
    free(d);
    /* metadata values must be strings */
    json_object_set_new(f.meta, "n", json_integer(1));
    void *out;
    ck_assert_int_eq(bp_st_encode(&f, &out, &len, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "'n' is not a string"), "%s", e.msg);
    bp_st_free(&f);
    ck_assert(f.n == 0 && f.t == NULL && f.meta == NULL);
    bp_st_free(&f); /* twice is harmless */
}
END_TEST

START_TEST(t_io_errors)
{
    bp_st_file_t f;
    bp_error_t e = {0};
    ck_assert_int_eq(bp_st_read("/nonexistent/x.safetensors", &f, &e),
                     BP_EIO);
    ck_assert_str_eq(e.msg, "cannot open '/nonexistent/x.safetensors': "
                     "No such file or directory");
    bp_st_init(&f);
    ck_assert_int_eq(bp_st_write("/nonexistent/y", &f, false, &e), BP_EIO);
    ck_assert_msg(strstr(e.msg, "cannot create '/nonexistent/y'"), "%s",
                  e.msg);
}
END_TEST

/* A pipe is not a file: refused at once (safeopen.h), never waited on,
 * with a writer that never writes. */
START_TEST(t_pipe)
{
    bp_st_file_t g;
    bp_error_t e = {0};
    int fd[2];
    char p[64];
    ck_assert(pipe(fd) == 0);
    snprintf(p, sizeof p, "/dev/fd/%d", fd[0]);
    ck_assert_int_eq(bp_st_read(p, &g, &e), BP_EINPUT);
    ck_assert_msg(strstr(e.msg, "it is a FIFO, not a regular file"), "%s", e.msg);
    close(fd[0]);
    close(fd[1]);
}
END_TEST

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/check_st.XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("check_st: mkdtemp");
        return EXIT_FAILURE;
    }
    Suite *s = suite_create("st");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, t_bad_file, 0, (int)N(bads));
    tcase_add_loop_test(tc, t_bad_mem, 0, (int)N(bads));
    tcase_add_test(tc, t_reference_vectors);
    tcase_add_test(tc, t_python_written);
    tcase_add_test(tc, t_storage_dtypes);
    tcase_add_test(tc, t_encode_exact);
    tcase_add_test(tc, t_roundtrip);
    tcase_add_test(tc, t_gzip_deterministic);
    tcase_add_test(tc, t_crc_flip);
    tcase_add_test(tc, t_bitflip_plain);
    tcase_add_test(tc, t_bitflip_gzip);
    tcase_add_test(tc, t_prefixes);
    tcase_add_test(tc, t_gzip_bomb);
    tcase_add_test(tc, t_huge_claims);
    tcase_add_test(tc, t_claims_streamed);
    tcase_add_test(tc, t_empty_order);
    tcase_add_test(tc, t_api);
    tcase_add_test(tc, t_io_errors);
    tcase_add_test(tc, t_pipe);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    rmdir(tmpdir);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
