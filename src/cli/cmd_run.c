/* bitprobe run: every selected probe on every selected backend and dtype;
 * outputs compared across backends (and with goldens), then reported. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "bundle.h"
#include "cmd_run.h"
#include "envinfo.h"
#include "esc.h"
#include "golden.h"
#include "lanes.h"
#include "opt.h"
#include "probe.h"
#include "run_consensus.h"
#include "timing.h"

const char cmd_run_usage[] =
    "bitprobe run [PROBE|FILE.yaml...] [--device LIST] [--require LIST] [--dtype LIST] [--probes DIR] [--golden DIR] [--param NAME=VALUE] [--save DIR] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet] [-v]";

enum { O_AGREE, O_MISSING, O_NO_GOLDEN, O_INTERMEDIATES, O_TIMING, O_ZERO_SIGN };

static int run_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    bp_run_opts_t *o = ctx;
    int rc;
    switch (e->id) {
    case O_AGREE: o->agree = true; return 0;
    case O_MISSING:
        if (strcmp(arg, "skip") == 0)
            o->missing_skip = true;
        else if (strcmp(arg, "fail") != 0)
            return bp_cli_usage_error(cmd, "--missing takes fail or skip, not '%s'", arg);
        return 0;
    case O_NO_GOLDEN: o->golden = false; return 0;
    case O_ZERO_SIGN:
        rc = bp_cli_zero_sign(cmd, arg, &o->cmp.zero_sign_ignore);
        return rc >= 0 ? rc : 0;
    case O_INTERMEDIATES: o->intermediates = true; return 0;
    case O_TIMING: o->timing = true; return 0;
    }
    return BP_EXIT_TROUBLE;
}

/* Returns -1 to go on, or the exit status to return at once. */
static int parse(int argc, char **argv, bp_run_opts_t *o)
{
    bp_run_opts_init(o);
#define R_(name, arg, id, h) BP_OPT_CALL_(name, 0, arg, run_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_RUN_(o,
           "  --device LIST     comma-separated backends: cpu, oracle, cuda, auto (default: auto,\n"
           "                    every backend available here; a missing GPU is skipped and said)\n",
           "  --require LIST    backends that must run: a missing one is an error (exit 2)\n",
           "  --dtype LIST      comma-separated dtypes among fp32, bf16, fp16 (default: the probe's)\n",
           "  --param NAME=VALUE  replace the probe parameter NAME (repeatable); the probe's\n"
           "                    hash changes with it, and its goldens are its own\n"
           "                    (<key>+NAME=VALUE: bless them, or use --no-golden)\n"),
        R_("no-golden", false, O_NO_GOLDEN,
           "  --no-golden       compare across backends only\n"),
        R_("missing", true, O_MISSING,
           "  --missing=MODE    a missing golden is an error (fail, default) or informational (skip)\n"),
        R_("agree", false, O_AGREE,
           "  --agree           differences between backends beyond policy count as drift\n"),
        BP_OPT_PATH_("save", 0, &o->save_dir,
           "  --save DIR        write the run as a bundle (containers + manifest.json) for diff\n"),
        R_("intermediates", false, O_INTERMEDIATES,
           "  --intermediates   with --save, keep every buffer, not only the outputs\n"),
        BP_OPT_REPORT_(&o->out,
           "  --json FILE       the full report as JSON ('-': stdout instead of the text)\n",
           "  --junit FILE      JUnit XML, one testcase per output, dtype and backend pair\n",
           "  --markdown FILE   a self-contained bug-ticket report in Markdown\n",
           "  -v, --verbose     the detail of every difference; -vv: every result\n"),
        BP_OPT_BACKEND_(&o->dev.be),
        {"jobs", 0, BP_OPT_INT, &o->jobs, 1, 64, NULL, 0, true,
           "  --jobs N          probes run at once on each of cpu and oracle, each probe's dtypes\n"
           "                    in turn (default: one per 4 cores, 1 to 4; reports do not\n"
           "                    depend on it)\n"},
        {"repeat", 0, BP_OPT_INT, &o->repeat, 1, 1000000, NULL, 0, true,
           "  --repeat N        run each probe N times per backend; any bit that changes\n"
           "                    between runs is drift (run-to-run nondeterminism)\n"},
        BP_OPT_SIZE_("first", &o->cmp.first_k, 1000000,
           "  --first K         show the first K mismatches per comparison (default 10)\n"),
        BP_OPT_FLAG_("nan-payload", 0, &o->cmp.nan_payload,
           "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"),
        R_("zero-sign", true, O_ZERO_SIGN, BP_CLI_ZERO_SIGN_USAGE),
        R_("timing", false, O_TIMING,
           "  --timing          where the time went (per backend, probe and dtype) on stderr\n"
           "                    and under \"timing\" in the JSON report\n"),
        BP_OPT_TEXT_("  Exit status: 0 passed, 1 drift, 2 errors (missing goldens, probes that fail to\n"
                     "  load or run) or nothing compared.\n"),
        BP_OPT_END_};
#undef R_
    int pos, rc;
    if ((rc = bp_opt_parse("run", opts, o, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    o->nnames = argc - pos;
    o->names = argv + pos;
    o->dev.behaviour = o->save_dir != NULL;
    o->out.text.quiet = bp_cli_quiet;
    o->out.text.color = bp_cli_color();
    o->out.text.first = o->cmp.first_k;
    int rc2 = bp_cli_check_output("run", "--save", o->save_dir, true);
    return rc2 >= 0 ? rc2 : bp_rep_targets_check("run", &o->out);
}

typedef struct {
    bp_backend_t *be[BP_CLI_MAX_BACKENDS];
    int n;
} backends_t;

/* Each backend runs on its own lane (lanes.h), and so does the loading of
 * its goldens; a lane runs ahead of the job being compared while the
 * results it holds from that job on take at most RUN_BUDGET bytes (always
 * at least that job).  The golden cache (cmd_run.h) and the timing
 * records are the only state the lanes share.  A shared backend
 * (bp_backend_shared: cpu, oracle) runs --jobs probes at once, one per
 * thread of its lane, each probe's dtypes in order on a runner of its own
 * (its memo reuses across them as on one thread): most probes are too
 * small for the oracle to spread an op over the cores, so the cores fill
 * with probes instead.  By default one job per RUN_CORES_PER_JOB cores,
 * at most RUN_JOBS_MAX: the oracle's large ops take every core already,
 * and on few cores a second job adds memory, not speed (BENCHMARKS.md).
 * Its threads take the probes of the most result bytes first (lanes.h's
 * costly_first): the oracle's RoPE caches, the longest, would otherwise
 * start last.  The cuda lane runs its probes with GEMMs after the others
 * (bp_backend_gemm_late). */
#define RUN_BUDGET ((size_t)64 << 20)
#define RUN_CORES_PER_JOB 4
#define RUN_JOBS_MAX 4
static pthread_mutex_t timing_lock = PTHREAD_MUTEX_INITIALIZER;

/* bp_backend_run of job j, timed into rep->timing when --timing asks. */
static bp_status timed_run(bp_report_t *rep, bp_backend_t *be, size_t j, const bp_probe_t *p,
                           bp_dtype_t dt, bp_buf_t *bufs, bp_error_t *err)
{
    bp_timing_t *t = rep->timing;
    if (!t)
        return bp_backend_run(be, p, dt, bufs, err);
    uint64_t e0 = be->elems, r0 = be->elems_reused;
    double t0 = bp_timing_now();
    bp_status st = bp_backend_run(be, p, dt, bufs, err);
    double s = bp_timing_now() - t0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < p->nops; i++)
        bytes += bp_buf_nbytes(&bufs[i]);
    pthread_mutex_lock(&timing_lock);
    bp_timing_run(t, p->name, dt, bp_timing_backend(t, be->name), j, s, be->elems - e0,
                  be->elems_reused - r0, bytes);
    pthread_mutex_unlock(&timing_lock);
    return st;
}

/* Whether buffer i of p is one of its outputs. */
static bool is_output(const bp_probe_t *p, size_t i)
{
    for (size_t k = 0; k < p->noutputs; k++)
        if (p->outputs[k].buf == (int)i)
            return true;
    return false;
}

/* Whether lanes keep every buffer (--save --intermediates) or outputs only. */
static bool keeps_all(const bp_run_opts_t *o)
{
    return o->save_dir && o->intermediates;
}

/* Adds the buffers a bundle keeps (outputs; every buffer with
 * --intermediates) as "<buffer>.<dtype>". */
static int keep(const bp_run_opts_t *o, const bp_probe_t *p, bp_dtype_t dt,
                const bp_buf_t *bufs, bp_st_file_t *f)
{
    char name[256];
    bp_error_t err = {0};
    for (size_t i = 0; i < p->nops; i++) {
        if (!is_output(p, i) && !o->intermediates)
            continue;
        snprintf(name, sizeof name, "%s.%s", p->ops[i].out, bp_dtype_name(dt));
        if (bp_st_add(f, name, &bufs[i], &err))
            return bp_cli_fail(&err);
    }
    return BP_EXIT_OK;
}

/* What backend k made of job j (see run_ctx_t). */
typedef struct {
    bp_buf_t *bufs;   /* the job's buffers */
    size_t *changed;  /* --repeat: per output, the first run that changed (0: none) */
    bp_cmp_t *worst;  /* --repeat: per output, that run against the first */
    bp_status st;
    bp_error_t err;
} slot_t;

/* --repeat N: runs the probe N-1 more times on be and keeps, per output,
 * the first run whose bits change from the first (run-to-run
 * nondeterminism), or the last run. */
static bp_status repeat_exec(const bp_run_opts_t *o, bp_report_t *rep, bp_backend_t *be,
                             size_t j, const bp_probe_t *p, bp_dtype_t dt, slot_t *s)
{
    size_t no = p->noutputs ? p->noutputs : 1;
    bp_buf_t *again = calloc(p->nops ? p->nops : 1, sizeof *again);
    s->changed = calloc(no, sizeof *s->changed);
    s->worst = calloc(no, sizeof *s->worst);
    bp_status st = BP_OK;
    if (!again || !s->changed || !s->worst)
        st = bp_error_set(&s->err, BP_ENOMEM, "out of memory");
    for (int r = 1; r < o->repeat && !st; r++) {
        st = timed_run(rep, be, j, p, dt, again, &s->err);
        for (size_t oi = 0; oi < p->noutputs && !st; oi++) {
            const bp_output_t *out = &p->outputs[oi];
            bp_cmp_t c;
            st = bp_compare(&s->bufs[out->buf], &again[out->buf], NULL, &o->cmp, &c, &s->err);
            if (st)
                break;
            /* Keep the first run that changed, or the last one. */
            if (c.mismatched && !s->changed[oi]) {
                bp_cmp_free(&s->worst[oi]);
                s->worst[oi] = c;
                s->changed[oi] = (size_t)r + 1;
            } else if (!s->changed[oi]) {
                bp_cmp_free(&s->worst[oi]);
                s->worst[oi] = c;
            } else {
                bp_cmp_free(&c);
            }
        }
        bp_backend_bufs_free(again, p->nops);
        memset(again, 0, p->nops * sizeof *again);
    }
    free(again);
    return st;
}

/* Reports what repeat_exec found on be (hands the comparisons to rep). */
static int repeat_report(const bp_run_opts_t *o, const bp_backend_t *be,
                         const bp_probe_t *p, bp_dtype_t dt, slot_t *s, bp_report_t *rep)
{
    char label[64];
    for (size_t oi = 0; oi < p->noutputs && o->repeat > 1; oi++) {
        const bp_output_t *out = &p->outputs[oi];
        if (s->changed[oi])
            snprintf(label, sizeof label, "%s run %zu", be->name, s->changed[oi]);
        else
            snprintf(label, sizeof label, "%s runs 2-%d", be->name, o->repeat);
        bp_policy_t exact;
        bp_policy_exact(&exact);
        bp_result_t res = {
            .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
            .dtype = s->bufs[out->buf].dtype, .in_run = true, .run_dtype = dt,
            .kind = BP_RES_REPEAT,
            .a = (char *)be->name, .b = label, .policy = exact, .compared = true,
            .counts = true, .cmp = s->worst[oi],
        };
        if (!bp_report_add(rep, &res))
            return BP_EXIT_TROUBLE;
        memset(&s->worst[oi], 0, sizeof s->worst[oi]);
    }
    return BP_EXIT_OK;
}

static void slot_free(const bp_probe_t *p, slot_t *s)
{
    bp_backend_bufs_free(s->bufs, p->nops);
    free(s->bufs);
    for (size_t oi = 0; s->worst && oi < p->noutputs; oi++)
        bp_cmp_free(&s->worst[oi]);
    free(s->worst);
    free(s->changed);
    memset(s, 0, sizeof *s);
}

/* The run's jobs (each probe in each of its dtypes, in order), run by one
 * lane per backend (lanes.h) and consumed here in order. */
typedef struct {
    const bp_probe_t *p;
    bp_dtype_t dt;
    bool first, last;  /* the probe's first and last dtype */
    size_t group;      /* the job of its first dtype */
} job_t;

/* Lanes 0 to n-1 run backends 0 to n-1; with goldens, lane n + k loads
 * backend k's goldens, each probe's at its first job, once backend k is
 * open (its golden key can depend on the device). */
typedef struct {
    const bp_run_opts_t *o;
    bp_report_t *rep;
    backends_t *bs;
    /* Backends the lanes open themselves (none with --device auto). */
    char names[BP_CLI_MAX_BACKENDS][BP_CLI_NAME_MAX];
    bool lanes_open;
    bp_error_t open_err[BP_CLI_MAX_BACKENDS];
    /* Backends --device auto skipped: a result per probe says so. */
    bp_cli_skip_t skipped[BP_CLI_MAX_BACKENDS];
    int nskipped;
    bp_run_goldens_t goldens;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int opened[BP_CLI_MAX_BACKENDS]; /* 0: not yet, 1: open, -1: failed */
    uint64_t held;  /* result bytes the lanes hold (under mu) */
    job_t *jobs;
    size_t *cost;   /* bytes of each job's results that a lane keeps */
    bool *joined;   /* per job: not its probe's first (lanes.h's groups) */
    bool *gemm;     /* per job: its probe has a GEMM (lanes.h's late jobs
                       on a lane of bp_backend_gemm_late) */
    size_t njobs;
    slot_t *slots;  /* njobs x bs->n */
    /* A shared backend's runner per probe: [group x bs->n], made at the
     * probe's first job, freed after its last */
    bp_backend_t **runners;
    bool shared[BP_CLI_MAX_BACKENDS];
    bp_run_cons_t cons; /* --gpu all: the GPUs against each other */
} run_ctx_t;

static slot_t *slot_at(run_ctx_t *c, size_t j, int k)
{
    return &c->slots[j * (size_t)c->bs->n + (size_t)k];
}

static bp_status lane_begin(void *arg, int k)
{
    run_ctx_t *c = arg;
    int n = c->bs->n;
    bp_status st = BP_OK;
    if (k < n) {
        if (c->lanes_open)
            st = bp_cli_open_one(&c->o->dev, c->names[k], c->rep->timing, &c->bs->be[k],
                                 &c->open_err[k]);
        pthread_mutex_lock(&c->mu);
        c->opened[k] = st ? -1 : 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        return st;
    }
    /* A golden lane: its backend's lane comes first and says why it failed. */
    pthread_mutex_lock(&c->mu);
    while (!c->opened[k - n])
        pthread_cond_wait(&c->cv, &c->mu);
    st = c->opened[k - n] < 0 ? BP_EUNAVAIL : BP_OK;
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* Counts a slot's results in or out of what the lanes hold (--timing
 * reports the peak). */
static void held(run_ctx_t *c, const slot_t *s, const bp_probe_t *p, bool in)
{
    uint64_t bytes = 0;
    for (size_t i = 0; s->bufs && i < p->nops; i++)
        if (s->bufs[i].data)
            bytes += bp_buf_nbytes(&s->bufs[i]);
    pthread_mutex_lock(&c->mu);
    c->held = in ? c->held + bytes : c->held - bytes;
    if (c->rep->timing && c->held > c->rep->timing->held_peak)
        c->rep->timing->held_peak = c->held;
    pthread_mutex_unlock(&c->mu);
}

static bp_status lane_job(void *arg, int k, size_t j)
{
    run_ctx_t *c = arg;
    const job_t *jb = &c->jobs[j];
    int n = c->bs->n;
    if (k >= n) {
        bp_backend_t *be = c->bs->be[k - n];
        if (jb->first)
            bp_run_goldens_prepare(&c->goldens, c->o, jb->p, k - n, be->key, c->rep->timing,
                                   be->name);
        return BP_OK;
    }
    bp_backend_t *be = c->bs->be[k];
    slot_t *s = slot_at(c, j, k);
    bp_backend_t **runner = &c->runners[jb->group * (size_t)n + (size_t)k];
    if (c->shared[k] && jb->first && !(*runner = bp_backend_runner(be)))
        return s->st = bp_error_set(&s->err, BP_ENOMEM, "out of memory");
    if (c->shared[k])
        be = *runner;
    bp_cli_progress("running %s (%s) on %s\n", jb->p->name, bp_dtype_name(jb->dt), be->name);
    s->bufs = calloc(jb->p->nops ? jb->p->nops : 1, sizeof *s->bufs);
    if (!s->bufs)
        return s->st = bp_error_set(&s->err, BP_ENOMEM, "out of memory");
    s->st = timed_run(c->rep, be, j, jb->p, jb->dt, s->bufs, &s->err);
    if (!s->st && c->o->repeat > 1)
        s->st = repeat_exec(c->o, c->rep, be, j, jb->p, jb->dt, s);
    /* What the comparisons do not read goes now. */
    for (size_t i = 0; !s->st && !keeps_all(c->o) && i < jb->p->nops; i++)
        if (!is_output(jb->p, i))
            bp_buf_free(&s->bufs[i]);
    held(c, s, jb->p, true);
    if (c->shared[k] && jb->last) {
        bp_backend_runner_free(*runner);
        *runner = NULL;
    }
    return s->st;
}

/* Threads on the lane of backend `name`: --jobs for a shared backend, by
 * default one per RUN_CORES_PER_JOB cores (1 to RUN_JOBS_MAX), the oracle
 * then no more than its --threads. */
static int lane_width(const bp_run_opts_t *o, const char *name)
{
    if (!bp_backend_shared(name))
        return 1;
    if (o->jobs > 0)
        return o->jobs;
    long w = sysconf(_SC_NPROCESSORS_ONLN) / RUN_CORES_PER_JOB;
    w = w < 1 ? 1 : w > RUN_JOBS_MAX ? RUN_JOBS_MAX : w;
    int t = o->dev.be.threads;
    if (strcmp(name, "oracle") == 0 && t > 0 && t < w)
        w = t;
    return (int)w;
}

static void lane_end(void *arg, int k)
{
    (void)arg;
    (void)k;
    bp_backend_thread_done();
}

/* bp_probe_cpu_gemm_dep's question: does the cpu backend compute GEMM op
 * i in PyTorch's order? */
typedef struct {
    const bp_backend_t *cpu;
    const bp_probe_t *p;
    const bp_buf_t *bufs;
} gemm_ctx_t;

static bool gemm_replayed(void *ctx, int i)
{
    const gemm_ctx_t *g = ctx;
    return bp_cpu_gemm_pytorch(g->cpu, g->p, (size_t)i, g->bufs);
}

/* Job j, finished on every backend: repeats, bundles, cross-backend and
 * golden comparisons into the report. */
static int consume(run_ctx_t *c, size_t j, bp_st_file_t *save)
{
    const bp_run_opts_t *o = c->o;
    const bp_probe_t *p = c->jobs[j].p;
    bp_dtype_t dt = c->jobs[j].dt;
    backends_t *bs = c->bs;
    bp_report_t *rep = c->rep;
    bp_buf_t *bufs[BP_CLI_MAX_BACKENDS] = {0};
    bp_error_t err = {0};
    int rc = BP_EXIT_OK;
    for (int k = 0; k < bs->n; k++)
        bufs[k] = slot_at(c, j, k)->bufs;
    for (int k = 0; k < bs->n && !rc && o->repeat > 1; k++)
        rc = repeat_report(o, bs->be[k], p, dt, slot_at(c, j, k), rep);
    for (int k = 0; save && k < bs->n && !rc; k++)
        rc = keep(o, p, dt, bufs[k], &save[k]);
    for (size_t oi = 0; oi < p->noutputs && !rc; oi++) {
        const bp_output_t *out = &p->outputs[oi];
        for (int k = 0; k < bs->n; k++) {
            const bp_buf_t *b = &bufs[k][out->buf];
            if (b->numel <= BP_REPORT_SMALL)
                bp_report_add_values(rep, p->name, out->name, bs->be[k]->name, b->dtype, true,
                                     dt, b->data, b->numel);
        }
        for (int k = 1; k < bs->n; k++) {
            /* of several GPUs, the first stands for all: the consensus
             * below compares them with each other */
            bool later_gpu = false;
            for (int q = 0; q < k && bs->be[k]->inst[0]; q++)
                later_gpu |= bs->be[q]->inst[0] != '\0';
            if (later_gpu)
                continue;
            bp_result_t r = {
                .probe = p->name, .file = p->path, .line = out->line,
                .output = out->name, .dtype = bufs[0][out->buf].dtype, .in_run = true,
                .run_dtype = dt, .kind = BP_RES_CROSS, .a = (char *)bs->be[0]->name,
                .b = (char *)bs->be[k]->name, .policy = out->policy,
                .compared = true, .counts = o->agree,
            };
            /* a cpu side computed through a GEMM whose order bitprobe does
             * not replay is not PyTorch's bits: said on the result, never
             * drift under --agree */
            char gnote[256];
            int g = -1;
            int ci = strcmp(bs->be[0]->name, "cpu") == 0 ? 0
                     : strcmp(bs->be[k]->name, "cpu") == 0 ? k
                                                            : -1;
            if (ci >= 0) {
                gemm_ctx_t gc = {bs->be[ci], p, bufs[ci]};
                g = bp_probe_cpu_gemm_dep(p, out->buf, gemm_replayed, &gc);
            }
            if (g >= 0) {
                snprintf(gnote, sizeof gnote, BP_CPU_GEMM_NOTE, bp_op_name(p->ops[g].kind),
                         p->ops[g].out);
                r.note = gnote;
                r.counts = false;
            }
            double t0 = bp_timing_now();
            bp_status st = bp_compare(&bufs[0][out->buf], &bufs[k][out->buf], &out->policy,
                                      &o->cmp, &r.cmp, &err);
            if (rep->timing)
                rep->timing->cross_cmp_s += bp_timing_now() - t0;
            if (st) {
                rc = bp_cli_fail(&err);
                break;
            }
            if (!bp_report_add(rep, &r)) {
                bp_cmp_free(&r.cmp);
                rc = BP_EXIT_TROUBLE;
                break;
            }
        }
        if (!rc && bp_run_consensus(&c->cons, p, oi, dt, bs->be, bufs, bs->n, &o->cmp, rep,
                                    &err))
            rc = bp_cli_fail(&err);
        if (!rc)
            rc = bp_run_goldens_compare(&c->goldens, o, p, oi, dt, bs->be, bufs, bs->n, rep);
    }
    return rc;
}

/* What --device auto skipped, once per probe: its goldens (or the
 * comparisons with it) went unchecked. */
static int skipped_results(run_ctx_t *c, const job_t *jb)
{
    for (int s = 0; s < c->nskipped; s++) {
        char a[64];
        snprintf(a, sizeof a, "golden %s", c->skipped[s].name);
        bp_result_t r = {
            .probe = jb->p->name, .file = jb->p->path, .output = "", .dtype = jb->dt,
            .in_run = true, .run_dtype = jb->dt,
            .kind = c->o->golden ? BP_RES_GOLDEN : BP_RES_CROSS,
            .a = c->o->golden ? a : (char *)c->bs->be[0]->name, .b = c->skipped[s].name,
            .status = BP_RS_SKIPPED_BACKEND, .note = c->skipped[s].why,
        };
        bp_policy_exact(&r.policy);
        if (!bp_report_add(c->rep, &r))
            return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

/* Each selected probe file that failed to load: an error result of its
 * own (FILE:LINE:COL: what), while the other probes still run. */
static int load_failures(const bp_cli_probes_t *pr, bp_report_t *rep)
{
    for (size_t i = 0; i < pr->nselbad; i++) {
        const bp_probe_bad_t *b = &pr->bad[pr->selbad[i]];
        bp_result_t r = {
            .probe = b->stem, .file = b->path, .output = "", .a = "", .b = "",
            .status = BP_RS_ERROR, .counts = true, .note = b->msg,
        };
        bp_policy_exact(&r.policy);
        if (!bp_report_add(rep, &r))
            return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

static json_t *backends_json(bp_backend_t *const *bes, int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:O}", "name", bes[k]->name, "key",
                                           bes[k]->key,
                                           "fingerprint", bes[k]->fingerprint
                                               ? bes[k]->fingerprint : json_null()));
    return a;
}

/* --save: writes one probe's container for one backend; appends its
 * relative path to files. */
static int save_probe(const bp_run_opts_t *o, const bp_probe_t *p, const bp_backend_t *be,
                      bp_st_file_t *f, json_t *files)
{
    bp_error_t err = {0};
    char rel[512];
    json_t *fp = json_pack("{s:o, s:O}", "host", bp_envinfo_host(), "backend",
                           be->fingerprint ? be->fingerprint : json_null());
    bp_status st = bp_golden_set_meta(f, p, be->key, fp, &err);
    json_decref(fp);
    /* one GPU of several (cuda:K): "<key>@K", a run of its own for diff
     * --consensus */
    char key[96];
    const char *colon = strchr(be->inst, ':');
    snprintf(key, sizeof key, "%s%s%s", be->key, colon ? "@" : "", colon ? colon + 1 : "");
    if (!st)
        st = bp_bundle_save_probe(o->save_stage, p->name, key, f, &err);
    if (st)
        return bp_cli_fail(&err);
    snprintf(rel, sizeof rel, "%s/%s.safetensors.gz", p->name, key);
    json_array_append_new(files, json_string(rel));
    return BP_EXIT_OK;
}

/* --save: writes the manifest (report, backends, files). */
static int save_manifest(const bp_run_opts_t *o, const backends_t *bs, const bp_report_t *rep,
                         json_t *files)
{
    json_t *m = bp_rep_json_build(rep);
    bp_error_t err = {0};
    json_object_set_new(m, "backends", backends_json(bs->be, bs->n));
    json_object_set(m, "files", files);
    bp_status st = bp_bundle_save_manifest(o->save_stage, m, &err);
    json_decref(m);
    if (!st)
        st = bp_bundle_commit(o->save_dir, o->save_stage, &err);
    if (st)
        return bp_cli_fail(&err);
    if (!bp_cli_quiet)
        bp_esc_printf(stderr, "bitprobe run: saved %zu files and manifest.json in %s\n",
                      json_array_size(files), o->save_dir);
    return BP_EXIT_OK;
}

/* Runs every job on every backend, each backend on its own lane, and
 * consumes the jobs in order (saving each probe's bundle after its last
 * dtype).  Returns the exit status. */
static int run_jobs(run_ctx_t *c, json_t *files)
{
    const bp_run_opts_t *o = c->o;
    backends_t *bs = c->bs;
    bp_error_t err = {0};
    int rc = BP_EXIT_OK;
    c->slots = calloc(c->njobs * (size_t)bs->n + 1, sizeof *c->slots);
    if (!c->slots) {
        bp_error_set(&err, BP_ENOMEM, "out of memory");
        return bp_cli_fail(&err);
    }
    c->runners = calloc(c->njobs * (size_t)bs->n + 1, sizeof *c->runners);
    if (!c->runners) {
        free(c->slots);
        bp_error_set(&err, BP_ENOMEM, "out of memory");
        return bp_cli_fail(&err);
    }
    bp_lane_spec_t spec[2 * BP_CLI_MAX_BACKENDS];
    for (int k = 0; k < bs->n; k++) {
        c->opened[k] = c->lanes_open ? 0 : 1;
        const char *name = c->lanes_open ? c->names[k] : bs->be[k]->name;
        c->shared[k] = bp_backend_shared(name);
        spec[k] = (bp_lane_spec_t){.width = lane_width(o, name),
                                   .late = bp_backend_gemm_late(name) ? c->gemm : NULL,
                                   .costly_first = true};
        spec[bs->n + k] = (bp_lane_spec_t){.width = 1};
    }
    bp_lane_fns_t fns = {.begin = lane_begin, .job = lane_job, .end = lane_end, .ctx = c};
    int nlanes = o->golden ? 2 * bs->n : bs->n;
    bp_lanes_t *lanes = bp_lanes_start_wide(nlanes, spec, c->joined, c->njobs, c->njobs,
                                            c->cost, RUN_BUDGET, &fns, &err);
    if (!lanes)
        rc = bp_cli_fail(&err);
    if (!rc) {
        int f = bp_lanes_wait_begun(lanes);
        if (f >= 0)
            rc = bp_cli_open_fail("run", c->names[f % bs->n], c->open_err[f % bs->n].code,
                                  &c->open_err[f % bs->n]);
    }
    bp_st_file_t save[BP_CLI_MAX_BACKENDS];
    for (int k = 0; k < bs->n; k++)
        bp_st_init(&save[k]);
    for (size_t j = 0; j < c->njobs && !rc; j++) {
        const job_t *jb = &c->jobs[j];
        /* Golden lanes never fail a job. */
        int f = bp_lanes_wait(lanes, j);
        if (f >= 0)
            rc = bp_cli_fail(&slot_at(c, j, f % bs->n)->err);
        if (!rc && jb->first)
            rc = skipped_results(c, jb);
        if (!rc)
            rc = consume(c, j, o->save_dir ? save : NULL);
        for (int k = 0; k < bs->n; k++) {
            held(c, slot_at(c, j, k), jb->p, false);
            slot_free(jb->p, slot_at(c, j, k));
        }
        if (jb->last) {
            for (int k = 0; k < bs->n && o->save_dir && !rc; k++)
                rc = save_probe(o, jb->p, bs->be[k], &save[k], files);
            for (int k = 0; k < bs->n; k++) {
                bp_st_free(&save[k]);
                bp_st_init(&save[k]);
            }
            bp_run_goldens_done(&c->goldens, jb->p);
        }
        bp_lanes_release(lanes, j);
    }
    bp_lanes_finish(lanes);
    for (int k = 0; k < bs->n; k++)
        bp_st_free(&save[k]);
    /* What lanes ran ahead of a failure, and the runners of probes whose
     * last dtype did not run. */
    for (size_t j = 0; j < c->njobs; j++)
        for (int k = 0; k < bs->n; k++) {
            slot_free(c->jobs[j].p, slot_at(c, j, k));
            bp_backend_runner_free(c->runners[j * (size_t)bs->n + (size_t)k]);
        }
    free(c->slots);
    free(c->runners);
    c->slots = NULL;
    c->runners = NULL;
    return rc;
}

/* Bytes of the buffers of p in dt that a lane keeps (0 where inference
 * fails: the run reports it). */
static size_t job_bytes(const bp_run_opts_t *o, const bp_probe_t *p, bp_dtype_t dt)
{
    bp_meta_t *m = calloc(p->nops ? p->nops : 1, sizeof *m);
    bp_error_t err = {0};
    size_t bytes = 0;
    if (m && !bp_probe_infer(p, dt, m, &err))
        for (size_t i = 0; i < p->nops; i++) {
            if (!keeps_all(o) && !is_output(p, i))
                continue;
            size_t n = bp_dtype_info(m[i].dtype)->size;
            for (int d = 0; d < m[i].ndim; d++)
                n *= (size_t)m[i].shape[d];
            bytes += n;
        }
    free(m);
    return bytes;
}

/* The jobs of the selected probes in the dtypes --dtype allows; notes
 * those left with none. */
static int plan_jobs(const bp_run_opts_t *o, bp_probe_t **sel, size_t nsel, bp_report_t *rep,
                     run_ctx_t *c)
{
    c->jobs = calloc(nsel * BP_NDTYPES + 1, sizeof *c->jobs);
    c->cost = calloc(nsel * BP_NDTYPES + 1, sizeof *c->cost);
    c->joined = calloc(nsel * BP_NDTYPES + 1, sizeof *c->joined);
    c->gemm = calloc(nsel * BP_NDTYPES + 1, sizeof *c->gemm);
    c->njobs = 0;
    if (!c->jobs || !c->cost || !c->joined || !c->gemm) {
        fprintf(stderr, "bitprobe run: out of memory\n");
        return BP_EXIT_TROUBLE;
    }
    for (size_t i = 0; i < nsel; i++) {
        uint32_t mask = sel[i]->dtypes & o->dtypes;
        if (!mask)
            bp_report_note(rep, "%s: not run (its dtypes are not among --dtype)", sel[i]->name);
        size_t first = c->njobs;
        for (int d = 0; d < BP_NDTYPES; d++)
            if (mask & (1u << d)) {
                c->jobs[c->njobs] = (job_t){.p = sel[i], .dt = (bp_dtype_t)d,
                                            .first = c->njobs == first, .group = first};
                c->joined[c->njobs] = c->njobs != first;
                c->gemm[c->njobs] = bp_backend_probe_gemm(sel[i]);
                c->njobs++;
            }
        if (c->njobs > first)
            c->jobs[c->njobs - 1].last = true;
    }
    for (size_t j = 0; j < c->njobs; j++)
        c->cost[j] = job_bytes(o, c->jobs[j].p, c->jobs[j].dt);
    return BP_EXIT_OK;
}

/* Opens the backends: named ones on their own lanes (a device's context
 * start beside the host backends' first jobs), auto's here, as it has to
 * know which exist. */
static int open_backends(run_ctx_t *c)
{
    backends_t *bs = c->bs;
    int rc = bp_cli_backend_names("run", &c->o->dev, c->names, &bs->n);
    c->lanes_open = rc < 0;
    if (rc == 0)
        return bp_cli_open_backends("run", &c->o->dev, bs->be, &bs->n, c->skipped,
                                    &c->nskipped, c->rep->timing);
    for (int k = 0; k < bs->n && c->lanes_open && c->rep->timing; k++)
        bp_timing_backend(c->rep->timing, c->names[k]);
    return rc < 0 ? BP_EXIT_OK : rc;
}

/* Why a run compares nothing, before it runs (NULL: it compares); *ok
 * when that is its point: a bundle saved for diff. */
static const char *nothing_to_compare(const run_ctx_t *c, size_t nsel, bool *ok)
{
    *ok = false;
    static char none[512];
    if (!nsel && !c->o->nnames) {
        snprintf(none, sizeof none, "no probe files (*.yaml, *.yml) in %s",
                 bp_cli_probes_dir(c->o->probes_dir));
        return none;
    }
    if (!nsel)
        return "no probes matched";
    if (!c->njobs)
        return "no probe runs in the dtypes --dtype names";
    if (c->bs->n + c->nskipped > 1 || c->o->golden || c->o->repeat > 1)
        return NULL;
    *ok = c->o->save_dir != NULL;
    return *ok ? "one backend and --no-golden: saved for diff"
               : "one backend and --no-golden: nothing to compare with";
}

int cmd_run(int argc, char **argv)
{
    bp_timing_t timing;
    bp_timing_init(&timing);
    bp_run_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    bp_backend_pin_gpu(&o.dev.be); /* before the lanes start CUDA */
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    if (o.timing)
        rep.timing = &timing;
    rep.env = bp_envinfo_host();
    bp_cli_probes_t pr;
    backends_t bs = {0};
    bp_error_t err = {0};
    double t0 = bp_timing_now();
    rc = bp_cli_probes_load("run", o.probes_dir, o.params, o.nparams, o.names, o.nnames, &pr);
    timing.load_s = bp_timing_now() - t0;
    bp_probe_t **sel = pr.sel;
    size_t nsel = pr.nsel;
    if (!rc && nsel && bp_probe_params_check(sel, nsel, o.params, o.nparams, &err))
        rc = bp_cli_fail(&err);
    if (!rc)
        rc = load_failures(&pr, &rep);
    run_ctx_t ctx = {.o = &o, .rep = &rep, .bs = &bs};
    pthread_mutex_init(&ctx.mu, NULL);
    pthread_cond_init(&ctx.cv, NULL);
    bp_run_goldens_init(&ctx.goldens);
    if (!rc)
        rc = plan_jobs(&o, sel, nsel, &rep, &ctx);
    if (!rc)
        rc = open_backends(&ctx);
    bool nothing_ok;
    const char *nothing = rc || (!nsel && pr.nselbad) ? NULL
                                                      : nothing_to_compare(&ctx, nsel, &nothing_ok);
    if (nothing && !bp_report_why_empty(&rep, nothing, nothing_ok))
        rc = BP_EXIT_TROUBLE;
    json_t *files = json_array();
    char stage[4096];
    if (!rc && o.save_dir) {
        if (bp_bundle_stage(o.save_dir, stage, sizeof stage, &err))
            rc = bp_cli_fail(&err);
        else
            o.save_stage = stage;
    }
    if (!rc)
        rc = run_jobs(&ctx, files);
    free(ctx.jobs);
    free(ctx.cost);
    free(ctx.joined);
    free(ctx.gemm);
    pthread_cond_destroy(&ctx.cv);
    pthread_mutex_destroy(&ctx.mu);
    if (!rc)
        bp_run_consensus_note(&ctx.cons, bs.be, bs.n, &rep);
    if (!rc && !bp_run_goldens_hints(&ctx.goldens, &o, &rep))
        rc = BP_EXIT_TROUBLE;
    if (!rc && o.save_dir)
        rc = save_manifest(&o, &bs, &rep, files);
    if (o.save_stage)
        bp_bundle_abandon(o.save_stage); /* nothing left after a commit */
    json_decref(files);
    if (!rc) {
        /* The JSON report holds the figures up to here. */
        bp_timing_stop(&timing);
        t0 = bp_timing_now();
        json_object_set_new(rep.env, "backends", backends_json(bs.be, bs.n));
        bp_tally_t t;
        bp_report_tally(&rep, &t);
        rc = bp_rep_emit(&o.out, &rep) ? BP_EXIT_TROUBLE : t.exit;
        timing.report_s = bp_timing_now() - t0;
    }
    bp_run_goldens_free(&ctx.goldens);
    /* A device's teardown is the process's end (main.c's leave). */
    for (int k = 0; k < bs.n; k++)
        if (bs.be[k] && !bs.be[k]->device)
            bp_backend_close(bs.be[k]);
    bp_cli_probes_free(&pr);
    if (o.timing) {
        bp_timing_stop(&timing);
        bp_rep_timing(stderr, &timing);
    }
    bp_timing_free(&timing);
    bp_report_free(&rep);
    return rc;
}
