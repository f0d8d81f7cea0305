/* Tensors as PyTorch describes them: sizes, strides and an offset into the
 * memory of the tensor they view (c10's TensorImpl geometry).  bitprobe's
 * buffers are contiguous, and its layout ops copy; but in PyTorch
 * `w.t()`, `x.transpose(1, 2)`, `x[:, :k]` or `x.reshape(-1, k)` are views,
 * and a GEMM reads a view through the strides that decide cuBLAS's
 * transpose flags and leading dimensions (gemm_plan.h).  This module gives
 * every view op the geometry PyTorch gives it (transpose, permute,
 * unsqueeze, squeeze, expand, reshape and view through computeStride,
 * slice), PyTorch's is_contiguous and is_non_overlapping_and_dense, and
 * walks a probe's chain of views back to the buffer whose memory they
 * read.  Strides and offsets count elements. */
#ifndef BP_STRIDED_H
#define BP_STRIDED_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "op.h"
#include "probe.h"

typedef struct bp_strided {
    int ndim;
    int64_t shape[BP_MAXDIM];
    int64_t strides[BP_MAXDIM];
    int64_t offset;
} bp_strided_t;

/* A fresh contiguous tensor of this shape: stride[d] = stride[d + 1] *
 * max(shape[d + 1], 1), the last 1 (c10::contiguous_strides). */
void bp_strided_contiguous(int ndim, const int64_t *shape, bp_strided_t *g);
/* The number of elements: the product of the sizes. */
int64_t bp_strided_numel(const bp_strided_t *g);
/* Tensor.is_contiguous(): dimensions of size 1 are skipped; an empty
 * tensor is contiguous (compute_contiguous). */
bool bp_strided_is_contiguous(const bp_strided_t *g);
/* Tensor.is_non_overlapping_and_dense() (compute_non_overlapping_and_dense):
 * the strides, sorted with size-0 and size-1 dimensions last, are those of
 * a contiguous tensor of the sorted sizes. */
bool bp_strided_is_dense(const bp_strided_t *g);
/* The geometry, over a fresh buffer (offset 0), of the result of an
 * elementwise op (x * s, x.to(float)) on one tensor of geometry in, as
 * TensorIterator lays it out: in's own strides where in is
 * non-overlapping and dense (its fast setup; `q.t() * s` stays
 * transposed), else dense in the order of in's strides
 * (reorder_dimensions: the dimensions sorted innermost first by stride,
 * equal strides by size, a stride of 0 leaving two in place). */
void bp_strided_like(const bp_strided_t *in, bp_strided_t *out);
/* The strides a reshape of g to (ndim, shape) views it with
 * (at::detail::computeStride): false when no strides can, and PyTorch's
 * reshape copies. */
bool bp_strided_reshape(const bp_strided_t *g, int ndim, const int64_t *shape,
                        bp_strided_t *out);
/* The geometry of the result of layout op `op` (of shape on, os) whose
 * operand has geometry in: false when PyTorch's op copies rather than
 * views (a reshape no strides can view, a dtype conversion: dtype_change),
 * or the op is not a view (concat, index_select, embedding, rotate_half). */
bool bp_strided_of_op(const bp_op_t *op, const bp_strided_t *in, bool dtype_change, int on,
                      const int64_t *os, bp_strided_t *out);
/* Buffer j of probe p (metas: its inferred metas) as PyTorch holds it:
 * *base receives the buffer whose memory it reads (j itself unless j is a
 * view, through any chain of views, of an earlier buffer) and g its
 * geometry over that buffer.  A chain stops at the first op that copies;
 * that op's buffer (contiguous) is then the base. */
void bp_strided_resolve(const bp_probe_t *p, const bp_meta_t *metas, int j, int *base,
                        bp_strided_t *g);

#endif
