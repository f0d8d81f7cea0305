/* Internals shared by the CPU backend's files (be_cpu.c, be_cpu_math.c,
 * be_cpu_arith.c); nothing outside the backend includes this.
 *
 * The backend mirrors PyTorch's CPU ATen kernels bit for bit, including
 * where a kernel computes some elements one way and the rest another.
 * ATen's cpu_kernel_vec runs each inner loop of n elements as
 * vectorized_loop does (aten/src/ATen/native/cpu/Loops.h): two vector
 * registers per step while at least 2*V elements remain, then the last
 * n % (2*V) elements through the scalar lambda.  Where the two lambdas
 * differ (pow's tail calls libm, bf16 rsqrt's tail rounds twice, arange's
 * lanes are built from a per-register base) the lane model below decides
 * which formula an element gets.
 *
 * V is the number of lanes of one ATen vector register for the element
 * type: 32 bytes on AVX2 (and ATen's DEFAULT build), 64 on AVX-512.  With
 * the AVX512 capability (cpu_isa.h) ATen runs the AVX-512 build only of
 * the kernels registered with ALSO_REGISTER_AVX512_DISPATCH (pow, exp,
 * log, tanh, erf, log2, log1p, expm1, reciprocal, sigmoid, silu, gelu);
 * REGISTER_DISPATCH leaves the AVX-512 slot empty
 * and DispatchStub falls back to the AVX2 build, which is what arange,
 * sin, cos, sqrt, rsqrt, sum and the binary ops get (their .cpp files,
 * PyTorch 2.x).  vec_bytes is the former's width; BP_CPU_VEC_BYTES the
 * latter's. */
#ifndef BP_BE_CPU_H
#define BP_BE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "mkl_isa.h"
#include "mkl_sgemm.h"
#include "onednn_isa.h"

/* ATen's vector register width (bytes) for the AVX2 capability. */
#define BP_CPU_VEC_BYTES 32
/* ATen's at::internal::GRAIN_SIZE: ranges up to this size are one chunk. */
#define BP_CPU_GRAIN 32768
/* Threads ATen is modelled with (torch.set_num_threads(1)).  With T > 1
 * threads, parallel_for cuts ranges above BP_CPU_GRAIN into chunks whose
 * boundaries move the scalar tails, so PyTorch's own results depend on T. */
#define BP_CPU_THREADS 1

typedef struct {
    bp_cpu_math_t math;
    bp_cpu_isa_t isa;       /* ATen's CPU capability modelled (cpu_isa.h) */
    const char *isa_source; /* where it came from: --cpu-isa, ... */
    const char *isa_ignored; /* an ATEN_CPU_CAPABILITY ATen would ignore */
    bool simd;     /* AVX2 or AVX-512: SLEEF's vector entry points run */
    int vec_bytes; /* register width for kernels with an AVX-512 build:
                      64 on AVX512, BP_CPU_VEC_BYTES otherwise */
    bp_onednn_isa_t onednn;    /* oneDNN's ISA modelled (onednn_isa.h) */
    const char *onednn_source; /* where it came from */
    bp_mkl_isa_t mkl;          /* MKL's code path modelled (mkl_isa.h) */
    const char *mkl_source;    /* where it came from */
} bp_cpu_t;

/* The MKL order of the sgemm PyTorch calls for GEMM op (matmul, linear
 * or addmm) computing out from a (x, mat1), b (mat2, or linear's weight
 * [n, k]) and in (linear's bias, addmm's input where beta is not 0; NULL:
 * none), the operands held as layout (bp_probe_gemm_layout), on c's MKL
 * path: BP_MKL_UNFITTED where that is not an fp32 call with alpha 1 and
 * beta 0 or 1 in a fitted class (mkl_sgemm.h). */
bp_mkl_order_t bp_cpu_mkl_order(const bp_cpu_t *c, const bp_op_t *op, bp_gemm_layout_t layout,
                                const bp_buf_t *a, const bp_buf_t *b, const bp_buf_t *in,
                                const bp_buf_t *out);
/* The tensor addmm_impl_cpu_ copies into the result before sgemm (beta
 * 1), or NULL (beta 0: C not read): linear's bias, addmm's input. */
const bp_buf_t *bp_cpu_gemm_input(const bp_op_t *op, const bp_buf_t *const *inputs,
                                  int ninputs);
/* x's GEMM in MKL's order o (fp32): out = a @ b (b read as [n, k]
 * transposed for linear), a's leading dimensions folded, C holding the
 * bias or input (expanded to out) first where there is one. */
bp_status bp_cpu_mkl_gemm(bp_mkl_order_t o, const bp_exec_t *x, const bp_buf_t *a,
                          const bp_buf_t *b, bp_error_t *err);

/* A walk over out's elements in order, giving each one's offset into src
 * broadcast over out: pos, then bp_cpu_walk_next. */
typedef struct {
    const bp_buf_t *out;
    int64_t st[BP_MAXDIM], idx[BP_MAXDIM], pos;
} bp_cpu_walk_t;

bp_status bp_cpu_walk_init(bp_cpu_walk_t *w, const bp_buf_t *src, const bp_buf_t *out,
                           bp_error_t *err);

static inline void bp_cpu_walk_next(bp_cpu_walk_t *w)
{
    for (int d = w->out->ndim - 1; d >= 0; d--) {
        w->idx[d]++;
        w->pos += w->st[d];
        if (w->idx[d] < w->out->shape[d])
            return;
        w->pos -= w->st[d] * w->idx[d];
        w->idx[d] = 0;
    }
}

/* Lanes of one ATen register of dt for a register of `bytes` bytes. */
size_t bp_cpu_lanes(bp_dtype_t dt, int bytes);

/* How TensorIterator lays an elementwise op over the output: `row` is the
 * length of one inner loop after dimensions are coalesced, `vec` whether
 * vectorized_loop runs at all (inputs contiguous, or one of them a
 * broadcast scalar, along the inner dimension). */
typedef struct {
    size_t row;
    bool vec;
} bp_cpu_loop_t;

/* True when element i takes the vector formulation with V lanes. */
static inline bool bp_cpu_in_vector(const bp_cpu_loop_t *l, size_t i,
                                    size_t lanes)
{
    if (!l->vec || l->row == 0)
        return false;
    size_t j = i % l->row;
    return j < l->row - l->row % (2 * lanes);
}

/* Inner-loop layout of an op writing `out` from inputs a and b (either may
 * be NULL: a scalar argument); bp_cpu_loop_n for up to BP_CPU_LOOP_MAXIN
 * inputs (clamp's three). */
#define BP_CPU_LOOP_MAXIN 3
bp_cpu_loop_t bp_cpu_loop(const bp_buf_t *out, const bp_buf_t *a,
                          const bp_buf_t *b);
bp_cpu_loop_t bp_cpu_loop_n(const bp_buf_t *out, const bp_buf_t *const *ins, int count);

/* The operand as doubles, broadcast to out's shape, each element first
 * converted to dtype `as` the way ATen's TensorIterator casts inputs to the
 * common dtype (int -> float rounds once, to bf16/f16 through float).
 * Integers above 2^53 lose bits: integer ops use bp_cpu_expand_i64, whose
 * float operands convert to out's integer dtype as a cast does. */
bp_status bp_cpu_expand(const bp_buf_t *src, const bp_buf_t *out,
                        bp_dtype_t as, double **vals, bp_error_t *err);
bp_status bp_cpu_expand_i64(const bp_buf_t *src, const bp_buf_t *out,
                            int64_t **vals, bp_error_t *err);

/* v rounded to dt as a double (floats: nearest even, bf16/f16 through f32
 * as c10 converts; integers: truncation toward zero, x86's 0x80..0 for NaN
 * and out of range). */
double bp_cpu_round(bp_dtype_t dt, double v);
/* Stores v, already a value of out's compute type, rounded to out->dtype. */
void bp_cpu_store(bp_buf_t *out, size_t i, double v);
void bp_cpu_store_i64(bp_buf_t *out, size_t i, int64_t v);
/* a * b + c in float when f32, else double: one rounding when fused (an
 * fma, as ATen's AVX2 build contracts it), two when not (its DEFAULT
 * build has no fma). */
double bp_cpu_madd(bool fused, bool f32, double a, double b, double c);
/* out's element type computes in float unless it is f64 (ATen's opmath). */
bool bp_cpu_opmath_f32(bp_dtype_t dt);

/* Elementwise math through the configured library (SLEEF AVX2 u10 / u35 or
 * libm), float and double arrays; every element takes the vector entry
 * point, as ATen's vml-based kernels do (vec::map pads the last register
 * with zeros). */
void bp_cpu_map_f32(const bp_cpu_t *c, bp_op_kind_t k, float *x, size_t n);
void bp_cpu_map_f64(const bp_cpu_t *c, bp_op_kind_t k, double *x, size_t n);
/* One value through op k's vector entry point (a lane of Vectorized<T>::
 * exp() and the like inside a kernel); wide: the kernel has an AVX-512
 * build, so on AVX512 the 16-lane entry point. */
float bp_cpu_lanef(const bp_cpu_t *c, bp_op_kind_t k, bool wide, float x);
double bp_cpu_lane(const bp_cpu_t *c, bp_op_kind_t k, bool wide, double x);
/* be_cpu_onednn.c: whether PyTorch hands gelu(approximate='none') of a
 * contiguous tensor of numel elements of dt to oneDNN at that ISA
 * (Activation.cpp use_mkldnn with ideep's dtype checks), and oneDNN's
 * eltwise_gelu_erf of one float there. */
bool bp_cpu_onednn_gelu(bp_onednn_isa_t isa, bp_dtype_t dt, size_t numel);
float bp_cpu_onednn_gelu_erf(bp_onednn_isa_t isa, float x);
/* an fp32 result of a oneDNN bf16 primitive as its store to bf16 sees it:
 * a denormal becomes a zero of its sign where the conversion is native. */
float bp_cpu_onednn_bf16_out(bp_onednn_isa_t isa, float r);
/* One value through op k's scalar entry point (SLEEF's scalar build, or
 * libm in libm mode): the `fixed` formulation's exp and log, one function
 * for every element whatever the ISA. */
float bp_cpu_scalarf(const bp_cpu_t *c, bp_op_kind_t k, float x);
double bp_cpu_scalar(const bp_cpu_t *c, bp_op_kind_t k, double x);
/* Vectorized<float>::erf(): ATen's own polynomial (be_cpu_math.c). */
float bp_cpu_erf_poly(float x);
/* Whether op k is one of those functions (be_cpu_math.c's table). */
bool bp_cpu_has_map(bp_op_kind_t k);
/* Vector-lane pow: SLEEF powf_u10 / pow_u10 (libm in libm mode). */
float bp_cpu_vpowf(const bp_cpu_t *c, float x, float y);
double bp_cpu_vpow(const bp_cpu_t *c, double x, double y);
/* Names for the fingerprint. */
const char *bp_cpu_simd_name(const bp_cpu_t *c);

/* Op entries, one per file group. */
bp_status bp_cpu_op_tensor(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_uniform(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_cast(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_neg(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_concat(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_slice(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_rotate_half(bp_backend_t *, const bp_exec_t *,
                                bp_error_t *);
bp_status bp_cpu_op_gather(bp_backend_t *, const bp_exec_t *, bp_error_t *);

bp_status bp_cpu_op_unary(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_fn2(bp_backend_t *, const bp_exec_t *, bp_error_t *);
/* be_cpu_act.c */
bp_status bp_cpu_op_act(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_exact1(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_minmax(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_clamp_tensor(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_full(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_linspace(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_pow(bp_backend_t *, const bp_exec_t *, bp_error_t *);

bp_status bp_cpu_op_binary(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_outer(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_arange(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_matmul(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_sum(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_compare(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cpu_op_where(bp_backend_t *, const bp_exec_t *, bp_error_t *);

/* arange over [0, n) as ATen's arange_kernel with `threads` threads,
 * fused as its AVX2 and AVX-512 builds or not as its DEFAULT build
 * (exposed for tests of the chunking). */
bp_status bp_cpu_arange_fill(bp_buf_t *out, double start, double step,
                             int threads, bool fused, bp_error_t *err);

#endif
