/* bitprobe bless: run probes and replace their goldens atomically, saying
 * per tensor what changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "backend.h"
#include "cli.h"
#include "envinfo.h"
#include "esc.h"
#include "golden.h"
#include "opt.h"
#include "probe.h"
#include "runopts.h"

const char cmd_bless_usage[] =
    "bitprobe bless [PROBE...] [--device LIST] [--dtype LIST] [--probes DIR] [--golden DIR] [--param NAME=VALUE] [--dry-run]";

/* Returns -1 to go on, or the exit status to return at once. */
static int parse(int argc, char **argv, bp_run_opts_t *o)
{
    bp_run_opts_init(o);
    o->dev.behaviour = true;
    const bp_opt_t opts[] = {
        BP_OPT_RUN_(o,
           "  --device LIST     backends whose goldens to write (default: auto)\n",
           "  --require LIST    backends that must be blessed: a missing one is an error\n",
           "  --dtype LIST      re-run only these dtypes; other blessed dtypes are kept\n",
           "  --param NAME=VALUE  bless the probe with its parameter NAME replaced (repeatable):\n"
           "                    its goldens are its own (<key>+NAME=VALUE), never the probe's\n"),
        BP_OPT_FLAG_("dry-run", 0, &o->dry_run,
           "  --dry-run         print what would change, write nothing\n"),
        BP_OPT_BACKEND_(&o->dev.be),
        BP_OPT_QUIET_(
           "  -q, --quiet       no note of the backends auto skipped\n"),
        BP_OPT_TEXT_("  Prints per tensor: new, unchanged, or changed: N of M elements.\n"),
        BP_OPT_END_};
    int pos, rc;
    if ((rc = bp_opt_parse("bless", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    o->nnames = argc - pos;
    o->names = argv + pos;
    return -1;
}

/* "new", "unchanged" or "changed: N of M elements" for one tensor. */
static void describe(const bp_st_file_t *old, const char *name, const bp_buf_t *nb,
                     char *out, size_t n)
{
    const bp_st_tensor_t *o = old ? bp_st_find(old, name) : NULL;
    if (!o) {
        snprintf(out, n, "new");
        return;
    }
    bp_cmp_t c;
    bp_error_t err = {0};
    if (bp_compare(&o->buf, nb, NULL, NULL, &c, &err)) {
        snprintf(out, n, "changed: %s", err.msg);
        return;
    }
    /* bits are bits: NaN payloads count too (the sign of a zero always does) */
    if (c.mismatched == 0 && c.nan_payload_diffs == 0)
        snprintf(out, n, "unchanged");
    else
        snprintf(out, n, "changed: %zu of %zu element%s", c.mismatched + c.nan_payload_diffs,
                 c.total, c.total == 1 ? "" : "s");
    bp_cmp_free(&c);
}

static int bless_one(const bp_run_opts_t *o, bp_backend_t *be, const bp_probe_t *p)
{
    char path[4096], tname[256], what[1200], gk[256];
    bp_error_t err = {0};
    const char *root = bp_cli_golden_dir(o->golden_dir, o->probes_dir, p);
    bp_golden_key(p, be->key, gk, sizeof gk);
    if (bp_golden_path(root, p->name, gk, path, sizeof path, &err))
        return bp_cli_fail(&err);
    bp_lock_t lk;
    if (!o->dry_run && bp_golden_lock(path, &lk, &err))
        return bp_cli_fail(&err);
    bp_st_file_t old, nf;
    bool missing = false, have_old;
    bp_st_init(&nf);
    have_old = bp_golden_read(root, p, be->key, &old, &missing, &err) == BP_OK;
    if (!have_old && !missing)
        bp_esc_printf(stdout, "%s: replacing an unusable golden (%s)\n", path, err.msg);
    int rc = BP_EXIT_OK;
    bool changed = !have_old;
    if (have_old && !bp_golden_same_definition(&old, p)) {
        bp_esc_printf(stdout, "%s: the probe's definition changed (hash %.16s -> %s)\n", path,
               bp_st_get_meta(&old, "probe_hash") ? bp_st_get_meta(&old, "probe_hash") : "none",
               p->hash);
        changed = true;
    }
    for (int d = 0; d < BP_NDTYPES && !rc; d++) {
        if (!(p->dtypes & (1u << d)))
            continue;
        bool run_it = o->dtypes & (1u << d);
        bp_buf_t *bufs = NULL;
        if (run_it) {
            bufs = calloc(p->nops ? p->nops : 1, sizeof *bufs);
            if (!bufs || bp_backend_run(be, p, (bp_dtype_t)d, bufs, &err)) {
                if (!bufs)
                    bp_error_set(&err, BP_ENOMEM, "out of memory");
                rc = bp_cli_fail(&err);
            }
        }
        for (size_t i = 0; i < p->noutputs && !rc; i++) {
            bp_golden_tensor_name(p->outputs[i].name, (bp_dtype_t)d, tname, sizeof tname);
            const bp_buf_t *b;
            if (run_it) {
                b = &bufs[p->outputs[i].buf];
                describe(have_old ? &old : NULL, tname, b, what, sizeof what);
                bp_esc_printf(stdout, "%s %s %s: %s\n", p->name, be->key, tname, what);
                changed |= strcmp(what, "unchanged") != 0;
            } else {
                /* Not re-run: keep the blessed tensor as it is. */
                const bp_st_tensor_t *t = have_old ? bp_st_find(&old, tname) : NULL;
                if (!t)
                    continue;
                b = &t->buf;
            }
            if (bp_st_add(&nf, tname, b, &err))
                rc = bp_cli_fail(&err);
        }
        bp_backend_bufs_free(bufs, bufs ? p->nops : 0);
        free(bufs);
    }
    if (!rc && changed) {
        json_t *fp = json_pack("{s:o, s:O}", "host", bp_envinfo_host(), "backend",
                               be->fingerprint ? be->fingerprint : json_null());
        if (bp_golden_set_meta(&nf, p, be->key, fp, &err))
            rc = bp_cli_fail(&err);
        json_decref(fp);
        if (!rc && o->dry_run)
            bp_esc_printf(stdout, "%s: would be written (--dry-run)\n", path);
        else if (!rc && bp_golden_store(path, &nf, &err))
            rc = bp_cli_fail(&err);
        else if (!rc)
            bp_esc_printf(stdout, "%s: written\n", path);
    } else if (!rc) {
        bp_esc_printf(stdout, "%s: unchanged\n", path);
    }
    if (have_old)
        bp_st_free(&old);
    bp_st_free(&nf);
    if (!o->dry_run)
        bp_atomic_unlock(&lk);
    return rc;
}

int cmd_bless(int argc, char **argv)
{
    bp_run_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    bp_backend_pin_gpu(&o.dev.be);
    bp_error_t err = {0};
    bp_cli_probes_t pr;
    rc = bp_cli_probes_load("bless", o.probes_dir, o.params, o.nparams, o.names, o.nnames, &pr);
    bp_backend_t *bes[BP_CLI_MAX_BACKENDS];
    bp_cli_skip_t skipped[BP_CLI_MAX_BACKENDS];
    bp_probe_t **sel = pr.sel;
    size_t nsel = pr.nsel;
    int nb = 0, nskipped = 0;
    if (!rc && !nsel && !pr.nselbad) {
        bp_error_set(&err, BP_EINPUT, "no probes to bless in %s", bp_cli_probes_dir(o.probes_dir));
        rc = bp_cli_fail(&err);
    }
    /* Where each probe's goldens go may be written at all: said before any
     * backend runs (the golden store refuses it again, whoever asks). */
    for (size_t i = 0; i < nsel && !rc; i++) {
        char path[4096];
        const char *root = bp_cli_golden_dir(o.golden_dir, o.probes_dir, sel[i]);
        if (bp_golden_path(root, sel[i]->name, "x", path, sizeof path, &err) ||
            bp_golden_dest_check(path, &err))
            rc = bp_cli_fail(&err);
    }
    if (!rc && nsel && bp_probe_params_check(sel, nsel, o.params, o.nparams, &err))
        rc = bp_cli_fail(&err);
    if (!rc)
        rc = bp_cli_open_backends("bless", &o.dev, bes, &nb, skipped, &nskipped, NULL);
    for (int k = 0; k < nskipped && !bp_cli_quiet; k++)
        bp_esc_printf(stderr, "bitprobe bless: %s skipped: %s\n", skipped[k].name,
                      skipped[k].why);
    for (size_t i = 0; i < nsel && !rc; i++)
        for (int k = 0; k < nb && !rc; k++)
            rc = bless_one(&o, bes[k], sel[i]);
    for (int k = 0; k < nb; k++)
        bp_backend_close(bes[k]);
    /* Probe files that did not load: the others were blessed, these not. */
    for (size_t i = 0; i < pr.nselbad; i++) {
        bp_esc_printf(stderr, "bitprobe bless: not blessed: %s\n", pr.bad[pr.selbad[i]].msg);
        if (!rc)
            rc = BP_EXIT_TROUBLE;
    }
    bp_cli_probes_free(&pr);
    return rc;
}
