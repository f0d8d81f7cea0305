/* The CUDA kernels' launchers, in plain C: the only interface between
 * be_cuda.c and kernels/.  Every launcher is asynchronous on the stream it
 * is given (a cudaStream_t passed as void *), launches nothing for n <= 0,
 * and returns the cudaError_t of its launch as an int (0: ok).  Arguments
 * are validated by the caller (be_cuda.c); a launcher handed a dtype or op
 * code it does not know returns cudaErrorInvalidValue rather than guess.
 *
 * Numerics follow PyTorch's CUDA kernels (see each .cu file): values are
 * loaded, converted to the op's compute type (float for f32/bf16/f16
 * results, double for f64, int64 for integer results), computed, and
 * rounded once to the result dtype with __float2bfloat16_rn /
 * __float2half_rn.  Scalars arrive already converted the way PyTorch
 * converts them on the host (be_cuda.c decides), so that a kernel only
 * ever widens a scalar exactly. */
#ifndef BPK_H
#define BPK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: the same codes as bp_dtype_t's arithmetic dtypes
 * (be_cuda_ops.c checks; the storage dtypes after them have no kernels). */
enum { BPK_F64, BPK_F32, BPK_BF16, BPK_F16, BPK_I64, BPK_I32, BPK_NDTYPES };

#define BPK_MAXDIM 8

/* Broadcasting for two-operand ops: the output shape and, per operand, the
 * stride in elements of each output dimension (0 where it broadcasts).
 * ndim == 0 means every tensor operand is contiguous with the output's
 * shape, so element i of the output reads element i of each operand. */
typedef struct {
    int ndim;
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
    BPK_NBINARY
};
int bpk_binary(void *stream, int op, void *out, int out_dt, bpk_arg_t a,
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

/* unary.cu */
enum {
    BPK_RECIPROCAL,
    BPK_EXP,
    BPK_LOG,
    BPK_SIN,
    BPK_COS,
    BPK_TANH,
    BPK_SQRT,
    BPK_RSQRT,
    BPK_NEG,
    BPK_NUNARY
};
int bpk_unary(void *stream, int op, void *out, int out_dt, const void *a,
              int a_dt, int64_t n);

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
/* Each row of d elements: cat(-x[d/2:], x[:d/2]). */
int bpk_rotate_half(void *stream, void *out, const void *in, int dt,
                    int64_t rows, int64_t d);

/* reduce.cu: in viewed as [outer, len, inner] summed over len into
 * out [outer, inner], one thread per output element, accumulating in the
 * compute type and rounding once.  pairwise: 0 sequential (left to right
 * from 0), 1 pairwise (sum(x[:n/2]) + sum(x[n/2:]), recursively). */
int bpk_sum(void *stream, int pairwise, void *out, int out_dt, const void *in,
            int in_dt, int64_t outer, int64_t len, int64_t inner);

/* rng.cu: out[i] = low + (high - low) * u(seed, stream, i), each operation
 * rounded in float (see rng.h), then converted to dt. */
int bpk_uniform(void *stream, void *out, int dt, int64_t n, uint64_t seed,
                uint64_t rng_stream, float low, float high);
/* rng.cu: out[i] = the same value for element first + i, i < n (a slice
 * of a tensor from its own counters; float dtypes only). */
int bpk_uniform_range(void *stream, void *out, int dt, int64_t n,
                      uint64_t first, uint64_t seed, uint64_t rng_stream,
                      float low, float high);
/* One Philox-4x32-10 block computed on the device, synchronously, for
 * known-answer tests.  Returns a cudaError_t as an int. */
int bpk_philox_block(const uint32_t ctr[4], const uint32_t key[2],
                     uint32_t out[4]);

/* The layer stack's kernels (src/stack_ops.h gives their arithmetic);
 * dt is the model dtype: fp32, bf16 or fp16.  Rows reduce in one block
 * each, in a fixed order (bpk_rows.cuh), so results repeat bit for bit. */
/* norm.cu: RMSNorm of x [rows, cols] with weight w [cols] */
int bpk_rmsnorm(void *stream, void *out, const void *x, const void *w, int dt,
                int64_t rows, int64_t cols, float eps);
/* rope.cu: x [rows, heads*d]; cos, sin [positions, d] from row row0 */
int bpk_rope(void *stream, void *out, const void *x, const void *cos,
             const void *sin, int dt, int64_t rows, int64_t heads, int64_t d,
             int64_t row0);
/* softmax.cu: scores [batch, t, t] in place: scaled, causal, softmax */
enum { BPK_SCALE_MUL, BPK_SCALE_DIV };
int bpk_causal_softmax(void *stream, void *scores, int dt, int64_t batch,
                       int64_t t, float scale, int mode);
/* softmax.cu: out fp32 [rows, cols] = log_softmax of x [rows, cols] */
int bpk_log_softmax(void *stream, float *out, const void *x, int dt,
                    int64_t rows, int64_t cols);
/* swiglu.cu: out = silu(gate) * up, n elements */
int bpk_silu_mul(void *stream, void *out, const void *gate, const void *up,
                 int dt, int64_t n);
/* embed.cu: out [rows, cols] = table[ids[r], :] */
int bpk_embedding(void *stream, void *out, const void *table,
                  const int32_t *ids, int dt, int64_t rows, int64_t cols);

#ifdef __cplusplus
}
#endif

#endif
