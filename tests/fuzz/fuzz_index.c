/* Fuzz target: a checkpoint index's rules (ckpt_index.h) from memory. */
#include <stdbool.h>
#include <string.h>

#include "ckpt_index.h"
#include "fuzz.h"
#include "safeopen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bp_ckpt_index_t x;
    bp_error_t e = {0};
    memset(&x, 0xa5, sizeof x);
    bp_status st = bp_ckpt_index_parse((const char *)data, size, "fuzz.index.json", &x, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz.index.json");
        return 0;
    }
    /* Every entry names a shard; every shard is a plain relative name,
     * distinct, and named by some entry. */
    FUZZ_CHECK(x.n > 0 && x.nshards > 0 && x.nshards <= x.n, "%zu entries, %zu shards", x.n,
               x.nshards);
    for (size_t i = 0; i < x.n; i++)
        FUZZ_CHECK(x.e[i].tensor && x.e[i].shard < x.nshards, "entry %zu", i);
    for (size_t k = 0; k < x.nshards; k++) {
        FUZZ_CHECK(bp_safe_name_rule(x.shards[k]) == NULL, "shard '%s' accepted",
                   x.shards[k]);
        bool named = false;
        for (size_t i = 0; i < x.n && !named; i++)
            named = x.e[i].shard == k;
        FUZZ_CHECK(named, "shard %zu named by no entry", k);
        for (size_t j = 0; j < k; j++)
            FUZZ_CHECK(strcmp(x.shards[j], x.shards[k]) != 0, "shard '%s' twice", x.shards[k]);
    }
    bp_ckpt_index_free(&x);
    return 0;
}
