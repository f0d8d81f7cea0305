/* Fuzz target: the probe reader (YAML layer and schema) from memory.
 * The label is "<name>.yaml" for the first "name:" line of the input, so
 * that mutated probes get past the file-name check into the op graph. */
#include <string.h>

#include "fuzz.h"
#include "probe.h"

static void label_for(const uint8_t *d, size_t n, char *out, size_t cap)
{
    snprintf(out, cap, "fuzz.yaml");
    for (size_t i = 0; i + 5 <= n; i++) {
        if ((i == 0 || d[i - 1] == '\n') && memcmp(d + i, "name:", 5) == 0) {
            size_t j = i + 5, k = 0;
            char name[129];
            while (j < n && d[j] == ' ')
                j++;
            while (j < n && k < 128 &&
                   ((d[j] >= 'a' && d[j] <= 'z') ||
                    (d[j] >= '0' && d[j] <= '9') || d[j] == '-'))
                name[k++] = (char)d[j++];
            name[k] = '\0';
            if (k)
                snprintf(out, cap, "%s.yaml", name);
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char label[160];
    label_for(data, size, label, sizeof label);
    bp_probe_t *p = NULL;
    bp_error_t e = {0};
    bp_status st = bp_probe_parse((const char *)data, size, label, &p, &e);
    if (st) {
        FUZZ_CHECK(p == NULL, "a failed load returned a probe");
        FUZZ_CHECK_FAIL(st, &e, label);
        return 0;
    }
    /* A loaded probe keeps its promises: buffers come from earlier ops,
     * outputs name ops, the hash is 16 hex digits and recomputes. */
    FUZZ_CHECK(p && p->name && p->nops > 0 && p->noutputs > 0 && p->dtypes,
               "incomplete probe");
    FUZZ_CHECK(strlen(p->hash) == 16, "hash '%s'", p->hash);
    char h[17];
    bp_probe_hash(p, h);
    FUZZ_CHECK(strcmp(h, p->hash) == 0, "hash %s, recomputed %s", p->hash, h);
    for (size_t i = 0; i < p->nops; i++) {
        FUZZ_CHECK(bp_probe_find_buf(p, p->ops[i].out) <= (int)i,
                   "buffer '%s' defined after op %zu", p->ops[i].out, i);
        int reads[BP_OP_MAXREADS];
        int n = bp_op_reads(&p->ops[i], reads);
        for (int k = 0; k < n; k++)
            FUZZ_CHECK(reads[k] >= 0 && (size_t)reads[k] < i,
                       "op %zu reads buffer %d", i, reads[k]);
    }
    for (size_t i = 0; i < p->noutputs; i++)
        FUZZ_CHECK(p->outputs[i].buf >= 0 &&
                       (size_t)p->outputs[i].buf < p->nops,
                   "output %zu names buffer %d", i, p->outputs[i].buf);
    bp_probe_free(p);
    return 0;
}
