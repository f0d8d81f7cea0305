/* NCCL by dlopen (nccl_dl.h). */
#define _GNU_SOURCE /* dladdr */
#include "nccl_dl.h"

#include <dlfcn.h>
#include <stdio.h>

#include "dl.h"

bp_nccl_t bp_nccl_fns;

#define NCCL_FNS(X)                                                                       \
    X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommDestroy)            \
    X(ncclCommAbort) X(ncclAllGather) X(ncclAllReduce) X(ncclReduceScatter)                \
    X(ncclCommInitRankConfig) X(ncclBroadcast) X(ncclGetErrorString) X(ncclGetLastError)
#define NAME(f) #f,
#define SLOT(f) (void **)&bp_nccl_fns.f,
static const char *const names[] = {NCCL_FNS(NAME)};
static void **const slots[] = {NCCL_FNS(SLOT)};
#undef NAME
#undef SLOT

static bp_dl_lib_t nccl = {"libnccl.so.2", "BP_NCCL_LIB", "NCCL", "NCCL 2.14 or later",
                           names, slots, sizeof names / sizeof names[0], &bp_nccl_fns,
                           sizeof bp_nccl_fns, PTHREAD_ONCE_INIT, ""};

static void load(void)
{
    bp_dl_open(&nccl);
}

bp_status bp_nccl_load(bp_error_t *err)
{
    return bp_dl_loaded(&nccl, load, err);
}

int bp_nccl_version_code(void)
{
    int v = 0;
    if (!bp_nccl_fns.ncclGetVersion || BP_NCCL(ncclGetVersion)(&v) != 0 || v <= 0)
        return 0;
    return v;
}

void bp_nccl_version(char *out, size_t n)
{
    int v = bp_nccl_version_code();
    if (!v)
        snprintf(out, n, "unknown");
    else /* NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9 */
        snprintf(out, n, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

void bp_nccl_file(char *out, size_t n)
{
    Dl_info info;
    void *f = (void *)bp_nccl_fns.ncclGetVersion;
    snprintf(out, n, "%s", f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "");
}

void bp_nccl_config_init(bp_nccl_config_t *c)
{
    c->size = sizeof *c;
    c->magic = BP_NCCL_CONFIG_MAGIC;
    c->version = BP_NCCL_CONFIG_VERSION;
    c->blocking = c->cgaClusterSize = c->minCTAs = c->maxCTAs = c->splitShare =
        BP_NCCL_UNDEF_INT;
    c->netName = NULL;
}

bp_status bp_nccl_fail(bp_error_t *err, const char *call, bp_nccl_result_t r,
                       bp_nccl_comm_t comm)
{
    const char *last = comm && bp_nccl_fns.ncclGetLastError ? BP_NCCL(ncclGetLastError)(comm)
                                                            : NULL;
    return bp_error_set(err, BP_EINTERNAL, "%s failed: %s (NCCL error %d)%s%s", call,
                        bp_nccl_fns.ncclGetErrorString ? BP_NCCL(ncclGetErrorString)(r)
                                                       : "?",
                        r, last && *last ? ": " : "", last && *last ? last : "");
}
