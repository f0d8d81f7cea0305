/* bitprobe run: every selected probe on every selected backend and dtype;
 * outputs compared across backends (and with goldens), then reported. */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "envinfo.h"
#include "probe.h"
#include "rep.h"
#include "runopts.h"
#include "st.h"
#include "timing.h"

typedef struct {
    bp_backend_t *be[BP_RUN_MAX_BACKENDS];
    int n;
} backends_t;

/* Host backends run in worker threads while the calling thread drives the
 * device backends; the timing records are the only state they share. */
static pthread_mutex_t timing_lock = PTHREAD_MUTEX_INITIALIZER;

/* bp_backend_run, timed into rep->timing when --timing asks. */
static bp_status timed_run(bp_report_t *rep, bp_backend_t *be, const bp_probe_t *p,
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
    bp_timing_run(t, p->name, dt, bp_timing_backend(t, be->name), s, be->elems - e0,
                  be->elems_reused - r0, bytes);
    pthread_mutex_unlock(&timing_lock);
    return st;
}

/* One backend's run of one probe and dtype, and the golden it is compared
 * with, loaded ahead (backends are independent: each job touches only its
 * own backend, buffers and golden slot). */
typedef struct {
    const bp_run_opts_t *o;
    bp_report_t *rep;
    bp_backend_t *be;
    int slot;
    const bp_probe_t *p;
    bp_dtype_t dt;
    bp_buf_t *bufs;
    bp_status st;
    bp_error_t err;
} job_t;

static void job_run(job_t *j)
{
    j->st = timed_run(j->rep, j->be, j->p, j->dt, j->bufs, &j->err);
    if (!j->st)
        bp_run_golden_prepare(j->o, j->p, j->slot, j->be->key, j->rep->timing, j->be->name);
}

static void *job_thread(void *arg)
{
    job_run(arg);
    bp_backend_thread_done();
    return NULL;
}

/* Runs every backend: host ones in threads when there is more than one
 * backend, device ones here.  Returns the first failure's exit status. */
static int run_all(const bp_run_opts_t *o, backends_t *bs, const bp_probe_t *p,
                   bp_dtype_t dt, bp_report_t *rep, bp_buf_t **bufs)
{
    job_t jobs[BP_RUN_MAX_BACKENDS];
    pthread_t th[BP_RUN_MAX_BACKENDS];
    bool threaded[BP_RUN_MAX_BACKENDS] = {0};
    for (int k = 0; k < bs->n; k++) {
        jobs[k] = (job_t){.o = o, .rep = rep, .be = bs->be[k], .slot = k, .p = p,
                          .dt = dt, .bufs = bufs[k]};
        bp_cli_progress("running %s (%s) on %s\n", p->name, bp_dtype_name(dt),
                        bs->be[k]->name);
        if (!bs->be[k]->device && bs->n > 1)
            threaded[k] = pthread_create(&th[k], NULL, job_thread, &jobs[k]) == 0;
    }
    for (int k = 0; k < bs->n; k++)
        if (!threaded[k])
            job_run(&jobs[k]);
    for (int k = 0; k < bs->n; k++)
        if (threaded[k])
            pthread_join(th[k], NULL);
    for (int k = 0; k < bs->n; k++)
        if (jobs[k].st)
            return bp_cli_fail(&jobs[k].err);
    return BP_EXIT_OK;
}

/* Adds the buffers a bundle keeps (outputs; every buffer with
 * --intermediates) as "<buffer>.<dtype>". */
static int keep(const bp_run_opts_t *o, const bp_probe_t *p, bp_dtype_t dt,
                const bp_buf_t *bufs, bp_st_file_t *f)
{
    char name[256];
    bp_error_t err = {0};
    for (size_t i = 0; i < p->nops; i++) {
        bool is_out = false;
        for (size_t k = 0; k < p->noutputs; k++)
            is_out |= p->outputs[k].buf == (int)i;
        if (!is_out && !o->intermediates)
            continue;
        snprintf(name, sizeof name, "%s.%s", p->ops[i].out, bp_dtype_name(dt));
        if (bp_st_add(f, name, &bufs[i], &err))
            return bp_cli_fail(&err);
    }
    return BP_EXIT_OK;
}

/* --repeat N: runs the probe N-1 more times on be and reports every output
 * whose bits change from the first run (run-to-run nondeterminism). */
static int repeat_runs(const bp_run_opts_t *o, bp_backend_t *be, const bp_probe_t *p,
                       bp_dtype_t dt, const bp_buf_t *first, bp_report_t *rep)
{
    bp_error_t err = {0};
    bp_buf_t *again = calloc(p->nops ? p->nops : 1, sizeof *again);
    int rc = again ? BP_EXIT_OK : BP_EXIT_TROUBLE;
    char label[64];
    size_t *changed = calloc(p->noutputs ? p->noutputs : 1, sizeof *changed);
    bp_cmp_t *worst = calloc(p->noutputs ? p->noutputs : 1, sizeof *worst);
    if (!changed || !worst)
        rc = BP_EXIT_TROUBLE;
    for (int r = 1; r < o->repeat && !rc; r++) {
        if (timed_run(rep, be, p, dt, again, &err))
            rc = bp_cli_fail(&err);
        for (size_t oi = 0; oi < p->noutputs && !rc; oi++) {
            const bp_output_t *out = &p->outputs[oi];
            bp_cmp_t c;
            if (bp_compare(&first[out->buf], &again[out->buf], NULL, &o->cmp, &c, &err)) {
                rc = bp_cli_fail(&err);
                break;
            }
            /* Keep the first run that changed, or the last one. */
            if (c.mismatched && !changed[oi]) {
                bp_cmp_free(&worst[oi]);
                worst[oi] = c;
                changed[oi] = (size_t)r + 1;
            } else if (!changed[oi]) {
                bp_cmp_free(&worst[oi]);
                worst[oi] = c;
            } else {
                bp_cmp_free(&c);
            }
        }
        bp_backend_bufs_free(again, p->nops);
        memset(again, 0, p->nops * sizeof *again);
    }
    for (size_t oi = 0; oi < p->noutputs && o->repeat > 1 && again && changed && worst; oi++) {
        if (!rc) {
            const bp_output_t *out = &p->outputs[oi];
            if (changed[oi])
                snprintf(label, sizeof label, "%s run %zu", be->name, changed[oi]);
            else
                snprintf(label, sizeof label, "%s runs 2-%d", be->name, o->repeat);
            bp_policy_t exact;
            bp_policy_exact(&exact);
            bp_result_t res = {
                .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
                .dtype = first[out->buf].dtype, .kind = BP_RES_REPEAT,
                .a = (char *)be->name, .b = label, .policy = exact, .compared = true,
                .counts = true, .cmp = worst[oi],
            };
            if (bp_report_add(rep, &res)) {
                memset(&worst[oi], 0, sizeof worst[oi]);
                continue;
            }
            rc = BP_EXIT_TROUBLE;
        }
        bp_cmp_free(&worst[oi]);
    }
    free(changed);
    free(worst);
    free(again);
    return rc;
}

/* One probe in one dtype on every backend; compare and report. */
static int run_one(const bp_run_opts_t *o, backends_t *bs, const bp_probe_t *p,
                   bp_dtype_t dt, bp_report_t *rep, bp_st_file_t *save)
{
    bp_buf_t *bufs[BP_RUN_MAX_BACKENDS] = {0};
    bp_error_t err = {0};
    int rc = BP_EXIT_OK;
    for (int k = 0; k < bs->n && !rc; k++) {
        bufs[k] = calloc(p->nops ? p->nops : 1, sizeof *bufs[k]);
        if (!bufs[k]) {
            bp_error_set(&err, BP_ENOMEM, "out of memory");
            rc = bp_cli_fail(&err);
        }
    }
    if (!rc)
        rc = run_all(o, bs, p, dt, rep, bufs);
    for (int k = 0; k < bs->n && !rc; k++)
        rc = repeat_runs(o, bs->be[k], p, dt, bufs[k], rep);
    for (int k = 0; save && k < bs->n && !rc; k++)
        rc = keep(o, p, dt, bufs[k], &save[k]);
    for (size_t oi = 0; oi < p->noutputs && !rc; oi++) {
        const bp_output_t *out = &p->outputs[oi];
        for (int k = 0; k < bs->n; k++) {
            const bp_buf_t *b = &bufs[k][out->buf];
            if (b->numel <= BP_REPORT_SMALL)
                bp_report_add_values(rep, p->name, out->name, bs->be[k]->name, b->dtype,
                                     b->data, b->numel);
        }
        for (int k = 1; k < bs->n; k++) {
            bp_result_t r = {
                .probe = p->name, .file = p->path, .line = out->line,
                .output = out->name, .dtype = bufs[0][out->buf].dtype,
                .kind = BP_RES_CROSS, .a = (char *)bs->be[0]->name,
                .b = (char *)bs->be[k]->name, .policy = out->policy,
                .compared = true, .counts = o->agree,
            };
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
        if (!rc)
            rc = bp_run_golden(o, p, oi, dt, bs->be, bufs, bs->n, rep);
    }
    for (int k = 0; k < bs->n; k++) {
        bp_backend_bufs_free(bufs[k], p->nops);
        free(bufs[k]);
    }
    return rc;
}

/* --timing on stderr: per backend, per probe and dtype, then the rest. */
static void print_timing(const bp_timing_t *t)
{
    FILE *f = stderr;
    fprintf(f, "timing (wall seconds, CLOCK_MONOTONIC):\n");
    fprintf(f, "  %-8s %8s %8s %9s %8s %8s %11s %11s %11s\n", "backend", "open",
            "context", "run", "g.load", "g.cmp", "elements", "reused", "elem/s");
    for (int k = 0; k < t->nbe; k++) {
        const bp_timing_be_t *b = &t->be[k];
        char ctx[32] = "-", rate[32] = "-";
        if (b->ctx_s > 0)
            snprintf(ctx, sizeof ctx, "%.4f", b->ctx_s);
        if (b->run_s > 0)
            snprintf(rate, sizeof rate, "%.4g", (double)b->elems / b->run_s);
        if (!b->opened) {
            fprintf(f, "  %-8s %8.4f (not available)\n", b->name, b->open_s);
            continue;
        }
        fprintf(f, "  %-8s %8.4f %8s %9.4f %8.4f %8.4f %11llu %11llu %11s\n", b->name,
                b->open_s, ctx, b->run_s, b->golden_load_s, b->golden_cmp_s,
                (unsigned long long)b->elems, (unsigned long long)b->reused, rate);
    }
    fprintf(f, "  %-24s %-5s", "probe", "dtype");
    for (int k = 0; k < t->nbe; k++)
        if (t->be[k].opened)
            fprintf(f, " %9s", t->be[k].name);
    fputc('\n', f);
    /* One row per probe and dtype, in run order; repeats add up. */
    for (size_t i = 0; i < t->nruns; i++) {
        const bp_timing_run_t *r = &t->runs[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->runs[j].dtype == r->dtype && strcmp(t->runs[j].probe, r->probe) == 0;
        if (seen)
            continue;
        fprintf(f, "  %-24s %-5s", r->probe, bp_dtype_name(r->dtype));
        for (int k = 0; k < t->nbe; k++) {
            if (!t->be[k].opened)
                continue;
            double s = 0;
            for (size_t j = i; j < t->nruns; j++)
                if (t->runs[j].be == k && t->runs[j].dtype == r->dtype &&
                    strcmp(t->runs[j].probe, r->probe) == 0)
                    s += t->runs[j].s;
            fprintf(f, " %9.4f", s);
        }
        fputc('\n', f);
    }
    fprintf(f, "  probes load %.4f, cross-backend compare %.4f, report %.4f\n", t->load_s,
            t->cross_cmp_s, t->report_s);
    fprintf(f, "  total %.3f wall, %.3f CPU (user %.3f, sys %.3f)\n", t->total_s,
            t->user_s + t->sys_s, t->user_s, t->sys_s);
}

int cmd_run(int argc, char **argv)
{
    bp_timing_t timing;
    bp_timing_init(&timing);
    bp_run_opts_t o;
    int rc = bp_run_opts_parse("run", argc, argv, &o);
    if (rc >= 0)
        return rc;
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    if (o.timing)
        rep.timing = &timing;
    rep.env = bp_envinfo_host();
    bp_probe_t **all = NULL, **sel = NULL;
    size_t nall = 0, nsel = 0;
    backends_t bs = {0};
    bp_error_t err = {0};
    rc = BP_EXIT_OK;
    double t0 = bp_timing_now();
    if (bp_probe_load_dir(bp_cli_probes_dir(o.probes_dir), &all, &nall, &err))
        rc = bp_cli_fail(&err);
    timing.load_s = bp_timing_now() - t0;
    if (!rc)
        rc = bp_run_select("run", all, nall, o.names, o.nnames, &sel, &nsel);
    if (!rc)
        rc = bp_run_open_backends("run", &o, bs.be, &bs.n, &rep);
    json_t *files = json_array();
    for (size_t i = 0; i < nsel && !rc; i++) {
        uint32_t mask = sel[i]->dtypes & o.dtypes;
        bp_st_file_t save[BP_RUN_MAX_BACKENDS];
        for (int k = 0; k < bs.n; k++)
            bp_st_init(&save[k]);
        if (!mask)
            bp_report_note(&rep, "%s: not run (its dtypes are not among --dtype)", sel[i]->name);
        for (int d = 0; d < BP_NDTYPES && !rc; d++)
            if (mask & (1u << d))
                rc = run_one(&o, &bs, sel[i], (bp_dtype_t)d, &rep, o.save_dir ? save : NULL);
        for (int k = 0; k < bs.n && o.save_dir && mask && !rc; k++) {
            rc = bp_run_save_probe(&o, sel[i], bs.be[k], &save[k], files);
        }
        for (int k = 0; k < bs.n; k++)
            bp_st_free(&save[k]);
    }
    if (!rc && o.save_dir)
        rc = bp_run_save_manifest(&o, bs.be, bs.n, &rep, files);
    json_decref(files);
    if (!rc) {
        /* The JSON report holds the figures up to here. */
        bp_timing_stop(&timing);
        t0 = bp_timing_now();
        rc = bp_run_report(&o, &bs.be[0], bs.n, &rep);
        timing.report_s = bp_timing_now() - t0;
    }
    bp_run_golden_release();
    for (int k = 0; k < bs.n; k++)
        bp_backend_close(bs.be[k]);
    free(sel);
    bp_probe_free_all(all, nall);
    if (o.timing) {
        bp_timing_stop(&timing);
        print_timing(&timing);
    }
    bp_timing_free(&timing);
    bp_report_free(&rep);
    bp_run_opts_free(&o);
    return rc;
}
