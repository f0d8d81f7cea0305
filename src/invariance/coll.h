/* Collectives: where all-reduce, reduce-scatter and all-gather change the
 * bits, over message sizes and collective configurations.
 *
 * A collective map belongs to one collective (all_reduce, reduce_scatter,
 * all_gather), one dtype, one reduction (sum, avg) and one rank count W,
 * computed by one engine (nccl: real ranks, one process per GPU; emulate:
 * the CPU's model of NCCL's orders, coll_emu.c).  Its cells are (message
 * size, configuration): a configuration is what NCCL is told (NCCL_ALGO,
 * NCCL_PROTO, the channel count; each may be left to NCCL) and the first
 * one of a map is the reference, normally "default" (NCCL's own choices).
 *
 * Message sizes are bytes of the whole message: the all-reduce's buffer,
 * the reduce-scatter's input (each rank receives 1/W of it), the
 * all-gather's output (each rank sends 1/W of it).  A message holds
 * n = bytes / element size elements (reduce-scatter and all-gather: n
 * rounded down to a multiple of W).
 *
 * Inputs are a pure function of (seed, rank, index), the same on every
 * engine: "values" (rank r's element i = bp_rng_normal(seed,
 * BP_COLL_STREAM + r, i, 0, 1) rounded once to the dtype, as randn on
 * every backend gives it: full significands over many exponents, like a
 * layer's partial sums, so that the order shows in the bits), "probes"
 * (the cancellation probes of coll_order.h)
 * and "bits" (raw random bit patterns, NaN payloads, subnormals and -0
 * included, for the all-gather's copy).
 *
 * Result groups: at one size, two configurations share a group exactly
 * when their results (the whole message, every element) have identical
 * bits; group 0 holds the reference's.  A boundary is where something
 * changes between two consecutive sizes: the partition of the
 * configurations into groups, or a configuration's inferred order.
 *
 * A configuration breaks invariance when its group fails the map's policy
 * against group 0, when a repeat (in the process, after other allocations)
 * or a fresh process gives other bits, when the ranks of an all-reduce or
 * all-gather disagree, or when an all-gather's output is not a bit-exact
 * copy of its inputs. */
#ifndef BP_COLL_H
#define BP_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "dtype.h"
#include "error.h"
#include "inv.h"
#include "nccl_cfg.h"
#include "policy.h"

#define BP_COLL_MAX_WORLD 64
#define BP_COLL_STREAM 0x636f6c6c00ull      /* "coll": values of rank r at + r */
#define BP_COLL_BITS_STREAM 0x626974730000ull /* "bits": all-gather inputs */

typedef enum { BP_COLL_ALL_REDUCE, BP_COLL_REDUCE_SCATTER, BP_COLL_ALL_GATHER,
               BP_COLL_NKINDS } bp_coll_kind_t;
typedef enum { BP_COLL_SUM, BP_COLL_AVG, BP_COLL_NOPS } bp_coll_redop_t;
typedef enum { BP_COLL_VALUES, BP_COLL_PROBES, BP_COLL_BITS } bp_coll_input_t;

/* "all_reduce", "reduce_scatter", "all_gather"; parse also takes
 * "allreduce", "reducescatter", "allgather" and "-" for "_". */
const char *bp_coll_kind_name(bp_coll_kind_t k);
bool bp_coll_kind_parse(const char *s, bp_coll_kind_t *out);
const char *bp_coll_redop_name(bp_coll_redop_t op);
bool bp_coll_redop_parse(const char *s, bp_coll_redop_t *out);
/* Whether the collective reduces (all-reduce, reduce-scatter). */
bool bp_coll_kind_reduces(bp_coll_kind_t k);

/* ---- message sizes --------------------------------------------------- */

typedef struct {
    uint64_t bytes;
    const char *what; /* a model size's description, or NULL */
} bp_coll_size_t;

/* A list of sizes for elements of esize bytes: comma-separated items, each
 * SIZE, A:B (the powers of two from A to B and the model sizes between
 * them: bp_coll_model_sizes) or A:B:pow2 (powers of two only); sorted,
 * deduplicated, into *out (malloc'd).  BP_EINPUT naming the item. */
bp_status bp_coll_sizes_parse(const char *s, size_t esize, bp_coll_size_t **out, size_t *n,
                              bp_error_t *err);

typedef struct {
    uint64_t elements; /* 0: bytes holds the size */
    uint64_t bytes;
    const char *what;  /* "hidden 5120 x 4096 tokens (Llama-2 13B)" */
} bp_coll_model_size_t;
/* The sizes real training sends, NULL-what-terminated. */
const bp_coll_model_size_t *bp_coll_model_sizes(void);

/* Elements of a message of `bytes` for kind over W ranks (0: too small). */
uint64_t bp_coll_elements(bp_coll_kind_t k, uint64_t bytes, size_t esize, int world);

/* ---- inputs ---------------------------------------------------------- */

/* Elements [i0, i0 + n) of rank r's input of the given kind, raw dtype
 * bits into out (n elements of dt).  probes: coll_order.h's layout for W
 * ranks. */
void bp_coll_input(bp_coll_input_t in, bp_dtype_t dt, int world, int rank, uint64_t seed,
                   uint64_t i0, uint64_t n, void *out);

#endif
