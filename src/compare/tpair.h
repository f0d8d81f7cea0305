/* Pairing two tensor sets by meaning (what diff compares with what).
 *
 * Saved runs pair by what a tensor is, never by file name: results pair
 * by (probe, output, dtype), and backends by key, then by name (cpu with
 * cpu, cuda with cuda, oracle with oracle: "cpu-sleef" with "cpu-libm",
 * "cuda-sm90" with "cuda-sm80"); when each side holds one backend they
 * pair whatever their names (a CPU run against a CUDA run).  --a and --b
 * pick the backend of each side by key or name.  Other sets pair by
 * tensor name; two single-tensor sets pair whatever the names.  --map
 * renames A's tensors first: "NAME_A=NAME_B", or with a trailing '*' on
 * both sides a prefix ("model.*=module.model.*").
 *
 * A pair is compared, or is a result of its own: only in A, only in B, or
 * not comparable (a dtype bitprobe does not read, other shapes, other
 * dtypes; with cast, a dtype that widens exactly to the other's is
 * compared in the wider one: fp16/bf16/fp8 with fp32, fp8 with fp16 ...). */
#ifndef BP_TPAIR_H
#define BP_TPAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "tset.h"

typedef enum { BP_PAIR_COMPARE, BP_PAIR_ONLY_A, BP_PAIR_ONLY_B, BP_PAIR_NOT_COMPARABLE } bp_pair_kind_t;

typedef struct {
    bp_pair_kind_t kind;
    const bp_tent_t *a, *b;  /* NULL on the side a tensor is missing from */
    bp_dtype_t dt;           /* compared in (compare), else a side's dtype */
    bool widen_a, widen_b;   /* that side is widened to dt (cast) */
    char why[512];           /* not comparable: why; compare: a cast note */
    const char *key_a, *key_b; /* saved runs: the backend keys, else NULL */
} bp_pair_t;

typedef struct {
    char *from, *to;
    bool prefix;
} bp_map_t;

typedef struct {
    const char *pick_a, *pick_b; /* --a, --b: a backend key or name */
    const bp_map_t *maps;
    size_t nmaps;
    bool cast;
} bp_pair_opts_t;

/* Two backends paired from saved runs. */
typedef struct {
    const char *key_a, *key_b;
} bp_keypair_t;

typedef struct {
    bp_pair_t *p;
    size_t n, cap;
    bp_keypair_t *keys;
    size_t nkeys;
} bp_pairs_t;

/* Parses "A=B" or "A*=B*" (strings kept, not copied); false: not a map. */
bool bp_map_parse(char *arg, bp_map_t *out);
/* Pairs a with b; errors: BP_EINPUT for a --a/--b that names nothing. */
bp_status bp_pair_sets(const bp_tset_t *a, const bp_tset_t *b, const bp_pair_opts_t *o,
                       bp_pairs_t *out, bp_error_t *err);
void bp_pairs_free(bp_pairs_t *p);

#endif
