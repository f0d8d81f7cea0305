/* Fuzz target: the .npy reader from memory, with and without as_bf16. */
#include <string.h>

#include "fuzz.h"
#include "npy.h"

static void one(const uint8_t *data, size_t size, bool as_bf16)
{
    bp_buf_t b;
    bp_error_t e = {0};
    memset(&b, 0xa5, sizeof b);
    bp_status st = bp_npy_parse(data, size, "fuzz.npy", as_bf16, &b, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz.npy");
        return;
    }
    /* The data section is exactly numel elements, and the shape agrees. */
    size_t numel = 1;
    FUZZ_CHECK(b.ndim >= 0 && b.ndim <= BP_MAXDIM, "ndim %d", b.ndim);
    for (int d = 0; d < b.ndim; d++) {
        FUZZ_CHECK(b.shape[d] >= 0, "dimension %d is %lld", d,
                   (long long)b.shape[d]);
        numel *= (size_t)b.shape[d];
    }
    FUZZ_CHECK(numel == b.numel, "numel %zu, shape gives %zu", b.numel, numel);
    size_t nb = bp_buf_nbytes(&b);
    FUZZ_CHECK(nb <= size, "%zu data bytes from a %zu-byte input", nb, size);
    FUZZ_CHECK(b.data != NULL, "no data");
    /* The data is the input's tail, byte for byte (little-endian only). */
    FUZZ_CHECK(nb == 0 || memcmp(b.data, data + size - nb, nb) == 0,
               "data differs from the input's last %zu bytes", nb);
    FUZZ_CHECK(as_bf16 || b.dtype != BP_BF16, "bf16 without as_bf16");
    bp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size, false);
    one(data, size, true);
    return 0;
}
