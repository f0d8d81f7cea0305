/* PyTorch's tensor semantics on every backend: broadcasting, keepdim, the
 * layout ops, comparisons and where, bool and fp8 casts, sum(dtype=).  Each case is a small probe whose
 * result is exact (small integers and halves, so every backend, the
 * oracle included, must give these bits), and its expected shape and
 * values were written by hand from what PyTorch gives for the same
 * expression (stated beside each case).
 *
 * Built twice: check_semantics runs the cases on cpu and oracle;
 * check_semantics_cuda (BP_SEM_CUDA) on cuda, skipping by the GPU rule
 * (tests/gpu_rule.h) where no GPU is usable. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "probe.h"
#ifdef BP_SEM_CUDA
#include "gpu_rule.h"
#endif

typedef struct {
    const char *name;
    const char *ops;   /* the probe's ops: lines of "  - {...}\n" */
    const char *out;   /* the buffer checked */
    const char *dtype; /* its dtype */
    int ndim;
    int64_t shape[4];
    int n;
    double v[16];
} sem_case_t;

/* An error case: the probe must not load, the message must contain want. */
typedef struct {
    const char *ops;
    const char *want;
} sem_bad_t;

#define X "  - {out: x, op: tensor, values: [0, 1, 2, 3, 4, 5], shape: [2, 3], dtype: fp32}\n"
#define C                                                                            \
    "  - {out: a, op: tensor, values: [1, 2, 3, .nan], dtype: fp32}\n"              \
    "  - {out: b, op: tensor, values: [2, 2, 2, 2], dtype: fp32}\n"

static const sem_case_t cases[] = {
    /* torch.tensor([[1,2,3],[4,5,6.]]) + torch.tensor([10,20,30.]) */
    {"bcast_row",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [10, 20, 30], dtype: fp32}\n"
     "  - {out: y, op: add, a: a, b: b}\n",
     "y", "fp32", 2, {2, 3}, 6, {11, 22, 33, 14, 25, 36}},
    /* torch.tensor([[1.],[2.]]) * torch.tensor([[1.,2.,3.]]) */
    {"bcast_outer",
     "  - {out: a, op: tensor, values: [1, 2], shape: [2, 1], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 2, 3], shape: [1, 3], dtype: fp32}\n"
     "  - {out: y, op: mul, a: a, b: b}\n",
     "y", "fp32", 2, {2, 3}, 6, {1, 2, 3, 2, 4, 6}},
    /* torch.tensor([1.,2.,3.]) - torch.tensor([[10.],[20.]]) */
    {"bcast_both",
     "  - {out: a, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [10, 20], shape: [2, 1], dtype: fp32}\n"
     "  - {out: y, op: sub, a: a, b: b}\n",
     "y", "fp32", 2, {2, 3}, 6, {-9, -8, -7, -19, -18, -17}},
    /* torch.tensor([1.,2.,3.,4.]) / torch.tensor([2.]): a tensor divisor */
    {"bcast_div",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [2], dtype: fp32}\n"
     "  - {out: y, op: div, a: a, b: b}\n",
     "y", "fp32", 1, {4}, 4, {0.5, 1, 1.5, 2}},
    /* torch.tensor([[2.],[3.]]) ** torch.tensor([1.,2.]) */
    {"bcast_pow",
     "  - {out: a, op: tensor, values: [2, 3], shape: [2, 1], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 2], dtype: fp32}\n"
     "  - {out: y, op: pow, a: a, b: b}\n",
     "y", "fp32", 2, {2, 2}, 4, {2, 4, 3, 9}},
    /* torch.tensor(5.) * torch.tensor([1.,2.,3.]): a 0-D tensor */
    {"bcast_0d",
     "  - {out: a, op: tensor, values: [5], shape: [], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
     "  - {out: y, op: mul, a: a, b: b}\n",
     "y", "fp32", 1, {3}, 3, {5, 10, 15}},
    /* bf16: torch.tensor([[1],[2]], dtype=bf16) + torch.tensor([0.5, 256],
     * dtype=bf16): 257 rounds to 256 in bf16, 258 stays */
    {"bcast_bf16",
     "  - {out: a, op: tensor, values: [1, 2], shape: [2, 1], dtype: bf16}\n"
     "  - {out: b, op: tensor, values: [0.5, 256], dtype: bf16}\n"
     "  - {out: y, op: add, a: a, b: b}\n",
     "y", "bf16", 2, {2, 2}, 4, {1.5, 256, 2.5, 258}},
    /* x.sum(1, keepdim=True), x.sum(0, keepdim=True), x.sum(keepdim=True)
     * hand-summed: rows 6, 15; columns 5, 7, 9; all 21 */
    {"keepdim_1",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, axis: 1, keepdim: true}\n",
     "y", "fp32", 2, {2, 1}, 2, {6, 15}},
    {"keepdim_0",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, axis: -2, keepdim: true}\n",
     "y", "fp32", 2, {1, 3}, 3, {5, 7, 9}},
    {"keepdim_all",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, keepdim: true}\n",
     "y", "fp32", 2, {1, 1}, 1, {21}},
    {"keepdim_false",
     "  - {out: a, op: tensor, values: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, axis: 1, keepdim: false}\n",
     "y", "fp32", 1, {2}, 2, {6, 15}},
    /* HF LlamaRMSNorm's shape: w * (x * torch.rsqrt(x.pow(2).sum(-1,
     * keepdim=True) / 4 + 0)): rows of 1s and 2s have mean squares 1 and 4,
     * rsqrt 1 and 0.5, so every normalised element is 1, times w */
    {"rmsnorm_shape",
     "  - {out: x, op: tensor, values: [1, 1, 1, 1, 2, 2, 2, 2], shape: [2, 4], dtype: fp32}\n"
     "  - {out: w, op: tensor, values: [1, 2, 3, 4], dtype: fp32}\n"
     "  - {out: sq, op: pow, a: x, b: 2}\n"
     "  - {out: ss, op: sum, a: sq, axis: -1, keepdim: true}\n"
     "  - {out: ms, op: div, a: ss, b: 4}\n"
     "  - {out: v, op: add, a: ms, b: 0}\n"
     "  - {out: r, op: rsqrt, a: v}\n"
     "  - {out: h, op: mul, a: x, b: r}\n"
     "  - {out: y, op: mul, a: w, b: h}\n",
     "y", "fp32", 2, {2, 4}, 8, {1, 2, 3, 4, 1, 2, 3, 4}},
    /* x = torch.arange(6.).reshape(2, 3) in the layout cases below */
    /* x.reshape(3, -1) */
    {"reshape", X
     "  - {out: y, op: reshape, a: x, shape: [3, -1]}\n",
     "y", "fp32", 2, {3, 2}, 6, {0, 1, 2, 3, 4, 5}},
    /* x.view(6) */
    {"view", X "  - {out: y, op: view, a: x, shape: [6]}\n",
     "y", "fp32", 1, {6}, 6, {0, 1, 2, 3, 4, 5}},
    /* x.transpose(0, 1): [[0, 3], [1, 4], [2, 5]] */
    {"transpose", X "  - {out: y, op: transpose, a: x, dim0: 0, dim1: -1}\n",
     "y", "fp32", 2, {3, 2}, 6, {0, 3, 1, 4, 2, 5}},
    /* x.reshape(1, 2, 3).permute(2, 0, 1): y[k, 0, i] = x[i, k] */
    {"permute", X
     "  - {out: x3, op: reshape, a: x, shape: [1, 2, 3]}\n"
     "  - {out: y, op: permute, a: x3, dims: [2, 0, -2]}\n",
     "y", "fp32", 3, {3, 1, 2}, 6, {0, 3, 1, 4, 2, 5}},
    /* x.unsqueeze(-1) */
    {"unsqueeze", X "  - {out: y, op: unsqueeze, a: x, axis: -1}\n",
     "y", "fp32", 3, {2, 3, 1}, 6, {0, 1, 2, 3, 4, 5}},
    /* x.reshape(1, 2, 1, 3).squeeze(): every size-1 dimension */
    {"squeeze_all", X
     "  - {out: x4, op: reshape, a: x, shape: [1, 2, 1, 3]}\n"
     "  - {out: y, op: squeeze, a: x4}\n",
     "y", "fp32", 2, {2, 3}, 6, {0, 1, 2, 3, 4, 5}},
    /* .squeeze(2) drops that one; .squeeze(1) (size 2) keeps the shape */
    {"squeeze_axis", X
     "  - {out: x4, op: reshape, a: x, shape: [1, 2, 1, 3]}\n"
     "  - {out: y, op: squeeze, a: x4, axis: 2}\n",
     "y", "fp32", 3, {1, 2, 3}, 6, {0, 1, 2, 3, 4, 5}},
    {"squeeze_noop", X
     "  - {out: x4, op: reshape, a: x, shape: [1, 2, 1, 3]}\n"
     "  - {out: y, op: squeeze, a: x4, axis: 1}\n",
     "y", "fp32", 4, {1, 2, 1, 3}, 6, {0, 1, 2, 3, 4, 5}},
    /* torch.tensor(1.5).squeeze(-1).transpose(0, -1).squeeze(0): a 0-D
     * tensor takes dims 0 and -1 (maybe_wrap_dim wraps scalars as 1-D) */
    {"scalar_dims",
     "  - {out: v, op: tensor, values: [1.5], shape: [], dtype: fp32}\n"
     "  - {out: s, op: squeeze, a: v, axis: -1}\n"
     "  - {out: t, op: transpose, a: s, dim0: 0, dim1: -1}\n"
     "  - {out: y, op: squeeze, a: t, axis: 0}\n",
     "y", "fp32", 0, {0}, 1, {1.5}},
    /* torch.tensor([1., 2., 3.]).expand(2, -1) */
    {"expand_new",
     "  - {out: v, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
     "  - {out: y, op: expand, a: v, shape: [2, -1]}\n",
     "y", "fp32", 2, {2, 3}, 6, {1, 2, 3, 1, 2, 3}},
    /* torch.tensor([[1.], [2.]]).expand(2, 3) */
    {"expand_one",
     "  - {out: v, op: tensor, values: [1, 2], shape: [2, 1], dtype: fp32}\n"
     "  - {out: y, op: expand, a: v, shape: [2, 3]}\n",
     "y", "fp32", 2, {2, 3}, 6, {1, 1, 1, 2, 2, 2}},
    /* torch.index_select(x, 1, torch.tensor([2, 0])) */
    {"index_select_1", X
     "  - {out: i, op: tensor, values: [2, 0]}\n"
     "  - {out: y, op: index_select, a: x, b: i, axis: 1}\n",
     "y", "fp32", 2, {2, 2}, 4, {2, 0, 5, 3}},
    /* torch.index_select(x, 0, torch.tensor([1, 1, 0], dtype=torch.int32)) */
    {"index_select_0", X
     "  - {out: i, op: tensor, values: [1, 1, 0], dtype: i32}\n"
     "  - {out: y, op: index_select, a: x, b: i, axis: 0}\n",
     "y", "fp32", 2, {3, 3}, 9, {3, 4, 5, 3, 4, 5, 0, 1, 2}},
    /* F.embedding(torch.tensor([[1, 0], [1, 1]]), x): rows 1, 0, 1, 1 */
    {"embedding", X
     "  - {out: ids, op: tensor, values: [1, 0, 1, 1], shape: [2, 2]}\n"
     "  - {out: y, op: embedding, a: ids, b: x}\n",
     "y", "fp32", 3, {2, 2, 3}, 12, {3, 4, 5, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
    /* torch.tensor([257., 258.]).reshape(2, 1).to(bf16): 257 ties to 256 */
    {"reshape_dtype",
     "  - {out: v, op: tensor, values: [257, 258], dtype: fp32}\n"
     "  - {out: y, op: reshape, a: v, shape: [2, 1], dtype: bf16}\n",
     "y", "bf16", 2, {2, 1}, 2, {256, 258}},
    /* a = torch.tensor([1., 2., 3., nan]), b = torch.full((4,), 2.):
     * a < b, a <= b, ... (NaN is unordered: only != holds) */
    {"lt", C "  - {out: y, op: lt, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {1, 0, 0, 0}},
    {"le", C "  - {out: y, op: le, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {1, 1, 0, 0}},
    {"gt", C "  - {out: y, op: gt, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {0, 0, 1, 0}},
    {"ge", C "  - {out: y, op: ge, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {0, 1, 1, 0}},
    {"eq", C "  - {out: y, op: eq, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {0, 1, 0, 0}},
    {"ne", C "  - {out: y, op: ne, a: a, b: b}\n", "y", "bool", 1, {4}, 4, {1, 0, 1, 1}},
    /* 2 > a (a number on the left); torch.arange(4) >= 1.5 (an integer
     * tensor against a float number compares in fp32) */
    {"gt_number", C "  - {out: y, op: gt, a: 2, b: a}\n", "y", "bool", 1, {4}, 4,
     {1, 0, 0, 0}},
    {"ge_int_float",
     "  - {out: i, op: arange, end: 4}\n"
     "  - {out: y, op: ge, a: i, b: 1.5}\n", "y", "bool", 1, {4}, 4, {0, 0, 1, 1}},
    /* (a < 2) == 0: a bool tensor against an integer compares in i64 */
    {"eq_bool_int", C
     "  - {out: m, op: lt, a: a, b: 2}\n"
     "  - {out: y, op: eq, a: m, b: 0}\n", "y", "bool", 1, {4}, 4, {0, 1, 1, 1}},
    /* torch.tensor([[1.], [2.]]) < torch.tensor([0., 1.5, 3.]): broadcast */
    {"lt_bcast",
     "  - {out: a, op: tensor, values: [1, 2], shape: [2, 1], dtype: fp32}\n"
     "  - {out: b, op: tensor, values: [0, 1.5, 3], dtype: fp32}\n"
     "  - {out: y, op: lt, a: a, b: b}\n", "y", "bool", 2, {2, 3}, 6, {0, 1, 1, 0, 0, 1}},
    /* torch.where(a < 2, a, torch.tensor([10., 20., 30., 40.])) */
    {"where", C
     "  - {out: m, op: lt, a: a, b: 2}\n"
     "  - {out: o, op: tensor, values: [10, 20, 30, 40], dtype: fp32}\n"
     "  - {out: y, op: where, cond: m, a: a, b: o}\n", "y", "fp32", 1, {4}, 4,
     {1, 20, 30, 40}},
    /* torch.where(a < 2, 1, 0): two Python ints give int64 */
    {"where_ints", C
     "  - {out: m, op: lt, a: a, b: 2}\n"
     "  - {out: y, op: where, cond: m, a: 1, b: 0}\n", "y", "i64", 1, {4}, 4,
     {1, 0, 0, 0}},
    /* torch.where(a < 2, 1.5, torch.arange(4)): a float number lifts int64
     * to the default fp32 */
    {"where_lift", C
     "  - {out: m, op: lt, a: a, b: 2}\n"
     "  - {out: i, op: arange, end: 4}\n"
     "  - {out: y, op: where, cond: m, a: 1.5, b: i}\n", "y", "fp32", 1, {4}, 4,
     {1.5, 1, 2, 3}},
    /* torch.where(torch.tensor([[True], [False]]), torch.tensor([1., 2.,
     * 3.]), 0.0): cond [2, 1] broadcast with a [3] */
    {"where_bcast",
     "  - {out: c, op: tensor, values: [1, 0], shape: [2, 1], dtype: bool}\n"
     "  - {out: a, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
     "  - {out: y, op: where, cond: c, a: a, b: 0.0}\n", "y", "fp32", 2, {2, 3}, 6,
     {1, 2, 3, 0, 0, 0}},
    /* torch.where(a < 2, a.bfloat16(), 257.): the number becomes bf16
     * (257 ties to 256) */
    {"where_bf16", C
     "  - {out: m, op: lt, a: a, b: 2}\n"
     "  - {out: ab, op: cast, a: a, dtype: bf16}\n"
     "  - {out: y, op: where, cond: m, a: ab, b: 257.0}\n", "y", "bf16", 1, {4}, 4,
     {1, 256, 256, 256}},
    /* torch.tensor([0., -0., nan, 0.5, -3.]).to(bool), and back */
    {"cast_bool",
     "  - {out: a, op: tensor, values: [0, -0.0, .nan, 0.5, -3], dtype: fp32}\n"
     "  - {out: y, op: cast, a: a, dtype: bool}\n", "y", "bool", 1, {5}, 5, {0, 0, 1, 1, 1}},
    /* .to(torch.float8_e4m3fn).float(): 464 ties to 448, beyond is NaN (no
     * infinity), 2^-9 the least subnormal, 2^-10 ties to 0 */
    {"cast_e4m3",
     "  - {out: a, op: tensor, values: [448, 464, 465, -500, 0x1p-9, 0x1p-10, 1e6, .inf],"
     " dtype: fp32}\n"
     "  - {out: f, op: cast, a: a, dtype: fp8_e4m3}\n"
     "  - {out: y, op: cast, a: f, dtype: fp32}\n", "y", "fp32", 1, {8}, 8,
     {448, 448, NAN, NAN, 0x1p-9, 0, NAN, NAN}},
    /* .to(torch.float8_e5m2).float(): 61440 ties up to infinity; 2^-17 ties
     * to 0, 3 * 2^-17 up to 2^-15 */
    {"cast_e5m2",
     "  - {out: a, op: tensor, values: [57344, 61439, 61440, -.inf, 0x1p-17, 0x3p-17, .nan],"
     " dtype: fp32}\n"
     "  - {out: f, op: cast, a: a, dtype: fp8_e5m2}\n"
     "  - {out: y, op: cast, a: f, dtype: fp32}\n", "y", "fp32", 1, {7}, 7,
     {57344, 57344, INFINITY, -INFINITY, 0, 0x1p-15, NAN}},
    /* x = torch.tensor([2048., 1.], dtype=torch.float16): x.sum() is 2049
     * rounded to fp16, 2048; x.sum(dtype=torch.float32) keeps 2049 */
    {"sum_fp16",
     "  - {out: x, op: tensor, values: [2048, 1], dtype: fp16}\n"
     "  - {out: y, op: sum, a: x}\n", "y", "fp16", 0, {0}, 1, {2048}},
    {"sum_dtype",
     "  - {out: x, op: tensor, values: [2048, 1], dtype: fp16}\n"
     "  - {out: y, op: sum, a: x, dtype: fp32}\n", "y", "fp32", 0, {0}, 1, {2049}},
};

static const sem_bad_t bad[] = {
    {"  - {out: a, op: arange, end: 4, dtype: fp32}\n"
     "  - {out: b, op: arange, end: 3, dtype: fp32}\n"
     "  - {out: y, op: add, a: a, b: b}\n",
     "shape mismatch: a is [4], b is [3] (they do not broadcast)"},
    {"  - {out: a, op: arange, end: 4, dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, keepdim: 1}\n",
     "keepdim must be true or false, got 1"},
    {"  - {out: a, op: arange, end: 4, dtype: fp32}\n"
     "  - {out: y, op: sum, a: a, axis: 1, keepdim: true}\n",
     "sum axis 1 out of range for [4]"},
    {X "  - {out: y, op: reshape, a: x, shape: [4]}\n",
     "reshape: shape [4] is invalid for input of size 6 (a is [2, 3])"},
    {X "  - {out: y, op: reshape, a: x, shape: [-1, -1]}\n",
     "reshape: only one dimension can be -1"},
    {X "  - {out: y, op: permute, a: x, dims: [0, 0]}\n",
     "permute: dims is not a permutation of the dimensions of a 2-dimensional a"},
    {X "  - {out: y, op: transpose, a: x, dim0: 0, dim1: 2}\n",
     "transpose: dim0 or dim1 out of range"},
    {X "  - {out: y, op: expand, a: x, shape: [2, 4]}\n",
     "expand: a ([2, 3]) cannot be expanded to [2, 4] (dimension 1)"},
    {X "  - {out: y, op: expand, a: x, shape: [-1, 2, 3]}\n",
     "expand: a ([2, 3]) cannot be expanded to [-1, 2, 3] (dimension 0)"},
    {X "  - {out: i, op: tensor, values: [0.5]}\n"
       "  - {out: y, op: index_select, a: x, b: i, axis: 0}\n",
     "index_select: the index (b) must be i64 or i32, not fp32"},
    {X "  - {out: y, op: index_select, a: x, b: x}\n",
     "missing required key 'axis' in op 'y' (index_select)"},
    {X "  - {out: y, op: embedding, a: x, b: x}\n",
     "embedding: the index (a) must be i64 or i32, not fp32"},
    {X "  - {out: y, op: unsqueeze, a: x, axis: 3}\n",
     "unsqueeze axis 3 out of range for [2, 3]"},
    {C "  - {out: y, op: lt, a: a, b: b, dtype: fp32}\n",
     "lt gives bool: it takes no other dtype"},
    {C "  - {out: y, op: where, cond: a, a: a, b: b}\n",
     "where expects cond to be a bool tensor, not fp32"},
    {C "  - {out: m, op: lt, a: a, b: b}\n"
       "  - {out: y, op: where, cond: m, a: a, b: x}\n"
       "  - {out: x, op: tensor, values: [1, 2, 3], dtype: fp32}\n",
     "before the op that defines it"},
    {C "  - {out: m, op: lt, a: a, b: b}\n"
       "  - {out: z, op: tensor, values: [1, 2, 3], dtype: fp32}\n"
       "  - {out: y, op: where, cond: m, a: z, b: 0}\n",
     "shape mismatch: cond is [4], a and b give [3] (they do not broadcast)"},
    {C "  - {out: m, op: lt, a: a, b: b}\n"
       "  - {out: y, op: add, a: m, b: 1}\n",
     "add does not take bool (an operand is bool); cast it to a number dtype first"},
    {C "  - {out: f, op: cast, a: a, dtype: fp8_e4m3}\n"
       "  - {out: y, op: mul, a: f, b: 2}\n",
     "mul does not compute in fp8_e4m3 (its result is): fp8 is a storage dtype"},
    {C "  - {out: f, op: cast, a: a, dtype: fp8_e5m2}\n"
       "  - {out: y, op: concat, inputs: [f, a]}\n",
     "concat of fp8_e5m2 into fp32: PyTorch does not promote fp8 with another dtype"},
    {C "  - {out: h, op: cast, a: a, dtype: fp16}\n"
       "  - {out: y, op: lt, a: h, b: 1e6}\n",
     "b: the number 1000000 overflows fp16, the dtype the comparison computes in"},
    {"  - {out: v, op: tensor, values: [1.5], shape: [], dtype: fp32}\n"
     "  - {out: y, op: squeeze, a: v, axis: 1}\n",
     "squeeze axis 1 out of range for []"},
};

/* Indices out of range: refused at run time, by name, on every backend. */
static const sem_bad_t run_bad[] = {
    {X "  - {out: i, op: tensor, values: [0, 3]}\n"
       "  - {out: y, op: index_select, a: x, b: i, axis: 1}\n",
     "index_select: index 3 is out of range for axis 1 of size 3 (element 1 of b)"},
    {X "  - {out: i, op: tensor, values: [-1]}\n"
       "  - {out: y, op: embedding, a: i, b: x}\n",
     "embedding: index -1 is out of range for axis 0 of size 2 (element 0 of a)"},
};

#ifdef BP_SEM_CUDA
static const char *const backends[] = {"cuda"};
#else
static const char *const backends[] = {"cpu", "oracle"};
#endif
#define NBE (sizeof backends / sizeof backends[0])

static bp_probe_t *load(const char *ops, bp_error_t *err)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "name: t\ndescription: d\ndtypes: [fp32]\nops:\n%soutputs:\n"
             "  - {name: %s}\n", ops, strstr(ops, "out: y,") ? "y" : "a");
    bp_probe_t *p = NULL;
    bp_probe_parse(yaml, strlen(yaml), "t.yaml", &p, err);
    return p;
}

START_TEST(t_case)
{
    const sem_case_t *c = &cases[_i % (sizeof cases / sizeof cases[0])];
    const char *bname = backends[_i / (sizeof cases / sizeof cases[0])];
    bp_error_t err = {0};
    bp_probe_t *p = load(c->ops, &err);
    ck_assert_msg(p, "%s: %s", c->name, err.msg);
    bp_backend_t *be = NULL;
    ck_assert_msg(bp_backend_open(bname, NULL, &be, &err) == BP_OK, "%s", err.msg);
    bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
    ck_assert_msg(bp_backend_run(be, p, BP_F32, bufs, &err) == BP_OK, "%s on %s: %s",
                  c->name, bname, err.msg);
    int k = bp_probe_find_buf(p, c->out);
    const bp_buf_t *y = &bufs[k];
    bp_dtype_t dt;
    ck_assert(bp_dtype_parse(c->dtype, &dt));
    ck_assert_msg(y->dtype == dt, "%s on %s: dtype %s", c->name, bname,
                  bp_dtype_name(y->dtype));
    char want[96], got[96];
    bp_shape_format(c->ndim, c->shape, want, sizeof want);
    bp_shape_format(y->ndim, y->shape, got, sizeof got);
    ck_assert_msg(strcmp(want, got) == 0, "%s on %s: shape %s, expected %s", c->name,
                  bname, got, want);
    ck_assert_uint_eq(y->numel, (size_t)c->n);
    for (int i = 0; i < c->n; i++) {
        double v = bp_buf_get(y, (size_t)i);
        ck_assert_msg(v == c->v[i] || (isnan(v) && isnan(c->v[i])),
                      "%s on %s: element %d is %.17g, expected %.17g", c->name, bname,
                      i, v, c->v[i]);
    }
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_backend_close(be);
    bp_probe_free(p);
}
END_TEST

START_TEST(t_bad)
{
    bp_error_t err = {0};
    bp_probe_t *p = load(bad[_i].ops, &err);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "got '%s', want '%s'", err.msg,
                  bad[_i].want);
}
END_TEST

START_TEST(t_run_bad)
{
    const sem_bad_t *c = &run_bad[_i % (sizeof run_bad / sizeof run_bad[0])];
    const char *bname = backends[_i / (sizeof run_bad / sizeof run_bad[0])];
    bp_error_t err = {0};
    bp_probe_t *p = load(c->ops, &err);
    ck_assert_msg(p, "%s", err.msg);
    bp_backend_t *be = NULL;
    ck_assert_msg(bp_backend_open(bname, NULL, &be, &err) == BP_OK, "%s", err.msg);
    bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
    ck_assert_int_eq(bp_backend_run(be, p, BP_F32, bufs, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, c->want), "%s: got '%s', want '%s'", bname, err.msg,
                  c->want);
    bp_backend_bufs_free(bufs, p->nops);
    free(bufs);
    bp_backend_close(be);
    bp_probe_free(p);
}
END_TEST

int main(void)
{
#ifdef BP_SEM_CUDA
    int skip = bp_test_cuda_suite("check_semantics_cuda");
    if (skip >= 0)
        return skip;
#endif
    Suite *s = suite_create("semantics");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, t_case, 0, (int)(NBE * (sizeof cases / sizeof cases[0])));
    tcase_add_loop_test(tc, t_bad, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_loop_test(tc, t_run_bad, 0,
                        (int)(NBE * (sizeof run_bad / sizeof run_bad[0])));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
