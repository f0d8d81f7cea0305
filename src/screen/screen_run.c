/* Screening several GPUs at once (screen_run.h): one thread per GPU, the
 * rounds in step (every GPU runs round r's jobs, built once on the host,
 * while the host builds round r + 1's). */
#include "screen_run.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "screen_dev.h"
#include "screen_golden.h"
#include "timing.h"

typedef struct {
    const bp_screen_opts_t *o;
    bp_screen_gpu_t *g;
    bp_screen_dev_t *dev;
    const bp_screen_job_t *sweeps; /* the golden tests' jobs, o->ntests slots */
    void *golden[BP_SCREEN_MAX_TESTS];
    void *const *oracle;
    const bp_screen_job_t *jobs; /* this round's */
    double t0;
} gpu_ctx_t;

static void trouble(bp_screen_gpu_t *g, const bp_error_t *e)
{
    size_t len = strlen(g->error);
    g->trouble = true;
    snprintf(g->error + len, sizeof g->error - len, "%s%s", len ? "; " : "", e->msg);
}

static void *open_gpu(void *arg)
{
    gpu_ctx_t *c = arg;
    const bp_screen_opts_t *o = c->o;
    bp_error_t err = {0};
    c->t0 = bp_timing_now();
#ifdef BP_HAVE_CUDA
    bp_status st = o->fake ? bp_screen_fake_open(o->fake, c->g->index, c->g, &c->dev, &err)
                           : bp_screen_cuda_open(c->g->index, c->g, &c->dev, &err);
#else
    bp_status st = o->fake ? bp_screen_fake_open(o->fake, c->g->index, c->g, &c->dev, &err)
                           : bp_error_set(&err, BP_EUNAVAIL, "built without CUDA");
#endif
    if (!st && !(c->g->wrong_by_sm = calloc(c->g->nsmid ? c->g->nsmid : 1, sizeof(uint32_t))))
        st = bp_error_set(&err, BP_ENOMEM, "out of memory");
    if (!st && o->golden_root)
        st = bp_screen_golden_load(o->golden_root, c->g->key, c->sweeps, o->ntests, c->golden,
                                   c->g->note, sizeof c->g->note, &err);
    for (int i = 0; !st && i < o->ninject; i++) {
        const bp_screen_inject_t *in = &o->inject[i];
        if (in->gpu != c->g->index ||
            bp_screen_tests[in->test].family == BP_SCR_CUBLAS)
            continue;
        if ((unsigned)in->sm >= c->g->nsmid || !c->g->present[in->sm])
            st = bp_error_set(&err, BP_EINPUT, "BP_SCREEN_INJECT: GPU %d has no SM %d "
                              "(its SM ids are below %u)", in->gpu, in->sm, c->g->nsmid);
    }
    if (st) {
        trouble(c->g, &err);
        if (c->dev) {
            c->dev->close(c->dev);
            c->dev = NULL;
        }
    }
    c->g->seconds = bp_timing_now() - c->t0;
    return NULL;
}

static size_t per_sm_of(const bp_screen_job_t *j, const bp_screen_gpu_t *g)
{
    if (bp_screen_tests[j->test].family == BP_SCR_MEM)
        return j->n / (g->nsmid ? g->nsmid : 1);
    return j->n;
}

static int inject_for(const bp_screen_opts_t *o, int gpu, int test)
{
    for (int i = 0; i < o->ninject; i++)
        if (o->inject[i].gpu == gpu && o->inject[i].test == test)
            return o->inject[i].sm;
    return -1;
}

static void *run_round(void *arg)
{
    gpu_ctx_t *c = arg;
    bp_screen_gpu_t *g = c->g;
    const bp_screen_opts_t *o = c->o;
    for (int i = 0; c->dev && i < o->ntests; i++) {
        const bp_screen_job_t *j = &c->jobs[i];
        const bp_screen_test_t *T = &bp_screen_tests[j->test];
        double t0 = bp_timing_now();
        size_t per_sm = per_sm_of(j, g), es = bp_dtype_info(T->dt)->size;
        size_t nout = T->family == BP_SCR_CUBLAS ? j->n : (size_t)g->nsmid * per_sm;
        void *out = malloc(nout * es);
        unsigned char *done = calloc(g->nsmid ? g->nsmid : 1, 1);
        bp_error_t err = {0};
        bp_status st = out && done ? BP_OK : bp_error_set(&err, BP_ENOMEM, "out of memory");
        if (!st)
            st = c->dev->run(c->dev, g, j, per_sm, inject_for(o, g->index, j->test), out, done,
                             &err);
        if (!st)
            st = bp_screen_check(g, j, out, per_sm, done, c->golden[i], c->oracle[i], &err);
        free(out);
        free(done);
        g->t[j->test].seconds += bp_timing_now() - t0;
        if (st) {
            /* A failed CUDA call leaves the context unusable: stop here. */
            trouble(g, &err);
            c->dev->close(c->dev);
            c->dev = NULL;
        }
    }
    g->seconds = bp_timing_now() - c->t0;
    return NULL;
}

static void jobs_free(bp_screen_job_t *jobs, const bp_screen_opts_t *o)
{
    for (int i = 0; jobs && i < o->ntests; i++)
        if (bp_screen_tests[o->tests[i]].by != BP_SCR_BY_GOLDEN)
            bp_screen_job_free(&jobs[i]);
    free(jobs);
}

/* Round r's jobs; the golden tests' are the sweeps themselves. */
static bp_status jobs_make(const bp_screen_opts_t *o, int r, const bp_screen_job_t *sweeps,
                           bp_screen_job_t **out, bp_error_t *err)
{
    bp_screen_job_t *jobs = calloc((size_t)o->ntests, sizeof *jobs);
    if (!jobs)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int i = 0; i < o->ntests; i++) {
        bp_status st = BP_OK;
        if (bp_screen_tests[o->tests[i]].by == BP_SCR_BY_GOLDEN)
            jobs[i] = sweeps[i];
        else
            st = bp_screen_job_make(o->tests[i], r, &jobs[i], err);
        if (st) {
            jobs_free(jobs, o);
            return st;
        }
    }
    *out = jobs;
    return BP_OK;
}

typedef struct {
    const bp_screen_opts_t *o;
    int r;
    const bp_screen_job_t *sweeps;
    bp_screen_job_t *jobs;
    bp_status st;
    bp_error_t err;
} maker_t;

static void *make_thread(void *arg)
{
    maker_t *m = arg;
    m->st = jobs_make(m->o, m->r, m->sweeps, &m->jobs, &m->err);
    return NULL;
}

bp_status bp_screen_run(const bp_screen_opts_t *o, bp_screen_gpu_t *g, int ngpus,
                        bp_error_t *err)
{
    bp_status st = BP_OK;
    gpu_ctx_t *ctx = calloc((size_t)ngpus, sizeof *ctx);
    pthread_t *tid = calloc((size_t)ngpus, sizeof *tid);
    bool *started = calloc((size_t)ngpus, sizeof *started);
    bp_screen_job_t *sweeps = calloc((size_t)o->ntests, sizeof *sweeps);
    void **oracle = calloc((size_t)o->ntests, sizeof *oracle);
    if (!ctx || !tid || !started || !sweeps || !oracle) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; !st && i < o->ntests; i++)
        if (bp_screen_tests[o->tests[i]].by == BP_SCR_BY_GOLDEN)
            st = bp_screen_job_make(o->tests[i], 0, &sweeps[i], err);
    if (st)
        goto out;
    /* Devices start (contexts, cuBLAS, the SM map) while the oracle works. */
    for (int k = 0; k < ngpus; k++) {
        ctx[k] = (gpu_ctx_t){o, &g[k], NULL, sweeps, {NULL}, oracle, NULL, 0};
        started[k] = pthread_create(&tid[k], NULL, open_gpu, &ctx[k]) == 0;
        if (!started[k])
            open_gpu(&ctx[k]);
    }
    for (int i = 0; !st && i < o->ntests; i++)
        if (bp_screen_tests[o->tests[i]].by == BP_SCR_BY_GOLDEN &&
            bp_screen_tests[o->tests[i]].ulp_bound >= 0)
            st = bp_screen_oracle(&sweeps[i], &oracle[i], err);
    for (int k = 0; k < ngpus; k++)
        if (started[k])
            pthread_join(tid[k], NULL);
    bp_screen_job_t *jobs = NULL;
    if (!st)
        st = jobs_make(o, 0, sweeps, &jobs, err);
    for (int r = 0; !st && r < o->depth; r++) {
        for (int k = 0; k < ngpus; k++) {
            ctx[k].jobs = jobs;
            started[k] = pthread_create(&tid[k], NULL, run_round, &ctx[k]) == 0;
        }
        maker_t m = {o, r + 1, sweeps, NULL, BP_OK, {0}};
        if (r + 1 < o->depth)
            make_thread(&m);
        for (int k = 0; k < ngpus; k++) {
            if (started[k])
                pthread_join(tid[k], NULL);
            else
                run_round(&ctx[k]);
        }
        jobs_free(jobs, o);
        jobs = m.jobs;
        if (m.st) {
            st = m.st;
            *err = m.err;
        }
        if (o->progress && o->depth > 1)
            o->progress(o->pctx, r + 1, o->depth);
    }
    jobs_free(jobs, o);
    for (int k = 0; k < ngpus; k++) {
        if (ctx[k].dev)
            ctx[k].dev->close(ctx[k].dev);
        bp_screen_gpu_coverage(&g[k]);
        for (int i = 0; i < o->ntests; i++)
            free(ctx[k].golden[i]);
    }
out:
    for (int i = 0; sweeps && i < o->ntests; i++)
        bp_screen_job_free(&sweeps[i]);
    for (int i = 0; oracle && i < o->ntests; i++)
        free(oracle[i]);
    free(sweeps);
    free(oracle);
    free(ctx);
    free(tid);
    free(started);
    return st;
}
