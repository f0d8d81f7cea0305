/* Host tensors (see buf.h). */
#include "buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bp_status bp_shape_numel(int ndim, const int64_t *shape, bp_dtype_t dt,
                         size_t *numel, bp_error_t *err)
{
    if (ndim < 0 || ndim > BP_MAXDIM)
        return bp_error_set(err, BP_EINPUT, "%d dimensions (at most %d)",
                            ndim, BP_MAXDIM);
    size_t n = 1, esize = bp_dtype_info(dt)->size;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return bp_error_set(err, BP_EINPUT,
                                "negative dimension %" PRId64, shape[d]);
        if (shape[d] != 0 && n > (BP_BUF_MAX_BYTES / esize) / (size_t)shape[d])
            return bp_error_set(err, BP_EINPUT,
                                "tensor too large (more than %zu bytes)",
                                (size_t)BP_BUF_MAX_BYTES);
        n *= (size_t)shape[d];
    }
    *numel = n;
    return BP_OK;
}

bp_status bp_buf_shape(bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *err)
{
    size_t n;
    bp_status st = bp_shape_numel(ndim, shape, dt, &n, err);
    if (st)
        return st;
    memset(b, 0, sizeof *b);
    b->dtype = dt;
    b->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        b->shape[d] = shape[d];
    b->numel = n;
    return BP_OK;
}

bp_status bp_buf_alloc(bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *err)
{
    bp_status st = bp_buf_shape(b, dt, ndim, shape, err);
    if (st)
        return st;
    b->data = calloc(b->numel ? b->numel : 1, bp_dtype_info(dt)->size);
    if (!b->data)
        return bp_error_set(err, BP_ENOMEM, "out of memory for %zu elements",
                            b->numel);
    return BP_OK;
}

bp_status bp_buf_copy(bp_buf_t *dst, const bp_buf_t *src, bp_error_t *err)
{
    bp_status st = bp_buf_alloc(dst, src->dtype, src->ndim, src->shape, err);
    if (st)
        return st;
    if (src->data)
        memcpy(dst->data, src->data, bp_buf_nbytes(src));
    return BP_OK;
}

void bp_buf_free(bp_buf_t *b)
{
    if (b) {
        free(b->data);
        b->data = NULL;
    }
}

size_t bp_buf_nbytes(const bp_buf_t *b)
{
    return b->numel * bp_dtype_info(b->dtype)->size;
}

double bp_buf_get(const bp_buf_t *b, size_t i)
{
    if (b->dtype == BP_F32 || b->dtype == BP_BF16 || b->dtype == BP_F16)
        return bp_dtype_ldf(b->dtype, b->data, i);
    return bp_dtype_bits_to_double(b->dtype,
                                   bp_dtype_load_bits(b->dtype, b->data, i));
}

void bp_buf_set(bp_buf_t *b, size_t i, double v)
{
    bp_dtype_store_bits(b->dtype, b->data, i,
                        bp_dtype_bits_from_double(b->dtype, v));
}

uint64_t bp_buf_bits(const bp_buf_t *b, size_t i)
{
    return bp_dtype_load_bits(b->dtype, b->data, i);
}

bool bp_shape_equal(int na, const int64_t *a, int nb, const int64_t *b)
{
    if (na != nb)
        return false;
    for (int d = 0; d < na; d++)
        if (a[d] != b[d])
            return false;
    return true;
}

bool bp_buf_same_shape(const bp_buf_t *a, const bp_buf_t *b)
{
    return bp_shape_equal(a->ndim, a->shape, b->ndim, b->shape);
}

bp_status bp_axis_check(int axis, int ndim, int *out, bp_error_t *err)
{
    if (!bp_axis_norm(axis, ndim, out))
        return bp_error_set(err, BP_EINPUT,
                            "axis %d is out of range for %d dimensions", axis,
                            ndim);
    return BP_OK;
}

bool bp_axis_norm(int axis, int ndim, int *out)
{
    if (axis < -ndim || axis >= ndim)
        return false;
    *out = axis < 0 ? axis + ndim : axis;
    return true;
}

bool bp_bcast_strides(int sn, const int64_t *sshape, int on,
                      const int64_t *oshape, int64_t *strides)
{
    int off = on - sn;
    int64_t s = 1;
    if (off < 0)
        return false;
    for (int d = on - 1; d >= 0; d--) {
        int sd = d - off;
        if (sd < 0) {
            strides[d] = 0;
            continue;
        }
        if (sshape[sd] == oshape[d])
            strides[d] = sshape[sd] == 1 ? 0 : s;
        else if (sshape[sd] == 1)
            strides[d] = 0;
        else
            return false;
        s *= sshape[sd];
    }
    return true;
}

bool bp_bcast_shape(int na, const int64_t *a, int nb, const int64_t *b,
                    int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    if (n > BP_MAXDIM)
        return false;
    for (int d = n - 1; d >= 0; d--) {
        int da = d - (n - na), db = d - (n - nb);
        int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        out[d] = x == 1 ? y : x;
    }
    *nout = n;
    return true;
}

void bp_shape_format(int ndim, const int64_t *shape, char *out, size_t n)
{
    size_t len = 0;
    len += (size_t)snprintf(out, n, "[");
    for (int d = 0; d < ndim && len < n; d++)
        len += (size_t)snprintf(out + len, n - len, "%s%" PRId64,
                                d ? ", " : "", shape[d]);
    if (len < n)
        snprintf(out + len, n - len, "]");
}

void bp_index_format(const bp_buf_t *b, size_t i, char *out, size_t n)
{
    int64_t idx[BP_MAXDIM];
    for (int d = b->ndim - 1; d >= 0; d--) {
        int64_t s = b->shape[d] ? b->shape[d] : 1;
        idx[d] = (int64_t)(i % (size_t)s);
        i /= (size_t)s;
    }
    bp_shape_format(b->ndim, idx, out, n);
}
