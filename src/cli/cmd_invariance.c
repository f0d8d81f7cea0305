/* bitprobe invariance: does a row get the same bits whatever the batch, the
 * split or the shard it is computed in?  A command of its own rather than
 * a section of a probe: a probe is a graph of ops run once per backend and
 * compared with goldens, while an invariance run sweeps configurations
 * (batch sizes, placements, split counts, ranks, repeats, fresh processes)
 * of one op inside one library, groups the results into a map and
 * arbitrates its boundaries with the oracle; it has no golden, and its
 * verdict is the map's, not a comparison's.
 *
 * Flow: options -> jobs (one from --op/--shape/--m/--split/--ranks, or the
 * presets' with the options' overrides) -> engines (auto: per job, the
 * CUDA engines that compute its op on its axis, the CPU where none does and
 * for the split and ranks formulations) -> one sweep per job, dtype, engine
 * and order (inv_sweep.h) -> the oracle's result, once per job and dtype,
 * where some map has a boundary -> fresh processes (this binary again with
 * --digests, each writing every configuration's digest) -> reports.
 * Exit 0 invariant within the policy, 1 some configuration breaks it (or
 * differs from run to run), 2 trouble: usage, no engine able to run here,
 * a failure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "opt.h"
#include "cmd_invariance.h"
#include "envinfo.h"
#include "esc.h"
#include "inv_engine.h"
#include "inv_presets.h"
#include "inv_proc.h"
#include "inv_report.h"
#include "inv_sweep.h"
#include "outfile.h"
#include "rep.h"
#include "st.h"

const char cmd_invariance_usage[] =
    "bitprobe invariance [--preset LIST] [--op OP] [--shape S] [--dtype LIST] [--engine LIST] [--m LIST] [--split LIST] [--ranks LIST] [--combine LIST] [--place LIST] [--repeat N] [--processes P] [--policy P] [--svg FILE] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet]";

#define MAX_ENGINES 8
#define MAX_DTYPES 4
#define MAX_JOBS 32
#define MAX_ORDERS 4

enum {
    O_OP = 0x300, O_SHAPE, O_DTYPE, O_ENGINE, O_M, O_SPLIT, O_RANKS, O_COMBINE,
    O_PARTIALS, O_REDUCTION, O_PRESET, O_PLACE, O_ROWS, O_SEED, O_REPEAT,
    O_PROCESSES, O_POLICY, O_NO_ORACLE, O_SVG, O_SAVE_INPUTS, O_GPU, O_THREADS,
    O_DIGESTS, O_COLLECTIVE, O_BYTES, O_ALGO, O_PROTO, O_CHANNELS, O_REDOP
};

typedef struct {
    bp_inv_problem_t prob;      /* everything but dtype and combine */
    char values[96];
    int64_t *v;
    size_t nv;
    bp_inv_combine_t orders[MAX_ORDERS];
    int norders;
} job_t;

typedef struct {
    job_t jobs[MAX_JOBS];
    int njobs;
    bp_dtype_t dtypes[MAX_DTYPES];
    bool tf32[MAX_DTYPES];
    int ndtypes;
    char engines[MAX_ENGINES][32];
    int nengines;
    bool auto_engines;
    bool place[BP_INV_NPLACES];
    int repeat, processes;
    bp_policy_t policy;
    bool oracle, verbose, digests;
    const char *svg, *save_inputs;
    int gpu, threads;
    bp_rep_targets_t rep;
    bool coll;                  /* --collective: cmd_inv_coll.c */
    bp_inv_coll_cl_t coll_cl;
} opts_t;

/* What the command line said, before the jobs are built. */
typedef struct {
    const char *op, *shape, *m, *split, *ranks, *combine, *preset, *engine;
    const char *collective, *bytes, *algo, *proto, *channels, *redop;
    const char *ops_only;   /* the first option that only an op sweep takes */
    const char *coll_only;  /* the first option that only --collective takes */
    bool partials_output;
    int reduction;
    int64_t rows;
    uint64_t seed;
} cl_t;

static int usage(const char *fmt, const char *arg)
{
    return bp_cli_usage_error("invariance", fmt, arg);
}

static int parse_dtypes(opts_t *o, const char *arg)
{
    char buf[64], *items[8];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, 8);
    o->ndtypes = 0;
    for (int i = 0; i < n; i++) {
        bp_dtype_t dt;
        bool tf32 = strcmp(items[i], "tf32") == 0;
        if (tf32)
            dt = BP_F32;
        else if (!bp_dtype_parse(items[i], &dt) ||
                 !bp_dtype_is_run(dt))
            return usage("unknown dtype '%s' (fp32, tf32, bf16, fp16)", items[i]);
        if (o->ndtypes == MAX_DTYPES)
            return usage("--dtype: at most 4 dtypes, not '%s'", arg);
        o->dtypes[o->ndtypes] = dt;
        o->tf32[o->ndtypes++] = tf32;
    }
    return o->ndtypes ? -1 : usage("--dtype needs a dtype, not '%s'", arg);
}

static int parse_engines(opts_t *o, const char *arg)
{
    char buf[256], *items[MAX_ENGINES + 1];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, MAX_ENGINES + 1);
    o->nengines = 0;
    o->auto_engines = false;
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "auto") == 0) {
            o->auto_engines = true;
            continue;
        }
        if (strcmp(items[i], "cpu") && !bp_inv_engine_is_cuda(items[i]))
            return usage("unknown engine '%s' (cpu, cuda, cublas, cublas-pedantic, "
                         "cublaslt, auto)", items[i]);
        if (o->nengines == MAX_ENGINES)
            return usage("--engine: too many engines in '%s'", arg);
        snprintf(o->engines[o->nengines++], sizeof o->engines[0], "%s", items[i]);
    }
    return o->nengines || o->auto_engines ? -1
                                          : usage("--engine needs an engine, not '%s'", arg);
}

static int parse_places(opts_t *o, const char *arg)
{
    char buf[64], *items[8];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, 8);
    memset(o->place, 0, sizeof o->place);
    for (int i = 0; i < n; i++) {
        bp_inv_place_t p;
        if (strcmp(items[i], "all") == 0) {
            for (int k = 0; k < BP_INV_NPLACES; k++)
                o->place[k] = true;
        } else if (bp_inv_place_parse(items[i], &p)) {
            o->place[p] = true;
        } else {
            return usage("unknown placement '%s' (first, middle, last, all)", items[i]);
        }
    }
    return n ? -1 : usage("--place needs a placement, not '%s'", arg);
}

/* "KxN", "H" or "HEADSxLxD": up to three dimensions of 1 to 2^24. */
static int parse_dims(const char *s, int64_t *d, int max)
{
    int n = 0;
    const char *p = s;
    while (n < max) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 1 || v > (1 << 24) || *p == '-' || *p == '+')
            return -1;
        d[n++] = v;
        if (!*end)
            return n;
        if (*end != 'x' && *end != 'X')
            return -1;
        p = end + 1;
    }
    return -1;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    size_t v;
    if (!bp_cli_count(s, hi, &v) || (long)v < lo)
        return false;
    *out = (long)v;
    return true;
}

static int parse_orders(const char *arg, bp_inv_axis_t axis, job_t *j)
{
    char buf[64], *items[8];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, 8);
    j->norders = 0;
    for (int i = 0; i < n; i++) {
        bp_inv_combine_t c;
        bool ok = bp_inv_combine_parse(items[i], &c) &&
                  (axis == BP_INV_RANKS ? c != BP_INV_SEQ : c <= BP_INV_TREE);
        if (!ok)
            return usage(axis == BP_INV_RANKS ? "--combine on the ranks axis: ring, tree "
                                                "or rank, not '%s'"
                                              : "--combine on the split axis: seq or "
                                                "tree, not '%s'",
                         items[i]);
        if (j->norders < MAX_ORDERS)
            j->orders[j->norders++] = c;
    }
    return j->norders ? -1 : usage("--combine needs an order, not '%s'", arg);
}

/* The values of a job's axis; the batch of the split and ranks axes. */
static int job_values(job_t *j, const char *values, const char *batch)
{
    bp_error_t err = {0};
    const char *which = j->prob.axis == BP_INV_BATCH   ? "--m"
                        : j->prob.axis == BP_INV_SPLIT ? "--split"
                                                       : "--ranks";
    snprintf(j->values, sizeof j->values, "%s", values);
    if (bp_inv_values_parse(values, j->prob.axis == BP_INV_BATCH ? 1 << 20 : 256, &j->v,
                            &j->nv, &err))
        return bp_cli_usage_error("invariance", "%s: %s", which, err.msg);
    if (j->prob.axis == BP_INV_BATCH) {
        j->prob.mmax = j->v[j->nv - 1];
        j->prob.batch = 0;
        if (j->prob.mmax < j->prob.rows)
            return bp_cli_usage_error("invariance", "--m: every batch (up to %" PRId64
                                      ") is smaller than the %" PRId64 " probed rows",
                                      j->prob.mmax, j->prob.rows);
        return -1;
    }
    int64_t *b;
    size_t nb;
    if (bp_inv_values_parse(batch ? batch : "1", 1 << 20, &b, &nb, &err))
        return bp_cli_usage_error("invariance", "--m: %s", err.msg);
    j->prob.batch = b[0];
    free(b);
    if (nb != 1)
        return bp_cli_usage_error("invariance", "--m: the %s axis computes the probed "
                                  "rows in one batch: one value, not '%s'", which + 2,
                                  batch);
    if (j->prob.batch < j->prob.rows)
        return usage("--m: the batch is smaller than the probed rows (%s)", batch);
    j->prob.mmax = j->prob.batch;
    return -1;
}

/* A job from the command line's op, shape and axis. */
static int job_from_options(opts_t *o, const cl_t *cl)
{
    job_t *j = &o->jobs[o->njobs++];
    bp_inv_problem_t *p = &j->prob;
    p->op = BP_OP_MATMUL;
    if (cl->op && !bp_inv_op_parse(cl->op, &p->op))
        return usage("unknown --op '%s' (matmul, sum, mean, rms_norm, softmax, "
                     "log_softmax, attention)", cl->op);
    int64_t d[3];
    int nd = 0;
    if (cl->shape) {
        nd = parse_dims(cl->shape, d, 3);
        int want = p->op == BP_OP_MATMUL ? 2 : p->op == BP_OP_SDPA ? 3 : 1;
        if (nd != want)
            return usage(p->op == BP_OP_MATMUL ? "--shape takes KxN (the reduction "
                                                  "dimension, then the columns; each 1 "
                                                  "to 16777216), not '%s'"
                         : p->op == BP_OP_SDPA
                             ? "--shape takes HEADSxKEYSxHEADDIM for attention, not '%s'"
                             : "--shape takes H, the length of the reduced axis, not '%s'",
                         cl->shape);
    }
    if (p->op == BP_OP_MATMUL) {
        p->k = nd ? d[0] : 4096;
        p->n = nd ? d[1] : 4096;
    } else if (p->op == BP_OP_SDPA) {
        p->heads = nd ? d[0] : 32;
        p->k = nd ? d[1] : 4096;
        p->n = nd ? d[2] : 128;
    } else {
        p->n = nd ? d[0] : 4096;
    }
    p->axis = cl->split ? BP_INV_SPLIT : cl->ranks ? BP_INV_RANKS : BP_INV_BATCH;
    if (p->op == BP_OP_SDPA && p->axis == BP_INV_BATCH)
        return usage("--op %s sweeps the split axis: give --split LIST (e.g. 1,2,4,8)",
                     "attention");
    if (p->axis == BP_INV_RANKS && p->op != BP_OP_MATMUL)
        return usage("--ranks cuts a matmul's K over ranks; --op %s has none",
                     bp_inv_op_name(p->op));
    int rc = job_values(j, cl->split ? cl->split : cl->ranks ? cl->ranks
                                                   : cl->m ? cl->m : "1:1024",
                        p->axis == BP_INV_BATCH ? NULL : cl->m);
    if (rc >= 0)
        return rc;
    if (p->axis != BP_INV_BATCH)
        return parse_orders(cl->combine ? cl->combine
                                        : p->axis == BP_INV_RANKS ? "ring" : "seq",
                            p->axis, j);
    if (cl->combine)
        return usage("--combine orders a split or the ranks' all-reduce (--split, "
                     "--ranks), not a batch sweep: '%s'", cl->combine);
    j->norders = 1;
    return -1;
}

/* The presets' jobs, with the options' overrides: --m for batch sweeps (and
 * the batch of the others), --split and --ranks for theirs, --combine. */
static int jobs_from_presets(opts_t *o, const cl_t *cl)
{
    const bp_inv_preset_t *ps[MAX_JOBS];
    char bad[64];
    int n = bp_inv_presets_expand(cl->preset, ps, MAX_JOBS, bad, sizeof bad);
    if (n < 0)
        return usage("unknown preset '%s' (bitprobe invariance --help lists them)", bad);
    if (cl->op || cl->shape)
        return usage("--preset fixes the op and its shape: --op and --shape cannot "
                     "go with it (%s)", cl->preset);
    for (int i = 0; i < n; i++) {
        job_t *j = &o->jobs[o->njobs++];
        bp_inv_problem_t *p = &j->prob;
        p->op = ps[i]->op;
        p->axis = ps[i]->axis;
        p->k = ps[i]->k;
        p->n = ps[i]->n;
        p->heads = ps[i]->heads;
        const char *values = p->axis == BP_INV_BATCH   ? (cl->m ? cl->m : ps[i]->values)
                             : p->axis == BP_INV_SPLIT ? (cl->split ? cl->split : ps[i]->values)
                                                       : (cl->ranks ? cl->ranks : ps[i]->values);
        int rc = job_values(j, values, p->axis == BP_INV_BATCH ? NULL : cl->m);
        if (rc < 0 && p->axis != BP_INV_BATCH)
            rc = parse_orders(cl->combine ? cl->combine : ps[i]->combine, p->axis, j);
        else if (rc < 0)
            j->norders = 1;
        if (rc >= 0)
            return rc;
    }
    return -1;
}

typedef struct {
    opts_t *o;
    cl_t *cl;
} parse_ctx_t;

static int inv_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    opts_t *o = ((parse_ctx_t *)ctx)->o;
    cl_t *cl = ((parse_ctx_t *)ctx)->cl;
    int c = e->id, rc;
    long v;
    (void)rc, (void)v;
    /* which half of the command an option belongs to */
    if (!cl->ops_only && (c == O_OP || c == O_SHAPE || c == O_M || c == O_SPLIT ||
                          c == O_COMBINE || c == O_PARTIALS || c == O_REDUCTION ||
                          c == O_PRESET || c == O_PLACE || c == O_ROWS ||
                          c == O_SAVE_INPUTS || c == O_GPU))
        cl->ops_only = e->name;
    if (!cl->coll_only && c >= O_BYTES && c <= O_REDOP)
        cl->coll_only = e->name;
    switch (c) {
    case O_OP: cl->op = arg; return 0;
    case O_SHAPE: cl->shape = arg; return 0;
    case O_M: cl->m = arg; return 0;
    case O_SPLIT: cl->split = arg; return 0;
    case O_RANKS: cl->ranks = arg; return 0;
    case O_COMBINE: cl->combine = arg; return 0;
    case O_PRESET: cl->preset = arg; return 0;
    case O_COLLECTIVE: cl->collective = arg; return 0;
    case O_BYTES: cl->bytes = arg; return 0;
    case O_ALGO: cl->algo = arg; return 0;
    case O_PROTO: cl->proto = arg; return 0;
    case O_CHANNELS: cl->channels = arg; return 0;
    case O_REDOP: cl->redop = arg; return 0;
    case O_PARTIALS:
        if (strcmp(arg, "output") && strcmp(arg, "compute"))
            return usage("--partials takes compute or output, not '%s'", arg);
        cl->partials_output = strcmp(arg, "output") == 0;
        return 0;
    case O_REDUCTION:
        if (!strcmp(arg, "compute"))
            cl->reduction = 2;
        else if (!strcmp(arg, "inplace"))
            cl->reduction = 1;
        else if (!strcmp(arg, "output"))
            cl->reduction = 4;
        else
            return usage("--reduction takes compute, inplace or output, not '%s'",
                         arg);
        return 0;
    case O_DTYPE:
        if ((rc = parse_dtypes(o, arg)) >= 0)
            return rc;
        return 0;
    case O_ENGINE: cl->engine = arg; return 0;
    case O_PLACE:
        if ((rc = parse_places(o, arg)) >= 0)
            return rc;
        return 0;
    case O_ROWS:
        if (!parse_long(arg, 1, 1 << 20, &v))
            return usage("--rows takes a count from 1, not '%s'", arg);
        cl->rows = v;
        return 0;
    case O_SEED: return bp_opt_seed(cmd, "seed", arg, &cl->seed);
    case O_REPEAT:
        if (!parse_long(arg, 1, 1000, &v))
            return usage("--repeat takes 1 to 1000, not '%s'", arg);
        o->repeat = (int)v;
        return 0;
    case O_PROCESSES:
        if (!parse_long(arg, 0, 100, &v))
            return usage("--processes takes 0 to 100, not '%s'", arg);
        o->processes = (int)v;
        return 0;
    case O_POLICY: {
        bp_error_t err = {0};
        if (bp_policy_parse(arg, &o->policy, &err))
            return bp_cli_usage_error("invariance", "--policy: %s", err.msg);
        return 0;
    }
    case O_NO_ORACLE: o->oracle = false; return 0;
    case O_SVG: o->svg = arg; return 0;
    case O_SAVE_INPUTS: o->save_inputs = arg; return 0;
    case O_GPU:
        return bp_opt_gpu(cmd, arg, &o->gpu);
    case O_THREADS:
        if (!parse_long(arg, 0, 4096, &v))
            return usage("--threads needs a count, not '%s'", arg);
        o->threads = (int)v;
        return 0;
    case O_DIGESTS: o->digests = true; return 0;
    }
    return BP_EXIT_TROUBLE;
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    cl_t cl = {.rows = 1};
    parse_ctx_t ctx = {o, &cl};
#define I_(name, arg, id, h) BP_OPT_CALL_(name, 0, arg, inv_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("bitprobe invariance --collective LIST [--engine nccl|emulate] [--ranks W] [--bytes LIST] [--dtype LIST] [--redop LIST] [--algo LIST] [--proto LIST] [--channels LIST] [--repeat N] [--processes P] [reports]\n"),
        I_("preset", true, O_PRESET,
           "  --preset LIST     shipped LLM shapes: gemm-4096 gemm-11008 gemm-14336\n"
           "                    lmhead-32000 lmhead-128256 rmsnorm-4096 sum-4096 mean-4096\n"
           "                    softmax-32000 softmax-128256 logsoftmax-32000\n"
           "                    logsoftmax-128256 splitk-4096 splitk-14336 splitrows-128256\n"
           "                    tp-4096 tp-14336 decode-4k decode-32k; groups llm-gemm,\n"
           "                    llm-rows, llm-split, llm (all)\n"),
        I_("op", true, O_OP,
           "  --op OP           matmul (default), sum, mean, rms_norm, softmax, log_softmax,\n"
           "                    attention (one decoding query; the split axis)\n"),
        I_("shape", true, O_SHAPE,
           "  --shape S         matmul KxN (default 4096x4096); row ops H (default 4096);\n"
           "                    attention HEADSxKEYSxHEADDIM (default 32x4096x128)\n"),
        I_("dtype", true, O_DTYPE,
           "  --dtype LIST      fp32, tf32, bf16, fp16, comma-separated (default bf16)\n"),
        I_("engine", true, O_ENGINE,
           "  --engine LIST     cublas (torch.mm's cuBLAS call and settings), cublas-pedantic\n"
           "                    (bitprobe's pinned GEMM), cublaslt (PyTorch's cuBLASLt path;\n"
           "                    on --split, cuBLASLt's own split-K), cuda (bitprobe's CUDA\n"
           "                    row ops), cpu (bitprobe's CPU ops and the formulations), auto\n"
           "                    (default: the CUDA engines that compute the op on its axis,\n"
           "                    the CPU where none does and for --split and --ranks)\n"),
        I_("m", true, O_M,
           "  --m LIST          batch sizes: N, A:B, A:B:STEP, A:B:xFACTOR, comma-separated\n"
           "                    (default 1:1024); with --split or --ranks, the one batch\n"
           "                    (default 1)\n"),
        I_("split", true, O_SPLIT,
           "  --split LIST      sweep S instead: the reduction cut in S parts (attention:\n"
           "                    flash-decoding over S chunks of the keys)\n"),
        I_("ranks", true, O_RANKS,
           "  --ranks LIST      sweep T instead: the matmul's K over T ranks, all-reduced\n"),
        I_("combine", true, O_COMBINE,
           "  --combine LIST    split: seq (default), tree; ranks: ring (default), tree, rank\n"),
        I_("partials", true, O_PARTIALS,
           "  --partials P      split matmul: compute (fp32 parts, default) or output (parts\n"
           "                    rounded to the dtype)\n"),
        I_("reduction", true, O_REDUCTION,
           "  --reduction R     cublaslt split-K: compute (default), inplace or output\n"),
        I_("collective", true, O_COLLECTIVE,
           "  --collective LIST collectives instead of an op: all_reduce, reduce_scatter,\n"
           "                    all_gather, all; a map per collective, dtype, reduction and\n"
           "                    rank count over message sizes and NCCL configurations\n"),
        BP_OPT_TEXT_("  --engine E        with --collective: nccl (one process per GPU, launched by\n"
                     "                    bitprobe or under torchrun/srun/mpirun), emulate (the CPU's\n"
                     "                    model of the orders), auto (default: nccl when W GPUs are here)\n"),
        BP_OPT_TEXT_("  --ranks W         with --collective: ranks (nccl: one count; emulate: a list;\n"
                     "                    default: the launcher's world, else every GPU, emulate 4)\n"),
        I_("bytes", true, O_BYTES,
           "  --bytes LIST      message sizes: N (64K, 1.5M), A:B (powers of two and the sizes\n"
           "                    models send between), A:B:pow2 (default 1K:256M; emulate 1K:1M)\n"),
        I_("redop", true, O_REDOP,
           "  --redop LIST      sum (default), avg (ncclAvg, NCCL 2.10+), all\n"),
        I_("algo", true, O_ALGO,
           "  --algo LIST       NCCL_ALGO per configuration: Ring, Tree, NVLS, NVLSTree,\n"
           "                    CollNetDirect, CollNetChain, PAT, all (default; emulate:\n"
           "                    Ring,Tree; it also has Pairwise and Rank), default\n"),
        I_("proto", true, O_PROTO,
           "  --proto LIST      NCCL_PROTO: LL, LL128, Simple, all (default), default\n"),
        I_("channels", true, O_CHANNELS,
           "  --channels LIST   channel counts (NCCL_MIN/MAX_NCHANNELS per communicator:\n"
           "                    ncclConfig_t minCTAs = maxCTAs): default (default), 1-64\n"),
        I_("place", true, O_PLACE,
           "  --place LIST      where the probed rows sit in the batch: first (default),\n"
           "                    middle, last, all\n"),
        I_("rows", true, O_ROWS,
           "  --rows R          probed rows (default 1); the reference is them alone\n"),
        I_("seed", true, O_SEED,
           "  --seed S          seed of the inputs, decimal (counter generator; default 0)\n"),
        I_("repeat", true, O_REPEAT,
           "  --repeat N        compute each configuration N times in this process; any\n"
           "                    run with other bits breaks invariance\n"),
        I_("processes", true, O_PROCESSES,
           "  --processes P     run the whole sweep again in P fresh processes and compare\n"),
        I_("policy", true, O_POLICY,
           "  --policy P        exact (default), ulp=N, abs=X, rel=X, fraction=F\n"),
        I_("no-oracle", false, O_NO_ORACLE,
           "  --no-oracle       skip the oracle's arbitration of the boundaries\n"),
        I_("svg", true, O_SVG,
           "  --svg FILE        the map as an SVG strip chart\n"),
        I_("save-inputs", true, O_SAVE_INPUTS,
           "  --save-inputs F   write the inputs (the batch with the probed rows first) as\n"
           "                    safetensors, for the same experiment in PyTorch, and stop:\n"
           "                    nothing is swept, no engine is opened\n"),
        I_("gpu", true, O_GPU,
           "  --gpu N           CUDA device index, 0 to 1023 (default 0)\n"),
        I_("threads", true, O_THREADS,
           "  --threads N       oracle worker threads (default: one per core)\n"),
        BP_OPT_REPORT_(&o->rep,
           "  --json FILE       the report as JSON, with every map under \"invariance\"\n",
           "  --junit FILE      JUnit XML, one testcase per band and result group\n",
           "  --markdown FILE   a bug-ticket report in Markdown\n",
           "  -v, --verbose     every band: every interval, the oracle's verdict and the\n"
           "                    first differing bits of each group\n"),
        BP_OPT_TEXT_("  Exit status: 0 invariant within the policy, 1 some configuration breaks\n"
                     "  invariance or differs from run to run, 2 bad input or no engine here.\n"),
        I_("digests", false, O_DIGESTS, NULL),
        BP_OPT_END_};
#undef I_
    o->repeat = 1;
    o->oracle = true;
    o->auto_engines = true;
    bp_policy_exact(&o->policy);
    parse_dtypes(o, "bf16");
    parse_places(o, "first");
    bp_rep_targets_init(&o->rep);
    int rc, pos;
    if ((rc = bp_opt_parse("invariance", opts, &ctx, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc; /* -1: --help */
    if (pos < argc)
        return usage("unexpected argument '%s'", argv[pos]);
    /* -v and --verbose are the report group's (opt.h) */
    o->verbose = o->rep.text.verbose > 0;
    if ((rc = bp_rep_targets_check("invariance", &o->rep)) >= 0)
        return rc;
    if (cl.collective) {
        if (cl.ops_only)
            return bp_cli_usage_error("invariance", "--%s sweeps an op; --collective sweeps "
                                      "message sizes and configurations: not both",
                                      cl.ops_only);
        bp_inv_coll_cl_t *k = &o->coll_cl;
        o->coll = true;
        k->collective = cl.collective;
        k->bytes = cl.bytes;
        k->algo = cl.algo;
        k->proto = cl.proto;
        k->channels = cl.channels;
        k->redop = cl.redop;
        k->ranks = cl.ranks;
        k->engine = cl.engine;
        memcpy(k->dtypes, o->dtypes, sizeof k->dtypes);
        k->ndtypes = o->ndtypes;
        for (int i = 0; i < o->ndtypes; i++)
            if (o->tf32[i])
                return usage("--collective: tf32 is no collective's dtype (fp32, bf16, "
                             "fp16), not '%s'", "tf32");
        k->repeat = o->repeat;
        k->processes = o->processes;
        k->threads = o->threads;
        k->seed = cl.seed;
        k->policy = o->policy;
        k->oracle = o->oracle;
        k->verbose = o->verbose;
        k->digests = o->digests;
        k->svg = o->svg;
        k->rep = o->rep;
        return -1;
    }
    if (cl.coll_only)
        return bp_cli_usage_error("invariance", "--%s goes with --collective", cl.coll_only);
    if (cl.engine && (rc = parse_engines(o, cl.engine)) >= 0)
        return rc;
    if (cl.split && cl.ranks)
        return usage("--split and --ranks are two axes: one at a time (%s)", cl.split);
    rc = cl.preset ? jobs_from_presets(o, &cl) : job_from_options(o, &cl);
    if (rc >= 0)
        return rc;
    for (int i = 0; i < o->njobs; i++) {
        bp_inv_problem_t *p = &o->jobs[i].prob;
        p->rows = p->op == BP_OP_SDPA ? 1 : cl.rows;
        p->seed = cl.seed;
        p->output_partials = cl.partials_output;
        p->reduction = cl.reduction;
        if (p->axis == BP_INV_BATCH && p->mmax < p->rows)
            return bp_cli_usage_error("invariance", "--m: every batch (up to %" PRId64
                                      ") is smaller than the %" PRId64 " probed rows",
                                      p->mmax, p->rows);
        if (p->axis != BP_INV_BATCH && p->batch < p->rows)
            return bp_cli_usage_error("invariance", "--m: the batch of %" PRId64
                                      " is smaller than the %" PRId64 " probed rows",
                                      p->batch, p->rows);
    }
    if (o->save_inputs && o->njobs != 1)
        return usage("--save-inputs writes one job's inputs: not with the %s presets",
                     cl.preset);
    /* The inputs are a function of the shape, batch, rows, dtype and seed
     * alone: writing them sweeps nothing, so nothing reports a sweep. */
    const char *sweep_opt = o->rep.json ? "--json" : o->rep.junit ? "--junit"
                            : o->rep.markdown ? "--markdown" : o->svg ? "--svg"
                            : o->repeat > 1 ? "--repeat" : o->processes ? "--processes" : NULL;
    if (o->save_inputs && sweep_opt)
        return usage("--save-inputs writes the inputs and sweeps nothing: not with %s",
                     sweep_opt);
    return -1;
}

static void free_opts(opts_t *o)
{
    for (int i = 0; i < o->njobs; i++)
        free(o->jobs[i].v);
}

/* The open engines, by name, opened on first use. */
typedef struct {
    char name[MAX_ENGINES * 2][32];
    bp_inv_engine_t *e[MAX_ENGINES * 2];
    bool failed[MAX_ENGINES * 2];
    int n;
} engines_t;

/* The engine `name`, opened once.  NULL where it cannot run here: the
 * reason is noted in st (the first time), or, when `named`, is an error
 * (*rc set). */
static bp_inv_engine_t *engine(engines_t *es, const char *name, const opts_t *o,
                               bool named, bp_inv_study_t *st, int *rc)
{
    for (int i = 0; i < es->n; i++)
        if (!strcmp(es->name[i], name))
            return es->failed[i] ? NULL : es->e[i];
    if (es->n == MAX_ENGINES * 2)
        return NULL;
    int k = es->n++;
    snprintf(es->name[k], sizeof es->name[k], "%s", name);
    bp_error_t err = {0};
    if (bp_inv_engine_open(name, o->gpu, &es->e[k], &err)) {
        es->failed[k] = true;
        es->e[k] = NULL;
        if (named || err.code != BP_EUNAVAIL) {
            bp_error_prefix(&err, "engine %s: ", name);
            *rc = bp_cli_fail(&err);
        } else {
            bp_inv_study_note(st, "%s skipped: %s", name, err.msg);
        }
    }
    return es->e[k];
}

static void engines_close(engines_t *es)
{
    for (int i = 0; i < es->n; i++)
        bp_inv_engine_close(es->e[i]);
    es->n = 0;
}

static void progress(void *ctx, const bp_inv_map_t *m, int64_t v)
{
    const job_t *j = ctx;
    bp_cli_progress("\r%s %s %s %s %" PRId64 " of %" PRId64 "   ", m->op, m->engine,
                    m->dtype_name, bp_inv_axis_letter(m->axis), v, j->v[j->nv - 1]);
}

/* The engines a job runs on: the named ones that compute it (a named one
 * that does not is a note), and with auto the CUDA engines that compute it,
 * then the CPU where none of them does or the axis is split or ranks. */
static int job_engines(const opts_t *o, const job_t *j, const char **names,
                       bool *named, bp_inv_study_t *st)
{
    static const char *const gpu[] = {"cublas", "cublas-pedantic", "cublaslt", "cuda"};
    int n = 0;
    const bp_inv_problem_t *p = &j->prob;
    for (int i = 0; i < o->nengines; i++) {
        if (bp_inv_engine_supports(o->engines[i], p->op, p->axis)) {
            names[n] = o->engines[i];
            named[n++] = true;
        } else {
            bp_inv_study_note(st, "%s does not compute %s on the %s axis", o->engines[i],
                              bp_inv_op_name(p->op), bp_inv_axis_name(p->axis));
        }
    }
    if (!o->auto_engines)
        return n;
    bool cuda = false;
    for (int i = 0; i < 4; i++)
        if (bp_inv_engine_supports(gpu[i], p->op, p->axis)) {
            bool dup = false;
            for (int k = 0; k < n && !dup; k++)
                dup = !strcmp(names[k], gpu[i]);
            cuda = true;
            if (!dup) {
                names[n] = gpu[i];
                named[n++] = false;
            }
        }
    bool have_cpu = false;
    for (int k = 0; k < n; k++)
        have_cpu |= !strcmp(names[k], "cpu");
    if (!have_cpu && (!cuda || p->axis != BP_INV_BATCH)) {
        names[n] = "cpu";
        named[n++] = false;
    }
    return n;
}

/* Every job on every dtype, engine and order; a combination an engine
 * cannot run (TF32 on the CPU) is a note. */
static int sweep_all(opts_t *o, engines_t *es, bp_inv_study_t *st)
{
    int rc = -1;
    /* Without a GPU, auto sweeps on the CPU engine what the GPU engines
     * would: the LLM shapes then take minutes.  Said before the first such
     * sweep starts, not refused: the CPU's maps are maps too; naming
     * --engine cpu says it is meant. */
    const char *no_gpu = NULL;
    if (o->auto_engines && o->nengines == 0 && !bp_cli_quiet &&
        !engine(es, "cuda", o, false, st, &rc) && rc < 0) {
        no_gpu = json_string_value(json_array_get(st->notes, json_array_size(st->notes) - 1));
        if (no_gpu && !strncmp(no_gpu, "cuda skipped: ", 14))
            no_gpu += 14;
    }
    if (rc >= 0)
        return rc;
    for (int ji = 0; ji < o->njobs; ji++) {
        job_t *j = &o->jobs[ji];
        const char *names[MAX_ENGINES + 4];
        bool named[MAX_ENGINES + 4];
        int ne = job_engines(o, j, names, named, st);
        bp_inv_sweep_opts_t so = {.values = j->v, .nvalues = j->nv, .repeat = o->repeat,
                                  .policy = o->policy,
                                  .progress = o->digests ? NULL : progress, .ctx = j};
        memcpy(so.place, o->place, sizeof so.place);
        for (int d = 0; d < o->ndtypes; d++)
            for (int i = 0; i < ne; i++) {
                bp_inv_engine_t *e = engine(es, names[i], o, named[i], st, &rc);
                if (rc >= 0)
                    return rc;
                if (!e)
                    continue;
                if (no_gpu && !named[i] && !strcmp(names[i], "cpu")) {
                    bp_cli_progress_clear();
                    fprintf(stderr, "bitprobe invariance: no GPU here (%s): the maps run on the "
                                    "CPU engine, which takes minutes for the LLM shapes "
                                    "(--engine cpu says that is meant; --shape and --m make a "
                                    "map smaller)\n", no_gpu);
                    no_gpu = NULL;
                }
                for (int k = 0; k < j->norders; k++) {
                    bp_inv_problem_t p = j->prob;
                    p.dtype = o->dtypes[d];
                    p.tf32 = o->tf32[d];
                    p.combine = j->orders[k];
                    bp_inv_map_t m;
                    bp_error_t err = {0};
                    bp_status s = bp_inv_sweep(e, &p, &so, &m, &err);
                    bp_cli_progress("\r%70s\r", "");
                    if (s == BP_EUNAVAIL) {
                        bp_inv_study_note(st, "%s %s %s skipped: %s", e->name,
                                          bp_inv_op_name(p.op), bp_inv_dtype_name(&p),
                                          err.msg);
                        break;
                    }
                    if (!s) {
                        snprintf(m.values, sizeof m.values, "%s", j->values);
                        m.batch = p.batch;
                    }
                    if (s || bp_inv_study_add(st, &m, &err))
                        return bp_cli_fail(&err);
                }
            }
    }
    if (!st->nmaps) {
        fprintf(stderr, "bitprobe invariance: nothing swept: no engine here computes "
                        "what was asked");
        size_t i;
        json_t *note;
        json_array_foreach(st->notes, i, note)
        {
            fputs(i ? "; " : ": ", stderr);
            bp_esc_put(stderr, json_string_value(note));
        }
        fprintf(stderr, "\n  (without a GPU, the CPU engine is named explicitly on a "
                        "shape it can sweep: e.g. --engine cpu --shape 256x256 --m 1:64)\n");
        return BP_EXIT_TROUBLE;
    }
    return -1;
}

/* The oracle's result once per job and dtype, for the maps that hold more
 * than one result group (or all of them with -v).  Maps are in job order. */
static int arbitrate(opts_t *o, bp_inv_study_t *st)
{
    size_t mi = 0;
    for (int ji = 0; ji < o->njobs; ji++) {
        const job_t *j = &o->jobs[ji];
        char shape[96];
        bp_inv_shape_format(&j->prob, shape, sizeof shape);
        for (int d = 0; d < o->ndtypes; d++) {
            bp_inv_problem_t p = j->prob;
            p.dtype = o->dtypes[d];
            p.tf32 = o->tf32[d];
            /* this job's maps of this dtype */
            bool need = false;
            size_t first = mi;
            for (size_t i = first; i < st->nmaps; i++) {
                const bp_inv_map_t *m = &st->maps[i];
                if (strcmp(m->op, bp_inv_op_name(p.op)) || strcmp(m->shape, shape) ||
                    m->axis != p.axis || strcmp(m->values, j->values))
                    break;
                if (!strcmp(m->dtype_name, bp_inv_dtype_name(&p)))
                    need |= m->ng > 1 || o->verbose;
            }
            if (!need)
                continue;
            size_t nb = bp_inv_result_elems(&p) * bp_dtype_info(bp_inv_result_dtype(&p))->size;
            void *exact = malloc(nb ? nb : 1);
            bp_error_t err = {0};
            if (!exact)
                return bp_cli_fail(&(bp_error_t){BP_ENOMEM, "out of memory"});
            bp_cli_progress("\roracle %s %s ...", p.tf32 ? "tf32" : bp_dtype_name(p.dtype),
                            bp_inv_op_name(p.op));
            bp_status s = bp_inv_oracle(&p, o->threads, exact, &err);
            bp_cli_progress("\r%60s\r", "");
            for (size_t i = first; !s && i < st->nmaps; i++) {
                bp_inv_map_t *m = &st->maps[i];
                if (strcmp(m->op, bp_inv_op_name(p.op)) || strcmp(m->shape, shape) ||
                    m->axis != p.axis || strcmp(m->values, j->values))
                    break;
                if (!strcmp(m->dtype_name, bp_inv_dtype_name(&p)))
                    s = bp_inv_map_arbitrate(m, exact, &err);
            }
            free(exact);
            if (s)
                return bp_cli_fail(&err);
        }
        while (mi < st->nmaps && !strcmp(st->maps[mi].op, bp_inv_op_name(j->prob.op)) &&
               !strcmp(st->maps[mi].shape, shape) && st->maps[mi].axis == j->prob.axis &&
               !strcmp(st->maps[mi].values, j->values))
            mi++;
    }
    return -1;
}

/* --save-inputs: the job's inputs as one safetensors file, per dtype, the
 * batch with the probed rows first: matmul "a.DT" [M, K] and "b.DT" [K, N];
 * row ops "x.DT" [M, H] (and rms_norm's "w.DT" [H]); attention "q.DT"
 * [heads, d], "k.DT" and "v.DT" [keys, heads, d]; for the same experiment
 * elsewhere. */
static int save_inputs(const opts_t *o)
{
    const bp_inv_problem_t *p = &o->jobs[0].prob;
    bp_st_file_t f;
    bp_st_init(&f);
    bp_error_t err = {0};
    bp_status s = BP_OK;
    bool mm = p->op == BP_OP_MATMUL, attn = p->op == BP_OP_SDPA;
    int64_t cols = mm ? p->k : attn ? p->heads * p->n : p->n;
    for (int d = 0; d < o->ndtypes && !s; d++) {
        bp_dtype_t dt = o->dtypes[d];
        const char *dn = o->tf32[d] ? "tf32" : bp_dtype_name(dt);
        struct {
            const char *name;
            int64_t rows, cols;
            uint64_t stream;
            bool probe_first;
        } t[3];
        int nt = 0;
        if (attn) {
            t[nt++] = (typeof(t[0])){"q", 1, cols, BP_INV_STREAM_PROBE, false};
            t[nt++] = (typeof(t[0])){"k", p->k, cols, BP_INV_STREAM_B, false};
            t[nt++] = (typeof(t[0])){"v", p->k, cols, BP_INV_STREAM_W, false};
        } else {
            t[nt++] = (typeof(t[0])){mm ? "a" : "x", p->mmax, cols, BP_INV_STREAM_FILL, true};
            if (mm)
                t[nt++] = (typeof(t[0])){"b", p->k, p->n, BP_INV_STREAM_B, false};
            if (p->op == BP_OP_RMS_NORM)
                t[nt++] = (typeof(t[0])){"w", 1, p->n, BP_INV_STREAM_W, false};
        }
        for (int i = 0; i < nt && !s; i++) {
            bp_buf_t b = {0};
            int64_t sh[2] = {t[i].rows, t[i].cols};
            char name[32];
            snprintf(name, sizeof name, "%s.%s", t[i].name, dn);
            if (!(s = bp_buf_alloc(&b, dt, 2, sh, &err))) {
                bp_inv_fill(dt, b.data, 0, t[i].rows, t[i].cols, p->seed, t[i].stream);
                if (t[i].probe_first)
                    bp_inv_fill(dt, b.data, 0, p->rows, t[i].cols, p->seed,
                                BP_INV_STREAM_PROBE);
                s = bp_st_add(&f, name, &b, &err);
            }
            bp_buf_free(&b);
        }
    }
    char rows[32];
    snprintf(rows, sizeof rows, "%" PRId64, p->rows);
    if (!s && !(s = bp_st_set_meta(&f, "probed_rows", rows, &err)))
        s = bp_st_write(o->save_inputs, &f, false, &err);
    if (!s && !bp_cli_quiet) {
        printf("invariance: inputs written to %s (%" PRId64 " probed row%s first):",
               o->save_inputs, p->rows, p->rows == 1 ? "" : "s");
        for (size_t i = 0; i < f.n; i++) {
            char sh[64];
            bp_shape_format(f.t[i].buf.ndim, f.t[i].buf.shape, sh, sizeof sh);
            printf("%s %s %s", i ? "," : "", f.t[i].name, sh);
        }
        printf("; nothing swept\n");
    }
    bp_st_free(&f);
    return s ? bp_cli_fail(&err) : BP_EXIT_OK;
}

/* The study the Markdown writer appends as text (bp_rep_write's writers
 * take the report alone). */
static const bp_inv_study_t *md_study;

static int inv_markdown(FILE *f, const bp_report_t *rep)
{
    int rc = bp_rep_markdown(f, rep);
    if (rc)
        return rc;
    fputs("\n## Invariance map\n\n```text\n", f);
    bp_inv_text_opts_t to = {.quiet = false, .verbose = false};
    rc = bp_inv_text(f, md_study, &to);
    fputs("```\n", f);
    return rc || ferror(f) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
}

static int write_svg(const char *path, const bp_inv_study_t *st)
{
    bp_out_t o;
    if (!bp_out_open(&o, path)) {
        bp_esc_printf(stderr, "bitprobe invariance: cannot write '%s': %s\n", path,
                      strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    int rc = bp_inv_svg(o.f, st);
    if (!bp_out_close(&o, rc == 0))
        rc = BP_EXIT_TROUBLE;
    if (rc)
        bp_esc_printf(stderr, "bitprobe invariance: cannot write '%s'\n", path);
    return rc;
}

int bp_inv_reports(const bp_rep_targets_t *t, const char *svg, bool verbose,
                   const bp_inv_study_t *st, int argc, char **argv)
{
    bool taken = (t->json && !strcmp(t->json, "-")) || (t->junit && !strcmp(t->junit, "-")) ||
                 (t->markdown && !strcmp(t->markdown, "-")) || (svg && !strcmp(svg, "-"));
    int rc = 0;
    if (!taken) {
        bp_inv_text_opts_t to = {.quiet = bp_cli_quiet, .verbose = verbose};
        rc = bp_inv_text(stdout, st, &to);
    }
    if (!rc && (t->json || t->junit || t->markdown || t->github)) {
        bp_report_t rep;
        bp_report_init(&rep, argc, argv);
        bool cuda = false;
        for (size_t i = 0; i < st->nmaps; i++)
            cuda |= bp_inv_engine_is_cuda(st->maps[i].engine);
        for (size_t i = 0; i < st->ncmaps; i++)
            cuda |= !strcmp(st->cmaps[i].engine, "nccl");
        rep.env = cuda ? bp_envinfo_collect() : bp_envinfo_host();
        json_t *inv = bp_inv_json(st);
        rep.extra = json_object();
        if (!inv || !rep.extra || json_object_set_new(rep.extra, "invariance", inv) ||
            !bp_inv_fill_report(&rep, st)) {
            fprintf(stderr, "bitprobe invariance: out of memory building the report\n");
            rc = BP_EXIT_TROUBLE;
        }
        if (!rc && t->json)
            rc = bp_rep_write(t->json, bp_rep_json, &rep);
        if (!rc && t->junit)
            rc = bp_rep_write(t->junit, bp_rep_junit, &rep);
        if (!rc && t->markdown) {
            md_study = st;
            rc = bp_rep_write(t->markdown, inv_markdown, &rep);
        }
        if (!rc && t->github) {
            fflush(stdout);
            rc = bp_rep_github(taken ? stderr : stdout, &rep);
        }
        bp_report_free(&rep);
    }
    if (!rc && svg)
        rc = write_svg(svg, st);
    return rc;
}

/* The children's arguments: this command's, without what writes reports,
 * repeats, spawns or prints, with --digests. */
int bp_inv_child_args(int argc, char **argv, char **out, int max)
{
    static const char *const drop_arg[] = {"--json", "--junit", "--markdown", "--svg",
                                           "--save-inputs", "--processes", "--repeat",
                                           "--threads", NULL};
    static const char *const drop[] = {"--github", "--quiet", "-q", "-v", "--verbose",
                                       "--no-oracle", NULL};
    int n = 0;
    out[n++] = "invariance";
    for (int i = 1; i < argc && n < max - 2; i++) {
        bool skip = false;
        for (const char *const *d = drop; *d && !skip; d++)
            skip = !strcmp(argv[i], *d);
        for (const char *const *d = drop_arg; *d && !skip; d++) {
            size_t l = strlen(*d);
            if (!strcmp(argv[i], *d)) {
                skip = true;
                i++; /* and its value */
            } else if (!strncmp(argv[i], *d, l) && argv[i][l] == '=') {
                skip = true;
            }
        }
        if (!skip)
            out[n++] = argv[i];
    }
    out[n++] = "--digests";
    out[n] = NULL;
    return n;
}

static int fresh_processes(const opts_t *o, bp_inv_study_t *st, int argc, char **argv)
{
    char *args[128];
    bp_inv_child_args(argc, argv, args, 128);
    bp_error_t err = {0};
    for (int p = 0; p < o->processes; p++) {
        bp_cli_progress("\rfresh process %d of %d   ", p + 1, o->processes);
        bp_status s = bp_inv_proc_compare(args, NULL, st, &err);
        bp_cli_progress("\r%40s\r", "");
        if (s)
            return bp_cli_fail(&err);
    }
    return -1;
}

int cmd_invariance(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) {
        free_opts(&o);
        return rc;
    }
    if (o.coll)
        return cmd_invariance_coll(&o.coll_cl, argc, argv);
    bp_inv_study_t st;
    bp_inv_study_init(&st);
    st.seed = o.jobs[0].prob.seed;
    st.repeat = o.repeat;
    st.processes = o.processes;
    st.policy = o.policy;
    engines_t es = {0};
    if (o.save_inputs) {
        rc = save_inputs(&o);
        goto out;
    }
    rc = sweep_all(&o, &es, &st);
    if (rc < 0 && o.digests) {
        rc = bp_inv_proc_write_digests(stdout, &st) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
        goto out;
    }
    if (rc < 0 && o.processes)
        rc = fresh_processes(&o, &st, argc, argv);
    if (rc < 0 && o.oracle)
        rc = arbitrate(&o, &st);
    if (rc < 0) {
        rc = bp_inv_reports(&o.rep, o.svg, o.verbose, &st, argc, argv);
        if (!rc)
            rc = bp_inv_study_failures(&st) ? BP_EXIT_DRIFT : BP_EXIT_OK;
    }
out:
    engines_close(&es);
    bp_inv_study_free(&st);
    free_opts(&o);
    bp_backend_thread_done();
    return rc;
}
