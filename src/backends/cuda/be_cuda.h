/* Private interface of the CUDA backend, between be_cuda.c (device
 * selection, memory, streams, the GEMM handle, fingerprint) and
 * be_cuda_ops.c (its op table: what each op computes and how PyTorch
 * converts its scalars).  Plain C: no CUDA types cross it. */
#ifndef BP_BE_CUDA_H
#define BP_BE_CUDA_H

#include <stdbool.h>

#include "backend.h"
#include "bpk.h"
#include "cuda_gemm.h"
#include "redcfg.h"

/* The backend's cudaStream_t, for the kernel launchers (bpk.h). */
void *bp_cuda_stream(bp_backend_t *be);

/* Makes the backend's device current for this thread. */
bp_status bp_cuda_use(bp_backend_t *be, bp_error_t *err);

/* What ATen's reductions read of the device's properties (redcfg.h). */
bp_status bp_cuda_gpu_props(bp_backend_t *be, bp_gpu_props_t *props, bp_error_t *err);
/* Sets bytes at p to 0 on the backend's stream. */
bp_status bp_cuda_zero(bp_backend_t *be, void *p, size_t bytes, bp_error_t *err);
/* Completes a launch: rc is the launcher's return value; then waits for
 * the stream so that a fault is reported against the kernel that caused
 * it.  Messages name the kernel and CUDA's error string. */
/* The broadcast of tensor operands a and b (either NULL) over out for an
 * elementwise kernel, its dimensions coalesced; an operand that does not
 * broadcast is BP_EINPUT naming its shape and out's. */
bp_status bp_cuda_bcast(const bp_buf_t *out, const bp_buf_t *a, const bp_buf_t *b,
                        bpk_bcast_t *bc, bp_error_t *err);
bp_status bp_cuda_finish(bp_backend_t *be, const char *kernel, int rc,
                         bp_error_t *err);

/* The backend's GEMM handle (cuda_gemm.h), with its BLAS settings. */
struct bp_cuda_blas;
struct bp_cuda_blas *bp_cuda_gemm_handle(bp_backend_t *be);

/* Operand r of x (0: a, 1: b, 2 + k: inputs[k]) as PyTorch holds it: its
 * view (an op with BP_OPF_VIEWS), or the contiguous buffer itself where
 * the executor gave none (be_cuda_gemm.c). */
bp_status bp_cuda_view_of(const bp_exec_t *x, int r, const bp_buf_t *buf, const char *which,
                          bp_cuda_mat_t *m, bp_error_t *err);
/* torch.matmul(a, b) into the fresh contiguous out for a and b of the same
 * number (>= 2) of dimensions with equal leading ones: mm for matrices,
 * else both reshaped to [batch, ., .] (a view where strides allow, else a
 * copy) and bmm, as _matmul_impl does (be_cuda_gemm.c). */
bp_status bp_cuda_matmul_nd(bp_backend_t *be, bp_dtype_t dt, bp_cuda_mat_t a, bp_cuda_mat_t b,
                            void *out, bp_error_t *err);

/* The op table's reductions along an axis and fused ops (be_cuda_rows.c);
 * bp_cuda_tree is sum/mean/prod/var (BPK_TREE_*) of a as [outer, len,
 * inner] over len into x->out in Reduce.cuh's order (param: mean's factor,
 * var's correction). */
bp_status bp_cuda_tree(bp_backend_t *be, const bp_exec_t *x, int op, int64_t outer,
                       int64_t len, int64_t inner, double param, bp_error_t *err);
bp_status bp_cuda_op_softmax(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_reduce(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_norm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_sdpa(bp_backend_t *, const bp_exec_t *, bp_error_t *);
/* op_list.h's BP_FN2 functions of two tensors (be_cuda_ops.c). */
bp_status bp_cuda_op_fn2(bp_backend_t *, const bp_exec_t *, bp_error_t *);
/* The GEMM ops (be_cuda_gemm.c), through the GEMM module. */
bp_status bp_cuda_op_matmul(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_bmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_baddbmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_linear(bp_backend_t *, const bp_exec_t *, bp_error_t *);
bp_status bp_cuda_op_addmm(bp_backend_t *, const bp_exec_t *, bp_error_t *);

#endif
