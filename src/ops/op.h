/* The operation set: the facts about each op (generated from op_list.h),
 * the op record a probe holds, and shape/dtype inference.  A probe is an
 * ordered list of ops; each produces one named buffer.  Backends implement
 * each op in a table keyed by bp_op_kind_t (backend.h). */
#ifndef BP_OP_H
#define BP_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dtype.h"
#include "error.h"

/* op_list.h's columns become these enums; its top says what each means. */
#define BP_K(ID) (UINT64_C(1) << BP_KEY_##ID)
#define BP_FM(ID) (1u << BP_FORM_##ID)

/* Keys an op may take beyond out and op (op_list.h's BP_KEY section). */
typedef enum {
#define BP_KEY(ID, NAME, TYPE) BP_KEY_##ID,
#include "op_list.h"
#undef BP_KEY
    BP_KEY_COUNT
} bp_key_t;

/* What a key's value must be. */
typedef enum {
    BP_KT_BUFFER,  /* a buffer name (or a number, where the op says T|S) */
    BP_KT_BUFFERS, /* a list of buffer names */
    BP_KT_NUMBER,
    BP_KT_NUMBERS, /* a list of numbers */
    BP_KT_INTEGER,
    BP_KT_SHAPE,   /* a list of integers >= 0 */
    BP_KT_DIMS,    /* a list of integers (-1 or a negative dimension allowed) */
    BP_KT_DTYPE,
    BP_KT_FORM,    /* one of the op's formulations */
    BP_KT_BOOL     /* true or false */
} bp_key_type_t;

typedef enum {
#define BP_FORM(ID, NAME) BP_FORM_##ID,
#include "op_list.h"
#undef BP_FORM
    BP_FORM_COUNT
} bp_form_t;

typedef enum {
    BP_OPD_NONE,
    BP_OPD_A,     /* a: a tensor */
    BP_OPD_AB,    /* a, b: tensors */
    BP_OPD_AB_TS, /* a, b: a tensor or a number each, at least one tensor */
    BP_OPD_INPUTS, /* inputs: a list of tensors */
    BP_OPD_COND_AB, /* cond (a tensor, held as inputs[0]), a, b: a tensor or
                       a number each */
    BP_OPD_A_BOUNDS /* a: a tensor; min, max: tensors, held as inputs (min
                       first), either may be absent but not both
                       (has_min, has_max say which) */
} bp_opd_t;

typedef enum {
    BP_DT_LITERAL,
    BP_DT_F32,
    BP_DT_SAME,
    BP_DT_PROMOTE,
    BP_DT_ACC,
    BP_DT_MATMUL,
    BP_DT_B,
    BP_DT_BOOL
} bp_dtype_rule_t;

typedef enum {
    BP_KIND_CREATION,
    BP_KIND_ELEMWISE,
    BP_KIND_LAYOUT,
    BP_KIND_REDUCTION,
    BP_KIND_FUSED
} bp_op_class_t;

enum {
    BP_OPF_FLOAT_FN = 1u << 0,
    BP_OPF_INT = 1u << 1,
    BP_OPF_COSTLY = 1u << 2,
    BP_OPF_BOOL = 1u << 3,
    BP_OPF_FP8 = 1u << 4,
    BP_OPF_VIEWS = 1u << 5, /* a GEMM (and sdpa, whose products are): a device
                              backend reads its operands as
                              PyTorch's strided views (strided.h), a layout
                              op feeding it folded into its strides */
    BP_OPF_FLOAT_IN = 1u << 6 /* its tensor operands must be floats: PyTorch
                                 has no integer kernel for it and refuses them
                                 (softmax, mean, var, the norms) */
};
#define BP_OPF_NFLAGS 7

#include "op_kind.h" /* bp_op_kind_t: BP_OP_ADD, ... */

typedef struct {
    const char *name;
    bp_opd_t operands;
    uint64_t keys;     /* every key it takes, operands, dtype and
                          formulation included (BP_K bits) */
    uint64_t required; /* the keys that must be present */
    unsigned forms;    /* BP_FM bits; BP_FORM_DEFAULT is always accepted */
    bp_dtype_rule_t dtype;
    bp_op_class_t kind;
    unsigned flags;    /* BP_OPF_* */
    const char *torch; /* what it computes, in PyTorch's words */
} bp_op_info_t;

/* concat takes at most BP_OP_MAXINPUTS inputs; no op reads more than
 * BP_OP_MAXREADS buffers. */
#define BP_OP_MAXINPUTS 64
#define BP_OP_MAXREADS (2 + BP_OP_MAXINPUTS)

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
    int ninputs;   /* concat; where: 1, its cond */
    int *inputs;
    bool has_dtype;
    bool dtype_is_run; /* dtype: $dtype (the dtype the probe runs in) */
    bp_dtype_t dtype;
    bp_form_t form;
    double start, end, step;     /* arange */
    bool has_axis;
    int axis;                    /* concat, slice, sum (negative: from the end) */
    bool keepdim;                /* reductions: keep the reduced dims as 1 */
    bool has_correction;         /* var: correction (1 unless given) */
    double correction;
    bool has_eps;                /* rms_norm, layer_norm: eps (defaults:
                                    bp_op_eps) */
    double eps;
    bool is_causal;              /* sdpa: lower-triangular mask */
    bool has_scale;              /* sdpa: scale (1/sqrt(E) unless given) */
    double scale;
    int64_t s_start, s_end, s_step; /* slice; s_end INT64_MAX: to the end */
    int ndim;                    /* tensor, uniform; reshape, view, expand */
    int64_t shape[BP_MAXDIM];    /* (those may hold -1) */
    int ndims;                   /* permute: dims; transpose: dim0, dim1 */
    int64_t dims[BP_MAXDIM];
    double *values;              /* tensor */
    size_t nvalues;
    uint64_t seed, stream;       /* uniform, randn, normal */
    double low, high;
    double mean, std;            /* normal (randn: 0, 1) */
    double beta, alpha;          /* baddbmm (1, 1 unless given) */
    bool has_min, has_max;       /* clamp; clamp_tensor: which bounds */
    double min, max;
    int64_t decimals;            /* round */
    double value;                /* full */
    int64_t steps;               /* linspace */
    void *data;                  /* load: the tensor's bytes, read next to
                                    the probe file (bp_probe_load), or NULL */
    size_t ndata;
} bp_op_t;

/* What a buffer will be: inferred before anything runs. */
typedef struct {
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[BP_MAXDIM];
} bp_meta_t;

/* The facts about op k (NULL for a kind out of range). */
const bp_op_info_t *bp_op_info(bp_op_kind_t k);
const char *bp_op_name(bp_op_kind_t k);
bool bp_op_lookup(const char *name, bp_op_kind_t *k);
/* The op name nearest a misspelt one, or NULL when none is near. */
const char *bp_op_suggest(const char *name);
/* Whether op k has every flag in flags (BP_OPF_*). */
bool bp_op_has(bp_op_kind_t k, unsigned flags);
/* Whether op k takes key (its operands, dtype and formulation included). */
bool bp_op_takes(bp_op_kind_t k, bp_key_t key);
/* Whether op k accepts formulation f (BP_FORM_DEFAULT always). */
bool bp_op_form_ok(bp_op_kind_t k, bp_form_t f);
/* The buffers op reads (a, b, then inputs): their op indices into idx
 * (room for BP_OP_MAXREADS), their count returned.  The one answer to
 * "which buffers does this op read" (executor, memo, explain). */
int bp_op_reads(const bp_op_t *op, int *idx);

/* sdpa's scale: the op's, else 1 / sqrt(e) (sdp::calculate_scale, in
 * double); e is q's last dimension. */
double bp_op_sdpa_scale(const bp_op_t *op, int64_t e);

/* rms_norm's and layer_norm's eps: the op's, else rms_norm's default
 * (std::numeric_limits<opmath>::epsilon(): FLT_EPSILON, DBL_EPSILON for
 * fp64) or layer_norm's (1e-5, torch.nn.functional.layer_norm's). */
double bp_op_norm_eps(const bp_op_t *op, bp_dtype_t dt);

const char *bp_form_name(bp_form_t f);
bool bp_form_lookup(const char *name, bp_form_t *f);
const char *bp_key_name(bp_key_t key);
bp_key_type_t bp_key_type(bp_key_t key);
const char *bp_key_type_name(bp_key_type_t t);
const char *bp_opd_name(bp_opd_t o);
const char *bp_dtype_rule_name(bp_dtype_rule_t r);
const char *bp_op_class_name(bp_op_class_t c);
/* The name of flag bit i, 0 <= i < BP_OPF_NFLAGS ("float_fn", ...). */
const char *bp_op_flag_name(int i);

/* Output dtype and shape of op, given the metas of the buffers it reads
 * (metas[j] for j < its index) and the dtype the probe runs in.  The dtype
 * follows the op's rule (op_list.h, DTYPE), which is PyTorch's type
 * promotion: float tensors beat scalars; bf16 with f16 gives f32; two
 * integer tensors give i64 (i32 with i32 stays i32); an integer tensor
 * with an integer scalar keeps its dtype, with a float scalar gives f32 (the
 * default dtype); sum of integers gives i64; matmul does not promote (one
 * float dtype for both operands, as torch.matmul).  A float function
 * (BP_OPF_FLOAT_FN) turns an integer result into f32.  Without dtype,
 * arange and tensor give i64 when every number is integral, else f32 (the
 * loader decides from how the numbers are written, as Python does, and sets
 * dtype); uniform gives f32.  An explicit dtype (dtype_is_run: the run
 * dtype) replaces the result dtype; an op without BP_OPF_INT refuses an
 * integer one.
 * Shapes: elementwise ops broadcast their tensors as PyTorch does
 * (torch.broadcast_shapes; "shape mismatch" otherwise); outer [n],[m] ->
 * [n,m]; concat joins along axis (others equal); slice as Python's
 * a[start:end:step] along axis; matmul [...,m,k]x[k,n] -> [...,m,n]; sum drops
 * axis, or every dimension without one (keepdim: keeps them as 1);
 * arange has bp_arange_length elements; rotate_half needs an even last
 * dimension. */
bp_status bp_op_infer(const bp_op_t *op, const bp_meta_t *metas,
                      bp_dtype_t run_dtype, bp_meta_t *out, bp_error_t *err);

/* PyTorch's result type of op's operands (torch.result_type): n tensor
 * operands of dtypes[k] with ndims[k] dimensions, and op's numbers (its
 * a and b where they are scalars).  The PROMOTE rule, and the dtype a
 * comparison computes in. */
bp_dtype_t bp_op_promote(const bp_op_t *op, int n, const bp_dtype_t *dtypes,
                         const int *ndims);

/* The multiplier of `tensor / number` in the reciprocal formulation (what
 * PyTorch's CUDA kernel uses by default): 1.0 / b taken on the number's
 * double value, then rounded once to opmath (float for f32/bf16/f16,
 * double for f64), as BinaryDivTrueKernel.cu does with
 * iter.scalar_value<double>.  Taking 1.0f / (float)b instead differs for
 * b = 0.001 (999.99994 against 1000). */
double bp_div_scalar_reciprocal(double b, bp_dtype_t dt);

/* PyTorch's arange length: ceil((end - start) / step) computed in double. */
/* torch.linspace's start, end and step (steps >= 2) in dtype dt, as ATen
 * computes them on the host (RangeFactoriesKernel.cpp, RangeFactories.cu):
 * start and end converted to dt, step = (end - start) / (steps - 1) with
 * each operation rounded to dt. */
void bp_linspace_params(bp_dtype_t dt, double start, double end, int64_t steps,
                        double *s, double *e, double *step);

bp_status bp_arange_length(double start, double end, double step,
                           int64_t *n, bp_error_t *err);

/* A slice's first index and length along a dimension of size dim, with
 * Python's rules: negative start/end count from the end, both are clamped
 * to [0, dim], step > 0 (INT64_MAX as end: to the end). */
void bp_slice_resolve(const bp_op_t *op, int64_t dim, int64_t *first,
                      int64_t *len);

#endif
