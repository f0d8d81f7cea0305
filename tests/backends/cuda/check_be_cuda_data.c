/* CUDA backend tests: the backend itself (open, errors, pool,
 * fingerprint), conversions, arange, data movement, sums, the Philox
 * generator and cuBLAS matmul.  Fidelity to PyTorch is checked end to end
 * by tests/refs/torch_probe.py on a saved run. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"
#include "be_cuda_harness.h"
#include "rng.h"

static const bp_dtype_t floats[] = {BP_F32, BP_BF16, BP_F16};
#define NFLOATS 3

/* ---- the backend ---- */

START_TEST(t_open_errors)
{
    static const int bad[] = {9999, -1};
    for (size_t k = 0; k < 2; k++) {
        bp_backend_opts_t o;
        bp_backend_opts_default(&o);
        o.gpu = bad[k];
        bp_backend_t *be = NULL;
        bp_error_t err = {0};
        ck_assert_int_eq(bp_be_cuda_open(&o, &be, &err), BP_EUNAVAIL);
        ck_assert_ptr_null(be);
        char want[32];
        snprintf(want, sizeof want, "device %d", bad[k]);
        ck_assert_msg(strstr(err.msg, want) != NULL, "message: %s", err.msg);
    }
}
END_TEST

START_TEST(t_fingerprint_env)
{
    static const char *keys[] = {"gpu", "cc", "sms", "driver", "runtime",
                                 "cublas", "nvcc", "nvccflags", "math_mode",
                                 "tf32", "workspace_bytes"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        ck_assert_msg(json_object_get(tb_be->fingerprint, keys[k]) != NULL,
                      "fingerprint lacks '%s'", keys[k]);
    ck_assert(json_is_false(json_object_get(tb_be->fingerprint, "tf32")));
    const char *cc =
        json_string_value(json_object_get(tb_be->fingerprint, "cc"));
    ck_assert_ptr_nonnull(cc);
    char key[64] = "cuda-sm";
    for (size_t i = 0, k = strlen(key); cc[i] && k + 1 < sizeof key; i++)
        if (cc[i] != '.')
            key[k++] = cc[i], key[k] = '\0';
    ck_assert_str_eq(tb_be->key, key);
    bp_error_t err = {0};
    json_t *env = bp_be_cuda_env(&err);
    ck_assert_msg(env != NULL, "bp_be_cuda_env: %s", err.msg);
    json_t *devs = json_object_get(env, "devices");
    ck_assert(json_array_size(devs) >= 1);
    const char *c0 =
        json_string_value(json_object_get(json_array_get(devs, 0), "cc"));
    ck_assert_msg(c0 && strlen(c0) >= 3 && c0[1] == '.', "cc '%s'", c0);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(env, "cublas")));
    json_decref(env);
}
END_TEST

START_TEST(t_pool_reuse)
{
    if (getenv("BP_CUDA_DEBUG"))
        return; /* no pool in debug mode */
    bp_buf_t a, b;
    tb_make1(&a, BP_F32, 250);
    void *first = a.dev;
    tb_drop(&a);
    tb_make1(&b, BP_BF16, 400); /* 800 bytes: the same 1 KiB bucket */
    ck_assert_ptr_eq(b.dev, first);
    tb_drop(&b);
}
END_TEST

START_TEST(t_bad_shapes)
{
    bp_buf_t a, b, out;
    int64_t s35[2] = {3, 5}, s45[2] = {4, 5}, s37[2] = {3, 7};
    tb_make(&a, BP_F32, 2, s35);
    tb_make(&b, BP_F32, 2, s45);
    tb_make(&out, BP_F32, 2, s37);
    bp_error_t err = {0};
    bp_op_t cat = tb_op(BP_OP_CONCAT);
    cat.has_axis = true;
    cat.axis = 1;
    const bp_buf_t *ins[2] = {&a, &b};
    ck_assert_int_eq(tb_try(&cat, NULL, NULL, ins, 2, &out, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "[4, 5]") != NULL, "message: %s", err.msg);
    bp_op_t add = tb_op(BP_OP_ADD);
    ck_assert_int_eq(tb_try(&add, &a, &b, NULL, 0, &out, &err), BP_EINPUT);
    bp_op_t sl = tb_op(BP_OP_SLICE);
    sl.s_step = 0;
    ck_assert_int_eq(tb_try(&sl, &a, NULL, NULL, 0, &a, &err), BP_EINPUT);
    tb_drop(&a);
    tb_drop(&b);
    tb_drop(&out);
}
END_TEST

TCase *tb_tcase_backend(void)
{
    TCase *tc = tcase_create("backend");
    tcase_add_test(tc, t_open_errors);
    tcase_add_test(tc, t_fingerprint_env);
    tcase_add_test(tc, t_pool_reuse);
    tcase_add_test(tc, t_bad_shapes);
    return tc;
}

/* ---- conversions ---- */

static bool same_or_both_nan(bp_dtype_t dt, uint64_t a, uint64_t b)
{
    return a == b || (bp_dtype_bits_isnan(dt, a) && bp_dtype_bits_isnan(dt, b));
}

/* f32 -> bf16 / f16 against src/core/dtype.c, which mirrors
 * __float2bfloat16_rn / __float2half_rn: special values, ties, a sweep of
 * the whole bit space, random patterns. */
START_TEST(t_cast_narrow)
{
    static const uint32_t special[] = {
        0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7f7fffff,
        0x00800000, 0x00000001, 0x807fffff, 0x3f808000, 0x3f818000,
        0x3f80c000, 0x3f807fff, 0x477fe000, 0x477fefff, 0x477ff000,
        0x33800000, 0x33000001, 0x33000000, 0x387fc000, 0x38800000,
        0x7f7f8000, 0x7f7f7fff, 0x4f800000, 0xc0490fdb};
    size_t nsp = sizeof special / sizeof special[0];
    size_t n = nsp + 65536 + 1000000;
    bp_buf_t in, o16;
    tb_make1(&in, BP_F32, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = i < nsp            ? special[i]
                     : i < nsp + 65536 ? (uint32_t)((i - nsp) * 65521u)
                                        : (uint32_t)tb_rand();
        bp_dtype_store_bits(BP_F32, in.data, i, u);
    }
    tb_upload(&in);
    for (int d = 1; d < NFLOATS; d++) {
        tb_make1(&o16, floats[d], (int64_t)n);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &in, NULL, &o16);
        for (size_t i = 0; i < n; i++) {
            float f = bp_f32_from_bits((uint32_t)bp_buf_bits(&in, i));
            uint64_t want = tb_bits_of(floats[d], f);
            if (!same_or_both_nan(floats[d], bp_buf_bits(&o16, i), want))
                tb_expect_bits(&o16, i, want, "f32 -> narrow cast");
        }
        tb_drop(&o16);
    }
    tb_drop(&in);
}
END_TEST

/* dtype.h's contract: any NaN narrows to 0x7FFF, as the GPU writes it. */
START_TEST(t_cast_nan)
{
    static const uint32_t nans[] = {0x7fc00000, 0xffc00000, 0x7f800001,
                                    0xff800001, 0x7fffffff, 0x7fa00000};
    bp_buf_t in, o;
    tb_make1(&in, BP_F32, 6);
    for (size_t i = 0; i < 6; i++)
        bp_dtype_store_bits(BP_F32, in.data, i, nans[i]);
    tb_upload(&in);
    for (int d = 1; d < NFLOATS; d++) {
        tb_make1(&o, floats[d], 6);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &in, NULL, &o);
        for (size_t i = 0; i < 6; i++)
            tb_expect_bits(&o, i, 0x7fff, "NaN narrowed (canonical 0x7FFF)");
        tb_drop(&o);
    }
    tb_drop(&in);
}
END_TEST

/* Every bf16 and f16 pattern widened to f32 and converted to the other
 * 16-bit type through float (c10's route). */
START_TEST(t_cast_widen)
{
    for (int d = 1; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d], other = d == 1 ? BP_F16 : BP_BF16;
        bp_buf_t in, o32, o16;
        tb_make1(&in, dt, 65536);
        for (size_t i = 0; i < 65536; i++)
            bp_dtype_store_bits(dt, in.data, i, i);
        tb_upload(&in);
        tb_make1(&o32, BP_F32, 65536);
        tb_make1(&o16, other, 65536);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &in, NULL, &o32);
        tb_exec(&cast, &in, NULL, &o16);
        for (size_t i = 0; i < 65536; i++) {
            float f = dt == BP_BF16 ? bp_bf16_to_f32((uint16_t)i)
                                    : bp_f16_to_f32((uint16_t)i);
            if (!same_or_both_nan(BP_F32, bp_buf_bits(&o32, i),
                                  bp_f32_bits(f)))
                tb_expect_bits(&o32, i, bp_f32_bits(f), "widen to f32");
            uint64_t w16 = tb_bits_of(other, f);
            if (!same_or_both_nan(other, bp_buf_bits(&o16, i), w16))
                tb_expect_bits(&o16, i, w16, "bf16 <-> f16 through float");
        }
        tb_drop(&in);
        tb_drop(&o32);
        tb_drop(&o16);
    }
}
END_TEST

/* Integers to floats round once (cvt.rn), except bf16/f16 which go
 * through float as c10 does; floats to integers truncate. */
START_TEST(t_cast_int)
{
    static const int64_t iv[] = {0, 1, -1, 16777217, -16777219,
                                 (INT64_C(1) << 53) + 1, INT64_MAX,
                                 INT64_MIN, 123456789, -987654321};
    size_t n = sizeof iv / sizeof iv[0];
    bp_buf_t in, o;
    tb_make1(&in, BP_I64, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        bp_dtype_store_bits(BP_I64, in.data, i, (uint64_t)iv[i]);
    tb_upload(&in);
    static const bp_dtype_t to[] = {BP_F32, BP_BF16, BP_F16, BP_F64, BP_I32};
    for (size_t t = 0; t < 5; t++) {
        tb_make1(&o, to[t], (int64_t)n);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &in, NULL, &o);
        for (size_t i = 0; i < n; i++) {
            uint64_t want = to[t] == BP_F64   ? bp_f64_bits((double)iv[i])
                            : to[t] == BP_I32 ? (uint32_t)iv[i]
                                              : tb_bits_of(to[t], (float)iv[i]);
            tb_expect_bits(&o, i, want, "i64 cast");
        }
        tb_drop(&o);
    }
    tb_drop(&in);
    static const float fv[] = {0.0f, -0.0f, 1.5f, -1.5f, 2.9999998f,
                               -7.75f, 16777216.0f, -2147483520.0f};
    size_t m = sizeof fv / sizeof fv[0];
    tb_make1(&in, BP_F32, (int64_t)m);
    for (size_t i = 0; i < m; i++)
        bp_buf_set(&in, i, fv[i]);
    tb_upload(&in);
    for (int t = 0; t < 2; t++) {
        bp_dtype_t dt = t ? BP_I32 : BP_I64;
        tb_make1(&o, dt, (int64_t)m);
        bp_op_t cast = tb_op(BP_OP_CAST);
        tb_exec(&cast, &in, NULL, &o);
        for (size_t i = 0; i < m; i++)
            tb_expect_bits(&o, i,
                           t ? (uint32_t)(int32_t)fv[i]
                             : (uint64_t)(int64_t)fv[i],
                           "float -> int truncates");
        tb_drop(&o);
    }
    tb_drop(&in);
}
END_TEST

/* ---- arange ---- */

/* f32: start + step*i contracted into one fma, as nvcc compiles ATen's
 * lambda; the reference is the host's correctly rounded fmaf.  The chosen
 * range has elements where the fma and two roundings differ, so a kernel
 * that does not contract fails here. */
START_TEST(t_arange)
{
    bp_buf_t a;
    tb_arange(BP_F32, 0.1, 100, 0.3, &a);
    ck_assert_uint_eq(a.numel, 334);
    size_t differ = 0;
    for (size_t i = 0; i < a.numel; i++) {
        float want = fmaf(0.3f, (float)i, 0.1f);
        volatile float prod = 0.3f * (float)i;
        differ += bp_f32_bits(prod + 0.1f) != bp_f32_bits(want);
        tb_expect_bits(&a, i, bp_f32_bits(want), "arange(0.1, 100, 0.3)");
    }
    ck_assert_msg(differ > 0, "reference range does not exercise the fma");
    tb_drop(&a);

    tb_arange(BP_F64, 0.1, 1, 0.1, &a);
    for (size_t i = 0; i < a.numel; i++)
        tb_expect_bits(&a, i, bp_f64_bits(fma(0.1, (double)i, 0.1)),
                       "f64 arange");
    tb_drop(&a);

    /* bf16 keeps 8 significant bits: 257 ties to 256 (0x4380), 258 is
     * 0x4381; every value is float i rounded once. */
    for (int d = 1; d < NFLOATS; d++) {
        tb_arange(floats[d], 0, 4096, 1, &a);
        if (floats[d] == BP_BF16) {
            tb_expect_bits(&a, 257, 0x4380, "bf16 arange");
            tb_expect_bits(&a, 258, 0x4381, "bf16 arange");
        }
        for (size_t i = 0; i < a.numel; i++)
            tb_expect_bits(&a, i, tb_bits_of(floats[d], (float)i),
                           "16-bit arange");
        tb_drop(&a);
    }
    tb_arange(BP_I64, 5, -5, -3, &a);
    ck_assert_uint_eq(a.numel, 4);
    static const int64_t want[4] = {5, 2, -1, -4};
    for (size_t i = 0; i < 4; i++)
        tb_expect_bits(&a, i, (uint64_t)want[i], "i64 arange");
    tb_drop(&a);
    tb_arange(BP_I32, 0, 10, 3, &a);
    for (size_t i = 0; i < 4; i++)
        tb_expect_bits(&a, i, (uint32_t)(3 * i), "i32 arange");
    tb_drop(&a);
}
END_TEST

/* ---- data movement ---- */

static void fill_seq(bp_buf_t *b)
{
    for (size_t i = 0; i < b->numel; i++)
        bp_buf_set(b, i, tb_round(b->dtype, tb_rand_float(-4, 4)));
    tb_upload(b);
}

START_TEST(t_concat)
{
    int64_t s35[2] = {3, 5}, s32[2] = {3, 2}, s25[2] = {2, 5},
            s37[2] = {3, 7}, s55[2] = {5, 5};
    bp_buf_t a, b, c, out;
    tb_make(&a, BP_BF16, 2, s35);
    tb_make(&b, BP_F32, 2, s32);
    tb_make(&c, BP_BF16, 2, s25);
    fill_seq(&a);
    fill_seq(&b);
    fill_seq(&c);
    /* Along the last axis, bf16 with f32 into f32: exact widening. */
    tb_make(&out, BP_F32, 2, s37);
    bp_op_t cat = tb_op(BP_OP_CONCAT);
    cat.has_axis = true;
    cat.axis = -1;
    const bp_buf_t *ab[2] = {&a, &b};
    bp_error_t err = {0};
    tb_check(tb_try(&cat, NULL, NULL, ab, 2, &out, &err), &err, "concat");
    for (size_t r = 0; r < 3; r++)
        for (size_t j = 0; j < 7; j++) {
            double v = j < 5 ? bp_buf_get(&a, r * 5 + j)
                             : bp_buf_get(&b, r * 2 + j - 5);
            tb_expect_bits(&out, r * 7 + j, bp_f32_bits((float)v),
                           "concat axis -1");
        }
    tb_drop(&out);
    /* Along axis 0, same dtype: the bits, in order. */
    tb_make(&out, BP_BF16, 2, s55);
    cat.axis = 0;
    const bp_buf_t *ac[2] = {&a, &c};
    tb_check(tb_try(&cat, NULL, NULL, ac, 2, &out, &err), &err, "concat");
    for (size_t i = 0; i < 25; i++)
        tb_expect_bits(&out, i,
                       i < 15 ? bp_buf_bits(&a, i) : bp_buf_bits(&c, i - 15),
                       "concat axis 0");
    tb_drop(&out);
    tb_drop(&a);
    tb_drop(&b);
    tb_drop(&c);
}
END_TEST

START_TEST(t_slice)
{
    static const struct {
        int axis;
        int64_t start, step, len;
        int64_t first; /* first source index along the axis */
    } cases[] = {{1, 1, 3, 3, 1}, {-1, -4, 2, 2, 6}, {0, 2, 1, 4, 2},
                 {1, 0, 1, 10, 0}};
    int64_t s[2] = {6, 10};
    bp_buf_t a, out;
    tb_make(&a, BP_F16, 2, s);
    fill_seq(&a);
    for (size_t k = 0; k < 4; k++) {
        int ax = cases[k].axis < 0 ? cases[k].axis + 2 : cases[k].axis;
        int64_t os[2] = {6, 10};
        os[ax] = cases[k].len;
        tb_make(&out, BP_F16, 2, os);
        bp_op_t sl = tb_op(BP_OP_SLICE);
        sl.has_axis = true;
        sl.axis = cases[k].axis;
        sl.s_start = cases[k].start;
        sl.s_step = cases[k].step;
        tb_exec(&sl, &a, NULL, &out);
        for (int64_t r = 0; r < os[0]; r++)
            for (int64_t c = 0; c < os[1]; c++) {
                int64_t sr = ax == 0 ? cases[k].first + r * cases[k].step : r;
                int64_t sc = ax == 1 ? cases[k].first + c * cases[k].step : c;
                tb_expect_bits(&out, (size_t)(r * os[1] + c),
                               bp_buf_bits(&a, (size_t)(sr * 10 + sc)),
                               "slice");
            }
        tb_drop(&out);
    }
    tb_drop(&a);
}
END_TEST

/* cat(-x2, x1): the negation flips the sign bit (f32; f16 through __hneg,
 * neg.f16) or goes through float (bf16).  A NaN stays a NaN; PTX leaves
 * its payload after neg.f16 unspecified, so only its class is checked. */
START_TEST(t_rotate_half)
{
    int64_t s[2] = {3, 8};
    for (int d = 0; d < NFLOATS; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t a, out;
        tb_make(&a, dt, 2, s);
        fill_seq(&a);
        if (dt == BP_F16) {
            bp_dtype_store_bits(dt, a.data, 5, 0x7e01); /* NaN, payload */
            tb_upload(&a);
        }
        tb_make(&out, dt, 2, s);
        bp_op_t rh = tb_op(BP_OP_ROTATE_HALF);
        tb_exec(&rh, &a, NULL, &out);
        uint64_t sign = dt == BP_F32 ? 0x80000000u : 0x8000u;
        for (size_t r = 0; r < 3; r++)
            for (size_t j = 0; j < 8; j++) {
                uint64_t src = j < 4 ? bp_buf_bits(&a, r * 8 + j + 4)
                                     : bp_buf_bits(&a, r * 8 + j - 4);
                uint64_t want = j < 4 ? src ^ sign : src;
                if (!same_or_both_nan(dt, bp_buf_bits(&out, r * 8 + j), want))
                    tb_expect_bits(&out, r * 8 + j, want, "rotate_half");
            }
        tb_drop(&a);
        tb_drop(&out);
    }
}
END_TEST

/* ---- sums ---- */

static float ref_pairwise(const bp_buf_t *b, size_t base, size_t stride,
                          size_t n)
{
    if (n == 0)
        return 0.0f;
    if (n == 1)
        return (float)bp_buf_get(b, base);
    size_t h = n / 2;
    volatile float l = ref_pairwise(b, base, stride, h);
    volatile float r = ref_pairwise(b, base + h * stride, stride, n - h);
    return l + r;
}

static float ref_sequential(const bp_buf_t *b, size_t base, size_t stride,
                            size_t n)
{
    volatile float acc = 0.0f;
    for (size_t k = 0; k < n; k++)
        acc = acc + (float)bp_buf_get(b, base + k * stride);
    return acc;
}

START_TEST(t_sum)
{
    int64_t s[2] = {7, 1000};
    for (int d = 0; d < 2; d++) {
        bp_dtype_t dt = floats[d];
        bp_buf_t a, out;
        tb_make(&a, dt, 2, s);
        fill_seq(&a);
        for (int form = 0; form < 2; form++) {
            bp_form_t f = form ? BP_FORM_PAIRWISE : BP_FORM_SEQUENTIAL;
            float (*ref)(const bp_buf_t *, size_t, size_t, size_t) =
                form ? ref_pairwise : ref_sequential;
            const char *what = form ? "pairwise sum" : "sequential sum";
            for (int axis = -1; axis < 2; axis++) {
                bp_op_t op = tb_op(BP_OP_SUM);
                op.form = f;
                op.has_axis = axis >= 0;
                op.axis = axis;
                int64_t n = axis < 0 ? 1 : axis == 0 ? 1000 : 7;
                tb_make1(&out, dt, n);
                tb_exec(&op, &a, NULL, &out);
                for (int64_t i = 0; i < n; i++) {
                    float r = axis < 0    ? ref(&a, 0, 1, 7000)
                              : axis == 0 ? ref(&a, (size_t)i, 1000, 7)
                                          : ref(&a, (size_t)i * 1000, 1, 1000);
                    tb_expect_bits(&out, (size_t)i, tb_bits_of(dt, r), what);
                }
                tb_drop(&out);
            }
        }
        tb_drop(&a);
    }
}
END_TEST

/* ---- the generator ---- */

/* Philox-4x32-10 on the host, written from Salmon et al. (SC'11). */
static void ref_philox(const uint32_t ctr[4], const uint32_t key[2],
                       uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* Random123's known answers (tests/kat_vectors, philox4x32 10). */
static const struct {
    uint32_t ctr[4], key[2], out[4];
} kat[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

START_TEST(t_philox_kat)
{
    for (size_t k = 0; k < 3; k++) {
        uint32_t host[4], dev[4];
        ref_philox(kat[k].ctr, kat[k].key, host);
        int rc = bpk_philox_block(kat[k].ctr, kat[k].key, dev);
        ck_assert_msg(rc == 0, "bpk_philox_block: CUDA error %d", rc);
        for (int j = 0; j < 4; j++) {
            ck_assert_msg(host[j] == kat[k].out[j],
                          "host reference, vector %zu word %d: %08x, want "
                          "%08x", k, j, host[j], kat[k].out[j]);
            ck_assert_msg(dev[j] == kat[k].out[j],
                          "device, vector %zu word %d: %08x, want %08x", k,
                          j, dev[j], kat[k].out[j]);
        }
    }
}
END_TEST

static float ref_uniform(uint64_t seed, uint64_t stream, uint64_t i,
                         float low, float high)
{
    uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream,
                       (uint32_t)(stream >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    ref_philox(ctr, key, out);
    float u = (float)(out[0] >> 8) * 0x1p-24f;
    volatile float span = high - low;
    volatile float prod = span * u;
    return low + prod;
}

START_TEST(t_uniform)
{
    static const struct {
        uint64_t seed, stream;
        double low, high;
    } cases[] = {{42, 7, -1.0, 1.0},
                 {0x123456789abcdefull, 0xfedcba9876543210ull, -0.02, 0.02},
                 {0, 0, 0.0, 1.0}};
    for (size_t c = 0; c < 3; c++)
        for (int d = 0; d < NFLOATS; d++) {
            bp_buf_t out;
            tb_make1(&out, floats[d], 5000);
            bp_op_t op = tb_op(BP_OP_UNIFORM);
            op.seed = cases[c].seed;
            op.stream = cases[c].stream;
            op.low = cases[c].low;
            op.high = cases[c].high;
            tb_exec(&op, NULL, NULL, &out);
            float lo = (float)cases[c].low, hi = (float)cases[c].high;
            for (size_t i = 0; i < 5000; i++) {
                float r = ref_uniform(op.seed, op.stream, i, lo, hi);
                tb_expect_bits(&out, i, tb_bits_of(floats[d], r),
                               "uniform vs host Philox");
                float cpu = bp_rng_uniform(op.seed, op.stream, i, lo, hi);
                tb_expect_bits(&out, i, tb_bits_of(floats[d], cpu),
                               "uniform vs bp_rng_uniform (CPU)");
            }
            if (c == 2 && d == 0) /* u of the first known answer */
                tb_expect_bits(&out, 0,
                               bp_f32_bits((float)(0x6627e8d5u >> 8) *
                                           0x1p-24f),
                               "uniform(0, 0, 0)");
            tb_drop(&out);
        }
}
END_TEST

/* randn and normal on the device: the shared arithmetic of rng_normal.h
 * under nvcc's named roundings must give the CPU backend's bits in every
 * float dtype (the stream is a generator: identical everywhere), and
 * element 0 of seed 0 the reference value of check_rng. */
START_TEST(t_normal)
{
    static const struct {
        uint64_t seed, stream;
        double mean, std;
    } cases[] = {{0, 0, 0.0, 1.0},
                 {0x123456789abcdefull, 0xfedcba9876543210ull, -2.5, 0.125},
                 {7, 1, 3000.0, 7777.0}};
    bp_backend_t *cpu = NULL;
    bp_error_t err = {0};
    tb_check(bp_backend_open("cpu", NULL, &cpu, &err), &err, "open cpu");
    const bp_dtype_t dts[] = {BP_F32, BP_BF16, BP_F16, BP_F64};
    const int64_t n = 100001; /* odd: the last pair's sine is not used */
    for (size_t c = 0; c < 3; c++)
        for (size_t d = 0; d < 4; d++) {
            bp_buf_t out, want;
            tb_make1(&out, dts[d], n);
            tb_make1(&want, dts[d], n);
            bp_op_t op = tb_op(c == 0 ? BP_OP_RANDN : BP_OP_NORMAL);
            op.seed = cases[c].seed;
            op.stream = cases[c].stream;
            op.mean = cases[c].mean;
            op.std = cases[c].std;
            tb_exec(&op, NULL, NULL, &out);
            bp_exec_t x = {.op = &op, .out = &want};
            tb_check(cpu->op[op.kind](cpu, &x, &err), &err, "cpu normal");
            for (int64_t i = 0; i < n; i++)
                tb_expect_bits(&out, (size_t)i, bp_buf_bits(&want, (size_t)i),
                               "normal: cuda vs cpu");
            if (c == 0 && dts[d] == BP_F64)
                tb_expect_bits(&out, 0, 0xbfbf1bcd549837c2ull, "randn(seed 0)[0]");
            tb_drop(&out);
            tb_drop(&want);
        }
    bp_backend_close(cpu);
}
END_TEST

/* ---- matmul ---- */

static void matmul_case(bp_dtype_t dt, int64_t m, int64_t k, int64_t n)
{
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, so[2] = {m, n};
    bp_buf_t a, b, out, again;
    tb_make(&a, dt, 2, sa);
    tb_make(&b, dt, 2, sb);
    bp_op_t ua = tb_op(BP_OP_UNIFORM), ub = tb_op(BP_OP_UNIFORM);
    ua.seed = ub.seed = 1234;
    ua.stream = 1;
    ub.stream = 2;
    ua.low = ub.low = -1.0;
    ua.high = ub.high = 1.0;
    tb_exec(&ua, NULL, NULL, &a);
    tb_exec(&ub, NULL, NULL, &b);
    tb_make(&out, dt, 2, so);
    tb_make(&again, dt, 2, so);
    bp_op_t mm = tb_op(BP_OP_MATMUL);
    tb_exec(&mm, &a, &b, &out);
    for (int rep = 0; rep < 5; rep++) {
        tb_exec(&mm, &a, &b, &again);
        ck_assert_msg(memcmp(out.data, again.data, bp_buf_nbytes(&out)) == 0,
                      "matmul %s [%lld,%lld]x[%lld,%lld]: run %d differs from "
                      "run 0", bp_dtype_name(dt), (long long)m, (long long)k,
                      (long long)k, (long long)n, rep + 1);
    }
    /* Against the exact product: accumulation error (fp32, at most k
     * roundings) plus the final rounding to dt. */
    int man = bp_dtype_info(dt)->man_bits;
    double acc_eps = dt == BP_F64 ? 0x1p-52 : 0x1p-23;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (int64_t l = 0; l < k; l++) {
                double p = bp_buf_get(&a, (size_t)(i * k + l)) *
                           bp_buf_get(&b, (size_t)(l * n + j));
                ref += p;
                mag += fabs(p);
            }
            double got = bp_buf_get(&out, (size_t)(i * n + j));
            double tol = (double)k * acc_eps * mag + ldexp(fabs(ref), -man) +
                         ldexp(1.0, -120);
            ck_assert_msg(fabs(got - ref) <= tol,
                          "matmul %s [%lld, %lld] = %a, exact %a (tolerance "
                          "%a): wrong layout or transposition?",
                          bp_dtype_name(dt), (long long)i, (long long)j, got,
                          ref, tol);
        }
    tb_drop(&a);
    tb_drop(&b);
    tb_drop(&out);
    tb_drop(&again);
}

START_TEST(t_matmul)
{
    for (int d = 0; d < NFLOATS; d++)
        matmul_case(floats[d], 37, 53, 29);
    matmul_case(BP_F64, 5, 300, 3);
    matmul_case(BP_F32, 256, 512, 128);
}
END_TEST


TCase *tb_tcase_data(void)
{
    TCase *tc = tcase_create("data");
    tcase_add_test(tc, t_cast_narrow);
    tcase_add_test(tc, t_cast_nan);
    tcase_add_test(tc, t_cast_widen);
    tcase_add_test(tc, t_cast_int);
    tcase_add_test(tc, t_arange);
    tcase_add_test(tc, t_concat);
    tcase_add_test(tc, t_slice);
    tcase_add_test(tc, t_rotate_half);
    tcase_add_test(tc, t_sum);
    tcase_add_test(tc, t_philox_kat);
    tcase_add_test(tc, t_uniform);
    tcase_add_test(tc, t_normal);
    tcase_add_test(tc, t_matmul);
    return tc;
}
