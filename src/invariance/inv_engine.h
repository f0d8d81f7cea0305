/* Invariance engines: what computes a batch that holds the probed rows.
 *
 * A problem is an op on a shape and a dtype, swept along one axis, with
 * inputs that are a pure function of the seed (the counter generator,
 * rng.h): element (r, c) of a [rows, cols] input drawn from stream s is
 *     bp_rng_uniform(seed, s, r * cols + c, -1, 1), rounded to the dtype,
 * with the streams below.  A batch of M rows holds the R probed rows at a
 * placement (first, middle or last: inv.h) and filler rows elsewhere: row
 * i of the batch is probed row i - p inside the probed block starting at p,
 * else filler row i.  So with placement first, the batch of M rows is
 * rows [0, M) of one fixed matrix a whose rows [0, R) are the probed rows:
 * the experiment `torch.mm(a[:M], b)[:R]` against `torch.mm(a[:R], b)`.
 *
 * Ops and their results (H, N: columns; K: the matmul's reduction):
 *   matmul       a [M, K] x b [K, N]               -> rows [R, N]
 *   sum, mean    over the last axis of x [M, H]     -> [R, 1]
 *   rms_norm     x [M, H] with weight w [H], eps 1e-6 -> [R, H]
 *   softmax      over the last axis of x [M, H]     -> [R, H]
 *   log_softmax  over the last axis, fp32 result    -> [R, H]
 *   attention    one decoding query q [heads, d] against keys and values
 *                [L, heads, d] (the batch axis does not apply: split only)
 *                -> [heads, d]
 * Axes: batch (M, the probed rows inside batches of M rows), split (S: the
 * reduction of every output cut into S parts and combined; for attention
 * flash-decoding's rescaled partial softmax over S chunks of the keys),
 * ranks (T: tensor parallelism emulated on one device: the matmul's K cut
 * over T ranks, each rank's result in the dtype, all-reduced in an order).
 * On the split and ranks axes the probed rows sit at their placement in a
 * batch of fixed size (--m, one value). */
#ifndef BP_INV_ENGINE_H
#define BP_INV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "inv.h"
#include "op.h"

enum {
    BP_INV_STREAM_B = 0,     /* matmul's b [K, N]; attention's keys */
    BP_INV_STREAM_FILL = 1,  /* filler rows of the batch */
    BP_INV_STREAM_PROBE = 2, /* the probed rows; attention's query */
    BP_INV_STREAM_W = 3,     /* rms_norm's weight; attention's values */
};

#define BP_INV_RMS_EPS 1e-6f

/* How the parts of a split reduction, or the ranks' results, are combined. */
typedef enum {
    BP_INV_SEQ,   /* split: ((p0 + p1) + p2) + ... */
    BP_INV_TREE,  /* split and ranks: pairwise, (p0 + p1) + (p2 + p3) ... */
    BP_INV_RING,  /* ranks: NCCL's ring: chunk c of the flattened output is
                     summed from rank c + 1 round to rank c */
    BP_INV_RANK,  /* ranks: rank order, r0 + r1 + ... */
    BP_INV_NCOMBINE
} bp_inv_combine_t;

/* The ops of the op table invariance sweeps: matmul, sum, mean, rms_norm,
 * softmax, log_softmax and sdpa, which it calls "attention" (its own name
 * for the other ops is theirs).  Parsing refuses every other op. */
const char *bp_inv_op_name(bp_op_kind_t op);
bool bp_inv_op_parse(const char *s, bp_op_kind_t *out);
const char *bp_inv_combine_name(bp_inv_combine_t c);
bool bp_inv_combine_parse(const char *s, bp_inv_combine_t *out);

typedef struct bp_inv_problem {
    bp_op_kind_t op;
    bp_dtype_t dtype;  /* inputs and results (log_softmax: inputs only) */
    bool tf32;         /* fp32 matmul on TF32 tensor cores */
    int64_t k, n;      /* matmul: a [M, k], b [k, n]; row ops: n = H;
                          attention: k = L (keys), n = d (head dim) */
    int64_t heads;     /* attention */
    int64_t rows;      /* R, probed rows (attention: 1 query) */
    int64_t mmax;      /* the largest batch swept (batch axis) */
    uint64_t seed;
    bp_inv_axis_t axis;
    int64_t batch;     /* split and ranks axes: the batch size */
    bp_inv_combine_t combine;
    bool output_partials; /* split matmul: each part rounded to the dtype
                             (an output-type reduction), not kept in fp32 */
    int reduction;     /* cublaslt's forced split-K: its reduction scheme
                          (CUBLASLT_REDUCTION_SCHEME_*; 0: compute type) */
} bp_inv_problem_t;

/* "bf16", or "tf32" for fp32 on TF32. */
const char *bp_inv_dtype_name(const bp_inv_problem_t *p);
/* The result's element type (log_softmax: fp32). */
bp_dtype_t bp_inv_result_dtype(const bp_inv_problem_t *p);
/* The result's rows and columns (rows * cols elements). */
int64_t bp_inv_result_rows(const bp_inv_problem_t *p);
int64_t bp_inv_result_cols(const bp_inv_problem_t *p);
size_t bp_inv_result_elems(const bp_inv_problem_t *p);
/* "[M, 4096] x [4096, 4096]", "[M, 4096]", "32 heads, L 32768, d 128". */
void bp_inv_shape_format(const bp_inv_problem_t *p, char *out, size_t n);
/* The shape, short: "4096x4096" (K x N), "H 4096", "32x4096x128" (heads x
 * keys x head dim). */
void bp_inv_dims_format(const bp_inv_problem_t *p, char *out, size_t n);
/* The length of the reduction that split cuts (K, H or L). */
int64_t bp_inv_reduction_len(const bp_inv_problem_t *p);

/* Rows [row0, row0 + nrows) of a [*, cols] input of dtype dt drawn from
 * stream, as above, into out (nrows * cols elements). */
void bp_inv_fill(bp_dtype_t dt, void *out, int64_t row0, int64_t nrows,
                 int64_t cols, uint64_t seed, uint64_t stream);

typedef struct bp_inv_engine bp_inv_engine_t;
struct bp_inv_engine {
    char name[32];   /* "cpu", "cuda", "cublas", "cublas-pedantic", "cublaslt" */
    char desc[320];  /* settings, filled by setup */
    void *state;
    /* Generates the inputs of p (BP_EUNAVAIL when the engine cannot run it:
     * the message says why). */
    bp_status (*setup)(bp_inv_engine_t *e, const bp_inv_problem_t *p,
                       bp_error_t *err);
    /* Computes configuration v of the axis (batch: M rows; split: S parts;
     * ranks: T ranks) with the probed rows from row pos of the batch; out
     * receives their result (bp_inv_result_elems of bp_inv_result_dtype);
     * algo (initialised by the caller) what ran, where the engine knows.
     * BP_EUNAVAIL: this configuration cannot be run (the message says why);
     * the sweep goes on without it. */
    bp_status (*run)(bp_inv_engine_t *e, int64_t v, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err);
    void (*close)(bp_inv_engine_t *e);
};

/* Engine names this build knows, NULL-terminated. */
const char *const *bp_inv_engine_names(void);
/* Whether the engine needs a GPU. */
bool bp_inv_engine_is_cuda(const char *name);
/* Whether engine name computes op on axis (known without opening it). */
bool bp_inv_engine_supports(const char *name, bp_op_kind_t op, bp_inv_axis_t axis);
/* Opens engine name (gpu: CUDA device index).  BP_EUNAVAIL when it cannot
 * run here, BP_EINPUT for an unknown name. */
bp_status bp_inv_engine_open(const char *name, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err);
void bp_inv_engine_close(bp_inv_engine_t *e);

/* Constructors, one per engine module. */
bp_status bp_inv_engine_cpu(bp_inv_engine_t **out, bp_error_t *err);
/* kind: "cublas", "cublas-pedantic", "cublaslt" (inv_cuda.c). */
bp_status bp_inv_engine_cuda(const char *kind, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err);
/* bitprobe's CUDA implementations of the row ops (inv_rows_cuda.c). */
bp_status bp_inv_engine_cuda_rows(int gpu, bp_inv_engine_t **out, bp_error_t *err);

/* The op record of p's op over the last axis of a batch, as the engines
 * run it through an op table: matmul and sum as probes compute them, the
 * fixed formulation of rms_norm (eps BP_INV_RMS_EPS), softmax and
 * log_softmax (result fp32); mean and attention, which no engine takes
 * whole from a table (the CPU engine composes mean: sum, mul, cast), get
 * their plain op. */
bp_op_t bp_inv_table_op(const bp_inv_problem_t *p);

/* The oracle's correctly rounded result of the probed rows (the exact
 * values rounded once to the result dtype; tf32 rounds to fp32 from the
 * fp32 inputs) into out, on `threads` threads (0: one per core).  The
 * result does not depend on the axis: every configuration computes the
 * same mathematical function. */
bp_status bp_inv_oracle(const bp_inv_problem_t *p, int threads, void *out,
                        bp_error_t *err);

#endif
