/* The screen's JSON report (screen.h): one object per run, made for a
 * fleet's collector, which concatenates many hosts' reports and groups
 * "faults" rows by GPU uuid, SM and test. */
#include "screen.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bitfmt.h"
#include "config.h"

static const char *verdict(int st)
{
    return st == 0 ? "pass" : st == 1 ? "fail" : "trouble";
}

static json_t *fault_row(const char *host, const bp_screen_gpu_t *g, const bp_screen_fault_t *f)
{
    const bp_screen_test_t *T = &bp_screen_tests[f->test];
    char e[64], gv[64], ed[64], gd[64];
    bool num = T->dt != BP_I32;
    bp_fmt_hex(T->dt, f->expected, e, sizeof e);
    bp_fmt_hex(T->dt, f->got, gv, sizeof gv);
    if (num) {
        bp_fmt_shortest(T->dt, f->expected, ed, sizeof ed);
        bp_fmt_shortest(T->dt, f->got, gd, sizeof gd);
    }
    json_t *sm = f->sm >= 0 ? json_integer(f->sm) : json_null();
    return json_pack("{s:s, s:i, s:s, s:s, s:o, s:s, s:i, s:I, s:s, s:s, s:s, s:o, s:o}",
                     "host", host, "gpu", g->index, "uuid", g->uuid, "pci_bus_id", g->pci,
                     "sm", sm, "test", T->name, "round", f->round, "index",
                     (json_int_t)f->index, "dtype",
                     num ? bp_dtype_name(T->dt) : "u32", "expected", e, "got", gv,
                     "expected_value", num ? json_string(ed) : json_null(),
                     "got_value", num ? json_string(gd) : json_null());
}

static json_t *gpu_obj(const bp_screen_gpu_t *g, const int *tests, int ntests)
{
    json_t *ts = json_array(), *ws = json_array();
    for (int i = 0; i < ntests; i++) {
        const bp_screen_tres_t *tr = &g->t[tests[i]];
        if (!tr->ran)
            continue;
        json_array_append_new(
            ts, json_pack("{s:s, s:s, s:o, s:I, s:I, s:i, s:f}", "test",
                          bp_screen_tests[tests[i]].name, "expected_from", tr->by,
                          "sms_covered", tr->covered >= 0 ? json_integer(tr->covered)
                                                         : json_null(),
                          "checked", (json_int_t)tr->checked, "wrong",
                          (json_int_t)tr->wrong, "wrong_sms", tr->wrong_sms, "seconds",
                          tr->seconds));
    }
    json_t *ids = json_array();
    for (unsigned s = 0; g->present && s < g->nsmid; s++)
        if (g->present[s])
            json_array_append_new(ids, json_integer(s));
    for (unsigned s = 0; g->wrong_by_sm && s < g->nsmid; s++)
        if (g->wrong_by_sm[s])
            json_array_append_new(ws, json_pack("{s:i, s:i}", "sm", (int)s, "wrong",
                                                (int)g->wrong_by_sm[s]));
    int st = bp_screen_status(g, 1);
    return json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:s, s:f, s:o,"
                     " s:o, s:o, s:o}",
                     "index", g->index, "uuid", g->uuid, "pci_bus_id", g->pci, "name",
                     g->name, "cc", g->cc, "driver", g->driver, "cuda_driver",
                     g->cuda_driver, "golden_key", g->key, "sms", g->sms, "sm_ids_seen",
                     g->seen, "sm_ids", ids, "verdict", verdict(st), "seconds", g->seconds,
                     "wrong_by_sm", ws, "tests", ts, "error",
                     g->error[0] ? json_string(g->error) : json_null(), "note",
                     g->note[0] ? json_string(g->note) : json_null());
}

/* The host's name and the time now (UTC, ISO 8601), for a report row. */
static void host_and_time(char host[256], char when[32])
{
    snprintf(host, 256, "unknown");
    when[0] = '\0';
    if (gethostname(host, 255) != 0)
        snprintf(host, 256, "unknown");
    host[255] = '\0';
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *bp_screen_json(const bp_screen_gpu_t *g, int n, const int *tests, int ntests,
                       int depth, double seconds)
{
    char host[256], when[32];
    host_and_time(host, when);
    json_t *gpus = json_array(), *faults = json_array(), *names = json_array();
    for (int i = 0; i < ntests; i++)
        json_array_append_new(names, json_string(bp_screen_tests[tests[i]].name));
    for (int k = 0; k < n; k++) {
        json_array_append_new(gpus, gpu_obj(&g[k], tests, ntests));
        for (int i = 0; i < ntests; i++) {
            const bp_screen_tres_t *tr = &g[k].t[tests[i]];
            for (int f = 0; f < tr->nkept; f++)
                json_array_append_new(faults, fault_row(host, &g[k], &tr->kept[f]));
        }
    }
    int st = bp_screen_status(g, n);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:i, s:o, s:o, s:o}",
                     "tool", "bitprobe", "version", PACKAGE_VERSION, "command", "screen",
                     "host", host, "time", when, "verdict", verdict(st), "exit_status", st,
                     "depth", depth, "seconds", seconds, "faults_kept_per_test",
                     BP_SCREEN_KEEP, "tests", names, "gpus", gpus, "faults", faults);
}

json_t *bp_screen_json_unscreened(const char *why, const int *tests, int ntests, int depth)
{
    char host[256], when[32];
    host_and_time(host, when);
    json_t *names = json_array();
    for (int i = 0; i < ntests; i++)
        json_array_append_new(names, json_string(bp_screen_tests[tests[i]].name));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:i, s:o, s:[], s:[]}",
                     "tool", "bitprobe", "version", PACKAGE_VERSION, "command", "screen",
                     "host", host, "time", when, "verdict", "not screened", "why", why,
                     "exit_status", 2, "depth", depth, "seconds", 0.0,
                     "faults_kept_per_test", BP_SCREEN_KEEP, "tests", names, "gpus", "faults");
}
