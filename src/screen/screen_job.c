/* The screen's inputs and expected results (screen.h).
 *
 * Inputs are a pure function of (test, round): Philox-4x32-10 with counter
 * (element, lane, test, round) and a fixed key, so every GPU of a fleet
 * gets the same inputs in a given round.  Rounds after the first draw new
 * inputs for the tests whose answers the host knows; the golden sweeps
 * keep theirs (their expected bits are stored for those inputs alone).
 *
 * This file is built with -ffp-contract=off and uses SSE arithmetic, so
 * `x / y`, sqrtf, fmaf and their double forms are IEEE's correctly
 * rounded operations (subnormals included), as CUDA's _rn intrinsics. */
#include "screen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpk.h"
#include "oracle_mpfr.h"
#include "rng.h"

#define KEY0 0x5c4ee11u /* "screen" */
#define KEY1 0xb17b0beu

static uint32_t rbits(int test, int round, unsigned lane, uint64_t i)
{
    const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32) ^ (lane << 24),
                             (uint32_t)test, (uint32_t)round};
    const uint32_t key[2] = {KEY0, KEY1};
    uint32_t out[4];
    bp_philox4x32_10(ctr, key, out);
    return out[0];
}

/* Finite values from raw bits: an all-ones exponent loses its low bit. */
static uint32_t finite32(uint32_t u)
{
    return ((u >> 23) & 0xff) == 0xff ? u & ~(1u << 23) : u;
}

static uint64_t finite64(uint64_t u)
{
    return ((u >> 52) & 0x7ff) == 0x7ff ? u & ~(1ull << 52) : u;
}

static uint16_t finite16(bp_dtype_t dt, uint16_t u)
{
    if (dt == BP_F16)
        return ((u >> 10) & 0x1f) == 0x1f ? (uint16_t)(u & ~(1u << 10)) : u;
    return ((u >> 7) & 0xff) == 0xff ? (uint16_t)(u & ~(1u << 7)) : u;
}

static uint32_t nonzero32(uint32_t u)
{
    return (u & 0x7fffffffu) ? u : u | 0x3f800000u;
}

static uint64_t nonzero64(uint64_t u)
{
    return (u & 0x7fffffffffffffffull) ? u : u | 0x3ff0000000000000ull;
}

/* A positive normal float with a random exponent and mantissa. */
static uint32_t posnormal32(uint32_t u, uint32_t v)
{
    return (u & 0x7fffffu) | ((1u + v % 254u) << 23);
}

static size_t esize(bp_dtype_t dt)
{
    return bp_dtype_info(dt)->size;
}

/* ---- elementwise ------------------------------------------------------ */

static void uniform_sweep(int t, float *x, size_t n, float lo, float hi, unsigned lane)
{
    for (size_t i = 0; i < n; i++)
        x[i] = bp_rng_uniform(KEY0, ((uint64_t)t << 8) | lane, i, lo, hi);
}

static void elem_inputs(const bp_screen_test_t *T, int t, int round, bp_screen_job_t *j)
{
    size_t n = j->n;
    /* The golden sweeps' inputs must not move when the table does. */
    if (T->by == BP_SCR_BY_GOLDEN)
        t = 100 + T->code;
    switch (T->code) {
    case BPK_SCR_DIV32:
    case BPK_SCR_SQRT32:
    case BPK_SCR_RCP32:
    case BPK_SCR_FMA32:
        for (unsigned l = 0; l < (unsigned)T->nin; l++) {
            uint32_t *x = j->in[l];
            for (size_t i = 0; i < n; i++) {
                uint32_t u = finite32(rbits(t, round, l, i));
                if (T->code == BPK_SCR_SQRT32)
                    u &= 0x7fffffffu;
                if (T->code == BPK_SCR_RCP32 || (T->code == BPK_SCR_DIV32 && l == 1))
                    u = nonzero32(u);
                x[i] = u;
            }
        }
        break;
    case BPK_SCR_DIV64:
    case BPK_SCR_SQRT64:
    case BPK_SCR_FMA64:
        for (unsigned l = 0; l < (unsigned)T->nin; l++) {
            uint64_t *x = j->in[l];
            for (size_t i = 0; i < n; i++) {
                uint64_t u = finite64((uint64_t)rbits(t, round, 2 * l, i) << 32 |
                                      rbits(t, round, 2 * l + 1, i));
                if (T->code == BPK_SCR_SQRT64)
                    u &= 0x7fffffffffffffffull;
                if (T->code == BPK_SCR_DIV64 && l == 1)
                    u = nonzero64(u);
                x[i] = u;
            }
        }
        break;
    case BPK_SCR_FMA16:
    case BPK_SCR_FMABF16:
        for (unsigned l = 0; l < 3; l++) {
            uint16_t *x = j->in[l];
            for (size_t i = 0; i < n; i++)
                x[i] = finite16(T->dt, (uint16_t)rbits(t, round, l, i));
        }
        break;
    case BPK_SCR_POW32: {
        float *x = j->in[0], *y = j->in[1];
        uniform_sweep(t, x, n, 0.01f, 100.0f, 0);
        uniform_sweep(t, y, n, -8.0f, 8.0f, 1);
        /* The published fleet case: pow(1.1, 53) = 156.24 read as 0 on
         * one faulty core. */
        x[0] = 1.1f;
        y[0] = 53.0f;
        break;
    }
    case BPK_SCR_EXP32: uniform_sweep(t, j->in[0], n, -87.0f, 88.0f, 0); break;
    case BPK_SCR_SIN32:
    case BPK_SCR_COS32: uniform_sweep(t, j->in[0], n, -1000.0f, 1000.0f, 0); break;
    case BPK_SCR_TANH32: uniform_sweep(t, j->in[0], n, -12.0f, 12.0f, 0); break;
    case BPK_SCR_EX2A: uniform_sweep(t, j->in[0], n, -126.0f, 127.0f, 0); break;
    case BPK_SCR_SINA: uniform_sweep(t, j->in[0], n, -100.0f, 100.0f, 0); break;
    case BPK_SCR_LOG32: {
        uint32_t *x = j->in[0];
        for (size_t i = 0; i < n; i++)
            x[i] = nonzero32(finite32(rbits(t, 0, 0, i)) & 0x7fffffffu);
        break;
    }
    default: { /* LG2A, RSQA */
        uint32_t *x = j->in[0];
        for (size_t i = 0; i < n; i++)
            x[i] = posnormal32(rbits(t, 0, 0, i), rbits(t, 0, 1, i));
    }
    }
}

static float f32_at(const void *p, size_t i)
{
    float f;
    memcpy(&f, (const char *)p + 4 * i, 4);
    return f;
}

static double f64_at(const void *p, size_t i)
{
    double d;
    memcpy(&d, (const char *)p + 8 * i, 8);
    return d;
}

uint64_t bp_screen_host_elem(const bp_screen_job_t *j, size_t i)
{
    const bp_screen_test_t *T = &bp_screen_tests[j->test];
    float x = 0, y = 0, z = 0, r;
    double dx, dy, dz;
    if (T->dt == BP_F64) {
        dx = f64_at(j->in[0], i);
        dy = T->nin > 1 ? f64_at(j->in[1], i) : 0;
        dz = T->nin > 2 ? f64_at(j->in[2], i) : 0;
        switch (T->code) {
        case BPK_SCR_DIV64: return bp_f64_bits(dx / dy);
        case BPK_SCR_SQRT64: return bp_f64_bits(sqrt(dx));
        default: return bp_f64_bits(fma(dx, dy, dz));
        }
    }
    if (T->dt != BP_F32) /* fp16/bf16: MPFR's bits */
        return j->expect ? bp_dtype_load_bits(T->dt, j->expect, i) : 0;
    x = f32_at(j->in[0], i);
    if (T->nin > 1)
        y = f32_at(j->in[1], i);
    if (T->nin > 2)
        z = f32_at(j->in[2], i);
    switch (T->code) {
    case BPK_SCR_DIV32: r = x / y; break;
    case BPK_SCR_SQRT32: r = sqrtf(x); break;
    case BPK_SCR_RCP32: r = 1.0f / x; break;
    case BPK_SCR_FMA32: r = fmaf(x, y, z); break;
    case BPK_SCR_POW32: r = powf(x, y); break;
    case BPK_SCR_EXP32: r = expf(x); break;
    case BPK_SCR_LOG32: r = logf(x); break;
    case BPK_SCR_SIN32:
    case BPK_SCR_SINA: r = sinf(x); break;
    case BPK_SCR_COS32: r = cosf(x); break;
    case BPK_SCR_TANH32: r = tanhf(x); break;
    case BPK_SCR_EX2A: r = exp2f(x); break;
    case BPK_SCR_LG2A: r = log2f(x); break;
    default: r = 1.0f / sqrtf(x); break;
    }
    return bp_f32_bits(r);
}

/* ---- the oracle ------------------------------------------------------- */

typedef struct {
    const bp_screen_job_t *job;
    void *out;
} oracle_ctx_t;

static bp_status oracle_kernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin,
                               size_t end, bp_error_t *err)
{
    (void)err;
    const oracle_ctx_t *c = vctx;
    const bp_screen_job_t *j = c->job;
    const bp_screen_test_t *T = &bp_screen_tests[j->test];
    for (size_t i = begin; i < end; i++) {
        int inex;
        if (T->dt != BP_F32) { /* fp16/bf16 fma, exactly then rounded once */
            bp_oracle_load(ws->x, T->dt, j->in[0], i);
            bp_oracle_load(ws->y, T->dt, j->in[1], i);
            bp_oracle_load(ws->t, T->dt, j->in[2], i);
            inex = mpfr_fma(ws->r, ws->x, ws->y, ws->t, MPFR_RNDN);
        } else {
            mpfr_set_flt(ws->x, f32_at(j->in[0], i), MPFR_RNDN);
            if (T->nin > 1)
                mpfr_set_flt(ws->y, f32_at(j->in[1], i), MPFR_RNDN);
            switch (T->code) {
            case BPK_SCR_POW32: inex = mpfr_pow(ws->r, ws->x, ws->y, MPFR_RNDN); break;
            case BPK_SCR_EXP32: inex = mpfr_exp(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_LOG32: inex = mpfr_log(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_SIN32:
            case BPK_SCR_SINA: inex = mpfr_sin(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_COS32: inex = mpfr_cos(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_TANH32: inex = mpfr_tanh(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_EX2A: inex = mpfr_exp2(ws->r, ws->x, MPFR_RNDN); break;
            case BPK_SCR_LG2A: inex = mpfr_log2(ws->r, ws->x, MPFR_RNDN); break;
            default: inex = mpfr_rec_sqrt(ws->r, ws->x, MPFR_RNDN); break;
            }
        }
        bp_dtype_store_bits(T->dt, c->out, i, bp_oracle_round(ws, inex));
    }
    return BP_OK;
}

bp_status bp_screen_oracle(const bp_screen_job_t *job, void **out, bp_error_t *err)
{
    const bp_screen_test_t *T = &bp_screen_tests[job->test];
    *out = malloc(job->n * esize(T->dt));
    if (!*out)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    oracle_ctx_t c = {job, *out};
    bp_status st = bp_oracle_map(bp_oracle_threads(0), BP_ORACLE_GRAIN, T->dt, job->n,
                                 oracle_kernel, &c, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* ---- GEMMs ------------------------------------------------------------ */

static void gemm_inputs(const bp_screen_test_t *T, int t, int round, bp_screen_job_t *j,
                        int32_t *ai, int32_t *bi)
{
    int range = T->family == BP_SCR_CUBLAS
                    ? (T->dt == BP_BF16 ? 2 : T->dt == BP_F16 ? 5 : 100)
                    : 16;
    bp_dtype_t in_dt = T->family == BP_SCR_CUBLAS ? T->dt
                       : T->code == BPK_SCR_GEMM_MMA16 ? BP_F16
                       : T->code == BPK_SCR_GEMM_MMABF16 ? BP_BF16 : BP_F32;
    size_t na = (size_t)j->m * j->k, nb = (size_t)j->k * j->nn;
    for (int l = 0; l < 2; l++) {
        int32_t *v = l ? bi : ai;
        size_t cnt = l ? nb : na;
        for (size_t i = 0; i < cnt; i++) {
            v[i] = (int32_t)(rbits(t, round, (unsigned)l, i) % (uint32_t)(2 * range + 1)) - range;
            /* Small integers are exact in every dtype. */
            bp_dtype_store_bits(in_dt, j->in[l], i,
                                bp_dtype_bits_from_double(in_dt, (double)v[i]));
        }
    }
}

static void gemm_expect(const bp_screen_test_t *T, bp_screen_job_t *j, const int32_t *a,
                        const int32_t *b, int32_t *c)
{
    size_t m = (size_t)j->m, n = (size_t)j->nn, k = (size_t)j->k;
    memset(c, 0, m * n * sizeof *c);
    for (size_t i = 0; i < m; i++)
        for (size_t kk = 0; kk < k; kk++) {
            int32_t av = a[i * k + kk];
            const int32_t *br = b + kk * n;
            int32_t *cr = c + i * n;
            for (size_t x = 0; x < n; x++)
                cr[x] += av * br[x];
        }
    for (size_t i = 0; i < m * n; i++)
        bp_dtype_store_bits(T->dt, j->expect, i, bp_dtype_bits_from_double(T->dt, c[i]));
}

/* ---- jobs ------------------------------------------------------------- */

void bp_screen_job_free(bp_screen_job_t *job)
{
    for (int l = 0; l < 3; l++)
        free(job->in[l]);
    free(job->expect);
    memset(job, 0, sizeof *job);
}

bp_status bp_screen_job_make(int t, int round, bp_screen_job_t *j, bp_error_t *err)
{
    const bp_screen_test_t *T = &bp_screen_tests[t];
    memset(j, 0, sizeof *j);
    j->test = t;
    j->round = T->by == BP_SCR_BY_GOLDEN ? 0 : round;
    j->salt = (uint32_t)round;
    bp_status st = BP_OK;
    switch (T->family) {
    case BP_SCR_ELEM: {
        j->n = T->by == BP_SCR_BY_GOLDEN ? BP_SCREEN_SWEEP_N : BP_SCREEN_ELEM_N;
        for (int l = 0; l < T->nin; l++)
            if (!(j->in[l] = malloc(j->n * esize(T->dt))))
                goto nomem;
        elem_inputs(T, t, j->round, j);
        if (T->by == BP_SCR_BY_GOLDEN) {
            uLong crc = crc32(0L, Z_NULL, 0);
            for (int l = 0; l < T->nin; l++)
                crc = crc32(crc, j->in[l], (uInt)(j->n * esize(T->dt)));
            j->inputs_crc = (uint32_t)crc;
        } else if (T->by == BP_SCR_BY_MPFR) {
            st = bp_screen_oracle(j, &j->expect, err);
        } else {
            if (!(j->expect = malloc(j->n * esize(T->dt))))
                goto nomem;
            for (size_t i = 0; i < j->n; i++)
                bp_dtype_store_bits(T->dt, j->expect, i, bp_screen_host_elem(j, i));
        }
        break;
    }
    case BP_SCR_GEMM:
    case BP_SCR_CUBLAS: {
        if (T->family == BP_SCR_CUBLAS) {
            j->m = 2048, j->nn = 1024, j->k = 64;
        } else if (T->code == BPK_SCR_GEMM_FFMA) {
            j->m = 256, j->nn = 256, j->k = 256;
        } else {
            j->m = 128, j->nn = 128, j->k = 256;
        }
        j->n = (size_t)j->m * j->nn;
        size_t na = (size_t)j->m * j->k, nb = (size_t)j->k * j->nn;
        int32_t *ai = malloc(na * 4), *bi = malloc(nb * 4), *ci = malloc(j->n * 4);
        j->in[0] = malloc(na * 4);
        j->in[1] = malloc(nb * 4);
        j->expect = malloc(j->n * esize(T->dt));
        if (ai && bi && ci && j->in[0] && j->in[1] && j->expect) {
            gemm_inputs(T, t, round, j, ai, bi);
            gemm_expect(T, j, ai, bi, ci);
        }
        free(ai);
        free(bi);
        free(ci);
        if (!j->expect || !j->in[0] || !j->in[1] || !ai || !bi || !ci)
            goto nomem;
        break;
    }
    case BP_SCR_MEM:
        j->n = BP_SCREEN_MEM_WORDS;
        break;
    case BP_SCR_SMEM:
        j->n = (size_t)BP_SCREEN_SMEM_ITEMS * BPK_SCR_SMEM_WORDS;
        break;
    }
    if (st)
        bp_screen_job_free(j);
    return st;
nomem:
    bp_screen_job_free(j);
    return bp_error_set(err, BP_ENOMEM, "out of memory for the inputs of %s", T->name);
}

uint32_t bp_screen_pattern(const bp_screen_job_t *j, size_t per_sm, unsigned slice, size_t i)
{
    const bp_screen_test_t *T = &bp_screen_tests[j->test];
    uint32_t salt = j->salt;
    if (T->family == BP_SCR_MEM) {
        uint64_t w = (uint64_t)slice * per_sm + i;
        return ~BPK_SCR_PATTERN(T->code, w, salt);
    }
    /* shared memory: element i of the SM's results is word j of item t,
     * which read word (j + SHIFT) % W of that item's pattern */
    size_t W = BPK_SCR_SMEM_WORDS, t = i / W, jj = i % W;
    uint64_t w = (uint64_t)t * W + (jj + BPK_SCR_SMEM_SHIFT) % W;
    return ~BPK_SCR_PATTERN((int)(t % 3), w, salt);
}
