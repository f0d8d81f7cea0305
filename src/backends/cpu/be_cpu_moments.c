/* ATen's row moments on the CPU (native/cpu/moments_utils.h RowwiseMoments,
 * RowwiseMomentsImpl, UpdateMomentsVec, AddMomentsVec, AddMoments), which
 * layer_norm's CPU kernel takes for each row's mean and biased variance.
 *
 * A row of N values of dtype T is read as n = N / W whole registers of W
 * values (Vectorized<T>: W = 8 floats, 4 doubles, 16 bf16/fp16; the AVX2
 * build, as layer_norm_kernel.cpp registers with REGISTER_DISPATCH only)
 * and V-lane accumulators in opmath (V = 8 floats, 4 doubles):
 *
 *  - chunks of up to 16 registers: per lane a Welford pass from 0,
 *    delta = x - m1, m1 = fmadd(delta, c[j], m1) with c[j] = 1/(j+1)
 *    rounded, m2 = fmadd(delta, x - m1, m2).  bf16/fp16 registers widen to
 *    two float halves, each with its own pass, both added into the stack's
 *    level 0;
 *  - each chunk is merged into level 0 of a stack of depth
 *    CeilLog2(ceil(n / 16)) (1 for up to 2 chunks) with AddMomentsVec
 *    (n' = n0 + n1, c = n1 / n', delta = m1' - m1, cd = c * delta,
 *    m1 = m1 + cd, m2 = fmadd(delta * n0, cd, m2 + m2')), then carried up
 *    while the chunk count is even (a binary counter), and the levels
 *    merged into level 0 at the end;
 *  - the N % W trailing values by scalar Welford (m1 += delta / k, not a
 *    reciprocal, m2 += delta * (x - m1)), then the V lanes merged into it
 *    by the scalar AddMoments (m1 += c * delta, m2 += m2' + delta * delta
 *    * c * n0), each lane counting n * W / V values; variance = m2 /
 *    (N - ddof).
 *
 * That is PyTorch 2.x's moments_utils.h: its vector code spells out
 * fmadd (an fma in the AVX2 build, a multiply and an add in the DEFAULT
 * one); in its scalar code GCC decides which a * b + c to contract.
 * PyTorch 2.11's x86 wheel (GCC 13.3), measured on the H100 machine's
 * AVX-512 host (native_layer_norm's mean and rstd of 600 random rows per
 * dtype, lengths 2 to 257, under ATEN_CPU_CAPABILITY avx2, avx512 and
 * default; tests/refs/layer_norm_cases.py):
 *
 *  - AVX2 and AVX512 alike (the AVX2 build runs for both): the tail's m2
 *    update is fused for fp16 only: fp32, fp64 and bf16 keep it in two
 *    roundings (600 of 600 rows each way; the other choice fails 12, 1, 11
 *    and 18 rows of fp32, fp64, bf16 and fp16); the lanes' AddMoments is
 *    fused: m1 = fma(c, delta, m1), m2 += fma(delta^2 c, n0, m2').
 *  - DEFAULT (built without FMA): nothing fused (600 of 600 rows of each
 *    dtype).  fmadd's operands keep an overflowing delta from giving NaN
 *    in a first merge (delta * n0 with n0 = 0 is 0; fz20261125-0112), and
 *    its rounding differs from delta * delta * c * n0 on long rows
 *    (fz20261125-0139, 10007 values).
 *
 * Debian's 1.13 (an older moments_utils.h: m2 += m2' + delta * delta *
 * c * n0) contracts nothing; layer_norm of 1.13 is a version difference
 * (fuzz_check.py). */
#include "be_cpu_rows.h"

#include <math.h>
#include <string.h>

#define CHUNK 16
#define MAXV 8
#define MAXDEPTH 64

typedef struct {
    bool f32;
    bool contract; /* the AVX2 build's fused multiply-adds (else none) */
} mo_t;

static double R(const mo_t *m, double v)
{
    return m->f32 ? (double)(float)v : v;
}

/* a * b + c in two roundings; and fused where the build contracts */
static double MAD(const mo_t *m, double a, double b, double c)
{
    return bp_cpu_madd(false, m->f32, a, b, c);
}

static double FMA(const mo_t *m, double a, double b, double c)
{
    return bp_cpu_madd(m->contract, m->f32, a, b, c);
}

/* AddMomentsVec (vec: `lanes` lanes) or the scalar AddMoments: (n1, a1,
 * b1) merged into (*n0, a0, b0), contracted as the top says. */
static void add_moments(const mo_t *m, bool vec, int lanes, int64_t n1, const double *a1,
                        const double *b1, int64_t *n0, double *a0, double *b0)
{
    int64_t n = *n0 + n1;
    double c = n == 0 ? 0.0 : R(m, R(m, (double)n1) / R(m, (double)n));
    double w = R(m, (double)*n0);
    for (int l = 0; l < lanes; l++) {
        double delta = R(m, a1[l] - a0[l]);
        if (vec) { /* m2 = fmadd(delta * n0, c * delta, m2 + m2') */
            double cd = R(m, c * delta);
            a0[l] = R(m, a0[l] + cd);
            b0[l] = FMA(m, R(m, delta * w), cd, R(m, b0[l] + b1[l]));
        } else {
            a0[l] = FMA(m, c, delta, a0[l]);
            b0[l] = R(m, b0[l] + FMA(m, R(m, R(m, delta * delta) * c), w, b1[l]));
        }
    }
    *n0 = n;
}

/* ATen's utils::CeilLog2: 1 up to 2, else ceil(log2(x)). */
static int64_t ceil_log2(int64_t x)
{
    if (x <= 2)
        return 1;
    int64_t p = 0;
    while (((int64_t)1 << p) < x)
        p++;
    return p;
}

void bp_cpu_row_moments(const double *x, int64_t N, bp_dtype_t dt, bool contract,
                        double *mean, double *var)
{
    const mo_t mo = {dt != BP_F64, contract}, *m = &mo;
    const bool lp = dt == BP_BF16 || dt == BP_F16;
    const int V = m->f32 ? 8 : 4, W = lp ? 2 * V : V, halves = lp ? 2 : 1;
    const int64_t n = N / W, chunks = (n + CHUNK - 1) / CHUNK;
    int64_t depth = ceil_log2(chunks);
    if (depth > MAXDEPTH)
        depth = MAXDEPTH; /* beyond 2^64 values: never reached */
    int64_t c0[MAXDEPTH] = {0};
    double c1[MAXDEPTH][MAXV], c2[MAXDEPTH][MAXV], recip[CHUNK];
    memset(c1, 0, sizeof c1);
    memset(c2, 0, sizeof c2);
    for (int j = 0; j < CHUNK; j++)
        recip[j] = R(m, 1.0 / (double)(j + 1));
    for (int64_t i = 0; i < chunks; i++) {
        const double *p = x + i * CHUNK * W;
        int64_t cnt = n - i * CHUNK < CHUNK ? n - i * CHUNK : CHUNK;
        for (int h = 0; h < halves; h++) {
            double a[MAXV] = {0}, b[MAXV] = {0};
            for (int64_t j = 0; j < cnt; j++)
                for (int l = 0; l < V; l++) {
                    double v = p[j * W + h * V + l], delta = R(m, v - a[l]);
                    a[l] = FMA(m, delta, recip[j], a[l]);
                    b[l] = FMA(m, delta, R(m, v - a[l]), b[l]);
                }
            add_moments(m, true, V, cnt, a, b, &c0[0], c1[0], c2[0]);
        }
        int64_t mask = i + 1;
        for (int64_t j = 1; j < depth && (mask & 1) == 0; j++) {
            add_moments(m, true, V, c0[j - 1], c1[j - 1], c2[j - 1], &c0[j], c1[j], c2[j]);
            c0[j - 1] = 0;
            memset(c1[j - 1], 0, sizeof c1[j - 1]);
            memset(c2[j - 1], 0, sizeof c2[j - 1]);
            mask >>= 1;
        }
    }
    for (int64_t j = 1; j < depth; j++)
        add_moments(m, true, V, c0[j], c1[j], c2[j], &c0[0], c1[0], c2[0]);
    int64_t k = 0;
    double a = 0, b = 0;
    for (int64_t i = n * W; i < N; i++) {
        double delta = R(m, x[i] - a);
        k++;
        a = R(m, a + R(m, delta / R(m, (double)k)));
        b = dt == BP_F16 ? FMA(m, delta, R(m, x[i] - a), b) : MAD(m, delta, R(m, x[i] - a), b);
    }
    for (int l = 0; l < V; l++)
        add_moments(m, false, 1, n * W / V, &c1[0][l], &c2[0][l], &k, &a, &b);
    *mean = a;
    *var = R(m, b / R(m, (double)N));
}
