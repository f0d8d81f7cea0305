/* bitprobe fingerprint: what each backend really does (reciprocal
 * division, FMA contraction, FTZ, TF32, NaN payloads, arange precision,
 * function accuracy), one table per backend, or JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "fingerprint.h"
#include "runopts.h"

static void table(const bp_backend_t *be, const bp_fp_item_t *it, size_t n)
{
    printf("%s (%s)\n", be->name, be->key);
    printf("  %-26s %-18s %s\n", "item", "verdict", "evidence");
    for (size_t i = 0; i < n; i++)
        printf("  %-26s %-18s %s\n", it[i].title, it[i].verdict, it[i].evidence);
}

int cmd_fingerprint(int argc, char **argv)
{
    enum { O_DEVICE = 256, O_JSON, O_GPU, O_THREADS, O_CPU_MATH };
    static const struct option opts[] = {
        {"device", required_argument, 0, O_DEVICE}, {"json", no_argument, 0, O_JSON},
        {"gpu", required_argument, 0, O_GPU},        {"threads", required_argument, 0, O_THREADS},
        {"cpu-math", required_argument, 0, O_CPU_MATH}, {0, 0, 0, 0}};
    bp_run_opts_t o;
    memset(&o, 0, sizeof o);
    o.devices = "auto";
    bp_backend_opts_default(&o.be);
    bool json = false;
    int c;
    char *end;
    long v;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_DEVICE: o.devices = optarg; break;
        case O_JSON: json = true; break;
        case O_CPU_MATH:
            if (!bp_cpu_math_parse(optarg, &o.be.cpu_math))
                return bp_cli_usage_error("fingerprint", "unknown --cpu-math '%s' (sleef-u10, "
                                          "sleef-u35, libm)", optarg);
            break;
        case O_GPU:
        case O_THREADS:
            v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || v < 0 || v > 4096)
                return bp_cli_usage_error("fingerprint", "%s needs a number, not '%s'",
                                          argv[optind - 1], optarg);
            if (c == O_GPU)
                o.be.gpu = (int)v;
            else
                o.be.threads = (int)v;
            break;
        default:
            return bp_cli_usage_error("fingerprint", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bp_cli_usage_error("fingerprint", "unexpected argument '%s'", argv[optind]);
    bp_backend_t *bes[BP_RUN_MAX_BACKENDS];
    int nb = 0;
    int rc = bp_run_open_backends("fingerprint", &o, bes, &nb, NULL);
    if (rc)
        return rc;
    json_t *arr = json_array();
    for (int k = 0; k < nb && !rc; k++) {
        bp_fp_item_t items[BP_FP_MAX_ITEMS];
        size_t n;
        bp_error_t err = {0};
        bp_cli_progress("fingerprinting %s\n", bes[k]->name);
        if (bp_fingerprint_run(bes[k], items, &n, &err)) {
            rc = bp_cli_fail(&err);
            break;
        }
        if (json)
            json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", "name", bes[k]->name,
                                                 "key", bes[k]->key, "behaviour",
                                                 bp_fingerprint_json(items, n)));
        else
            table(bes[k], items, n);
        if (!json && k + 1 < nb)
            putchar('\n');
    }
    if (!rc && json) {
        json_t *root = json_pack("{s:s, s:s, s:O}", "tool", "bitprobe", "version",
                                 PACKAGE_VERSION, "backends", arr);
        if (json_dumpf(root, stdout, JSON_INDENT(1)) != 0 || putchar('\n') == EOF)
            rc = BP_EXIT_TROUBLE;
        json_decref(root);
    }
    json_decref(arr);
    for (int k = 0; k < nb; k++)
        bp_backend_close(bes[k]);
    return rc;
}
