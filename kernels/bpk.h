/* The CUDA kernels' launchers, in plain C: the only interface between
 * kernels/ and the C files that launch them (the CUDA backend's
 * be_cuda*.c for the op table; outside it the stack's and invariance's
 * input generation, the stack's rank check and the screen's kernels; the
 * studies' other ops go through the op table).  Every launcher is
 * asynchronous on the stream it is given (a cudaStream_t passed as void
 * *), launches nothing for n <= 0, and returns the cudaError_t of its
 * launch as an int (0: ok).  Arguments are validated by the caller; a
 * launcher handed a dtype or op code it does not know returns
 * cudaErrorInvalidValue rather than guess.
 *
 * Numerics follow PyTorch's CUDA kernels (see each .cu file): values are
 * loaded, converted to the op's compute type (float for f32/bf16/f16
 * results, double for f64, int64 for integer results), computed, and
 * rounded once to the result dtype with __float2bfloat16_rn /
 * __float2half_rn.  Scalars arrive already converted the way PyTorch
 * converts them on the host (be_cuda_ops.c decides), so that a kernel only
 * ever widens a scalar exactly. */
#ifndef BPK_H
#define BPK_H

#include <stddef.h>
#include <stdint.h>

#include "../src/ops/op_kind.h"
#include "../src/core/redcfg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: the same codes as bp_dtype_t's (be_cuda_ops.c checks):
 * the arithmetic dtypes, then bool and the two fp8 formats, which the
 * kernels load, store and convert (cast, copies, comparisons, where) but
 * compute nothing in; the storage dtypes between them have no kernels. */
enum { BPK_F64, BPK_F32, BPK_BF16, BPK_F16, BPK_I64, BPK_I32, BPK_NDTYPES };
enum { BPK_BOOL = 12, BPK_F8E4M3 = 13, BPK_F8E5M2 = 14 };

#define BPK_MAXDIM 8

/* Broadcasting for two-operand ops: the output shape and, per operand, the
 * stride in elements of each output dimension (0 where it broadcasts).
 * ndim == 0 means every tensor operand is contiguous with the output's
 * shape, so element i of the output reads element i of each operand.
 * narrow: every index and size below 2^32, so that the offsets can be
 * found in 32-bit arithmetic (the same offsets, faster). */
typedef struct {
    int ndim;
    int narrow;
    int64_t shape[BPK_MAXDIM];
    int64_t stride_a[BPK_MAXDIM];
    int64_t stride_b[BPK_MAXDIM];
} bpk_bcast_t;

/* An operand: a device tensor of dtype, or, when ptr is NULL, a scalar
 * whose value is already exact in the compute type. */
typedef struct {
    const void *ptr;
    int dtype;
    double value;
} bpk_arg_t;

/* nvcc version the kernels were built with, as major*1000 + minor*10. */
int bpk_nvcc_version(void);

/* arange.cu: out[i] = start + step*i in the accumulate type (float for
 * f32/bf16/f16, double for f64, int64 for integers), then converted. */
int bpk_arange(void *stream, void *out, int dt, int64_t n, double start,
               double step);

/* binary.cu */
enum {
    BPK_ADD,
    BPK_SUB,
    BPK_MUL,
    BPK_DIV,     /* x / y, correctly rounded in the compute type */
    BPK_DIV_RCP, /* x * (1 / y), the reciprocal rounded in the compute type */
    BPK_MAXIMUM, /* NaN if either is NaN, else ::max (fmaxf) */
    BPK_MINIMUM, /* NaN if either is NaN, else ::min (fminf) */
    BPK_NBINARY
};
int bpk_binary(void *stream, int op, void *out, int out_dt, bpk_arg_t a,
               bpk_arg_t b, const bpk_bcast_t *bc, int64_t n);
/* op_list.h's BP_FN2 functions (op: their bp_op_kind_t) of two float
 * tensors, broadcast; any other op or an integer out_dt gives
 * cudaErrorInvalidValue. */
int bpk_binary_fn(void *stream, int op, void *out, int out_dt, bpk_arg_t a,
                  bpk_arg_t b, const bpk_bcast_t *bc, int64_t n);

/* pow.cu: a ** b with a the base.  BPK_POW_GENERIC is pow_(base, exp)
 * (powf); the others are PyTorch's special cases of a scalar exponent,
 * each rounding where PyTorch's scalar_t arithmetic rounds. */
enum {
    BPK_POW_GENERIC,
    BPK_POW_SQUARE,     /* base * base */
    BPK_POW_CUBE,       /* base * base * base */
    BPK_POW_INV_SQUARE, /* 1.0 / (base * base), the division in double */
    BPK_NPOW
};
int bpk_pow(void *stream, int mode, void *out, int out_dt, bpk_arg_t a,
            bpk_arg_t b, const bpk_bcast_t *bc, int64_t n);

/* unary.cu: op is the bp_op_kind_t of an elementwise function of one
 * operand (BP_OP_EXP, ...: the codes of src/ops/op_kind.h); an op with no
 * kernel here gives cudaErrorInvalidValue. */
int bpk_unary(void *stream, int op, void *out, int out_dt, const void *a,
              int a_dt, int64_t n);

/* elem.cu: the activations (sigmoid, silu, gelu), special functions (erf,
 * exp2, log2, log1p, expm1), abs, sign, rounding and clamp; op is the
 * bp_op_kind_t.  Parameters, already converted as PyTorch converts them
 * on the host: form (gelu: 1 for tanh), decimals with scale = 10^|decimals|
 * in the result dtype and neg for decimals < 0 (round), lo/hi with
 * has_lo/has_hi in the result dtype (clamp). */
typedef struct {
    int form;
    int decimals, neg;
    double scale;
    int has_lo, has_hi;
    double lo, hi;
} bpk_elem_par_t;
int bpk_elem(void *stream, int op, void *out, int out_dt, const void *a, int a_dt,
             int64_t n, const bpk_elem_par_t *par);
/* elem.cu: torch.linspace for steps >= 2 of a float dtype; start, end and
 * step already in the dtype (step = (end - start) / (steps - 1) there). */
int bpk_linspace(void *stream, void *out, int dt, int64_t steps, double start, double end,
                 double step);

/* layout.cu: data movement, exact (conversions as PyTorch's copy_). */
int bpk_cast(void *stream, void *out, int out_dt, const void *a, int a_dt,
             int64_t n);
/* out[i] = value (already exact in out_dt's compute type). */
int bpk_fill(void *stream, void *out, int out_dt, double value, int64_t n);
/* Copies in, viewed as [outer, in_len, inner], into out, viewed as
 * [outer, out_len, inner], at offset along the middle axis. */
int bpk_concat_part(void *stream, void *out, int out_dt, int64_t out_len,
                    int64_t offset, const void *in, int in_dt, int64_t in_len,
                    int64_t outer, int64_t inner);
/* out[o, j, i] = in[o, start + j*step, i] for in [outer, in_len, inner]. */
int bpk_slice(void *stream, void *out, const void *in, int dt, int64_t outer,
              int64_t in_len, int64_t out_len, int64_t start, int64_t step,
              int64_t inner);
/* out[i] = in[src[i / run] + i % run], converted as bpk_cast does; src is
 * a device array of n / run offsets into in, one per run of run
 * consecutive elements (the layout ops' map, src/ops/layout.c). */
int bpk_gather(void *stream, void *out, int out_dt, const void *in, int in_dt,
               const int64_t *src, int64_t n, int64_t run);
/* A strided view of in (ndim dimensions of sizes shape, element strides
 * strides, from element offset) copied into contiguous out, elements of
 * dtype dt unchanged: what Tensor.contiguous() and expand's copy do. */
typedef struct {
    int ndim;
    int64_t shape[BPK_MAXDIM];
    int64_t strides[BPK_MAXDIM];
    int64_t offset;
} bpk_view_t;
int bpk_strided_copy(void *stream, void *out, const void *in, int dt, const bpk_view_t *v,
                     int64_t n);
/* Each row of d elements: cat(-x[d/2:], x[:d/2]). */
int bpk_rotate_half(void *stream, void *out, const void *in, int dt,
                    int64_t rows, int64_t d);

/* reduce.cu: in viewed as [outer, len, inner] summed over len into
 * out [outer, inner], one thread per output element, accumulating in the
 * compute type and rounding once.  pairwise: 0 sequential (left to right
 * from 0), 1 pairwise (sum(x[:n/2]) + sum(x[n/2:]), recursively). */
int bpk_sum(void *stream, int pairwise, void *out, int out_dt, const void *in,
            int in_dt, int64_t outer, int64_t len, int64_t inner);

/* treereduce.cu: sum, mean, prod, var in the order of ATen's Reduce.cuh,
 * with the geometry cfg (src/core/redcfg.h: bp_redcfg_make with the op's vt0:
 * 4, var 2; input_vec_size 8 for sum and mean of bf16/fp16 inputs, else
 * vt0).  in_dt is the kernel's scalar_t: fp64, fp32, bf16, fp16 (float
 * accumulators for the last three) or i64/i32 (sum and prod, in int64,
 * wrapping; amin and amax too, exact).  param: mean's
 * factor, var's correction.  staging (cfg->staging_elems accumulators of
 * the op) and semaphores (cfg->grid_x ints, zeroed) where cfg->input_mult[2]. */
enum { BPK_TREE_SUM, BPK_TREE_MEAN, BPK_TREE_PROD, BPK_TREE_VAR, BPK_TREE_AMIN, BPK_TREE_AMAX };
int bpk_tree_reduce(void *stream, int op, void *out, int out_dt, const void *in, int in_dt,
                    const bp_redcfg_t *cfg, double param, void *staging, int *semaphores);
/* The accumulator's size in bytes of op for inputs of in_dt (ReduceConfig's
 * element_size_bytes); 0 for a pair the kernel does not take. */
int bpk_tree_acc_bytes(int op, int in_dt);
/* logsumexp.cu: logsumexp's steps around its sum, for rows [outer, len,
 * inner] of in (any dtype, taken to dt) : m[outer x inner] = amax (NaN if
 * any, 0 where infinite), e (in's shape, dt) = exp(x - m); then, after the
 * sum of e into out: out = log(out) + m, each step rounded to dt. */
int bpk_lse_exp(void *stream, void *e, void *m, const void *in, int in_dt, int dt,
                int64_t outer, int64_t len, int64_t inner);
int bpk_lse_finish(void *stream, void *out, const void *m, int dt, int64_t rows);

/* scan.cu: cumsum of rows [outer, len, inner] along len, in dt itself
 * (std::plus<scalar_t>: every sum rounded to dt), in and out of dt.
 * innermost (the axis is the tensor's last, inner == 1): ATen's
 * scan_innermost_dim (blocks of 2^log_x x 512/2^log_x threads, Sklansky
 * scan of 2^(log_x+1) values at a time, the running total added to the
 * first; log_x from bp_scan_log_threads_x); otherwise one thread per row,
 * left to right (scan_outer_dim). */
int bpk_scan(void *stream, void *out, const void *in, int dt, int64_t outer, int64_t len,
             int64_t inner, int innermost, unsigned log_x);

/* scan.cu: cumsum of all n values of a floating-point dt as cub's
 * DeviceScan::InclusiveScan tiles them for PyTorch (exact up to 3 tiles,
 * then the look-back as a chain); scratch holds bpk_scan_whole_scratch(dt,
 * n) bytes (none for a single tile: NULL allowed). */
size_t bpk_scan_whole_scratch(int dt, int64_t n);
int bpk_scan_whole(void *stream, void *out, const void *in, int dt, int64_t n, void *scratch);

/* compare.cu: out[i] (bool) = a OP b with both operands converted to
 * cmp_dt, the comparison's common dtype, as TensorIterator does; scalars
 * arrive converted to cmp_dt.  OP: BPK_LT ... BPK_NE. */
enum { BPK_LT, BPK_LE, BPK_GT, BPK_GE, BPK_EQ, BPK_NE, BPK_NCMP };
int bpk_compare(void *stream, int op, void *out, int cmp_dt, bpk_arg_t a,
                bpk_arg_t b, const bpk_bcast_t *bc, int64_t n);
/* compare.cu: out[i] = cond ? a : b (torch.where), each tensor operand
 * converted to out_dt as bpk_cast does; a scalar already exact in out_dt.
 * bc gives a's and b's strides, bcc (its stride_a) cond's. */
/* compare.cu: torch.clamp(a, min=lo, max=hi), every operand a tensor,
 * computed in out_dt; bc broadcasts a and lo, bch hi (its stride_a). */
int bpk_clamp(void *stream, void *out, int out_dt, bpk_arg_t a, bpk_arg_t lo, bpk_arg_t hi,
              const bpk_bcast_t *bc, const bpk_bcast_t *bch, int64_t n);
int bpk_where(void *stream, void *out, int out_dt, const void *cond, bpk_arg_t a,
              bpk_arg_t b, const bpk_bcast_t *bc, const bpk_bcast_t *bcc, int64_t n);

/* rng.cu: out[i] = low + (high - low) * u(seed, stream, i), each operation
 * rounded in float (see rng.h), then converted to dt. */
int bpk_uniform(void *stream, void *out, int dt, int64_t n, uint64_t seed,
                uint64_t rng_stream, float low, float high);
/* rng.cu: out[i] = the same value for element first + i, i < n (a slice
 * of a tensor from its own counters; float dtypes only). */
int bpk_uniform_range(void *stream, void *out, int dt, int64_t n,
                      uint64_t first, uint64_t seed, uint64_t rng_stream,
                      float low, float high);
/* rng.cu: out[i] = bp_rng_normal(seed, stream, i, mean, std) (src/core/rng.h,
 * the arithmetic of src/core/rng_normal.h) rounded once to dt, a float dtype
 * but fp8. */
int bpk_normal(void *stream, void *out, int dt, int64_t n, uint64_t seed,
               uint64_t rng_stream, double mean, double std);
/* One Philox-4x32-10 block computed on the device, synchronously, for
 * known-answer tests.  Returns a cudaError_t as an int. */
int bpk_philox_block(const uint32_t ctr[4], const uint32_t key[2],
                     uint32_t out[4]);

/* bits.cu: *count (device memory) = the number of elements i < n whose
 * esize (2, 4 or 8) bytes differ between a and b. */
int bpk_count_diff(void *stream, const void *a, const void *b, int64_t n, int esize,
                   unsigned long long *count);

/* screen.cu: the known-answer screen's kernels, each pinned to SMs.  A
 * block reads %smid and takes work items only from that SM's queue
 * (atomicAdd on next[smid]) while want[smid] is set, so every result in
 * out[smid][...] was computed on SM smid.  A launch starts as many blocks
 * as can be resident on the whole device at once, so each SM normally
 * gets blocks in the first launch; the host relaunches for the SMs whose
 * queue is not exhausted (next[smid] < items).  inject_sm >= 0 flips bit 0
 * of element 0 of that SM's results, inside the kernel (a test hook). */
#define BPK_SCR_MAXSM 1024
typedef struct {
    const unsigned *want; /* [nsmid] */
    unsigned *next;       /* [nsmid] items claimed; zeroed by the host */
    unsigned nsmid;
    unsigned items;       /* work items per SM */
    int inject_sm;        /* -1: none */
} bpk_pin_t;

/* Every SM that runs one of a device-filling grid of blocks adds one to
 * seen[smid] (BPK_SCR_MAXSM entries); *nsmid receives %nsmid. */
int bpk_screen_smids(void *stream, unsigned *seen, unsigned *nsmid);

/* Elementwise tests: out[smid * n + i] = f(x[i], y[i], z[i]) for i < n,
 * items of BPK_SCR_CHUNK elements. */
#define BPK_SCR_CHUNK 1024
enum {
    BPK_SCR_DIV32,   /* __fdiv_rn(x, y) */
    BPK_SCR_SQRT32,  /* __fsqrt_rn(x) */
    BPK_SCR_RCP32,   /* __frcp_rn(x) */
    BPK_SCR_FMA32,   /* __fmaf_rn(x, y, z) */
    BPK_SCR_DIV64,   /* __ddiv_rn */
    BPK_SCR_SQRT64,  /* __dsqrt_rn */
    BPK_SCR_FMA64,   /* __fma_rn */
    BPK_SCR_FMA16,   /* __hfma on half */
    BPK_SCR_FMABF16, /* __hfma on bfloat16 */
    BPK_SCR_POW32,   /* powf(x, y): CUDA's math library, nvcc defaults */
    BPK_SCR_EXP32,   /* expf */
    BPK_SCR_LOG32,   /* logf */
    BPK_SCR_SIN32,   /* sinf */
    BPK_SCR_COS32,   /* cosf */
    BPK_SCR_TANH32,  /* tanhf */
    BPK_SCR_EX2A,    /* ex2.approx.f32: the special function unit */
    BPK_SCR_LG2A,    /* lg2.approx.f32 */
    BPK_SCR_SINA,    /* sin.approx.f32 */
    BPK_SCR_RSQA,    /* rsqrt.approx.f32 */
    BPK_SCR_NELEM
};
int bpk_screen_elem(void *stream, int op, bpk_pin_t pin, void *out,
                    const void *x, const void *y, const void *z, int64_t n);

/* GEMM tests: out[smid][m][n] (fp32) = a[m][k] @ b[k][n], row-major.
 * BPK_SCR_GEMM_FFMA: fp32 inputs, one fmaf chain per element (k in
 * order), items of 32x32 outputs (m, n multiples of 32).
 * BPK_SCR_GEMM_MMA16 / _MMABF16: fp16 / bf16 inputs on the tensor cores
 * (wmma 16x16x16, fp32 accumulate), items of 32x64 outputs (m a multiple
 * of 32, n of 64, k of 16). */
enum { BPK_SCR_GEMM_FFMA, BPK_SCR_GEMM_MMA16, BPK_SCR_GEMM_MMABF16 };
int bpk_screen_gemm(void *stream, int kind, bpk_pin_t pin, float *out,
                    const void *a, const void *b, int m, int n, int k);

/* Memory patterns on 32-bit word w: */
enum { BPK_SCR_ONES, BPK_SCR_ZEROS, BPK_SCR_ADDR };
#define BPK_SCR_PATTERN(p, w, salt)                                           \
    ((p) == BPK_SCR_ONES    ? (1u << (((uint32_t)(w) + (salt)) & 31u))        \
     : (p) == BPK_SCR_ZEROS ? ~(1u << (((uint32_t)(w) + (salt)) & 31u))       \
                            : ((uint32_t)(w) * 4u) ^ ((salt) * 0x9E3779B9u))
/* Global memory: region [nsmid][per_sm] words.  Pass 0 writes
 * PATTERN(p, smid * per_sm + i, salt) into SM smid's slice; pass 1 reads
 * each word back and stores its complement in place (the host checks
 * ~PATTERN).  Items of BPK_SCR_CHUNK words. */
int bpk_screen_mem(void *stream, int pass, bpk_pin_t pin, uint32_t *region,
                   int64_t per_sm, int pattern, uint32_t salt);
/* Shared memory: item t fills BPK_SCR_SMEM_WORDS words of shared memory
 * with PATTERN(t % 3, t * W + j, salt), then thread j reads word
 * (j + BPK_SCR_SMEM_SHIFT) % W, written by another warp, and stores its
 * complement at out[smid][t * W + j]. */
#define BPK_SCR_SMEM_WORDS 8192
#define BPK_SCR_SMEM_SHIFT 97
int bpk_screen_smem(void *stream, bpk_pin_t pin, uint32_t *out, uint32_t salt);

/* Flips bit `bit` of byte `byte` of p (the injection into results of a
 * kernel that cannot be pinned: cuBLAS). */
int bpk_screen_flip(void *stream, void *p, int64_t byte, int bit);

/* rows.cu: the op table's reductions along an axis and row-wise fused
 * ops, one thread per row (rows.cu says each order).  Rows are outer x
 * inner, len values `inner` apart. */
enum {
    BPK_RED_MEAN = 1, /* param: the factor 1/n, pairwise: the sum's order */
    BPK_RED_AMAX,
    BPK_RED_AMIN
};
int bpk_softmax(void *stream, void *out, const void *in, int dt, int64_t outer,
                int64_t len, int64_t inner, int log);
/* bpk_softmax where PyTorch does not take the persistent kernel (rows of
 * > 2048 values or > 8 KiB, inner > 1): SoftMax.cu's block kernels
 * (softmax_rows.cu). */
int bpk_softmax_blocks(void *stream, void *out, const void *in, int dt, int64_t outer,
                       int64_t len, int64_t inner, int log);
/* softmax's and log_softmax's fixed formulation, in and out of dtype dt
 * (in may be out: in place) (softmax_rows.cu). */
int bpk_softmax_fixed(void *stream, void *out, const void *in, int dt, int64_t outer,
                      int64_t len, int64_t inner, int log);
int bpk_reduce(void *stream, int op, void *out, int out_dt, const void *in, int in_dt,
               int64_t outer, int64_t len, int64_t inner, double param, int pairwise);
/* layer_norm (w, b optional) or rms_norm (rms: w required, no b) over rows
 * of cols values, as PyTorch's CUDA layer_norm_kernel.cu (layer_norm.cu). */
int bpk_layer_norm(void *stream, void *out, const void *x, const void *w, const void *b,
                   int dt, int64_t rows, int64_t cols, double eps, int rms);
/* rms_norm's fixed formulation over rows of cols values (layer_norm.cu). */
int bpk_rms_norm_fixed(void *stream, void *out, const void *x, const void *w, int dt,
                       int64_t rows, int64_t cols, double eps);
/* sdpa's pieces: out (fp32; fp64 for fp64) = x * s; the causal mask of
 * [B, L, S] scores (wide: fp64); rows of p that are -inf throughout in
 * scores set to 0. */
int bpk_scale_widen(void *stream, void *out, const void *x, int dt, int64_t n, double s);
int bpk_sdpa_mask(void *stream, void *scores, int wide, int64_t B, int64_t L, int64_t S);
int bpk_sdpa_safe(void *stream, void *p, const void *scores, int wide, int64_t rows,
                  int64_t S);

#ifdef __cplusplus
}
#endif

#endif
