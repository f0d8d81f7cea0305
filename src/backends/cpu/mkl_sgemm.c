/* MKL's sgemm orders where they were fitted (see mkl_sgemm.h). */
#include "mkl_sgemm.h"

#include <math.h>

#define KC 384 /* MKL's K panel on its AVX-512 path */

/* The K the fits measured for panels: up to one panel, or a remainder
 * mod 384 of 128 or 256 (K = 512, 1024, 4096, 16384); a multiple of 384
 * above it, or another remainder, may be cut otherwise. */
static bool panels_k(int64_t k)
{
    return k >= 1 && k <= 16384 && (k <= KC || k % KC == 128 || k % KC == 256);
}

bp_mkl_order_t bp_mkl_sgemm_order(bp_mkl_isa_t isa, bool transa, bool transb, int64_t m,
                                  int64_t n, int64_t k)
{
    if (isa != BP_MKL_AVX512 || transb || m < 4 || m > 64)
        return BP_MKL_UNFITTED;
    /* 'N','N': one row was measured with K 64 only, where MKL may call
     * its gemv, whose order over a longer K is not known */
    if (!transa)
        return n >= 1 && n <= 64 && panels_k(k) && (n > 1 || k <= 64) ? BP_MKL_PANELS
                                                                       : BP_MKL_UNFITTED;
    if (n >= 16 && n <= 64 && panels_k(k))
        return BP_MKL_PANELS;
    if (n >= 2 && n <= 4 && m <= 16 && k >= 16 && k <= 16384 && k % 16 == 0)
        return BP_MKL_DOT16;
    return BP_MKL_UNFITTED;
}

const char *bp_mkl_order_name(bp_mkl_order_t o)
{
    return o == BP_MKL_PANELS ? "panels" : o == BP_MKL_DOT16 ? "dot16" : "unfitted";
}

size_t bp_mkl_panels(size_t k, size_t *starts, size_t max)
{
    size_t n = 0, full = k / KC, rest = k % KC;
    if (k <= KC || rest == 0) {
        for (size_t s = 0; s < k && n < max; s += KC)
            starts[n++] = s;
        return n;
    }
    /* the last full panel and the rest, in two halves */
    for (size_t i = 0; i + 1 < full && n < max; i++)
        starts[n++] = i * KC;
    size_t s = (full - 1) * KC;
    if (n < max)
        starts[n++] = s;
    if (n < max)
        starts[n++] = s + (k - s) / 2;
    return n;
}

/* Each panel's chain from +0 is added to C: the first stores into C
 * where beta is 0 (c0 NULL: C not read), every later one adds. */
static float dot_panels(size_t k, const float *a, size_t sa, const float *b, size_t sb,
                        const float *c0)
{
    size_t starts[64];
    size_t np = bp_mkl_panels(k, starts, 64);
    float c = c0 ? *c0 : 0.0f;
    for (size_t p = 0; p < np; p++) {
        size_t e = p + 1 < np ? starts[p + 1] : k;
        float acc = 0.0f;
        for (size_t i = starts[p]; i < e; i++)
            acc = fmaf(a[i * sa], b[i * sb], acc);
        c = p || c0 ? c + acc : acc;
    }
    return c;
}

static float dot16(size_t k, const float *a, size_t sa, const float *b, size_t sb)
{
    float l[16] = {0};
    for (size_t i = 0; i < k; i++)
        l[i % 16] = fmaf(a[i * sa], b[i * sb], l[i % 16]);
    float q[4];
    for (int j = 0; j < 4; j++)
        q[j] = ((l[j] + l[4 + j]) + l[8 + j]) + l[12 + j];
    return (q[0] + q[1]) + (q[2] + q[3]);
}

float bp_mkl_sgemm_dot(bp_mkl_order_t o, size_t k, const float *a, size_t sa, const float *b,
                       size_t sb, const float *c0)
{
    if (o == BP_MKL_DOT16)
        return c0 ? *c0 + dot16(k, a, sa, b, sb) : dot16(k, a, sa, b, sb);
    return dot_panels(k, a, sa, b, sb, c0);
}
