/* PyTorch's view geometry (see strided.h).  Each rule is c10's or ATen's
 * for the same op: contiguous strides and contiguity
 * (c10/core/Contiguity.h), reshape's computeStride
 * (aten/src/ATen/TensorUtils.cpp), unsqueeze and expand
 * (inferUnsqueezeGeometry, inferExpandGeometry), transpose, permute,
 * squeeze and slice (TensorShape.cpp). */
#include "strided.h"

#include <string.h>

void bp_strided_contiguous(int ndim, const int64_t *shape, bp_strided_t *g)
{
    memset(g, 0, sizeof *g);
    g->ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        g->shape[d] = shape[d];
        g->strides[d] = s;
        s *= shape[d] > 1 ? shape[d] : 1;
    }
}

bool bp_strided_is_contiguous(const bp_strided_t *g)
{
    int64_t z = 1;
    for (int d = 0; d < g->ndim; d++)
        if (g->shape[d] == 0)
            return true;
    for (int d = g->ndim - 1; d >= 0; d--) {
        if (g->shape[d] == 1)
            continue;
        if (g->strides[d] != z)
            return false;
        z *= g->shape[d];
    }
    return true;
}

int64_t bp_strided_numel(const bp_strided_t *g)
{
    int64_t n = 1;
    for (int d = 0; d < g->ndim; d++)
        n *= g->shape[d];
    return n;
}

bool bp_strided_is_dense(const bp_strided_t *g)
{
    int n = g->ndim;
    if (n == 1)
        return g->shape[0] < 2 || g->strides[0] == 1;
    int perm[BP_MAXDIM];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    /* std::sort's order: size-0 and size-1 dimensions last, the others by
     * increasing stride (insertion sort is stable, which is no matter:
     * equal strides of two dimensions of size > 1 fail below either way) */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0; k--) {
            int a = perm[k - 1], b = perm[k];
            bool b_first = g->shape[b] >= 2 &&
                           (g->shape[a] < 2 || g->strides[b] < g->strides[a]);
            if (!b_first)
                break;
            perm[k - 1] = b;
            perm[k] = a;
        }
    int64_t need = 1;
    for (int i = 0; i < n; i++) {
        int64_t size = g->shape[perm[i]];
        if (size < 2)
            return true;
        if (g->strides[perm[i]] != need)
            return false;
        need *= size;
    }
    return true;
}

void bp_strided_like(const bp_strided_t *in, bp_strided_t *out)
{
    *out = *in;
    out->offset = 0;
    if (bp_strided_is_dense(in))
        return;
    int n = in->ndim, perm[BP_MAXDIM];
    for (int i = 0; i < n; i++)
        perm[i] = n - 1 - i; /* innermost first */
    for (int i = 1; i < n; i++)
        for (int d1 = i, d0 = i - 1; d0 >= 0; d0--) {
            int a = perm[d0], b = perm[d1];
            int64_t s0 = in->strides[a], s1 = in->strides[b];
            int c = s0 == 0 || s1 == 0 ? 0
                    : s0 < s1        ? -1
                    : s0 > s1        ? 1
                                     : in->shape[a] > in->shape[b];
            if (c > 0) {
                perm[d0] = b;
                perm[d1] = a;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    int64_t st = 1;
    for (int i = 0; i < n; i++) {
        out->strides[perm[i]] = st;
        st *= in->shape[perm[i]] > 1 ? in->shape[perm[i]] : 1;
    }
}

bool bp_strided_reshape(const bp_strided_t *g, int ndim, const int64_t *shape,
                        bp_strided_t *out)
{
    bp_strided_t r;
    memset(&r, 0, sizeof r);
    r.ndim = ndim;
    r.offset = g->offset;
    memcpy(r.shape, shape, (size_t)ndim * sizeof *shape);
    if (g->ndim == 0) {
        for (int d = 0; d < ndim; d++)
            r.strides[d] = 1;
        *out = r;
        return true;
    }
    int64_t numel = 1;
    for (int d = 0; d < g->ndim; d++)
        numel *= g->shape[d];
    if (numel == 0) {
        /* NumPy's rule: the same shape keeps its strides, any other gets
         * those of a fresh tensor */
        bool same = ndim == g->ndim && memcmp(shape, g->shape, (size_t)ndim * sizeof *shape) == 0;
        if (same)
            memcpy(r.strides, g->strides, sizeof r.strides);
        else
            for (int d = ndim - 1; d >= 0; d--)
                r.strides[d] = d == ndim - 1
                                   ? 1
                                   : (shape[d + 1] > 1 ? shape[d + 1] : 1) * r.strides[d + 1];
        *out = r;
        return true;
    }
    /* Chunks of g's dimensions that are contiguous among themselves map
     * onto runs of the new dimensions of the same element count. */
    int view_d = ndim - 1;
    int64_t base_stride = g->strides[g->ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int td = g->ndim - 1; td >= 0; td--) {
        tensor_numel *= g->shape[td];
        if (td == 0 || (g->shape[td - 1] != 1 &&
                        g->strides[td - 1] != tensor_numel * base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
                r.strides[view_d] = view_numel * base_stride;
                view_numel *= shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (td > 0) {
                base_stride = g->strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if (view_d != -1)
        return false;
    *out = r;
    return true;
}

static bool is_view(bp_op_kind_t k)
{
    switch (k) {
    case BP_OP_TRANSPOSE: case BP_OP_PERMUTE: case BP_OP_UNSQUEEZE: case BP_OP_SQUEEZE:
    case BP_OP_EXPAND: case BP_OP_RESHAPE: case BP_OP_VIEW: case BP_OP_SLICE:
        return true;
    default:
        return false;
    }
}

/* expand's geometry (inferExpandGeometry): new leading dimensions and
 * stretched size-1 ones get stride 0. */
static void expand(const bp_strided_t *in, int on, const int64_t *os, bp_strided_t *r)
{
    for (int i = on - 1; i >= 0; i--) {
        int dim = in->ndim - (on - i);
        int64_t size = dim >= 0 ? in->shape[dim] : 1;
        int64_t stride = dim >= 0 ? in->strides[dim]
                         : i + 1 < on ? r->shape[i + 1] * r->strides[i + 1]
                                      : 1;
        if (size != os[i]) {
            size = os[i];
            stride = 0;
        }
        r->shape[i] = size;
        r->strides[i] = stride;
    }
}

bool bp_strided_of_op(const bp_op_t *op, const bp_strided_t *in, bool dtype_change, int on,
                      const int64_t *os, bp_strided_t *out)
{
    if (dtype_change || !is_view(op->kind) || on > BP_MAXDIM)
        return false;
    bp_strided_t r;
    memset(&r, 0, sizeof r);
    r.ndim = on;
    r.offset = in->offset;
    switch (op->kind) {
    case BP_OP_TRANSPOSE:
    case BP_OP_PERMUTE:
        if (on != in->ndim)
            return false;
        for (int d = 0; d < on; d++) {
            int p = d;
            if (op->kind == BP_OP_PERMUTE) {
                if (!bp_axis_norm((int)op->dims[d], in->ndim, &p))
                    return false;
            } else {
                int d0, d1;
                if (!bp_axis_norm((int)op->dims[0], in->ndim, &d0) ||
                    !bp_axis_norm((int)op->dims[1], in->ndim, &d1))
                    return false;
                p = d == d0 ? d1 : d == d1 ? d0 : d;
            }
            r.shape[d] = in->shape[p];
            r.strides[d] = in->strides[p];
        }
        break;
    case BP_OP_UNSQUEEZE: {
        int ax;
        if (on != in->ndim + 1 || !bp_axis_norm(op->axis, in->ndim + 1, &ax))
            return false;
        for (int d = 0, s = 0; d < on; d++) {
            if (d == ax) {
                r.shape[d] = 1;
                r.strides[d] = ax >= in->ndim ? 1 : in->shape[ax] * in->strides[ax];
            } else {
                r.shape[d] = in->shape[s];
                r.strides[d] = in->strides[s++];
            }
        }
        break;
    }
    case BP_OP_SQUEEZE: {
        int ax = -1, n = 0;
        if (op->has_axis && !bp_axis_norm(op->axis, in->ndim ? in->ndim : 1, &ax))
            return false;
        for (int d = 0; d < in->ndim; d++) {
            bool drop = in->shape[d] == 1 && (!op->has_axis || d == ax);
            if (!drop && n < BP_MAXDIM) {
                r.shape[n] = in->shape[d];
                r.strides[n++] = in->strides[d];
            }
        }
        if (n != on)
            return false;
        break;
    }
    case BP_OP_EXPAND:
        if (on < in->ndim)
            return false;
        expand(in, on, os, &r);
        break;
    case BP_OP_RESHAPE:
    case BP_OP_VIEW:
        return bp_strided_reshape(in, on, os, out);
    case BP_OP_SLICE: {
        int ax;
        if (on != in->ndim || !bp_axis_norm(op->has_axis ? op->axis : 0, in->ndim, &ax))
            return false;
        int64_t first, len;
        bp_slice_resolve(op, in->shape[ax], &first, &len);
        r = *in;
        r.offset += first * in->strides[ax];
        r.strides[ax] *= op->s_step;
        r.shape[ax] = len;
        break;
    }
    default:
        return false;
    }
    if (memcmp(r.shape, os, (size_t)on * sizeof *os) != 0)
        return false; /* not the shape inference's: take the copy */
    *out = r;
    return true;
}

void bp_strided_resolve(const bp_probe_t *p, const bp_meta_t *metas, int j, int *base,
                        bp_strided_t *g)
{
    enum { MAX_CHAIN = 64 };
    int chain[MAX_CHAIN], n = 0, cur = j;
    while (n < MAX_CHAIN && cur >= 0 && (size_t)cur < p->nops) {
        const bp_op_t *op = &p->ops[cur];
        if (!is_view(op->kind) || op->a.kind != BP_ARG_BUF || op->a.buf < 0 || op->a.buf >= cur)
            break;
        chain[n++] = cur;
        cur = op->a.buf;
    }
    if (n == MAX_CHAIN) /* a longer chain starts at its last view, copied */
        cur = chain[--n];
    *base = cur;
    bp_strided_contiguous(metas[cur].ndim, metas[cur].shape, g);
    for (int k = n - 1; k >= 0; k--) {
        const bp_meta_t *m = &metas[chain[k]];
        const bp_op_t *op = &p->ops[chain[k]];
        bp_strided_t next;
        if (bp_strided_of_op(op, g, m->dtype != metas[op->a.buf].dtype, m->ndim, m->shape,
                             &next)) {
            *g = next;
        } else {
            *base = chain[k];
            bp_strided_contiguous(m->ndim, m->shape, g);
        }
    }
}
