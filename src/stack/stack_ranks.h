/* The layer stack's sharded init and tensor-parallel reduction over real
 * ranks: one process per GPU (ranks.h), NCCL between them (nccl_dl.h).
 *
 * Parameters: rank r generates its shard [r*n/W, (r+1)*n/W) of every
 * parameter on its own GPU from the counters the whole parameter uses
 * (stack.h), and an NCCL all-gather assembles every shard on every rank
 * (shards padded to the longest, then moved into place).  Every rank
 * compares the gathered tensor bit for bit, on its GPU, with the
 * parameter generated whole (the unsharded init) and with today's
 * one-device emulation of W shards (stack_init.c); the counts of
 * differing elements are summed over the ranks with an all-reduce.
 *
 * Tensor-parallel reduction (a row-parallel linear, as Megatron splits
 * o_proj): x [T, K] from the counters (kind 14), w = layer 0's o_proj
 * [N, K]; rank r computes the partial x[:, Kr] w[:, Kr]^T (cuBLAS, fp32
 * compute, rounded once to the model dtype) and an NCCL all-reduce (sum,
 * in the model dtype) adds the partials, once per collective configuration
 * (nccl_cfg.h: NCCL_ALGO, NCCL_PROTO, channels, bucket size; by default
 * the environment's NCCL_ALGO ("default"), then Ring and Tree), each on a
 * communicator of its own (NCCL reads NCCL_ALGO and NCCL_PROTO when a
 * communicator starts; rank 0 sends the new unique id over the first
 * communicator).  With a bucket size the [T, N] partials are all-reduced
 * in consecutive calls of at most that many bytes, as DDP and ZeRO cut
 * their gradients into buckets: each element then sits elsewhere in a
 * smaller message.
 * Rank 0 compares each result with the unsharded x w^T (one cuBLAS call
 * over all of K), with each other, and with the oracle (the exact product
 * rounded once), and counts the elements where the reduction is nearer to
 * the oracle than the unsharded result and where it is farther. */
#ifndef BP_STACK_RANKS_H
#define BP_STACK_RANKS_H

#include <stdbool.h>

#include "compare.h"
#include "nccl_cfg.h"
#include "ranks.h"
#include "stack.h"

#define BP_RANKS_MAX_ALGOS 8

typedef struct {
    bp_stack_cfg_t cfg;
    bp_dtype_t dtype;
    uint64_t seed;
    bp_stack_gemm_t gemm;
    int64_t tp_rows;   /* T of the tensor-parallel input */
    bool params, tp, oracle;
    bp_coll_cfg_t algos[BP_RANKS_MAX_ALGOS]; /* default, Ring, Tree */
    int nalgos;
    int oracle_threads;
} bp_ranks_opts_t;

typedef struct {
    bp_stack_param_t p;
    uint64_t vs_whole, vs_emulated; /* differing elements, summed over ranks */
} bp_ranks_param_t;

typedef struct {
    char algo[64];        /* the configuration's name (bp_coll_cfg_name) */
    bp_coll_cfg_t cfg;
    bool ran;
    int group;            /* the first configuration with these bits */
    char error[1024];
    bp_cmp_t vs_unsharded, vs_first, vs_oracle; /* rank 0's */
    bool have_oracle;
    size_t nearer, farther; /* than the unsharded result, to the oracle */
} bp_ranks_tp_t;

typedef struct {
    int world;
    char nccl[32];
    char **gpus;          /* per rank: "GPU 1 NVIDIA H100 ... 00000000:1b:00.0" */
    /* parameters */
    bp_ranks_param_t *params;
    size_t nparams, params_differ;
    uint64_t elems;
    double t_params;
    /* tensor-parallel reduction */
    char tp_weight[64];
    int64_t tp_T, tp_K, tp_N;
    bp_cmp_t unsharded_vs_oracle;
    bool have_oracle;
    bp_ranks_tp_t tp[BP_RANKS_MAX_ALGOS];
    int ntp;
    double t_tp, t_oracle;
} bp_ranks_result_t;

/* This rank's part (every rank calls it; the results are complete on rank
 * 0).  id: the unique id all ranks share. */
bp_status bp_stack_ranks(const bp_ranks_env_t *e, const bp_nccl_id_t *id,
                         const bp_ranks_opts_t *o, bp_ranks_result_t *res, bp_error_t *err);
void bp_ranks_result_free(bp_ranks_result_t *r);
/* Whether a gathered parameter differed on any rank. */
bool bp_ranks_failed(const bp_ranks_result_t *r);

#endif
