/* Helpers every command shares: usage errors, help, library errors, and the
 * output conventions (progress on stderr only when it is a terminal,
 * --quiet, NO_COLOR). */
#ifndef BP_CLI_H
#define BP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "backend.h"
#include "cmd.h"
#include "error.h"
#include "probe.h"
#include "ranks.h"

struct bp_timing;

/* "bitprobe CMD: what\nusage: ..." on stderr; returns 2. */
int bp_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An option getopt_long did not know (arg as the user wrote it): the usage
 * error names it and, when one of opts' long names is near, suggests it
 * ("did you mean '--quiet'?").  Returns 2. */
struct option;
int bp_cli_unknown_option(const char *cmd, const struct option *opts, const char *arg);
/* The command's usage on stdout; returns 0. */
int bp_cli_help(const char *cmd);
/* "bitprobe: <message>" on stderr; returns 2. */
int bp_cli_fail(const bp_error_t *err);
/* True when argv holds -h or --help before any "--". */
bool bp_cli_wants_help(int argc, char **argv);

extern bool bp_cli_quiet;
/* Progress: stderr, only when it is a terminal and not --quiet.  A message
 * ending in a newline is a status line: it replaces the one before on the
 * same terminal line, and bp_cli_progress_clear (called before a report
 * is written, and at exit) erases it.  Others are written as they are. */
void bp_cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bp_cli_progress_clear(void);
/* Checks, before any work, that path can be written as what option opt
 * names: a file (an existing one must not be a directory and must be
 * writable; else its directory must exist and be writable) or, when dir,
 * a directory (an existing one must be a writable directory; else its
 * nearest existing parent must be one).  "-" (standard output) passes.
 * Returns -1 when fine, else 2 with a message naming cmd, opt and why. */
int bp_cli_check_output(const char *cmd, const char *opt, const char *path, bool dir);

/* Whether colour may be used on stdout (a terminal, NO_COLOR unset). */
bool bp_cli_color(void);

/* Where probes are: --probes if given, else $BITPROBE_PROBES, else
 * ./probes when that directory exists, else the installed copy. */
const char *bp_cli_probes_dir(const char *opt);
/* Where probe p's goldens are (p NULL: the probes of the directory in
 * use): beside the probes.  --golden DIR if given; else, for a probe named
 * by its file, beside the file's directory; else beside --probes DIR; else
 * $BITPROBE_GOLDEN; else beside the probes directory in use
 * ($BITPROBE_PROBES, ./probes, the installed set).  Beside a directory D
 * means D/../golden when D is named probes, else D/golden.  The returned
 * string lives until the next call on the same thread. */
const char *bp_cli_golden_dir(const char *opt, const char *probes_opt, const bp_probe_t *p);

/* The one integer parser of option values: a decimal integer in lo..hi. */
bool bp_cli_int(const char *s, long long lo, long long hi, long long *out);
/* A count option's value: a decimal integer in 0..max. */
bool bp_cli_count(const char *s, long max, size_t *out);
/* --zero-sign MODE: "count" (the default: +0 against -0 is a difference)
 * or "ignore" (excused, and counted as excused); -1 when applied, else
 * the usage error's exit status. */
int bp_cli_zero_sign(const char *cmd, const char *arg, bool *ignore);
#define BP_CLI_ZERO_SIGN_USAGE                                                           \
    "  --zero-sign MODE  +0 against -0: count (default: a difference of its own class)\n" \
    "                    or ignore (excused, and the reports say how many)\n"


/* ---- the backend option group (run, bless, explain, fingerprint) ----
 * One entry per option, S between entries: its id, long name, its usage
 * line (as --help prints it) and the function that applies its value
 * (cli.c; false: the message in why).  Adding an option to every command
 * that opens backends is one entry here and its function. */
#define BP_BACKEND_OPTIONS(X, S, P)                                                         \
    X(CPU_MATH, "cpu-math",                                                              \
      "  --cpu-math M      sleef-u10 (default), sleef-u35 or libm for CPU transcendentals\n", \
      bp_cli_opt_cpu_math, P) S                                                          \
    X(CPU_ISA, "cpu-isa",                                                                \
      "  --cpu-isa I       ATen CPU capability to model: avx512, avx2 or default (default:\n" \
      "                    ATEN_CPU_CAPABILITY, else what this CPU offers, as ATen picks)\n", \
      bp_cli_opt_cpu_isa, P) S                                                           \
    X(ONEDNN_ISA, "onednn-isa",                                                          \
      "  --onednn-isa I    oneDNN ISA to model for the ops PyTorch hands it (gelu's erf\n"   \
      "                    form): avx512_core_fp16, avx512_core_bf16, avx512_core,\n"    \
      "                    avx2_vnni_2, avx2, sse41 or none (mkldnn off) (default:\n"     \
      "                    ONEDNN_MAX_CPU_ISA capped by this CPU, else what it offers,\n" \
      "                    as oneDNN picks)\n",                                          \
      bp_cli_opt_onednn_isa, P) S                                                        \
    X(MKL_ISA, "mkl-isa",                                                                \
      "  --mkl-isa I       MKL code path to model for fp32 matmul, linear and addmm\n"   \
      "                    (sgemm): avx512 (its fitted orders), avx2, sse42 or cnr\n"   \
      "                    (MKL_CBWR) (default: MKL_CBWR, else MKL_ENABLE_INSTRUCTIONS\n" \
      "                    capped by this CPU, else what it offers, as MKL picks)\n",    \
      bp_cli_opt_mkl_isa, P) S                                                           \
    X(GPU, "gpu",                                                                        \
      "  --gpu N           CUDA device index, 0 to 1023 (default 0); all, or a list\n"  \
      "                    (0,2): each GPU a backend of its own (cuda:K), the GPUs\n"   \
      "                    compared with each other: the majority and the odd ones out\n", \
      bp_cli_opt_gpu, P) S                                                               \
    X(THREADS, "threads",                                                                \
      "  --threads N       oracle worker threads (default: one per core)\n",              \
      bp_cli_opt_threads, P) S                                                           \
    X(CUDA_BLAS, "cuda-blas",                                                            \
      "  --cuda-blas S     PyTorch's BLAS settings for the cuda GEMMs, KEY=VALUE[,...]\n"  \
      "                    (repeatable), in PyTorch's names: allow_tf32,\n"               \
      "                    allow_{bf16,fp16}_reduced_precision_reduction[_split_k],\n"    \
      "                    preferred_blas_library (cublas, cublaslt),\n"                  \
      "                    CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE,\n"           \
      "                    DISABLE_ADDMM_CUDA_LT (default: PyTorch's defaults, and the\n" \
      "                    environment variables PyTorch reads)\n",                       \
      bp_cli_opt_cuda_blas, P)

#define BP_CLI_COMMA_ ,
#define BP_CLI_NONE_
#define BP_BE_ENUM_(id, name, usage, fn, p) BP_BE_O_##id
enum { BP_BE_O_FIRST_ = 0x300, BP_BACKEND_OPTIONS(BP_BE_ENUM_, BP_CLI_COMMA_, ) };
/* The group as entries of an option table (opt.h; the caller includes
 * it), applied to be (a bp_backend_opts_t *), each with its usage line. */
#define BP_BE_ENTRY_(id, name, usage, fn, be)                                            \
    {name, 0, BP_OPT_CALL, be, 0, 0, bp_cli_backend_entry, BP_BE_O_##id, true, usage}
#define BP_OPT_BACKEND_(be) BP_BACKEND_OPTIONS(BP_BE_ENTRY_, BP_CLI_COMMA_, be)
struct bp_opt;
int bp_cli_backend_entry(const char *cmd, const struct bp_opt *e, const char *arg, void *ctx);
#define BP_BE_DECL_(id, name, usage, fn, p) \
    bool fn(const char *arg, bp_backend_opts_t *o, char *why, size_t n);
BP_BACKEND_OPTIONS(BP_BE_DECL_, BP_CLI_NONE_, )

/* Applies the group's option c (BP_BE_O_*) with its argument: -1 when it
 * is none of the group's, 0 when applied, else the usage error's exit
 * status. */
int bp_cli_backend_option(const char *cmd, int c, const char *arg, bp_backend_opts_t *o);

/* ---- backends and probes, as run, bless and fingerprint select them ---- */

#define BP_CLI_MAX_BACKENDS 16
#define BP_CLI_NAME_MAX 32

typedef struct bp_cli_devices {
    const char *list;     /* --device: comma-separated names, auto */
    const char *require;  /* --require: names that must open, or NULL */
    bp_backend_opts_t be;
    bool behaviour;       /* record what each backend does (fingerprint.h)
                           * in its fingerprint: goldens and saved runs */
} bp_cli_devices_t;

/* A backend auto could not open, and why. */
typedef struct bp_cli_skip {
    char name[BP_CLI_NAME_MAX];
    char why[sizeof ((bp_error_t *)0)->msg];
} bp_cli_skip_t;

/* The backends --device names, without duplicates, for opening one by one
 * with bp_cli_open_one (on any thread).  Returns -1 to go on, 0 when the
 * list holds auto (open with bp_cli_open_backends), or an exit status after
 * a usage error (also when --require names a backend the list leaves out). */
int bp_cli_backend_names(const char *cmd, const bp_cli_devices_t *d,
                         char names[][BP_CLI_NAME_MAX], int *n);
/* Opens backend name with the memo (backend.h) unless BP_NO_MEMO=1, and
 * its behaviour when d asks; with a timing record, name must already be in
 * it (bp_timing_backend) when other threads use the record. */
bp_status bp_cli_open_one(const bp_cli_devices_t *d, const char *name, struct bp_timing *t,
                          bp_backend_t **out, bp_error_t *err);
/* A backend named with --device that did not open: for one that cannot
 * run here (BP_EUNAVAIL: no GPU, no driver) the option and the ways out
 * (--device auto, cpu,oracle); else the error.  Returns 2. */
int bp_cli_open_fail(const char *cmd, const char *name, bp_status st, const bp_error_t *err);
/* Opens the backends of --device: explicit names must be available; auto
 * adds every backend that opens here and lists in skipped (room for
 * BP_CLI_MAX_BACKENDS) those that do not, unless --require names them
 * (exit 2).  Returns the exit status (0: go on). */
int bp_cli_open_backends(const char *cmd, const bp_cli_devices_t *d, bp_backend_t **bes,
                         int *n, bp_cli_skip_t *skipped, int *nskipped, struct bp_timing *t);
/* The probes named (all when none is): unknown names are an error. */
/* --param NAME=VALUE: appends to params[*n] (at most max), the name kept
 * in names[*n]; the value is checked when a probe reads it.  Returns 0, or
 * a usage error's status. */
#define BP_CLI_PARAM_NAME 136
int bp_cli_param_arg(const char *cmd, const char *arg, bp_param_arg_t *params,
                     char (*names)[BP_CLI_PARAM_NAME], size_t *n, size_t max);

/* The probes a command works on.  Every probe file in the directory is
 * read; one that fails to load is kept as a failure (bad) and stays
 * local: it matters only when selected.  names[nnames] select probes by
 * name, or by path (PATH.yaml, PATH.yml: that file, loaded here); none
 * selects every probe, failures included. */
typedef struct bp_cli_probes {
    bp_probe_t **all;  /* loaded, owned */
    size_t nall;
    bp_probe_bad_t *bad; /* files that failed to load, owned */
    size_t nbad;
    bp_probe_t **sel;  /* selected, in the order named */
    size_t nsel;
    size_t *selbad;    /* indices into bad of the selected failures */
    size_t nselbad;
} bp_cli_probes_t;
/* Loads dir (see bp_cli_probes_dir) with the overrides params[nparams]
 * and selects; 0, or 2 with a message: an unreadable directory (saying
 * where it looked and how to point elsewhere), an unknown probe (with the
 * nearest name), memory. */
int bp_cli_probes_load(const char *cmd, const char *dir_opt, const bp_param_arg_t *params,
                       size_t nparams, char **names, int nnames, bp_cli_probes_t *ps);
void bp_cli_probes_free(bp_cli_probes_t *ps);
/* "cannot open probe directory ..." with where probes are looked for and
 * how to name them; returns 2. */
int bp_cli_probes_dir_error(const char *cmd, const char *dir_opt, const bp_error_t *err);

/* Writes j, indented, to path ('-': standard output), taking j; returns 0,
 * or 2 after saying on stderr that "bitprobe CMD" could not write it. */
int bp_cli_json_out(const char *cmd, const char *path, json_t *j);

/* Splits a comma-separated list in place; returns the count (at most max). */
int bp_cli_split(char *s, char **items, int max);

/* ---- over ranks (cli_ranks.c): one process per GPU ---------------------- */
/* A rank's NCCL unique id: from BP_NCCL_ID under bitprobe's own launch,
 * else through the launcher's file (ranks.h): rank 0 makes and publishes
 * it, the others wait for it.  path receives the file's name ("" under
 * bitprobe's launch); rank 0 removes it when its run ends. */
bp_status bp_cli_rank_id(const bp_ranks_env_t *e, bp_nccl_id_t *id, char *path, size_t n,
                         bp_error_t *err);
/* No launcher: starts W copies of bitprobe with argv (cmd's arguments,
 * argv[0] the command name), one per GPU, and returns the worst of their
 * exit statuses; 2 with a message when there are fewer GPUs than W, no
 * NCCL or no CUDA. */
int bp_cli_ranks_launch(const char *cmd, int W, int argc, char **argv);

#endif
