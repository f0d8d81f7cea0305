/* Probes built in C rather than read from YAML: fingerprint's items and the
 * layer stack's RoPE buffers.  The builder keeps every op, output and
 * parameter in fixed storage inside itself (no allocation, nothing to
 * free) and gives the same bp_probe_t the loader does, so that the one
 * executor (bp_backend_run) runs it.  Ops are appended in order; op i
 * produces buffer i. */
#ifndef BP_PROBE_BUILD_H
#define BP_PROBE_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"

#define BP_PB_MAX_OPS 16
#define BP_PB_MAX_OUTPUTS 4
#define BP_PB_MAX_PARAMS 4
#define BP_PB_MAX_INPUTS 8 /* concat inputs, over all ops */

typedef struct bp_probe_build {
    bp_probe_t p; /* the probe; p.ops etc. point into the arrays below */
    bp_op_t ops[BP_PB_MAX_OPS];
    bp_output_t outs[BP_PB_MAX_OUTPUTS];
    bp_param_t params[BP_PB_MAX_PARAMS];
    int inputs[BP_PB_MAX_INPUTS];
    int ninputs;
} bp_probe_build_t;

/* An empty probe called name (its path in messages too) running in the
 * dtypes of the mask (bit 1u << bp_dtype_t). */
void bp_probe_build_init(bp_probe_build_t *b, const char *name, uint32_t dtypes);
/* Appends an op of kind k producing buffer `out` (a string that outlives
 * the probe); dt is its explicit dtype, BP_NDTYPES for the op's own.  The
 * rest of the op is zero: the caller sets its operands and keys.  NULL
 * when the builder is full. */
bp_op_t *bp_probe_build_op(bp_probe_build_t *b, bp_op_kind_t k, const char *out,
                           bp_dtype_t dt);
/* n concat inputs for op (set to ins), from the builder's storage. */
void bp_probe_build_inputs(bp_probe_build_t *b, bp_op_t *op, const int *ins, int n);
/* Buffer i becomes an output, with the exact policy. */
void bp_probe_build_output(bp_probe_build_t *b, int i);
void bp_probe_build_param(bp_probe_build_t *b, const char *name, double value);
/* Completes the probe: without outputs, the last op's buffer is one; sets
 * the hash. */
void bp_probe_build_done(bp_probe_build_t *b);

/* Operands: buffer i, or a Python number (is_int: written as an int). */
bp_arg_t bp_arg_buf(int i);
bp_arg_t bp_arg_num(double v, bool is_int);

#endif
