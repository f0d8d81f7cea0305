/* bitprobe list: the probes found and the backends with their availability. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "probe.h"

const char cmd_list_usage[] =
    "bitprobe list [--probes DIR] [--json]\n"
    "  --probes DIR   read probes from DIR (default: ./probes, then the installed set)\n"
    "  --json         machine-readable listing";

static void dtypes_str(uint32_t mask, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < BP_NDTYPES; d++)
        if (mask & (1u << d))
            len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s",
                                    len ? "," : "", bp_dtype_name((bp_dtype_t)d));
}

static void outputs_str(const bp_probe_t *p, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->noutputs; i++)
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s",
                                i ? "," : "", p->outputs[i].name);
}

/* Opens each backend to learn whether it runs here, and why not. */
static json_t *backends_json(void)
{
    json_t *arr = json_array();
    static const char *all[] = {"cpu", "oracle", "cuda"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        bp_backend_t *be = NULL;
        bp_error_t err = {0};
        bp_status st = bp_backend_open(all[i], NULL, &be, &err);
        json_t *o = json_pack("{s:s, s:b}", "name", all[i], "available", st == BP_OK);
        if (st == BP_OK)
            json_object_set_new(o, "key", json_string(be->key));
        else
            json_object_set_new(o, "reason", json_string(err.msg));
        json_array_append_new(arr, o);
        bp_backend_close(be);
    }
    return arr;
}

int cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {{"probes", required_argument, 0, 'p'},
                                         {"json", no_argument, 0, 'j'},
                                         {0, 0, 0, 0}};
    const char *dir_opt = NULL;
    bool as_json = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'p')
            dir_opt = optarg;
        else if (c == 'j')
            as_json = true;
        else
            return bp_cli_usage_error("list", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc)
        return bp_cli_usage_error("list", "unexpected argument '%s'", argv[optind]);
    const char *dir = bp_cli_probes_dir(dir_opt);
    bp_probe_t **ps = NULL;
    size_t n = 0;
    bp_error_t err = {0};
    if (bp_probe_load_dir(dir, &ps, &n, &err))
        return bp_cli_fail(&err);
    json_t *bes = backends_json();
    char dts[64], outs[512];
    if (as_json) {
        json_t *root = json_pack("{s:s, s:[], s:o}", "probes_dir", dir, "probes", "backends", bes);
        json_t *arr = json_object_get(root, "probes");
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:[], s:[]}", "name", ps[i]->name,
                                  "description", ps[i]->description, "file", ps[i]->path,
                                  "hash", ps[i]->hash, "outputs", "dtypes");
            for (size_t k = 0; k < ps[i]->noutputs; k++)
                json_array_append_new(json_object_get(o, "outputs"),
                                      json_string(ps[i]->outputs[k].name));
            for (int d = 0; d < BP_NDTYPES; d++)
                if (ps[i]->dtypes & (1u << d))
                    json_array_append_new(json_object_get(o, "dtypes"),
                                          json_string(bp_dtype_name((bp_dtype_t)d)));
            json_array_append_new(arr, o);
        }
        char *s = json_dumps(root, JSON_INDENT(2));
        if (s)
            puts(s);
        free(s);
        json_decref(root);
    } else {
        printf("Probes in %s:\n", dir);
        for (size_t i = 0; i < n; i++) {
            dtypes_str(ps[i]->dtypes, dts, sizeof dts);
            outputs_str(ps[i], outs, sizeof outs);
            printf("  %-24s %-18s %-22s %s\n", ps[i]->name, dts, outs, ps[i]->description);
        }
        printf("\nBackends:\n");
        size_t i;
        json_t *b;
        json_array_foreach(bes, i, b) {
            json_t *key = json_object_get(b, "key");
            if (key)
                printf("  %-8s available (%s)\n", json_string_value(json_object_get(b, "name")),
                       json_string_value(key));
            else
                printf("  %-8s unavailable: %s\n", json_string_value(json_object_get(b, "name")),
                       json_string_value(json_object_get(b, "reason")));
        }
        json_decref(bes);
    }
    bp_probe_free_all(ps, n);
    return BP_EXIT_OK;
}
