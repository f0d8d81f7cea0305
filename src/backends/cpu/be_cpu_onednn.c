/* oneDNN's eltwise_gelu_erf, one lane at a time, as its JIT kernel
 * computes it (oneDNN v3.5 to v3.12, the versions PyTorch 2.5 to 2.12
 * bundle; v3.10.2 in PyTorch 2.11: src/cpu/x64/injectors/
 * jit_uni_eltwise_injector.cpp, gelu_erf_compute_vector_fwd and the
 * constants of register_table_entries).  PyTorch's CPU gelu(x) with
 * approximate='none' runs it for a contiguous tensor of more than one
 * element in fp32, bf16 where ideep's bf16 check passes and fp16 where its
 * fp16 check does (Activation.cpp use_mkldnn, PyTorch 2.7 and later for
 * fp16): bf16/fp16 are widened to float, computed as fp32 and rounded to
 * nearest even on the store.  The JIT kernel masks its tail, so every
 * element takes the same arithmetic (jit_uni_eltwise.cpp).
 *
 * AVX-512 levels: gelu_erf_minimax_approx_compute_vector_fwd, a degree-5
 * polynomial in |x| (not x/sqrt 2) picked from 25 by the bits of |x|,
 * p = P_i(|x|) by fmas, gelu = (x * (1 + sign(x) p)) * 0.5.
 * Below AVX-512: Abramowitz and Stegun's 7.1.26 with oneDNN's own exp
 * (exp_compute_vector_fwd: 2^(n-1) * p(r) * 2), gelu = S + S * erf with
 * S = x/2; on AVX2 every multiply-add an fma, on SSE4.1 (and AVX, no fma:
 * jit_generator.hpp uni_vfmadd213ps) a product and a sum.  oneDNN v2.x
 * (PyTorch 1.13's, Debian's libdnnl 2.6.3) has only this form, on every
 * ISA.  This file needs -ffp-contract=off (Makefile.am's AM_CFLAGS). */
#include "be_cpu.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t u_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* a * b + c: one rounding with an fma, two without (uni_vfmadd213ps). */
static float madd(bool fma, float a, float b, float c)
{
    return fma ? fmaf(a, b, c) : a * b + c;
}

/* The minimax coefficients by degree (0..5), 25 polynomials each
 * (gelu_erf_minimax_polynomial; the table's padding omitted). */
static const uint32_t minimax[6][25] = {
    {0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229,
     0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b,
     0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced,
     0x3f470d99, 0x3f7abb28, 0x3f800000, 0x00000000},
    {0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f,
     0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07,
     0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e,
     0x3e6c8684, 0x3c98f936, 0x00000000, 0x3f800000},
    {0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb,
     0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660,
     0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8,
     0xbdc4f8a8, 0xbbde6422, 0x00000000, 0x00000000},
    {0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0,
     0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f,
     0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91,
     0x3ca46568, 0x3aa1e00a, 0x00000000, 0x00000000},
    {0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527,
     0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910,
     0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab,
     0xbb097a32, 0xb8ebf380, 0x00000000, 0x00000000},
    {0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623,
     0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366,
     0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792,
     0x38b84375, 0x3689bb5a, 0x00000000, 0x00000000},
};

static float gelu_minimax(float x)
{
    uint32_t ux = u_of(x), ua = ux & 0x7fffffffu;
    float a = f_of(ua);
    /* index: (|x|'s bits + 0xc21fffff) >> 21, arithmetic, clamped to
     * 1..24 (vpmaxsd, vpminsd); 23 (p = 1) beyond rbound, which a NaN is
     * not (_cmp_lt_os is false), so a NaN takes 24 (p = |x|) */
    int32_t idx = (int32_t)(ua + 0xc21fffffu) >> 21;
    idx = idx < 1 ? 1 : idx > 24 ? 24 : idx;
    if (f_of(0x40b15cee) < a)
        idx = 23;
    float p = f_of(minimax[5][idx]);
    for (int d = 4; d >= 0; d--)
        p = fmaf(p, a, f_of(minimax[d][idx]));
    p = f_of(u_of(p) ^ (ux & 0x80000000u));
    p = p + 1.0f;
    return (x * p) * 0.5f;
}

/* exp_compute_vector_fwd. */
static float onednn_exp(float s, bool fma)
{
    const float ln_min = f_of(0xc2aeac50), ln_max = f_of(0x42b17218);
    bool tiny = s < ln_min;
    s = s < ln_max ? s : ln_max; /* minps/maxps: a NaN takes the bound */
    s = s > ln_min ? s : ln_min;
    float fx = s * f_of(0x3fb8aa3b); /* log2(e) */
    fx = fx + 0.5f;
    float n = floorf(fx);
    float r = fma ? fmaf(-n, f_of(0x3f317218), s) : s - n * f_of(0x3f317218);
    int32_t k = (int32_t)(n - 1.0f) + 127; /* an integer already: cvtps2dq */
    float two_n1 = tiny ? 0.0f : f_of((uint32_t)k << 23);
    static const uint32_t pol[5] = {0x3f7ffffb, 0x3efffee3, 0x3e2aad40, 0x3d2b9d0d,
                                    0x3c07cfce};
    float p = f_of(pol[4]);
    for (int i = 3; i >= 0; i--)
        p = madd(fma, p, r, f_of(pol[i]));
    p = madd(fma, p, r, 1.0f);
    return (p * two_n1) * 2.0f;
}

static float gelu_as(float x, bool fma)
{
    static const uint32_t pol[5] = {0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3,
                                    0x3f87dc22};
    float xs = x * f_of(0x3f3504f3); /* 1/sqrt(2) */
    float t = madd(fma, f_of(0x3ea7ba05), fabsf(xs), 1.0f);
    t = 1.0f / t;
    float q = -onednn_exp(-(xs * xs), fma);
    q = q * t;
    float r = f_of(pol[4]);
    for (int i = 3; i >= 0; i--)
        r = madd(fma, r, t, f_of(pol[i]));
    q = madd(fma, q, r, 1.0f);
    q = f_of(u_of(q) ^ (u_of(x) & 0x80000000u));
    float h = x * 0.5f;
    return madd(fma, q, h, h);
}

bool bp_cpu_onednn_gelu(bp_onednn_isa_t isa, bp_dtype_t dt, size_t numel)
{
    if (numel <= 1)
        return false;
    switch (dt) {
    case BP_F32: return isa >= BP_ONEDNN_SSE41;
    case BP_BF16: return isa >= BP_ONEDNN_AVX2_VNNI_2;
    case BP_F16: return isa == BP_ONEDNN_AVX2_VNNI_2 || isa >= BP_ONEDNN_AVX512_CORE_FP16;
    default: return false;
    }
}

float bp_cpu_onednn_gelu_erf(bp_onednn_isa_t isa, float x)
{
    if (isa >= BP_ONEDNN_AVX512_CORE)
        return gelu_minimax(x);
    return gelu_as(x, isa >= BP_ONEDNN_AVX2);
}

float bp_cpu_onednn_bf16_out(bp_onednn_isa_t isa, float r)
{
    /* VCVTNEPS2BF16 (AVX512_BF16, and AVX-NE-CONVERT beside AVX2-VNNI-2)
     * treats a denormal input as zero whatever MXCSR says: an fp32 result
     * below FLT_MIN becomes a zero of its sign.  Where the level runs
     * without the instruction, oneDNN's bf16 emulation rounds it. */
    bool native = isa == BP_ONEDNN_AVX2_VNNI_2 || isa >= BP_ONEDNN_AVX512_CORE_BF16;
    return native && fabsf(r) < FLT_MIN ? copysignf(0.0f, r) : r;
}
