/* Two op ledgers compared: which op introduced a difference, which ones
 * inherited it (ledger_align.c pairs the ops, ledger_diff.c classifies
 * them, ledger_json.c serialises the result).
 *
 * A tensor of one side is "present" on the other when a tensor with the
 * same hash, dtype and shape appears anywhere in the other ledger.  Two
 * paired ops with the same tensor counts and shapes are compared position
 * by position (in[k] with in[k], out[k] with out[k]); other pairs, and ops
 * on one side only, by presence.  Tensors without a hash (uninitialised
 * memory, out= arguments) are left out of every comparison, and so is, in
 * a comparison by presence, a 0-d input the other side lacks: a number
 * wrapped as a tensor (PyTorch 1.13 runs base ** x as lift_fresh(base)
 * and pow.Tensor_Tensor, 2.x passes base to pow.Scalar as a number).
 *
 * Status of an entry:
 *  identical       no input and no output differs (a one-sided op whose
 *                  outputs are all present on the other side too)
 *  introduced      the inputs are identical, an output differs: the op
 *                  made the difference
 *  inherited       an input already differed, and an output differs
 *  absorbed        an input differed but the outputs are identical
 *  not comparable  no output can be compared (none hashed), or an op on
 *                  one side only whose new outputs nothing shows to matter
 * Paired ops are where the two runs are observed.  Ops on one side only
 * (a cast one run added, another decomposition) are judged by what they
 * feed: from each differing input of an inherited or absorbed paired op,
 * and from each new result that no later op reads, the producers are
 * followed back through one-sided ops; the first ones whose inputs are all
 * present on the other side introduced the difference, those between
 * inherited it.  An op whose differing input no recorded op produced (a
 * parameter, a program input) is flagged external: the difference came
 * from outside the recording. */
#ifndef BP_LEDGER_DIFF_H
#define BP_LEDGER_DIFF_H

#include <jansson.h>

#include "ledger.h"

typedef struct bp_ledger_pair {
    long a, b;  /* op indices; -1: the op is on the other side only */
    bool fuzzy; /* paired by base name and module inside a replaced block */
} bp_ledger_pair_t;

/* The alignment of A's and B's ops, in a merged order that keeps each
 * side's order. */
bp_status bp_ledger_align(const bp_ledger_t *A, const bp_ledger_t *B, bp_ledger_pair_t **pairs,
                          size_t *npairs, bp_error_t *err);

typedef enum {
    BP_LOP_IDENTICAL,
    BP_LOP_INTRODUCED,
    BP_LOP_INHERITED,
    BP_LOP_ABSORBED,
    BP_LOP_NOT_COMPARABLE,
    BP_LOP_NSTATUS
} bp_lop_status_t;

typedef struct bp_ledger_entry {
    long a, b;
    bool fuzzy;
    bool by_presence;    /* compared by presence, not position */
    bool via_provenance; /* introduced: found from an inheriting op's input */
    bool external;       /* a differing input that no recorded op produced */
    bool args_differ;    /* paired ops called with other arguments (scalars,
                            dtype=, device=: the call text differs) */
    bp_lop_status_t status;
    uint32_t in_differ, out_differ; /* differing tensors (both sides) */
    long from_a, from_b; /* inherited: the op that produced the first
                            differing input on each side, or -1 */
} bp_ledger_entry_t;

typedef struct bp_ledger_module {
    const char *module;
    size_t ops, count[BP_LOP_NSTATUS];
    size_t outs, outs_differ;
    size_t first;        /* entry where it first differs, or SIZE_MAX */
} bp_ledger_module_t;

typedef struct bp_ledger_diff {
    const bp_ledger_t *A, *B;
    bp_ledger_entry_t *e;
    size_t n;
    bool exact;          /* every op paired with the one at its position */
    size_t paired, fuzzy, only_a, only_b;
    size_t count[BP_LOP_NSTATUS];
    size_t first_introduced, first_differing; /* entries, or SIZE_MAX */
    bp_ledger_module_t *mods; /* in order of first appearance */
    size_t nmods;
    struct bp_ledger_sets *sets; /* presence sets (ledger_diff.c) */
} bp_ledger_diff_t;

/* Compares two ledgers (they must name one hash). */
bp_status bp_ledger_diff(const bp_ledger_t *A, const bp_ledger_t *B, bp_ledger_diff_t *out,
                         bp_error_t *err);
/* Reads the ledgers at pa and pb and compares them; on failure nothing
 * is left to free. */
bp_status bp_ledger_diff_files(const char *pa, const char *pb, bp_ledger_t *A, bp_ledger_t *B,
                               bp_ledger_diff_t *d, bp_error_t *err);
void bp_ledger_diff_free(bp_ledger_diff_t *d);
const char *bp_lop_status_name(bp_lop_status_t s);
/* Whether tensor k of the entry's side differs (side 0: A, 1: B; k <
 * nin: an input, else output k - nin). */
bool bp_ledger_entry_differs(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e, int side,
                             uint32_t k);
/* The entry's op and module, from B when it has one. */
const bp_ledger_op_t *bp_ledger_entry_op(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e);
/* The entry whose A (side 0) or B op is index i, or SIZE_MAX. */
size_t bp_ledger_diff_find(const bp_ledger_diff_t *d, int side, long i);

/* The diff as JSON (ledger_json.c): sides, alignment, counts, the first
 * introduced op, every entry that is not identical (at most max_ops;
 * SIZE_MAX: all) and the modules. */
json_t *bp_ledger_diff_json(const bp_ledger_diff_t *d, size_t max_ops);

#endif
