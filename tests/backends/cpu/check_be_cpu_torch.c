/* The CPU backend against PyTorch 2.11.0's CPU results where they come
 * from SLEEF: pow (Vectorized::pow, Sleef_powf8_u10, with the C library's
 * pow in the scalar tail), and sin, cos, exp, log and tanh of every bf16
 * and f16 input (widened to float, Sleef_<op>f8_u10, rounded once).
 * PyTorch's results are FNV-1a 64 hashes of the output bits in
 * tests/data/torch/torch_cpu.json, written by tests/refs/torch_cpu_ref.py
 * with PyTorch's own expressions (e.g. (torch.arange(1, 51.) / 7).to(dtype)
 * for t50) under torch.set_num_threads(1) and the ATEN_CPU_CAPABILITY a
 * case names (torch_ref.h).
 *
 * SLEEF's results are its build's: this binary runs only with SLEEF 3.5
 * and a CPU with AVX2 and FMA (SLEEF's AVX2 entry points), and exits 77
 * (SKIP) elsewhere, saying why.  A case whose PyTorch result is not stored
 * yet (a case the generator gained; torch_refs.sh on the GPU machine
 * writes it) is named, and the binary then exits 77 rather than 0.
 * PyTorch's other CPU comparisons, which involve no SLEEF function, are in
 * check_be_cpu (check_be_cpu_aten.c). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

#include "be_cpu_ref.h"
#include "rng.h"
#include "torch_ref.h"

START_TEST(t_seed_inv_freq)
{
    bp_backend_t *be = cpu();
    bp_buf_t i = arange(be, BP_I64, 0, 1, 10);
    bp_buf_t x = op2(be, BP_OP_DIV, &i, NAN, NULL, 10, BP_F32);
    ck_bits(&x, 9, 0x3f666666);
    bp_buf_t p = op2(be, BP_OP_POW, NULL, 10, &x, NAN, BP_F32);
    ck_bits(&p, 9, 0x40fe2f5e); /* 7.94328212738037109375 */
    ck_assert_double_eq(bp_buf_get(&p, 9), 7.94328212738037109375);
    ck_bits(&p, 4, 0x4020c2bf);
    ck_hash(&p, torch_ref("seed-inv-freq.y.f32"), "10 ** (arange(10) / 10)");
    bp_backend_close(be);
}
END_TEST

/* transformers 4.36 Llama: 1 / (10000 ** (arange(0, 128, 2).float() / 128)),
 * then outer with arange(4096), cat((f, f), -1), and cos in bf16. */
START_TEST(t_rope)
{
    bp_backend_t *be = cpu();
    bp_buf_t i = arange(be, BP_I64, 0, 2, 64);
    bp_buf_t f = op2(be, BP_OP_CAST, &i, NAN, NULL, NAN, BP_F32);
    bp_buf_t e = op2(be, BP_OP_DIV, &f, NAN, NULL, 128, BP_F32);
    bp_buf_t p = op2(be, BP_OP_POW, NULL, 10000, &e, NAN, BP_F32);
    bp_buf_t inv = op2(be, BP_OP_DIV, NULL, 1.0, &p, NAN, BP_F32);
    ck_bits(&inv, 22, 0x3d2cba15);
    ck_bits(&inv, 27, 0x3ca8398b);
    ck_bits(&inv, 47, 0x3a975c0e);
    ck_bits(&inv, 50, 0x3a44948c);
    ck_hash(&inv, torch_ref("rope.inv_freq.f32"), "inv_freq");
    bp_buf_t t = arange(be, BP_F32, 0, 1, 4096);
    int64_t s2[2] = {4096, 64}, s3[2] = {4096, 128};
    bp_buf_t fr = op2f(be, BP_OP_OUTER, BP_FORM_DEFAULT, &t, NAN, &inv, NAN,
                       BP_F32, 2, s2);
    bp_buf_t emb = alloc(BP_F32, 2, s3);
    bp_op_t cat = {.kind = BP_OP_CONCAT, .has_axis = true, .axis = -1};
    const bp_buf_t *ins[2] = {&fr, &fr};
    bp_exec_t x = {.op = &cat, .inputs = ins, .ninputs = 2, .out = &emb};
    ck_assert_int_eq(be->op[BP_OP_CONCAT](be, &x, &err), BP_OK);
    bp_buf_t eb = op2(be, BP_OP_CAST, &emb, NAN, NULL, NAN, BP_BF16);
    bp_buf_t c = op2(be, BP_OP_COS, &eb, NAN, NULL, NAN, BP_BF16);
    ck_hash(&c, torch_ref("rope.cos.bf16"), "cos(emb.to(bf16))");
    bp_backend_close(be);
}
END_TEST

/* ---- pow: the vector part and the scalar tail ---------------------- */

static const struct {
    bp_dtype_t dt;
    double e;
    int vec_bytes;
    const char *ref;
} pow_cases[] = {
    {BP_F32, 0.9, 32, "pow.f32.t50.0.9.avx2"},
    {BP_F32, 0.9, 64, "pow.f32.t50.0.9.avx512"},
    {BP_BF16, -0.5, 32, "pow.bf16.t50.-0.5.avx2"},
    {BP_BF16, -0.5, 64, "pow.bf16.t50.-0.5.avx512"},
    {BP_F16, 2.5, 32, "pow.f16.t50.2.5.avx2"},
    {BP_BF16, 2.001, 32, "pow.bf16.t50.2.001.avx2"}, /* bf16(2.001) == 2 */
    {BP_F32, -2.0, 32, "pow.f32.t50.-2.avx2"},
};

START_TEST(t_pow_tensor_scalar)
{
    bp_backend_t *be = cpu();
    const __typeof__(pow_cases[0]) *c = &pow_cases[_i];
    set_vec_bytes(be, c->vec_bytes);
    bp_buf_t t = t50(be, c->dt);
    bp_buf_t p = op2(be, BP_OP_POW, &t, NAN, NULL, c->e, c->dt);
    ck_hash(&p, torch_ref(c->ref), c->ref);
    if (c->dt == BP_F32 && c->e == 0.9) {
        /* The tail (n % 2V elements) is std::pow(float, double): libm's
         * double pow with the exponent unrounded. */
        size_t lanes = (size_t)c->vec_bytes / 4, from = 50 - 50 % (2 * lanes);
        for (size_t i = from; i < 50; i++) {
            float want = (float)pow((double)(float)bp_buf_get(&t, i), 0.9);
            ck_bits(&p, i, fbits(want));
        }
    }
    if (c->dt == BP_BF16 && c->e == 2.001)
        for (size_t i = 0; i < 50; i++) {
            double x = bp_buf_get(&t, i);
            ck_bits(&p, i, mp_bits(BP_BF16, MP_MUL, x, x));
        }
    bp_backend_close(be);
}
END_TEST

START_TEST(t_pow_scalar_base)
{
    bp_backend_t *be = cpu();
    /* 10000 ** t in bf16: the base becomes bf16(10000) = 9984 */
    bp_buf_t t = t50(be, BP_BF16);
    bp_buf_t p = op2(be, BP_OP_POW, NULL, 10000, &t, NAN, BP_BF16);
    ck_hash(&p, torch_ref("pow.bf16.10000_t50"), "10000 ** t (bf16)");
    bp_buf_t h = t50(be, BP_F16);
    bp_buf_t q = op2(be, BP_OP_POW, NULL, 3.7, &h, NAN, BP_F16);
    ck_hash(&q, torch_ref("pow.f16.3.7_t50"), "3.7 ** t (f16)");
    bp_buf_t f = t50(be, BP_F32);
    bp_buf_t f3 = op2(be, BP_OP_DIV, &f, NAN, NULL, 3, BP_F32);
    bp_buf_t ff = op2(be, BP_OP_POW, &f, NAN, &f3, NAN, BP_F32);
    ck_hash(&ff, torch_ref("pow.f32.t50_t50div3"), "t ** (t / 3)");
    bp_buf_t one = op2(be, BP_OP_POW, NULL, 1.0, &t, NAN, BP_BF16);
    for (size_t i = 0; i < 50; i++)
        ck_bits(&one, i, 0x3f80);
    bp_backend_close(be);
}
END_TEST

/* ---- transcendental functions: every bf16 and f16 input ------------- */

static const struct {
    bp_op_kind_t k;
    bp_dtype_t dt;
    const char *ref;
} tr_cases[] = {
    {BP_OP_SIN, BP_BF16, "sin.bf16.all"},   {BP_OP_COS, BP_BF16, "cos.bf16.all"},
    {BP_OP_EXP, BP_BF16, "exp.bf16.all"},   {BP_OP_LOG, BP_BF16, "log.bf16.all"},
    {BP_OP_TANH, BP_BF16, "tanh.bf16.all"}, {BP_OP_COS, BP_F16, "cos.f16.all"},
    {BP_OP_EXP, BP_F16, "exp.f16.all"},     {BP_OP_LOG, BP_F16, "log.f16.all"},
    {BP_OP_TANH, BP_F16, "tanh.f16.all"},
};

/* PyTorch's SLEEF and Debian's 3.5.1 agree on these everywhere but f16 sin
 * at 2 of 65536 inputs (300 and -300: float sin(300) is a half-way case
 * for f16 there, and PyTorch's SLEEF returns the float below), hence no
 * f16 sin case. */
START_TEST(t_transcendental)
{
    bp_backend_t *be = cpu();
    const __typeof__(tr_cases[0]) *c = &tr_cases[_i];
    bp_buf_t a = every16(c->dt);
    bp_buf_t r = op2(be, c->k, &a, NAN, NULL, NAN, c->dt);
    ck_hash(&r, torch_ref(c->ref), c->ref);
    bp_backend_close(be);
}
END_TEST

/* ---- fp32 pow over 65536 pairs ---------------------------------------- */

static uint64_t splitmix64(uint64_t i)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* x ** y, tensor ** tensor: bases of any mantissa across 20 binades,
 * exponents k / 2000 for k in [-24000, 24000], both from splitmix64(i)
 * exactly as torch_cpu_ref.py builds them (case pow.f32.pairs). */
static const char PAIRS[] = "pow.f32.pairs";

START_TEST(t_pow_pairs)
{
    uint64_t want;
    if (!torch_ref_find(PAIRS, &want))
        return; /* named by main, which then exits 77 */
    bp_backend_t *be = cpu();
    const size_t n = 65536;
    bp_buf_t x = vec_of(BP_F32, n), y = vec_of(BP_F32, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(i);
        uint32_t xb = (uint32_t)((127 + (r >> 24) % 21 - 10) << 23) | (uint32_t)(r & 0x7fffff);
        float k = (float)((int64_t)((r >> 40) % 48001) - 24000);
        bp_dtype_store_bits(BP_F32, x.data, i, xb);
        bp_dtype_store_bits(BP_F32, y.data, i, fbits(k / 2000.0f));
    }
    bp_buf_t z = op2(be, BP_OP_POW, &x, NAN, &y, NAN, BP_F32);
    ck_hash(&z, want, PAIRS);
    bp_backend_close(be);
}
END_TEST

/* Cases whose PyTorch result may be missing from torch_cpu.json (the
 * others fail their test when missing). */
static const char *const optional_refs[] = {PAIRS};

int main(void)
{
    if (!(SLEEF_VERSION_MAJOR == 3 && SLEEF_VERSION_MINOR == 5)) {
        printf("check_be_cpu_torch: SKIP: SLEEF %d.%d, the references need 3.5\n",
               SLEEF_VERSION_MAJOR, SLEEF_VERSION_MINOR);
        return 77;
    }
    /* (No ck_assert outside the tests: cpu() is not for here.) */
    bp_backend_t *be = NULL;
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    if (bp_be_cpu_open(&o, &be, &err) != BP_OK) {
        fprintf(stderr, "check_be_cpu_torch: the CPU backend: %s\n", err.msg);
        return EXIT_FAILURE;
    }
    bool simd = ((bp_cpu_t *)be->state)->simd;
    bp_backend_close(be);
    if (!simd) {
        printf("check_be_cpu_torch: SKIP: no AVX2 and FMA, SLEEF's AVX2 entry points "
               "cannot run\n");
        return 77;
    }
    int missing = 0;
    uint64_t h;
    for (size_t i = 0; i < sizeof optional_refs / sizeof optional_refs[0]; i++)
        if (!torch_ref_find(optional_refs[i], &h)) {
            printf("check_be_cpu_torch: not checked: no PyTorch result for %s in "
                   "tests/data/torch/torch_cpu.json (tests/gpu/torch_refs.sh "
                   "writes it)\n", optional_refs[i]);
            missing++;
        }
    Suite *s = suite_create("be_cpu_torch");
    TCase *tc = tcase_create("sleef");
    tcase_add_checked_fixture(tc, NULL, ref_release);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_seed_inv_freq);
    tcase_add_test(tc, t_rope);
    tcase_add_loop_test(tc, t_pow_tensor_scalar, 0,
                        (int)(sizeof pow_cases / sizeof pow_cases[0]));
    tcase_add_test(tc, t_pow_scalar_base);
    tcase_add_test(tc, t_pow_pairs);
    tcase_add_loop_test(tc, t_transcendental, 0,
                        (int)(sizeof tr_cases / sizeof tr_cases[0]));
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int f = srunner_ntests_failed(r);
    srunner_free(r);
    if (f)
        return EXIT_FAILURE;
    if (missing) {
        printf("check_be_cpu_torch: SKIP: %d case(s) without a stored PyTorch result\n",
               missing);
        return 77;
    }
    return EXIT_SUCCESS;
}
