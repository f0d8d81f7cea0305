/* The operation set: kinds, their names and attributes, and shape/dtype
 * inference.  A probe is an ordered list of these; each produces one named
 * buffer.  Backends implement one function per kind (backend.h). */
#ifndef BP_OP_H
#define BP_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dtype.h"
#include "error.h"

typedef enum {
    BP_OP_TENSOR,      /* literal values (values:, optional shape:) */
    BP_OP_ARANGE,      /* start, end, step */
    BP_OP_UNIFORM,     /* counter-based generator: shape, seed, stream, low, high */
    BP_OP_CAST,        /* a -> dtype */
    BP_OP_ADD,         /* a, b: tensor or scalar each, at least one tensor */
    BP_OP_SUB,
    BP_OP_MUL,
    BP_OP_DIV,         /* formulation: true | reciprocal */
    BP_OP_POW,
    BP_OP_RECIPROCAL,  /* a */
    BP_OP_EXP,
    BP_OP_LOG,
    BP_OP_SIN,
    BP_OP_COS,
    BP_OP_TANH,
    BP_OP_SQRT,
    BP_OP_RSQRT,
    BP_OP_NEG,
    BP_OP_OUTER,       /* a, b: 1-D */
    BP_OP_CONCAT,      /* inputs: [..], axis */
    BP_OP_SLICE,       /* a, axis, start, end, step */
    BP_OP_MATMUL,      /* a [m,k], b [k,n] */
    BP_OP_SUM,         /* a, optional axis; formulation: sequential | pairwise */
    BP_OP_ROTATE_HALF, /* a: cat(-x2, x1) over the last dimension */
    BP_OP_COUNT
} bp_op_kind_t;

typedef enum {
    BP_FORM_DEFAULT,    /* what PyTorch does on the backend's device */
    BP_FORM_TRUE,       /* div: correctly rounded a / b */
    BP_FORM_RECIPROCAL, /* div: a * (1/b), reciprocal rounded in opmath */
    BP_FORM_SEQUENTIAL, /* sum: left to right */
    BP_FORM_PAIRWISE    /* sum: pairwise halving */
} bp_form_t;

typedef enum { BP_ARG_NONE, BP_ARG_BUF, BP_ARG_SCALAR } bp_arg_kind_t;

typedef struct {
    bp_arg_kind_t kind;
    int buf;      /* index of the op producing it, for BP_ARG_BUF */
    double value; /* for BP_ARG_SCALAR (a Python number: double) */
    bool is_int;  /* BP_ARG_SCALAR written as an integer (a Python int):
                     decides type promotion with integer tensors */
} bp_arg_t;

typedef struct bp_op {
    bp_op_kind_t kind;
    char *out;     /* name of the buffer it produces */
    int line, col; /* 1-based position of the op in its YAML file */
    bp_arg_t a, b;
    int ninputs;   /* concat */
    int *inputs;
    bool has_dtype;
    bool dtype_is_run; /* dtype: $dtype (the dtype the probe runs in) */
    bp_dtype_t dtype;
    bp_form_t form;
    double start, end, step;     /* arange */
    bool has_axis;
    int axis;                    /* concat, slice, sum (negative: from the end) */
    int64_t s_start, s_end, s_step; /* slice; s_end INT64_MAX: to the end */
    int ndim;                    /* tensor, uniform */
    int64_t shape[BP_MAXDIM];
    double *values;              /* tensor */
    size_t nvalues;
    uint64_t seed, stream;       /* uniform */
    double low, high;
} bp_op_t;

/* What a buffer will be: inferred before anything runs. */
typedef struct {
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[BP_MAXDIM];
} bp_meta_t;

const char *bp_op_name(bp_op_kind_t k);
bool bp_op_lookup(const char *name, bp_op_kind_t *k);
const char *bp_form_name(bp_form_t f);

/* Output dtype and shape of op, given the metas of the buffers it reads
 * (metas[j] for j < its index) and the dtype the probe runs in.  Type
 * promotion follows PyTorch: float tensors beat scalars; bf16 with f16 gives
 * f32; an integer tensor with a float scalar, or in a true division or a
 * float function, gives f32 (the default dtype).
 * Two integer tensors give i64 (i32 with i32 stays i32); an integer tensor
 * with an integer scalar keeps its dtype; sum of integers gives i64; matmul
 * does not promote (one float dtype for both operands, as torch.matmul).
 * Without dtype, arange and tensor give i64 when every number is integral,
 * else f32 (the loader decides from how the numbers are written, as Python
 * does, and sets dtype); uniform gives f32.  An explicit dtype (dtype_is_run:
 * the run dtype) replaces the result dtype; div and the float functions
 * (reciprocal exp log sin cos tanh sqrt rsqrt) and uniform refuse integer
 * ones.
 * Shapes: elementwise ops take two tensors of exactly one shape or a tensor
 * and a scalar ("shape mismatch" otherwise: no broadcasting); outer [n],[m]
 * -> [n,m]; concat joins along axis (others equal); slice as Python's
 * a[start:end:step] along axis; matmul [m,k]x[k,n] -> [m,n]; sum drops axis,
 * or gives a 0-D result without one; arange has bp_arange_length elements;
 * rotate_half needs an even last dimension. */
bp_status bp_op_infer(const bp_op_t *op, const bp_meta_t *metas,
                      bp_dtype_t run_dtype, bp_meta_t *out, bp_error_t *err);

/* The multiplier of `tensor / number` in the reciprocal formulation (what
 * PyTorch's CUDA kernel uses by default): 1.0 / b taken on the number's
 * double value, then rounded once to opmath (float for f32/bf16/f16,
 * double for f64), as BinaryDivTrueKernel.cu does with
 * iter.scalar_value<double>.  Taking 1.0f / (float)b instead differs for
 * b = 0.001 (999.99994 against 1000). */
double bp_div_scalar_reciprocal(double b, bp_dtype_t dt);

/* PyTorch's arange length: ceil((end - start) / step) computed in double. */
bp_status bp_arange_length(double start, double end, double step,
                           int64_t *n, bp_error_t *err);

/* A slice's first index and length along a dimension of size dim, with
 * Python's rules: negative start/end count from the end, both are clamped
 * to [0, dim], step > 0 (INT64_MAX as end: to the end). */
void bp_slice_resolve(const bp_op_t *op, int64_t dim, int64_t *first,
                      int64_t *len);

#endif
