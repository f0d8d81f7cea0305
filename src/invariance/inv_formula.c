/* The invariance formulations (inv_formula.h). */
#include "inv_formula.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

void bp_inv_widen(bp_dtype_t dt, const void *in, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)bp_dtype_bits_to_double(dt, bp_dtype_load_bits(dt, in, i));
}

void bp_inv_narrow(bp_dtype_t dt, const float *in, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = dt == BP_F32    ? bp_f32_bits(in[i])
                        : dt == BP_BF16 ? bp_f32_to_bf16(in[i])
                        : dt == BP_F16  ? bp_f32_to_f16(in[i])
                                        : bp_dtype_bits_from_double(dt, in[i]);
        bp_dtype_store_bits(dt, out, i, bits);
    }
}

void bp_inv_part(int64_t len, int s, int i, int64_t *k0, int64_t *k1)
{
    *k0 = (int64_t)((__int128)len * i / s);
    *k1 = (int64_t)((__int128)len * (i + 1) / s);
}

/* Pairwise over v[lo, hi): the halves' sums added, each sum rounded. */
static float tree(const float *v, int lo, int hi, bp_dtype_t dt)
{
    if (hi - lo == 1)
        return v[lo];
    int mid = lo + (hi - lo + 1) / 2;
    return bp_dtype_roundf(dt, tree(v, lo, mid, dt) + tree(v, mid, hi, dt));
}

float bp_inv_combine(const float *v, int s, bp_inv_combine_t c, bp_dtype_t dt)
{
    if (s <= 0)
        return 0.0f;
    if (c == BP_INV_TREE)
        return tree(v, 0, s, dt);
    float acc = v[0];
    for (int i = 1; i < s; i++)
        acc = bp_dtype_roundf(dt, acc + v[i]);
    return acc;
}

float bp_inv_allreduce(const float *v, int t, size_t flat, size_t total,
                       bp_inv_combine_t c, bp_dtype_t dt)
{
    if (c != BP_INV_RING)
        return bp_inv_combine(v, t, c == BP_INV_TREE ? BP_INV_TREE : BP_INV_SEQ, dt);
    size_t chunk = total ? (size_t)((unsigned __int128)flat * (unsigned)t / total) : 0;
    int first = (int)((chunk + 1) % (size_t)t);
    float acc = v[first];
    for (int i = 1; i < t; i++)
        acc = bp_dtype_roundf(dt, acc + v[(first + i) % t]);
    return acc;
}

void bp_inv_allreduce_rows(const float *part, int t, size_t nn, size_t flat0,
                           size_t total, bp_inv_combine_t c, bp_dtype_t dt, void *out)
{
    float v[256], y;
    for (size_t i = 0; i < nn; i++) {
        for (int r = 0; r < t && r < 256; r++)
            v[r] = part[(size_t)r * nn + i];
        y = bp_inv_allreduce(v, t, flat0 + i, total, c, dt);
        bp_inv_narrow(dt, &y, 1, (char *)out + i * bp_dtype_info(dt)->size);
    }
}

void bp_inv_matmul_split(const float *a, const float *b, int64_t k, int64_t n, int s,
                         bp_inv_combine_t c, bp_dtype_t part_dt, bp_dtype_t dt,
                         float *out)
{
    float part[256];
    for (int64_t j = 0; j < n; j++) {
        for (int i = 0; i < s; i++) {
            int64_t k0, k1;
            bp_inv_part(k, s, i, &k0, &k1);
            float acc = 0.0f;
            for (int64_t q = k0; q < k1; q++)
                acc = fmaf(a[q], b[q * n + j], acc);
            part[i] = bp_dtype_roundf(part_dt, acc);
        }
        out[j] = bp_dtype_roundf(dt, bp_inv_combine(part, s, c, part_dt));
    }
}

/* The split sum of f(x) over [0, h): each part left to right from +0, the
 * parts combined in fp32. */
static float split_sum(const float *x, int64_t h, int s, bp_inv_combine_t c,
                       bool squares)
{
    float part[256];
    for (int i = 0; i < s; i++) {
        int64_t k0, k1;
        bp_inv_part(h, s, i, &k0, &k1);
        float acc = 0.0f;
        for (int64_t q = k0; q < k1; q++)
            acc += squares ? x[q] * x[q] : x[q];
        part[i] = acc;
    }
    return bp_inv_combine(part, s, c, BP_F32);
}

/* Split softmax denominator: part i's own max m_i and l_i = sum exp(x -
 * m_i); combined with the weights exp(m_i - max). */
static float split_denominator(const float *x, int64_t h, int s, bp_inv_combine_t c,
                               float mx)
{
    float part[256];
    for (int i = 0; i < s; i++) {
        int64_t k0, k1;
        bp_inv_part(h, s, i, &k0, &k1);
        float m = -INFINITY, acc = 0.0f;
        for (int64_t q = k0; q < k1; q++)
            m = fmaxf(m, x[q]);
        for (int64_t q = k0; q < k1; q++)
            acc += Sleef_expf_u10(x[q] - m);
        part[i] = k1 > k0 ? acc * Sleef_expf_u10(m - mx) : 0.0f;
    }
    return bp_inv_combine(part, s, c, BP_F32);
}

void bp_inv_row(bp_op_kind_t op, const float *x, const float *w, int64_t h, int s,
                bp_inv_combine_t c, bp_dtype_t dt, float *out)
{
    switch (op) {
    case BP_OP_SUM:
        out[0] = bp_dtype_roundf(dt, split_sum(x, h, s, c, false));
        return;
    case BP_OP_MEAN:
        out[0] = bp_dtype_roundf(dt, split_sum(x, h, s, c, false) * (1.0f / (float)h));
        return;
    case BP_OP_RMS_NORM: {
        float ss = split_sum(x, h, s, c, true);
        float r = 1.0f / sqrtf(ss / (float)h + BP_INV_RMS_EPS);
        for (int64_t q = 0; q < h; q++)
            out[q] = bp_dtype_roundf(dt, w[q] * bp_dtype_roundf(dt, x[q] * r));
        return;
    }
    case BP_OP_SOFTMAX:
    case BP_OP_LOG_SOFTMAX: {
        float mx = -INFINITY;
        for (int64_t q = 0; q < h; q++)
            mx = fmaxf(mx, x[q]);
        float l = split_denominator(x, h, s, c, mx);
        if (op == BP_OP_SOFTMAX) {
            for (int64_t q = 0; q < h; q++)
                out[q] = bp_dtype_roundf(dt, Sleef_expf_u10(x[q] - mx) / l);
        } else {
            float ll = Sleef_logf_u10(l);
            for (int64_t q = 0; q < h; q++)
                out[q] = (x[q] - mx) - ll;
        }
        return;
    }
    default:
        return;
    }
}

void bp_inv_attention_head(const float *q, const float *k, const float *v,
                           int64_t stride, int64_t len, int64_t d, int s,
                           bp_dtype_t dt, float *out)
{
    float scale = 1.0f / sqrtf((float)d);
    float *sc = malloc((size_t)(len ? len : 1) * sizeof *sc);
    float *oc = calloc((size_t)d * (size_t)s, sizeof *oc);
    float mc[256], lc[256];
    if (!sc || !oc) {
        free(sc);
        free(oc);
        for (int64_t i = 0; i < d; i++)
            out[i] = NAN;
        return;
    }
    for (int64_t j = 0; j < len; j++) {
        float acc = 0.0f;
        for (int64_t i = 0; i < d; i++)
            acc = fmaf(q[i], k[j * stride + i], acc);
        sc[j] = acc * scale;
    }
    float mx = -INFINITY;
    for (int c = 0; c < s; c++) {
        int64_t j0, j1;
        bp_inv_part(len, s, c, &j0, &j1);
        float m = -INFINITY, l = 0.0f;
        for (int64_t j = j0; j < j1; j++)
            m = fmaxf(m, sc[j]);
        float *o = oc + (size_t)c * (size_t)d;
        for (int64_t j = j0; j < j1; j++) {
            float p = Sleef_expf_u10(sc[j] - m);
            l += p;
            for (int64_t i = 0; i < d; i++)
                o[i] = fmaf(p, v[j * stride + i], o[i]);
        }
        mc[c] = m;
        lc[c] = l;
        mx = fmaxf(mx, m);
    }
    float l = 0.0f;
    for (int64_t i = 0; i < d; i++)
        out[i] = 0.0f;
    for (int c = 0; c < s; c++) {
        if (lc[c] == 0.0f && mc[c] == -INFINITY)
            continue; /* an empty chunk */
        float wc = Sleef_expf_u10(mc[c] - mx);
        l = fmaf(lc[c], wc, l);
        for (int64_t i = 0; i < d; i++)
            out[i] = fmaf(oc[(size_t)c * (size_t)d + (size_t)i], wc, out[i]);
    }
    for (int64_t i = 0; i < d; i++)
        out[i] = bp_dtype_roundf(dt, out[i] / l);
    free(sc);
    free(oc);
}
