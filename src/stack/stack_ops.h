/* The ops the stack's forward is built from, one implementation per device:
 * stack_cpu.c (host memory, bp_buf_t.data) and stack_cuda.c (device
 * memory, bp_buf_t.dev; kernels/ and cuBLAS).  Tensors are row-major and
 * contiguous; T is the number of tokens, H the hidden size, d the head dim.
 *
 * Arithmetic, the same on both devices unless said (what PyTorch's eager
 * ops do; "rounded" means to the model dtype dt, compute in float):
 *   linear   out[T, N] = x[T, K] w[N, K]^T: one fp32 accumulation per
 *            output, rounded once.  CPU: the one CPU GEMM (cpu_gemm.h): acc
 *            = +0, then acc = fma(x, w, acc) for k ascending.  CUDA: the
 *            CUDA backend's GEMM module (cuda_gemm.h), F.linear's call
 *            (x @ w.t()): pinned (pedantic) by default, PyTorch's own call
 *            with --gemm default.
 *   rmsnorm  s = sum(x*x) in fp32 (each square rounded; CPU: left to
 *            right; CUDA: per-thread strided sums then a fixed tree), r =
 *            rsqrt(s / H + eps) (CPU 1/sqrtf, CUDA rsqrtf), y = x*r rounded,
 *            out = w*y rounded.
 *   rope     out = q*cos + rotate_half(q)*sin per head, each product and
 *            the sum rounded (three eager ops), cos/sin rows row0..row0+T-1.
 *   attention per head: s = q k^T rounded; s = s / sqrt(d) rounded (CPU:
 *            true division by float(sqrt(d)); CUDA: times 1/float(sqrt(d)),
 *            PyTorch's tensor-by-scalar division there); softmax over
 *            j <= i in fp32 (max, exp(s - max), sum, e / sum), rounded;
 *            masked entries 0; out = p v rounded (as linear, same order).
 *   silu_mul out = silu(g)*u: silu(g) = g / (1 + exp(-g)) rounded, the
 *            product rounded.
 *   add      a + b rounded.
 *   log_softmax fp32 out = (x - max) - log(sum(exp(x - max))).
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

typedef struct bp_sops bp_sops_t;
struct bp_sops {
    const char *name; /* "cpu", "cuda" */
    char desc[160];   /* device and matmul settings, for the report */
    bool scratch_scores; /* attention wants the [heads, T, T] scratch */
    void *state;
    /* b gets a zeroed tensor of the shape on the device. */
    bp_status (*alloc)(bp_sops_t *, bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *);
    void (*release)(bp_sops_t *, bp_buf_t *b);
    /* numel * size bytes between host memory and b */
    bp_status (*put)(bp_sops_t *, bp_buf_t *b, const void *host,
                     bp_error_t *);
    bp_status (*get)(bp_sops_t *, const bp_buf_t *b, void *host,
                     bp_error_t *);
    /* out[off + i] = bp_rng_uniform(seed, stream, first + i, low, high)
     * rounded to out's dtype, for i < n */
    bp_status (*uniform)(bp_sops_t *, bp_buf_t *out, size_t off, size_t n,
                         uint64_t seed, uint64_t stream, uint64_t first,
                         float low, float high, bp_error_t *);
    /* n elements, same dtype, bits copied */
    bp_status (*copy)(bp_sops_t *, bp_buf_t *dst, size_t doff,
                      const bp_buf_t *src, size_t soff, size_t n,
                      bp_error_t *);
    /* out[t, :] = table[ids[t], :]; ids i32, already within the table */
    bp_status (*embed)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *table,
                       const bp_buf_t *ids, bp_error_t *);
    bp_status (*rmsnorm)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *x,
                         const bp_buf_t *w, float eps, bp_error_t *);
    bp_status (*linear)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *x,
                        const bp_buf_t *w, bp_error_t *);
    bp_status (*rope)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *x,
                      const bp_buf_t *cos, const bp_buf_t *sin, int64_t row0,
                      int64_t heads, bp_error_t *);
    /* scores: scratch of [heads, T, T] in the model dtype */
    bp_status (*attention)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *q,
                           const bp_buf_t *k, const bp_buf_t *v,
                           int64_t heads, bp_buf_t *scores, bp_error_t *);
    bp_status (*silu_mul)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *gate,
                          const bp_buf_t *up, bp_error_t *);
    bp_status (*add)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *a,
                     const bp_buf_t *b, bp_error_t *);
    /* out fp32 [T, V] from x [T, V] of the model dtype */
    bp_status (*log_softmax)(bp_sops_t *, bp_buf_t *out, const bp_buf_t *x,
                             bp_error_t *);
    /* waits for everything launched (timing) */
    bp_status (*sync)(bp_sops_t *, bp_error_t *);
    void (*close)(bp_sops_t *);
};

bp_status bp_sops_cpu_open(bp_sops_t **out, bp_error_t *err);
/* Over an open CUDA backend (its device and stream); its own cuBLAS handle
 * with the gemm settings. */
bp_status bp_sops_cuda_open(bp_backend_t *cuda, bp_stack_gemm_t gemm,
                            bp_sops_t **out, bp_error_t *err);

/* Shape checks shared by both implementations (BP_EINTERNAL: a caller's
 * bug, not bad input). */
bp_status bp_sops_check_2d(const bp_buf_t *b, int64_t rows, int64_t cols,
                           bp_dtype_t dt, const char *what, bp_error_t *err);

#endif
