/* Environment fingerprint (see envinfo.h). */
#include "envinfo.h"
#include "nccl_dl.h"

#include <gnu/libc-version.h>
#include <mpfr.h>
#include <sleef.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>
#include <zlib.h>

#include "backend.h"
#include "config.h"

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, n, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

void bp_envinfo_nvidia_driver(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  <date>"
     * (or "... Open Kernel Module for x86_64  580.65.06 ..."): the first
     * word made of digits and dots with a dot in it. */
    char line[512];
    if (fgets(line, sizeof line, f))
        for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n"))
            if (w[0] >= '0' && w[0] <= '9' && strchr(w, '.') &&
                strspn(w, "0123456789.") == strlen(w)) {
                snprintf(out, n, "%s", w);
                break;
            }
    fclose(f);
}

json_t *bp_envinfo_host(void)
{
    char cpu[256], sleef[32];
    cpu_model(cpu, sizeof cpu);
    snprintf(sleef, sizeof sleef, "%d.%d.%d", SLEEF_VERSION_MAJOR,
             SLEEF_VERSION_MINOR, SLEEF_VERSION_PATCHLEVEL);
    return json_pack(
        "{s:s, s:{s:b, s:s, s:s}, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}}",
        "tool_version", PACKAGE_VERSION,
        "build",
#ifdef BP_HAVE_CUDA
        "cuda", 1, "nvccflags", BP_NVCCFLAGS,
#else
        "cuda", 0, "nvccflags", "",
#endif
        "configure", BP_CONFIGURE_ARGS,
        "cpu", cpu,
        "compiler", "gcc-compatible " __VERSION__,
        "libs", "glibc", gnu_get_libc_version(), "sleef", sleef,
        "mpfr", mpfr_get_version(), "libyaml", yaml_get_version_string(),
        "zlib", zlibVersion(), "jansson", JANSSON_VERSION);
}

json_t *bp_envinfo_collect(void)
{
    json_t *env = bp_envinfo_host();
    if (!env)
        return NULL;
#ifdef BP_HAVE_CUDA
    bp_error_t err = {0};
    json_t *gpu = bp_be_cuda_env(&err);
    if (gpu)
        json_object_set_new(env, "gpu", gpu);
    else
        json_object_set_new(env, "gpu", json_pack("{s:s}", "none", err.msg));
#else
    json_object_set_new(env, "gpu",
                        json_pack("{s:s}", "none", "built without CUDA"));
#endif
    return env;
}

json_t *bp_envinfo_nccl(void)
{
    bp_error_t err = {0};
    if (bp_nccl_load(&err))
        return json_pack("{s:s}", "none", err.msg);
    char v[32], file[512];
    bp_nccl_version(v, sizeof v);
    bp_nccl_file(file, sizeof file);
    return json_pack("{s:s, s:s}", "version", v, "file", file);
}
