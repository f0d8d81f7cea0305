/* The shipped invariance presets (inv_presets.h).  Batch sweeps of the
 * row ops the CPU computes (mean, softmax) stop at M = 64: the CPU
 * computes every row of every batch; those with a CUDA implementation
 * (sum, rms_norm, log_softmax) and the matmuls go to M = 1024. */
#include "inv_presets.h"

#include <stdio.h>
#include <string.h>

static const bp_inv_preset_t presets[] = {
    {"gemm-4096", "matmul [M, 4096] x [4096, 4096] (attention projections)",
     BP_OP_MATMUL, BP_INV_BATCH, 4096, 4096, 0, "1:1024", NULL},
    {"gemm-11008", "matmul [M, 11008] x [11008, 4096] (Llama-2 7B down projection)",
     BP_OP_MATMUL, BP_INV_BATCH, 11008, 4096, 0, "1:1024", NULL},
    {"gemm-14336", "matmul [M, 14336] x [14336, 4096] (Llama-3 8B down projection)",
     BP_OP_MATMUL, BP_INV_BATCH, 14336, 4096, 0, "1:1024", NULL},
    {"lmhead-32000", "matmul [M, 4096] x [4096, 32000] (Llama-2 LM head)",
     BP_OP_MATMUL, BP_INV_BATCH, 4096, 32000, 0, "1:1024", NULL},
    {"lmhead-128256", "matmul [M, 4096] x [4096, 128256] (Llama-3 LM head)",
     BP_OP_MATMUL, BP_INV_BATCH, 4096, 128256, 0, "1:1024", NULL},
    {"rmsnorm-4096", "rms_norm over 4096", BP_OP_RMS_NORM, BP_INV_BATCH, 0, 4096, 0,
     "1:1024", NULL},
    {"sum-4096", "sum over 4096", BP_OP_SUM, BP_INV_BATCH, 0, 4096, 0, "1:1024", NULL},
    {"mean-4096", "mean over 4096", BP_OP_MEAN, BP_INV_BATCH, 0, 4096, 0, "1:64", NULL},
    {"softmax-32000", "softmax over a 32000 vocabulary", BP_OP_SOFTMAX, BP_INV_BATCH, 0,
     32000, 0, "1:64", NULL},
    {"softmax-128256", "softmax over a 128256 vocabulary", BP_OP_SOFTMAX, BP_INV_BATCH,
     0, 128256, 0, "1:64", NULL},
    {"logsoftmax-32000", "log_softmax over a 32000 vocabulary", BP_OP_LOG_SOFTMAX,
     BP_INV_BATCH, 0, 32000, 0, "1:1024", NULL},
    {"logsoftmax-128256", "log_softmax over a 128256 vocabulary", BP_OP_LOG_SOFTMAX,
     BP_INV_BATCH, 0, 128256, 0, "1:1024", NULL},
    {"splitk-4096", "matmul 4096 x 4096 with K split in S parts", BP_OP_MATMUL,
     BP_INV_SPLIT, 4096, 4096, 0, "1:16", "seq,tree"},
    {"splitk-14336", "matmul 14336 x 4096 with K split in S parts", BP_OP_MATMUL,
     BP_INV_SPLIT, 14336, 4096, 0, "1:16", "seq,tree"},
    {"splitrows-128256", "log_softmax over 128256 with its sum split in S parts",
     BP_OP_LOG_SOFTMAX, BP_INV_SPLIT, 0, 128256, 0, "1:16", "seq,tree"},
    {"tp-4096", "matmul 4096 x 4096, K over T ranks, all-reduced", BP_OP_MATMUL,
     BP_INV_RANKS, 4096, 4096, 0, "1,2,4,8", "ring,tree,rank"},
    {"tp-14336", "matmul 14336 x 4096, K over T ranks, all-reduced", BP_OP_MATMUL,
     BP_INV_RANKS, 14336, 4096, 0, "1,2,4,8", "ring,tree,rank"},
    {"decode-4k", "decoding attention, 32 heads of 128, 4096 keys, split-KV",
     BP_OP_SDPA, BP_INV_SPLIT, 4096, 128, 32, "1,2,4,8,16", "seq"},
    {"decode-32k", "decoding attention, 32 heads of 128, 32768 keys, split-KV",
     BP_OP_SDPA, BP_INV_SPLIT, 32768, 128, 32, "1,2,4,8", "seq"},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

static const struct {
    const char *name;
    const char *members;
} groups[] = {
    {"llm-gemm", "gemm-4096,gemm-11008,gemm-14336,lmhead-32000,lmhead-128256"},
    {"llm-rows", "rmsnorm-4096,sum-4096,mean-4096,softmax-32000,softmax-128256,"
                 "logsoftmax-32000,logsoftmax-128256"},
    {"llm-split", "splitk-4096,splitk-14336,splitrows-128256,tp-4096,tp-14336,"
                  "decode-4k,decode-32k"},
};

const bp_inv_preset_t *bp_inv_presets(void)
{
    return presets;
}

static const bp_inv_preset_t *find(const char *name, size_t len)
{
    for (const bp_inv_preset_t *p = presets; p->name; p++)
        if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
            return p;
    return NULL;
}

static int add(const bp_inv_preset_t *p, const bp_inv_preset_t **out, int n, int max)
{
    for (int i = 0; i < n; i++)
        if (out[i] == p)
            return n;
    if (n < max)
        out[n++] = p;
    return n;
}

static int expand(const char *list, const bp_inv_preset_t **out, int n, int max,
                  char *bad, size_t nb, int depth)
{
    const char *s = list;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const bp_inv_preset_t *p = find(s, len);
        if (p) {
            n = add(p, out, n, max);
        } else if (len == 3 && strncmp(s, "llm", 3) == 0) {
            for (p = presets; p->name; p++)
                n = add(p, out, n, max);
        } else {
            size_t g = 0, ng = sizeof groups / sizeof groups[0];
            while (g < ng && !(strlen(groups[g].name) == len &&
                               strncmp(groups[g].name, s, len) == 0))
                g++;
            if (g == ng || depth > 0) {
                snprintf(bad, nb, "%.*s", (int)len, s);
                return -1;
            }
            n = expand(groups[g].members, out, n, max, bad, nb, depth + 1);
            if (n < 0)
                return n;
        }
        if (!e)
            break;
        s = e + 1;
    }
    return n;
}

int bp_inv_presets_expand(const char *list, const bp_inv_preset_t **out, int max,
                          char *bad, size_t n)
{
    if (!*list) {
        snprintf(bad, n, "(empty)");
        return -1;
    }
    return expand(list, out, 0, max, bad, n, 0);
}
