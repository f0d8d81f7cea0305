/* ATen's CPU capability in the CPU backend (cpu_isa.h): how it is chosen
 * (--cpu-isa, then ATEN_CPU_CAPABILITY, then the CPU's features, as
 * DispatchStub.cpp), what it changes in the key and the fingerprint, and
 * the lane model it drives: pow's vector/tail boundary moves from 2 x 8 to
 * 2 x 16 float lanes under AVX512, the tail taking glibc's powf.  The
 * references are glibc's powf and the backend's own AVX2 results; the
 * AVX512 cases run only on a CPU with AVX-512 (they say so otherwise). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "be_cpu_ref.h"
#include "rng.h"

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
    static const struct {
        bp_cpu_math_t m;
        bp_cpu_isa_t isa;
        const char *key, *cap;
        int lanes;
    } k[] = {
        {BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX2, "cpu-sleef", "avx2", 8},
        {BP_CPU_MATH_SLEEF_U35, BP_CPU_ISA_AVX2, "cpu-sleef-u35", "avx2", 8},
        {BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_DEFAULT, "cpu-libm", "default", 8},
        {BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512, "cpu-sleef-avx512", "avx512", 16},
        {BP_CPU_MATH_SLEEF_U35, BP_CPU_ISA_AVX512, "cpu-sleef-u35-avx512", "avx512", 16},
        {BP_CPU_MATH_LIBM, BP_CPU_ISA_AVX512, "cpu-libm-avx512", "avx512", 16},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (!bp_cpu_isa_supported(k[i].isa))
            continue;
        bp_backend_t *be = cpu_isa(k[i].m, k[i].isa);
        ck_assert_str_eq(be->key, k[i].key);
        json_t *fp = be->fingerprint;
        ck_assert_str_eq(json_string_value(json_object_get(fp, "aten_cpu_capability")),
                         k[i].cap);
        ck_assert_str_eq(json_string_value(json_object_get(fp, "aten_cpu_capability_from")),
                         "--cpu-isa");
        ck_assert_int_eq(json_integer_value(json_object_get(fp, "vector_width_f32")),
                         k[i].lanes);
        bp_backend_close(be);
    }
}
END_TEST

/* pow, a tensor ** tensor of 48 fp32 elements: with AVX2 lanes the whole
 * row is vector (48 = 3 x 16); with AVX-512's 16-lane registers the last
 * 48 % 32 = 16 elements are the scalar tail, std::pow, i.e. glibc's powf.
 * The inputs are chosen where SLEEF's powf and glibc's differ, so each
 * element shows which formula it got. */
START_TEST(t_isa_pow_tail)
{
    if (!bp_cpu_isa_supported(BP_CPU_ISA_AVX512)) {
        fprintf(stderr, "t_isa_pow_tail: no AVX-512 here, not checked\n");
        return;
    }
    bp_backend_t *b2 = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX2);
    bp_backend_t *b5 = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512);
    /* candidates: 4096 bases in [0.5, 4), exponent 1.7; keep 48 whose
     * AVX2-lane (SLEEF) result differs from glibc's powf */
    enum { NC = 4096, N = 48 };
    bp_buf_t c = vec_of(BP_F32, NC), e = vec_of(BP_F32, NC);
    uint64_t seed = 15;
    for (size_t i = 0; i < NC; i++) {
        float x = bp_rng_uniform(seed, 0, i, 0.5f, 4.0f);
        bp_dtype_store_bits(BP_F32, c.data, i, fbits(x));
        bp_dtype_store_bits(BP_F32, e.data, i, fbits(1.7f));
    }
    bp_buf_t pc = op2(b2, BP_OP_POW, &c, NAN, &e, NAN, BP_F32);
    bp_buf_t x = vec_of(BP_F32, N), y = vec_of(BP_F32, N);
    size_t n = 0;
    for (size_t i = 0; i < NC && n < N; i++) {
        float xi = (float)bp_buf_get(&c, i);
        if (bits(&pc, i) != fbits(powf(xi, 1.7f))) {
            bp_dtype_store_bits(BP_F32, x.data, n, fbits(xi));
            bp_dtype_store_bits(BP_F32, y.data, n++, fbits(1.7f));
        }
    }
    ck_assert_msg(n == N, "seed %llu: only %zu of %d inputs where SLEEF and glibc differ",
                  (unsigned long long)seed, n, N);
    bp_buf_t r2 = op2(b2, BP_OP_POW, &x, NAN, &y, NAN, BP_F32);
    bp_buf_t r5 = op2(b5, BP_OP_POW, &x, NAN, &y, NAN, BP_F32);
    for (size_t i = 0; i < N; i++) {
        uint64_t libm = fbits(powf((float)bp_buf_get(&x, i), 1.7f));
        if (i < 32)
            ck_assert_msg(bits(&r5, i) == bits(&r2, i), "[%zu] AVX-512 vector lane", i);
        else
            ck_assert_msg(bits(&r5, i) == libm, "[%zu] AVX-512 tail: %#llx, powf %#llx", i,
                          (unsigned long long)bits(&r5, i), (unsigned long long)libm);
        ck_assert_msg(bits(&r2, i) != libm, "[%zu] AVX2: a vector lane", i);
    }
    bp_backend_close(b2);
    bp_backend_close(b5);
}
END_TEST

void be_cpu_isa_tests(TCase *tc)
{
    tcase_add_test(tc, t_isa_names);
    tcase_add_test(tc, t_isa_resolve);
    tcase_add_test(tc, t_isa_keys);
    tcase_add_test(tc, t_isa_pow_tail);
}
