/* Fuzz target: the safetensors reader (bp_st_parse), plain and gzip.
 * An input that is not gzip is read as it is and once more gzip'd: both
 * reads must agree (the streaming path, which does not know the length,
 * against the one that does). */
#include "fuzz_st.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bp_st_file_t f, g;
    bp_error_t e = {0}, e2 = {0};
    bp_status st = bp_st_parse(data, size, "fuzz", &f, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz");
        FUZZ_CHECK(f.n == 0 && f.meta == NULL, "a failed read kept tensors");
    } else {
        fuzz_st_valid(&f);
    }
    if (bp_st_is_gzip(data, size)) {
        if (!st)
            bp_st_free(&f);
        return 0;
    }
    size_t zn;
    unsigned char *z = fuzz_gzip(data, size, &zn);
    bp_status st2 = bp_st_parse(z, zn, "fuzz", &g, &e2);
    free(z);
    FUZZ_CHECK((st == BP_OK) == (st2 == BP_OK),
               "plain: %s; gzip'd: %s", st ? e.msg : "ok",
               st2 ? e2.msg : "ok");
    if (!st) {
        fuzz_st_same_tensors(&f, &g);
        FUZZ_CHECK(fuzz_st_same_meta(&f, &g, false), "metadata differs");
        bp_st_free(&f);
        bp_st_free(&g);
    } else {
        FUZZ_CHECK_FAIL(st2, &e2, "fuzz");
    }
    return 0;
}
