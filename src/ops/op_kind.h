/* The op kinds alone: bp_op_kind_t, generated from op_list.h.  Apart from
 * op.h so that the CUDA kernels (kernels/bpk.h) can name ops by the same
 * codes without the rest of the core's declarations. */
#ifndef BP_OP_KIND_H
#define BP_OP_KIND_H

typedef enum {
#define BP_OP(ID, ...) BP_OP_##ID,
#include "op_list.h"
#undef BP_OP
    BP_OP_COUNT
} bp_op_kind_t;

#endif
