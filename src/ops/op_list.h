/* Every op bitprobe knows, one line each: the one home of what an op is.
 *
 * An X-macro list in the style of jq's opcode_list.h, not an ordinary
 * header: op.h and op.c include it with BP_KEY, BP_FORM or BP_OP defined
 * to build the enums, the name tables and the per-op facts; each section
 * is read only when its macro is defined.  Adding an op is a line here,
 * its formulation in each backend's op table, its kernel and its test
 * (DEVELOPERS.md, "Adding an op").
 *
 * BP_KEY(ID, NAME, TYPE): a key an op may take in YAML, beyond the ones
 *   every op has (out, op, dtype).  TYPE is what the value must be
 *   (bp_key_type_t: BUFFER, BUFFERS, NUMBER, NUMBERS, INTEGER, SHAPE, DIMS,
 *   DTYPE, FORM, BOOL).  Keys are listed in unknown-key messages in this order.
 *
 * BP_FORM(ID, NAME): a formulation (where frameworks compute an op
 *   differently).  The order is part of every probe's hash: append only.
 *
 * BP_OP(ID, NAME, OPERANDS, KEYS, REQUIRED, FORMS, DTYPE, KIND, FLAGS, TORCH)
 *   ID        BP_OP_<ID>.  The order is part of every probe's hash
 *             (probe.c hashes the enum value): append new ops at the end.
 *   NAME      the `op:` value in YAML.
 *   OPERANDS  the buffers it reads (bp_opd_t): NONE; A (a, a tensor);
 *             AB (a and b, tensors); AB_TS (a and b, each a tensor or a
 *             number, at least one a tensor); INPUTS (a list of tensors);
 *             COND_AB (cond, a bool tensor, and a and b, each a tensor or
 *             a number: torch.where); A_BOUNDS (a, and min and max,
 *             tensors, at least one of them: torch.clamp's Tensor form).
 *   KEYS      its other keys, BP_K(ID) bits (its operands' keys, dtype,
 *             and formulation where it has FORMS, are implied); REQUIRED
 *             the keys that must be present (operands always must).
 *   FORMS     its formulations, BP_FM(ID) bits: it takes `formulation`
 *             with one of them or `default` (0: no formulation key).
 *   DTYPE     the result dtype without `dtype:` (bp_dtype_rule_t):
 *             LITERAL  i64 if every number is written as an integer, else
 *                      fp32 (torch.tensor, torch.arange)
 *             F32      fp32
 *             SAME     a's dtype
 *             PROMOTE  torch.promote_types over the operands, a Python
 *                      number lifting only an integer tensor (to fp32, if
 *                      written as a float)
 *             ACC      a's dtype, integers summed in i64 (torch.sum)
 *             MATMUL   a's dtype; both operands one float dtype, no promotion
 *             B        b's dtype (embedding: the weight's)
 *             BOOL     bool (comparisons: computed in the operands'
 *                      promoted dtype, as PROMOTE says)
 *   KIND      CREATION, ELEMWISE (one output element from the same element
 *             of each operand), LAYOUT (moves elements), REDUCTION (one
 *             output element from many), FUSED.
 *   FLAGS     BP_OPF_* (op.h): FLOAT_FN (an integer result becomes fp32,
 *             and no integer dtype may be asked for); INT (integer results
 *             are computed, exactly and wrapping); COSTLY (the oracle's
 *             MPFR evaluation costs far more than finding repeated
 *             operands: it evaluates each distinct value once); BOOL
 *             (reads or makes bool buffers); FP8 (reads or makes the fp8
 *             storage dtypes, which PyTorch only converts and moves);
 *             VIEWS (a GEMM: a device backend reads its operands through
 *             the strides PyTorch's views of them have, so that a
 *             transpose feeding it reaches cuBLAS as a transpose flag);
 *             FLOAT_IN (its tensor operands must be floats, unless dtype
 *             asks for a float result: PyTorch has no integer kernel for
 *             it and refuses integers, an empty tensor aside).
 *             Without BOOL or FP8 an op refuses those dtypes.
 *   TORCH     what it computes, in PyTorch's words (bitprobe list --ops).
 *
 * BP_FN(ID, SLEEF, U35, AVX512, MPFR, CUDA): an ELEMWISE op of one float
 *   operand (OPERANDS A, FLAGS FLOAT_FN) that every backend computes with
 *   one library function, its entries generated from this row: the CPU's
 *   vml path (bp_cpu_op_unary: Vectorized<T>::SLEEF, i.e.
 *   Sleef_<SLEEF>f8_u10avx2 and the other builds, SLEEF's scalar builds and
 *   libm's function of the same name), the oracle's mpfr_<MPFR>, the CUDA
 *   kernel's <CUDA>f (float opmath) and <CUDA> (double) in elem.cu.
 *   U35       u35 where SLEEF has a _u35 build the u35 math mode selects,
 *             u10 where it has none.
 *   AVX512    1 where ATen builds the kernel for AVX-512 too (the _u10avx512f
 *             entry points serve the AVX512 capability), 0 where it does not.
 *   An op whose entry points need repair (exp, log1p, erf: SLEEF 3.8's
 *   bounds) or whose formula is not one function keeps written entries.
 *
 * BP_FN2(ID, SLEEF, U35, AVX512, MPFR, CUDA): the same for an ELEMWISE op
 *   of two float tensors (OPERANDS AB, broadcast), as ATen's
 *   cpu_kernel_vec runs it: Vectorized<T>::SLEEF on the elements of whole
 *   registers, std::SLEEF (libm) on the rest; mpfr_<MPFR>(r, a, b); <CUDA>f
 *   and <CUDA> in binary.cu.  AVX512 is 1 where ATen's AVX512 capability
 *   runs the kernel in 512-bit registers (the tail is then what 16 fp32
 *   lanes leave), 0 where it runs the AVX2 kernel. */

#ifdef BP_KEY
BP_KEY(A, "a", BUFFER)
BP_KEY(B, "b", BUFFER)
BP_KEY(INPUTS, "inputs", BUFFERS)
BP_KEY(VALUES, "values", NUMBERS)
BP_KEY(SHAPE, "shape", SHAPE)
BP_KEY(SEED, "seed", INTEGER)
BP_KEY(STREAM, "stream", INTEGER)
BP_KEY(LOW, "low", NUMBER)
BP_KEY(HIGH, "high", NUMBER)
BP_KEY(AXIS, "axis", INTEGER)
BP_KEY(KEEPDIM, "keepdim", BOOL)
BP_KEY(START, "start", NUMBER)
BP_KEY(END, "end", NUMBER)
BP_KEY(STEP, "step", NUMBER)
BP_KEY(ISTART, "start", INTEGER)
BP_KEY(IEND, "end", INTEGER)
BP_KEY(ISTEP, "step", INTEGER)
BP_KEY(VSHAPE, "shape", DIMS)
BP_KEY(DIMS, "dims", DIMS)
BP_KEY(DIM0, "dim0", INTEGER)
BP_KEY(DIM1, "dim1", INTEGER)
BP_KEY(DTYPE, "dtype", DTYPE)
BP_KEY(FORMULATION, "formulation", FORM)
BP_KEY(COND, "cond", BUFFER)
BP_KEY(CORRECTION, "correction", NUMBER)
BP_KEY(EPS, "eps", NUMBER)
BP_KEY(IS_CAUSAL, "is_causal", BOOL)
BP_KEY(SCALE, "scale", NUMBER)
BP_KEY(APPROXIMATE, "approximate", FORM) /* gelu: none (erf) or tanh, the op's
                                            formulation (no formulation key) */
BP_KEY(MIN, "min", NUMBER)
BP_KEY(MAX, "max", NUMBER)
BP_KEY(DECIMALS, "decimals", INTEGER)
BP_KEY(VALUE, "value", NUMBER)
BP_KEY(STEPS, "steps", INTEGER)
BP_KEY(MEAN, "mean", NUMBER)
BP_KEY(STD, "std", NUMBER)
BP_KEY(LOWER, "min", BUFFER)
BP_KEY(UPPER, "max", BUFFER)
BP_KEY(BETA, "beta", NUMBER)
BP_KEY(ALPHA, "alpha", NUMBER)
#endif

#ifdef BP_FORM
BP_FORM(DEFAULT, "default")
BP_FORM(TRUE, "true")             /* div: correctly rounded a / b */
BP_FORM(RECIPROCAL, "reciprocal") /* div: a * (1/b), 1/b rounded in opmath */
BP_FORM(SEQUENTIAL, "sequential") /* sum: left to right */
BP_FORM(PAIRWISE, "pairwise")     /* sum: pairwise halving */
BP_FORM(TANH, "tanh")             /* gelu: approximate='tanh' */
BP_FORM(FIXED, "fixed")           /* the layer stack's and invariance's row
                                     ops: as eager ops compose them, each
                                     row reduced in bitprobe's fixed order
                                     (probes/README.md) */
#endif

#ifdef BP_OP
BP_OP(TENSOR, "tensor", NONE, BP_K(VALUES) | BP_K(SHAPE), BP_K(VALUES), 0,
      LITERAL, CREATION, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "torch.tensor(values).reshape(shape)")
BP_OP(ARANGE, "arange", NONE, BP_K(START) | BP_K(END) | BP_K(STEP), BP_K(END), 0,
      LITERAL, CREATION, BP_OPF_INT, "torch.arange(start, end, step)")
BP_OP(UNIFORM, "uniform", NONE,
      BP_K(SHAPE) | BP_K(SEED) | BP_K(STREAM) | BP_K(LOW) | BP_K(HIGH),
      BP_K(SHAPE) | BP_K(SEED), 0, F32, CREATION, BP_OPF_FLOAT_FN,
      "uniform in [low, high) from Philox-4x32-10 (seed, stream, index)")
BP_OP(CAST, "cast", A, BP_K(DTYPE), BP_K(DTYPE), 0, SAME, ELEMWISE,
      BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8, "a.to(dtype)")
BP_OP(ADD, "add", AB_TS, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT, "a + b")
BP_OP(SUB, "sub", AB_TS, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT, "a - b")
BP_OP(MUL, "mul", AB_TS, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT, "a * b")
BP_OP(DIV, "div", AB_TS, 0, 0, BP_FM(TRUE) | BP_FM(RECIPROCAL),
      PROMOTE, ELEMWISE, BP_OPF_FLOAT_FN, "a / b")
BP_OP(POW, "pow", AB_TS, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT, "a ** b")
BP_OP(RECIPROCAL, "reciprocal", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN,
      "torch.reciprocal(a)")
BP_OP(EXP, "exp", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.exp(a)")
BP_OP(LOG, "log", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.log(a)")
BP_OP(SIN, "sin", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.sin(a)")
BP_OP(COS, "cos", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.cos(a)")
BP_OP(TANH, "tanh", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.tanh(a)")
BP_OP(SQRT, "sqrt", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN, "torch.sqrt(a)")
BP_OP(RSQRT, "rsqrt", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN,
      "torch.rsqrt(a)")
BP_OP(NEG, "neg", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "-a")
BP_OP(OUTER, "outer", AB, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT,
      "torch.outer(a, b)")
BP_OP(CONCAT, "concat", INPUTS, BP_K(AXIS), 0, 0, PROMOTE, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "torch.cat(inputs, axis)")
BP_OP(SLICE, "slice", A, BP_K(AXIS) | BP_K(ISTART) | BP_K(IEND) | BP_K(ISTEP), 0,
      0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8, "a[start:end:step] along axis")
BP_OP(MATMUL, "matmul", AB, 0, 0, 0, MATMUL, REDUCTION, BP_OPF_INT | BP_OPF_VIEWS,
      "torch.matmul(a, b), a [..., m, k] (leading dimensions folded), b [k, n]")
BP_OP(SUM, "sum", A, BP_K(AXIS) | BP_K(KEEPDIM), 0,
      BP_FM(SEQUENTIAL) | BP_FM(PAIRWISE), ACC, REDUCTION, BP_OPF_INT,
      "torch.sum(a, axis, keepdim)")
BP_OP(ROTATE_HALF, "rotate_half", A, 0, 0, 0, SAME, LAYOUT, BP_OPF_INT,
      "torch.cat((-a[..., d/2:], a[..., :d/2]), -1)")
BP_OP(LOAD, "load", NONE, BP_K(SHAPE), BP_K(SHAPE) | BP_K(DTYPE), 0, LITERAL, CREATION,
      BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8, "safetensors.torch.load_file('<probe>.safetensors')[out]")
BP_OP(RESHAPE, "reshape", A, BP_K(VSHAPE), BP_K(VSHAPE), 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.reshape(shape), one -1 inferred")
BP_OP(VIEW, "view", A, BP_K(VSHAPE), BP_K(VSHAPE), 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.view(shape) (reshape: buffers are contiguous)")
BP_OP(TRANSPOSE, "transpose", A, BP_K(DIM0) | BP_K(DIM1), BP_K(DIM0) | BP_K(DIM1), 0,
      SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8, "a.transpose(dim0, dim1)")
BP_OP(PERMUTE, "permute", A, BP_K(DIMS), BP_K(DIMS), 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.permute(dims)")
BP_OP(UNSQUEEZE, "unsqueeze", A, BP_K(AXIS), BP_K(AXIS), 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.unsqueeze(axis)")
BP_OP(SQUEEZE, "squeeze", A, BP_K(AXIS), 0, 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.squeeze(axis), every size-1 dimension without axis")
BP_OP(EXPAND, "expand", A, BP_K(VSHAPE), BP_K(VSHAPE), 0, SAME, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "a.expand(shape), -1 keeps a dimension")
BP_OP(INDEX_SELECT, "index_select", AB, BP_K(AXIS), BP_K(AXIS), 0, SAME, LAYOUT,
      BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8, "torch.index_select(a, axis, b), b integer")
BP_OP(EMBEDDING, "embedding", AB, 0, 0, 0, B, LAYOUT, BP_OPF_INT | BP_OPF_BOOL | BP_OPF_FP8,
      "torch.nn.functional.embedding(a, b): rows of b by a's integers")
BP_OP(LT, "lt", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a < b")
BP_OP(LE, "le", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a <= b")
BP_OP(GT, "gt", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a > b")
BP_OP(GE, "ge", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a >= b")
BP_OP(EQ, "eq", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a == b")
BP_OP(NE, "ne", AB_TS, 0, 0, 0, BOOL, ELEMWISE, BP_OPF_BOOL, "a != b")
BP_OP(WHERE, "where", COND_AB, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT | BP_OPF_BOOL,
      "torch.where(cond, a, b)")
BP_OP(SOFTMAX, "softmax", A, BP_K(AXIS), BP_K(AXIS), BP_FM(FIXED), SAME, REDUCTION,
      BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN | BP_OPF_COSTLY, "torch.softmax(a, axis)")
BP_OP(LOG_SOFTMAX, "log_softmax", A, BP_K(AXIS), BP_K(AXIS), BP_FM(FIXED), SAME, REDUCTION,
      BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN | BP_OPF_COSTLY, "torch.log_softmax(a, axis)")
BP_OP(MEAN, "mean", A, BP_K(AXIS) | BP_K(KEEPDIM), 0,
      BP_FM(SEQUENTIAL) | BP_FM(PAIRWISE), SAME, REDUCTION, BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN,
      "torch.mean(a, axis, keepdim)")
BP_OP(VAR, "var", A, BP_K(AXIS) | BP_K(KEEPDIM) | BP_K(CORRECTION), 0, 0, SAME,
      REDUCTION, BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN, "torch.var(a, axis, correction=1, keepdim)")
BP_OP(AMAX, "amax", A, BP_K(AXIS) | BP_K(KEEPDIM), 0, 0, SAME, REDUCTION, BP_OPF_INT,
      "torch.amax(a, axis, keepdim)")
BP_OP(AMIN, "amin", A, BP_K(AXIS) | BP_K(KEEPDIM), 0, 0, SAME, REDUCTION, BP_OPF_INT,
      "torch.amin(a, axis, keepdim)")
BP_OP(RMS_NORM, "rms_norm", AB, BP_K(EPS), 0, BP_FM(FIXED), SAME, FUSED, BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN,
      "torch.nn.functional.rms_norm(a, [a.shape[-1]], b, eps)")
BP_OP(LAYER_NORM, "layer_norm", INPUTS, BP_K(EPS), 0, 0, SAME, FUSED, BP_OPF_FLOAT_FN | BP_OPF_FLOAT_IN,
      "torch.nn.functional.layer_norm(x, [x.shape[-1]], weight, bias, eps), "
      "inputs [x, weight, bias]")
BP_OP(BMM, "bmm", AB, 0, 0, 0, MATMUL, REDUCTION, BP_OPF_VIEWS, "torch.bmm(a, b)")
BP_OP(SDPA, "sdpa", INPUTS, BP_K(IS_CAUSAL) | BP_K(SCALE), 0, 0, SAME, FUSED,
      BP_OPF_FLOAT_FN | BP_OPF_COSTLY | BP_OPF_VIEWS,
      "torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal, scale) "
      "on the math path, inputs [q, k, v]")
BP_OP(LOGSUMEXP, "logsumexp", A, BP_K(AXIS) | BP_K(KEEPDIM), 0, 0, SAME, REDUCTION,
      BP_OPF_FLOAT_FN | BP_OPF_COSTLY, "torch.logsumexp(a, axis, keepdim)")
BP_OP(PROD, "prod", A, BP_K(AXIS) | BP_K(KEEPDIM), 0, 0, ACC, REDUCTION, BP_OPF_INT,
      "torch.prod(a, axis, keepdim)")
BP_OP(CUMSUM, "cumsum", A, BP_K(AXIS), BP_K(AXIS), 0, ACC, REDUCTION, BP_OPF_INT,
      "torch.cumsum(a, axis)")
BP_OP(SIGMOID, "sigmoid", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.sigmoid(a)")
BP_OP(SILU, "silu", A, 0, 0, BP_FM(FIXED), SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.nn.functional.silu(a) (fused: a / (1 + exp(-a)))")
BP_OP(GELU, "gelu", A, BP_K(APPROXIMATE), 0, BP_FM(TANH), SAME, ELEMWISE,
      BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.nn.functional.gelu(a, approximate='none' or 'tanh')")
BP_OP(ERF, "erf", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.erf(a)")
BP_OP(EXP2, "exp2", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.exp2(a)")
BP_OP(LOG2, "log2", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.log2(a)")
BP_OP(LOG1P, "log1p", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.log1p(a)")
BP_OP(EXPM1, "expm1", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY,
      "torch.expm1(a)")
BP_OP(ABS, "abs", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "torch.abs(a)")
BP_OP(SIGN, "sign", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "torch.sign(a)")
BP_OP(FLOOR, "floor", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "torch.floor(a)")
BP_OP(CEIL, "ceil", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "torch.ceil(a)")
BP_OP(ROUND, "round", A, BP_K(DECIMALS), 0, 0, SAME, ELEMWISE, BP_OPF_INT,
      "torch.round(a, decimals=decimals) (half to even)")
BP_OP(TRUNC, "trunc", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_INT, "torch.trunc(a)")
BP_OP(MINIMUM, "minimum", AB, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT,
      "torch.minimum(a, b)")
BP_OP(MAXIMUM, "maximum", AB, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT,
      "torch.maximum(a, b)")
BP_OP(CLAMP, "clamp", A, BP_K(MIN) | BP_K(MAX), 0, 0, SAME, ELEMWISE, BP_OPF_INT,
      "torch.clamp(a, min, max), min and max numbers")
BP_OP(FULL, "full", NONE, BP_K(SHAPE) | BP_K(VALUE), BP_K(SHAPE) | BP_K(VALUE), 0,
      LITERAL, CREATION, BP_OPF_INT, "torch.full(shape, value)")
BP_OP(ZEROS, "zeros", NONE, BP_K(SHAPE), BP_K(SHAPE), 0, F32, CREATION, BP_OPF_INT,
      "torch.zeros(shape)")
BP_OP(ONES, "ones", NONE, BP_K(SHAPE), BP_K(SHAPE), 0, F32, CREATION, BP_OPF_INT,
      "torch.ones(shape)")
BP_OP(LINSPACE, "linspace", NONE, BP_K(START) | BP_K(END) | BP_K(STEPS),
      BP_K(START) | BP_K(END) | BP_K(STEPS), 0, F32, CREATION, BP_OPF_FLOAT_FN,
      "torch.linspace(start, end, steps)")
BP_OP(RANDN, "randn", NONE, BP_K(SHAPE) | BP_K(SEED) | BP_K(STREAM),
      BP_K(SHAPE) | BP_K(SEED), 0, F32, CREATION, BP_OPF_FLOAT_FN,
      "standard normal from Philox-4x32-10 (seed, stream, index) by Box-Muller")
BP_OP(NORMAL, "normal", NONE,
      BP_K(SHAPE) | BP_K(SEED) | BP_K(STREAM) | BP_K(MEAN) | BP_K(STD),
      BP_K(SHAPE) | BP_K(SEED) | BP_K(MEAN) | BP_K(STD), 0, F32, CREATION,
      BP_OPF_FLOAT_FN, "mean + std * randn(shape, seed, stream), one fma")
BP_OP(CLAMP_TENSOR, "clamp_tensor", A_BOUNDS, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_INT,
      "torch.clamp(a, min, max), min and max tensors (one may be absent), broadcast")
BP_OP(BADDBMM, "baddbmm", INPUTS, BP_K(BETA) | BP_K(ALPHA), 0, 0, SAME, FUSED, BP_OPF_VIEWS,
      "torch.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha), "
      "inputs [input, batch1, batch2]")
BP_OP(LINEAR, "linear", INPUTS, 0, 0, 0, SAME, FUSED, BP_OPF_VIEWS,
      "torch.nn.functional.linear(x, weight, bias): x @ weight.T + bias, "
      "inputs [x, weight] or [x, weight, bias]")
BP_OP(ADDMM, "addmm", INPUTS, BP_K(BETA) | BP_K(ALPHA), 0, 0, SAME, FUSED, BP_OPF_VIEWS,
      "torch.addmm(input, mat1, mat2, beta=beta, alpha=alpha), inputs [input, mat1, mat2]")
#endif

#ifdef BP_FN
BP_FN(LOG2, log2, u35, 1, log2, log2)
BP_FN(EXPM1, expm1, u10, 1, expm1, expm1)
#endif

#ifdef BP_FN2
#endif
