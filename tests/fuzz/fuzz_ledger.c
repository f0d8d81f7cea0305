/* Fuzz target: the op ledger reader from memory, then the ledger diffed
 * with itself.  A read either fails naming the input or keeps the format's
 * promises (records numbered, sizes consistent and capped, hashes and
 * reasons exclusive, captures counted); a ledger diffed with itself pairs
 * every op with itself and finds no difference. */
#include <string.h>

#include "buf.h"
#include "fuzz.h"
#include "ledger_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char one[1];
    FILE *f = size ? fmemopen((void *)data, size, "r") : fmemopen(one, 1, "r");
    if (!f)
        return 0;
    if (!size)
        fgetc(f); /* fmemopen needs a size: an empty stream instead */
    bp_ledger_t l;
    bp_error_t e = {0};
    bp_status st = bp_ledger_read_stream(f, "fuzz.ledger", &l, &e);
    fclose(f);
    if (st) {
        FUZZ_CHECK(l.ops == NULL && l.mem == NULL, "a failed read kept records");
        FUZZ_CHECK_FAIL(st, &e, "cannot read ledger 'fuzz.ledger'");
        return 0;
    }
    FUZZ_CHECK(l.header && l.end, "no header or end");
    FUZZ_CHECK((size_t)json_integer_value(json_object_get(l.end, "records")) == l.n, "records");
    for (size_t i = 0; i < l.n; i++) {
        const bp_ledger_op_t *op = &l.ops[i];
        FUZZ_CHECK(op->op && *op->op && op->module && op->call, "op %zu names", i);
        for (uint32_t k = 0; k < op->nin + op->nout; k++) {
            const bp_ledger_tensor_t *t = k < op->nin ? &op->in[k] : &op->out[k - op->nin];
            size_t es;
            FUZZ_CHECK(bp_ledger_dtype_size(t->dtype, &es), "dtype %s", t->dtype);
            FUZZ_CHECK(t->ndim >= 0 && t->ndim <= BP_LEDGER_MAXDIM, "ndim %d", t->ndim);
            uint64_t b = es;
            for (int d = 0; d < t->ndim; d++)
                b *= (uint64_t)t->shape[d]; /* no overflow: the reader checked */
            FUZZ_CHECK(b == t->nbytes && b <= BP_BUF_MAX_BYTES, "op %zu nbytes", i);
            FUZZ_CHECK(!(t->has_hash && t->why), "hash and why");
            FUZZ_CHECK(!t->capture || t->has_hash, "capture without hash");
        }
    }
    bp_ledger_diff_t d;
    st = bp_ledger_diff(&l, &l, &d, &e);
    FUZZ_CHECK(st == BP_OK || st == BP_ENOMEM, "self diff: %s", e.msg);
    if (!st) {
        FUZZ_CHECK(d.exact && d.n == l.n && d.paired == l.n, "self alignment");
        FUZZ_CHECK(!d.count[BP_LOP_INTRODUCED] && !d.count[BP_LOP_INHERITED] &&
                       !d.count[BP_LOP_ABSORBED],
                   "a ledger differs from itself");
        json_t *j = bp_ledger_diff_json(&d, 16);
        FUZZ_CHECK(j != NULL, "json");
        json_decref(j);
        bp_ledger_diff_free(&d);
    }
    bp_ledger_free(&l);
    return 0;
}
