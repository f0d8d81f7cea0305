/* Shared command-line helpers (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "esc.h"
#include "fingerprint.h"
#include "gemm_plan.h"
#include "opt.h"
#include "outfile.h"
#include "suggest.h"

#include "timing.h"

bool bp_cli_quiet;

int bp_cli_unknown_option(const char *cmd, const struct option *opts, const char *arg)
{
    const char *names[128];
    size_t n = 0;
    const struct option *o = opts;
    for (; o && o->name && n < 128; o++)
        names[n++] = o->name;
    char word[64];
    const char *w = arg ? arg : "";
    if (w[0] == '-' && w[1] == '-') {
        snprintf(word, sizeof word, "%s", w + 2);
        word[strcspn(word, "=")] = '\0';
        /* a known option that getopt refused: its value is missing (the
         * last word), or given to one that takes none */
        for (o = opts; o && o->name; o++)
            if (strcmp(o->name, word) == 0)
                return o->has_arg == no_argument
                           ? bp_cli_usage_error(cmd, "option '--%s' takes no value", word)
                           : bp_cli_usage_error(cmd, "option '--%s' needs a value", word);
        const char *near = word[0] ? bp_suggest(word, names, n) : NULL;
        if (near)
            return bp_cli_usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", w, near);
    }
    return bp_cli_usage_error(cmd, "unknown option '%s'", w);
}

int bp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bitprobe %s: ", cmd);
    va_start(ap, fmt);
    bp_esc_vprintf(stderr, fmt, ap);
    va_end(ap);
    const bp_cmd_t *c = bp_cmd_find(cmd);
    if (c) {
        const char *nl = strchr(c->usage, '\n');
        int len = nl ? (int)(nl - c->usage) : (int)strlen(c->usage);
        fprintf(stderr, "\nusage: %.*s\n", len, c->usage);
        bp_esc_printf(stderr, "Try 'bitprobe %s --help' for more.\n", cmd);
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
    if (c->table) {
        char *argv[] = {(char *)c->name, (char *)"--help", NULL};
        return c->fn(2, argv);
    }
    printf("usage: %s\n\n%s.\n", c->usage, c->summary);
    return BP_EXIT_OK;
}

int bp_cli_fail(const bp_error_t *err)
{
    bp_cli_progress_clear();
    bp_esc_printf(stderr, "bitprobe: %s\n", err->msg[0] ? err->msg : "failed");
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

int bp_cli_zero_sign(const char *cmd, const char *arg, bool *ignore)
{
    if (strcmp(arg, "ignore") == 0 || strcmp(arg, "count") == 0) {
        *ignore = strcmp(arg, "ignore") == 0;
        return -1;
    }
    return bp_cli_usage_error(cmd, "--zero-sign takes count or ignore, not '%s'", arg);
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

bool bp_cli_opt_onednn_isa(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    snprintf(why, n,
             "unknown --onednn-isa '%s' (avx512_core_fp16, avx512_core_bf16, avx512_core, "
             "avx2_vnni_2, avx2, "
             "sse41, none, auto)",
             arg);
    return bp_onednn_isa_parse(arg, &o->onednn_isa);
}

bool bp_cli_opt_mkl_isa(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    snprintf(why, n, "unknown --mkl-isa '%s' (avx512, avx2, sse42, cnr, auto)", arg);
    return bp_mkl_isa_parse(arg, &o->mkl_isa);
}

bool bp_cli_opt_gpu(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    long long v;
    snprintf(why, n, "--gpu needs " BP_OPT_GPU_WHAT ", all or a list (0,2), not '%s'", arg);
    o->gpus = NULL;
    if (strcmp(arg, "all") == 0 || strchr(arg, ',')) {
        o->gpus = arg; /* checked against the GPUs when backends open */
        return bp_opt_gpus_ok(arg);
    }
    if (!bp_cli_int(arg, 0, BP_OPT_GPU_MAX, &v))
        return false;
    o->gpu = (int)v;
    return true;
}

bool bp_cli_opt_cuda_blas(const char *arg, bp_backend_opts_t *o, char *why, size_t n)
{
    bp_blas_settings_t s;
    bp_error_t err = {0};
    bp_blas_settings_default(&s);
    size_t len = strlen(o->cuda_blas);
    char all[sizeof o->cuda_blas + 512];
    snprintf(all, sizeof all, "%s%s%s", o->cuda_blas, len ? "," : "", arg);
    if (bp_blas_settings_parse(&s, all, &err)) {
        snprintf(why, n, "--cuda-blas: %s", err.msg);
        return false;
    }
    if (len + 1 + strlen(arg) >= sizeof o->cuda_blas) {
        snprintf(why, n, "--cuda-blas: more than %zu characters of settings",
                 sizeof o->cuda_blas - 1);
        return false;
    }
    snprintf(o->cuda_blas + len, sizeof o->cuda_blas - len, "%s%s", len ? "," : "", arg);
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
#define BP_BE_CASE_(id, name, usage, fn, p)                                              \
    case BP_BE_O_##id:                                                                   \
        return fn(arg, o, why, sizeof why) ? 0 : bp_cli_usage_error(cmd, "%s", why);
        BP_BACKEND_OPTIONS(BP_BE_CASE_, BP_CLI_NONE_, )
#undef BP_BE_CASE_
    default:
        return -1;
    }
}

int bp_cli_backend_entry(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    int rc = bp_cli_backend_option(cmd, e->id, arg, e->target);
    return rc < 0 ? BP_EXIT_TROUBLE : rc;
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

static pthread_mutex_t progress_mu = PTHREAD_MUTEX_INITIALIZER;
static bool progress_shown, progress_hooked;

void bp_cli_progress_clear(void)
{
    pthread_mutex_lock(&progress_mu);
    if (progress_shown)
        fputs("\r\033[K", stderr);
    progress_shown = false;
    pthread_mutex_unlock(&progress_mu);
}

void bp_cli_progress(const char *fmt, ...)
{
    if (bp_cli_quiet || !isatty(STDERR_FILENO))
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg);
    pthread_mutex_lock(&progress_mu);
    if (len && msg[len - 1] == '\n') {
        /* one terminal line: \r goes back to its start only */
        char shown[80];
        msg[len - 1] = '\0';
        fprintf(stderr, "\r\033[K%s", bp_esc_str(msg, shown, sizeof shown));
        progress_shown = true;
        if (!progress_hooked)
            progress_hooked = atexit(bp_cli_progress_clear) == 0;
    } else {
        bp_esc_put(stderr, msg);
    }
    fflush(stderr);
    pthread_mutex_unlock(&progress_mu);
}

/* "bitprobe CMD: message" on stderr; returns 2. */
static int out_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int out_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    bp_cli_progress_clear();
    fprintf(stderr, "bitprobe %s: ", cmd);
    va_start(ap, fmt);
    bp_esc_vprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return BP_EXIT_TROUBLE;
}

int bp_cli_check_output(const char *cmd, const char *opt, const char *path, bool dir)
{
    struct stat st;
    if (!path || strcmp(path, "-") == 0)
        return -1;
    if (!*path)
        return out_error(cmd, "%s needs a path", opt);
    if (stat(path, &st) == 0) {
        if (dir && !S_ISDIR(st.st_mode))
            return out_error(cmd, "%s '%s': not a directory", opt, path);
        if (!dir && S_ISDIR(st.st_mode))
            return out_error(cmd, "%s '%s': is a directory", opt, path);
        if (access(path, dir ? W_OK | X_OK : W_OK) != 0)
            return out_error(cmd, "%s '%s': cannot write there: %s", opt, path,
                                      strerror(errno));
        return -1;
    }
    if (errno != ENOENT)
        return out_error(cmd, "%s '%s': %s", opt, path, strerror(errno));
    /* A new file goes into an existing directory; a new directory into
     * its nearest existing parent (run --save makes the ones between). */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path);
    for (;;) {
        char *slash = strrchr(parent, '/');
        while (slash && slash > parent && slash[1] == '\0') { /* trailing slashes */
            *slash = '\0';
            slash = strrchr(parent, '/');
        }
        if (!slash)
            snprintf(parent, sizeof parent, ".");
        else if (slash == parent)
            parent[1] = '\0';
        else
            *slash = '\0';
        if (stat(parent, &st) == 0)
            break;
        if (!dir || errno != ENOENT || strcmp(parent, ".") == 0 || strcmp(parent, "/") == 0)
            return out_error(cmd, "%s '%s': directory '%s' %s", opt, path, parent,
                                      errno == ENOENT ? "does not exist" : strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return out_error(cmd, "%s '%s': '%s' is not a directory", opt, path, parent);
    if (access(parent, W_OK | X_OK) != 0)
        return out_error(cmd, "%s '%s': cannot write in '%s': %s", opt, path, parent,
                                  strerror(errno));
    return -1;
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

/* The golden directory beside a probes directory: DIR/../golden when DIR
 * is named probes (a project laid out as bitprobe's own: probes/ next to
 * golden/), else DIR/golden (a directory of the user's own, whose goldens
 * stay inside it). */
static const char *beside(const char *probes)
{
    /* room for DIR and "/golden" (a longer DIR is cut, and fails to open) */
    static __thread char buf[4096 + 8];
    char d[4096];
    snprintf(d, sizeof d, "%s", probes);
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/')
        d[--n] = '\0';
    char *slash = strrchr(d, '/');
    const char *base = slash ? slash + 1 : d;
    if (strcmp(base, "probes") != 0)
        snprintf(buf, sizeof buf, "%s/golden", n ? d : ".");
    else if (!slash)
        snprintf(buf, sizeof buf, "golden");
    else if (slash == d)
        snprintf(buf, sizeof buf, "/golden");
    else {
        *slash = '\0';
        snprintf(buf, sizeof buf, "%s/golden", d);
    }
    return buf;
}

const char *bp_cli_golden_dir(const char *opt, const char *probes_opt, const bp_probe_t *p)
{
    if (opt)
        return opt;
    if (p && p->by_path) {
        char d[4096];
        snprintf(d, sizeof d, "%s", p->path);
        char *slash = strrchr(d, '/');
        if (!slash)
            snprintf(d, sizeof d, ".");
        else if (slash == d)
            d[1] = '\0';
        else
            *slash = '\0';
        return beside(d);
    }
    if (probes_opt)
        return beside(probes_opt);
    const char *e = getenv("BITPROBE_GOLDEN");
    if (e && *e)
        return e;
    /* $BITPROBE_PROBES, ./probes or the installed set: beside them */
    return beside(bp_cli_probes_dir(NULL));
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
        t->be[ti].init_s = st == BP_OK ? (*out)->init_s : 0;
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
        used |= strcmp(names[k], BP_BACKEND_GPU) == 0 || strcmp(names[k], "auto") == 0;
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
        if (!is_auto && strcmp(in[i], BP_BACKEND_GPU) != 0) {
            memcpy(names[(*n)++], in[i], BP_CLI_NAME_MAX);
            continue;
        }
        /* auto: every other backend of the registry, then the GPUs */
        for (const char *const *b = bp_backend_names(); is_auto && *b; b++)
            if (strcmp(*b, BP_BACKEND_GPU) != 0 && *n < BP_CLI_MAX_BACKENDS)
                snprintf(names[(*n)++], BP_CLI_NAME_MAX, "%s", *b);
        for (int k = 0; k < ng && *n < BP_CLI_MAX_BACKENDS; k++)
            snprintf(names[(*n)++], BP_CLI_NAME_MAX, BP_BACKEND_GPU ":%d", idx[k]);
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

int bp_cli_open_fail(const char *cmd, const char *name, bp_status st, const bp_error_t *err)
{
    if (st != BP_EUNAVAIL)
        return bp_cli_fail(err);
    /* a backend named that cannot run here: the option, and the ways that
     * run on this machine */
    bp_cli_progress_clear();
    fprintf(stderr, "bitprobe %s: --device %s: %s; --device auto runs every backend this "
                    "machine has (a missing GPU is skipped and said), --device cpu,oracle the "
                    "CPU's\n", cmd, name, err->msg);
    return BP_EXIT_TROUBLE;
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
        /* auto tries every backend bitprobe knows (the registry's), so
         * that a build without CUDA says so as a machine without a GPU
         * does. */
        const char *const *want = is_auto ? bp_backend_names() : single;
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
            bp_cli_progress_clear();
            if (required && is_auto)
                bp_esc_printf(stderr, "bitprobe %s: --require %s: %s\n", cmd, *want, err.msg);
            else
                bp_cli_open_fail(cmd, *want, st, &err);
            return BP_EXIT_TROUBLE;
        }
    }
    if (!*n) {
        bp_esc_printf(stderr, "bitprobe %s: no backend available\n", cmd);
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

int bp_cli_probes_dir_error(const char *cmd, const char *dir_opt, const bp_error_t *err)
{
    bp_cli_progress_clear();
    const char *env = getenv("BITPROBE_PROBES");
    bp_esc_printf(stderr, "bitprobe %s: %s\n", cmd, err->msg);
    if (dir_opt)
        fprintf(stderr, "  (from --probes)\n");
    else if (env && *env)
        fprintf(stderr, "  (from $BITPROBE_PROBES)\n");
    else
        bp_esc_printf(stderr,
                      "  bitprobe looks for probes in --probes DIR, then $BITPROBE_PROBES, "
                      "then ./probes, then the installed set (%s/probes); run it from a "
                      "directory that holds probes/, or pass --probes DIR\n",
                      BP_DATADIR);
    return BP_EXIT_TROUBLE;
}

void bp_cli_probes_free(bp_cli_probes_t *ps)
{
    bp_probe_free_all(ps->all, ps->nall);
    bp_probe_bad_free(ps->bad, ps->nbad);
    free(ps->sel);
    free(ps->selbad);
    memset(ps, 0, sizeof *ps);
}

static bool is_path_name(const char *s)
{
    return strchr(s, '/') || bp_probe_file_name(s);
}

/* A probe named by path: loaded and appended to ps->all, or a failure. */
static int load_path(const char *cmd, const char *path, const bp_param_arg_t *params,
                     size_t nparams, bp_cli_probes_t *ps)
{
    bp_error_t err = {0};
    bp_probe_t *p = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return out_error(cmd, "no probe file '%s': %s", path, strerror(errno));
    bp_probe_t **t = realloc(ps->all, (ps->nall + 1) * sizeof *t);
    size_t *tb = realloc(ps->selbad, (ps->nbad + 1) * sizeof *tb);
    if (t)
        ps->all = t;
    if (tb)
        ps->selbad = tb;
    if (!t || !tb)
        return out_error(cmd, "out of memory");
    if (bp_probe_load_params(path, params, nparams, &p, &err)) {
        if (!bp_probe_bad_add(&ps->bad, &ps->nbad, path, err.msg))
            return out_error(cmd, "out of memory");
        ps->selbad[ps->nselbad++] = ps->nbad - 1;
        return BP_EXIT_OK;
    }
    p->by_path = true;
    ps->all[ps->nall++] = p;
    ps->sel[ps->nsel++] = p;
    return BP_EXIT_OK;
}

int bp_cli_probes_load(const char *cmd, const char *dir_opt, const bp_param_arg_t *params,
                       size_t nparams, char **names, int nnames, bp_cli_probes_t *ps)
{
    memset(ps, 0, sizeof *ps);
    bp_error_t err = {0};
    const char *dir = bp_cli_probes_dir(dir_opt);
    /* A bad --param value is the command's error, not each probe's. */
    for (size_t i = 0; i < nparams; i++) {
        double v;
        bool is_int;
        if (bp_param_number(&params[i], &v, &is_int, &err))
            return bp_cli_fail(&err);
    }
    /* Probes named by path need no directory. */
    bool paths_only = nnames > 0;
    for (int i = 0; i < nnames; i++)
        paths_only &= is_path_name(names[i]);
    bp_status st = bp_probe_load_dir_ex(dir, params, nparams, &ps->all, &ps->nall, &ps->bad,
                                        &ps->nbad, &err);
    if (st && !(paths_only && st == BP_EIO))
        return st == BP_EIO ? bp_cli_probes_dir_error(cmd, dir_opt, &err) : bp_cli_fail(&err);
    size_t cap = ps->nall + (size_t)nnames + 1;
    ps->sel = calloc(cap, sizeof *ps->sel);
    ps->selbad = calloc(ps->nbad + 1, sizeof *ps->selbad);
    if (!ps->sel || !ps->selbad)
        return out_error(cmd, "out of memory");
    if (nnames == 0) {
        memcpy(ps->sel, ps->all, ps->nall * sizeof *ps->all);
        ps->nsel = ps->nall;
        for (size_t b = 0; b < ps->nbad; b++)
            ps->selbad[ps->nselbad++] = b;
        return BP_EXIT_OK;
    }
    for (int i = 0; i < nnames; i++) {
        int rc;
        if (is_path_name(names[i])) {
            if ((rc = load_path(cmd, names[i], params, nparams, ps)) != BP_EXIT_OK)
                return rc;
            continue;
        }
        size_t k = 0;
        while (k < ps->nall && strcmp(ps->all[k]->name, names[i]) != 0)
            k++;
        if (k < ps->nall) {
            bool dup = false;
            for (size_t j = 0; j < ps->nsel; j++)
                dup |= ps->sel[j] == ps->all[k];
            if (!dup)
                ps->sel[ps->nsel++] = ps->all[k];
            continue;
        }
        size_t b = 0;
        while (b < ps->nbad && strcmp(ps->bad[b].stem, names[i]) != 0)
            b++;
        if (b < ps->nbad) {
            bool dup = false;
            for (size_t j = 0; j < ps->nselbad; j++)
                dup |= ps->selbad[j] == b;
            if (!dup)
                ps->selbad[ps->nselbad++] = b;
            continue;
        }
        /* the nearest name among the probes, loaded or not */
        const char **cands = calloc(ps->nall + ps->nbad + 1, sizeof *cands);
        size_t nc = 0;
        for (size_t j = 0; cands && j < ps->nall; j++)
            cands[nc++] = ps->all[j]->name;
        for (size_t j = 0; cands && j < ps->nbad; j++)
            cands[nc++] = ps->bad[j].stem;
        const char *near = cands ? bp_suggest(names[i], cands, nc) : NULL;
        bp_cli_progress_clear();
        bp_esc_printf(stderr, "bitprobe %s: unknown probe '%s' in %s", cmd, names[i], dir);
        if (near)
            bp_esc_printf(stderr, "; did you mean '%s'?", near);
        fprintf(stderr, " (see 'bitprobe list'; a path to a .yaml or .yml file runs that "
                        "file)\n");
        free(cands);
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

int bp_cli_json_out(const char *cmd, const char *path, json_t *j)
{
    bp_out_t o;
    bool opened = bp_out_open(&o, path);
    bool ok = j && opened && json_dumpf(j, o.f, JSON_INDENT(1)) == 0 && fputc('\n', o.f) != EOF;
    if (opened)
        ok = bp_out_close(&o, ok);
    json_decref(j);
    if (!ok)
        bp_esc_printf(stderr, "bitprobe %s: cannot write the JSON report to '%s'\n", cmd, path);
    return ok ? BP_EXIT_OK : BP_EXIT_TROUBLE;
}
