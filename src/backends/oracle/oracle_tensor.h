/* The oracle's whole-tensor ops: the copies (concat, slice, rotate_half)
 * and the reductions (sum, matmul).
 *
 * Contract: a copy gives the source value rounded to the output dtype (the
 * very bits when the dtypes agree; rotate_half's negation is exact).  sum
 * and matmul give the exact sum / dot product of the exact inputs rounded
 * once to the output dtype: mpfr_sum (blocks of operands summed exactly at
 * a precision covering the input dtype's whole range, then rounded once)
 * and mpfr_dot (MPFR >= 4.1; exact products and mpfr_sum before), whatever
 * order or formulation a device would use.  Each output element is
 * independent, so the thread count never changes the bits. */
#ifndef BP_ORACLE_TENSOR_H
#define BP_ORACLE_TENSOR_H

#include "backend.h"

bp_status bp_oracle_copy(int threads, const bp_exec_t *x, bp_error_t *err);
/* The layout ops of layout.c: each element the exact value of its source,
 * rounded once where the dtype changes. */
bp_status bp_oracle_gather(int threads, const bp_exec_t *x, bp_error_t *err);
bp_status bp_oracle_sum(int threads, const bp_exec_t *x, bp_error_t *err);
bp_status bp_oracle_matmul(int threads, const bp_exec_t *x, bp_error_t *err);

#endif
