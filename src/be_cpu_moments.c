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
 *    delta = x - m1, m1 += delta * c[j] with c[j] = 1/(j+1) rounded,
 *    m2 += delta * (x - m1).  bf16/fp16 registers widen to two float
 *    halves, each with its own pass, both added into the stack's level 0;
 *  - each chunk is merged into level 0 of a stack of depth
 *    CeilLog2(ceil(n / 16)) (1 for up to 2 chunks) with AddMomentsVec
 *    (n' = n0 + n1, c = n1 / n', delta = m1' - m1, m1 += c * delta,
 *    m2 += m2' + delta * delta * c * n0), then carried up while the chunk
 *    count is even (a binary counter), and the levels merged into level 0
 *    at the end;
 *  - the N % W trailing values by scalar Welford (m1 += delta / k, not a
 *    reciprocal), then the V lanes merged into it by AddMoments, each lane
 *    counting n * W / V values; variance = m2 / (N - ddof).
 *
 * Which a * b + c PyTorch's build contracts into an fma is not in the
 * source: GCC decides.  PyTorch 2.11's x86 wheel (GCC 13.3), measured on
 * the H100 machine's AVX-512 host (tests/fidelity/layer_norm_cases.py, and
 * native_layer_norm's mean and rstd of 600 random rows per dtype, lengths
 * 2 to 257, under ATEN_CPU_CAPABILITY avx2, avx512 and default):
 *
 *  - AVX2 and AVX512 alike (the AVX2 build runs for both):
 *    - the chunk's Welford updates are fused: m1 = fma(delta, c[j], m1),
 *      m2 = fma(delta, x - m1, m2);
 *    - AddMomentsVec (chunk merges, carries, the final merges) keeps
 *      m1 += c * delta unfused and gives m2 = fma(delta, delta * (c * n0),
 *      m2 + m2'): the two second moments added first, c * n0 first (no
 *      NaN from an overflowing delta^2 times n0 = 0 in the first merge);
 *    - the tail's scalar Welford m2 update is fused for fp16 only: fp32,
 *      fp64 and bf16 keep m2 + delta * (x - m1) in two roundings (600 of
 *      600 rows each way; the other choice fails 12, 1, 11 and 18 rows of
 *      fp32, fp64, bf16 and fp16);
 *    - the lanes' scalar AddMoments is fused: m1 = fma(c, delta, m1),
 *      m2 += fma(delta^2 c, n0, m2').
 *  - DEFAULT (built without FMA): the same forms with nothing fused, each
 *    multiply-add rounded twice; AddMomentsVec's m2 is still (m2 + m2') +
 *    delta * (delta * (c * n0)), not the source's left-to-right product
 *    (600 of 600 rows of each dtype; an fp32 row with 1e38 gives PyTorch's
 *    finite result, not the inf * 0 of delta * delta * c * 0,
 *    fz20261125-0112).
 *
 * Debian's 1.13 contracts nothing either (its mean and rstd match the
 * DEFAULT order). */
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

/* a * b + c in two roundings, and fused */
static double MAD(const mo_t *m, double a, double b, double c)
{
    return R(m, R(m, a * b) + c);
}

static double FMA(const mo_t *m, double a, double b, double c)
{
    if (!m->contract)
        return MAD(m, a, b, c);
    return m->f32 ? (double)fmaf((float)a, (float)b, (float)c) : fma(a, b, c);
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
        if (vec) {
            a0[l] = MAD(m, c, delta, a0[l]);
            b0[l] = FMA(m, delta, R(m, delta * R(m, c * w)), R(m, b0[l] + b1[l]));
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
