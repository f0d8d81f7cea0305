/* The shipped RoPE goldens against PyTorch's own caches (tests/data/torch,
 * written by tests/refs/torch_reference.py with PyTorch 2.11.0 on an
 * x86-64 host whose ATen CPU capability was AVX512, MKL enabled, and an
 * H200), element by element:
 *   - golden/rope-llama2/cuda-sm90 against rope_cuda_fp32, and
 *     golden/rope-llama2-zero-init/cuda-sm90 against rope_cuda_zero:
 *     identical (inv_freq in fp32, cos and sin in bf16);
 *   - golden/rope-llama2/cpu-sleef against rope_cpu: inv_freq and cos
 *     identical, sin identical except at exactly the elements listed in
 *     cpu_sin_known[] (any other difference, or one of these healed,
 *     fails).
 *
 * Why the CPU sin differs at [4038, 26] and [4038, 90].  The angle there is
 * 4038 * inv_freq[26] = 0x42bf831b (95.756...); sin of it is 0.41 ulp below
 * 0x3f7f8000, so 0x3f7f8000 is the correctly rounded fp32 value and an
 * exact bf16 tie, which rounds to even: 0x3f80.  bitprobe's CPU computes
 * Sleef_sinf8_u10 and gets 0x3f7f8000; so do SLEEF 3.5.1's
 * Sleef_sinf16_u10 (the AVX-512 build), Sleef_sinf8_u35, Sleef_sinf16_u35
 * and glibc's sinf on this host (checked with libsleef here), and so does
 * Debian's PyTorch 1.13 (no MKL, AVX2): its fp32 sin of the whole cache is
 * bit-identical to bitprobe's.  PyTorch's 0x3f7f means its fp32 sin was at
 * most 0x3f7f7fff there, a value no SLEEF variant gives: the x86 wheels
 * are built with MKL, and ATen sends a contiguous fp32 sin to MKL VML
 * (UnaryOpsKernel.cpp's IMPLEMENT_ITERATOR_LAMBDA calls vml::vsin, which
 * aten/src/ATen/cpu/vml.h specialises for float as vmsSin(..., VML_HA |
 * VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE) when AT_MKL_ENABLED), whatever the
 * ATen capability.  The capability does not enter: sin and cos are
 * registered without an AVX-512 kernel (STATIC_IMPLEMENT_COMPLEX_KERNEL_
 * WITHOUT_AVX512), so on an AVX-512 host ATen runs its AVX2 build, whose
 * non-MKL float path (Vectorized<float>::sin) is Sleef_sinf8_u35 since
 * PyTorch 2.1 (vec256_float.h) and whose bf16/f16 path is Sleef_sinf8_u10
 * (vec256_bfloat16.h, what bitprobe models).  exp, log and tanh are
 * registered with AVX-512 kernels; their fp32 path is MKL VML too.  So an
 * AVX-512 lane width (--cpu-isa) cannot reproduce these two elements: the
 * fp32 transcendentals of PyTorch's MKL builds are MKL's.  MKL's HA
 * functions and SLEEF's u10 are both within 1 ulp of the exact value, so
 * they may differ by one ulp; after rounding to bf16, 2 of the cache's
 * 524288 sin elements show it.
 * tests/refs/torch_cpu_ref.py records PyTorch's fp32 sin of the cache
 * (case sin.f32.rope), and torch_compare.py prints its bits at these two
 * elements. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st.h"
#include "test_files.h"

static void load(bp_st_file_t *f, const char *dir, const char *file)
{
    char path[1024];
    bp_error_t err = {0};
    snprintf(path, sizeof path, "%s/%s/%s", test_top_srcdir(), dir, file);
    ck_assert_msg(bp_st_read(path, f, &err) == BP_OK, "%s", err.msg);
}

static const bp_buf_t *tensor(const bp_st_file_t *f, const char *name)
{
    const bp_st_tensor_t *t = bp_st_find(f, name);
    ck_assert_msg(t != NULL, "no tensor %s", name);
    return &t->buf;
}

typedef struct {
    size_t row, col;
    uint64_t golden, torch;
} known_t;

/* The golden's tensor gname against PyTorch's tname: the same dtype and
 * shape, and equal bits except at the n known elements, which must differ
 * exactly as listed. */
static void same_except(const bp_st_file_t *g, const char *gname, const bp_st_file_t *p,
                        const char *tname, const known_t *known, size_t n)
{
    const bp_buf_t *a = tensor(g, gname), *b = tensor(p, tname);
    ck_assert_msg(a->dtype == b->dtype && a->numel == b->numel && a->ndim == b->ndim,
                  "%s and %s: dtype or shape differ", gname, tname);
    size_t cols = a->ndim == 2 ? (size_t)a->shape[1] : 1, seen = 0;
    for (size_t i = 0; i < a->numel; i++) {
        uint64_t x = bp_buf_bits(a, i), y = bp_buf_bits(b, i);
        size_t k = 0;
        while (k < n && known[k].row * cols + known[k].col != i)
            k++;
        if (k < n) {
            ck_assert_msg(x == known[k].golden && y == known[k].torch,
                          "%s [%zu, %zu]: golden 0x%llx, PyTorch 0x%llx; the known "
                          "difference is 0x%llx against 0x%llx",
                          gname, known[k].row, known[k].col, (unsigned long long)x,
                          (unsigned long long)y, (unsigned long long)known[k].golden,
                          (unsigned long long)known[k].torch);
            seen++;
            continue;
        }
        ck_assert_msg(x == y, "%s [%zu, %zu]: golden 0x%llx, PyTorch's %s 0x%llx (not a "
                      "known difference)", gname, i / cols, i % cols, (unsigned long long)x,
                      tname, (unsigned long long)y);
    }
    ck_assert_uint_eq(seen, n);
}

static const known_t cpu_sin_known[] = {
    {4038, 26, 0x3f80, 0x3f7f},
    {4038, 90, 0x3f80, 0x3f7f},
};

START_TEST(t_cpu)
{
    bp_st_file_t g, p;
    load(&g, "golden/rope-llama2", "cpu-sleef.safetensors.gz");
    load(&p, "tests/data/torch", "rope_cpu.safetensors.gz");
    same_except(&g, "inv_freq.fp32", &p, "inv_freq", NULL, 0);
    same_except(&g, "cos.bf16", &p, "cos", NULL, 0);
    same_except(&g, "sin.bf16", &p, "sin", cpu_sin_known,
                sizeof cpu_sin_known / sizeof cpu_sin_known[0]);
    bp_st_free(&g);
    bp_st_free(&p);
}
END_TEST

START_TEST(t_cuda)
{
    static const char *const pair[][2] = {
        {"golden/rope-llama2", "rope_cuda_fp32.safetensors.gz"},
        {"golden/rope-llama2-zero-init", "rope_cuda_zero.safetensors.gz"},
    };
    bp_st_file_t g, p;
    load(&g, pair[_i][0], "cuda-sm90.safetensors.gz");
    load(&p, "tests/data/torch", pair[_i][1]);
    same_except(&g, "inv_freq.fp32", &p, "inv_freq", NULL, 0);
    same_except(&g, "cos.bf16", &p, "cos", NULL, 0);
    same_except(&g, "sin.bf16", &p, "sin", NULL, 0);
    bp_st_free(&g);
    bp_st_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("torch_data");
    TCase *tc = tcase_create("rope");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_cpu);
    tcase_add_loop_test(tc, t_cuda, 0, 2);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
