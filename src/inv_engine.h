/* Invariance engines: what computes a batch that holds the probed rows.
 *
 * A problem is an op on a shape and a dtype, with inputs that are a pure
 * function of the seed (the counter generator, rng.h): element (r, c) of a
 * [rows, cols] input drawn from stream s is
 *     bp_rng_uniform(seed, s, r * cols + c, -1, 1), rounded to the dtype,
 * with the streams below.  A batch of M rows holds the R probed rows at a
 * placement (first, middle or last: inv.h) and filler rows elsewhere: row
 * i of the batch is probed row i - p inside the probed block starting at p,
 * else filler row i.  So with placement first, the batch of M rows is
 * rows [0, M) of one fixed matrix a whose rows [0, R) are the probed rows:
 * the experiment `torch.mm(a[:M], b)[:R]` against `torch.mm(a[:R], b)`.
 *
 * An engine computes the whole batch as its library or backend would and
 * returns the probed rows' results; it may say what algorithm ran. */
#ifndef BP_INV_ENGINE_H
#define BP_INV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "inv.h"

enum {
    BP_INV_STREAM_B = 0,     /* matmul's b [K, N] */
    BP_INV_STREAM_FILL = 1,  /* filler rows of the batch */
    BP_INV_STREAM_PROBE = 2, /* the probed rows */
};

typedef enum { BP_INV_MATMUL, BP_INV_NOPS } bp_inv_op_t;

const char *bp_inv_op_name(bp_inv_op_t op);

typedef struct bp_inv_problem {
    bp_inv_op_t op;
    bp_dtype_t dtype;  /* inputs and results */
    bool tf32;         /* fp32 matmul on TF32 tensor cores */
    int64_t k, n;      /* matmul: a [M, k], b [k, n] */
    int64_t rows;      /* R, probed rows */
    int64_t mmax;      /* the largest batch swept */
    uint64_t seed;
} bp_inv_problem_t;

/* "bf16", or "tf32" for fp32 on TF32. */
const char *bp_inv_dtype_name(const bp_inv_problem_t *p);
/* Elements of one result: rows * n. */
size_t bp_inv_result_elems(const bp_inv_problem_t *p);
/* "[M, 4096] x [4096, 4096]". */
void bp_inv_shape_format(const bp_inv_problem_t *p, char *out, size_t n);

/* Rows [row0, row0 + nrows) of a [*, cols] input of dtype dt drawn from
 * stream, as above, into out (nrows * cols elements). */
void bp_inv_fill(bp_dtype_t dt, void *out, int64_t row0, int64_t nrows,
                 int64_t cols, uint64_t seed, uint64_t stream);

typedef struct bp_inv_engine bp_inv_engine_t;
struct bp_inv_engine {
    char name[32];   /* "cpu", "cublas", "cublas-pedantic", "cublaslt" */
    char desc[320];  /* settings, filled by setup */
    void *state;
    /* Generates the inputs of p (BP_EUNAVAIL when the engine cannot run it:
     * the message says why). */
    bp_status (*setup)(bp_inv_engine_t *e, const bp_inv_problem_t *p,
                       bp_error_t *err);
    /* Computes the batch of m rows with the probed rows from row pos; out
     * receives their result (bp_inv_result_elems of p's dtype); algo
     * (initialised by the caller) what ran, where the engine knows. */
    bp_status (*run)(bp_inv_engine_t *e, int64_t m, int64_t pos, void *out,
                     bp_inv_algo_t *algo, bp_error_t *err);
    void (*close)(bp_inv_engine_t *e);
};

/* Engine names this build knows, NULL-terminated. */
const char *const *bp_inv_engine_names(void);
/* Whether the engine needs a GPU. */
bool bp_inv_engine_is_cuda(const char *name);
/* Opens engine name (gpu: CUDA device index; threads: CPU workers, 0 for
 * one per core).  BP_EUNAVAIL when it cannot run here, BP_EINPUT for an
 * unknown name. */
bp_status bp_inv_engine_open(const char *name, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err);
void bp_inv_engine_close(bp_inv_engine_t *e);

/* Constructors, one per engine module. */
bp_status bp_inv_engine_cpu(bp_inv_engine_t **out, bp_error_t *err);
/* kind: "cublas", "cublas-pedantic", "cublaslt" (inv_cuda.c). */
bp_status bp_inv_engine_cuda(const char *kind, int gpu, bp_inv_engine_t **out,
                             bp_error_t *err);

/* The oracle's correctly rounded result of the probed rows (the exact
 * values rounded once to p's dtype; tf32 rounds to fp32 from the fp32
 * inputs) into out, on `threads` threads (0: one per core). */
bp_status bp_inv_oracle(const bp_inv_problem_t *p, int threads, void *out,
                        bp_error_t *err);

#endif
