/* The screen's test table, fault injection and verdicts (screen.h). */
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"

/* CUDA C Programming Guide, "Mathematical Functions": the maximum ulp
 * error of each single-precision function over its full range (nvcc
 * defaults, no --use_fast_math).  The special function unit's .approx
 * instructions are documented with absolute or relative bounds only: the
 * vote alone (and the golden) judges them. */
const bp_screen_test_t bp_screen_tests[] = {
    {"div-fp32", BP_SCR_ELEM, BPK_SCR_DIV32, BP_F32, 2, BP_SCR_BY_HOST, 0,
     "x / y correctly rounded (__fdiv_rn), random finite x, y"},
    {"sqrt-fp32", BP_SCR_ELEM, BPK_SCR_SQRT32, BP_F32, 1, BP_SCR_BY_HOST, 0,
     "square root correctly rounded (__fsqrt_rn)"},
    {"rcp-fp32", BP_SCR_ELEM, BPK_SCR_RCP32, BP_F32, 1, BP_SCR_BY_HOST, 0,
     "1 / x correctly rounded (__frcp_rn)"},
    {"fma-fp32", BP_SCR_ELEM, BPK_SCR_FMA32, BP_F32, 3, BP_SCR_BY_HOST, 0,
     "x * y + z rounded once (__fmaf_rn)"},
    {"div-fp64", BP_SCR_ELEM, BPK_SCR_DIV64, BP_F64, 2, BP_SCR_BY_HOST, 0,
     "fp64 division correctly rounded (__ddiv_rn)"},
    {"sqrt-fp64", BP_SCR_ELEM, BPK_SCR_SQRT64, BP_F64, 1, BP_SCR_BY_HOST, 0,
     "fp64 square root correctly rounded (__dsqrt_rn)"},
    {"fma-fp64", BP_SCR_ELEM, BPK_SCR_FMA64, BP_F64, 3, BP_SCR_BY_HOST, 0,
     "fp64 fma (__fma_rn)"},
    {"fma-fp16", BP_SCR_ELEM, BPK_SCR_FMA16, BP_F16, 3, BP_SCR_BY_MPFR, 0,
     "fp16 fma (__hfma), checked against MPFR"},
    {"fma-bf16", BP_SCR_ELEM, BPK_SCR_FMABF16, BP_BF16, 3, BP_SCR_BY_MPFR, 0,
     "bf16 fma (__hfma), checked against MPFR"},
    {"pow-fp32", BP_SCR_ELEM, BPK_SCR_POW32, BP_F32, 2, BP_SCR_BY_GOLDEN, 4,
     "powf, x in [0.01, 100), y in [-8, 8), and 1.1 ** 53"},
    {"exp-fp32", BP_SCR_ELEM, BPK_SCR_EXP32, BP_F32, 1, BP_SCR_BY_GOLDEN, 2,
     "expf, x in [-87, 88)"},
    {"log-fp32", BP_SCR_ELEM, BPK_SCR_LOG32, BP_F32, 1, BP_SCR_BY_GOLDEN, 1,
     "logf, every positive finite binade"},
    {"sin-fp32", BP_SCR_ELEM, BPK_SCR_SIN32, BP_F32, 1, BP_SCR_BY_GOLDEN, 2,
     "sinf, x in [-1000, 1000)"},
    {"cos-fp32", BP_SCR_ELEM, BPK_SCR_COS32, BP_F32, 1, BP_SCR_BY_GOLDEN, 2,
     "cosf, x in [-1000, 1000)"},
    {"tanh-fp32", BP_SCR_ELEM, BPK_SCR_TANH32, BP_F32, 1, BP_SCR_BY_GOLDEN, 2,
     "tanhf, x in [-12, 12)"},
    {"sfu-ex2", BP_SCR_ELEM, BPK_SCR_EX2A, BP_F32, 1, BP_SCR_BY_GOLDEN, -1,
     "ex2.approx.f32 (special function unit), x in [-126, 127)"},
    {"sfu-lg2", BP_SCR_ELEM, BPK_SCR_LG2A, BP_F32, 1, BP_SCR_BY_GOLDEN, -1,
     "lg2.approx.f32, positive normal x"},
    {"sfu-sin", BP_SCR_ELEM, BPK_SCR_SINA, BP_F32, 1, BP_SCR_BY_GOLDEN, -1,
     "sin.approx.f32, x in [-100, 100)"},
    {"sfu-rsqrt", BP_SCR_ELEM, BPK_SCR_RSQA, BP_F32, 1, BP_SCR_BY_GOLDEN, -1,
     "rsqrt.approx.f32, positive normal x"},
    {"gemm-ffma", BP_SCR_GEMM, BPK_SCR_GEMM_FFMA, BP_F32, 2, BP_SCR_BY_HOST, 0,
     "256x256x256 fp32 GEMM of integers in [-16, 16] on the FMA pipes"},
    {"mma-fp16", BP_SCR_GEMM, BPK_SCR_GEMM_MMA16, BP_F32, 2, BP_SCR_BY_HOST, 0,
     "128x128x256 fp16 GEMM of integers on the tensor cores, fp32 sums"},
    {"mma-bf16", BP_SCR_GEMM, BPK_SCR_GEMM_MMABF16, BP_F32, 2, BP_SCR_BY_HOST, 0,
     "128x128x256 bf16 GEMM of integers on the tensor cores, fp32 sums"},
    {"cublas-fp32", BP_SCR_CUBLAS, BP_F32, BP_F32, 2, BP_SCR_BY_HOST, 0,
     "2048x1024x64 cuBLAS GEMM as the CUDA backend calls it (device-wide)"},
    {"cublas-bf16", BP_SCR_CUBLAS, BP_BF16, BP_BF16, 2, BP_SCR_BY_HOST, 0,
     "the same in bf16 (integers in [-2, 2]: every sum exact in bf16)"},
    {"cublas-fp16", BP_SCR_CUBLAS, BP_F16, BP_F16, 2, BP_SCR_BY_HOST, 0,
     "the same in fp16 (integers in [-5, 5])"},
    {"mem-ones", BP_SCR_MEM, BPK_SCR_ONES, BP_I32, 0, BP_SCR_BY_HOST, 0,
     "128 MiB of global memory: walking ones, read back past L1 and inverted"},
    {"mem-zeros", BP_SCR_MEM, BPK_SCR_ZEROS, BP_I32, 0, BP_SCR_BY_HOST, 0,
     "the same with walking zeros"},
    {"mem-addr", BP_SCR_MEM, BPK_SCR_ADDR, BP_I32, 0, BP_SCR_BY_HOST, 0,
     "the same with each word's own address"},
    {"smem", BP_SCR_SMEM, 0, BP_I32, 0, BP_SCR_BY_HOST, 0,
     "32 KiB of shared memory per pass, the three patterns, read across warps"},
};
const int bp_screen_ntests = (int)(sizeof bp_screen_tests / sizeof bp_screen_tests[0]);

_Static_assert(sizeof bp_screen_tests / sizeof bp_screen_tests[0] <= BP_SCREEN_MAX_TESTS,
               "BP_SCREEN_MAX_TESTS is too small");

int bp_screen_test_find(const char *name)
{
    for (int i = 0; i < bp_screen_ntests; i++)
        if (strcmp(bp_screen_tests[i].name, name) == 0)
            return i;
    return -1;
}

void bp_screen_gpu_free(bp_screen_gpu_t *g)
{
    if (!g)
        return;
    free(g->present);
    free(g->uncovered);
    free(g->wrong_by_sm);
    for (int i = 0; i < BP_SCREEN_MAX_TESTS; i++) {
        free(g->t[i].agreed);
        free(g->t[i].sm_wrong);
    }
    memset(g, 0, sizeof *g);
}

void bp_screen_gpu_coverage(bp_screen_gpu_t *g)
{
    char sms[256] = "", names[512] = "";
    size_t len = 0, nl = 0;
    int n = 0;
    int nt = 0, shown = 0;
    for (int t = 0; t < bp_screen_ntests; t++)
        nt += (int)(g->uncovered_tests >> t & 1u);
    for (int t = 0; t < bp_screen_ntests; t++)
        if ((g->uncovered_tests >> t & 1u) && shown < (nt > 4 ? 3 : 4)) {
            nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "",
                                   bp_screen_tests[t].name);
            shown++;
        }
    if (shown < nt)
        snprintf(names + nl, sizeof names - nl, " and %d more", nt - shown);
    for (unsigned s = 0; g->uncovered && s < g->nsmid; s++)
        if (g->uncovered[s] && len + 16 < sizeof sms) {
            len += (size_t)snprintf(sms + len, sizeof sms - len, "%s%u", n ? ", " : "", s);
            n++;
        }
    if (!n)
        return;
    size_t el = strlen(g->error);
    g->trouble = true;
    snprintf(g->error + el, sizeof g->error - el, "%sSM %s never ran %s share of %s",
             el ? "; " : "", sms, n == 1 ? "its" : "their", names);
}

bool bp_screen_gpu_wrong(const bp_screen_gpu_t *g)
{
    for (int i = 0; i < bp_screen_ntests; i++)
        if (g->t[i].wrong)
            return true;
    return false;
}

int bp_screen_status(const bp_screen_gpu_t *g, int n)
{
    int st = n > 0 ? 0 : 2;
    for (int i = 0; i < n; i++) {
        if (bp_screen_gpu_wrong(&g[i]))
            return 1;
        if (g[i].trouble)
            st = 2;
    }
    return st;
}

static bool parse_int(const char *s, size_t len, long max, int *out)
{
    char buf[24];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end || v < 0 || v > max || buf[0] == '-' || buf[0] == '+')
        return false;
    *out = (int)v;
    return true;
}

bp_status bp_screen_inject_parse(const char *s, bp_screen_inject_t *out, int *n,
                                 bp_error_t *err)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *c1 = memchr(p, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p)) : NULL;
        if (!c2)
            return bp_error_set(err, BP_EINPUT,
                                "BP_SCREEN_INJECT: '%.*s' is not GPU:SM:TEST", (int)len, p);
        if (*n == BP_SCREEN_MAX_INJECT)
            return bp_error_set(err, BP_EINPUT, "BP_SCREEN_INJECT: more than %d injections",
                                BP_SCREEN_MAX_INJECT);
        bp_screen_inject_t *in = &out[*n];
        char name[64];
        size_t nl = len - (size_t)(c2 + 1 - p);
        if (!parse_int(p, (size_t)(c1 - p), 4095, &in->gpu))
            return bp_error_set(err, BP_EINPUT, "BP_SCREEN_INJECT: '%.*s': GPU '%.*s' is not "
                                "an index", (int)len, p, (int)(c1 - p), p);
        if (!parse_int(c1 + 1, (size_t)(c2 - c1 - 1), BPK_SCR_MAXSM - 1, &in->sm))
            return bp_error_set(err, BP_EINPUT, "BP_SCREEN_INJECT: '%.*s': SM '%.*s' is not "
                                "a number below %d", (int)len, p, (int)(c2 - c1 - 1),
                                c1 + 1, BPK_SCR_MAXSM);
        snprintf(name, sizeof name, "%.*s", (int)(nl < 63 ? nl : 63), c2 + 1);
        if ((in->test = bp_screen_test_find(name)) < 0 || nl >= sizeof name)
            return bp_error_set(err, BP_EINPUT, "BP_SCREEN_INJECT: '%.*s': unknown test "
                                "'%.*s'", (int)len, p, (int)nl, c2 + 1);
        in->used = false;
        (*n)++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (*n == 0)
        return bp_error_set(err, BP_EINPUT, "BP_SCREEN_INJECT is empty");
    return BP_OK;
}
