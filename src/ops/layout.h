/* The layout ops' element maps: which element of its source each output
 * element of reshape, view, transpose, permute, unsqueeze, squeeze,
 * expand, index_select and embedding copies.  One home for every backend
 * (each copies, converting only where an explicit dtype asks) and for
 * explain's element maps. */
#ifndef BP_LAYOUT_H
#define BP_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "op.h"

/* Whether op kind k is one of the ops above. */
bool bp_layout_is_gather(bp_op_kind_t k);
/* Whether it is a view: the map depends on the shapes only (not on an
 * index tensor's values). */
bool bp_layout_is_view(bp_op_kind_t k);

/* A view's map: the stride, in elements of its contiguous operand of shape
 * (an, as), along each dimension of the output of shape (on, os). */
void bp_layout_view_strides(const bp_op_t *op, int an, const int64_t *as, int on,
                            const int64_t *os, int64_t *strides);
/* The operand offset of output element i, given those strides. */
size_t bp_layout_offset(int on, const int64_t *os, const int64_t *strides, size_t i);

/* The operand the op copies from: a, or b for embedding (the weight). */
const bp_buf_t *bp_layout_source(const bp_op_t *op, const bp_buf_t *a,
                                 const bp_buf_t *b);
/* Every output element's offset into the source, into src (out->numel of
 * them).  index: the index tensor with its values on the host (b of
 * index_select, a of embedding; unused by views).  An index outside the
 * source's extent fails, naming it and its place, as PyTorch refuses it. */
bp_status bp_layout_sources(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                            const bp_buf_t *out, const bp_buf_t *index, int64_t *src,
                            bp_error_t *err);
/* The same by runs: output elements come in runs of bp_layout_run's
 * length, each from consecutive source elements (a row of embedding's
 * weight, index_select's extent inside its axis; 1 for views), and
 * bp_layout_runs writes one offset per run (out->numel / run of them). */
size_t bp_layout_run(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b);
bp_status bp_layout_runs(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                         const bp_buf_t *out, const bp_buf_t *index, int64_t *src,
                         bp_error_t *err);

/* The same for host backends, whose operands hold their values: checks
 * the operands, allocates *src (free() it) and fills it. */
bp_status bp_layout_map(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                        const bp_buf_t *out, int64_t **src, bp_error_t *err);

#endif
