/* Option parsing for run and bless, and report dispatch (see runopts.h). */
#include "runopts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "envinfo.h"
#include "fingerprint.h"
#include "golden.h"
#include "rep.h"
#include "timing.h"

enum {
    O_PROBES = 256, O_GOLDEN, O_DEVICE, O_DTYPE, O_CPU_MATH, O_GPU, O_THREADS,
    O_FIRST, O_QUIET, O_AGREE, O_MISSING, O_NO_GOLDEN, O_SAVE, O_NAN_PAYLOAD,
    O_JSON, O_JUNIT, O_MARKDOWN, O_GITHUB, O_REPEAT, O_DRY_RUN, O_INTERMEDIATES,
    O_TIMING
};

static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int parse_dtypes(const char *cmd, const char *arg, uint32_t *mask)
{
    char buf[256], *items[16];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, 16);
    *mask = 0;
    for (int i = 0; i < n; i++) {
        bp_dtype_t dt;
        if (!bp_dtype_parse(items[i], &dt) ||
            (dt != BP_F32 && dt != BP_BF16 && dt != BP_F16))
            return bp_cli_usage_error(cmd, "unknown dtype '%s' (fp32, bf16, fp16)", items[i]);
        *mask |= 1u << dt;
    }
    if (!*mask)
        return bp_cli_usage_error(cmd, "--dtype needs at least one dtype");
    return -1;
}

static bp_rep_targets_t targets(const bp_run_opts_t *o)
{
    return (bp_rep_targets_t){
        .json = o->json, .junit = o->junit, .markdown = o->markdown, .github = o->github,
        .text = {.quiet = bp_cli_quiet, .color = bp_cli_color(), .first = o->cmp.first_k}};
}

int bp_run_opts_parse(const char *cmd, int argc, char **argv, bp_run_opts_t *o)
{
    static const struct option opts[] = {
        {"probes", required_argument, 0, O_PROBES},
        {"golden", required_argument, 0, O_GOLDEN},
        {"device", required_argument, 0, O_DEVICE},
        {"dtype", required_argument, 0, O_DTYPE},
        {"cpu-math", required_argument, 0, O_CPU_MATH},
        {"gpu", required_argument, 0, O_GPU},
        {"threads", required_argument, 0, O_THREADS},
        {"first", required_argument, 0, O_FIRST},
        {"quiet", no_argument, 0, O_QUIET},
        {"agree", no_argument, 0, O_AGREE},
        {"missing", required_argument, 0, O_MISSING},
        {"no-golden", no_argument, 0, O_NO_GOLDEN},
        {"save", required_argument, 0, O_SAVE},
        {"nan-payload", no_argument, 0, O_NAN_PAYLOAD},
        {"json", required_argument, 0, O_JSON},
        {"junit", required_argument, 0, O_JUNIT},
        {"markdown", required_argument, 0, O_MARKDOWN},
        {"github", no_argument, 0, O_GITHUB},
        {"repeat", required_argument, 0, O_REPEAT},
        {"dry-run", no_argument, 0, O_DRY_RUN},
        {"intermediates", no_argument, 0, O_INTERMEDIATES},
        {"timing", no_argument, 0, O_TIMING},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->devices = "auto";
    o->dtypes = (1u << BP_F32) | (1u << BP_BF16) | (1u << BP_F16);
    o->golden = true;
    o->repeat = 1;
    bp_backend_opts_default(&o->be);
    bp_cmp_opts_init(&o->cmp);
    const char *gh = getenv("GITHUB_ACTIONS");
    o->github = gh && strcmp(gh, "true") == 0;
    bool is_bless = strcmp(cmd, "bless") == 0;
    int c;
    long v;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        switch (c) {
        case O_PROBES: o->probes_dir = optarg; break;
        case O_GOLDEN: o->golden_dir = optarg; break;
        case O_DEVICE: o->devices = optarg; break;
        case O_DTYPE: {
            int rc = parse_dtypes(cmd, optarg, &o->dtypes);
            if (rc >= 0)
                return rc;
            break;
        }
        case O_CPU_MATH:
            if (!bp_cpu_math_parse(optarg, &o->be.cpu_math))
                return bp_cli_usage_error(cmd, "unknown --cpu-math '%s' (sleef-u10, sleef-u35, libm)", optarg);
            break;
        case O_GPU:
            /* all, or a list: every GPU named is a backend of its own */
            o->gpus = NULL;
            if (strcmp(optarg, "all") == 0 || strchr(optarg, ','))
                o->gpus = optarg;
            else if (!parse_int(optarg, 0, 1024, &v))
                return bp_cli_usage_error(cmd, "--gpu needs a device index, all or a list "
                                          "(0,2), not '%s'", optarg);
            else
                o->be.gpu = (int)v;
            break;
        case O_THREADS:
            if (!parse_int(optarg, 0, 4096, &v))
                return bp_cli_usage_error(cmd, "--threads needs a count, not '%s'", optarg);
            o->be.threads = (int)v;
            break;
        case O_FIRST:
            if (!parse_int(optarg, 0, 1000000, &v))
                return bp_cli_usage_error(cmd, "--first needs a count, not '%s'", optarg);
            o->cmp.first_k = (size_t)v;
            break;
        case 'q':
        case O_QUIET: bp_cli_quiet = true; break;
        case O_AGREE: o->agree = true; break;
        case O_MISSING:
            if (strcmp(optarg, "skip") == 0)
                o->missing_skip = true;
            else if (strcmp(optarg, "fail") != 0)
                return bp_cli_usage_error(cmd, "--missing takes fail or skip, not '%s'", optarg);
            break;
        case O_NO_GOLDEN: o->golden = false; break;
        case O_SAVE: o->save_dir = optarg; break;
        case O_NAN_PAYLOAD: o->cmp.nan_payload = true; break;
        case O_JSON: o->json = optarg; break;
        case O_JUNIT: o->junit = optarg; break;
        case O_MARKDOWN: o->markdown = optarg; break;
        case O_GITHUB: o->github = true; break;
        case O_REPEAT:
            if (!parse_int(optarg, 1, 1000000, &v))
                return bp_cli_usage_error(cmd, "--repeat needs a count of at least 1, not '%s'", optarg);
            o->repeat = (int)v;
            break;
        case O_INTERMEDIATES: o->intermediates = true; break;
        case O_TIMING:
            if (is_bless)
                return bp_cli_usage_error(cmd, "unknown option '--timing'");
            o->timing = true;
            break;
        case O_DRY_RUN:
            if (!is_bless)
                return bp_cli_usage_error(cmd, "unknown option '--dry-run'");
            o->dry_run = true;
            break;
        default:
            return bp_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    o->nnames = argc - optind;
    o->names = argv + optind;
    bp_rep_targets_t t = targets(o);
    return bp_rep_targets_check(cmd, &t);
}

void bp_run_opts_free(bp_run_opts_t *o)
{
    (void)o;
}

static json_t *backends_json(bp_backend_t *const *bes, int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:O}", "name", bes[k]->name, "key",
                                           bes[k]->key,
                                           "fingerprint", bes[k]->fingerprint
                                               ? bes[k]->fingerprint : json_null()));
    return a;
}

int bp_run_save_probe(const bp_run_opts_t *o, const bp_probe_t *p, const bp_backend_t *be,
                      bp_st_file_t *f, json_t *files)
{
    bp_error_t err = {0};
    char rel[512];
    json_t *fp = json_pack("{s:o, s:O}", "host", bp_envinfo_host(), "backend",
                           be->fingerprint ? be->fingerprint : json_null());
    bp_status st = bp_golden_set_meta(f, p, be->key, fp, &err);
    json_decref(fp);
    /* one GPU of several (cuda:K): "<key>@K", a member of its own for
     * diff --consensus */
    char key[96];
    const char *colon = strchr(be->inst, ':');
    snprintf(key, sizeof key, "%s%s%s", be->key, colon ? "@" : "", colon ? colon + 1 : "");
    if (!st)
        st = bp_bundle_save_probe(o->save_dir, p->name, key, f, &err);
    if (st)
        return bp_cli_fail(&err);
    snprintf(rel, sizeof rel, "%s/%s.safetensors.gz", p->name, key);
    json_array_append_new(files, json_string(rel));
    return BP_EXIT_OK;
}

int bp_run_save_manifest(const bp_run_opts_t *o, bp_backend_t *const *bes, int n,
                         const bp_report_t *rep, json_t *files)
{
    json_t *m = bp_rep_json_build(rep);
    bp_error_t err = {0};
    json_object_set_new(m, "backends", backends_json(bes, n));
    json_object_set(m, "files", files);
    bp_status st = bp_bundle_save_manifest(o->save_dir, m, &err);
    json_decref(m);
    if (st)
        return bp_cli_fail(&err);
    if (!bp_cli_quiet)
        fprintf(stderr, "bitprobe run: saved %zu files and manifest.json in %s\n",
                json_array_size(files), o->save_dir);
    return BP_EXIT_OK;
}

int bp_run_report(const bp_run_opts_t *o, bp_backend_t *const *bes, int n, bp_report_t *rep)
{
    json_t *backs = backends_json(bes, n);
    json_object_set_new(rep->env, "backends", backs);
    bp_rep_targets_t t = targets(o);
    if (bp_rep_emit(&t, rep))
        return BP_EXIT_TROUBLE;
    return bp_report_failures(rep) ? BP_EXIT_DRIFT : BP_EXIT_OK;
}

/* Goldens and saved runs record what each device does (fingerprint.h)
 * next to its environment, under the fingerprint's "behaviour". */
static void add_behaviour(bp_backend_t *be)
{
    json_t *b = NULL;
    bp_error_t err = {0};
    if (!be->fingerprint)
        be->fingerprint = json_object();
    if (bp_fingerprint_probe(be, &b, &err))
        b = json_pack("{s:s}", "error", err.msg);
    json_object_set_new(be->fingerprint, "behaviour", b);
}

/* BP_NO_MEMO=1 (any value but empty or 0) turns the memo off. */
static bool memo_wanted(void)
{
    const char *e = getenv("BP_NO_MEMO");
    return !e || !*e || strcmp(e, "0") == 0;
}

bp_status bp_run_open_one(const char *cmd, const bp_run_opts_t *o, const char *name,
                          bp_timing_t *t, bp_backend_t **out, bp_error_t *err)
{
    double t0 = bp_timing_now();
    bp_status st = bp_backend_open(name, &o->be, out, err);
    int ti = t ? bp_timing_backend(t, name) : -1;
    if (ti >= 0) {
        t->be[ti].open_s = bp_timing_now() - t0;
        t->be[ti].opened = st == BP_OK;
        t->be[ti].ctx_s = st == BP_OK ? (*out)->ctx_start_s : 0;
    }
    if (st == BP_OK && memo_wanted() && (st = bp_backend_memo(*out, true, err)) != BP_OK) {
        bp_backend_close(*out);
        *out = NULL;
    }
    if (st == BP_OK && (o->save_dir || strcmp(cmd, "bless") == 0))
        add_behaviour(*out);
    return st;
}

/* --gpu all or a list: "cuda" in the --device list becomes cuda:K for
 * each GPU named, and auto the CPU, the oracle and those.  Returns -1 to
 * go on or an exit status. */
static int expand_gpus(const char *cmd, const bp_run_opts_t *o, char *list, size_t n)
{
    int idx[BP_RUN_MAX_BACKENDS], ng;
    bp_error_t err = {0};
    char in[512], *items[BP_RUN_MAX_BACKENDS], gpus[256] = "";
    snprintf(in, sizeof in, "%s", list);
    int ni = bp_cli_split(in, items, BP_RUN_MAX_BACKENDS);
    bool used = false;
    for (int i = 0; i < ni; i++)
        used |= strcmp(items[i], "cuda") == 0 || strcmp(items[i], "auto") == 0;
    if (!used)
        return bp_cli_usage_error(cmd, "--gpu %s: --device names no cuda (or auto)", o->gpus);
    if (bp_backend_gpu_list(o->gpus, idx, BP_RUN_MAX_BACKENDS - 2, &ng, &err))
        return bp_cli_fail(&err);
    size_t gl = 0, len = 0;
    for (int k = 0; k < ng; k++)
        gl += (size_t)snprintf(gpus + gl, sizeof gpus - gl, "%scuda:%d", k ? "," : "", idx[k]);
    list[0] = '\0';
    for (int i = 0; i < ni; i++) {
        const char *item = items[i];
        if (strcmp(item, "cuda") == 0 || strcmp(item, "auto") == 0) {
            len += (size_t)snprintf(list + len, n > len ? n - len : 0, "%s%s%s",
                                    len ? "," : "", strcmp(item, "auto") == 0 ? "cpu,oracle,"
                                                                             : "", gpus);
        } else {
            len += (size_t)snprintf(list + len, n > len ? n - len : 0, "%s%s", len ? "," : "",
                                    item);
        }
    }
    return -1;
}

/* --device's items in order, without duplicates (auto included); returns
 * -1 to go on or the exit status of a usage error. */
static int device_items(const char *cmd, const bp_run_opts_t *o,
                        char names[][BP_RUN_NAME_MAX], int *n)
{
    char list[512], *items[BP_RUN_MAX_BACKENDS];
    snprintf(list, sizeof list, "%s", o->devices);
    if (o->gpus) {
        int rc = expand_gpus(cmd, o, list, sizeof list);
        if (rc >= 0)
            return rc;
    }
    int ni = bp_cli_split(list, items, BP_RUN_MAX_BACKENDS);
    *n = 0;
    if (ni == 0)
        return bp_cli_usage_error(cmd, "--device needs at least one backend");
    for (int i = 0; i < ni; i++) {
        bool dup = false;
        for (int k = 0; k < *n; k++)
            dup |= strcmp(names[k], items[i]) == 0;
        if (!dup)
            snprintf(names[(*n)++], BP_RUN_NAME_MAX, "%s", items[i]);
    }
    return -1;
}

int bp_run_backend_names(const char *cmd, const bp_run_opts_t *o,
                         char names[][BP_RUN_NAME_MAX], int *n)
{
    int rc = device_items(cmd, o, names, n);
    for (int k = 0; k < *n && rc < 0; k++)
        if (strcmp(names[k], "auto") == 0)
            rc = 0;
    return rc;
}

int bp_run_open_backends(const char *cmd, const bp_run_opts_t *o, bp_backend_t **bes,
                         int *n, bp_report_t *rep)
{
    char items[BP_RUN_MAX_BACKENDS][BP_RUN_NAME_MAX];
    int ni;
    int rc = device_items(cmd, o, items, &ni);
    *n = 0;
    if (rc >= 0)
        return rc;
    for (int i = 0; i < ni; i++) {
        bool is_auto = strcmp(items[i], "auto") == 0;
        const char *single[] = {items[i], NULL};
        /* auto tries every backend bitprobe knows, so that a build
         * without CUDA says so as a machine without a GPU does. */
        static const char *const all[] = {"cpu", "oracle", "cuda", NULL};
        const char *const *want = is_auto ? all : single;
        for (; *want; want++) {
            bool dup = false;
            for (int k = 0; k < *n; k++)
                dup |= strcmp(bes[k]->name, *want) == 0;
            if (dup)
                continue;
            bp_error_t err = {0};
            bp_status st = *n == BP_RUN_MAX_BACKENDS
                               ? bp_error_set(&err, BP_EINPUT, "too many backends")
                               : bp_run_open_one(cmd, o, *want, rep ? rep->timing : NULL,
                                                 &bes[*n], &err);
            if (st == BP_OK) {
                (*n)++;
            } else if (is_auto && st == BP_EUNAVAIL) {
                if (rep)
                    bp_report_note(rep, "%s skipped: %s", *want, err.msg);
                if (!bp_cli_quiet)
                    fprintf(stderr, "bitprobe %s: %s skipped: %s\n", cmd, *want, err.msg);
            } else {
                for (int k = 0; k < *n; k++)
                    bp_backend_close(bes[k]);
                *n = 0;
                return bp_cli_fail(&err);
            }
        }
    }
    if (!*n) {
        fprintf(stderr, "bitprobe %s: no backend available\n", cmd);
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

int bp_run_select(const char *cmd, bp_probe_t **all, size_t nall, char **names,
                  int nnames, bp_probe_t ***sel, size_t *nsel)
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
            fprintf(stderr, "bitprobe %s: unknown probe '%s' (see 'bitprobe list')\n",
                    cmd, names[i]);
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
