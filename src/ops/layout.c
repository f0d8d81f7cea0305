/* Layout ops' element maps (see layout.h).  Buffers are contiguous and
 * row-major, so each view is a strided reading of its operand, the way
 * PyTorch's view ops describe theirs: reshape, view, unsqueeze and squeeze
 * keep the element order; transpose and permute reorder the operand's
 * strides; expand gives a stretched dimension stride 0. */
#include "layout.h"

#include <inttypes.h>
#include <stdlib.h>

bool bp_layout_is_gather(bp_op_kind_t k)
{
    return bp_layout_is_view(k) || k == BP_OP_INDEX_SELECT || k == BP_OP_EMBEDDING;
}

bool bp_layout_is_view(bp_op_kind_t k)
{
    switch (k) {
    case BP_OP_RESHAPE: case BP_OP_VIEW: case BP_OP_TRANSPOSE: case BP_OP_PERMUTE:
    case BP_OP_UNSQUEEZE: case BP_OP_SQUEEZE: case BP_OP_EXPAND:
        return true;
    default:
        return false;
    }
}

static void contiguous(int n, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int d = n - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

void bp_layout_view_strides(const bp_op_t *op, int an, const int64_t *as, int on,
                            const int64_t *os, int64_t *strides)
{
    int64_t ast[BP_MAXDIM];
    contiguous(an, as, ast);
    switch (op->kind) {
    case BP_OP_TRANSPOSE:
    case BP_OP_PERMUTE:
        /* output dimension d is the operand's dimension perm[d] */
        for (int d = 0; d < on; d++) {
            int p = d;
            if (op->kind == BP_OP_PERMUTE)
                bp_axis_norm((int)op->dims[d], an, &p);
            else {
                int d0 = 0, d1 = 0;
                bp_axis_norm((int)op->dims[0], an, &d0);
                bp_axis_norm((int)op->dims[1], an, &d1);
                p = d == d0 ? d1 : d == d1 ? d0 : d;
            }
            strides[d] = ast[p];
        }
        return;
    case BP_OP_EXPAND:
        bp_bcast_strides(an, as, on, os, strides);
        return;
    default: /* reshape, view, unsqueeze, squeeze: the same element order */
        contiguous(on, os, strides);
        return;
    }
}

size_t bp_layout_offset(int on, const int64_t *os, const int64_t *strides, size_t i)
{
    size_t off = 0;
    for (int d = on - 1; d >= 0; d--) {
        off += (i % (size_t)os[d]) * (size_t)strides[d];
        i /= (size_t)os[d];
    }
    return off;
}

const bp_buf_t *bp_layout_source(const bp_op_t *op, const bp_buf_t *a,
                                 const bp_buf_t *b)
{
    return op->kind == BP_OP_EMBEDDING ? b : a;
}

static int64_t index_at(const bp_buf_t *ix, size_t k)
{
    uint64_t bits = bp_dtype_load_bits(ix->dtype, ix->data, k);
    return ix->dtype == BP_I32 ? (int64_t)(int32_t)(uint32_t)bits : (int64_t)bits;
}

/* index_select's and embedding's geometry: the axis of from that index
 * picks along, and the extents outside and inside it. */
static bool index_geometry(const bp_op_t *op, const bp_buf_t *from, int *axis, size_t *outer,
                           size_t *inner)
{
    *axis = 0;
    if (op->kind == BP_OP_INDEX_SELECT &&
        !bp_axis_norm(op->has_axis ? op->axis : 0, from->ndim, axis))
        return false;
    *outer = *inner = 1;
    for (int d = 0; d < *axis; d++)
        *outer *= (size_t)from->shape[d];
    for (int d = *axis + 1; d < from->ndim; d++)
        *inner *= (size_t)from->shape[d];
    return true;
}

size_t bp_layout_run(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b)
{
    int axis;
    size_t outer, inner;
    if (bp_layout_is_view(op->kind) || !index_geometry(op, bp_layout_source(op, a, b), &axis,
                                                        &outer, &inner))
        return 1;
    return inner ? inner : 1;
}

bp_status bp_layout_runs(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                         const bp_buf_t *out, const bp_buf_t *index, int64_t *src,
                         bp_error_t *err)
{
    if (bp_layout_is_view(op->kind)) {
        int64_t st[BP_MAXDIM];
        bp_layout_view_strides(op, a->ndim, a->shape, out->ndim, out->shape, st);
        for (size_t i = 0; i < out->numel; i++)
            src[i] = (int64_t)bp_layout_offset(out->ndim, out->shape, st, i);
        return BP_OK;
    }
    if (!index || (index->numel && !index->data) ||
        (index->dtype != BP_I64 && index->dtype != BP_I32))
        return bp_error_set(err, BP_EINTERNAL, "%s without its integer index values",
                            bp_op_name(op->kind));
    /* index_select: out[o, j, i] = a[o, index[j], i]; embedding: out[r, d] =
     * b[a[r], d], the index_select of b's rows by a's elements. */
    const bp_buf_t *from = bp_layout_source(op, a, b);
    int axis;
    size_t outer, inner, k = index->numel;
    if (!index_geometry(op, from, &axis, &outer, &inner))
        return bp_error_set(err, BP_EINPUT, "index_select axis %d out of range",
                            op->axis);
    size_t n = (size_t)from->shape[axis];
    if (out->numel != outer * k * inner)
        return bp_error_set(err, BP_EINTERNAL, "%s output of %zu elements, not %zu",
                            bp_op_name(op->kind), out->numel, outer * k * inner);
    for (size_t j = 0; j < k; j++) {
        int64_t v = index_at(index, j);
        if (v < 0 || (uint64_t)v >= n)
            return bp_error_set(err, BP_EINPUT,
                                "%s: index %" PRId64 " is out of range for axis %d "
                                "of size %zu (element %zu of %s)",
                                bp_op_name(op->kind), v, axis, n, j,
                                op->kind == BP_OP_EMBEDDING ? "a" : "b");
    }
    if (!inner)
        return BP_OK;
    size_t r = 0;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < k; j++)
            src[r++] = (int64_t)((o * n + (size_t)index_at(index, j)) * inner);
    return BP_OK;
}

bp_status bp_layout_sources(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                            const bp_buf_t *out, const bp_buf_t *index, int64_t *src,
                            bp_error_t *err)
{
    bp_status st = bp_layout_runs(op, a, b, out, index, src, err);
    size_t run = bp_layout_run(op, a, b);
    if (st || run == 1)
        return st;
    /* each run's first offset, spread over its elements from the last */
    for (size_t r = out->numel / run; r-- > 0;)
        for (size_t e = run; e-- > 0;)
            src[r * run + e] = src[r] + (int64_t)e;
    return BP_OK;
}

bp_status bp_layout_map(const bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                        const bp_buf_t *out, int64_t **src, bp_error_t *err)
{
    *src = NULL;
    if (!a || !bp_layout_source(op, a, b))
        return bp_error_set(err, BP_EINPUT, "%s needs its tensor operands",
                            bp_op_name(op->kind));
    int64_t *s = malloc((out->numel ? out->numel : 1) * sizeof *s);
    if (!s)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = bp_layout_sources(op, a, b, out, op->kind == BP_OP_EMBEDDING ? a : b,
                                     s, err);
    if (st)
        free(s);
    else
        *src = s;
    return st;
}
