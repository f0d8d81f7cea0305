/* Golden comparison for run: each output of each backend against the
 * golden blessed for that backend's key.  A probe's goldens are loaded once
 * per backend and kept while its dtypes and outputs are compared. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "golden.h"
#include "runopts.h"
#include "timing.h"

#define MAX_CACHE 8

static struct {
    const bp_probe_t *probe;
    char key[64];
    bp_st_file_t f;
    bool ok, missing;
    char msg[1024];
} cache[MAX_CACHE];

void bp_run_golden_release(void)
{
    for (int i = 0; i < MAX_CACHE; i++) {
        if (cache[i].probe)
            bp_st_free(&cache[i].f);
        cache[i].probe = NULL;
    }
}

/* Slot k holds backend k's golden of the probe being run, loaded (and
 * timed into t) on first use; one slot per backend, so that backends
 * running in parallel never share one. */
static int slot_for(const bp_run_opts_t *o, const bp_probe_t *p, int k, const char *key,
                    bp_timing_t *t, const char *be_name)
{
    if (k < 0 || k >= MAX_CACHE)
        return -1;
    if (cache[k].probe == p && strcmp(cache[k].key, key) == 0)
        return k;
    if (cache[k].probe)
        bp_st_free(&cache[k].f);
    bp_error_t err = {0};
    double t0 = bp_timing_now();
    cache[k].probe = p;
    snprintf(cache[k].key, sizeof cache[k].key, "%s", key);
    cache[k].ok = bp_golden_load(bp_cli_golden_dir(o->golden_dir), p, key, &cache[k].f,
                                 &cache[k].missing, &err) == BP_OK;
    memcpy(cache[k].msg, err.msg, sizeof err.msg);
    if (t) {
        int b = bp_timing_backend(t, be_name);
        if (b >= 0)
            t->be[b].golden_load_s += bp_timing_now() - t0;
    }
    return k;
}

void bp_run_golden_prepare(const bp_run_opts_t *o, const bp_probe_t *p, int k,
                           const char *key, bp_timing_t *t, const char *be_name)
{
    if (o->golden)
        slot_for(o, p, k, key, t, be_name);
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
        int s = slot_for(o, p, k, bes[k]->key, rep->timing, bes[k]->name);
        if (s < 0)
            return BP_EXIT_TROUBLE;
        snprintf(label, sizeof label, "golden %s", bes[k]->key);
        bp_result_t r = {
            .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
            .dtype = bufs[k][out->buf].dtype, .kind = BP_RES_GOLDEN, .a = label,
            .b = (char *)bes[k]->name, .policy = out->policy, .counts = true,
        };
        const bp_st_tensor_t *g = cache[s].ok ? bp_st_find(&cache[s].f, tname) : NULL;
        char msg[1200];
        if (!cache[s].ok || !g) {
            if (cache[s].ok)
                snprintf(msg, sizeof msg,
                         "golden of probe '%s' on backend '%s' has no tensor '%s' "
                         "(bless it with 'bitprobe bless %s --device %s')",
                         p->name, bes[k]->key, tname, p->name, bes[k]->name);
            else
                snprintf(msg, sizeof msg, "%s", cache[s].msg);
            bool missing = cache[s].ok || cache[s].missing;
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
