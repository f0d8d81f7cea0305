/* Golden comparison for run: each output of each backend against the
 * golden blessed for that backend's key (see cmd_run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "diff_fp.h"
#include "golden.h"
#include "timing.h"

/* A probe's golden on one backend to bless (missing: the file, or the
 * tensors of dtypes in the mask) or re-bless (unusable). */
typedef struct bp_run_gneed {
    const bp_probe_t *probe;
    char device[BP_CLI_NAME_MAX];
    bool file_missing, unusable;
    uint32_t dtypes;
} gneed_t;

typedef struct bp_run_gentry {
    const bp_probe_t *probe;
    int k;
    char key[64];
    bp_st_file_t f;
    bool ok, missing;
    bool noted;       /* its origin said in the report (golden_origin) */
    char msg[1024];
    struct bp_run_gentry *next;
} gentry_t;

void bp_run_goldens_init(bp_run_goldens_t *g)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
}

static gentry_t *find(bp_run_goldens_t *g, const bp_probe_t *p, int k, const char *key)
{
    pthread_mutex_lock(&g->lock);
    gentry_t *e = g->list;
    while (e && !(e->probe == p && e->k == k && strcmp(e->key, key) == 0))
        e = e->next;
    pthread_mutex_unlock(&g->lock);
    return e;
}

void bp_run_goldens_done(bp_run_goldens_t *g, const bp_probe_t *p)
{
    pthread_mutex_lock(&g->lock);
    gentry_t **at = &g->list;
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
    pthread_mutex_unlock(&g->lock);
}

void bp_run_goldens_free(bp_run_goldens_t *g)
{
    bp_run_goldens_done(g, NULL);
    free(g->need);
    pthread_mutex_destroy(&g->lock);
}

/* Backend slot k's golden of p (blessed for key), loaded (and timed into t)
 * on first use; NULL when out of memory. */
static gentry_t *entry_for(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                           int k, const char *key, bp_timing_t *t, const char *be_name)
{
    gentry_t *e = find(g, p, k, key);
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
    e->ok = bp_golden_load(bp_cli_golden_dir(o->golden_dir, o->probes_dir, p), p, key, &e->f,
                           &e->missing, &err) == BP_OK;
    memcpy(e->msg, err.msg, sizeof err.msg);
    if (t) {
        int b = bp_timing_backend(t, be_name);
        if (b >= 0)
            t->be[b].golden_load_s += bp_timing_now() - t0;
    }
    pthread_mutex_lock(&g->lock);
    e->next = g->list;
    g->list = e;
    pthread_mutex_unlock(&g->lock);
    return e;
}

void bp_run_goldens_prepare(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                            int k, const char *key, bp_timing_t *t, const char *be_name)
{
    if (o->golden)
        entry_for(g, o, p, k, key, t, be_name);
}

/* Notes that p's golden on device needs blessing (of dtype dt only when
 * the file is there). */
static bool need(bp_run_goldens_t *g, const bp_probe_t *p, const char *device, bool missing,
                 bool file_missing, bp_dtype_t dt)
{
    bool ok = true;
    pthread_mutex_lock(&g->lock);
    gneed_t *e = NULL;
    for (size_t i = 0; i < g->nneed && !e; i++)
        if (g->need[i].probe == p && strcmp(g->need[i].device, device) == 0)
            e = &g->need[i];
    if (!e && g->nneed == g->capneed) {
        size_t nc = g->capneed ? 2 * g->capneed : 16;
        gneed_t *nn = realloc(g->need, nc * sizeof *nn);
        ok = nn != NULL;
        if (ok) {
            g->need = nn;
            g->capneed = nc;
        }
    }
    if (ok && !e) {
        e = &g->need[g->nneed++];
        memset(e, 0, sizeof *e);
        e->probe = p;
        snprintf(e->device, sizeof e->device, "%s", device);
    }
    if (e) {
        e->unusable |= !missing;
        e->file_missing |= file_missing;
        e->dtypes |= 1u << dt;
    }
    pthread_mutex_unlock(&g->lock);
    return ok;
}

/* A result that was not compared: a missing golden (informational with
 * --missing=skip) or an unusable one; the command that fixes it is the
 * run's hint (bp_run_goldens_hints), said once. */
static int not_compared(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                        bp_dtype_t dt, bp_result_t *r, bool missing, bool file_missing,
                        const char *msg, const char *device, bp_report_t *rep)
{
    r->status = missing ? BP_RS_MISSING_GOLDEN : BP_RS_ERROR;
    r->counts = !(missing && o->missing_skip);
    r->note = (char *)msg;
    if (r->counts && !need(g, p, device, missing, file_missing, dt))
        return BP_EXIT_TROUBLE;
    return bp_report_add(rep, r) ? BP_EXIT_OK : BP_EXIT_TROUBLE;
}

/* A probe's needs over its backends: "cpu,oracle", the dtypes to bless
 * (when a file is missing: the run's own --dtype, 0 when it gave none) and
 * whether a golden was unusable. */
static void probe_need(const bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                       char *devs, size_t n, uint32_t *dtypes, bool *unusable)
{
    size_t l = 0;
    bool file = false;
    devs[0] = '\0';
    *dtypes = 0;
    *unusable = false;
    for (size_t i = 0; i < g->nneed; i++) {
        const gneed_t *e = &g->need[i];
        if (e->probe != p)
            continue;
        l += (size_t)snprintf(devs + l, l < n ? n - l : 0, "%s%s", l ? "," : "", e->device);
        file |= e->file_missing || e->unusable;
        *dtypes |= e->dtypes;
        *unusable |= e->unusable;
    }
    if (file) {
        bp_run_opts_t def;
        bp_run_opts_init(&def);
        *dtypes = o->dtypes != def.dtypes ? o->dtypes : 0;
    }
}

bool bp_run_goldens_hints(const bp_run_goldens_t *g, const bp_run_opts_t *o,
                          bp_report_t *rep)
{
    bool ok = true;
    size_t n = g->nneed;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    bool *done = calloc(n ? n : 1, sizeof *done);
    if (!names || !done)
        ok = false;
    /* probes whose needs are alike share one command */
    for (size_t i = 0; ok && i < n; i++) {
        if (done[i])
            continue;
        char devs[512], dj[512], hint[4096], cmd[3600];
        uint32_t dt, dtj;
        bool un, unj;
        probe_need(g, o, g->need[i].probe, devs, sizeof devs, &dt, &un);
        size_t np = 0;
        for (size_t j = i; j < n; j++) {
            if (done[j])
                continue;
            probe_need(g, o, g->need[j].probe, dj, sizeof dj, &dtj, &unj);
            if (g->need[j].probe != g->need[i].probe &&
                (strcmp(dj, devs) != 0 || dtj != dt || unj != un))
                continue;
            for (size_t k = j; k < n; k++) /* every entry of that probe */
                done[k] |= g->need[k].probe == g->need[j].probe;
            /* the probe as the user named it: its file, or its name */
            const bp_probe_t *pj = g->need[j].probe;
            names[np++] = pj->by_path ? pj->path : pj->name;
        }
        bp_run_hint(o, "bless", names, np, devs, dt, cmd, sizeof cmd);
        if (un)
            snprintf(hint, sizeof hint, "re-bless the unusable goldens with '%s'", cmd);
        else
            snprintf(hint, sizeof hint, "bless the missing goldens with '%s', or pass "
                     "--missing=skip", cmd);
        ok = bp_report_hint(rep, hint);
    }
    free(names);
    free(done);
    return ok;
}

/* Where a comparison with golden s differs, where the golden came from:
 * blessed under another backend key than be's, the key it was blessed as
 * goes into the label ("golden cpu-sleef (blessed as cpu-libm)"), and,
 * once per golden, its backend fingerprint beside be's, as diff of two
 * saved runs shows them (diff_fp.h: notes, and the Markdown's table). */
static bool golden_origin(bp_run_goldens_t *g, gentry_t *s, const bp_probe_t *p,
                          const bp_backend_t *be, bp_report_t *rep, char *label, size_t n)
{
    const char *bk = bp_st_get_meta(&s->f, "backend_key");
    bool other = bk && strcmp(bk, be->key) != 0;
    if (other)
        snprintf(label, n, "golden %s (blessed as %s)", be->key, bk);
    pthread_mutex_lock(&g->lock);
    bool first = !s->noted;
    s->noted = true;
    pthread_mutex_unlock(&g->lock);
    if (!first)
        return true;
    const char *fps = bp_st_get_meta(&s->f, "fingerprint");
    json_t *fp = fps ? json_loads(fps, 0, NULL) : NULL;
    /* bless measures the backend's behaviour (a run does so only with
     * --save): what this run did not measure is not a difference */
    json_t *gb = json_object_get(fp, "backend");
    if (json_is_object(gb) && !json_object_get(be->fingerprint, "behaviour"))
        json_object_del(gb, "behaviour");
    char la[512], lb[256];
    snprintf(la, sizeof la, "golden %s/%s%s%s%s", p->name, be->key, other ? " (blessed as " : "",
             other ? bk : "", other ? ")" : "");
    snprintf(lb, sizeof lb, "%s here", be->key);
    bool ok = bp_diff_fp_add(rep, "backend", la, lb, json_object_get(fp, "backend"),
                             be->fingerprint);
    json_decref(fp);
    return ok;
}

int bp_run_goldens_compare(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                           size_t oi, bp_dtype_t dt, bp_backend_t *const *bes,
                           bp_buf_t *const *bufs, int n, bp_report_t *rep)
{
    if (!o->golden)
        return BP_EXIT_OK;
    const bp_output_t *out = &p->outputs[oi];
    char tname[256], label[160], msg[1200];
    bp_golden_tensor_name(out->name, dt, tname, sizeof tname);
    for (int k = 0; k < n; k++) {
        gentry_t *s = entry_for(g, o, p, k, bes[k]->key, rep->timing, bes[k]->name);
        if (!s) {
            fprintf(stderr, "bitprobe: out of memory\n");
            return BP_EXIT_TROUBLE;
        }
        snprintf(label, sizeof label, "golden %s", bes[k]->key);
        bp_result_t r = {
            .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
            .dtype = bufs[k][out->buf].dtype, .in_run = true, .run_dtype = dt,
            .kind = BP_RES_GOLDEN, .a = label,
            .b = (char *)bes[k]->name, .policy = out->policy, .counts = true,
        };
        const bp_st_tensor_t *gt = s->ok ? bp_st_find(&s->f, tname) : NULL;
        int rc;
        if (!s->ok || !gt) {
            if (s->ok)
                snprintf(msg, sizeof msg, "golden of probe '%s' on backend '%s' has no "
                         "tensor '%s'", p->name, bes[k]->key, tname);
            else
                snprintf(msg, sizeof msg, "%s", s->msg);
            rc = not_compared(g, o, p, dt, &r, s->ok || s->missing, !s->ok, msg,
                              bes[k]->name, rep);
            if (rc)
                return rc;
            continue;
        }
        bp_error_t err = {0};
        double t0 = bp_timing_now();
        bp_status st = bp_compare(&gt->buf, &bufs[k][out->buf], &out->policy, &o->cmp, &r.cmp,
                                  &err);
        if (rep->timing) {
            int ti = bp_timing_backend(rep->timing, bes[k]->name);
            if (ti >= 0)
                rep->timing->be[ti].golden_cmp_s += bp_timing_now() - t0;
        }
        if (st == BP_ENOMEM)
            return bp_cli_fail(&err);
        if (st) {
            bp_error_prefix(&err, "golden '%s' of probe '%s': ", tname, p->name);
            rc = not_compared(g, o, p, dt, &r, false, false, err.msg, bes[k]->name, rep);
            if (rc)
                return rc;
            continue;
        }
        r.compared = true;
        if ((r.cmp.mismatched || r.cmp.nan_payload_diffs) &&
            !golden_origin(g, s, p, bes[k], rep, label, sizeof label)) {
            bp_cmp_free(&r.cmp);
            return BP_EXIT_TROUBLE;
        }
        if (!bp_report_add(rep, &r)) {
            bp_cmp_free(&r.cmp);
            return BP_EXIT_TROUBLE;
        }
    }
    return BP_EXIT_OK;
}
