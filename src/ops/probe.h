/* A probe: parameters, dtypes, an ordered op graph and the outputs to check,
 * loaded from YAML (probe_yaml.c).  Buffers are named by the op that makes
 * them; ops[i] produces buffer i. */
#ifndef BP_PROBE_H
#define BP_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "op.h"
#include "policy.h"

typedef struct {
    char *name;
    double value;
} bp_param_t;

typedef struct {
    char *name;
    int buf; /* index of the op producing it */
    bp_policy_t policy;
    int line, col;
} bp_output_t;

/* A parameter override from the command line (--param NAME=VALUE): the
 * value as it was written, a number in the probe file's syntax. */
typedef struct {
    const char *name;
    const char *value;
} bp_param_arg_t;

typedef struct bp_probe {
    char *name;
    char *description;
    char *path;      /* file it was read from */
    char hash[17];   /* 64-bit hash of the definition (not the description), hex */
    bp_param_t *params;
    size_t nparams;
    uint32_t dtypes; /* bit (1u << bp_dtype_t) per dtype it runs in */
    bp_op_t *ops;
    size_t nops;
    bp_output_t *outputs;
    size_t noutputs;
    char *overrides; /* "base=500000,..." where --param changed its params
                        (its hash then differs from the file's), else NULL */
    bool by_path;    /* named on the command line by its file (path is as
                        typed), not found in a probes directory */
} bp_probe_t;

/* Reads and validates one probe file.  Errors read "file:line:col: what".
 * Its load ops take their tensors from the safetensors file of the same
 * name next to it (x.yaml: x.safetensors). */
bp_status bp_probe_load(const char *path, bp_probe_t **out, bp_error_t *err);
/* The same from memory: label stands for the file name (in messages, and
 * the probe's name must match its base name, as for a file).  Load ops are
 * left without their tensors (running one is an error). */
bp_status bp_probe_parse(const char *text, size_t len, const char *label,
                         bp_probe_t **out, bp_error_t *err);
/* Every *.yaml and *.yml in dir, sorted by probe name; names must be
 * unique. */
bp_status bp_probe_load_dir(const char *dir, bp_probe_t ***out, size_t *n,
                            bp_error_t *err);
/* The same with the parameter overrides args[nargs]: in each probe that
 * has a parameter of that name, its value (parsed as the file's numbers
 * are, an integer or not by how it is written) replaces the file's before
 * anything reads it, and the probe records it in `overrides`.  A value
 * that is not a number fails (BP_EINPUT).  Which names no probe has is
 * left to the caller (bp_probe_params_check), who knows which probes it
 * selected. */
bp_status bp_probe_load_dir_params(const char *dir, const bp_param_arg_t *args,
                                   size_t nargs, bp_probe_t ***out, size_t *n,
                                   bp_error_t *err);
/* Every override names a parameter of at least one of probes[n]; else
 * BP_EINPUT: "unknown parameter 'bse' (the probes have base, dim, ...);
 * did you mean 'base'?" */
bp_status bp_probe_params_check(bp_probe_t *const *probes, size_t n,
                                const bp_param_arg_t *args, size_t nargs,
                                bp_error_t *err);
/* A probe file that failed to load. */
typedef struct bp_probe_bad {
    char *path; /* the file */
    char *stem; /* its base name without .yaml or .yml: the probe it would be */
    char *msg;  /* "FILE:LINE:COL: what" */
} bp_probe_bad_t;
/* bp_probe_load_dir_params, except that a file that fails to load is
 * appended to *bad (*nbad; both may start empty) while the others still
 * load: only an unreadable directory, memory, or a probe name defined
 * twice fail the whole (bad NULL: any failure does). */
bp_status bp_probe_load_dir_ex(const char *dir, const bp_param_arg_t *args, size_t nargs,
                               bp_probe_t ***out, size_t *n, bp_probe_bad_t **bad,
                               size_t *nbad, bp_error_t *err);
bool bp_probe_bad_add(bp_probe_bad_t **bad, size_t *nbad, const char *path, const char *msg);
void bp_probe_bad_free(bp_probe_bad_t *bad, size_t n);
/* The number an override gives, or BP_EINPUT: "--param base=lots: the
 * value is not a number". */
bp_status bp_param_number(const bp_param_arg_t *a, double *v, bool *is_int, bp_error_t *err);
/* One probe file with parameter overrides (see bp_probe_load_dir_params). */
bp_status bp_probe_load_params(const char *path, const bp_param_arg_t *args, size_t nargs,
                               bp_probe_t **out, bp_error_t *err);
/* Whether a file name is a probe's: *.yaml or *.yml. */
bool bp_probe_file_name(const char *s);
void bp_probe_free(bp_probe_t *p);
void bp_probe_free_all(bp_probe_t **ps, size_t n);
/* Index of the op producing the named buffer, or -1. */
int bp_probe_find_buf(const bp_probe_t *p, const char *name);
/* The first op buffer buf is computed through (itself or upstream) whose
 * CPU bits are not PyTorch's: a GEMM (matmul, bmm, baddbmm, linear, addmm,
 * sdpa), which
 * PyTorch's x86 wheels take from MKL's sgemm (fp32) and oneDNN (bf16,
 * fp16), except those replayed(ctx, op) says the CPU backend computes in
 * PyTorch's order (NULL: none); -1 where there is none. */
int bp_probe_cpu_gemm_dep(const bp_probe_t *p, int buf, bool (*replayed)(void *ctx, int op),
                          void *ctx);
/* How PyTorch holds the operands of a 2-D matmul, an addmm's mat1 and
 * mat2, or a linear's x (flattened to 2-D: contiguous, with no bias or a
 * 1-D one) and weight.t(), which decides the BLAS call (LinearAlgebra.cpp
 * addmm_impl_cpu_ reads their strides): NN both contiguous (sgemm
 * 'N','N'), TN the second a transposed view of a contiguous 2-D tensor,
 * `w.t()` (sgemm 'T','N': a linear's contiguous weight); UNKNOWN
 * otherwise.
 * bitprobe's layout ops copy; in PyTorch they are views, so the operands
 * are traced back: an op that makes a fresh tensor (creation, GEMM) is
 * contiguous; transpose of a 2-D operand swaps contiguous and transposed;
 * reshape, view, unsqueeze and squeeze keep a contiguous operand so; any
 * other op is contiguous when every tensor it reads is (elementwise ops
 * follow their operands' layout), else UNKNOWN.  bufs: the buffers so
 * far (their shapes), at least up to op i. */
typedef enum { BP_GEMM_LAYOUT_UNKNOWN = 0, BP_GEMM_LAYOUT_NN, BP_GEMM_LAYOUT_TN } bp_gemm_layout_t;
bp_gemm_layout_t bp_probe_gemm_layout(const bp_probe_t *p, const bp_buf_t *bufs, size_t i);
/* Why such a result is not PyTorch's on the CPU: the status reports show. */
#define BP_CPU_GEMM_NOTE                                                                    \
    "cpu: not PyTorch's bits: MKL (fp32 sgemm) / oneDNN (bf16, fp16) order, not replayed " \
    "(through %s '%s')"
/* The 16-hex-digit FNV-1a 64 hash of p's canonical definition: params,
 * dtypes, every op field and the outputs with their policies; not the
 * description, the path or source positions. */
void bp_probe_hash(const bp_probe_t *p, char out[17]);
/* Metas of every buffer for one dtype (array of p->nops). */
bp_status bp_probe_infer(const bp_probe_t *p, bp_dtype_t run_dtype,
                         bp_meta_t *metas, bp_error_t *err);

#endif
