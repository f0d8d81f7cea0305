/* MKL's code path choice (see mkl_isa.h): the CPU's vendor and features,
 * MKL_ENABLE_INSTRUCTIONS and MKL_CBWR as MKL's documentation names their
 * values. */
#include "mkl_isa.h"

#include "cpu_isa.h"

#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = {
    [BP_MKL_AUTO] = "auto", [BP_MKL_CNR] = "cnr",       [BP_MKL_SSE42] = "sse42",
    [BP_MKL_AVX2] = "avx2", [BP_MKL_AVX512] = "avx512",
};

const char *bp_mkl_isa_name(bp_mkl_isa_t i)
{
    return (unsigned)i < sizeof names / sizeof names[0] ? names[i] : "?";
}

/* MKL_ENABLE_INSTRUCTIONS' values by the level they run. */
static const bp_isa_alias_t env_names[] = {
    {"sse4_2", BP_MKL_SSE42},     {"avx", BP_MKL_SSE42},        {"avx2", BP_MKL_AVX2},
    {"avx2_e1", BP_MKL_AVX2},     {"avx512", BP_MKL_AVX512},    {"avx512_e1", BP_MKL_AVX512},
    {"avx512_e2", BP_MKL_AVX512}, {"avx512_e3", BP_MKL_AVX512}, {"avx512_e4", BP_MKL_AVX512},
    {"avx512_e5", BP_MKL_AVX512}, {"avx10", BP_MKL_AVX512},
};

bool bp_mkl_isa_parse(const char *s, bp_mkl_isa_t *out)
{
    int l = bp_isa_lookup(s, names, sizeof names / sizeof names[0], env_names,
                          sizeof env_names / sizeof env_names[0]);
    if (l < 0)
        return false;
    *out = (bp_mkl_isa_t)l;
    return true;
}

bp_mkl_isa_t bp_mkl_isa_detect(void)
{
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    char vendor[13] = "";
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
    }
    bool intel = strcmp(vendor, "GenuineIntel") == 0;
    if (intel && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return BP_MKL_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return BP_MKL_AVX2;
    return BP_MKL_SSE42;
}

bp_status bp_mkl_isa_resolve(bp_mkl_isa_t want, bp_mkl_isa_t *got, const char **source,
                             bp_error_t *err)
{
    *source = "--mkl-isa";
    if (want != BP_MKL_AUTO) {
        *got = want;
        return BP_OK;
    }
    const char *cbwr = getenv("MKL_CBWR");
    if (cbwr && *cbwr && strcasecmp(cbwr, "off") != 0) {
        *got = BP_MKL_CNR;
        *source = "MKL_CBWR";
        return BP_OK;
    }
    bp_mkl_isa_t host = bp_mkl_isa_detect(), cap;
    *got = host;
    *source = "detected";
    const char *env = getenv("MKL_ENABLE_INSTRUCTIONS");
    if (!env || !*env)
        return BP_OK;
    if (!bp_mkl_isa_parse(env, &cap) || cap == BP_MKL_AUTO || cap == BP_MKL_CNR)
        return bp_error_set(err, BP_EINPUT,
                            "MKL_ENABLE_INSTRUCTIONS='%s' is not an MKL code path (SSE4_2, "
                            "AVX, AVX2, AVX2_E1, AVX512, AVX512_E1 ... AVX512_E5, AVX10)",
                            env);
    *source = "MKL_ENABLE_INSTRUCTIONS";
    if (cap < host)
        *got = cap;
    return BP_OK;
}
