/* Transcendental functions, sqrt, rsqrt, reciprocal and pow on the CPU, as
 * PyTorch's ATen computes them (UnaryOpsKernel.cpp, PowKernel.cpp,
 * vec256_float.h, vec256_bfloat16.h, functional_bfloat16.h).
 *
 * sin, cos, exp, log, tanh: ATen's vml path (vml::v<op> -> vec::map) sends
 * every element, the last partial register included, through
 * Vectorized<float>::<op>, i.e. Sleef_<op>f8_u10; bf16 and f16 are widened
 * to float, computed, and rounded once, sin and cos through _u35, the
 * builds vec256_float.h's Vectorized<float>::sin and ::cos call (PyTorch's
 * fp32 sin and cos are MKL's on x86 wheels; bitprobe keeps _u10 there).  SLEEF's scalar entry points
 * (Sleef_sinf_u10) are a different build and differ in the last bit on
 * about 0.5% of inputs, so the vector entry points are called directly:
 * with ATen's AVX2 capability Sleef_<op>f8_u10avx2; with AVX512 (cpu_isa.h)
 * Sleef_<op>f16_u10avx512f for exp, log, tanh and pow, which ATen also
 * builds for AVX-512, and still the AVX2 ones for sin and cos, which it
 * does not (STATIC_IMPLEMENT_COMPLEX_KERNEL_WITHOUT_AVX512).  u35 selects
 * the _u35 builds where SLEEF has one (not for exp and pow); libm selects
 * glibc (and ATen's DEFAULT capability, whose Vectorized math is std::).
 * This system's SLEEF is 3.5; PyTorch bundles 3.8/3.9, whose fp64 erf
 * (sleef_erf.c), log1p above 1e38f/1e307 (log1pf8 below), and fp64 exp
 * and pow just below log(DBL_MAX) (sleef_exp.c) differ and are computed
 * as there.
 *
 * sqrt: IEEE (one rounding in float, then one to bf16/f16).
 * reciprocal: 1/x in float, rounded once.
 * rsqrt: 1/sqrt(x), two roundings in float; for bf16/f16 the scalar tail
 *   of cpu_kernel_vec computes (T)1 / std::sqrt(T x), rounding sqrt to the
 *   dtype first.
 * pow: cpu_kernel_vec with Vectorized::pow (Sleef_powf8_u10; on AVX512
 *   Sleef_powf16_u10, two registers of 16 lanes) in the vector part and std::pow in the tail (glibc: powf(float, float), and for an
 *   fp32 tensor ** scalar pow(double, double) with the exponent kept in
 *   double while the vector part rounds it to float).  tensor ** scalar
 *   first dispatches 0.5 -> sqrt, -0.5 -> rsqrt, -1 -> reciprocal (f32,
 *   f64, bf16), then 2 -> x*x, 3 -> x*x*x, -2 -> 1/(x*x) (f32, f64, and
 *   bf16 after rounding the exponent to bf16); f16 takes the generic path
 *   with the exponent rounded to f16.  scalar ** tensor converts the base
 *   to the tensor's dtype (TensorIterator) and runs the tensor ** tensor
 *   kernel; a base of exactly 1 fills ones. */
#include "be_cpu.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

#include "sleef_erf.h"
#include "sleef_exp.h"

/* SLEEF's AVX2 entry points, declared here because sleef.h shows them only
 * to translation units compiled with -mavx; they are called from the
 * functions below, which alone are compiled for AVX2 and FMA. */
#pragma GCC push_options
#pragma GCC target("avx2,fma")
typedef __m256 (*v8_fn)(__m256);
typedef __m256d (*v4_fn)(__m256d);
__m256 Sleef_sinf8_u10avx2(__m256);
__m256 Sleef_cosf8_u10avx2(__m256);
__m256 Sleef_expf8_u10avx2(__m256);
__m256 Sleef_logf8_u10avx2(__m256);
__m256 Sleef_tanhf8_u10avx2(__m256);
__m256 Sleef_sinf8_u35avx2(__m256);
__m256 Sleef_cosf8_u35avx2(__m256);
__m256 Sleef_logf8_u35avx2(__m256);
__m256 Sleef_tanhf8_u35avx2(__m256);
__m256 Sleef_powf8_u10avx2(__m256, __m256);
__m256d Sleef_sind4_u10avx2(__m256d);
__m256d Sleef_cosd4_u10avx2(__m256d);
__m256d Sleef_expd4_u10avx2(__m256d);
__m256d Sleef_logd4_u10avx2(__m256d);
__m256d Sleef_tanhd4_u10avx2(__m256d);
__m256d Sleef_sind4_u35avx2(__m256d);
__m256d Sleef_cosd4_u35avx2(__m256d);
__m256d Sleef_logd4_u35avx2(__m256d);
__m256d Sleef_tanhd4_u35avx2(__m256d);
__m256d Sleef_powd4_u10avx2(__m256d, __m256d);
__m256 Sleef_log1pf8_u10avx2(__m256);
__m256 Sleef_erff8_u10avx2(__m256);
__m256d Sleef_log1pd4_u10avx2(__m256d);
__m256 Sleef_exp2f8_u10avx2(__m256);
__m256d Sleef_exp2d4_u10avx2(__m256d);
/* op_list.h's BP_FN functions: u10 and the U35 column's build. */
#define BP_FN(ID, S, U35, W512, MPFR, CUDA)                                    \
    __m256 Sleef_##S##f8_u10avx2(__m256);                                      \
    __m256 Sleef_##S##f8_##U35##avx2(__m256);                                  \
    __m256d Sleef_##S##d4_u10avx2(__m256d);                                    \
    __m256d Sleef_##S##d4_##U35##avx2(__m256d);
#include "op_list.h"
#undef BP_FN
typedef __m256 (*v8_fn2)(__m256, __m256);
typedef __m256d (*v4_fn2)(__m256d, __m256d);
/* op_list.h's BP_FN2 functions of two operands. */
#define BP_FN2(ID, S, U35, W512, MPFR, CUDA)                                   \
    __m256 Sleef_##S##f8_u10avx2(__m256, __m256);                              \
    __m256 Sleef_##S##f8_##U35##avx2(__m256, __m256);                          \
    __m256d Sleef_##S##d4_u10avx2(__m256d, __m256d);                           \
    __m256d Sleef_##S##d4_##U35##avx2(__m256d, __m256d);
#include "op_list.h"
#undef BP_FN2

/* Whole registers, then the rest zero-padded as vec::map's partial load. */
static void map8(v8_fn f, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, f(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float t[8] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm256_storeu_ps(t, f(_mm256_loadu_ps(t)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

static void map4(v4_fn f, double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(x + i, f(_mm256_loadu_pd(x + i)));
    if (i < n) {
        double t[4] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm256_storeu_pd(t, f(_mm256_loadu_pd(t)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

/* Vectorized<double>::erf(): Sleef_erfd4_u10 (AVX-512: Sleef_erfd8_u10)
 * of the SLEEF PyTorch bundles, lane by lane (sleef_erf.h), not this
 * system's 3.5. */
static void erf_lanes(double *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = bp_sleef_erf(r[i]);
}

static __m256d erfd4(__m256d v)
{
    double r[4];
    _mm256_storeu_pd(r, v);
    erf_lanes(r, 4);
    return _mm256_loadu_pd(r);
}

/* exp of the SLEEF PyTorch bundles (3.8 on, PR #604): finite up to
 * log(DBL_MAX), where 3.5 gives +inf above 709.78271114955742909; those
 * lanes come from sleef_exp.c's port, the rest from the system's SLEEF. */
static bool exp_window(double d)
{
    return d > BP_SLEEF_EXP_OFLOW_35 && d <= BP_SLEEF_EXP_OFLOW;
}

static void exp_lanes(double *r, const double *d, int n)
{
    for (int i = 0; i < n; i++)
        if (exp_window(d[i]))
            r[i] = bp_sleef_exp(d[i]);
}

static __m256d expd4(__m256d v)
{
    double d[4], r[4];
    _mm256_storeu_pd(d, v);
    _mm256_storeu_pd(r, Sleef_expd4_u10avx2(v));
    exp_lanes(r, d, 4);
    return _mm256_loadu_pd(r);
}

/* log1p of the SLEEF PyTorch bundles (3.8 on, shibatch/sleef PR #606):
 * where x is above the bound of the core approximation (1e38f, 1e307) or
 * NaN, the lane takes log's value (xlogf_u1, xlog_u1) where 3.5 gives
 * +inf; every other lane is 3.5's.  Log of such x differs from log1p by
 * less than an ulp's fraction: log1p(3e38f) is 88.6, not +inf. */
#define LOG1PF_BOUND 1e38f
#define LOG1P_BOUND 1e307

static __m256 log1pf8(__m256 v)
{
    __m256 r = Sleef_log1pf8_u10avx2(v);
    __m256 core = _mm256_cmp_ps(v, _mm256_set1_ps(LOG1PF_BOUND), _CMP_LE_OQ);
    if (_mm256_movemask_ps(core) == 0xff)
        return r;
    return _mm256_blendv_ps(Sleef_logf8_u10avx2(v), r, core);
}

static __m256d log1pd4(__m256d v)
{
    __m256d r = Sleef_log1pd4_u10avx2(v);
    __m256d core = _mm256_cmp_pd(v, _mm256_set1_pd(LOG1P_BOUND), _CMP_LE_OQ);
    if (_mm256_movemask_pd(core) == 0xf)
        return r;
    return _mm256_blendv_pd(Sleef_logd4_u10avx2(v), r, core);
}

/* Vectorized<float>::erf() (vec256_float.h): Abramowitz and Stegun's
 * 7.1.26 with SLEEF's exp, not SLEEF's erf:
 *   t = 1 / (p |x| + 1), r = ((((p5 t + p4) t + p3) t + p2) t + p1),
 *   erf(x) = sign(x) (1 - r t exp(-x^2)), every step an AVX2 fma or op. */
static __m256 erf_poly8(__m256 values)
{
    const __m256 neg_zero_vec = _mm256_set1_ps(-0.f);
    const __m256 one_vec = _mm256_set1_ps(1.0f);
    const __m256 p = _mm256_set1_ps(0.3275911f);
    const __m256 p1 = _mm256_set1_ps(0.254829592f);
    const __m256 p2 = _mm256_set1_ps(-0.284496736f);
    const __m256 p3 = _mm256_set1_ps(1.421413741f);
    const __m256 p4 = _mm256_set1_ps(-1.453152027f);
    const __m256 p5 = _mm256_set1_ps(1.061405429f);
    __m256 sign_mask = _mm256_and_ps(neg_zero_vec, values);
    __m256 abs_vec = _mm256_xor_ps(sign_mask, values);
    __m256 tmp0 = _mm256_fmadd_ps(p, abs_vec, one_vec);
    __m256 t = _mm256_div_ps(one_vec, tmp0);
    __m256 tmp1 = _mm256_fmadd_ps(p5, t, p4);
    __m256 tmp2 = _mm256_fmadd_ps(tmp1, t, p3);
    __m256 tmp3 = _mm256_fmadd_ps(tmp2, t, p2);
    __m256 r = _mm256_fmadd_ps(tmp3, t, p1);
    __m256 pow_2 = _mm256_mul_ps(values, values);
    __m256 neg_pow_2 = _mm256_xor_ps(neg_zero_vec, pow_2);
    __m256 tmp4 = Sleef_expf8_u10avx2(neg_pow_2);
    __m256 tmp5 = _mm256_xor_ps(neg_zero_vec, tmp4);
    __m256 tmp6 = _mm256_mul_ps(tmp5, t);
    __m256 tmp7 = _mm256_fmadd_ps(tmp6, r, one_vec);
    return _mm256_xor_ps(sign_mask, tmp7);
}

float bp_cpu_erf_poly(float x)
{
    float r[8];
    _mm256_storeu_ps(r, erf_poly8(_mm256_set1_ps(x)));
    return r[0];
}

/* One value through an 8-lane (4-lane) entry point: lane 0 of a register
 * holding x in every lane. */
static float lane8(v8_fn f, float x)
{
    float r[8];
    _mm256_storeu_ps(r, f(_mm256_set1_ps(x)));
    return r[0];
}

static double lane4(v4_fn f, double x)
{
    double r[4];
    _mm256_storeu_pd(r, f(_mm256_set1_pd(x)));
    return r[0];
}

static float pow8(float x, float y)
{
    float r[8];
    _mm256_storeu_ps(
        r, Sleef_powf8_u10avx2(_mm256_set1_ps(x), _mm256_set1_ps(y)));
    return r[0];
}

static double pow4(double x, double y)
{
    double r[4];
    _mm256_storeu_pd(
        r, Sleef_powd4_u10avx2(_mm256_set1_pd(x), _mm256_set1_pd(y)));
    return r[0];
}

static float lane8_2(v8_fn2 f, float x, float y)
{
    float r[8];
    _mm256_storeu_ps(r, f(_mm256_set1_ps(x), _mm256_set1_ps(y)));
    return r[0];
}

static double lane4_2(v4_fn2 f, double x, double y)
{
    double r[4];
    _mm256_storeu_pd(r, f(_mm256_set1_pd(x), _mm256_set1_pd(y)));
    return r[0];
}
#pragma GCC pop_options

/* SLEEF's AVX-512 entry points, for the kernels ATen also builds for
 * AVX-512 (exp, log, tanh: UnaryOpsKernel.cpp's ..._WITH_AVX512; pow:
 * PowKernel.cpp's ALSO_REGISTER_AVX512_DISPATCH) when the AVX512
 * capability is modelled; only called on CPUs that have it (cpu_isa.c). */
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")
typedef __m512 (*v16_fn)(__m512);
typedef __m512d (*v8d_fn)(__m512d);
__m512 Sleef_expf16_u10avx512f(__m512);
__m512 Sleef_logf16_u10avx512f(__m512);
__m512 Sleef_tanhf16_u10avx512f(__m512);
__m512 Sleef_logf16_u35avx512f(__m512);
__m512 Sleef_tanhf16_u35avx512f(__m512);
__m512 Sleef_powf16_u10avx512f(__m512, __m512);
__m512d Sleef_expd8_u10avx512f(__m512d);
__m512d Sleef_logd8_u10avx512f(__m512d);
__m512d Sleef_tanhd8_u10avx512f(__m512d);
__m512d Sleef_logd8_u35avx512f(__m512d);
__m512d Sleef_tanhd8_u35avx512f(__m512d);
__m512d Sleef_powd8_u10avx512f(__m512d, __m512d);
__m512 Sleef_log1pf16_u10avx512f(__m512);
__m512 Sleef_erff16_u10avx512f(__m512);
__m512d Sleef_log1pd8_u10avx512f(__m512d);
__m512 Sleef_exp2f16_u10avx512f(__m512);
__m512d Sleef_exp2d8_u10avx512f(__m512d);
/* BP_FN functions with AVX512 1 (AVX512 0 declares nothing). */
#define FN512_0(S, U35)
#define FN512_1(S, U35)                                                        \
    __m512 Sleef_##S##f16_u10avx512f(__m512);                                  \
    __m512 Sleef_##S##f16_##U35##avx512f(__m512);                              \
    __m512d Sleef_##S##d8_u10avx512f(__m512d);                                 \
    __m512d Sleef_##S##d8_##U35##avx512f(__m512d);
#define BP_FN(ID, S, U35, W512, MPFR, CUDA) FN512_##W512(S, U35)
#include "op_list.h"
#undef BP_FN
typedef __m512 (*v16_fn2)(__m512, __m512);
typedef __m512d (*v8d_fn2)(__m512d, __m512d);
#define FN2_512_0(S, U35)
#define FN2_512_1(S, U35)                                                      \
    __m512 Sleef_##S##f16_u10avx512f(__m512, __m512);                          \
    __m512 Sleef_##S##f16_##U35##avx512f(__m512, __m512);                      \
    __m512d Sleef_##S##d8_u10avx512f(__m512d, __m512d);                        \
    __m512d Sleef_##S##d8_##U35##avx512f(__m512d, __m512d);
#define BP_FN2(ID, S, U35, W512, MPFR, CUDA) FN2_512_##W512(S, U35)
#include "op_list.h"
#undef BP_FN2

static void map16(v16_fn f, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, f(_mm512_loadu_ps(x + i)));
    if (i < n) {
        float t[16] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm512_storeu_ps(t, f(_mm512_loadu_ps(t)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

static void map8d(v8d_fn f, double *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(x + i, f(_mm512_loadu_pd(x + i)));
    if (i < n) {
        double t[8] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm512_storeu_pd(t, f(_mm512_loadu_pd(t)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

static float lane16(v16_fn f, float x)
{
    float r[16];
    _mm512_storeu_ps(r, f(_mm512_set1_ps(x)));
    return r[0];
}

static double lane8d(v8d_fn f, double x)
{
    double r[8];
    _mm512_storeu_pd(r, f(_mm512_set1_pd(x)));
    return r[0];
}

static __m512d expd8(__m512d v)
{
    double d[8], r[8];
    _mm512_storeu_pd(d, v);
    _mm512_storeu_pd(r, Sleef_expd8_u10avx512f(v));
    exp_lanes(r, d, 8);
    return _mm512_loadu_pd(r);
}

static __m512 log1pf16(__m512 v)
{
    __m512 r = Sleef_log1pf16_u10avx512f(v);
    __mmask16 core = _mm512_cmp_ps_mask(v, _mm512_set1_ps(LOG1PF_BOUND), _CMP_LE_OQ);
    if (core == 0xffff)
        return r;
    return _mm512_mask_blend_ps(core, Sleef_logf16_u10avx512f(v), r);
}

static __m512d log1pd8(__m512d v)
{
    __m512d r = Sleef_log1pd8_u10avx512f(v);
    __mmask8 core = _mm512_cmp_pd_mask(v, _mm512_set1_pd(LOG1P_BOUND), _CMP_LE_OQ);
    if (core == 0xff)
        return r;
    return _mm512_mask_blend_pd(core, Sleef_logd8_u10avx512f(v), r);
}

static __m512d erfd8(__m512d v)
{
    double r[8];
    _mm512_storeu_pd(r, v);
    erf_lanes(r, 8);
    return _mm512_loadu_pd(r);
}

static float pow16(float x, float y)
{
    float r[16];
    _mm512_storeu_ps(r, Sleef_powf16_u10avx512f(_mm512_set1_ps(x), _mm512_set1_ps(y)));
    return r[0];
}

static double pow8d(double x, double y)
{
    double r[8];
    _mm512_storeu_pd(r, Sleef_powd8_u10avx512f(_mm512_set1_pd(x), _mm512_set1_pd(y)));
    return r[0];
}

static float lane16_2(v16_fn2 f, float x, float y)
{
    float r[16];
    _mm512_storeu_ps(r, f(_mm512_set1_ps(x), _mm512_set1_ps(y)));
    return r[0];
}

static double lane8d_2(v8d_fn2 f, double x, double y)
{
    double r[8];
    _mm512_storeu_pd(r, f(_mm512_set1_pd(x), _mm512_set1_pd(y)));
    return r[0];
}
#pragma GCC pop_options

/* The AVX-512 builds, keyed by op; empty where ATen has no AVX-512 kernel
 * (sin, cos: STATIC_IMPLEMENT_COMPLEX_KERNEL_WITHOUT_AVX512), so that the
 * AVX2 entry points below serve them on AVX-512 hosts too. */
typedef struct {
    v16_fn v16_u10, v16_u35;
    v8d_fn v8d_u10, v8d_u35;
} cpu_fn512_t;

static const cpu_fn512_t fns512[BP_OP_COUNT] = {
#define ROW512_0(ID, S, U35)
#define ROW512_1(ID, S, U35)                                                   \
    [BP_OP_##ID] = {Sleef_##S##f16_u10avx512f, Sleef_##S##f16_##U35##avx512f,   \
                    Sleef_##S##d8_u10avx512f, Sleef_##S##d8_##U35##avx512f},
#define BP_FN(ID, S, U35, W512, MPFR, CUDA) ROW512_##W512(ID, S, U35)
#include "op_list.h"
#undef BP_FN
    [BP_OP_EXP] = {Sleef_expf16_u10avx512f, Sleef_expf16_u10avx512f, expd8, expd8},
    [BP_OP_LOG] = {Sleef_logf16_u10avx512f, Sleef_logf16_u35avx512f, Sleef_logd8_u10avx512f,
                   Sleef_logd8_u35avx512f},
    [BP_OP_TANH] = {Sleef_tanhf16_u10avx512f, Sleef_tanhf16_u35avx512f,
                    Sleef_tanhd8_u10avx512f, Sleef_tanhd8_u35avx512f},
    [BP_OP_LOG1P] = {log1pf16, log1pf16, log1pd8, log1pd8},
    [BP_OP_ERF] = {Sleef_erff16_u10avx512f, Sleef_erff16_u10avx512f, erfd8, erfd8},
    [BP_OP_EXP2] = {Sleef_exp2f16_u10avx512f, Sleef_exp2f16_u10avx512f, Sleef_exp2d8_u10avx512f,
                    Sleef_exp2d8_u10avx512f},
};

/* The scalar build's exp, with 3.8's bound (PR #604 changed both). */
static double exp1(double x)
{
    return exp_window(x) ? bp_sleef_exp(x) : Sleef_exp_u10(x);
}

/* The scalar builds' log1p, with the same bounds (PR #606 changed both). */
static float log1pf1(float x)
{
    return x <= LOG1PF_BOUND ? Sleef_log1pf_u10(x) : Sleef_logf_u10(x);
}

static double log1pd1(double x)
{
    return x <= LOG1P_BOUND ? Sleef_log1p_u10(x) : Sleef_log_u10(x);
}

typedef float (*f1_fn)(float);
typedef double (*d1_fn)(double);

/* Each function's entry points: SLEEF's AVX2 builds (u10, u35), its
 * scalar builds, and libm; keyed by op.  SLEEF has no u35 exp: u10 serves
 * both. */
typedef struct {
    v8_fn v8_u10, v8_u35;
    v4_fn v4_u10, v4_u35;
    f1_fn s_u10, s_u35, s_libm;
    d1_fn d_u10, d_u35, d_libm;
} cpu_fn_t;

static const cpu_fn_t fns[BP_OP_COUNT] = {
#define BP_FN(ID, S, U35, W512, MPFR, CUDA)                                    \
    [BP_OP_##ID] = {Sleef_##S##f8_u10avx2,  Sleef_##S##f8_##U35##avx2,          \
                    Sleef_##S##d4_u10avx2,  Sleef_##S##d4_##U35##avx2,          \
                    Sleef_##S##f_u10,       Sleef_##S##f_##U35,                 \
                    S##f,                   Sleef_##S##_u10,                    \
                    Sleef_##S##_##U35,      S},
#include "op_list.h"
#undef BP_FN
    [BP_OP_SIN] = {Sleef_sinf8_u10avx2, Sleef_sinf8_u35avx2, Sleef_sind4_u10avx2,
                   Sleef_sind4_u35avx2, Sleef_sinf_u10, Sleef_sinf_u35, sinf,
                   Sleef_sin_u10, Sleef_sin_u35, sin},
    [BP_OP_COS] = {Sleef_cosf8_u10avx2, Sleef_cosf8_u35avx2, Sleef_cosd4_u10avx2,
                   Sleef_cosd4_u35avx2, Sleef_cosf_u10, Sleef_cosf_u35, cosf,
                   Sleef_cos_u10, Sleef_cos_u35, cos},
    [BP_OP_EXP] = {Sleef_expf8_u10avx2, Sleef_expf8_u10avx2, expd4, expd4, Sleef_expf_u10,
                   Sleef_expf_u10, expf, exp1, exp1, exp},
    [BP_OP_LOG] = {Sleef_logf8_u10avx2, Sleef_logf8_u35avx2, Sleef_logd4_u10avx2,
                   Sleef_logd4_u35avx2, Sleef_logf_u10, Sleef_logf_u35, logf,
                   Sleef_log_u10, Sleef_log_u35, log},
    [BP_OP_TANH] = {Sleef_tanhf8_u10avx2, Sleef_tanhf8_u35avx2,
                    Sleef_tanhd4_u10avx2, Sleef_tanhd4_u35avx2, Sleef_tanhf_u10,
                    Sleef_tanhf_u35, tanhf, Sleef_tanh_u10, Sleef_tanh_u35, tanh},
    [BP_OP_LOG1P] = {log1pf8, log1pf8, log1pd4, log1pd4, log1pf1, log1pf1, log1pf, log1pd1,
                     log1pd1, log1p},
    [BP_OP_ERF] = {Sleef_erff8_u10avx2, Sleef_erff8_u10avx2, erfd4, erfd4, Sleef_erff_u10,
                   Sleef_erff_u10, erff, Sleef_erf_u10, Sleef_erf_u10, erf},
    [BP_OP_EXP2] = {Sleef_exp2f8_u10avx2, Sleef_exp2f8_u10avx2, Sleef_exp2d4_u10avx2,
                    Sleef_exp2d4_u10avx2, Sleef_exp2f_u10, Sleef_exp2f_u10, exp2f, Sleef_exp2_u10,
                    Sleef_exp2_u10, exp2},
};

float bp_cpu_scalarf(const bp_cpu_t *c, bp_op_kind_t k, float x)
{
    const cpu_fn_t *fn = &fns[k];
    if (c->math == BP_CPU_MATH_LIBM)
        return fn->s_libm(x);
    return c->math == BP_CPU_MATH_SLEEF_U35 ? fn->s_u35(x) : fn->s_u10(x);
}

double bp_cpu_scalar(const bp_cpu_t *c, bp_op_kind_t k, double x)
{
    const cpu_fn_t *fn = &fns[k];
    if (c->math == BP_CPU_MATH_LIBM)
        return fn->d_libm(x);
    return c->math == BP_CPU_MATH_SLEEF_U35 ? fn->d_u35(x) : fn->d_u10(x);
}

float bp_cpu_lanef(const bp_cpu_t *c, bp_op_kind_t k, bool wide, float x)
{
    const cpu_fn_t *fn = &fns[k];
    const cpu_fn512_t *f5 = &fns512[k];
    bool u35 = c->math == BP_CPU_MATH_SLEEF_U35, lib = c->math == BP_CPU_MATH_LIBM;
    if (!lib && wide && c->isa == BP_CPU_ISA_AVX512 && f5->v16_u10)
        return lane16(u35 ? f5->v16_u35 : f5->v16_u10, x);
    if (!lib && c->simd)
        return lane8(u35 ? fn->v8_u35 : fn->v8_u10, x);
    return bp_cpu_scalarf(c, k, x);
}

double bp_cpu_lane(const bp_cpu_t *c, bp_op_kind_t k, bool wide, double x)
{
    const cpu_fn_t *fn = &fns[k];
    const cpu_fn512_t *f5 = &fns512[k];
    bool u35 = c->math == BP_CPU_MATH_SLEEF_U35, lib = c->math == BP_CPU_MATH_LIBM;
    if (!lib && wide && c->isa == BP_CPU_ISA_AVX512 && f5->v8d_u10)
        return lane8d(u35 ? f5->v8d_u35 : f5->v8d_u10, x);
    if (!lib && c->simd)
        return lane4(u35 ? fn->v4_u35 : fn->v4_u10, x);
    return bp_cpu_scalar(c, k, x);
}

bool bp_cpu_has_map(bp_op_kind_t k)
{
    return (unsigned)k < BP_OP_COUNT && fns[k].v8_u10;
}

void bp_cpu_map_f32(const bp_cpu_t *c, bp_op_kind_t k, float *x, size_t n)
{
    const cpu_fn_t *fn = &fns[k];
    const cpu_fn512_t *f5 = &fns512[k];
    bool u35 = c->math == BP_CPU_MATH_SLEEF_U35;
    if (c->math != BP_CPU_MATH_LIBM && c->isa == BP_CPU_ISA_AVX512 && f5->v16_u10) {
        map16(u35 ? f5->v16_u35 : f5->v16_u10, x, n);
        return;
    }
    if (c->math != BP_CPU_MATH_LIBM && c->simd) {
        map8(u35 ? fn->v8_u35 : fn->v8_u10, x, n);
        return;
    }
    f1_fn f = c->math == BP_CPU_MATH_LIBM        ? fn->s_libm
              : c->math == BP_CPU_MATH_SLEEF_U35 ? fn->s_u35
                                                 : fn->s_u10;
    for (size_t i = 0; i < n; i++)
        x[i] = f(x[i]);
}

void bp_cpu_map_f64(const bp_cpu_t *c, bp_op_kind_t k, double *x, size_t n)
{
    const cpu_fn_t *fn = &fns[k];
    const cpu_fn512_t *f5 = &fns512[k];
    bool u35 = c->math == BP_CPU_MATH_SLEEF_U35;
    if (c->math != BP_CPU_MATH_LIBM && c->isa == BP_CPU_ISA_AVX512 && f5->v8d_u10) {
        map8d(u35 ? f5->v8d_u35 : f5->v8d_u10, x, n);
        return;
    }
    if (c->math != BP_CPU_MATH_LIBM && c->simd) {
        map4(u35 ? fn->v4_u35 : fn->v4_u10, x, n);
        return;
    }
    d1_fn f = c->math == BP_CPU_MATH_LIBM        ? fn->d_libm
              : c->math == BP_CPU_MATH_SLEEF_U35 ? fn->d_u35
                                                 : fn->d_u10;
    for (size_t i = 0; i < n; i++)
        x[i] = f(x[i]);
}

float bp_cpu_vpowf(const bp_cpu_t *c, float x, float y)
{
    if (c->math == BP_CPU_MATH_LIBM)
        return powf(x, y);
    if (c->isa == BP_CPU_ISA_AVX512)
        return pow16(x, y);
    return c->simd ? pow8(x, y) : Sleef_powf_u10(x, y);
}

double bp_cpu_vpow(const bp_cpu_t *c, double x, double y)
{
    if (c->math == BP_CPU_MATH_LIBM)
        return pow(x, y);
    /* 3.8's overflow bound (PR #604): finite where 3.5 gives +inf */
    if (bp_sleef_pow_in_window(x, y))
        return bp_sleef_pow(x, y);
    if (c->isa == BP_CPU_ISA_AVX512)
        return pow8d(x, y);
    return c->simd ? pow4(x, y) : Sleef_pow_u10(x, y);
}

static bp_status need_float_out(const bp_exec_t *x, bp_error_t *err)
{
    if (!bp_dtype_info(x->out->dtype)->is_float)
        return bp_error_set(err, BP_EINTERNAL, "%s gives %s, not a float",
                            bp_op_name(x->op->kind),
                            bp_dtype_name(x->out->dtype));
    return BP_OK;
}

/* op_list.h's BP_FN2 functions, keyed by op: the entry points as fns's,
 * and the AVX-512 builds where ATen's AVX512 capability runs the kernel in
 * 512-bit registers (else the AVX2 kernel runs there, 32-byte registers
 * deciding the tail). */
typedef float (*f2_fn)(float, float);
typedef double (*d2_fn)(double, double);
typedef struct {
    v8_fn2 v8_u10, v8_u35;
    v4_fn2 v4_u10, v4_u35;
    f2_fn s_u10, s_u35, s_libm;
    d2_fn d_u10, d_u35, d_libm;
    v16_fn2 v16_u10, v16_u35;
    v8d_fn2 v8d_u10, v8d_u35;
} cpu_fn2_t;

#define FN2_ROW512_0(S, U35) NULL, NULL, NULL, NULL
#define FN2_ROW512_1(S, U35)                                                   \
    Sleef_##S##f16_u10avx512f, Sleef_##S##f16_##U35##avx512f,                   \
        Sleef_##S##d8_u10avx512f, Sleef_##S##d8_##U35##avx512f
static const cpu_fn2_t fns2[BP_OP_COUNT] = {
#define BP_FN2(ID, S, U35, W512, MPFR, CUDA)                                   \
    [BP_OP_##ID] = {Sleef_##S##f8_u10avx2,  Sleef_##S##f8_##U35##avx2,          \
                    Sleef_##S##d4_u10avx2,  Sleef_##S##d4_##U35##avx2,          \
                    Sleef_##S##f_u10,       Sleef_##S##f_##U35,                 \
                    S##f,                   Sleef_##S##_u10,                    \
                    Sleef_##S##_##U35,      S,                                  \
                    FN2_ROW512_##W512(S, U35)},
#include "op_list.h"
#undef BP_FN2
};

/* One element of cpu_kernel_vec: in a whole register (vec) the vector
 * build the math mode and capability select, else the scalar lambda's
 * std:: function (libm). */
static double fn2_elem(const bp_cpu_t *c, const cpu_fn2_t *fn, bp_dtype_t dt, bool vec,
                       double x, double y)
{
    bool u35 = c->math == BP_CPU_MATH_SLEEF_U35;
    if (dt == BP_F64) {
        if (!vec || c->math == BP_CPU_MATH_LIBM)
            return fn->d_libm(x, y);
        if (c->isa == BP_CPU_ISA_AVX512 && fn->v8d_u10)
            return lane8d_2(u35 ? fn->v8d_u35 : fn->v8d_u10, x, y);
        if (c->simd)
            return lane4_2(u35 ? fn->v4_u35 : fn->v4_u10, x, y);
        return u35 ? fn->d_u35(x, y) : fn->d_u10(x, y);
    }
    float xf = (float)x, yf = (float)y;
    if (!vec || c->math == BP_CPU_MATH_LIBM)
        return fn->s_libm(xf, yf);
    if (c->isa == BP_CPU_ISA_AVX512 && fn->v16_u10)
        return lane16_2(u35 ? fn->v16_u35 : fn->v16_u10, xf, yf);
    if (c->simd)
        return lane8_2(u35 ? fn->v8_u35 : fn->v8_u10, xf, yf);
    return u35 ? fn->s_u35(xf, yf) : fn->s_u10(xf, yf);
}

bp_status bp_cpu_op_fn2(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    bp_buf_t *out = x->out;
    bp_op_kind_t k = x->op->kind;
    const cpu_fn2_t *fn = &fns2[k];
    bp_status s = need_float_out(x, err);
    if (!s && (!x->a || !x->b))
        s = bp_error_set(err, BP_EINPUT, "%s needs two tensors", bp_op_name(k));
    if (!s && !fn->v8_u10)
        s = bp_error_set(err, BP_EINTERNAL, "op %s is not a CPU function of two operands",
                         bp_op_name(k));
    double *xs = NULL, *ys = NULL;
    if (!s)
        s = bp_cpu_expand(x->a, out, out->dtype, &xs, err);
    if (!s)
        s = bp_cpu_expand(x->b, out, out->dtype, &ys, err);
    if (!s) {
        bp_cpu_loop_t l = bp_cpu_loop(out, x->a, x->b);
        size_t lanes = bp_cpu_lanes(out->dtype, fn->v16_u10 ? c->vec_bytes : BP_CPU_VEC_BYTES);
        for (size_t i = 0; i < out->numel; i++)
            bp_cpu_store(out, i,
                         fn2_elem(c, fn, out->dtype, bp_cpu_in_vector(&l, i, lanes), xs[i], ys[i]));
    }
    free(xs);
    free(ys);
    return s;
}

static void fill_sqrt(bp_buf_t *out, const double *v)
{
    bool f = bp_cpu_opmath_f32(out->dtype);
    for (size_t i = 0; i < out->numel; i++)
        bp_cpu_store(out, i, f ? (double)sqrtf((float)v[i]) : sqrt(v[i]));
}

static void fill_reciprocal(bp_buf_t *out, const double *v)
{
    bool f = bp_cpu_opmath_f32(out->dtype);
    for (size_t i = 0; i < out->numel; i++)
        bp_cpu_store(out, i, f ? (double)(1.0f / (float)v[i]) : 1.0 / v[i]);
}

/* rsqrt_kernel with `lanes` per register: vector lanes and fp32/fp64 tails
 * round sqrt and the division in the compute type; bf16/f16 tails round
 * the sqrt to the dtype before dividing. */
static void fill_rsqrt(bp_buf_t *out, const double *v, const bp_cpu_loop_t *l,
                       size_t lanes)
{
    bp_dtype_t dt = out->dtype;
    for (size_t i = 0; i < out->numel; i++) {
        if (dt == BP_F64) {
            bp_cpu_store(out, i, 1.0 / sqrt(v[i]));
            continue;
        }
        float s = sqrtf((float)v[i]);
        if ((dt == BP_BF16 || dt == BP_F16) && !bp_cpu_in_vector(l, i, lanes))
            s = (float)bp_cpu_round(dt, s);
        bp_cpu_store(out, i, 1.0f / s);
    }
}

bp_status bp_cpu_op_unary(bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    bp_buf_t *out = x->out;
    double *v;
    bp_status s = need_float_out(x, err);
    if (!s && !x->a)
        s = bp_error_set(err, BP_EINPUT, "%s needs a tensor operand",
                         bp_op_name(x->op->kind));
    if (s || (s = bp_cpu_expand(x->a, out, out->dtype, &v, err)))
        return s;
    bp_op_kind_t fn = x->op->kind;
    switch (fn) {
    case BP_OP_SQRT: fill_sqrt(out, v); goto done;
    case BP_OP_RECIPROCAL: fill_reciprocal(out, v); goto done;
    case BP_OP_RSQRT: {
        bp_cpu_loop_t l = bp_cpu_loop(out, x->a, NULL);
        /* The DEFAULT build's Vectorized<T>::rsqrt (vec_base.h) maps the
         * scalar formula over its lanes: every element as a tail. */
        if (!c->simd)
            l.vec = false;
        fill_rsqrt(out, v, &l, bp_cpu_lanes(out->dtype, BP_CPU_VEC_BYTES));
        goto done;
    }
    default:
        break;
    }
    if (!bp_cpu_has_map(fn)) {
        free(v);
        return bp_error_set(err, BP_EINTERNAL, "op %s is not a CPU function",
                            bp_op_name(fn));
    }
    if (bp_cpu_opmath_f32(out->dtype)) {
        float *f = malloc((out->numel ? out->numel : 1) * sizeof *f);
        if (!f) {
            free(v);
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < out->numel; i++)
            f[i] = (float)v[i];
        if (fn == BP_OP_ERF && out->dtype != BP_F32 && c->simd && c->math != BP_CPU_MATH_LIBM) {
            /* bf16/f16: vec::map of functional_bfloat16.h widens to float
             * and calls Vectorized<float>::erf, ATen's polynomial (the
             * same bits with AVX-512's 16 lanes), on every element */
            for (size_t i = 0; i < out->numel; i++)
                f[i] = bp_cpu_erf_poly(f[i]);
        } else if ((fn == BP_OP_SIN || fn == BP_OP_COS) && out->dtype != BP_F32 && c->simd &&
                   c->math == BP_CPU_MATH_SLEEF_U10) {
            /* bf16/f16 widen to Vectorized<float>::sin/cos: SLEEF u35
             * (sin(300) in fp16: 0xbbff, where u10 ties to -1.0) */
            bp_cpu_t u35 = *c;
            u35.math = BP_CPU_MATH_SLEEF_U35;
            bp_cpu_map_f32(&u35, fn, f, out->numel);
        } else {
            bp_cpu_map_f32(c, fn, f, out->numel);
        }
        for (size_t i = 0; i < out->numel; i++)
            bp_cpu_store(out, i, f[i]);
        free(f);
    } else {
        bp_cpu_map_f64(c, fn, v, out->numel);
        for (size_t i = 0; i < out->numel; i++)
            bp_cpu_store(out, i, v[i]);
    }
done:
    free(v);
    return BP_OK;
}

/* The tensor ** tensor kernel over expanded operands (xs or ys NULL: that
 * side is the scalar xv / yv, already in the dtype). */
static void pow_tt(const bp_cpu_t *c, bp_buf_t *out, const double *xs,
                   double xv, const double *ys, double yv,
                   const bp_cpu_loop_t *l)
{
    bp_dtype_t dt = out->dtype;
    size_t lanes = bp_cpu_lanes(dt, c->vec_bytes);
    for (size_t i = 0; i < out->numel; i++) {
        double xb = xs ? xs[i] : xv, yb = ys ? ys[i] : yv;
        bool vec = bp_cpu_in_vector(l, i, lanes);
        double r;
        if (dt == BP_F64)
            r = vec ? bp_cpu_vpow(c, xb, yb) : pow(xb, yb);
        else
            r = vec ? bp_cpu_vpowf(c, (float)xb, (float)yb)
                    : powf((float)xb, (float)yb);
        bp_cpu_store(out, i, r);
    }
}

/* pow_tensor_scalar_kernel for float dtypes. */
static void pow_ts(const bp_cpu_t *c, bp_buf_t *out, const double *xs,
                   double e, const bp_cpu_loop_t *l)
{
    bp_dtype_t dt = out->dtype;
    size_t lanes = bp_cpu_lanes(dt, c->vec_bytes);
    if (dt == BP_F32 || dt == BP_F64 || dt == BP_BF16) {
        if (e == 0.5) {
            fill_sqrt(out, xs);
            return;
        }
        if (e == -0.5) {
            bp_cpu_loop_t lr = *l;
            lr.vec = lr.vec && c->simd; /* DEFAULT: every element a tail */
            fill_rsqrt(out, xs, &lr, lanes);
            return;
        }
        if (e == -1.0) {
            fill_reciprocal(out, xs);
            return;
        }
    }
    /* bf16 and f16 take the exponent in their own dtype (Scalar::to<T>). */
    double ex = dt == BP_F32 || dt == BP_F64 ? e : bp_cpu_round(dt, e);
    bool special = dt != BP_F16 && (ex == 2.0 || ex == 3.0 || ex == -2.0);
    for (size_t i = 0; i < out->numel; i++) {
        bool vec = bp_cpu_in_vector(l, i, lanes);
        double r;
        if (dt == BP_F64) {
            double v = xs[i];
            if (special)
                r = ex == 2.0 ? v * v : ex == 3.0 ? v * v * v : 1.0 / (v * v);
            else
                r = vec ? bp_cpu_vpow(c, v, ex) : pow(v, ex);
        } else if (special) {
            /* Each product and the division round to the dtype: for bf16
             * both the Vectorized<BFloat16> operators and c10's scalar
             * BFloat16 operators do; -2's fp32 tail divides in double,
             * which rounds the same (53 >= 2*24 + 2). */
            float v = (float)xs[i];
            float sq = (float)bp_cpu_round(dt, v * v);
            if (ex == 2.0)
                r = sq;
            else if (ex == 3.0)
                r = (float)bp_cpu_round(dt, sq * v);
            else if (dt == BP_F32 && !vec)
                r = (float)(1.0 / (double)sq);
            else
                r = 1.0f / sq;
        } else if (vec) {
            r = bp_cpu_vpowf(c, (float)xs[i], (float)ex);
        } else if (dt == BP_F32) {
            r = (float)pow((double)(float)xs[i], ex);
        } else {
            r = powf((float)xs[i], (float)ex);
        }
        bp_cpu_store(out, i, r);
    }
}

static int64_t powi(int64_t b, int64_t e)
{
    if (e < 0)
        return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, ub = (uint64_t)b;
    while (e) {
        if (e & 1)
            r *= ub;
        ub *= ub;
        e >>= 1;
    }
    return (int64_t)r;
}

static bp_status pow_int(bp_buf_t *out, const bp_exec_t *x, bp_error_t *err)
{
    int64_t *xs = NULL, *ys = NULL;
    bp_status s = BP_OK;
    if (x->a)
        s = bp_cpu_expand_i64(x->a, out, &xs, err);
    if (!s && x->b)
        s = bp_cpu_expand_i64(x->b, out, &ys, err);
    if (!s && !x->b && x->op->b.value < 0)
        s = bp_error_set(err, BP_EINPUT,
                         "integers to negative integer "
                         "powers are not allowed");
    for (size_t i = 0; !s && i < out->numel; i++)
        bp_cpu_store_i64(out, i,
                         powi(xs ? xs[i] : (int64_t)x->op->a.value,
                              ys ? ys[i] : (int64_t)x->op->b.value));
    free(xs);
    free(ys);
    return s;
}

bp_status bp_cpu_op_pow(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    const bp_cpu_t *c = be->state;
    bp_buf_t *out = x->out;
    bp_dtype_t dt = out->dtype;
    if (!x->a && !x->b)
        return bp_error_set(err, BP_EINPUT, "pow needs a tensor operand");
    if (!bp_dtype_info(dt)->is_float)
        return pow_int(out, x, err);
    double *xs = NULL, *ys = NULL;
    bp_status s = BP_OK;
    if (x->a)
        s = bp_cpu_expand(x->a, out, dt, &xs, err);
    if (!s && x->b)
        s = bp_cpu_expand(x->b, out, dt, &ys, err);
    if (s)
        goto done;
    bp_cpu_loop_t l = bp_cpu_loop(out, x->a, x->b);
    if (!x->b) {
        pow_ts(c, out, xs, x->op->b.value, &l);
    } else if (!x->a && x->op->a.value == 1.0) {
        for (size_t i = 0; i < out->numel; i++)
            bp_cpu_store(out, i, 1.0);
    } else {
        double base = x->a ? 0.0 : bp_cpu_round(dt, x->op->a.value);
        pow_tt(c, out, xs, base, ys, 0.0, &l);
    }
done:
    free(xs);
    free(ys);
    return s;
}
