/* Option tables (see opt.h): one parser of argv for every command, on
 * getopt_long, and the one check of each kind of value. */
#include "opt.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Room for one command's options. */
#define BP_OPT_MAX 128

static bool takes_value(const bp_opt_t *o)
{
    switch (o->kind) {
    case BP_OPT_FLAG:
    case BP_OPT_COUNT: return false;
    case BP_OPT_CALL: return o->arg;
    default: return true;
    }
}

int bp_opt_seed(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || !*arg || *end || *arg < '0' || *arg > '9')
        return bp_cli_usage_error(cmd, "--%s takes an unsigned decimal integer, not '%s'",
                                  opt, arg);
    *out = v;
    return 0;
}

int bp_opt_gpu(const char *cmd, const char *arg, int *out)
{
    long long v;
    if (!bp_cli_int(arg, 0, BP_OPT_GPU_MAX, &v))
        return bp_cli_usage_error(cmd, "--gpu needs " BP_OPT_GPU_WHAT ", not '%s'", arg);
    *out = (int)v;
    return 0;
}

bool bp_opt_gpus_ok(const char *arg)
{
    char buf[256], *items[BP_OPT_GPU_MAX + 2];
    long long v;
    if (strcmp(arg, "all") == 0)
        return true;
    if (strlen(arg) >= sizeof buf)
        return false;
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, BP_OPT_GPU_MAX + 2);
    for (int i = 0; i < n; i++)
        if (!bp_cli_int(items[i], 0, BP_OPT_GPU_MAX, &v))
            return false;
    return n > 0;
}

int bp_opt_gpus(const char *cmd, const char *arg)
{
    if (bp_opt_gpus_ok(arg))
        return 0;
    return bp_cli_usage_error(cmd, "--gpu needs " BP_OPT_GPU_WHAT ", all or a list (0,2), "
                              "not '%s'", arg);
}

int bp_opt_dtype(const char *cmd, const char *opt, const char *arg, bp_dtype_t *out)
{
    bp_dtype_t dt;
    if (!bp_dtype_parse(arg, &dt) || !bp_dtype_is_run(dt))
        return bp_cli_usage_error(cmd, "--%s takes " BP_OPT_DTYPE_WHAT ", not '%s'", opt,
                                  arg);
    *out = dt;
    return 0;
}

int bp_opt_dtypes(const char *cmd, const char *opt, const char *arg, uint32_t *mask)
{
    char buf[256], *items[16];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, 16), rc;
    *mask = 0;
    for (int i = 0; i < n; i++) {
        bp_dtype_t dt = BP_F32;
        if ((rc = bp_opt_dtype(cmd, opt, items[i], &dt)))
            return rc;
        *mask |= 1u << dt;
    }
    if (!*mask)
        return bp_cli_usage_error(cmd, "--%s needs at least one dtype", opt);
    return 0;
}

static int apply(const char *cmd, const bp_opt_t *o, const char *arg, void *ctx)
{
    const char *name = o->name ? o->name : "";
    long long v;
    switch (o->kind) {
    case BP_OPT_FLAG: *(bool *)o->target = true; return 0;
    case BP_OPT_COUNT: ++*(int *)o->target; return 0;
    case BP_OPT_INT:
        if (!bp_cli_int(arg, o->lo, o->hi, &v))
            return bp_cli_usage_error(cmd, "--%s takes %lld to %lld, not '%s'", name, o->lo,
                                      o->hi, arg);
        *(int *)o->target = (int)v;
        return 0;
    case BP_OPT_SIZE:
        if (!bp_cli_int(arg, 0, o->hi, &v))
            return bp_cli_usage_error(cmd, "--%s needs a count, not '%s'", name, arg);
        *(size_t *)o->target = (size_t)v;
        return 0;
    case BP_OPT_SEED: return bp_opt_seed(cmd, name, arg, (uint64_t *)o->target);
    case BP_OPT_GPU: return bp_opt_gpu(cmd, arg, (int *)o->target);
    case BP_OPT_DTYPE: return bp_opt_dtype(cmd, name, arg, (bp_dtype_t *)o->target);
    case BP_OPT_DTYPES: return bp_opt_dtypes(cmd, name, arg, (uint32_t *)o->target);
    case BP_OPT_STRING:
    case BP_OPT_PATH: *(const char **)o->target = arg; return 0;
    case BP_OPT_CALL: return o->fn(cmd, o, arg, ctx);
    case BP_OPT_TEXT:
    case BP_OPT_END: break;
    }
    return BP_EXIT_TROUBLE;
}

/* --help: the command's synopsis (its line in the command table), the
 * table's lines, then its summary. */
static int help(const char *cmd, const bp_opt_t *tab)
{
    const bp_cmd_t *c = bp_cmd_find(cmd);
    printf("usage: %s\n", c ? c->usage : cmd);
    bp_opt_usage(stdout, tab);
    printf("\n%s.\n", c ? c->summary : "");
    return -1;
}

int bp_opt_parse(const char *cmd, const bp_opt_t *tab, void *ctx, int argc, char **argv,
                 int *pos)
{
    if (bp_cli_wants_help(argc, argv))
        return help(cmd, tab);
    struct option lo[BP_OPT_MAX + 1];
    char shorts[2 * BP_OPT_MAX + 1];
    size_t nl = 0, ns = 0;
    for (const bp_opt_t *o = tab; o->kind != BP_OPT_END; o++) {
        if (o->kind == BP_OPT_TEXT)
            continue;
        if (nl >= BP_OPT_MAX)
            return bp_cli_usage_error(cmd, "too many options in the table");
        if (o->name)
            lo[nl++] = (struct option){o->name, takes_value(o) ? required_argument
                                                                : no_argument,
                                       NULL, 0x1000 + (int)(o - tab)};
        if (o->short_name) {
            shorts[ns++] = (char)o->short_name;
            if (takes_value(o))
                shorts[ns++] = ':';
        }
    }
    lo[nl] = (struct option){0, 0, 0, 0};
    shorts[ns] = '\0';
    opterr = 0;
    optind = 1;
    int c, rc;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const bp_opt_t *o = NULL;
        if (c >= 0x1000)
            o = &tab[c - 0x1000];
        else if (c != '?' && c != ':')
            for (const bp_opt_t *k = tab; k->kind != BP_OPT_END && !o; k++)
                if (k->short_name == c)
                    o = k;
        if (!o) {
            const bp_opt_t *end;
            for (end = tab; end->kind != BP_OPT_END; end++)
                ;
            if (end->fn)
                return end->fn(cmd, end, argv[optind - 1], ctx);
            return bp_cli_unknown_option(cmd, lo, argv[optind - 1]);
        }
        if ((rc = apply(cmd, o, optarg, ctx)))
            return rc; /* -1: an option that did the command's work (--list) */
    }
    *pos = optind;
    return 0;
}

void bp_opt_usage(FILE *f, const bp_opt_t *tab)
{
    for (const bp_opt_t *o = tab; o->kind != BP_OPT_END; o++)
        if (o->help)
            fputs(o->help, f);
}
