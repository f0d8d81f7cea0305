/* The CUDA backend's GEMM ops: matmul, bmm, baddbmm, linear, addmm, each
 * as ATen's composite code reaches at::cuda::blas, and each product
 * through the GEMM module (cuda_gemm.h) with the backend's BLAS settings.
 * Operands are PyTorch's views of the probe's buffers (bp_exec_t.views):
 * `transpose` then `matmul` reaches cuBLAS as a transpose flag, not as a
 * copy.
 *
 * torch.matmul (LinearAlgebra.cpp _matmul_impl): [m, k] @ [k, n] is mm;
 *   a of 3 or more dimensions @ a matrix folds a to [-1, k] and calls mm
 *   where should_fold says the leading dimensions fold without a copy;
 *   otherwise a reshaped to [batch, m, k] and the matrix expanded over the
 *   batch (stride 0) go to bmm.
 * F.linear (Linear.cpp linear): with a bias, a 2-D x is
 *   addmm(bias, x, weight.t()); a contiguous x of 3 dimensions, or of any
 *   with a 1-D bias, is flattened to [-1, k] first (_flatten_nd_linear);
 *   otherwise, and without a bias, matmul(x, weight.t()), then the bias
 *   added in place (x + bias in opmath, rounded once).  A 1-D x is
 *   unsqueezed to [1, k].
 * torch.addmm, torch.bmm, torch.baddbmm: the module's calls. */
#include "be_cuda.h"

#include <string.h>

#include "bpk.h"
#include "cuda_gemm.h"

static bp_status need_dev(const bp_buf_t *t, const char *which, bp_error_t *err)
{
    if (!t || !t->dev)
        return bp_error_set(err, BP_EINPUT, "operand %s is not on the device", which);
    return BP_OK;
}

bp_status bp_cuda_view_of(const bp_exec_t *x, int r, const bp_buf_t *buf, const char *which,
                          bp_cuda_mat_t *m, bp_error_t *err)
{
    if (x->views && x->views[r].base) {
        bp_status st = need_dev(x->views[r].base, which, err);
        m->base = x->views[r].base->dev;
        m->geo = x->views[r].geo;
        return st;
    }
    bp_status st = need_dev(buf, which, err);
    m->base = buf ? buf->dev : NULL;
    if (buf)
        bp_strided_contiguous(buf->ndim, buf->shape, &m->geo);
    return st;
}

static bp_status same_dtype(const bp_exec_t *x, const bp_buf_t *const *t, int n,
                            bp_error_t *err)
{
    for (int i = 0; i < n; i++)
        if (t[i] && t[i]->dtype != x->out->dtype)
            return bp_error_set(err, BP_EINPUT,
                                "%s needs operands of its result's dtype %s, got %s",
                                bp_op_name(x->op->kind), bp_dtype_name(x->out->dtype),
                                bp_dtype_name(t[i]->dtype));
    return BP_OK;
}

/* A contiguous copy of m's view (PyTorch's reshape of what no strides can
 * view), into the scratch t; m then describes the copy. */
static bp_status copy_contiguous(bp_backend_t *be, bp_dtype_t dt, bp_cuda_mat_t *m,
                                 bp_buf_t *t, bp_error_t *err)
{
    int64_t n = bp_strided_numel(&m->geo);
    bp_status st = bp_buf_shape(t, dt, 1, &n, err);
    if (!st)
        st = be->dev_alloc(be, t, err);
    if (st)
        return st;
    st = bp_cuda_copy_view(be, dt, m->base, &m->geo, t->dev, err);
    m->base = t->dev;
    bp_strided_t g = m->geo;
    bp_strided_contiguous(g.ndim, g.shape, &m->geo);
    return st;
}

/* m as [-1, k] (k its last dimension): a view where computeStride finds
 * strides, else a contiguous copy into t (torch's reshape). */
static bp_status fold(bp_backend_t *be, bp_dtype_t dt, bp_cuda_mat_t *m, bp_buf_t *t,
                      bp_error_t *err)
{
    int nd = m->geo.ndim;
    int64_t k = nd ? m->geo.shape[nd - 1] : 1, rows = 1;
    for (int d = 0; d + 1 < nd; d++)
        rows *= m->geo.shape[d];
    if (nd == 2)
        return BP_OK;
    if (nd == 1) { /* matmul: [k] is [1, k] (unsqueeze(0)) */
        bp_strided_t g = m->geo;
        m->geo.ndim = 2;
        m->geo.shape[0] = 1;
        m->geo.shape[1] = g.shape[0];
        m->geo.strides[0] = g.shape[0] * g.strides[0];
        m->geo.strides[1] = g.strides[0];
        return BP_OK;
    }
    int64_t shape[2] = {rows, k};
    bp_strided_t g;
    if (bp_strided_reshape(&m->geo, 2, shape, &g)) {
        m->geo = g;
        return BP_OK;
    }
    bp_status st = copy_contiguous(be, dt, m, t, err);
    if (!st)
        bp_strided_contiguous(2, shape, &m->geo);
    return st;
}

static void free_temp(bp_backend_t *be, bp_buf_t *t)
{
    if (t->dev)
        be->dev_free(be, t);
}

/* should_fold: a of 3 or more dimensions folds into [-1, k] without a copy
 * when its leading dimensions are contiguous among themselves (or it is
 * empty). */
static bool foldable(const bp_strided_t *g)
{
    int64_t n = 1;
    for (int d = 0; d < g->ndim; d++)
        n *= g->shape[d];
    if (n == 0)
        return true;
    for (int d = 0; d + 2 < g->ndim; d++)
        if (g->strides[d] != g->strides[d + 1] * g->shape[d + 1])
            return false;
    return true;
}

/* torch.matmul(a, b) for b a matrix, a's view in ma, b's in mb: mm, on a
 * folded to [-1, k] where should_fold says so; otherwise the batched path,
 * a reshaped to [batch, m, k] and b expanded to [batch, k, n] (stride 0),
 * through bmm. */
static bp_status matmul(bp_backend_t *be, bp_dtype_t dt, bp_cuda_mat_t ma,
                        const bp_cuda_mat_t *mb, void *out, bp_error_t *err)
{
    bp_buf_t t = {0};
    bp_status st = BP_OK;
    if (ma.geo.ndim < 3 || foldable(&ma.geo)) {
        st = fold(be, dt, &ma, &t, err);
        if (!st)
            st = bp_cuda_addmm(bp_cuda_gemm_handle(be), dt, NULL, &ma, mb, 0.0, 1.0, out,
                               NULL, err);
        free_temp(be, &t);
        return st;
    }
    int nd = ma.geo.ndim;
    int64_t batch = 1;
    for (int d = 0; d + 2 < nd; d++)
        batch *= ma.geo.shape[d];
    int64_t s3[3] = {batch, ma.geo.shape[nd - 2], ma.geo.shape[nd - 1]};
    bp_strided_t g;
    if (bp_strided_reshape(&ma.geo, 3, s3, &g))
        ma.geo = g;
    else if (!(st = copy_contiguous(be, dt, &ma, &t, err)))
        bp_strided_contiguous(3, s3, &ma.geo);
    bp_cuda_mat_t m3 = *mb;
    m3.geo.ndim = 3;
    m3.geo.shape[0] = batch;
    m3.geo.shape[1] = mb->geo.shape[0];
    m3.geo.shape[2] = mb->geo.shape[1];
    m3.geo.strides[0] = batch == 1 ? mb->geo.shape[0] * mb->geo.strides[0] : 0;
    m3.geo.strides[1] = mb->geo.strides[0];
    m3.geo.strides[2] = mb->geo.strides[1];
    if (!st)
        st = bp_cuda_baddbmm(bp_cuda_gemm_handle(be), dt, NULL, &ma, &m3, 0.0, 1.0, NULL, out,
                             NULL, err);
    free_temp(be, &t);
    return st;
}

bp_status bp_cuda_matmul_nd(bp_backend_t *be, bp_dtype_t dt, bp_cuda_mat_t a, bp_cuda_mat_t b,
                            void *out, bp_error_t *err)
{
    int nd = a.geo.ndim;
    if (nd < 2 || b.geo.ndim != nd)
        return bp_error_set(err, BP_EINTERNAL, "matmul of %d-D and %d-D operands", nd,
                            b.geo.ndim);
    if (nd == 2)
        return bp_cuda_addmm(bp_cuda_gemm_handle(be), dt, NULL, &a, &b, 0.0, 1.0, out, NULL,
                             err);
    int64_t batch = 1;
    for (int d = 0; d + 2 < nd; d++)
        batch *= a.geo.shape[d];
    bp_cuda_mat_t *m[2] = {&a, &b};
    bp_buf_t t[2] = {{0}, {0}};
    bp_status st = BP_OK;
    for (int i = 0; i < 2 && !st; i++) {
        int64_t s3[3] = {batch, m[i]->geo.shape[nd - 2], m[i]->geo.shape[nd - 1]};
        bp_strided_t g;
        if (bp_strided_reshape(&m[i]->geo, 3, s3, &g))
            m[i]->geo = g;
        else if (!(st = copy_contiguous(be, dt, m[i], &t[i], err)))
            bp_strided_contiguous(3, s3, &m[i]->geo);
    }
    if (!st)
        st = bp_cuda_baddbmm(bp_cuda_gemm_handle(be), dt, NULL, &a, &b, 0.0, 1.0, NULL, out,
                             NULL, err);
    free_temp(be, &t[0]);
    free_temp(be, &t[1]);
    return st;
}

/* a and b of matmul and bmm, of the result's dtype */
static bp_status two(const bp_exec_t *x, bp_cuda_mat_t *ma, bp_cuda_mat_t *mb,
                     bp_error_t *err)
{
    const bp_buf_t *t[2] = {x->a, x->b};
    bp_status st = bp_cuda_view_of(x, 0, x->a, "a", ma, err);
    if (!st)
        st = bp_cuda_view_of(x, 1, x->b, "b", mb, err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (!st)
        st = same_dtype(x, t, 2, err);
    return st;
}

bp_status bp_cuda_op_matmul(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_cuda_mat_t ma, mb;
    bp_status st = two(x, &ma, &mb, err);
    if (st)
        return st;
    if (ma.geo.ndim < 2 || mb.geo.ndim != 2)
        return bp_error_set(err, BP_EINPUT, "matmul needs a [..., m, k] and b [k, n]");
    return matmul(be, x->out->dtype, ma, &mb, x->out->dev, err);
}

bp_status bp_cuda_op_bmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_cuda_mat_t ma, mb;
    bp_status st = two(x, &ma, &mb, err);
    if (st)
        return st;
    if (ma.geo.ndim != 3 || mb.geo.ndim != 3)
        return bp_error_set(err, BP_EINPUT, "bmm needs [B, m, k] and [B, k, n]");
    return bp_cuda_baddbmm(bp_cuda_gemm_handle(be), x->out->dtype, NULL, &ma, &mb, 0.0, 1.0,
                           NULL, x->out->dev, NULL, err);
}

/* inputs [self, mat1, mat2] of baddbmm and addmm */
static bp_status three(const bp_exec_t *x, bp_cuda_mat_t *m, bp_error_t *err)
{
    static const char *const names[3] = {"input", "mat1", "mat2"};
    if (x->ninputs != 3)
        return bp_error_set(err, BP_EINPUT, "%s takes inputs [input, %s]",
                            bp_op_name(x->op->kind),
                            x->op->kind == BP_OP_BADDBMM ? "batch1, batch2" : "mat1, mat2");
    bp_status st = BP_OK;
    for (int k = 0; !st && k < 3; k++)
        st = bp_cuda_view_of(x, 2 + k, x->inputs[k], names[k], &m[k], err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (!st)
        st = same_dtype(x, x->inputs, 3, err);
    return st;
}

bp_status bp_cuda_op_baddbmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_cuda_mat_t m[3];
    bp_status st = three(x, m, err);
    if (st)
        return st;
    if (m[1].geo.ndim != 3 || m[2].geo.ndim != 3)
        return bp_error_set(err, BP_EINPUT, "baddbmm needs batch1 [B, m, k] and batch2 "
                            "[B, k, n]");
    return bp_cuda_baddbmm(bp_cuda_gemm_handle(be), x->out->dtype, &m[0], &m[1], &m[2],
                           x->op->beta, x->op->alpha, NULL, x->out->dev, NULL, err);
}

bp_status bp_cuda_op_addmm(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_cuda_mat_t m[3];
    bp_status st = three(x, m, err);
    if (st)
        return st;
    if (m[1].geo.ndim != 2 || m[2].geo.ndim != 2)
        return bp_error_set(err, BP_EINPUT, "addmm needs mat1 [m, k] and mat2 [k, n]");
    return bp_cuda_addmm(bp_cuda_gemm_handle(be), x->out->dtype, &m[0], &m[1], &m[2],
                         x->op->beta, x->op->alpha, x->out->dev, NULL, err);
}

/* out += bias, broadcast: Tensor.add_ in opmath, rounded once. */
static bp_status add_bias(bp_backend_t *be, bp_buf_t *out, const bp_buf_t *bias,
                          bp_error_t *err)
{
    bpk_bcast_t bc;
    bp_error_t why = {0};
    if (bp_cuda_bcast(out, out, bias, &bc, &why))
        return bp_error_set(err, BP_EINPUT, "linear's bias does not broadcast to its result");
    int rc = bpk_binary(bp_cuda_stream(be), BPK_ADD, out->dev, (int)out->dtype,
                        (bpk_arg_t){out->dev, (int)out->dtype, 0.0},
                        (bpk_arg_t){bias->dev, (int)bias->dtype, 0.0}, &bc,
                        (int64_t)out->numel);
    return bp_cuda_finish(be, "bpk_binary(add)", rc, err);
}

bp_status bp_cuda_op_linear(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    if (x->ninputs != 2 && x->ninputs != 3)
        return bp_error_set(err, BP_EINPUT, "linear takes inputs [x, weight] or "
                            "[x, weight, bias]");
    bool has_bias = x->ninputs == 3;
    const bp_buf_t *bias = has_bias ? x->inputs[2] : NULL;
    bp_cuda_mat_t mx, mw, mbias;
    memset(&mbias, 0, sizeof mbias);
    bp_status st = bp_cuda_view_of(x, 2, x->inputs[0], "x", &mx, err);
    if (!st)
        st = bp_cuda_view_of(x, 3, x->inputs[1], "weight", &mw, err);
    if (!st && has_bias)
        st = bp_cuda_view_of(x, 4, bias, "bias", &mbias, err);
    if (!st)
        st = need_dev(x->out, "out", err);
    if (!st)
        st = same_dtype(x, x->inputs, x->ninputs, err);
    if (st)
        return st;
    if (mw.geo.ndim != 2 || mx.geo.ndim < 1)
        return bp_error_set(err, BP_EINPUT, "linear needs x [..., k] and weight [n, k]");
    bp_dtype_t dt = x->out->dtype;
    bp_cuda_mat_t wt = mw; /* weight.t(): a view */
    wt.geo.shape[0] = mw.geo.shape[1];
    wt.geo.shape[1] = mw.geo.shape[0];
    wt.geo.strides[0] = mw.geo.strides[1];
    wt.geo.strides[1] = mw.geo.strides[0];
    bool contig = bp_strided_is_contiguous(&mx.geo);
    if (has_bias && (mx.geo.ndim == 2 ||
                     (contig && (mx.geo.ndim == 3 || mbias.geo.ndim == 1)))) {
        bp_buf_t t = {0}; /* contiguous: the flattening is a view */
        if (mx.geo.ndim != 2)
            st = fold(be, dt, &mx, &t, err);
        if (!st)
            st = bp_cuda_addmm(bp_cuda_gemm_handle(be), dt, &mbias, &mx, &wt, 1.0, 1.0,
                               x->out->dev, NULL, err);
        free_temp(be, &t);
        return st;
    }
    st = matmul(be, dt, mx, &wt, x->out->dev, err);
    if (!st && has_bias) /* add_ reads the bias's values: its buffer will do */
        st = add_bias(be, x->out, bias, err);
    return st;
}
