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
