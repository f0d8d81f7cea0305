/* Reduce.cuh's configuration on the host (redcfg.h says what for).
 *
 * TensorIterator first reorders the dimensions of a reduction (reduced
 * ones first, then by increasing input stride: reorder_dimensions) and
 * merges neighbours that are contiguous in every operand or of size 1
 * (coalesce_dimensions).  For a contiguous [outer, len, inner] reduced over
 * len that leaves one of five shapes, listed fastest dimension first with
 * the input's strides in elements:
 *   one element, or everything reduced:  [len]                    reduced
 *   len == 1 (nothing left to reduce):   [outer * inner]          kept
 *   inner == 1:                          [len | outer]            strides 1, len
 *   outer == 1:                          [len | inner]            strides inner, 1
 *   otherwise:                           [len | inner, outer]     strides inner, 1, len * inner
 * setReduceConfig then works on that shape; the rest of this file follows
 * it step by step. */
#include "redcfg.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

static int64_t div_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Reduce.cuh last_pow2: the largest power of two <= n (1 for n < 1). */
static int last_pow2(int n)
{
    n |= n >> 1;
    n |= n >> 2;
    n |= n >> 4;
    n |= n >> 8;
    n |= n >> 16;
    int p = n - (n >> 1);
    return p > 1 ? p : 1;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* ReduceConfig::split_input / split_output: the old step, multiplied. */
static int32_t split(int32_t *step, int parallelism)
{
    int32_t s = *step;
    *step *= parallelism;
    return s;
}

/* get_output_vec_size: 4, halved until it divides the input's address in
 * elements, the size of the first kept dimension and every other input
 * stride. */
static int output_vec(uint64_t addr, int scalar_bytes, int ndim, int nred,
                      const int64_t *size, const int64_t *stride)
{
    int v = 4;
    uint64_t n[4];
    int k = 0;
    n[k++] = addr / (uint64_t)scalar_bytes;
    n[k++] = (uint64_t)size[nred];
    for (int j = 0; j < ndim; j++)
        if (j != nred)
            n[k++] = (uint64_t)stride[j];
    for (int i = 0; i < k; i++)
        while (n[i] % (uint64_t)v != 0)
            v /= 2;
    return v;
}

int bp_redcfg_make(bp_redcfg_t *c, int64_t outer, int64_t len, int64_t inner,
                   int scalar_bytes, int arg_bytes, int vt0, int input_vec_size,
                   uint64_t in_addr, const bp_gpu_props_t *gpu, unsigned flags)
{
    memset(c, 0, sizeof *c);
    if (outer <= 0 || len <= 0 || inner <= 0 || scalar_bytes <= 0 || arg_bytes <= 0 ||
        !gpu || gpu->warp_size <= 0 || gpu->sm_count <= 0)
        return -1;
    int64_t nout = outer * inner, numel = nout * len;
    /* can_use_32bit_indexing: byte offsets within int32. */
    if (numel > INT32_MAX / scalar_bytes)
        return -1;

    int ndim, nred;
    int64_t size[3] = {0}, stride[3] = {0};
    if (numel == 1 || nout == 1) {
        ndim = nred = 1;
        size[0] = len;
        stride[0] = 1;
    } else if (len == 1) {
        ndim = 1;
        nred = 0;
        size[0] = nout;
        stride[0] = 1;
    } else if (inner == 1) {
        ndim = 2;
        nred = 1;
        size[0] = len, size[1] = outer;
        stride[0] = 1, stride[1] = len;
    } else if (outer == 1) {
        ndim = 2;
        nred = 1;
        size[0] = len, size[1] = inner;
        stride[0] = inner, stride[1] = 1;
    } else {
        ndim = 3;
        nred = 1;
        size[0] = len, size[1] = inner, size[2] = outer;
        stride[0] = inner, stride[1] = 1, stride[2] = len * inner;
    }

    c->num_inputs = (int32_t)len;
    c->num_outputs = (int32_t)nout;
    c->step_input = c->step_output = c->ctas_per_output = 1;
    c->output_vec = 1;
    c->input_vec = input_vec_size;
    c->len = len;
    c->inner = inner;
    c->x_first = (flags & BP_REDCFG_X_FIRST) != 0;
    c->shfl_desc = (flags & BP_REDCFG_SHFL_DESC) != 0;

    bool fastest = nred == ndim || stride[0] < stride[nred];
    int64_t dim0 = fastest ? len : nout, dim1 = fastest ? nout : len;
    int64_t fastest_stride = fastest ? stride[0] : stride[nred];
    if (fastest_stride == 1) {
        bool vec = (flags & BP_REDCFG_VEC_GE128) ? dim0 >= 128
                                                  : dim0 > 128 && vt0 >= input_vec_size;
        if (fastest && nred == 1 && vec) {
            c->vectorize_input = 1;
            dim0 /= input_vec_size;
        } else if (!fastest) {
            c->output_vec = output_vec(in_addr, scalar_bytes, ndim, nred, size, stride);
            dim0 /= c->output_vec;
        }
    }

    /* ReduceConfig::set_block_dimension */
    const int max_threads = 512 / c->output_vec;
    int d0 = dim0 < max_threads ? last_pow2((int)dim0) : max_threads;
    int d1 = dim1 < max_threads ? last_pow2((int)dim1) : max_threads;
    int bw = imin(d0, gpu->warp_size);
    int bh = imin(d1, max_threads / bw);
    bw = imin(d0, max_threads / bh);
    c->block_x = bw;
    c->block_y = bh;
    int num_threads = bw * bh;

    if (fastest)
        c->input_mult[0] = split(&c->step_input, bw);
    else
        c->output_mult[0] = split(&c->step_output, bw);

    const int min_values = 16, max_values = 256;
    int64_t vpt = div_up(c->num_inputs, c->step_input);
    if (vpt >= imin(bh * 16, max_values))
        c->input_mult[1] = split(&c->step_input, bh);
    else
        c->output_mult[1] = split(&c->step_output, bh);

    int blocks_per_sm = gpu->max_threads_per_sm / num_threads;
    int64_t target = (int64_t)gpu->sm_count * blocks_per_sm;
    int64_t grid = div_up(c->num_outputs / c->output_vec, c->step_output);
    vpt = div_up(c->num_inputs, c->step_input);
    if (c->input_mult[1] != 0 && vpt >= max_values && grid <= target) {
        int64_t c1 = div_up(target, grid), c2 = div_up(vpt, min_values),
                c3 = div_up(vpt, max_values);
        int64_t ctas = c1 < c2 ? c1 : c2;
        if (ctas < c3)
            ctas = c3;
        c->ctas_per_output = (int32_t)ctas;
        if (ctas > 1)
            c->input_mult[2] = split(&c->step_input, (int)ctas);
    }

    c->grid_x = (int32_t)div_up(c->num_outputs / c->output_vec, c->step_output);
    c->grid_y = c->ctas_per_output;
    bool bx = c->input_mult[0] != 0, by = c->input_mult[1] != 0;
    if (by || (bx && bw > gpu->warp_size))
        c->shared_bytes = arg_bytes * num_threads * c->output_vec;
    if (c->input_mult[2] != 0) {
        c->staging_elems = (int64_t)c->num_outputs * c->ctas_per_output;
        if (!bx)
            c->staging_elems *= (int64_t)bw * c->output_vec;
    }
    return 0;
}

unsigned bp_scan_log_threads_x(uint32_t num_rows, uint32_t row_size)
{
    uint32_t lx = 0, ly = 0;
    while (lx < 31 && ((uint32_t)1 << lx) < row_size)
        ++lx;
    while (ly < 31 && ((uint32_t)1 << ly) < num_rows)
        ++ly;
    /* unsigned, as ATen instantiates it: a negative 9 + diff wraps to a
     * huge value, which the clamp below turns into 9 */
    uint32_t diff = lx - ly;
    lx = ((uint32_t)9 + diff) / (uint32_t)2;
    return lx < 4 ? 4 : lx > 9 ? 9 : lx;
}

int bp_redcfg_flags(const char *spec)
{
    static const struct {
        const char *name;
        unsigned bit;
        bool set;
    } words[] = {
        {"vec128=ge", BP_REDCFG_VEC_GE128, true}, {"vec128=gt", BP_REDCFG_VEC_GE128, false},
        {"run=xy", BP_REDCFG_X_FIRST, true},      {"run=yx", BP_REDCFG_X_FIRST, false},
        {"shfl=desc", BP_REDCFG_SHFL_DESC, true}, {"shfl=asc", BP_REDCFG_SHFL_DESC, false},
    };
    unsigned f = BP_REDCFG_NEWER;
    while (spec && *spec) {
        size_t n = strcspn(spec, ",");
        size_t k = 0;
        while (k < sizeof words / sizeof *words &&
               !(strlen(words[k].name) == n && !strncmp(words[k].name, spec, n)))
            k++;
        if (k == sizeof words / sizeof *words)
            return -1;
        f = words[k].set ? f | words[k].bit : f & ~words[k].bit;
        spec += n + (spec[n] == ',');
    }
    return (int)f;
}
