/* Option parsing for run and bless, and report dispatch (see runopts.h). */
#include "runopts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rep.h"

enum {
    O_PROBES = 256, O_GOLDEN, O_DEVICE, O_DTYPE, O_CPU_MATH, O_GPU, O_THREADS,
    O_FIRST, O_QUIET, O_AGREE, O_MISSING, O_NO_GOLDEN, O_SAVE, O_NAN_PAYLOAD,
    O_JSON, O_JUNIT, O_MARKDOWN, O_GITHUB, O_REPEAT, O_DRY_RUN
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
    while ((c = getopt_long(argc, argv, "+q", opts, NULL)) != -1) {
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
            if (!parse_int(optarg, 0, 1024, &v))
                return bp_cli_usage_error(cmd, "--gpu needs a device index, not '%s'", optarg);
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
    return -1;
}

void bp_run_opts_free(bp_run_opts_t *o)
{
    (void)o;
}

int bp_run_report(const bp_run_opts_t *o, bp_backend_t *const *bes, int n, bp_report_t *rep)
{
    (void)bes;
    (void)n;
    bp_rep_opts_t ro = {.quiet = bp_cli_quiet, .color = bp_cli_color(),
                        .first = o->cmp.first_k};
    if (bp_rep_text(stdout, rep, &ro))
        return BP_EXIT_TROUBLE;
    return bp_report_failures(rep) ? BP_EXIT_DRIFT : BP_EXIT_OK;
}
