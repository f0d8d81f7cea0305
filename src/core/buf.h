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

/* Shapes, with the conventions PyTorch's are read with. */
bool bp_shape_equal(int na, const int64_t *a, int nb, const int64_t *b);
bool bp_buf_same_shape(const bp_buf_t *a, const bp_buf_t *b);
/* axis in [-ndim, ndim) as an index in [0, ndim) (negative counts from the
 * end, as maybe_wrap_dim); false when out of range. */
bool bp_axis_norm(int axis, int ndim, int *out);
/* The same, failing with "axis A is out of range for N dimensions". */
bp_status bp_axis_check(int axis, int ndim, int *out, bp_error_t *err);
/* Strides, in elements of a contiguous src, for each of out's dimensions
 * when src is broadcast to out (NumPy/PyTorch rules: dimensions aligned at
 * the right, size 1 or absent stretches with stride 0); false when src does
 * not broadcast to out. */
bool bp_bcast_strides(int sn, const int64_t *sshape, int on,
                      const int64_t *oshape, int64_t *strides);
/* The broadcast shape of a and b (torch.broadcast_shapes) into out/nout;
 * false when they do not broadcast. */
bool bp_bcast_shape(int na, const int64_t *a, int nb, const int64_t *b,
                    int *nout, int64_t *out);

/* "[4096, 128]" into out. */
void bp_shape_format(int ndim, const int64_t *shape, char *out, size_t n);
/* Multi-dimensional index of flat position i: "[12, 7]". */
void bp_index_format(const bp_buf_t *b, size_t i, char *out, size_t n);

#endif
