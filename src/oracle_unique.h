/* The distinct values of a tensor, for ops the oracle evaluates once per
 * distinct operand.  A unary op's correctly rounded result depends only on
 * the operand's bits, so evaluating each distinct bit pattern once and
 * copying its result to every element that holds it gives the very bits of
 * evaluating every element; and the RoPE caches repeat most of their
 * arguments (emb is concat(freqs, freqs); positions cast to bf16 collapse
 * to a few hundred values).
 *
 * Contract: after bp_oracle_unique_build(a), vals holds a's distinct bit
 * patterns in order of first occurrence (1-D, a's dtype) and slot[i] the
 * index in vals of a's element i.  Built on one thread: the result does not
 * depend on any thread count. */
#ifndef BP_ORACLE_UNIQUE_H
#define BP_ORACLE_UNIQUE_H

#include <stdint.h>

#include "buf.h"
#include "error.h"

/* Tensors smaller than this are evaluated element by element. */
#define BP_ORACLE_UNIQUE_MIN 1024

typedef struct {
    bp_buf_t vals;
    uint32_t *slot;
} bp_oracle_unique_t;

/* a: a host tensor of fewer than 2^32 elements. */
bp_status bp_oracle_unique_build(const bp_buf_t *a, bp_oracle_unique_t *u,
                                 bp_error_t *err);
/* out[i] = res[slot[i]] for every element of out (res: one result per
 * distinct value, out's dtype). */
void bp_oracle_unique_scatter(const bp_oracle_unique_t *u, const bp_buf_t *res,
                              bp_buf_t *out);
void bp_oracle_unique_free(bp_oracle_unique_t *u);

#endif
