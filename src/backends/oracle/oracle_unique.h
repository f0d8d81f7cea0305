/* The distinct values of a tensor, for ops the oracle evaluates once per
 * distinct operand.  A unary op's correctly rounded result depends only on
 * the operand's bits, so evaluating each distinct bit pattern once and
 * copying its result to every element that holds it gives the very bits of
 * evaluating every element; and the RoPE caches repeat most of their
 * arguments (emb is concat(freqs, freqs); positions cast to bf16 collapse
 * to a few hundred values).
 *
 * The same holds across ops: the oracle keeps the results it computed
 * (bp_oracle_cache_t, keyed by op kind and formulation, operand dtype and
 * bits, output dtype: gelu's erf and tanh forms are two functions), and a
 * later op on a value seen before takes the kept result:
 * rope-llama2-zero-init's fp32 caches and rope-apply's are rope-llama2's
 * values again.
 *
 * Contract: after bp_oracle_unique_build(a), vals holds a's distinct bit
 * patterns in order of first occurrence (1-D, a's dtype) and slot[i] the
 * index in vals of a's element i.  A cached result is the one the kernel
 * computed for the same key, whichever thread kept it: the results do
 * not depend on any thread count nor on which probe computed a value
 * first. */
#ifndef BP_ORACLE_UNIQUE_H
#define BP_ORACLE_UNIQUE_H

#include <stdbool.h>
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

/* Results kept across ops, for operand and output dtypes of at most 4
 * bytes; at most BP_ORACLE_CACHE_MAX results (then no more are added).
 * Safe to use from several threads at once (probes run beside each other
 * on one oracle): which of them keeps a result first changes no result,
 * a kept result being the one its key always computes. */
#define BP_ORACLE_CACHE_MAX ((size_t)1 << 21)
typedef struct bp_oracle_cache bp_oracle_cache_t;

bp_oracle_cache_t *bp_oracle_cache_new(void);
void bp_oracle_cache_free(bp_oracle_cache_t *c);
/* Whether results of kind from in_dt to out_dt can be kept at all. */
bool bp_oracle_cache_fits(bp_dtype_t in_dt, bp_dtype_t out_dt);
/* The `kind` of every function below: the op kind, with its formulation
 * in bits 8-15. */
static inline int bp_oracle_cache_kind(int op_kind, int form)
{
    return op_kind | form << 8;
}
/* The kept result of op kind on operand bits `in` (in_dt) rounded to
 * out_dt into *out; false when there is none. */
bool bp_oracle_cache_get(bp_oracle_cache_t *c, int kind, bp_dtype_t in_dt,
                         uint64_t in, bp_dtype_t out_dt, uint64_t *out);
/* Makes room for n more results at once (no growth while they are put;
 * silently less when out of memory). */
void bp_oracle_cache_reserve(bp_oracle_cache_t *c, size_t n);
/* Keeps a result (silently not when full or out of memory). */
void bp_oracle_cache_put(bp_oracle_cache_t *c, int kind, bp_dtype_t in_dt, uint64_t in,
                         bp_dtype_t out_dt, uint64_t out);
/* For a unary op on u's distinct values: res[k] receives the kept result
 * of value k where there is one; the others are moved to the front of vals
 * (in place, order kept) and their indices k into miss.  Returns how many
 * there are.  Without kept results possible (c NULL, wider dtypes) every
 * value is a miss.  vals and res: dtypes of at most 4 bytes. */
size_t bp_oracle_cache_lookup(bp_oracle_cache_t *c, int kind, bp_buf_t *vals,
                              bp_buf_t *res, uint32_t *miss);
/* Then, with got[m] computed for in[m] (m < nt, the front of vals):
 * res[miss[m]] = got[m], and the results are kept (res and miss NULL: only
 * kept). */
void bp_oracle_cache_insert(bp_oracle_cache_t *c, int kind, const bp_buf_t *in,
                            const bp_buf_t *got, const uint32_t *miss, size_t nt,
                            bp_buf_t *res);
/* Results kept. */
size_t bp_oracle_cache_size(bp_oracle_cache_t *c);

#endif
