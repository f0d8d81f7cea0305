/* bitprobe env: what this build is and what it runs on. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "envinfo.h"
#include "opt.h"

const char cmd_env_usage[] =
    "bitprobe env [--json]";

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static void print_text(json_t *env)
{
    json_t *build = json_object_get(env, "build");
    json_t *libs = json_object_get(env, "libs");
    bool cuda = json_is_true(json_object_get(build, "cuda"));
    printf("bitprobe   %s\n", str(env, "tool_version"));
    printf("build      %s\n", cuda ? "with CUDA" : "CPU only (no CUDA backend)");
    if (cuda)
        printf("nvcc flags %s\n", str(build, "nvccflags"));
    json_t *inst = json_object_get(env, "installed");
    printf("prefix     %s (never written)\n", str(inst, "prefix"));
    printf("data       %s (the installed probes and goldens)\n", str(inst, "data"));
    printf("cpu        %s\n", str(env, "cpu"));
    printf("compiler   %s\n", str(env, "compiler"));
    const char *k;
    json_t *v;
    json_object_foreach(libs, k, v)
        printf("%-10s %s\n", k, json_string_value(v));
    json_t *nccl = json_object_get(env, "nccl"), *nn = json_object_get(nccl, "none");
    if (nn)
        printf("nccl       none (%s)\n", json_string_value(nn));
    else
        printf("nccl       %s (%s; BP_NCCL_LIB names another)\n", str(nccl, "version"),
               str(nccl, "file"));
    json_t *gpu = json_object_get(env, "gpu");
    json_t *none = json_object_get(gpu, "none");
    if (none) {
        printf("gpu        no CUDA device (%s)\n", json_string_value(none));
        return;
    }
    printf("driver     %s (NVIDIA driver %s)\n", str(gpu, "driver"), str(gpu, "nvidia_driver"));
    printf("runtime    %s\n", str(gpu, "runtime"));
    printf("cublas     %s\n", str(gpu, "cublas"));
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(gpu, "devices"), i, d)
        printf("gpu %-6zu %s, compute capability %s, %lld SMs, %lld MiB, %s, %s\n", i,
               str(d, "name"), str(d, "cc"),
               (long long)json_integer_value(json_object_get(d, "sms")),
               (long long)json_integer_value(json_object_get(d, "mem_mib")),
               str(d, "pci_bus_id"), str(d, "uuid"));
}

int cmd_env(int argc, char **argv)
{
    bool as_json = false;
    const bp_opt_t opts[] = {
        BP_OPT_FLAG_("json", 0, &as_json,
           "  --json         print the environment as JSON\n"),
        BP_OPT_END_};
    int pos, rc;
    if ((rc = bp_opt_parse("env", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    if (pos < argc)
        return bp_cli_usage_error("env", "unexpected argument '%s'", argv[pos]);
    json_t *env = bp_envinfo_collect();
    if (!env) {
        fprintf(stderr, "bitprobe env: out of memory\n");
        return BP_EXIT_TROUBLE;
    }
    /* where this bitprobe is installed: not part of a host's fingerprint */
    json_object_set_new(env, "installed", json_pack("{s:s, s:s}", "prefix", BP_PREFIX, "data",
                                                    BP_DATADIR));
    /* the NCCL collectives load here: not part of the fingerprint either */
    json_object_set_new(env, "nccl", bp_envinfo_nccl());
    if (as_json) {
        char *s = json_dumps(env, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (s)
            puts(s);
        free(s);
    } else {
        print_text(env);
    }
    json_decref(env);
    return BP_EXIT_OK;
}
