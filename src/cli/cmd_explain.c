/* bitprobe explain PROBE --a B1 --b B2: which op introduced each difference
 * between two backends or saved runs, and which side the oracle says is
 * right.  Exit 0 when the outputs agree end to end, 1 when some differ,
 * 2 on trouble. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "cli.h"
#include "envinfo.h"
#include "esc.h"
#include "explain.h"
#include "opt.h"
#include "rep.h"
#include "rep_explain.h"
#include "cmd_ledger.h"
#include "rep_ledger.h"

const char cmd_explain_usage[] =
    "bitprobe explain PROBE --a B1 --b B2 [--dtype D] [--probes DIR] [--json FILE] [--first K]";

typedef struct {
    const char *arg, *key, *opt;
    char label[80];
    bp_backend_t *be;
    bp_buf_t *bufs;
} side_t;

static bool is_backend_name(const char *s)
{
    for (const char *const *n = bp_backend_names(); *n; n++)
        if (strcmp(*n, s) == 0)
            return true;
    return false;
}

/* Opens a backend, or loads a saved run's buffers of p in dt. */
static int side_open(side_t *s, const bp_probe_t *p, bp_dtype_t dt,
                     const bp_backend_opts_t *bo)
{
    bp_error_t err = {0};
    if (is_backend_name(s->arg)) {
        if (s->key)
            return bp_cli_usage_error("explain", "%s-key applies to a saved run, and '%s' is "
                                      "a backend", s->opt, s->arg);
        bp_status st = bp_backend_open(s->arg, bo, &s->be, &err);
        if (st == BP_EUNAVAIL) {
            fprintf(stderr, "bitprobe explain: %s %s: %s; name a backend this machine has "
                            "(%s cpu or %s oracle), or a saved run of it (run --device %s "
                            "--save DIR --intermediates where it runs)\n", s->opt, s->arg,
                    err.msg, s->opt, s->opt, s->arg);
            return BP_EXIT_TROUBLE;
        }
        if (st)
            return bp_cli_fail(&err);
        snprintf(s->label, sizeof s->label, "%s", s->arg);
        return BP_EXIT_OK;
    }
    struct stat sb;
    int e = stat(s->arg, &sb) != 0 ? errno : 0;
    if (e || !S_ISDIR(sb.st_mode)) {
        bp_esc_printf(stderr,
                      "bitprobe explain: %s '%s' is neither a backend (cpu, oracle, cuda) "
                      "nor a saved run directory%s%s\n",
                      s->opt, s->arg, e ? ": " : "", e ? strerror(e) : "");
        return BP_EXIT_TROUBLE;
    }
    char key[64];
    s->bufs = calloc(p->nops ? p->nops : 1, sizeof *s->bufs);
    if (!s->bufs)
        return BP_EXIT_TROUBLE;
    if (bp_explain_load_bundle(s->arg, p, dt, s->key, s->bufs, key, &err)) {
        bool several = strstr(err.msg, "name one") != NULL;
        bp_esc_printf(stderr, "bitprobe: %s%s%s\n", err.msg, several ? " with " : "",
                      several ? (s->opt[2] == 'a' ? "--a-key KEY" : "--b-key KEY") : "");
        return BP_EXIT_TROUBLE;
    }
    snprintf(s->label, sizeof s->label, "%s", key);
    return BP_EXIT_OK;
}

static void side_close(side_t *s, size_t nops)
{
    bp_backend_close(s->be);
    bp_backend_bufs_free(s->bufs, s->bufs ? nops : 0);
    free(s->bufs);
}

/* The probe's dtype: --dtype, else fp32 where it runs in fp32, else its
 * first. */
static int pick_dtype(const bp_probe_t *p, const char *arg, bp_dtype_t *dt)
{
    if (arg) {
        if (!bp_dtype_parse(arg, dt) || !(p->dtypes & (1u << *dt)))
            return bp_cli_usage_error("explain", "probe '%s' does not run in '%s'", p->name,
                                      arg);
        return BP_EXIT_OK;
    }
    for (int d = BP_F32; d < BP_NDTYPES; d++)
        if (p->dtypes & (1u << d)) {
            *dt = (bp_dtype_t)d;
            return BP_EXIT_OK;
        }
    return bp_cli_usage_error("explain", "probe '%s' has no dtype", p->name);
}

static bp_probe_t *find_probe(bp_probe_t **all, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

static json_t *backends_json(const side_t *a, const side_t *b, bp_backend_t *oracle)
{
    json_t *arr = json_array();
    const bp_backend_t *bes[3] = {a->be, b->be, oracle};
    for (int k = 0; k < 3; k++) {
        if (!bes[k] || (k == 2 && (oracle == a->be || oracle == b->be)))
            continue;
        json_array_append_new(arr, json_pack("{s:s, s:s, s:O}", "name", bes[k]->name, "key",
                                             bes[k]->key, "fingerprint",
                                             bes[k]->fingerprint ? bes[k]->fingerprint
                                                                 : json_null()));
    }
    return arr;
}

/* Fills the report: the output comparisons and the explain section. */
static int report(bp_explain_t *x, const side_t *a, const side_t *b, bp_backend_t *oracle,
                  bp_report_t *rep)
{
    const bp_probe_t *p = x->p;
    json_object_set_new(rep->env, "backends", backends_json(a, b, oracle));
    for (size_t oi = 0; oi < p->noutputs; oi++) {
        const bp_output_t *out = &p->outputs[oi];
        bp_result_t r = {
            .probe = p->name, .file = p->path, .line = out->line, .output = out->name,
            .dtype = x->metas[out->buf].dtype, .in_run = true, .run_dtype = x->dtype,
            .kind = BP_RES_CROSS, .a = x->label_a,
            .b = x->label_b, .policy = out->policy, .compared = true, .counts = false,
            .cmp = x->outs[oi].cmp,
        };
        if (!bp_report_add(rep, &r))
            return BP_EXIT_TROUBLE;
        memset(&x->outs[oi].cmp, 0, sizeof x->outs[oi].cmp);
    }
    rep->explain = bp_explain_json(x);
    return rep->explain ? BP_EXIT_OK : BP_EXIT_TROUBLE;
}

static int explain(const bp_probe_t *p, bp_dtype_t dt, side_t *a, side_t *b,
                   const bp_backend_opts_t *bo, const bp_explain_opts_t *eopts,
                   const char *json, bp_report_t *rep)
{
    bp_error_t err = {0};
    bp_backend_t *oracle = NULL, *own = NULL;
    int rc = side_open(a, p, dt, bo);
    if (!rc)
        rc = side_open(b, p, dt, bo);
    if (rc)
        return rc;
    if (strcmp(a->label, b->label) == 0) { /* cpu vs cpu, two runs of one key */
        char l[sizeof a->label];
        snprintf(l, sizeof l, "%s", a->label);
        snprintf(a->label, sizeof a->label, "a:%.64s", l);
        snprintf(b->label, sizeof b->label, "b:%.64s", l);
    }
    if (b->be && strcmp(b->be->name, "oracle") == 0)
        oracle = b->be;
    else if (a->be && strcmp(a->be->name, "oracle") == 0)
        oracle = a->be;
    else if (bp_backend_open("oracle", bo, &own, &err) == BP_OK)
        oracle = own;
    else
        bp_report_note(rep, "no oracle: %s", err.msg);
    bp_explain_side_t sa = {.label = a->label, .source = a->be ? NULL : a->arg, .be = a->be,
                            .bufs = a->be ? NULL : a->bufs};
    bp_explain_side_t sb = {.label = b->label, .source = b->be ? NULL : b->arg, .be = b->be,
                            .bufs = b->be ? NULL : b->bufs};
    bp_explain_opts_t eo = *eopts;
    eo.oracle = oracle;
    bp_explain_t x;
    bp_cli_progress("explaining %s (%s): %s vs %s\n", p->name, bp_dtype_name(dt), a->label,
                    b->label);
    if (bp_explain_run(p, dt, &sa, &sb, &eo, &x, &err)) {
        bp_backend_close(own);
        return bp_cli_fail(&err);
    }
    size_t differ = 0;
    for (size_t oi = 0; oi < p->noutputs; oi++)
        differ += x.outs[oi].e2e;
    bool json_stdout = json && strcmp(json, "-") == 0;
    if (!json_stdout)
        rc = bp_rep_explain_text(stdout, &x);
    if (!rc && json) {
        rc = report(&x, a, b, oracle, rep);
        if (!rc)
            rc = bp_rep_write(json, bp_rep_json, rep);
    }
    bp_explain_free(&x);
    bp_backend_close(own);
    return rc ? rc : differ ? BP_EXIT_DRIFT : BP_EXIT_OK;
}

/* --dtype: one of the run dtypes, checked here; the probe's own dtypes
 * when the probe is loaded (pick_dtype). */
static int explain_dtype(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    bp_dtype_t dt;
    int rc = bp_opt_dtype(cmd, e->name, arg, &dt);
    if (!rc)
        *(const char **)e->target = arg;
    return rc;
}

static int explain_zero_sign(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    int rc = bp_cli_zero_sign(cmd, arg, e->target);
    return rc >= 0 ? rc : 0;
}

int cmd_explain(int argc, char **argv)
{
    side_t a = {.opt = "--a"}, b = {.opt = "--b"};
    const char *dtype = NULL, *probes = NULL, *json = NULL, *op = NULL, *out = ".";
    const char *device = "auto";
    bp_explain_opts_t eo = {.first_k = 10};
    bp_backend_opts_t bo;
    bp_backend_opts_default(&bo);
    const bp_opt_t opts[] = {
        BP_OPT_STRING_("a", 0, &a.arg,
           "  --a B1, --b B2    backends (cpu, oracle, cuda) or saved runs (run --save DIR\n"
           "                    --intermediates); each op runs alone on B2 with B1's buffers\n"
           "                    as inputs (first-divergence attribution when B2 is a saved run)\n"),
        BP_OPT_STRING_("b", 0, &b.arg, NULL),
        BP_OPT_STRING_("a-key", 0, &a.key,
           "  --a-key KEY       the backend key to read from saved run B1 (default: its only one)\n"),
        BP_OPT_STRING_("b-key", 0, &b.key,
           "  --b-key KEY       the same for B2\n"),
        {"dtype", 0, BP_OPT_CALL, &dtype, 0, 0, explain_dtype, 0, true,
           "  --dtype D         fp32, bf16 or fp16 (default: fp32 where the probe runs in it)\n"},
        BP_OPT_STRING_("probes", 0, &probes,
           "  --probes DIR      read probes from DIR (default: ./probes, then the installed set)\n"),
        BP_OPT_SIZE_("first", &eo.first_k, 1000000,
           "  --first K         differing elements detailed per output (default 10)\n"),
        BP_OPT_PATH_("json", 0, &json,
           "  --json FILE       the report with its \"explain\" section as JSON ('-': stdout)\n"),
        BP_OPT_BACKEND_(&bo),
        BP_OPT_FLAG_("nan-payload", 0, &eo.nan_payload,
           "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"),
        {"zero-sign", 0, BP_OPT_CALL, &eo.zero_sign_ignore, 0, 0, explain_zero_sign, 0, true,
           BP_CLI_ZERO_SIGN_USAGE},
        BP_OPT_QUIET_(
           "  -q, --quiet       no progress lines\n"),
        BP_OPT_TEXT_("bitprobe explain A.ledger B.ledger [--op ID] [--out DIR] [--device LIST] [--json FILE]\n"
                     "  two op ledgers (python -m bitprobe_torch record): the op that introduced their\n"
                     "  difference (or --op ID: b23, 23 for B's op 23, a23 for A's), written as a probe\n"
                     "  with its captured inputs (DIR/ledger-ID-OP.yaml and .safetensors; DIR: '.'),\n"
                     "  run on the oracle (which side is correctly rounded) and on --device (default\n"
                     "  auto: which formulation reproduces which side's bits)\n"
                     "  Exit status: 0 the outputs agree end to end, 1 some differ, 2 trouble.\n"),
        BP_OPT_STRING_("op", 0, &op, NULL),
        BP_OPT_STRING_("out", 0, &out, NULL),
        BP_OPT_STRING_("device", 0, &device, NULL),
        BP_OPT_END_};
    int pos, rc;
    if ((rc = bp_opt_parse("explain", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    bp_backend_pin_gpu(&bo); /* explain computes on one GPU at most */
    if (argc - pos == 2) { /* two op ledgers (cmd_explain_ledger.c) */
        bp_cli_devices_t dev = {.list = device, .be = bo};
        return cmd_explain_ledger(argv[pos], argv[pos + 1], op, out, &dev, eo.first_k,
                                  json);
    }
    if (argc - pos != 1)
        return bp_cli_usage_error("explain", "needs one probe, got %d", argc - pos);
    if (!a.arg || !b.arg)
        return bp_cli_usage_error("explain", "needs both --a and --b");
    bp_probe_t **all = NULL;
    size_t nall = 0;
    bp_error_t err = {0};
    if (bp_probe_load_dir(bp_cli_probes_dir(probes), &all, &nall, &err))
        return bp_cli_fail(&err);
    const bp_probe_t *p = find_probe(all, nall, argv[pos]);
    bp_dtype_t dt = BP_F32;
    rc = BP_EXIT_OK;
    if (!p) {
        bp_esc_printf(stderr, "bitprobe explain: unknown probe '%s' (see 'bitprobe list')\n",
                      argv[pos]);
        rc = BP_EXIT_TROUBLE;
    }
    if (!rc)
        rc = pick_dtype(p, dtype, &dt);
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    rep.env = bp_envinfo_host();
    if (!rc)
        rc = explain(p, dt, &a, &b, &bo, &eo, json, &rep);
    side_close(&a, p ? p->nops : 0);
    side_close(&b, p ? p->nops : 0);
    bp_report_free(&rep);
    bp_probe_free_all(all, nall);
    return rc;
}
