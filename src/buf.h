/* Host tensors: a dtype, a shape (row-major, contiguous) and owned data.
 * A device backend may attach its own copy through `dev`; the generic
 * executor (backend.c) moves data between the two. */
#ifndef BP_BUF_H
#define BP_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"

#define BP_MAXDIM 8
/* No single tensor may exceed this many bytes (a cap on hostile shapes). */
#define BP_BUF_MAX_BYTES ((size_t)1 << 36)

typedef struct bp_buf {
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[BP_MAXDIM];
    size_t numel;
    void *data; /* host copy, numel * size bytes, or NULL */
    void *dev;  /* device copy owned by a backend, or NULL */
} bp_buf_t;

/* Number of elements of a shape, with overflow and cap checks. */
bp_status bp_shape_numel(int ndim, const int64_t *shape, bp_dtype_t dt,
                         size_t *numel, bp_error_t *err);
/* Sets dtype/shape/numel and allocates zeroed host data. */
bp_status bp_buf_alloc(bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *err);
/* Sets dtype/shape/numel without allocating. */
bp_status bp_buf_shape(bp_buf_t *b, bp_dtype_t dt, int ndim,
                       const int64_t *shape, bp_error_t *err);
bp_status bp_buf_copy(bp_buf_t *dst, const bp_buf_t *src, bp_error_t *err);
void bp_buf_free(bp_buf_t *b);
size_t bp_buf_nbytes(const bp_buf_t *b);

/* Element access through doubles (exact for all floats; see dtype.h). */
double bp_buf_get(const bp_buf_t *b, size_t i);
/* Rounds v to the buffer's dtype, nearest even. */
void bp_buf_set(bp_buf_t *b, size_t i, double v);
uint64_t bp_buf_bits(const bp_buf_t *b, size_t i);

/* "[4096, 128]" into out. */
void bp_shape_format(int ndim, const int64_t *shape, char *out, size_t n);
/* Multi-dimensional index of flat position i: "[12, 7]". */
void bp_index_format(const bp_buf_t *b, size_t i, char *out, size_t n);

#endif
