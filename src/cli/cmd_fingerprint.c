/* bitprobe fingerprint: what each backend really does (reciprocal
 * division, FMA contraction, FTZ, TF32, NaN payloads, arange precision,
 * function accuracy), one table per backend, or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "esc.h"
#include "fingerprint.h"
#include "opt.h"

const char cmd_fingerprint_usage[] =
    "bitprobe fingerprint [--device D] [--json]";

static void table(const bp_backend_t *be, const bp_fp_item_t *it, size_t n)
{
    printf("%s (%s)\n", be->name, be->key);
    printf("  %-26s %-18s %s\n", "item", "verdict", "evidence");
    for (size_t i = 0; i < n; i++)
        printf("  %-26s %-18s %s\n", it[i].title, it[i].verdict, it[i].evidence);
}

int cmd_fingerprint(int argc, char **argv)
{
    bp_cli_devices_t d = {.list = "auto"};
    bp_backend_opts_default(&d.be);
    bool json = false;
    const bp_opt_t opts[] = {
        BP_OPT_STRING_("device", 0, &d.list,
           "  --device LIST     comma-separated backends: cpu, oracle, cuda, auto (default: auto)\n"),
        BP_OPT_STRING_("require", 0, &d.require,
           "  --require LIST    backends that must be fingerprinted: a missing one is an error\n"),
        BP_OPT_FLAG_("json", 0, &json,
           "  --json            the tables as JSON (the \"behaviour\" object bless and run --save\n"
           "                    store with each backend's fingerprint; \"model\": what the\n"
           "                    backend models, as goldens record it)\n"),
        BP_OPT_BACKEND_(&d.be),
        BP_OPT_END_};
    int pos, rc;
    if ((rc = bp_opt_parse("fingerprint", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    if (pos < argc)
        return bp_cli_usage_error("fingerprint", "unexpected argument '%s'", argv[pos]);
    bp_backend_pin_gpu(&d.be);
    bp_backend_t *bes[BP_CLI_MAX_BACKENDS];
    bp_cli_skip_t skipped[BP_CLI_MAX_BACKENDS];
    int nb = 0, nskipped = 0;
    rc = bp_cli_open_backends("fingerprint", &d, bes, &nb, skipped, &nskipped, NULL);
    if (rc)
        return rc;
    for (int k = 0; k < nskipped; k++)
        bp_esc_printf(stderr, "bitprobe fingerprint: %s skipped: %s\n", skipped[k].name,
                      skipped[k].why);
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
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:o, s:O}", "name", bes[k]->name, "key", bes[k]->key,
                               "behaviour", bp_fingerprint_json(items, n), "model",
                               bes[k]->fingerprint ? bes[k]->fingerprint : json_null()));
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
