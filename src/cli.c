/* Shared command-line helpers (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fingerprint.h"
#include "timing.h"

bool bp_cli_quiet;

int bp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bitprobe %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const bp_cmd_t *c = bp_cmd_find(cmd);
    if (c) {
        const char *nl = strchr(c->usage, '\n');
        int len = nl ? (int)(nl - c->usage) : (int)strlen(c->usage);
        fprintf(stderr, "\nusage: %.*s\n", len, c->usage);
        fprintf(stderr, "Try 'bitprobe %s --help' for more.\n", cmd);
    } else {
        fputc('\n', stderr);
    }
    return BP_EXIT_TROUBLE;
}

int bp_cli_help(const char *cmd)
{
    const bp_cmd_t *c = bp_cmd_find(cmd);
    if (!c)
        return BP_EXIT_TROUBLE;
    printf("usage: %s\n\n%s.\n", c->usage, c->summary);
    return BP_EXIT_OK;
}

int bp_cli_fail(const bp_error_t *err)
{
    fprintf(stderr, "bitprobe: %s\n", err->msg[0] ? err->msg : "failed");
    return BP_EXIT_TROUBLE;
}

bool bp_cli_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool bp_cli_count(const char *s, long max, size_t *out)
{
    long long v;
    if (!bp_cli_int(s, 0, max, &v))
        return false;
    *out = (size_t)v;
    return true;
}

/* ---- the backend option group ---- */

bool bp_cli_opt_cpu_math(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    snprintf(why, n, "unknown --cpu-math '%s' (sleef-u10, sleef-u35, libm)", arg);
    return bp_cpu_math_parse(arg, &o->cpu_math);
}

bool bp_cli_opt_cpu_isa(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    snprintf(why, n, "unknown --cpu-isa '%s' (avx512, avx2, default, auto)", arg);
    return bp_cpu_isa_parse(arg, &o->cpu_isa);
}

bool bp_cli_opt_gpu(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    long long v;
    snprintf(why, n, "--gpu needs a device index (0 to %d), all or a list (0,2), not '%s'",
             BP_CLI_GPU_MAX, arg);
    o->gpus = NULL;
    if (strcmp(arg, "all") == 0 || strchr(arg, ',')) {
        o->gpus = arg; /* checked against the GPUs when backends open */
        return true;
    }
    if (!bp_cli_int(arg, 0, BP_CLI_GPU_MAX, &v))
        return false;
    o->gpu = (int)v;
    return true;
}

bool bp_cli_opt_threads(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    long long v;
    snprintf(why, n, "--threads needs a count (0 to 4096), not '%s'", arg);
    if (!bp_cli_int(arg, 0, 4096, &v))
        return false;
    o->threads = (int)v;
    return true;
}

int bp_cli_backend_option(const char *cmd, int c, const char *arg, bp_backend_opts_t *o)
{
    char why[512];
    switch (c) {
#define BP_BE_CASE_(id, name, usage, fn)                                                 \
    case BP_BE_O_##id:                                                                   \
        return fn(arg, o, why, sizeof why) ? 0 : bp_cli_usage_error(cmd, "%s", why);
        BP_BACKEND_OPTIONS(BP_BE_CASE_, BP_CLI_NONE_)
#undef BP_BE_CASE_
    default:
        return -1;
    }
}

bool bp_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

void bp_cli_progress(const char *fmt, ...)
{
    if (bp_cli_quiet || !isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

bool bp_cli_color(void)
{
    const char *nc = getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && !(nc && *nc);
}

static const char *data_dir(const char *opt, const char *env, const char *local,
                            const char *installed)
{
    if (opt)
        return opt;
    const char *e = getenv(env);
    if (e && *e)
        return e;
    struct stat st;
    if (stat(local, &st) == 0 && S_ISDIR(st.st_mode))
        return local;
    return installed;
}

const char *bp_cli_probes_dir(const char *opt)
{
    return data_dir(opt, "BITPROBE_PROBES", "probes", BP_DATADIR "/probes");
}

const char *bp_cli_golden_dir(const char *opt)
{
    return data_dir(opt, "BITPROBE_GOLDEN", "golden", BP_DATADIR "/golden");
}

int bp_cli_split(char *s, char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            items[n++] = tok;
    return n;
}

/* ---- backends and probes ---- */

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

bp_status bp_cli_open_one(const bp_cli_devices_t *d, const char *name, bp_timing_t *t,
                          bp_backend_t **out, bp_error_t *err)
{
    double t0 = bp_timing_now();
    bp_status st = bp_backend_open(name, &d->be, out, err);
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
    if (st == BP_OK && d->behaviour)
        add_behaviour(*out);
    return st;
}

/* Items of a comma-separated list in order, without duplicates; -1 to go
 * on or the exit status of a usage error. */
static int list_items(const char *cmd, const char *opt, const char *list,
                      char names[][BP_CLI_NAME_MAX], int *n)
{
    char buf[256], *items[BP_CLI_MAX_BACKENDS];
    snprintf(buf, sizeof buf, "%s", list);
    int ni = bp_cli_split(buf, items, BP_CLI_MAX_BACKENDS);
    *n = 0;
    if (ni == 0)
        return bp_cli_usage_error(cmd, "%s needs at least one backend", opt);
    for (int i = 0; i < ni; i++) {
        bool dup = false;
        for (int k = 0; k < *n; k++)
            dup |= strcmp(names[k], items[i]) == 0;
        if (!dup)
            snprintf(names[(*n)++], BP_CLI_NAME_MAX, "%s", items[i]);
    }
    return -1;
}

/* --gpu all or a list: cuda among the --device names becomes cuda:K for
 * each GPU named, and auto the CPU, the oracle and those; -1 to go on or
 * an exit status. */
static int expand_gpus(const char *cmd, const bp_cli_devices_t *d,
                       char names[][BP_CLI_NAME_MAX], int *n)
{
    if (!d->be.gpus)
        return -1;
    if (strcmp(cmd, "bless") == 0)
        return bp_cli_usage_error(cmd, "--gpu %s: bless writes one golden per GPU kind; "
                                  "name one GPU", d->be.gpus);
    bool used = false;
    for (int k = 0; k < *n; k++)
        used |= strcmp(names[k], "cuda") == 0 || strcmp(names[k], "auto") == 0;
    if (!used)
        return bp_cli_usage_error(cmd, "--gpu %s: --device names no cuda (or auto)",
                                  d->be.gpus);
    int idx[BP_CLI_MAX_BACKENDS], ng;
    bp_error_t err = {0};
    if (bp_backend_gpu_list(d->be.gpus, idx, BP_CLI_MAX_BACKENDS - 2, &ng, &err))
        return bp_cli_fail(&err);
    char in[BP_CLI_MAX_BACKENDS][BP_CLI_NAME_MAX];
    int ni = *n;
    memcpy(in, names, sizeof in);
    *n = 0;
    for (int i = 0; i < ni; i++) {
        bool is_auto = strcmp(in[i], "auto") == 0;
        if (!is_auto && strcmp(in[i], "cuda") != 0) {
            memcpy(names[(*n)++], in[i], BP_CLI_NAME_MAX);
            continue;
        }
        if (is_auto) {
            snprintf(names[(*n)++], BP_CLI_NAME_MAX, "cpu");
            snprintf(names[(*n)++], BP_CLI_NAME_MAX, "oracle");
        }
        for (int k = 0; k < ng && *n < BP_CLI_MAX_BACKENDS; k++)
            snprintf(names[(*n)++], BP_CLI_NAME_MAX, "cuda:%d", idx[k]);
    }
    /* duplicates (cpu named beside auto) go */
    int m = 0;
    for (int i = 0; i < *n; i++) {
        bool dup = false;
        for (int k = 0; k < m; k++)
            dup |= strcmp(names[k], names[i]) == 0;
        if (!dup && m != i)
            memcpy(names[m], names[i], BP_CLI_NAME_MAX);
        m += !dup;
    }
    *n = m;
    return -1;
}

int bp_cli_backend_names(const char *cmd, const bp_cli_devices_t *d,
                         char names[][BP_CLI_NAME_MAX], int *n)
{
    int rc = list_items(cmd, "--device", d->list, names, n);
    if (rc < 0)
        rc = expand_gpus(cmd, d, names, n);
    bool is_auto = false;
    for (int k = 0; k < *n && rc < 0; k++)
        is_auto |= strcmp(names[k], "auto") == 0;
    char req[BP_CLI_MAX_BACKENDS][BP_CLI_NAME_MAX];
    int nreq = 0;
    if (rc < 0 && d->require)
        rc = list_items(cmd, "--require", d->require, req, &nreq);
    for (int r = 0; r < nreq && rc < 0 && !is_auto; r++) {
        bool named = false;
        for (int k = 0; k < *n; k++)
            named |= strcmp(names[k], req[r]) == 0;
        if (!named)
            rc = bp_cli_usage_error(cmd, "--require %s: --device %s does not name it", req[r],
                                    d->list);
    }
    return rc >= 0 ? rc : is_auto ? 0 : -1;
}

int bp_cli_open_backends(const char *cmd, const bp_cli_devices_t *d, bp_backend_t **bes,
                         int *n, bp_cli_skip_t *skipped, int *nskipped, bp_timing_t *t)
{
    char items[BP_CLI_MAX_BACKENDS][BP_CLI_NAME_MAX], req[BP_CLI_MAX_BACKENDS][BP_CLI_NAME_MAX];
    int ni, nreq = 0;
    int rc = list_items(cmd, "--device", d->list, items, &ni);
    if (rc < 0)
        rc = expand_gpus(cmd, d, items, &ni);
    if (rc < 0 && d->require)
        rc = list_items(cmd, "--require", d->require, req, &nreq);
    *n = 0;
    *nskipped = 0;
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
            bool dup = false, required = false;
            for (int k = 0; k < *n; k++)
                dup |= strcmp(bes[k]->name, *want) == 0;
            for (int k = 0; k < *nskipped; k++)
                dup |= strcmp(skipped[k].name, *want) == 0;
            for (int r = 0; r < nreq; r++)
                required |= strcmp(req[r], *want) == 0;
            if (dup)
                continue;
            bp_error_t err = {0};
            bp_status st = *n == BP_CLI_MAX_BACKENDS
                               ? bp_error_set(&err, BP_EINPUT, "too many backends")
                               : bp_cli_open_one(d, *want, t, &bes[*n], &err);
            if (st == BP_OK) {
                (*n)++;
                continue;
            }
            if (is_auto && st == BP_EUNAVAIL && !required) {
                bp_cli_skip_t *s = &skipped[(*nskipped)++];
                snprintf(s->name, sizeof s->name, "%s", *want);
                snprintf(s->why, sizeof s->why, "%s", err.msg);
                continue;
            }
            for (int k = 0; k < *n; k++)
                bp_backend_close(bes[k]);
            *n = 0;
            if (required && is_auto)
                fprintf(stderr, "bitprobe %s: --require %s: %s\n", cmd, *want, err.msg);
            else
                bp_cli_fail(&err);
            return BP_EXIT_TROUBLE;
        }
    }
    if (!*n) {
        fprintf(stderr, "bitprobe %s: no backend available\n", cmd);
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

int bp_cli_param_arg(const char *cmd, const char *arg, bp_param_arg_t *params,
                     char (*names)[BP_CLI_PARAM_NAME], size_t *n, size_t max)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : 0;
    if (!eq || !len || !eq[1])
        return bp_cli_usage_error(cmd, "--param takes NAME=VALUE, not '%s'", arg);
    if (len >= BP_CLI_PARAM_NAME)
        return bp_cli_usage_error(cmd, "--param: the name in '%s' is too long", arg);
    if (*n == max)
        return bp_cli_usage_error(cmd, "more than %zu --param options", max);
    memcpy(names[*n], arg, len);
    names[*n][len] = '\0';
    for (size_t i = 0; i < *n; i++)
        if (strcmp(params[i].name, names[*n]) == 0)
            return bp_cli_usage_error(cmd, "--param %s given twice", names[*n]);
    params[*n].name = names[*n];
    params[(*n)++].value = eq + 1; /* argv's storage: valid for the run */
    return 0;
}

int bp_cli_select(const char *cmd, bp_probe_t **all, size_t nall, char **names, int nnames,
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
            fprintf(stderr, "bitprobe %s: unknown probe '%s' (see 'bitprobe list')\n", cmd,
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

int bp_cli_json_out(const char *cmd, const char *path, json_t *j)
{
    bool out = strcmp(path, "-") == 0;
    FILE *f = out ? stdout : fopen(path, "w");
    bool ok = j && f && json_dumpf(j, f, JSON_INDENT(1)) == 0 && fputc('\n', f) != EOF;
    if (f && !out)
        ok = fclose(f) == 0 && ok;
    json_decref(j);
    if (!ok)
        fprintf(stderr, "bitprobe %s: cannot write the JSON report to '%s'\n", cmd, path);
    return ok ? BP_EXIT_OK : BP_EXIT_TROUBLE;
}
