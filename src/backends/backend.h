/* Backends: a struct with the backend's op table (one entry per op kind,
 * keyed by bp_op_kind_t) plus the data movement a device backend needs.  A backend whose open fails is
 * reported as unavailable (BP_EUNAVAIL with the reason), never fatal.
 * bp_backend_run is the one executor every command uses: it infers shapes,
 * allocates outputs where the backend computes, calls the op entries in
 * order and leaves every buffer's result in host memory. */
#ifndef BP_BACKEND_H
#define BP_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "cpu_isa.h"
#include "mkl_isa.h"
#include "onednn_isa.h"
#include "error.h"
#include "op.h"
#include "probe.h"
#include "strided.h"

typedef enum {
    BP_CPU_MATH_SLEEF_U10,
    BP_CPU_MATH_SLEEF_U35,
    BP_CPU_MATH_LIBM
} bp_cpu_math_t;

typedef struct bp_backend_opts {
    bp_cpu_math_t cpu_math;
    bp_cpu_isa_t cpu_isa; /* ATen CPU capability the CPU backend models */
    bp_onednn_isa_t onednn_isa; /* oneDNN's ISA for the ops ATen hands it */
    bp_mkl_isa_t mkl_isa; /* MKL's code path for fp32 GEMMs (sgemm) */
    int gpu;     /* CUDA device index */
    const char *gpus; /* --gpu all or a list (0,2): each a backend of its
                         own, cuda:K (cli.c), or NULL */
    bool pinned; /* bp_backend_pin_gpu showed CUDA device gpu_given alone:
                    gpu is 0, the one visible */
    int gpu_given;
    int threads; /* worker threads for the oracle; 0: one per core */
    /* --cuda-blas: PyTorch's BLAS settings for the CUDA backend's GEMMs,
     * KEY=VALUE,... (gemm_plan.h), over the environment's; "" for none */
    char cuda_blas[256];
} bp_backend_opts_t;

/* A tensor operand as PyTorch holds it: the buffer whose memory a chain
 * of view ops (transpose, permute, reshape, slice, ...) reads, and the
 * geometry those views give it over that buffer (strided.h). */
typedef struct bp_opview {
    const bp_buf_t *base;
    bp_strided_t geo;
} bp_opview_t;

/* One op to compute: operands already on the backend's side. */
typedef struct bp_exec {
    const bp_op_t *op;
    const bp_buf_t *a, *b;          /* tensor operands; NULL where scalar/none */
    const bp_buf_t *const *inputs;  /* concat operands */
    int ninputs;
    bp_buf_t *out;                  /* shaped and allocated by the executor */
    /* An op flagged BP_OPF_VIEWS on a device backend: views[0] is a's,
     * views[1] b's, views[2 + k] inputs[k]'s (base NULL where the operand
     * is absent), each base with its device copy.  NULL elsewhere: host
     * backends compute from the values, which views do not change. */
    const bp_opview_t *views;
    /* a matmul, linear or addmm: how PyTorch holds its operands, which
     * picks the BLAS call (bp_probe_gemm_layout); UNKNOWN elsewhere and
     * where not known */
    bp_gemm_layout_t gemm_layout;
} bp_exec_t;

typedef struct bp_backend bp_backend_t;
typedef struct bp_memo bp_memo_t; /* memo.h */
typedef bp_status (*bp_op_fn)(bp_backend_t *be, const bp_exec_t *x,
                              bp_error_t *err);

/* Each backend module's op table: a const array of BP_OP_COUNT entries
 * written with designated initializers, [BP_OP_ADD] = ...  Every entry is
 * filled (check_op tests it); an op a backend does not compute has
 * bp_op_unsupported, which fails with "op 'x' is not supported on backend
 * 'y'" (BP_EUNAVAIL), and bp_backend_run refuses such a probe before it
 * computes anything. */
extern const bp_op_fn bp_cpu_ops[BP_OP_COUNT];
extern const bp_op_fn bp_oracle_ops[BP_OP_COUNT];
extern const bp_op_fn bp_cuda_ops[BP_OP_COUNT]; /* when built with CUDA */
bp_status bp_op_unsupported(bp_backend_t *be, const bp_exec_t *x,
                            bp_error_t *err);
/* A load op's bytes into x->out's host data (every backend's load; a
 * device backend uploads after): the op must hold its tensor
 * (bp_probe_load) of exactly the result's size. */
bp_status bp_op_load_host(const bp_exec_t *x, bp_error_t *err);
/* The dtype x's op computes in by PyTorch's promotion over its a and b
 * (bp_op_promote): a comparison's common dtype, where's result. */
bp_dtype_t bp_exec_promote(const bp_exec_t *x);
/* Whether be computes op kind k (its entry is filled and not
 * bp_op_unsupported). */
bool bp_backend_supports(const bp_backend_t *be, bp_op_kind_t k);
/* Runs op x->op on be (entering its device first, where it has one): the
 * one way to call a backend's op entry, so that every caller gets the one
 * rule for empty operands (backend.c: an op with no result element computes
 * nothing; a reduction over an empty extent fills PyTorch's value). */
bp_status bp_backend_op(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err);

struct bp_backend {
    const char *name; /* "cpu", "oracle", "cuda"; "cuda:K" opened as such */
    char key[64];     /* golden key: "cpu-sleef", "oracle", "cuda-sm90" */
    char inst[32];    /* the name of an instance ("cuda:1"), or "" */
    bool device;      /* computes on device copies (bp_buf_t.dev) */
    void *state;
    json_t *fingerprint; /* environment and options; owned by the backend */
    const bp_op_fn *op; /* the module's op table, BP_OP_COUNT entries */
    /* Called before each op on the thread that runs it (NULL: nothing to
     * do); the CUDA backend makes its device current there. */
    bp_status (*enter)(bp_backend_t *be, bp_error_t *err);
    /* The dtypes its ops read and write (BP_DTYPE_BIT set; the
     * constructors give BP_DTYPES_ARITH): the executor refuses an op on
     * any other with a message naming the dtype, rather than let an op
     * entry meet a dtype it has no code for. */
    uint32_t dtypes;
    /* device backends only */
    bp_status (*dev_alloc)(bp_backend_t *be, bp_buf_t *b, bp_error_t *err);
    void (*dev_free)(bp_backend_t *be, bp_buf_t *b);
    bp_status (*upload)(bp_backend_t *be, bp_buf_t *b, bp_error_t *err);
    bp_status (*download)(bp_backend_t *be, bp_buf_t *b, bp_error_t *err);
    void (*destroy)(bp_backend_t *be);
    /* Zeroed by the constructors; kept by the executor, for --timing. */
    double init_s;         /* driver start (its devices set up) within open */
    double ctx_start_s;    /* device context start within open, seconds */
    uint64_t elems;        /* output elements bp_backend_run computed */
    uint64_t elems_reused; /* output elements it took from the memo */
    bp_memo_t *memo;       /* bp_backend_memo; NULL: off */
};

/* Names of every backend bitprobe knows (cuda too where it was built
 * without CUDA: opening it then says so), NULL-terminated. */
const char *const *bp_backend_names(void);
/* The backend whose devices --gpu selects, opened as "cuda:K" for each. */
#define BP_BACKEND_GPU "cuda"
/* A backend's op table without opening it (bitprobe list --ops); NULL
 * for a backend not built here or an unknown name. */
const bp_op_fn *bp_backend_ops(const char *name);
/* name: a backend of bp_backend_names, or "cuda:K" for CUDA device K
 * (opts->gpu ignored), which the backend is then called. */
bp_status bp_backend_open(const char *name, const bp_backend_opts_t *opts,
                          bp_backend_t **out, bp_error_t *err);
void bp_backend_close(bp_backend_t *be);
/* Whether this process has opened a device backend (CUDA): its teardown
 * can be left to the process's end (cli/main.c). */
bool bp_backend_device_opened(void);
/* For a command that computes on one GPU, before anything in the process
 * starts CUDA (and before it has threads that read the environment): shows
 * CUDA that GPU alone (CUDA_VISIBLE_DEVICES), so that the driver sets up
 * one device, not every device of the host, and makes opts->gpu index it
 * (0; opts->gpu_given keeps the index given, for messages).  Nothing
 * changes where opts->gpus names several GPUs, where BP_CUDA_ALL_DEVICES
 * is set (not empty, not 0), or where the device cannot be named without
 * CUDA (beyond the entries of CUDA_VISIBLE_DEVICES, or beyond the GPUs of
 * /proc/driver/nvidia/gpus when it is unset): CUDA then answers as before.
 * Returns whether it pinned. */
bool bp_backend_pin_gpu(bp_backend_opts_t *opts);
/* The CUDA devices --gpu names ("all" or indices "0,2"), checked against
 * those here, into idx (at most max).  BP_EUNAVAIL with the reason when
 * there is no GPU or an index is beyond them, BP_EINPUT for a bad list. */
bp_status bp_backend_gpu_list(const char *sel, int *idx, int max, int *n, bp_error_t *err);
/* Whether the op entries of backend `name` may run on several threads at
 * once on the one state its open made (they only read it, or lock what
 * they write): the host backends, cpu and oracle (where MPFR is built
 * thread-safe).  Probes then run beside each other on it, each thread
 * through a runner of its own. */
bool bp_backend_shared(const char *name);
/* Whether backend `name` would rather run the probes with GEMMs
 * (bp_backend_probe_gemm) after its other probes (run's lanes: lanes.h's
 * late jobs): cuda, whose first GEMM of a dtype waits until cuBLAS has
 * loaded its kernels, which the warm-up (cuda_gemm.h) does meanwhile. */
bool bp_backend_gemm_late(const char *name);
/* Whether probe p has a GEMM (an op of BP_OPF_VIEWS: sdpa's products
 * are). */
bool bp_backend_probe_gemm(const bp_probe_t *p);
/* A runner of a shared backend be: a copy that shares be's state (be
 * outlives it) and keeps a memo (where be has one) and counts of its own,
 * for one thread at a time; NULL when out of memory.  Its memo starts
 * empty, so a probe's dtypes reuse each other's results when they run on
 * one runner, in order. */
bp_backend_t *bp_backend_runner(const bp_backend_t *be);
/* Frees a runner and its memo, never the state it shares. */
void bp_backend_runner_free(bp_backend_t *r);
/* Lets bp_backend_run reuse, in a probe's next dtype, the results that do
 * not depend on the dtype (memo.h says when that is); off by default. */
bp_status bp_backend_memo(bp_backend_t *be, bool on, bp_error_t *err);
void bp_backend_opts_default(bp_backend_opts_t *o);
bool bp_cpu_math_parse(const char *s, bp_cpu_math_t *out);
const char *bp_cpu_math_name(bp_cpu_math_t m);

/* Runs probe p in dtype dt: bufs (p->nops of them, zeroed by the caller)
 * receive every op's result in host memory.  Frees nothing on failure that
 * bp_backend_bufs_free does not free. */
bp_status bp_backend_run(bp_backend_t *be, const bp_probe_t *p, bp_dtype_t dt,
                         bp_buf_t *bufs, bp_error_t *err);
/* One op on operands already on be's side (host data for the CPU and the
 * oracle, device copies for a device backend), out shaped and allocated
 * there by the caller: how a study that keeps its tensors on a backend
 * between ops (the layer stack, invariance) computes, through the same op
 * entries as a probe.  The dtype check of bp_backend_run, then
 * bp_backend_op (enter hook, empty operands, the op's entry). */
bp_status bp_backend_exec(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err);
/* Runs op i alone on inputs taken from host buffers `given` (the results of
 * another backend, for explain); out receives the result on the host. */
bp_status bp_backend_run_op(bp_backend_t *be, const bp_probe_t *p, size_t i,
                            bp_dtype_t dt, const bp_buf_t *given,
                            bp_buf_t *out, bp_error_t *err);
void bp_backend_bufs_free(bp_buf_t *bufs, size_t n);

/* To be called by a thread that ran backends, before it exits: releases
 * what the backends keep per thread (MPFR's constant caches). */
void bp_backend_thread_done(void);
void bp_be_oracle_thread_done(void);
/* Whether oracles may run on several threads at once: where MPFR keeps
 * its exponent range per thread (bp_oracle_threads says the same). */
bool bp_be_oracle_shared(void);

/* Whether the cpu backend be computes GEMM op i of p (bufs: its results,
 * for their shapes) in the order PyTorch's x86 wheel does: an fp32 matmul,
 * linear or addmm (alpha 1, beta 0 or 1) whose sgemm call falls in a
 * class whose MKL order was fitted, on MKL's path be models
 * (backends/cpu/mkl_sgemm.h).  False for every other GEMM (bitprobe's own
 * order: "not PyTorch's bits") and backend. */
bool bp_cpu_gemm_pytorch(const bp_backend_t *be, const bp_probe_t *p, size_t i,
                         const bp_buf_t *bufs);

/* Constructors, one per backend module. */
bp_status bp_be_cpu_open(const bp_backend_opts_t *o, bp_backend_t **out,
                         bp_error_t *err);
bp_status bp_be_oracle_open(const bp_backend_opts_t *o, bp_backend_t **out,
                            bp_error_t *err);
bp_status bp_be_cuda_open(const bp_backend_opts_t *o, bp_backend_t **out,
                          bp_error_t *err);
/* The GPUs the CUDA backend sees, with driver, runtime and cuBLAS versions:
 * {"driver":..,"runtime":..,"cublas":..,"devices":[{name, cc, sms, ...}]}.
 * NULL with the reason in err when there is none (no driver, no device). */
json_t *bp_be_cuda_env(bp_error_t *err);

#endif
