/* Run timing (see timing.h). */
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double bp_timing_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bp_timing_cpu(double *user, double *sys)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *user = *sys = 0;
        return;
    }
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

void bp_timing_init(bp_timing_t *t)
{
    memset(t, 0, sizeof *t);
    t->report_s = -1;
    bp_timing_cpu(&t->user0, &t->sys0);
    t->t0 = bp_timing_now();
}

void bp_timing_free(bp_timing_t *t)
{
    for (size_t i = 0; i < t->nruns; i++)
        free(t->runs[i].probe);
    free(t->runs);
    t->runs = NULL;
    t->nruns = t->cap = 0;
}

int bp_timing_backend(bp_timing_t *t, const char *name)
{
    for (int k = 0; k < t->nbe; k++)
        if (strcmp(t->be[k].name, name) == 0)
            return k;
    if (t->nbe == BP_TIMING_MAX_BACKENDS)
        return -1;
    bp_timing_be_t *b = &t->be[t->nbe];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    return t->nbe++;
}

bool bp_timing_run(bp_timing_t *t, const char *probe, bp_dtype_t dt, int be, size_t seq,
                   double s, uint64_t elems, uint64_t reused, uint64_t bytes)
{
    if (be < 0 || be >= t->nbe)
        return false;
    t->be[be].run_s += s;
    t->be[be].elems += elems;
    t->be[be].reused += reused;
    if (t->nruns == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        bp_timing_run_t *r = realloc(t->runs, cap * sizeof *r);
        if (!r)
            return false;
        t->runs = r;
        t->cap = cap;
    }
    char *name = strdup(probe);
    if (!name)
        return false;
    t->runs[t->nruns] = (bp_timing_run_t){name, dt, be, seq, t->nruns, s, elems, reused, bytes};
    t->nruns++;
    return true;
}

static bool runs_before(const bp_timing_run_t *a, const bp_timing_run_t *b)
{
    if (a->seq != b->seq)
        return a->seq < b->seq;
    return a->be != b->be ? a->be < b->be : a->ins < b->ins;
}

void bp_timing_stop(bp_timing_t *t)
{
    /* Insertion sort: a run's few hundred records, mostly in order. */
    for (size_t i = 1; i < t->nruns; i++) {
        bp_timing_run_t r = t->runs[i];
        size_t j = i;
        for (; j > 0 && runs_before(&r, &t->runs[j - 1]); j--)
            t->runs[j] = t->runs[j - 1];
        t->runs[j] = r;
    }
    double u, s;
    bp_timing_cpu(&u, &s);
    t->total_s = bp_timing_now() - t->t0;
    t->user_s = u - t->user0;
    t->sys_s = s - t->sys0;
}

json_t *bp_timing_json(const bp_timing_t *t)
{
    json_t *bes = json_array(), *runs = json_array();
    for (int k = 0; k < t->nbe; k++) {
        const bp_timing_be_t *b = &t->be[k];
        json_t *o = json_pack(
            "{s:s, s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "name", b->name,
            "opened", b->opened, "open", b->open_s, "driver_init", b->init_s,
            "context_start", b->ctx_s,
            "run", b->run_s, "golden_load", b->golden_load_s,
            "golden_compare", b->golden_cmp_s, "elements",
            (json_int_t)b->elems, "reused", (json_int_t)b->reused);
        if (o && b->run_s > 0)
            json_object_set_new(o, "elements_per_second",
                                json_real((double)b->elems / b->run_s));
        json_array_append_new(bes, o);
    }
    for (size_t i = 0; i < t->nruns; i++) {
        const bp_timing_run_t *r = &t->runs[i];
        json_array_append_new(
            runs, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:I}", "probe",
                            r->probe, "dtype", bp_dtype_name(r->dtype),
                            "backend", t->be[r->be].name, "seconds", r->s,
                            "elements", (json_int_t)r->elems, "reused",
                            (json_int_t)r->reused, "bytes",
                            (json_int_t)r->bytes));
    }
    json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:o, s:o}", "total",
                          t->total_s, "user", t->user_s, "sys", t->sys_s,
                          "probes_load", t->load_s, "cross_compare",
                          t->cross_cmp_s, "backends", bes, "runs", runs);
    if (o)
        json_object_set_new(o, "held_peak_bytes", json_integer((json_int_t)t->held_peak));
    if (o && t->report_s >= 0)
        json_object_set_new(o, "report", json_real(t->report_s));
    return o;
}
