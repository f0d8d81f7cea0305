/* The oracle's numeric core: exact loading of tensor elements into MPFR,
 * the one rounding of a result to an output dtype, and a deterministic
 * parallel map over output elements.
 *
 * Contract: an element's result depends only on its inputs.  A result is
 * computed at the output format's precision (53/24/8/11 bits) in MPFR's wide
 * exponent range with round to nearest even, then brought into the format's
 * exponent range by mpfr_check_range (overflow to infinity) and
 * mpfr_subnormalize (subnormals rounded once, using the ternary value so
 * that nothing is rounded twice).  Integer outputs take the exact value,
 * truncated toward zero and wrapped to the width in two's complement.
 * Work is split into contiguous chunks of output elements, one per thread;
 * since elements are independent the bits never depend on the thread count.
 * MPFR's exponent range is thread-local only where MPFR was built with TLS
 * (mpfr_buildopt_tls_p); elsewhere everything runs on the calling thread. */
#ifndef BP_ORACLE_MPFR_H
#define BP_ORACLE_MPFR_H

/* stdint.h first: mpfr.h declares the intmax_t functions only after it. */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <gmp.h>
#include <mpfr.h>

#include "dtype.h"
#include "error.h"

/* Working precision of integer results: enough for the integer part of any
 * value the ops can form from 64-bit integers and doubles (start + step*i
 * of arange reaches 2^1088), so that rounding toward zero then truncating
 * equals truncating the exact value. */
#define BP_ORACLE_INT_PREC 1152
/* Output elements per thread below which splitting costs more than it
 * saves (for ops of about one MPFR call per element). */
#define BP_ORACLE_GRAIN 256
/* Precision of the operand registers: exact for every dtype, i64 included. */
#define BP_ORACLE_IN_PREC 64

/* Per-thread scratch: registers for operands and the result, sized for the
 * output dtype, plus arrays for reductions grown on demand. */
typedef struct bp_oracle_ws {
    bp_dtype_t out_dt;
    mpfr_rnd_t rnd;    /* RNDN for floats, RNDZ for integers */
    mpfr_t x, y;       /* operands, BP_ORACLE_IN_PREC bits */
    mpfr_t t;          /* exact intermediate (arange's step*i), 128 bits */
    mpfr_t r;          /* the result, at the output precision */
    mpfr_t acc, part;  /* exact accumulators (sum), resized on demand */
    mpz_t z;
    mpfr_t *va, *vb;   /* arrays of operands for sum and matmul */
    mpfr_ptr *pa, *pb;
    size_t cap;
    int64_t row;       /* matmul: the row of A held in va, or -1 */
} bp_oracle_ws_t;

/* Result precision of a float dtype (53/24/8/11); 0 for integers. */
mpfr_prec_t bp_oracle_prec(bp_dtype_t dt);

/* Element i of data (dtype dt) into v, exactly (v has >= 64 bits). */
void bp_oracle_load(mpfr_t v, bp_dtype_t dt, const void *data, size_t i);

/* Rounds ws->r, computed with rounding ws->rnd and ternary value inex, to
 * the output dtype and returns its bits (see the contract above).  NaN is
 * the canonical quiet NaN of the dtype; for integer outputs NaN and
 * infinities give the most negative integer, as x86's conversions do. */
uint64_t bp_oracle_round(bp_oracle_ws_t *ws, int inex);

/* Makes ws->va/vb (and pa/pb) hold at least n registers of prec bits. */
bp_status bp_oracle_ws_reserve(bp_oracle_ws_t *ws, size_t n, bp_error_t *err);

/* Computes output elements [begin, end).  On failure fills err and returns
 * non-zero, having stopped at the first failing element of the range. */
typedef bp_status (*bp_oracle_kernel_fn)(bp_oracle_ws_t *ws, const void *ctx,
                                         size_t begin, size_t end,
                                         bp_error_t *err);

/* Runs kernel over n output elements of dtype out_dt on up to `threads`
 * threads (contiguous chunks of at least `grain` elements).  The error
 * returned is the one of the lowest failing chunk, which is the first
 * failing element in element order whatever the thread count. */
bp_status bp_oracle_map(int threads, size_t grain, bp_dtype_t out_dt,
                        size_t n, bp_oracle_kernel_fn kernel, const void *ctx,
                        bp_error_t *err);

/* Threads the oracle may use: requested (0: one per online core), reduced
 * to 1 when MPFR's exponent range is not thread-local. */
int bp_oracle_threads(int requested);

#endif
