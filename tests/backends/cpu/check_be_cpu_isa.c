/* ATen's CPU capability in the CPU backend (cpu_isa.h): how it is chosen
 * (--cpu-isa, then ATEN_CPU_CAPABILITY, then the CPU's features, as
 * DispatchStub.cpp), what it changes in the key and the fingerprint, and
 * the lane model it drives: pow's vector/tail boundary moves from 2 x 8 to
 * 2 x 16 float lanes under AVX512, the tail taking glibc's powf.  The
 * cases that need a CPU with AVX-512 (the AVX512 keys and lanes, pow's
 * tail) are check_be_cpu_avx512, a SKIP elsewhere. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "be_cpu_ref.h"

START_TEST(t_isa_names)
{
    static const char *const ok[] = {"auto", "default", "avx2", "avx512"};
    for (int i = 0; i < 4; i++) {
        bp_cpu_isa_t v;
        ck_assert(bp_cpu_isa_parse(ok[i], &v));
        ck_assert_str_eq(bp_cpu_isa_name(v), ok[i]);
    }
    bp_cpu_isa_t v;
    ck_assert(!bp_cpu_isa_parse("AVX512", &v));
    ck_assert(!bp_cpu_isa_parse("sse", &v));
    ck_assert(!bp_cpu_isa_parse("", &v));
}
END_TEST

/* The option first, then the environment (ATen's values only), then the
 * CPU; an environment value ATen ignores is reported. */
START_TEST(t_isa_resolve)
{
    bp_cpu_isa_t got;
    const char *src, *ign;
    unsetenv("ATEN_CPU_CAPABILITY");
    ck_assert_int_eq(bp_cpu_isa_resolve(BP_CPU_ISA_AUTO, &got, &src, &ign, &err), BP_OK);
    ck_assert_int_eq(got, bp_cpu_isa_detect());
    ck_assert_str_eq(src, "detected");
    ck_assert_ptr_null(ign);
    setenv("ATEN_CPU_CAPABILITY", "default", 1);
    ck_assert_int_eq(bp_cpu_isa_resolve(BP_CPU_ISA_AUTO, &got, &src, &ign, &err), BP_OK);
    ck_assert_int_eq(got, BP_CPU_ISA_DEFAULT);
    ck_assert_str_eq(src, "ATEN_CPU_CAPABILITY");
    ck_assert_int_eq(bp_cpu_isa_resolve(BP_CPU_ISA_DEFAULT, &got, &src, &ign, &err), BP_OK);
    ck_assert_str_eq(src, "--cpu-isa");
    setenv("ATEN_CPU_CAPABILITY", "avx-512", 1); /* not ATen's spelling */
    ck_assert_int_eq(bp_cpu_isa_resolve(BP_CPU_ISA_AUTO, &got, &src, &ign, &err), BP_OK);
    ck_assert_int_eq(got, bp_cpu_isa_detect());
    ck_assert_str_eq(src, "detected");
    ck_assert_str_eq(ign, "avx-512");
    bp_backend_t *be = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AUTO);
    ck_assert_str_eq(json_string_value(json_object_get(be->fingerprint,
                                                       "aten_cpu_capability_ignored")),
                     "avx-512");
    bp_backend_close(be);
    unsetenv("ATEN_CPU_CAPABILITY");
    if (!bp_cpu_isa_supported(BP_CPU_ISA_AVX512)) {
        ck_assert_int_eq(bp_cpu_isa_resolve(BP_CPU_ISA_AVX512, &got, &src, &ign, &err),
                         BP_EUNAVAIL);
        ck_assert_msg(strstr(err.msg, "AVX-512") != NULL, "%s", err.msg);
    }
}
END_TEST

/* Keys and fingerprints: the capability is recorded, and in the key only
 * where it changes bits (AVX512); DEFAULT is ATen's portable build, whose
 * math is libm's. */
START_TEST(t_isa_keys)
{
    ck_isa_key(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX2, "cpu-sleef", "avx2", 8);
    ck_isa_key(BP_CPU_MATH_SLEEF_U35, BP_CPU_ISA_AVX2, "cpu-sleef-u35", "avx2", 8);
    ck_isa_key(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_DEFAULT, "cpu-libm", "default", 8);
}
END_TEST

void be_cpu_isa_tests(TCase *tc)
{
    tcase_add_test(tc, t_isa_names);
    tcase_add_test(tc, t_isa_resolve);
    tcase_add_test(tc, t_isa_keys);
}
