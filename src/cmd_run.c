/* bitprobe run: every selected probe on every selected backend and dtype;
 * outputs compared across backends (and with goldens), then reported. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "envinfo.h"
#include "probe.h"
#include "rep.h"
#include "runopts.h"

#define MAX_BACKENDS 8

typedef struct {
    bp_backend_t *be[MAX_BACKENDS];
    int n;
} backends_t;

static void close_backends(backends_t *bs)
{
    for (int i = 0; i < bs->n; i++)
        bp_backend_close(bs->be[i]);
    bs->n = 0;
}

/* --device LIST: explicit names must be available; auto adds every backend
 * that opens here and notes the ones that do not. */
static int open_backends(const bp_run_opts_t *o, backends_t *bs, bp_report_t *rep)
{
    char list[256], *items[MAX_BACKENDS];
    snprintf(list, sizeof list, "%s", o->devices);
    int n = bp_cli_split(list, items, MAX_BACKENDS);
    if (n == 0)
        return bp_cli_usage_error("run", "--device needs at least one backend");
    for (int i = 0; i < n; i++) {
        bool is_auto = strcmp(items[i], "auto") == 0;
        const char *const *names = bp_backend_names();
        const char *single[] = {items[i], NULL};
        const char *const *want = is_auto ? names : single;
        for (; *want; want++) {
            bool dup = false;
            for (int k = 0; k < bs->n; k++)
                dup |= strcmp(bs->be[k]->name, *want) == 0;
            if (dup)
                continue;
            if (bs->n == MAX_BACKENDS)
                return bp_cli_usage_error("run", "too many backends");
            bp_error_t err = {0};
            bp_status st = bp_backend_open(*want, &o->be, &bs->be[bs->n], &err);
            if (st == BP_OK) {
                bs->n++;
            } else if (is_auto && st == BP_EUNAVAIL) {
                bp_report_note(rep, "%s skipped: %s", *want, err.msg);
                if (!bp_cli_quiet)
                    fprintf(stderr, "bitprobe run: %s skipped: %s\n", *want, err.msg);
            } else {
                close_backends(bs);
                return bp_cli_fail(&err);
            }
        }
    }
    if (!bs->n) {
        fprintf(stderr, "bitprobe run: no backend available\n");
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

static int select_probes(bp_probe_t **all, size_t nall, char **names, int nnames,
                         bp_probe_t ***sel, size_t *nsel)
{
    *sel = calloc(nall ? nall : 1, sizeof **sel);
    *nsel = 0;
    if (!*sel)
        return BP_EXIT_TROUBLE;
    if (nnames == 0) {
        memcpy(*sel, all, nall * sizeof *all);
        *nsel = nall;
        return BP_EXIT_OK;
    }
    for (int i = 0; i < nnames; i++) {
        size_t k = 0;
        while (k < nall && strcmp(all[k]->name, names[i]) != 0)
            k++;
        if (k == nall) {
            fprintf(stderr, "bitprobe run: unknown probe '%s' (see 'bitprobe list')\n",
                    names[i]);
            return BP_EXIT_TROUBLE;
        }
        bool dup = false;
        for (size_t j = 0; j < *nsel; j++)
            dup |= (*sel)[j] == all[k];
        if (!dup)
            (*sel)[(*nsel)++] = all[k];
    }
    return BP_EXIT_OK;
}

/* One probe in one dtype on every backend; compare and report. */
static int run_one(const bp_run_opts_t *o, backends_t *bs, const bp_probe_t *p,
                   bp_dtype_t dt, bp_report_t *rep)
{
    bp_buf_t *bufs[MAX_BACKENDS] = {0};
    bp_error_t err = {0};
    int rc = BP_EXIT_OK;
    for (int k = 0; k < bs->n && !rc; k++) {
        bp_cli_progress("running %s (%s) on %s\n", p->name, bp_dtype_name(dt), bs->be[k]->name);
        bufs[k] = calloc(p->nops ? p->nops : 1, sizeof *bufs[k]);
        if (!bufs[k]) {
            bp_error_set(&err, BP_ENOMEM, "out of memory");
            rc = bp_cli_fail(&err);
        } else if (bp_backend_run(bs->be[k], p, dt, bufs[k], &err)) {
            rc = bp_cli_fail(&err);
        }
    }
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
            if (bp_compare(&bufs[0][out->buf], &bufs[k][out->buf], &out->policy, &o->cmp,
                           &r.cmp, &err)) {
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

int cmd_run(int argc, char **argv)
{
    bp_run_opts_t o;
    int rc = bp_run_opts_parse("run", argc, argv, &o);
    if (rc >= 0)
        return rc;
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    rep.env = bp_envinfo_host();
    bp_probe_t **all = NULL, **sel = NULL;
    size_t nall = 0, nsel = 0;
    backends_t bs = {0};
    bp_error_t err = {0};
    rc = BP_EXIT_OK;
    if (bp_probe_load_dir(bp_cli_probes_dir(o.probes_dir), &all, &nall, &err))
        rc = bp_cli_fail(&err);
    if (!rc)
        rc = select_probes(all, nall, o.names, o.nnames, &sel, &nsel);
    if (!rc)
        rc = open_backends(&o, &bs, &rep);
    for (size_t i = 0; i < nsel && !rc; i++) {
        uint32_t mask = sel[i]->dtypes & o.dtypes;
        if (!mask)
            bp_report_note(&rep, "%s: not run (its dtypes are not among --dtype)", sel[i]->name);
        for (int d = 0; d < BP_NDTYPES && !rc; d++)
            if (mask & (1u << d))
                rc = run_one(&o, &bs, sel[i], (bp_dtype_t)d, &rep);
    }
    if (!rc)
        rc = bp_run_report(&o, &bs.be[0], bs.n, &rep);
    close_backends(&bs);
    free(sel);
    bp_probe_free_all(all, nall);
    bp_report_free(&rep);
    bp_run_opts_free(&o);
    return rc;
}
