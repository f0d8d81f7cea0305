/* A recorded ATen op (ledger.h) written as a bitprobe probe: its tensor
 * inputs x0, x1, ... as load ops, its result y as the bitprobe op of the
 * same meaning, with the recorded result dtype spelt out.
 *
 * Mapped: div (.Tensor, .Scalar; a rounding mode is refused), mul, add
 * and sub (alpha 1), pow (every overload), reciprocal, exp, log, sin,
 * cos, tanh, sqrt, rsqrt, neg, arange (every overload), _to_copy (cast),
 * mm (matmul), sum (all, or one dimension, keepdim), cat (concat).
 * Numbers keep how Python wrote them: an int stays an int (type promotion
 * depends on it).  A 0-d tensor stays a tensor (loaded): PyTorch promotes
 * it as a number, and so does bitprobe (op.h). */
#ifndef BP_LEDGER_MAP_H
#define BP_LEDGER_MAP_H

#include "dtype.h"
#include "ledger.h"

typedef struct bp_ledger_map {
    char name[96];   /* the probe's name: ledger-<tag>-<op> */
    char *yaml;      /* the probe's text */
    bp_dtype_t dtype; /* the result's dtype */
} bp_ledger_map_t;

/* Whether aten (an op name as the ledger has it) maps to a bitprobe op. */
bool bp_ledger_map_known(const char *aten);
/* Writes op as a probe named ledger-<tag>-<op>; origin is a comment line
 * saying where it came from.  BP_EUNAVAIL when the op, one of its
 * arguments or dtypes has no bitprobe counterpart (the message says
 * which). */
bp_status bp_ledger_map(const bp_ledger_op_t *op, const char *tag, const char *origin,
                        bp_ledger_map_t *m, bp_error_t *err);
void bp_ledger_map_free(bp_ledger_map_t *m);

#endif
