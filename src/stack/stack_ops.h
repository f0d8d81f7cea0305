/* The ops the stack's forward is built from.  Tensors are row-major and
 * contiguous; T is the number of tokens, H the hidden size, d the head dim.
 *
 * A device (bp_stack_dev_t, one per device: stack_cpu.c, host memory,
 * bp_buf_t.data; stack_cuda.c, device memory, bp_buf_t.dev) holds the
 * stack's tensors, generates its parameters and computes its matmuls;
 * every other op runs through the op table of the device's backend
 * (bp_stack_embed ... below, stack_forward.c), as a probe's ops do.
 *
 * Arithmetic, the same on both devices unless said (what PyTorch's eager
 * ops do; "rounded" means to the model dtype dt, compute in float):
 *   linear   out[T, N] = x[T, K] w[N, K]^T: one fp32 accumulation per
 *            output, rounded once.  CPU: the one CPU GEMM (cpu_gemm.h): acc
 *            = +0, then acc = fma(x, w, acc) for k ascending.  CUDA: the
 *            CUDA backend's GEMM module (cuda_gemm.h), F.linear's call
 *            (x @ w.t()): pinned (pedantic) by default, PyTorch's own call
 *            with --gemm default.
 *   rmsnorm  rms_norm's fixed formulation: s = sum(x*x) in fp32 (each
 *            square rounded; CPU: left to right; CUDA: per-thread strided
 *            sums then a fixed tree), r = rsqrt(s / H + eps) (CPU 1/sqrtf,
 *            CUDA rsqrtf), y = x*r rounded, out = w*y rounded.
 *   rope     out = q*cos + rotate_half(q)*sin per head, each product and
 *            the sum rounded (three eager ops), cos/sin rows row0..row0+T-1:
 *            mul, rotate_half, mul and add.
 *   attention per head: s = q k^T rounded; s = s / sqrt(d) rounded (CPU:
 *            true division by float(sqrt(d)); CUDA: times 1/float(sqrt(d)),
 *            PyTorch's tensor-by-scalar division there); softmax over
 *            j <= i in fp32 (max, exp(s - max), sum, e / sum), rounded;
 *            masked entries 0 (bp_stack_attn_softmax: div, where and
 *            softmax's fixed formulation); out = p v rounded (as linear,
 *            same order).  The matmuls are the device's, the rest the op
 *            table's.
 *   silu_mul out = silu(g)*u: silu(g) = g / (1 + exp(-g)) rounded, the
 *            product rounded (silu's fixed formulation: SLEEF's scalar
 *            expf on every element of the CPU, then mul).
 *   add      a + b rounded (add).
 *   log_softmax fp32 out = (x - max) - log(sum(exp(x - max))), the fixed
 *            formulation.
 * exp and log: SLEEF u10 on the CPU, CUDA's expf/logf. */
#ifndef BP_STACK_OPS_H
#define BP_STACK_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "buf.h"
#include "error.h"
#include "stack.h"

typedef struct bp_stack_dev bp_stack_dev_t;
struct bp_stack_dev {
    const char *name; /* "cpu", "cuda" */
    char desc[160];   /* device and matmul settings, for the report */
    bool scratch_scores; /* attention wants the [heads, T, T] scratch */
    bp_backend_t *be;    /* the device's backend: the row ops run through
                            its op table (bp_stack_rmsnorm, ...) */
    bp_buf_t mask;       /* the causal mask of the last T, [T, T] bool on
                            the device (bp_stack_attn_softmax) */
    void *state;
    /* b gets a zeroed tensor of the shape on the device. */
    bp_status (*alloc)(bp_stack_dev_t *, bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *);
    void (*release)(bp_stack_dev_t *, bp_buf_t *b);
    /* numel * size bytes between host memory and b */
    bp_status (*put)(bp_stack_dev_t *, bp_buf_t *b, const void *host,
                     bp_error_t *);
    bp_status (*get)(bp_stack_dev_t *, const bp_buf_t *b, void *host,
                     bp_error_t *);
    /* out[off + i] = bp_rng_uniform(seed, stream, first + i, low, high)
     * rounded to out's dtype, for i < n */
    bp_status (*uniform)(bp_stack_dev_t *, bp_buf_t *out, size_t off, size_t n,
                         uint64_t seed, uint64_t stream, uint64_t first,
                         float low, float high, bp_error_t *);
    /* n elements, same dtype, bits copied */
    bp_status (*copy)(bp_stack_dev_t *, bp_buf_t *dst, size_t doff,
                      const bp_buf_t *src, size_t soff, size_t n,
                      bp_error_t *);
    bp_status (*linear)(bp_stack_dev_t *, bp_buf_t *out, const bp_buf_t *x,
                        const bp_buf_t *w, bp_error_t *);
    /* scores: scratch of [heads, T, T] in the model dtype (the CUDA
     * attention's; the CPU's takes one head at a time); the probabilities
     * between the two matmuls are bp_stack_attn_softmax's */
    bp_status (*attention)(bp_stack_dev_t *, bp_buf_t *out, const bp_buf_t *q,
                           const bp_buf_t *k, const bp_buf_t *v,
                           int64_t heads, bp_buf_t *scores, bp_error_t *);
    /* waits for everything launched (timing) */
    bp_status (*sync)(bp_stack_dev_t *, bp_error_t *);
    void (*close)(bp_stack_dev_t *);
};

/* Over an open CPU backend (not owned). */
bp_status bp_stack_dev_cpu_open(bp_backend_t *cpu, bp_stack_dev_t **out,
                                bp_error_t *err);
/* Over an open CUDA backend (its device and stream); its own cuBLAS handle
 * with the gemm settings. */
bp_status bp_stack_dev_cuda_open(bp_backend_t *cuda, bp_stack_gemm_t gemm,
                            bp_stack_dev_t **out, bp_error_t *err);

/* Shape checks shared by both implementations (BP_EINTERNAL: a caller's
 * bug, not bad input). */
bp_status bp_stack_check_2d(const bp_buf_t *b, int64_t rows, int64_t cols,
                           bp_dtype_t dt, const char *what, bp_error_t *err);

/* The row ops of the forward, through the op table of dev->be
 * (stack_forward.c), on [T, H] tensors of the model dtype:
 *   embed    out [T, H] = table[ids[t], :] (embedding), ids i32 [T].
 *   rmsnorm  rms_norm's fixed formulation, w [H].
 *   rope     out = x*cos + rotate_half(x)*sin per head (mul, rotate_half,
 *            mul, add), cos and sin [positions, d] from row row0;
 *            scratch [T, H], overwritten.
 *   silu_mul out = silu(g) * u (silu's fixed formulation, mul).
 *   add      out = a + b (add; out may be a).
 *   log_softmax  out fp32 [T, V] from x [T, V] of the model dtype: the fixed
 *            formulation of log_softmax(x.float()).
 *   attn_softmax  the attention's probabilities in place on scores [heads,
 *            T, T] (q k^T, rounded to the model dtype): divided by sqrt(d)
 *            (div's default formulation, PyTorch's tensor / Python number
 *            on the device), masked above the diagonal (where, -inf),
 *            softmax's fixed formulation over the last axis. */
bp_status bp_stack_rmsnorm(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x,
                           const bp_buf_t *w, double eps, bp_error_t *err);
bp_status bp_stack_log_softmax(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x,
                               bp_error_t *err);
bp_status bp_stack_embed(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *table,
                         const bp_buf_t *ids, bp_error_t *err);
bp_status bp_stack_rope(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *x, const bp_buf_t *cos,
                        const bp_buf_t *sin, int64_t row0, int64_t heads, bp_buf_t *scratch,
                        bp_error_t *err);
bp_status bp_stack_silu_mul(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *g,
                            const bp_buf_t *u, bp_error_t *err);
bp_status bp_stack_add(bp_stack_dev_t *dev, bp_buf_t *out, const bp_buf_t *a, const bp_buf_t *b,
                       bp_error_t *err);
bp_status bp_stack_attn_softmax(bp_stack_dev_t *dev, bp_buf_t *scores, int64_t heads, int64_t T,
                                int64_t d, bp_error_t *err);
/* Releases what the row ops keep on the device (the mask). */
void bp_stack_rows_release(bp_stack_dev_t *dev);

#endif
