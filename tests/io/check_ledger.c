/* Tests for the ledger reader and its hash: the files tests/ledger-bad/
 * make.py wrote (one per rule of docs/ledger-format.md) must be refused
 * with their message, line, record and byte offset; the good ledger must
 * read with what make.py put in it, its captures checked; the hash must
 * give the values make.py's own implementation of the format's
 * definition gives, and change whenever one 32-bit word changes. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger.h"
#include "test_files.h"

#define N(a) (sizeof(a) / sizeof *(a))

/* file, message, record (-1: none, -2: a captures rule), line, byte offset */
static const struct bad_case {
    const char *file, *msg;
    int record, line;
    long offset;
} bad_cases[] = {
    {"empty.ledger", "the file is empty", -1, 1, 0},
    {"no-newline.ledger", "ends without a newline", 3, 5, 1023},
    {"truncated.ledger", "no end line after record 1", -1, 4, 655},
    {"cut-mid-line.ledger", "ends without a newline", 1, 3, 344},
    {"not-ledger.ledger", "not a bitprobe ledger", -1, 1, 0},
    {"not-json.ledger", "invalid JSON", -1, 1, 0},
    {"array-line.ledger", "must hold a JSON object", 0, 2, 123},
    {"version-2.ledger", "ledger version 2 (this bitprobe reads version 1)", -1, 1, 0},
    {"version-string.ledger", "'version' must be an integer", -1, 1, 0},
    {"unknown-hash.ledger", "unknown hash \"sha256\"", -1, 1, 0},
    {"captures-path.ledger", "'captures' must be a plain file name", -1, 1, 0},
    {"captures-none.ledger", "header names no captures file", -1, 5, 1002},
    {"seq-gap.ledger", "seq is 2, expected 1", 1, 3, 344},
    {"missing-op.ledger", "has no 'op'", 1, 3, 344},
    {"op-empty.ledger", "'op' must be 1 to 256 bytes long", 1, 3, 344},
    {"unknown-member.ledger", "unknown member 'extra'", 0, 2, 123},
    {"args-not-array.ledger", "'args' must be an array, not an object", 1, 3, 344},
    {"shape-string.ledger", "'shape' must be an array, not a string", 1, 3, 344},
    {"unknown-dtype.ledger", "unknown dtype 'F33'", 1, 3, 344},
    {"negative-dim.ledger", "shape[0] must be an integer of at least 0, not negative", 1, 3, 344},
    {"too-many-dims.ledger", "shape has 33 dimensions", 1, 3, 344},
    {"stride-count.ledger", "stride has 2 entries for 1 dimensions", 1, 3, 344},
    {"nbytes-mismatch.ledger", "nbytes is 12, the shape and F32 make 16", 1, 3, 344},
    {"nbytes-overflow.ledger", "shape makes more than 2^64 bytes", 1, 3, 344},
    {"huge-claim.ledger", "claims 4611686018427387904 bytes", 1, 3, 344},
    {"hash-short.ledger", "hash must be 16 lower-case hex digits", 1, 3, 344},
    {"hash-upper.ledger", "hash must be 16 lower-case hex digits", 1, 3, 344},
    {"hash-missing.ledger", "has no 'hash'", 1, 3, 344},
    {"why-with-hash.ledger", "'why' is for a tensor without a hash", 1, 3, 344},
    {"capture-no-hash.ledger", "a captured tensor needs its hash", 1, 3, 344},
    {"ref-range.ledger", "tensor reference {\"t\": out of range} is not one of the 1", 1, 3, 344},
    {"ref-twice.ledger", "in[0] is referenced 2 times", 1, 3, 344},
    {"ref-missing.ledger", "in[0] is referenced 0 times", 1, 3, 344},
    {"arg-form.ledger", "unknown argument form {\"tensor\": ...}", 1, 3, 344},
    {"end-records.ledger", "the end line counts 4 records, the ledger holds 3", -1, 5, 1023},
    {"end-captures.ledger", "counts 1 captured tensors, the records name 2", -1, 5, 1023},
    {"end-extra.ledger", "the end line has members besides 'end'", -1, 5, 1023},
    {"after-end.ledger", "a line after the end line", -1, 6, 1072},
    {"duplicate-key.ledger", "invalid JSON", 1, 3, 344},
    {"bad-utf8.ledger", "invalid JSON", 0, 2, 123},
    {"nul-escape.ledger", "invalid JSON", 0, 2, 123},
    {"cap-missing.ledger", "lack tensor '1.out0'", -2, 0, 0},
    {"cap-shape.ledger", "is F32 [2, 2], record 1", -2, 0, 0},
    {"cap-hash.ledger", "the captures do not belong to this ledger", -2, 0, 0},
};

static void path_of(const char *dir, const char *file, char *out, size_t n)
{
    test_data_path(dir, file, out, n);
}

START_TEST(t_bad)
{
    const struct bad_case *c = &bad_cases[_i];
    char path[512], want[600];
    path_of("ledger-bad", c->file, path, sizeof path);
    bp_ledger_t l;
    bp_error_t e = {0};
    bp_status st = bp_ledger_read(path, &l, &e);
    if (c->record == -2) { /* the ledger is fine, its captures are not */
        ck_assert_msg(st == BP_OK, "%s: %s", c->file, e.msg);
        bp_st_file_t f;
        st = bp_ledger_read_captures(&l, &f, &e);
        bp_ledger_free(&l);
        ck_assert_msg(st == BP_EINPUT, "%s: captures accepted", c->file);
        ck_assert_msg(strstr(e.msg, c->msg), "%s: '%s' lacks '%s'", c->file, e.msg, c->msg);
        return;
    }
    ck_assert_msg(st == BP_EINPUT, "%s: status %d (%s)", c->file, st, e.msg);
    ck_assert_msg(strstr(e.msg, c->msg), "%s: '%s' lacks '%s'", c->file, e.msg, c->msg);
    snprintf(want, sizeof want, "ledger '%s'", path);
    ck_assert_msg(strstr(e.msg, want), "%s: '%s' does not name the file", c->file, e.msg);
    snprintf(want, sizeof want, "line %d ", c->line);
    ck_assert_msg(strstr(e.msg, want) || (snprintf(want, sizeof want, "line %d,", c->line),
                                          strstr(e.msg, want)),
                  "%s: '%s' does not say line %d", c->file, e.msg, c->line);
    snprintf(want, sizeof want, "byte %ld)", c->offset);
    ck_assert_msg(strstr(e.msg, want), "%s: '%s' lacks '%s'", c->file, e.msg, want);
    if (c->record >= 0) {
        snprintf(want, sizeof want, "record %d (", c->record);
        ck_assert_msg(strstr(e.msg, want), "%s: '%s' lacks '%s'", c->file, e.msg, want);
    }
    ck_assert(l.ops == NULL && l.header == NULL && l.mem == NULL);
}
END_TEST

/* The same files through a stream (how the fuzz target reads). */
START_TEST(t_bad_stream)
{
    const struct bad_case *c = &bad_cases[_i];
    if (c->record == -2)
        return;
    char path[512];
    path_of("ledger-bad", c->file, path, sizeof path);
    size_t len;
    unsigned char *d = test_slurp(path, &len);
    FILE *f = fmemopen(d, len ? len : 1, "r");
    if (!len) /* fmemopen needs a size: an empty stream instead */
        fgetc(f);
    bp_ledger_t l;
    bp_error_t e = {0};
    ck_assert(bp_ledger_read_stream(f, "mem.ledger", &l, &e) == BP_EINPUT);
    ck_assert_msg(strstr(e.msg, c->msg), "%s: '%s'", c->file, e.msg);
    ck_assert(strstr(e.msg, "ledger 'mem.ledger'"));
    fclose(f);
    free(d);
}
END_TEST

START_TEST(t_good)
{
    char path[512];
    path_of("ledger-good", "good.ledger", path, sizeof path);
    bp_ledger_t l;
    bp_error_t e = {0};
    ck_assert_msg(bp_ledger_read(path, &l, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_uint_eq(l.ncaptures, 2);
    ck_assert_str_eq(l.ops[0].op, "aten::arange");
    ck_assert_str_eq(l.ops[1].op, "aten::div.Tensor");
    ck_assert_str_eq(l.ops[1].module, "rope");
    ck_assert_str_eq(l.ops[2].module, "");
    ck_assert_uint_eq(l.ops[1].nin, 1);
    ck_assert_uint_eq(l.ops[2].nin, 2);
    ck_assert_str_eq(l.ops[1].call, "{\"args\":[{\"t\":0},10]}");
    ck_assert_str_eq(l.ops[0].call, "{\"args\":[4],\"kwargs\":{\"dtype\":{\"dtype\":\"F32\"}}}");
    const bp_ledger_tensor_t *t = &l.ops[1].in[0];
    ck_assert_str_eq(t->dtype, "F32");
    ck_assert_int_eq(t->ndim, 1);
    ck_assert_int_eq(t->shape[0], 4);
    ck_assert_uint_eq(t->nbytes, 16);
    ck_assert(t->has_hash);
    ck_assert_uint_eq(t->hash, 0x9d64f72078a09752ull); /* make.py's hash of [0,1,2,3] */
    ck_assert_str_eq(t->capture, "0.out0");
    ck_assert_uint_eq(l.ops[1].line, 3);
    ck_assert_str_eq(bp_ledger_header_str(&l, "torch"), "hand-written");
    /* Interned: one string for one name. */
    ck_assert_ptr_eq(l.ops[0].module, l.ops[1].module);
    bp_st_file_t f;
    ck_assert_msg(bp_ledger_read_captures(&l, &f, &e) == BP_OK, "%s", e.msg);
    ck_assert_uint_eq(f.n, 2);
    bp_st_free(&f);
    bp_ledger_free(&l);
}
END_TEST

START_TEST(t_sniff)
{
    char path[512];
    path_of("ledger-good", "good.ledger", path, sizeof path);
    ck_assert(bp_ledger_sniff(path));
    path_of("st-good", "empty.safetensors", path, sizeof path);
    ck_assert(!bp_ledger_sniff(path));
    ck_assert(bp_ledger_sniff("missing.ledger")); /* the name says so: the reader will fail */
    ck_assert(!bp_ledger_sniff("missing.safetensors"));
}
END_TEST

START_TEST(t_hash_vectors)
{
    /* From tests/ledger-bad/make.py's implementation of the definition. */
    static const float pos[4] = {0, 1, 2, 3};
    unsigned char bytes[10];
    for (int i = 0; i < 10; i++)
        bytes[i] = (unsigned char)i;
    ck_assert_uint_eq(bp_ledger_hash("", 0), 0);
    ck_assert_uint_eq(bp_ledger_hash(pos, sizeof pos), 0x9d64f72078a09752ull);
    ck_assert_uint_eq(bp_ledger_hash(bytes, 10), 0x70e2d88f27ae6d56ull);
    /* One zero byte is not zero bytes: nbytes is part of H. */
    ck_assert_uint_eq(bp_ledger_hash("\0", 1), 0xb456bcfc34c2cb2cull);
}
END_TEST

/* Any change of one 32-bit word changes the hash (fmix64 is a bijection
 * and x_i carries i); swapping two different words too, in practice. */
START_TEST(t_hash_words)
{
    unsigned seed = (unsigned)time(NULL);
    printf("t_hash_words seed %u\n", seed);
    srand(seed);
    enum { W = 257 };
    uint32_t a[W], b[W];
    for (int i = 0; i < W; i++)
        a[i] = (uint32_t)rand() * 2654435761u ^ (uint32_t)rand();
    uint64_t h = bp_ledger_hash(a, sizeof a);
    for (int trial = 0; trial < 2000; trial++) {
        memcpy(b, a, sizeof a);
        int i = rand() % W;
        b[i] ^= 1u << (rand() % 32);
        ck_assert_msg(bp_ledger_hash(b, sizeof b) != h, "seed %u, word %d", seed, i);
        memcpy(b, a, sizeof a);
        int j = (i + 1 + rand() % (W - 1)) % W;
        b[i] = a[j];
        b[j] = a[i];
        if (a[i] != a[j])
            ck_assert_msg(bp_ledger_hash(b, sizeof b) != h, "seed %u, swap %d %d", seed, i, j);
    }
    /* Trailing zero bytes are padding, not ignored. */
    unsigned char z[12] = {0};
    ck_assert_uint_ne(bp_ledger_hash(z, 9), bp_ledger_hash(z, 12));
}
END_TEST

/* A 17 MiB line: refused without reading past the cap. */
START_TEST(t_long_line)
{
    size_t n = (17u << 20) + 100;
    char *d = malloc(n);
    memset(d, ' ', n);
    const char *hdr = "{\"format\":\"bitprobe-ledger\",\"version\":1,\"hash\":\"fmix64-sum/1\"}\n";
    memcpy(d, hdr, strlen(hdr));
    d[n - 1] = '\n';
    FILE *f = fmemopen(d, n, "r");
    bp_ledger_t l;
    bp_error_t e = {0};
    ck_assert(bp_ledger_read_stream(f, "long.ledger", &l, &e) == BP_EINPUT);
    char want[64];
    snprintf(want, sizeof want, "line 2, byte %zu)", strlen(hdr));
    ck_assert_msg(strstr(e.msg, want), "%s lacks %s", e.msg, want);
    ck_assert_msg(strstr(e.msg, "line longer than 16777216 bytes"), "%s", e.msg);
    fclose(f);
    free(d);
}
END_TEST

START_TEST(t_missing)
{
    bp_ledger_t l;
    bp_error_t e = {0};
    ck_assert(bp_ledger_read("/nonexistent/x.ledger", &l, &e) == BP_EIO);
    ck_assert(strstr(e.msg, "cannot open ledger '/nonexistent/x.ledger'"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ledger");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, t_bad, 0, (int)N(bad_cases));
    tcase_add_loop_test(tc, t_bad_stream, 0, (int)N(bad_cases));
    tcase_add_test(tc, t_good);
    tcase_add_test(tc, t_sniff);
    tcase_add_test(tc, t_hash_vectors);
    tcase_add_test(tc, t_hash_words);
    tcase_add_test(tc, t_long_line);
    tcase_add_test(tc, t_missing);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
