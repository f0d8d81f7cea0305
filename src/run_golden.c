/* Golden comparison for run: each output of each backend against the
 * golden blessed for that backend's key.  A probe's goldens are loaded once
 * per backend and kept until run is done with the probe. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "golden.h"
#include "runopts.h"
#include "timing.h"

/* Loaded goldens, one per (probe, backend slot): a backend's worker loads
 * the golden of the probe it runs while the consumer may still compare an
 * earlier probe, so entries live until the consumer is done with their
 * probe.  The list is shared under the lock; an entry is written only by
 * the one that loads it, before it is listed. */
typedef struct gentry {
    const bp_probe_t *probe;
    int k;
    char key[64];
    bp_st_file_t f;
    bool ok, missing;
    char msg[1024];
    struct gentry *next;
} gentry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gentry_t *cache;

static gentry_t *find(const bp_probe_t *p, int k, const char *key)
{
    pthread_mutex_lock(&lock);
    gentry_t *e = cache;
    while (e && !(e->probe == p && e->k == k && strcmp(e->key, key) == 0))
        e = e->next;
    pthread_mutex_unlock(&lock);
    return e;
}

static void drop(const bp_probe_t *p)
{
    pthread_mutex_lock(&lock);
    gentry_t **at = &cache;
    while (*at) {
        gentry_t *e = *at;
        if (!p || e->probe == p) {
            *at = e->next;
            bp_st_free(&e->f);
            free(e);
        } else {
            at = &e->next;
        }
    }
    pthread_mutex_unlock(&lock);
}

void bp_run_golden_done(const bp_probe_t *p)
{
    drop(p);
}

void bp_run_golden_release(void)
{
    drop(NULL);
}

/* Backend slot k's golden of p (blessed for key), loaded (and timed into t)
 * on first use; NULL when out of memory. */
static gentry_t *entry_for(const bp_run_opts_t *o, const bp_probe_t *p, int k,
                           const char *key, bp_timing_t *t, const char *be_name)
{
    gentry_t *e = find(p, k, key);
    if (e)
        return e;
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    bp_error_t err = {0};
    double t0 = bp_timing_now();
    e->probe = p;
    e->k = k;
    snprintf(e->key, sizeof e->key, "%s", key);
    e->ok = bp_golden_load(bp_cli_golden_dir(o->golden_dir), p, key, &e->f, &e->missing,
                           &err) == BP_OK;
    memcpy(e->msg, err.msg, sizeof err.msg);
    if (t) {
        int b = bp_timing_backend(t, be_name);
        if (b >= 0)
            t->be[b].golden_load_s += bp_timing_now() - t0;
    }
    pthread_mutex_lock(&lock);
    e->next = cache;
    cache = e;
    pthread_mutex_unlock(&lock);
    return e;
}

void bp_run_golden_prepare(const bp_run_opts_t *o, const bp_probe_t *p, int k,
                           const char *key, bp_timing_t *t, const char *be_name)
{
    if (o->golden)
        entry_for(o, p, k, key, t, be_name);
}

int bp_run_golden(const bp_run_opts_t *o, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                  bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                  bp_report_t *rep)
{
    if (!o->golden)
        return BP_EXIT_OK;
    const bp_output_t *out = &p->outputs[oi];
    char tname[256], label[96];
    bp_golden_tensor_name(out->name, dt, tname, sizeof tname);
    for (int k = 0; k < n; k++) {
        const gentry_t *s = entry_for(o, p, k, bes[k]->key, rep->timing, bes[k]->name);
        if (!s) {
            fprintf(stderr, "bitprobe: out of memory\n");
            return BP_EXIT_TROUBLE;
        }
        snprintf(label, sizeof label, "golden %s", bes[k]->key);
        bp_result_t r = {
            .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
            .dtype = bufs[k][out->buf].dtype, .kind = BP_RES_GOLDEN, .a = label,
            .b = (char *)bes[k]->name, .policy = out->policy, .counts = true,
        };
        const bp_st_tensor_t *g = s->ok ? bp_st_find(&s->f, tname) : NULL;
        char msg[1200];
        if (!s->ok || !g) {
            if (s->ok)
                snprintf(msg, sizeof msg,
                         "golden of probe '%s' on backend '%s' has no tensor '%s' "
                         "(bless it with 'bitprobe bless %s --device %s')",
                         p->name, bes[k]->key, tname, p->name, bes[k]->name);
            else
                snprintf(msg, sizeof msg, "%s", s->msg);
            bool missing = s->ok || s->missing;
            if (!(missing && o->missing_skip)) {
                fprintf(stderr, "bitprobe: %s\n", msg);
                return BP_EXIT_TROUBLE;
            }
            r.note = msg;
            if (!bp_report_add(rep, &r))
                return BP_EXIT_TROUBLE;
            continue;
        }
        bp_error_t err = {0};
        double t0 = bp_timing_now();
        bp_status st = bp_compare(&g->buf, &bufs[k][out->buf], &out->policy, &o->cmp, &r.cmp,
                                  &err);
        if (rep->timing) {
            int ti = bp_timing_backend(rep->timing, bes[k]->name);
            if (ti >= 0)
                rep->timing->be[ti].golden_cmp_s += bp_timing_now() - t0;
        }
        if (st) {
            bp_error_prefix(&err, "golden '%s' of probe '%s': ", tname, p->name);
            return bp_cli_fail(&err);
        }
        r.compared = true;
        if (!bp_report_add(rep, &r)) {
            bp_cmp_free(&r.cmp);
            return BP_EXIT_TROUBLE;
        }
    }
    return BP_EXIT_OK;
}
