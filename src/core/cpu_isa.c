/* ATen's CPU capability choice (see cpu_isa.h). */
#include "cpu_isa.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

static const char *const names[] = {
    [BP_CPU_ISA_AUTO] = "auto",
    [BP_CPU_ISA_DEFAULT] = "default",
    [BP_CPU_ISA_AVX2] = "avx2",
    [BP_CPU_ISA_AVX512] = "avx512",
};

const char *bp_cpu_isa_name(bp_cpu_isa_t i)
{
    return (unsigned)i < sizeof names / sizeof names[0] ? names[i] : "?";
}

bool bp_cpu_isa_parse(const char *s, bp_cpu_isa_t *out)
{
    for (int i = BP_CPU_ISA_AUTO; i <= BP_CPU_ISA_AVX512; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (bp_cpu_isa_t)i;
            return true;
        }
    return false;
}

int bp_isa_lookup(const char *s, const char *const *names, size_t n,
                  const bp_isa_alias_t *aliases, size_t naliases)
{
    char low[32];
    size_t len = strlen(s);
    if (len >= sizeof low)
        return -1;
    for (size_t i = 0; i <= len; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(low, names[i]) == 0)
            return (int)i;
    for (size_t i = 0; i < naliases; i++)
        if (strcmp(low, aliases[i].name) == 0)
            return aliases[i].level;
    return -1;
}

bool bp_cpu_isa_supported(bp_cpu_isa_t isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case BP_CPU_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("fma");
    case BP_CPU_ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default:
        return true;
    }
}

bp_cpu_isa_t bp_cpu_isa_detect(void)
{
    /* DispatchStub.cpp's compute_cpu_capability, cpuinfo step: its
     * avx512vl/bw/dq tests imply avx512f and the OS's AVX-512 state, as
     * __builtin_cpu_supports checks them. */
    if (bp_cpu_isa_supported(BP_CPU_ISA_AVX512))
        return BP_CPU_ISA_AVX512;
    if (bp_cpu_isa_supported(BP_CPU_ISA_AVX2))
        return BP_CPU_ISA_AVX2;
    return BP_CPU_ISA_DEFAULT;
}

bp_status bp_cpu_isa_resolve(bp_cpu_isa_t want, bp_cpu_isa_t *got, const char **source,
                             const char **ignored, bp_error_t *err)
{
    *ignored = NULL;
    bp_cpu_isa_t isa = want;
    *source = "--cpu-isa";
    if (isa == BP_CPU_ISA_AUTO) {
        const char *env = getenv("ATEN_CPU_CAPABILITY");
        bp_cpu_isa_t e;
        if (env && bp_cpu_isa_parse(env, &e) && e != BP_CPU_ISA_AUTO) {
            isa = e;
            *source = "ATEN_CPU_CAPABILITY";
        } else {
            *ignored = env; /* ATen warns and ignores it */
            isa = bp_cpu_isa_detect();
            *source = "detected";
        }
    }
    if (!bp_cpu_isa_supported(isa))
        return bp_error_set(err, BP_EUNAVAIL,
                            "ATen CPU capability %s (from %s) needs %s, which this CPU "
                            "lacks",
                            bp_cpu_isa_name(isa), *source,
                            isa == BP_CPU_ISA_AVX512 ? "AVX-512 F, BW, DQ and VL with FMA"
                                                     : "AVX2 with FMA");
    *got = isa;
    return BP_OK;
}
