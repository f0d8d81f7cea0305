/* sum, mean, prod and var in the order of PyTorch's CUDA reductions: a
 * launch with the geometry and work split of ATen's setReduceConfig
 * (computed on the host: src/core/redcfg.c), each thread, warp, block and grid
 * combining its values as ATen's ReduceOp does
 * (aten/src/ATen/native/cuda/Reduce.cuh):
 *
 *  - thread_reduce_impl: vt0 accumulators; a thread starting at input index
 *    t takes t, t + s, ..., t + (vt0-1) s into accumulators 0..vt0-1, then
 *    moves on by vt0 s (s = step_input); the partial round at the end
 *    fills accumulators from 0; accumulator 0 then absorbs 1, 2, ... in
 *    turn.  Each accumulator holds output_vec consecutive outputs where the
 *    outputs are vectorised.
 *  - input_vectorized_thread_reduce_impl (reductions along a contiguous
 *    axis of 128 or more): the row is cut where its address is aligned to
 *    a vector of input_vec elements; lanes x in [shift, input_vec) of the
 *    first warp row take the elements before the cut into accumulator 0,
 *    each thread then takes whole vectors t, t + s, ... into input_vec
 *    accumulators, lanes x take the tail's element x, and accumulator 0
 *    absorbs the others in turn.
 *  - block_x_reduce: a tree over threadIdx.x through shared memory (x
 *    absorbs x + d for d = blockDim.x/2, ... down to a warp), then warp
 *    shuffles (lane x absorbs lane x + d) by d = 16, 8, ..., 1 (the newer
 *    Reduce.cuh; 1, 2, ..., 16 in the older: src/core/redcfg.h);
 *  - block_y_reduce: the same tree over threadIdx.y (y absorbs y + d for
 *    d = blockDim.y/2, ..., 1); run() reduces over x first, then y (the
 *    newer; y first in the older);
 *  - global_reduce (ctas_per_output > 1): each block's result is staged in
 *    global memory; the last block to finish combines the staged values in
 *    a fixed order (thread k takes k, k + step, ...), then reduces over y
 *    and x as above.  Which block comes last does not change the order.
 *
 * The ops (SharedReduceOps.h, ReduceSumProdKernel.cu, ReduceMomentKernel.cu):
 *  sum  ident 0, a + b;  mean as sum, projected a * factor (MeanOps);
 *  prod ident 1, a * b (jitted by PyTorch, same Reduce.cuh order);
 *  var  WelfordOps with an int32 count and a float (double for fp64)
 *       nf; reduce: delta = x - mean, mean += delta / nf,
 *       m2 = fma(delta, x - mean, m2); combine: nb = b.nf / (a.nf + b.nf),
 *       mean = fma(delta, nb, a.mean), m2 = fma(delta*delta*a.nf, nb,
 *       a.m2 + b.m2): nvcc contracts those products into fmas in PyTorch's
 *       build (-fmad=true); project m2 / max(nf - correction, 0).
 * Accumulators: float for fp32/bf16/fp16 inputs, double for fp64, int64
 * for integers; every operation here is an _rn intrinsic, so that nothing
 * but the fmas above is contracted. */
#include "bpk_common.cuh"

namespace {

__device__ __forceinline__ int elem_size(int dt)
{
    return dt == BPK_F64 || dt == BPK_I64 ? 8 : dt == BPK_I32 || dt == BPK_F32 ? 4 : 2;
}

__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ long long add_rn(long long a, long long b)
{
    return (long long)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ long long mul_rn(long long a, long long b)
{
    return (long long)((unsigned long long)a * (unsigned long long)b);
}
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }

/* sum and mean (MeanOps: factor 1 for sum, no rounding then) */
template <typename A> struct SumOp {
    typedef A acc;
    A factor;
    int scale;
    __device__ A ident() const { return (A)0; }
    __device__ A reduce(A a, A x) const { return add_rn(a, x); }
    __device__ A combine(A a, A b) const { return add_rn(a, b); }
    __device__ A project(A a) const { return scale ? mul_rn(a, factor) : a; }
    __device__ A shfl(A a, int d, unsigned mask) const { return __shfl_down_sync(mask, a, d); }
};

template <typename A> struct ProdOp {
    typedef A acc;
    __device__ A ident() const { return (A)1; }
    __device__ A reduce(A a, A x) const { return mul_rn(a, x); }
    __device__ A combine(A a, A b) const { return mul_rn(a, b); }
    __device__ A project(A a) const { return a; }
    __device__ A shfl(A a, int d, unsigned mask) const { return __shfl_down_sync(mask, a, d); }
};

template <typename A> struct Welford {
    A mean, m2;
    int n;
    A nf;
};

template <typename A> struct VarOp {
    typedef Welford<A> acc;
    A correction;
    __device__ acc ident() const { return acc{(A)0, (A)0, 0, (A)0}; }
    __device__ acc reduce(acc a, A x) const
    {
        int n = a.n + 1;
        A nf = (A)n;
        A delta = sub_rn(x, a.mean);
        A mean = add_rn(a.mean, div_rn(delta, nf));
        return acc{mean, fma_rn(delta, sub_rn(x, mean), a.m2), n, nf};
    }
    __device__ acc combine(acc a, acc b) const
    {
        if (a.nf == (A)0)
            return b;
        if (b.nf == (A)0)
            return a;
        A delta = sub_rn(b.mean, a.mean);
        A count = add_rn(a.nf, b.nf);
        A nb = div_rn(b.nf, count);
        return acc{fma_rn(delta, nb, a.mean),
                   fma_rn(mul_rn(mul_rn(delta, delta), a.nf), nb, add_rn(a.m2, b.m2)), -1,
                   count};
    }
    __device__ A project(acc a) const
    {
        A div = a.nf > correction ? sub_rn(a.nf, correction) : (A)0;
        return div_rn(a.m2, div);
    }
    __device__ acc shfl(acc a, int d, unsigned mask) const
    {
        return acc{__shfl_down_sync(mask, a.mean, d), __shfl_down_sync(mask, a.m2, d),
                   __shfl_down_sync(mask, a.n, d), __shfl_down_sync(mask, a.nf, d)};
    }
};

/* amin, amax: ReduceMinValuesKernel.cu / ReduceMaxValuesKernel.cu's
 * MinNanFunctor / MaxNanFunctor as reduce and combine, (isnan(a) || a < b)
 * ? a : b (a > b for amax), from numeric_limits' upper (lower) bound: on a
 * tie (+0 and -0) the later operand in the reduction's order is kept, so
 * the sign of a zero result is the order's; a NaN keeps its payload. */
template <typename A> struct MinMaxOp {
    typedef A acc;
    int mx;
    __device__ A ident() const;
    __device__ A pick(A a, A b) const { return (a != a || (mx ? a > b : a < b)) ? a : b; }
    __device__ A reduce(A a, A x) const { return pick(a, x); }
    __device__ A combine(A a, A b) const { return pick(a, b); }
    __device__ A project(A a) const { return a; }
    __device__ A shfl(A a, int d, unsigned mask) const { return __shfl_down_sync(mask, a, d); }
};
template <> __device__ float MinMaxOp<float>::ident() const
{
    return mx ? -__int_as_float(0x7f800000) : __int_as_float(0x7f800000);
}
template <> __device__ double MinMaxOp<double>::ident() const
{
    return mx ? -__longlong_as_double(0x7ff0000000000000ll)
              : __longlong_as_double(0x7ff0000000000000ll);
}
template <> __device__ long long MinMaxOp<long long>::ident() const
{
    return mx ? (long long)0x8000000000000000ull : 0x7fffffffffffffffll;
}

template <typename Op> struct value_of;
template <typename A> struct value_of<MinMaxOp<A> > { typedef A type; };
template <typename A> struct value_of<SumOp<A> > { typedef A type; };
template <typename A> struct value_of<ProdOp<A> > { typedef A type; };
template <typename A> struct value_of<VarOp<A> > { typedef A type; };

template <class Op, int VT0, int IVS, int OVS> struct Tree {
    typedef typename Op::acc Acc;
    typedef typename value_of<Op>::type A;

    Op op;
    bp_redcfg_t c;
    const void *in;
    int in_dt;
    void *out;
    int out_dt;
    Acc *stage;
    int *sem;

    __device__ A load(int64_t i) const { return bpk_num<A>::load(in, in_dt, i); }

    /* first input element of output o */
    __device__ int64_t base(int64_t o) const
    {
        return (o / c.inner) * c.len * c.inner + o % c.inner;
    }

    /* ReduceConfig::should_reduce_tail */
    __device__ bool reduce_tail() const
    {
        return (c.input_mult[1] == 0 || threadIdx.y == 0) &&
               (c.input_mult[2] == 0 || blockIdx.y == 0);
    }

    __device__ void thread_reduce(int64_t o, int64_t t, Acc *v) const
    {
        int64_t b = base(o);
        if (c.vectorize_input) { /* OVS == 1, stride 1 */
            const int V = IVS;
            int es = elem_size(in_dt);
            int64_t end = c.num_inputs;
            Acc head = op.ident();
            int shift = (int)(((uint64_t)in + (uint64_t)(b * es)) % (uint64_t)(V * es)) / es;
            if (shift > 0) {
                b -= shift;
                end += shift;
                if ((int)threadIdx.x >= shift && (int)threadIdx.x < V && reduce_tail())
                    head = op.reduce(head, load(b + threadIdx.x));
                end -= V;
                b += V;
            }
            Acc acc[V];
            acc[0] = head;
            for (int i = 1; i < V; i++)
                acc[i] = op.ident();
            for (int64_t idx = t; idx * V + V - 1 < end; idx += c.step_input)
                for (int i = 0; i < V; i++)
                    acc[i] = op.reduce(acc[i], load(b + idx * V + i));
            int64_t tail = end - end % V;
            if (reduce_tail() && tail + (int64_t)threadIdx.x < end)
                acc[0] = op.reduce(acc[0], load(b + tail + threadIdx.x));
            for (int i = 1; i < V; i++)
                acc[0] = op.combine(acc[0], acc[i]);
            v[0] = acc[0];
            return;
        }
        const int64_t end = c.num_inputs, s = c.step_input, k = c.inner;
        Acc acc[VT0][OVS];
        for (int i = 0; i < VT0; i++)
            for (int j = 0; j < OVS; j++)
                acc[i][j] = op.ident();
        int64_t idx = t;
        for (; idx + (VT0 - 1) * s < end; idx += s * VT0)
            for (int i = 0; i < VT0; i++)
                for (int j = 0; j < OVS; j++)
                    acc[i][j] = op.reduce(acc[i][j], load(b + (idx + i * s) * k + j));
        for (int i = 0; i < VT0 && idx < end; i++, idx += s)
            for (int j = 0; j < OVS; j++)
                acc[i][j] = op.reduce(acc[i][j], load(b + idx * k + j));
        for (int i = 1; i < VT0; i++)
            for (int j = 0; j < OVS; j++)
                acc[0][j] = op.combine(acc[0][j], acc[i][j]);
        for (int j = 0; j < OVS; j++)
            v[j] = acc[0][j];
    }

    __device__ void block_y(Acc *v, Acc *sh) const
    {
        int at = threadIdx.x + threadIdx.y * blockDim.x;
        for (int j = 0; j < OVS; j++)
            sh[at * OVS + j] = v[j];
        for (int d = blockDim.y / 2; d > 0; d >>= 1) {
            __syncthreads();
            if ((int)threadIdx.y < d && threadIdx.y + d < blockDim.y) {
                int from = threadIdx.x + (threadIdx.y + d) * blockDim.x;
                for (int j = 0; j < OVS; j++) {
                    v[j] = op.combine(v[j], sh[from * OVS + j]);
                    sh[at * OVS + j] = v[j];
                }
            }
        }
    }

    __device__ void block_x(Acc *v, Acc *sh) const
    {
        int dim = blockDim.x;
        if (dim > warpSize) {
            int at = threadIdx.x + threadIdx.y * blockDim.x;
            for (int j = 0; j < OVS; j++)
                sh[at * OVS + j] = v[j];
            for (int d = dim / 2; d >= warpSize; d >>= 1) {
                __syncthreads();
                if ((int)threadIdx.x < d && threadIdx.x + d < blockDim.x)
                    for (int j = 0; j < OVS; j++) {
                        v[j] = op.combine(v[j], sh[(at + d) * OVS + j]);
                        sh[at * OVS + j] = v[j];
                    }
            }
            dim = warpSize;
        }
        __syncthreads();
        /* the block's threads in this warp (a block of fewer than 32) */
        int nt = blockDim.x * blockDim.y, first = (threadIdx.x + threadIdx.y * blockDim.x) & ~31;
        unsigned mask = nt - first >= 32 ? 0xffffffffu : (1u << (nt - first)) - 1u;
        if (c.shfl_desc) {
            for (int d = dim >> 1; d > 0; d >>= 1)
                for (int j = 0; j < OVS; j++)
                    v[j] = op.combine(v[j], op.shfl(v[j], d, mask));
        } else {
            for (int d = 1; d < dim; d <<= 1)
                for (int j = 0; j < OVS; j++)
                    v[j] = op.combine(v[j], op.shfl(v[j], d, mask));
        }
    }

    __device__ bool should_store(int64_t o) const
    {
        return o < c.num_outputs && (c.input_mult[0] == 0 || threadIdx.x == 0) &&
               (c.input_mult[1] == 0 || threadIdx.y == 0);
    }

    __device__ void store(int64_t o, const Acc *v) const
    {
        for (int j = 0; j < OVS; j++)
            bpk_num<A>::store(out, out_dt, o + j, op.project(v[j]));
    }

    /* ReduceConfig::staging_memory_offset */
    __device__ int64_t staging(int64_t cta2) const
    {
        int64_t off = cta2 + (int64_t)blockIdx.x * gridDim.y;
        if (c.input_mult[0] == 0)
            off = threadIdx.x + off * blockDim.x;
        return off;
    }

    __device__ void global(int64_t o, Acc *v, Acc *sh) const
    {
        __shared__ bool last;
        bool st = should_store(o);
        if (st)
            for (int j = 0; j < OVS; j++)
                stage[staging(blockIdx.y) * OVS + j] = v[j];
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y == 0)
            last = atomicAdd(&sem[blockIdx.x], 1) == (int)gridDim.y - 1;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        for (int j = 0; j < OVS; j++)
            v[j] = op.ident();
        int64_t k = c.input_mult[0] ? threadIdx.x + threadIdx.y * blockDim.x : threadIdx.y;
        int64_t step = c.input_mult[0] ? blockDim.x * blockDim.y : blockDim.y;
        for (; k < c.ctas_per_output; k += step) {
            const Acc *src = stage + staging(k) * OVS;
            for (int j = 0; j < OVS; j++)
                v[j] = op.combine(v[j], src[j]);
        }
        block_y(v, sh);
        if (c.input_mult[0])
            block_x(v, sh);
        if (st)
            store(o, v);
    }

    __device__ void run() const
    {
        extern __shared__ __align__(16) unsigned char smem[];
        Acc *sh = (Acc *)smem;
        int64_t o = ((int64_t)threadIdx.x * c.output_mult[0] +
                     (int64_t)threadIdx.y * c.output_mult[1] +
                     (int64_t)blockIdx.x * c.step_output) * OVS;
        int64_t t = (int64_t)threadIdx.x * c.input_mult[0] +
                    (int64_t)threadIdx.y * c.input_mult[1] +
                    (int64_t)blockIdx.y * c.input_mult[2];
        Acc v[OVS];
        for (int j = 0; j < OVS; j++)
            v[j] = op.ident();
        if (o < c.num_outputs && t < c.num_inputs)
            thread_reduce(o, t, v);
        if (c.x_first) {
            if (c.input_mult[0])
                block_x(v, sh);
            __syncthreads();
            if (c.input_mult[1])
                block_y(v, sh);
        } else {
            if (c.input_mult[1])
                block_y(v, sh);
            __syncthreads();
            if (c.input_mult[0])
                block_x(v, sh);
        }
        if (c.input_mult[2])
            global(o, v, sh);
        else if (should_store(o))
            store(o, v);
    }
};

template <class Op, int VT0, int IVS, int OVS>
__global__ void __launch_bounds__(512) tree_kernel(Tree<Op, VT0, IVS, OVS> r)
{
    r.run();
}

template <class Op, int VT0, int IVS, int OVS>
int launch_ovs(const Op &op, const bp_redcfg_t *c, void *out, int out_dt, const void *in,
               int in_dt, void *stage, int *sem, cudaStream_t s)
{
    Tree<Op, VT0, IVS, OVS> r{op, *c, in, in_dt, out, out_dt, (typename Op::acc *)stage, sem};
    tree_kernel<Op, VT0, IVS, OVS><<<dim3(c->grid_x, c->grid_y),
                                     dim3(c->block_x, c->block_y), c->shared_bytes, s>>>(r);
    return bpk_launched();
}

/* One kernel per output vector width; the input vectors (IVS) only where
 * the input is vectorised (output_vec 1). */
template <class Op, int VT0, int IVS>
int launch(const Op &op, const bp_redcfg_t *c, void *out, int out_dt, const void *in,
           int in_dt, void *stage, int *sem, cudaStream_t s)
{
    switch (c->output_vec) {
    case 4: return launch_ovs<Op, VT0, VT0, 4>(op, c, out, out_dt, in, in_dt, stage, sem, s);
    case 2: return launch_ovs<Op, VT0, VT0, 2>(op, c, out, out_dt, in, in_dt, stage, sem, s);
    default: return launch_ovs<Op, VT0, IVS, 1>(op, c, out, out_dt, in, in_dt, stage, sem, s);
    }
}

template <typename A>
int launch_op(int op, const bp_redcfg_t *c, void *out, int out_dt, const void *in, int in_dt,
              double param, void *stage, int *sem, cudaStream_t s)
{
    switch (op) {
    case BPK_TREE_SUM:
        if (c->input_vec == 8)
            return launch<SumOp<A>, 4, 8>(SumOp<A>{(A)0, 0}, c, out, out_dt, in, in_dt, stage,
                                          sem, s);
        return launch<SumOp<A>, 4, 4>(SumOp<A>{(A)0, 0}, c, out, out_dt, in, in_dt, stage, sem,
                                      s);
    case BPK_TREE_PROD:
        return launch<ProdOp<A>, 4, 4>(ProdOp<A>{}, c, out, out_dt, in, in_dt, stage, sem, s);
    case BPK_TREE_AMIN:
    case BPK_TREE_AMAX:
        return launch<MinMaxOp<A>, 4, 4>(MinMaxOp<A>{op == BPK_TREE_AMAX}, c, out, out_dt, in,
                                         in_dt, stage, sem, s);
    }
    return (int)cudaErrorInvalidValue;
}

template <typename A>
int launch_float_op(int op, const bp_redcfg_t *c, void *out, int out_dt, const void *in,
                    int in_dt, double param, void *stage, int *sem, cudaStream_t s)
{
    switch (op) {
    case BPK_TREE_MEAN:
        if (c->input_vec == 8)
            return launch<SumOp<A>, 4, 8>(SumOp<A>{(A)param, 1}, c, out, out_dt, in, in_dt,
                                          stage, sem, s);
        return launch<SumOp<A>, 4, 4>(SumOp<A>{(A)param, 1}, c, out, out_dt, in, in_dt, stage,
                                      sem, s);
    case BPK_TREE_VAR:
        return launch<VarOp<A>, 2, 2>(VarOp<A>{(A)param}, c, out, out_dt, in, in_dt, stage, sem,
                                      s);
    }
    return launch_op<A>(op, c, out, out_dt, in, in_dt, param, stage, sem, s);
}

} // namespace

extern "C" int bpk_tree_reduce(void *stream, int op, void *out, int out_dt, const void *in,
                               int in_dt, const bp_redcfg_t *cfg, double param, void *staging,
                               int *semaphores)
{
    if (!bpk_dtype_ok(out_dt) || !bpk_dtype_ok(in_dt) || !cfg || cfg->num_outputs <= 0 ||
        cfg->num_inputs <= 0 || (cfg->input_mult[2] && (!staging || !semaphores)) ||
        (cfg->vectorize_input && cfg->output_vec != 1) ||
        cfg->input_vec != (op == BPK_TREE_VAR ? 2 : cfg->input_vec == 8 ? 8 : 4) ||
        (cfg->input_vec == 8 && op != BPK_TREE_SUM && op != BPK_TREE_MEAN))
        return (int)cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)stream;
    switch (in_dt) {
    case BPK_F64:
        return launch_float_op<double>(op, cfg, out, out_dt, in, in_dt, param, staging,
                                       semaphores, s);
    case BPK_F32:
    case BPK_BF16:
    case BPK_F16:
        return launch_float_op<float>(op, cfg, out, out_dt, in, in_dt, param, staging,
                                      semaphores, s);
    case BPK_I64:
    case BPK_I32: /* wrapping int32 sums: the int64 sum's low half */
        return launch_op<long long>(op, cfg, out, out_dt, in, in_dt, param, staging,
                                    semaphores, s);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int bpk_tree_acc_bytes(int op, int in_dt)
{
    bool wide = in_dt == BPK_F64, flt = wide || in_dt == BPK_F32 || in_dt == BPK_BF16 ||
                                        in_dt == BPK_F16;
    switch (op) {
    case BPK_TREE_SUM:
    case BPK_TREE_PROD:
    case BPK_TREE_AMIN:
    case BPK_TREE_AMAX:
        return flt ? (wide ? 8 : 4) : in_dt == BPK_I64 || in_dt == BPK_I32 ? 8 : 0;
    case BPK_TREE_MEAN:
        return flt ? (wide ? 8 : 4) : 0;
    case BPK_TREE_VAR:
        return !flt ? 0 : wide ? (int)sizeof(Welford<double>) : (int)sizeof(Welford<float>);
    }
    return 0;
}
