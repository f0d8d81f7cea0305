/* Probes built in C (see probe_build.h). */
#include "probe_build.h"

#include <string.h>

void bp_probe_build_init(bp_probe_build_t *b, const char *name, uint32_t dtypes)
{
    memset(b, 0, sizeof *b);
    b->p.name = (char *)name;
    b->p.description = (char *)"";
    b->p.path = (char *)name;
    b->p.dtypes = dtypes;
    b->p.ops = b->ops;
    b->p.outputs = b->outs;
    b->p.params = b->params;
}

bp_op_t *bp_probe_build_op(bp_probe_build_t *b, bp_op_kind_t k, const char *out,
                           bp_dtype_t dt)
{
    if (b->p.nops >= BP_PB_MAX_OPS)
        return NULL;
    int i = (int)b->p.nops++;
    bp_op_t *op = &b->ops[i];
    memset(op, 0, sizeof *op);
    op->kind = k;
    op->out = (char *)out;
    op->line = i + 1; /* messages name the op by its place */
    op->col = 1;
    op->has_dtype = dt != BP_NDTYPES;
    op->dtype = op->has_dtype ? dt : BP_F32;
    return op;
}

void bp_probe_build_inputs(bp_probe_build_t *b, bp_op_t *op, const int *ins, int n)
{
    if (n < 0 || b->ninputs + n > BP_PB_MAX_INPUTS)
        n = 0;
    op->inputs = &b->inputs[b->ninputs];
    op->ninputs = n;
    memcpy(op->inputs, ins, (size_t)n * sizeof *ins);
    b->ninputs += n;
}

void bp_probe_build_output(bp_probe_build_t *b, int i)
{
    if (b->p.noutputs >= BP_PB_MAX_OUTPUTS || i < 0 || (size_t)i >= b->p.nops)
        return;
    bp_output_t *o = &b->outs[b->p.noutputs++];
    o->name = b->ops[i].out;
    o->buf = i;
    bp_policy_exact(&o->policy);
}

void bp_probe_build_param(bp_probe_build_t *b, const char *name, double value)
{
    if (b->p.nparams < BP_PB_MAX_PARAMS)
        b->params[b->p.nparams++] = (bp_param_t){(char *)name, value};
}

void bp_probe_build_done(bp_probe_build_t *b)
{
    if (!b->p.noutputs && b->p.nops)
        bp_probe_build_output(b, (int)b->p.nops - 1);
    bp_probe_hash(&b->p, b->p.hash);
}

bp_arg_t bp_arg_buf(int i)
{
    return (bp_arg_t){.kind = BP_ARG_BUF, .buf = i};
}

bp_arg_t bp_arg_num(double v, bool is_int)
{
    return (bp_arg_t){.kind = BP_ARG_SCALAR, .value = v, .is_int = is_int};
}
