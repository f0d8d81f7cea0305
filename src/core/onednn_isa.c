/* oneDNN's CPU ISA choice (see onednn_isa.h): the CPU's features as
 * oneDNN's cpu_isa_traits.h tests them, its MAX_CPU_ISA variable as
 * cpu_isa_traits.cpp init_max_cpu_isa reads it (oneDNN v3.10). */
#include "onednn_isa.h"

#include "cpu_isa.h"

#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
    [BP_ONEDNN_AUTO] = "auto",
    [BP_ONEDNN_NONE] = "none",
    [BP_ONEDNN_SSE41] = "sse41",
    [BP_ONEDNN_AVX2] = "avx2",
    [BP_ONEDNN_AVX2_VNNI_2] = "avx2_vnni_2",
    [BP_ONEDNN_AVX512_CORE] = "avx512_core",
    [BP_ONEDNN_AVX512_CORE_BF16] = "avx512_core_bf16",
    [BP_ONEDNN_AVX512_CORE_FP16] = "avx512_core_fp16",
};

/* oneDNN's other user_option_env names, by the level they compute as. */
static const bp_isa_alias_t aliases[] = {
    {"avx", BP_ONEDNN_SSE41},
    {"avx2_vnni", BP_ONEDNN_AVX2},
    {"avx512_core_vnni", BP_ONEDNN_AVX512_CORE},
    {"avx10_1_512", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx512_core_amx", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx10_1_512_amx", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx512_core_amx_fp16", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx10_1_512_amx_fp16", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx10_2_512", BP_ONEDNN_AVX512_CORE_FP16},
    {"avx10_2_512_amx_2", BP_ONEDNN_AVX512_CORE_FP16},
    {"all", BP_ONEDNN_AVX512_CORE_FP16},
};

const char *bp_onednn_isa_name(bp_onednn_isa_t i)
{
    return (unsigned)i < sizeof names / sizeof names[0] ? names[i] : "?";
}

bool bp_onednn_isa_parse(const char *s, bp_onednn_isa_t *out)
{
    int l = bp_isa_lookup(s, names, sizeof names / sizeof names[0], aliases,
                          sizeof aliases / sizeof aliases[0]);
    if (l < 0)
        return false;
    *out = (bp_onednn_isa_t)l;
    return true;
}

bp_onednn_isa_t bp_onednn_isa_detect(void)
{
    __builtin_cpu_init();
    unsigned a0 = 0, b0 = 0, c0 = 0, d0 = 0, a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    __get_cpuid_count(7, 0, &a0, &b0, &c0, &d0);
    __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    bool avx512_core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    /* avx512_core_fp16: avx512_core_bf16 (avx512_vnni, avx512_bf16: leaf 7.1
     * eax bit 5) with AVX512-FP16 (leaf 7.0 edx bit 23) */
    if (avx512_core && __builtin_cpu_supports("avx512vnni") && (a1 & (1u << 5)) &&
        (d0 & (1u << 23)))
        return BP_ONEDNN_AVX512_CORE_FP16;
    /* avx512_core_bf16 without AVX512-FP16 (Cooper Lake, Zen 4): its
     * bf16 stores convert natively */
    if (avx512_core && __builtin_cpu_supports("avx512vnni") && (a1 & (1u << 5)))
        return BP_ONEDNN_AVX512_CORE_BF16;
    if (avx512_core)
        return BP_ONEDNN_AVX512_CORE;
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    /* avx2_vnni_2: AVX-VNNI (7.1 eax bit 4), AVX-VNNI-INT8 (7.1 edx bit 4)
     * and AVX-NE-CONVERT (7.1 edx bit 5) */
    if (avx2 && (a1 & (1u << 4)) && (d1 & (1u << 4)) && (d1 & (1u << 5)))
        return BP_ONEDNN_AVX2_VNNI_2;
    if (avx2)
        return BP_ONEDNN_AVX2;
    return BP_ONEDNN_SSE41;
}

bp_status bp_onednn_isa_resolve(bp_onednn_isa_t want, bp_onednn_isa_t *got,
                                const char **source, bp_error_t *err)
{
    *source = "--onednn-isa";
    if (want != BP_ONEDNN_AUTO) {
        *got = want;
        return BP_OK;
    }
    bp_onednn_isa_t host = bp_onednn_isa_detect(), cap;
    const char *var = "ONEDNN_MAX_CPU_ISA", *env = getenv(var);
    if (!env || !*env) {
        var = "DNNL_MAX_CPU_ISA";
        env = getenv(var);
    }
    *got = host;
    *source = "detected";
    if (!env || !*env)
        return BP_OK;
    if (!bp_onednn_isa_parse(env, &cap) || cap == BP_ONEDNN_AUTO || cap == BP_ONEDNN_NONE)
        return bp_error_set(err, BP_EINPUT,
                            "%s='%s' is not a oneDNN ISA (sse41, avx2, avx2_vnni_2, avx512_core, "
                            "avx512_core_bf16, avx512_core_fp16, ..., all)",
                            var, env);
    *source = strcmp(var, "DNNL_MAX_CPU_ISA") == 0 ? "DNNL_MAX_CPU_ISA" : "ONEDNN_MAX_CPU_ISA";
    if (cap < host)
        *got = cap;
    return BP_OK;
}
