/* The one CPU GEMM (see cpu_gemm.h). */
#include "cpu_gemm.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>

static void sgemm_scalar(size_t M, size_t N, size_t K, const float *a,
                         size_t lda, const float *b, size_t ldb, float *c,
                         size_t ldc)
{
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            float acc = 0.0f;
            for (size_t k = 0; k < K; k++)
                acc = fmaf(a[m * lda + k], b[k * ldb + n], acc);
            c[m * ldc + n] = acc;
        }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
/* Blocks of 4 rows x 16 columns in eight registers, then the leftover
 * columns and rows; every output is its own fma chain over k ascending. */
static void sgemm_avx2(size_t M, size_t N, size_t K, const float *a,
                       size_t lda, const float *b, size_t ldb, float *c,
                       size_t ldc)
{
    size_t m = 0;
    for (; m + 4 <= M; m += 4) {
        const float *a0 = a + m * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                    *a3 = a2 + lda;
        size_t n = 0;
        for (; n + 16 <= N; n += 16) {
            __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00,
                   c20 = c00, c21 = c00, c30 = c00, c31 = c00;
            const float *bp = b + n;
            for (size_t k = 0; k < K; k++, bp += ldb) {
                __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
                __m256 x = _mm256_broadcast_ss(a0 + k);
                c00 = _mm256_fmadd_ps(x, b0, c00);
                c01 = _mm256_fmadd_ps(x, b1, c01);
                x = _mm256_broadcast_ss(a1 + k);
                c10 = _mm256_fmadd_ps(x, b0, c10);
                c11 = _mm256_fmadd_ps(x, b1, c11);
                x = _mm256_broadcast_ss(a2 + k);
                c20 = _mm256_fmadd_ps(x, b0, c20);
                c21 = _mm256_fmadd_ps(x, b1, c21);
                x = _mm256_broadcast_ss(a3 + k);
                c30 = _mm256_fmadd_ps(x, b0, c30);
                c31 = _mm256_fmadd_ps(x, b1, c31);
            }
            float *cp = c + m * ldc + n;
            _mm256_storeu_ps(cp, c00);
            _mm256_storeu_ps(cp + 8, c01);
            _mm256_storeu_ps(cp + ldc, c10);
            _mm256_storeu_ps(cp + ldc + 8, c11);
            _mm256_storeu_ps(cp + 2 * ldc, c20);
            _mm256_storeu_ps(cp + 2 * ldc + 8, c21);
            _mm256_storeu_ps(cp + 3 * ldc, c30);
            _mm256_storeu_ps(cp + 3 * ldc + 8, c31);
        }
        for (; n < N; n++)
            for (size_t r = 0; r < 4; r++) {
                float acc = 0.0f;
                for (size_t k = 0; k < K; k++)
                    acc = fmaf(a[(m + r) * lda + k], b[k * ldb + n], acc);
                c[(m + r) * ldc + n] = acc;
            }
    }
    for (; m < M; m++) {
        size_t n = 0;
        for (; n + 8 <= N; n += 8) {
            __m256 acc = _mm256_setzero_ps();
            for (size_t k = 0; k < K; k++)
                acc = _mm256_fmadd_ps(_mm256_broadcast_ss(a + m * lda + k),
                                      _mm256_loadu_ps(b + k * ldb + n), acc);
            _mm256_storeu_ps(c + m * ldc + n, acc);
        }
        for (; n < N; n++) {
            float acc = 0.0f;
            for (size_t k = 0; k < K; k++)
                acc = fmaf(a[m * lda + k], b[k * ldb + n], acc);
            c[m * ldc + n] = acc;
        }
    }
}
#pragma GCC pop_options

void bp_cpu_gemm_f32(size_t M, size_t N, size_t K, const float *a, size_t lda,
                   const float *b, size_t ldb, float *c, size_t ldc)
{
    static int simd = -1;
    if (simd < 0) {
        __builtin_cpu_init();
        simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    if (simd)
        sgemm_avx2(M, N, K, a, lda, b, ldb, c, ldc);
    else
        sgemm_scalar(M, N, K, a, lda, b, ldb, c, ldc);
}

void bp_cpu_gemm_f64(size_t M, size_t N, size_t K, const double *a, size_t lda,
                     const double *b, size_t ldb, double *c, size_t ldc)
{
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            double acc = 0.0;
            for (size_t k = 0; k < K; k++)
                acc = fma(a[m * lda + k], b[k * ldb + n], acc);
            c[m * ldc + n] = acc;
        }
}

bp_status bp_cpu_gemm_vals(size_t M, size_t N, size_t K, const double *a, const double *b,
                           bool b_t, bool f32, double *c, bp_error_t *err)
{
    size_t na = M * K, nb = K * N, nc = M * N;
    if (!f32 && !b_t) {
        bp_cpu_gemm_f64(M, N, K, a, K, b, N, c, N);
        return BP_OK;
    }
    size_t esz = f32 ? sizeof(float) : sizeof(double);
    void *av = f32 ? malloc((na ? na : 1) * esz) : NULL, *bv = malloc((nb ? nb : 1) * esz),
         *cv = f32 ? malloc((nc ? nc : 1) * esz) : NULL;
    if ((f32 && (!av || !cv)) || !bv) {
        free(av);
        free(bv);
        free(cv);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    /* b as [K, N]: a [N, K] operand transposed */
    for (size_t k = 0; k < K; k++)
        for (size_t n = 0; n < N; n++) {
            double v = b_t ? b[n * K + k] : b[k * N + n];
            if (f32)
                ((float *)bv)[k * N + n] = (float)v;
            else
                ((double *)bv)[k * N + n] = v;
        }
    if (f32) {
        float *af = av, *cf = cv;
        for (size_t i = 0; i < na; i++)
            af[i] = (float)a[i];
        bp_cpu_gemm_f32(M, N, K, af, K, bv, N, cf, N);
        for (size_t i = 0; i < nc; i++)
            c[i] = cf[i];
    } else {
        bp_cpu_gemm_f64(M, N, K, a, K, bv, N, c, N);
    }
    free(av);
    free(bv);
    free(cv);
    return BP_OK;
}
