/* NumPy .npy reader (format versions 1.0, 2.0 and 3.0).
 *
 * Layout: "\x93NUMPY", major, minor, header length (u16 LE for 1.0, u32 LE
 * for 2.0/3.0), a Python dict literal {'descr': ..., 'fortran_order': ...,
 * 'shape': (...)} padded with spaces and a newline, then the raw data.
 *
 * Accepted: little-endian '<f8' '<f4' '<f2' '<i8' '<i4' '<i2' '<u8' '<u4'
 * '<u2', and the one-byte '|i1' '|u1' '|b1' (or with '<'); with as_bf16,
 * '<u2' and '<i2' are bfloat16 bits saved as 16-bit integers (NumPy has no
 * bfloat16), giving BP_BF16.  Refused with a message: big-endian and
 * other dtypes, structured dtypes, Fortran order (unless at most one
 * dimension exceeds 1, where the layout is the same as C order), more than
 * BP_MAXDIM dimensions, exactly the keys above (no more, no fewer), and a
 * data section that is not exactly numel * size bytes.  Errors are
 * BP_EINPUT with "<label>: <rule> at byte <offset>". */
#ifndef BP_NPY_H
#define BP_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"

/* Headers above this are refused before anything is allocated. */
#define BP_NPY_MAX_HEADER (1u << 20)

/* Reads path into out (which need not be initialised; on failure it holds
 * no data); messages start "cannot read '<path>': ". */
bp_status bp_npy_read(const char *path, bool as_bf16, bp_buf_t *out,
                      bp_error_t *err);
/* The same from memory; label names the input in messages. */
bp_status bp_npy_parse(const void *data, size_t len, const char *label,
                       bool as_bf16, bp_buf_t *out, bp_error_t *err);

/* Where an .npy's data is, without reading it: from the file's first
 * avail bytes (at least the header's, i.e. min(total, 10 + 2 +
 * BP_NPY_MAX_HEADER) of them) and its length total, with every rule
 * above, the data's size included. */
typedef struct {
    bp_dtype_t dt;
    int ndim;
    int64_t shape[BP_MAXDIM];
    uint64_t data_off, nbytes;
    char descr[32]; /* as the header spells it: "<f4" */
} bp_npy_layout_t;
bp_status bp_npy_layout(const void *head, size_t avail, uint64_t total,
                        const char *label, bool as_bf16, bp_npy_layout_t *out,
                        bp_error_t *err);

#endif
