/* The known-answer screen of a GPU: tests whose every result bit is known
 * (or must be the same on every SM), each run on every SM separately, so
 * that a wrong bit names its GPU, SM, test and element.
 *
 * Where each test's expected bits come from:
 *   host    correctly rounded IEEE arithmetic on this CPU (division, square
 *           root, reciprocal, fma in fp32 and fp64; CUDA's _rn intrinsics
 *           round the same way), exact integer sums (GEMMs of small
 *           integers: every product and partial sum is exact in fp32, so
 *           any order, tensor cores included, gives the same bits), and
 *           memory patterns (a function of the word's address);
 *   mpfr    the oracle's correct rounding (fp16 and bf16 fma);
 *   golden  CUDA's math library and the special function unit are not
 *           correctly rounded: their bits on a fixed sweep of inputs are
 *           blessed from a GPU that passed (`screen --bless`) into
 *           <golden>/screen/<key>.safetensors.gz, the key naming the
 *           architecture and the nvcc that built the kernels; without a
 *           golden the SMs vote (every SM must give the majority's bits)
 *           and the majority must lie within CUDA's documented error bound
 *           of the oracle's correctly rounded value.
 * cuBLAS's GEMMs run device-wide (cuBLAS picks the SMs): their faults name
 * the GPU, not an SM.
 *
 * The library never prints: commands render bp_screen_gpu_t. */
#ifndef BP_SCREEN_H
#define BP_SCREEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"

typedef enum {
    BP_SCR_ELEM,   /* elementwise, pinned */
    BP_SCR_GEMM,   /* GEMM kernel, pinned */
    BP_SCR_CUBLAS, /* cuBLAS GEMM, device-wide */
    BP_SCR_MEM,    /* global memory pattern, pinned */
    BP_SCR_SMEM    /* shared memory pattern, pinned */
} bp_screen_family_t;

typedef enum { BP_SCR_BY_HOST, BP_SCR_BY_MPFR, BP_SCR_BY_GOLDEN } bp_screen_by_t;

typedef struct {
    const char *name;    /* "div-fp32" */
    bp_screen_family_t family;
    int code;            /* BPK_SCR_* op, GEMM kind or pattern; cuBLAS: dtype */
    bp_dtype_t dt;       /* the result's element type (bits compared) */
    int nin;             /* inputs (elementwise) */
    bp_screen_by_t by;
    int ulp_bound;       /* golden tests: CUDA's bound against the oracle
                            (-1: none documented, the vote alone) */
    const char *what;    /* one line for --help and the man page */
} bp_screen_test_t;

extern const bp_screen_test_t bp_screen_tests[];
extern const int bp_screen_ntests;
#define BP_SCREEN_MAX_TESTS 32
/* Index of a test by name, or -1. */
int bp_screen_test_find(const char *name);

/* Sizes at depth 1 (per round). */
#define BP_SCREEN_ELEM_N 65536      /* elementwise results per SM */
#define BP_SCREEN_SWEEP_N 8192      /* golden sweeps (fixed inputs) */
#define BP_SCREEN_MEM_WORDS (32u << 20) /* 128 MiB of global memory */
#define BP_SCREEN_SMEM_ITEMS 12     /* shared-memory passes per SM */

/* One test of one round: inputs and, where the host knows them, the
 * expected results (the same for every SM). */
typedef struct {
    int test;           /* index in bp_screen_tests */
    int round;
    size_t n;           /* results per SM (device-wide: in all); memory
                           tests: words in all, split over the SMs */
    void *in[3];        /* elementwise inputs (n each), GEMM a and b */
    void *expect;       /* n results, or NULL (golden tests, patterns) */
    int m, nn, k;       /* GEMM shape */
    uint32_t salt;      /* patterns */
    uint32_t inputs_crc;/* golden tests: CRC32 of the inputs */
} bp_screen_job_t;

/* Fills job for test t, round r (r = 0 for the golden sweeps, whose inputs
 * never change).  The caller frees it with bp_screen_job_free. */
bp_status bp_screen_job_make(int t, int round, bp_screen_job_t *job,
                             bp_error_t *err);
void bp_screen_job_free(bp_screen_job_t *job);
/* Golden tests: the oracle's correctly rounded results of job's inputs
 * (n elements, the test's dtype), for the error bound. */
bp_status bp_screen_oracle(const bp_screen_job_t *job, void **out,
                           bp_error_t *err);
/* The host's result of elementwise op `code` on element i of job's
 * inputs: correctly rounded for the exact ops; for the others the C
 * library's function (what the fake device computes). */
uint64_t bp_screen_host_elem(const bp_screen_job_t *job, size_t i);
/* Expected bits of word i of SM slot `slice` (memory tests: slices of
 * per_sm words) or of element i (shared memory). */
uint32_t bp_screen_pattern(const bp_screen_job_t *job, size_t per_sm,
                           unsigned slice, size_t i);

/* A wrong result. */
typedef struct {
    int sm;          /* %smid; -1: the whole GPU (cuBLAS, or a majority
                        outside the oracle's bound) */
    int test;
    int round;
    uint64_t index;  /* element within the SM's results */
    uint64_t expected, got;
} bp_screen_fault_t;

#define BP_SCREEN_KEEP 16 /* faults kept per GPU and test */

typedef struct {
    bool ran;
    int covered;         /* SMs that did all their work; -1: device-wide */
    uint64_t checked;    /* results compared */
    uint64_t wrong;      /* results wrong */
    int wrong_sms;       /* SMs with a wrong result */
    unsigned char *sm_wrong; /* [nsmid]: SMs counted in wrong_sms */
    const char *by;      /* "host", "mpfr", "golden", "sm-vote+oracle",
                            "sm-vote" */
    bp_screen_fault_t kept[BP_SCREEN_KEEP];
    int nkept;
    double seconds;
    /* golden tests, round 0: the agreed bits (for --bless), n elements */
    void *agreed;
    size_t nagreed;
} bp_screen_tres_t;

typedef struct {
    int index;            /* CUDA device ordinal (or the fake's) */
    char name[128], uuid[64], pci[32], cc[16];
    char driver[64];      /* the kernel driver's version (nvidia-smi's) */
    char cuda_driver[16]; /* the CUDA version the driver supports */
    char key[64];         /* goldens: "cuda-sm90-nvcc13.0" */
    int sms;              /* the device's SM count */
    unsigned nsmid;       /* %nsmid: SM ids are below it */
    unsigned char *present; /* [nsmid]: 1 for each SM id seen running */
    int seen;             /* SM ids seen */
    bp_screen_tres_t t[BP_SCREEN_MAX_TESTS];
    uint32_t *wrong_by_sm; /* [nsmid]: wrong results over all tests */
    unsigned char *uncovered; /* [nsmid]: SMs that missed a share */
    uint32_t uncovered_tests; /* bit t: test t missed an SM */
    bool trouble;
    char error[1024];     /* what went wrong (trouble) */
    char note[512];       /* golden notes */
    double seconds;
} bp_screen_gpu_t;

void bp_screen_gpu_free(bp_screen_gpu_t *g);
/* Appends "SM 4, 9 never ran their share of div-fp32, smem" to g->error
 * when the checks found SMs that did not run (call once, at the end). */
void bp_screen_gpu_coverage(bp_screen_gpu_t *g);
/* Whether any result was wrong. */
bool bp_screen_gpu_wrong(const bp_screen_gpu_t *g);
/* The worst status over the GPUs: 0 pass, 1 a wrong bit, 2 trouble
 * (a wrong bit wins over trouble: it is the finding). */
int bp_screen_status(const bp_screen_gpu_t *g, int n);

/* Injections (BP_SCREEN_INJECT=gpu:sm:test[,...]). */
typedef struct {
    int gpu, sm, test;
    bool used; /* set when it reached a kernel */
} bp_screen_inject_t;
#define BP_SCREEN_MAX_INJECT 16
bp_status bp_screen_inject_parse(const char *s, bp_screen_inject_t *out, int *n,
                                 bp_error_t *err);

/* Checks the results of job from one device: out holds nsmid rows of
 * job->n results (per_sm for memory tests) for pinned tests, or n results
 * for device-wide ones; done[sm] marks the SMs whose work completed.
 * golden: expected bits of a golden test (NULL: the SMs vote; oracle:
 * the correctly rounded bits for the bound, or NULL). */
bp_status bp_screen_check(bp_screen_gpu_t *g, const bp_screen_job_t *job,
                          const void *out, size_t per_sm,
                          const unsigned char *done, const void *golden,
                          const void *oracle, bp_error_t *err);

/* JSON for a fleet's collector: host, every GPU with its identity, per
 * test the SMs covered and counts, and every kept fault as one flat row
 * (host, GPU uuid and PCI bus id, SM, test, round, index, expected and
 * got bits). */
json_t *bp_screen_json(const bp_screen_gpu_t *g, int n, const int *tests,
                       int ntests, int depth, double seconds);
/* The same document for a host that was not screened (no GPU, no CUDA in
 * this build): verdict "not screened", why, exit_status 2, no GPUs, so
 * that a fleet's collector counts the host instead of missing it. */
json_t *bp_screen_json_unscreened(const char *why, const int *tests, int ntests, int depth);

#endif
