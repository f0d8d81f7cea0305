/* ATen's AVX512 capability in the CPU backend, on a CPU that runs it: the
 * keys and fingerprints of the AVX512 builds, and the lane model: pow's
 * vector/tail boundary moves from 2 x 8 to 2 x 16 float lanes, the tail
 * taking glibc's powf (references: glibc's powf and the backend's own AVX2
 * results).  These need AVX-512 F, BW, DQ and VL with FMA; elsewhere the
 * binary exits 77 (SKIP), saying why.  (The goldens of this capability:
 * tests/cli/golden_shipped_avx512.sh; what needs no AVX-512:
 * check_be_cpu_isa.c.) */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "be_cpu_ref.h"
#include "rng.h"

START_TEST(t_avx512_keys)
{
    ck_isa_key(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512, "cpu-sleef-avx512", "avx512", 16);
    ck_isa_key(BP_CPU_MATH_SLEEF_U35, BP_CPU_ISA_AVX512, "cpu-sleef-u35-avx512", "avx512", 16);
    ck_isa_key(BP_CPU_MATH_LIBM, BP_CPU_ISA_AVX512, "cpu-libm-avx512", "avx512", 16);
}
END_TEST

/* pow, a tensor ** tensor of 48 fp32 elements: with AVX2 lanes the whole
 * row is vector (48 = 3 x 16); with AVX-512's 16-lane registers the last
 * 48 % 32 = 16 elements are the scalar tail, std::pow, i.e. glibc's powf.
 * The inputs are chosen where SLEEF's powf and glibc's differ, so each
 * element shows which formula it got. */
START_TEST(t_isa_pow_tail)
{
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

/* exp2 of 48 fp32 elements equal to pi: AVX-512's two 16-lane registers
 * give SLEEF's exp2f16 (PyTorch 2.11's bits on its AVX512 capability,
 * 0x410d331c) to 32 of them and the last 16, the tail, glibc's exp2f
 * (0x410d331d); with AVX2 lanes all 48 are vector (48 = 3 x 16). */
START_TEST(t_isa_exp2_tail)
{
    bp_backend_t *b2 = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX2);
    bp_backend_t *b5 = cpu_isa(BP_CPU_MATH_SLEEF_U10, BP_CPU_ISA_AVX512);
    enum { N = 48 };
    bp_buf_t x = vec_of(BP_F32, N);
    for (size_t i = 0; i < N; i++)
        bp_dtype_store_bits(BP_F32, x.data, i, fbits(0x1.921fb6p+1f));
    bp_op_t e = {.kind = BP_OP_EXP2};
    bp_buf_t r2 = alloc(BP_F32, x.ndim, x.shape), r5 = alloc(BP_F32, x.ndim, x.shape);
    ck_assert(run_op(b2, &e, &x, NAN, NULL, NAN, &r2) == BP_OK);
    ck_assert(run_op(b5, &e, &x, NAN, NULL, NAN, &r5) == BP_OK);
    for (size_t i = 0; i < N; i++) {
        ck_assert_msg(bits(&r5, i) == (i < 32 ? 0x410d331cu : 0x410d331du), "[%zu] AVX-512", i);
        ck_assert_msg(bits(&r2, i) == 0x410d331cu, "[%zu] AVX2", i);
    }
    bp_backend_close(b2);
    bp_backend_close(b5);
}
END_TEST

int main(void)
{
    if (!bp_cpu_isa_supported(BP_CPU_ISA_AVX512)) {
        printf("check_be_cpu_avx512: SKIP: this CPU lacks AVX-512 F, BW, DQ and VL with "
               "FMA\n");
        return 77;
    }
    Suite *s = suite_create("be_cpu_avx512");
    TCase *tc = tcase_create("avx512");
    tcase_add_checked_fixture(tc, NULL, ref_release);
    tcase_add_test(tc, t_avx512_keys);
    tcase_add_test(tc, t_isa_pow_tail);
    tcase_add_test(tc, t_isa_exp2_tail);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
