/* The launch geometry and work split of PyTorch's CUDA reductions
 * (aten/src/ATen/native/cuda/Reduce.cuh: setReduceConfig, ReduceConfig,
 * get_output_vec_size), computed on the host for a contiguous tensor
 * reduced over one axis or over all of it, so that kernels/treereduce.cu
 * can combine the values in the order ATen's ReduceOp does.
 *
 * Plain C without CUDA headers: the device's shape (multiprocessor count,
 * threads per multiprocessor, warp size) comes in as numbers, read by the
 * caller from cudaGetDeviceProperties as ATen reads them, so that the
 * configuration is testable on a host without a GPU (tests/core/check_redcfg.c).
 *
 * The input is viewed as [outer, len, inner], reduced over len; outputs
 * are numbered o = k * inner + i (k < outer, i < inner), and output o reads
 * elements (o / inner) * len * inner + o % inner + j * inner, j < len. */
#ifndef BP_REDCFG_H
#define BP_REDCFG_H

#include <stdint.h>

/* What ATen's ReduceConfig holds, plus the view of the input. */
typedef struct {
    int32_t num_inputs;  /* values reduced into each output */
    int32_t num_outputs;
    int32_t step_input, step_output, ctas_per_output;
    int32_t input_mult[3];  /* lane, warp, block-y multipliers of the input index */
    int32_t output_mult[2]; /* lane, warp multipliers of the output index */
    int32_t block_x, block_y, grid_x, grid_y;
    int32_t vectorize_input; /* 1: input_vectorized_thread_reduce_impl */
    int32_t input_vec;       /* its vector width (vt0 for every op here) */
    int32_t output_vec;      /* 1, 2 or 4 outputs per thread */
    int32_t x_first;         /* run(): block_x_reduce before block_y_reduce */
    int32_t shfl_desc;       /* warp shuffles down by 16, 8, ..., 1 (not 1, 2, ..., 16) */
    int32_t shared_bytes;    /* dynamic shared memory of the launch */
    int64_t staging_elems;   /* accumulators of the global reduction (0: none) */
    int64_t len, inner;      /* the input view */
} bp_redcfg_t;

/* The device properties setReduceConfig reads. */
typedef struct {
    int sm_count;           /* multiProcessorCount */
    int max_threads_per_sm; /* maxThreadsPerMultiProcessor */
    int warp_size;          /* warpSize */
} bp_gpu_props_t;

/* Where ATen's versions differ (an older Reduce.cuh, 2025, and a newer,
 * 2026, whose warp-shuffle order is pytorch/pytorch PR 164790):
 *  BP_REDCFG_VEC_GE128  input vectorised from 128 values whatever vt0 (newer:
 *                       `dim0 >= 128`), not above 128 with vt0 >= the vector
 *                       width (older: `dim0 > 128 && vt0 >= input_vec_size`);
 *  BP_REDCFG_X_FIRST    ReduceOp::run reduces over x, then y (newer);
 *  BP_REDCFG_SHFL_DESC  warp shuffles by decreasing offsets (newer: "offset
 *                       decreasing for better numerics matching Triton").
 * BP_REDCFG_NEWER is all three: what bitprobe takes unless told otherwise
 * (BP_ATEN_REDUCE, be_cuda_rows.c). */
enum {
    BP_REDCFG_VEC_GE128 = 1,
    BP_REDCFG_X_FIRST = 2,
    BP_REDCFG_SHFL_DESC = 4,
    BP_REDCFG_NEWER = 7
};

/* The configuration for a reduction of [outer, len, inner] over len with
 * outer * len * inner > 0 and outer * inner > 0: scalar_bytes is the size
 * of the kernel's input element (scalar_t), arg_bytes of its accumulator
 * (arg_t), vt0 and input_vec_size the template arguments of
 * gpu_reduce_kernel, in_addr the input's device address (ATen vectorises
 * outputs only where it is aligned).  0, or -1 where the sizes exceed what
 * one 32-bit-indexed launch covers (ATen splits those; bitprobe refuses).
 * flags: BP_REDCFG_*. */
int bp_redcfg_make(bp_redcfg_t *c, int64_t outer, int64_t len, int64_t inner,
                   int scalar_bytes, int arg_bytes, int vt0, int input_vec_size,
                   uint64_t in_addr, const bp_gpu_props_t *gpu, unsigned flags);

/* The flags named by a comma-separated list of vec128=ge|gt, run=xy|yx,
 * shfl=desc|asc (each absent one as in BP_REDCFG_NEWER); -1 for anything
 * else.  NULL or "" gives BP_REDCFG_NEWER. */
int bp_redcfg_flags(const char *spec);

/* The launch geometry of ATen's scan_innermost_dim (ScanUtils.cuh:
 * get_log_num_threads_x_inner_scan): log2 of the block's x size for
 * num_rows rows of row_size values, computed in uint32_t as ATen does. */
unsigned bp_scan_log_threads_x(uint32_t num_rows, uint32_t row_size);

#endif
