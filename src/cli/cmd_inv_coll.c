/* bitprobe invariance --collective: where all-reduce, reduce-scatter and
 * all-gather change the bits, over message sizes and NCCL configurations
 * (coll.h, coll_run.h).
 *
 * Engines: nccl, one process per GPU: without a launcher's variables
 * bitprobe starts W copies of itself (ranks.h) and returns the worst of
 * their exit statuses; under torchrun, srun or mpirun this process is one
 * rank.  Every rank sweeps; rank 0 fills the maps, asks the oracle,
 * compares fresh processes and writes the reports.  emulate: the CPU's
 * model of NCCL's orders (coll_emu.h), one process, every rank count of
 * --ranks.  auto: nccl where W GPUs and NCCL are here, else emulate.
 *
 * Fresh processes (--processes P): after its sweep rank 0 starts this
 * command again P times with --digests and without the rank variables,
 * each a whole new job (nccl: W new processes) holding an allocation of
 * another size for its whole run (BP_COLL_ALLOC=p), and compares every
 * cell's digest with its own. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd_invariance.h"
#include "coll_run.h"
#include "config.h"
#include "inv_proc.h"
#include "ranks.h"

extern char **environ;

typedef struct {
    bp_coll_sweep_opts_t so;
    bp_coll_cfg_t cfg[256];
    int worlds[16];
    int nworlds;
} plan_t;

static int usage(const char *fmt, const char *arg)
{
    return bp_cli_usage_error("invariance", fmt, arg);
}

static int plan(const bp_inv_coll_cl_t *c, bool nccl, plan_t *p)
{
    memset(p, 0, sizeof *p);
    bp_coll_sweep_opts_t *o = &p->so;
    char buf[256], *items[16];
    snprintf(buf, sizeof buf, "%s", c->collective);
    int n = bp_cli_split(buf, items, 16);
    for (int i = 0; i < n; i++) {
        bp_coll_kind_t k;
        if (!strcmp(items[i], "all")) {
            for (int j = 0; j < BP_COLL_NKINDS; j++)
                o->kinds[j] = (bp_coll_kind_t)j;
            o->nkinds = BP_COLL_NKINDS;
            continue;
        }
        if (!bp_coll_kind_parse(items[i], &k))
            return usage("--collective: unknown collective '%s' (all_reduce, reduce_scatter, "
                         "all_gather, all)", items[i]);
        bool dup = false;
        for (int j = 0; j < o->nkinds; j++)
            dup |= o->kinds[j] == k;
        if (!dup && o->nkinds < BP_COLL_NKINDS)
            o->kinds[o->nkinds++] = k;
    }
    if (!o->nkinds)
        return usage("--collective needs a collective, not '%s'", c->collective);
    snprintf(buf, sizeof buf, "%s", c->redop ? c->redop : "sum");
    n = bp_cli_split(buf, items, 16);
    for (int i = 0; i < n; i++) {
        bp_coll_redop_t op;
        if (!strcmp(items[i], "all")) {
            o->ops[0] = BP_COLL_SUM;
            o->ops[1] = BP_COLL_AVG;
            o->nops = 2;
            continue;
        }
        if (!bp_coll_redop_parse(items[i], &op))
            return usage("--redop: unknown reduction '%s' (sum, avg, all)", items[i]);
        bool dup = false;
        for (int j = 0; j < o->nops; j++)
            dup |= o->ops[j] == op;
        if (!dup && o->nops < BP_COLL_NOPS)
            o->ops[o->nops++] = op;
    }
    if (!o->nops)
        return usage("--redop needs a reduction, not '%s'", c->redop);
    memcpy(o->dtypes, c->dtypes, sizeof o->dtypes);
    o->ndtypes = c->ndtypes;
    o->bytes = c->bytes ? c->bytes : nccl ? "1K:256M" : "1K:1M";
    bp_error_t err = {0};
    bp_coll_size_t *sz;
    size_t nsz;
    if (bp_coll_sizes_parse(o->bytes, 4, &sz, &nsz, &err))
        return bp_cli_usage_error("invariance", "%s", err.msg);
    free(sz);
    size_t ncfg;
    if (bp_coll_cfg_expand(c->algo ? c->algo : nccl ? "all" : "Ring,Tree",
                           c->proto ? c->proto : "all",
                           c->channels ? c->channels : "default", p->cfg, 256, &ncfg, &err))
        return bp_cli_usage_error("invariance", "%s", err.msg);
    o->cfg = p->cfg;
    o->ncfg = ncfg;
    o->repeat = c->repeat;
    o->probe = true;
    o->policy = c->policy;
    return -1;
}

/* --ranks: a list of counts (the emulation) or one (nccl). */
static int worlds(const bp_inv_coll_cl_t *c, plan_t *p, int dflt)
{
    if (!c->ranks) {
        p->worlds[0] = dflt;
        p->nworlds = 1;
        return -1;
    }
    char buf[128], *items[17];
    snprintf(buf, sizeof buf, "%s", c->ranks);
    int n = bp_cli_split(buf, items, 17);
    if (n < 1 || n > 16)
        return usage("--ranks: 1 to 16 rank counts, not '%s'", c->ranks);
    for (int i = 0; i < n; i++) {
        long long v;
        if (!bp_cli_int(items[i], 1, BP_COLL_MAX_WORLD, &v))
            return usage("--ranks: '%s' is not a rank count from 1 to 64", items[i]);
        p->worlds[p->nworlds++] = (int)v;
    }
    return -1;
}

static void progress(void *ctx, const bp_coll_map_t *m, size_t s, size_t c)
{
    (void)ctx;
    char t[128], name[64], sz[32];
    bp_coll_map_title(m, t, sizeof t);
    bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
    bp_coll_bytes_format(m->sz[s].bytes, sz, sizeof sz);
    bp_cli_progress("\r%s %s %s          ", t, name, sz);
}

/* The environment of a fresh job: the rank variables dropped (it launches
 * its own ranks), BP_COLL_ALLOC set. */
static char **fresh_env(int pattern, char *alloc, size_t n)
{
    size_t k = 0;
    while (environ[k])
        k++;
    char **env = calloc(k + 2, sizeof *env);
    if (!env)
        return NULL;
    static const char *const drop[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=",
                                       "BP_RANKS_CHILD=", "BP_NCCL_ID=", "BP_COLL_ALLOC=",
                                       "OMPI_COMM_WORLD_RANK=", "OMPI_COMM_WORLD_SIZE=",
                                       "SLURM_PROCID=", "SLURM_NTASKS=", NULL};
    size_t j = 0;
    for (size_t i = 0; i < k; i++) {
        bool skip = false;
        for (int d = 0; drop[d] && !skip; d++)
            skip = !strncmp(environ[i], drop[d], strlen(drop[d]));
        if (!skip)
            env[j++] = environ[i];
    }
    snprintf(alloc, n, "BP_COLL_ALLOC=%d", pattern);
    env[j++] = alloc;
    env[j] = NULL;
    return env;
}

/* Rank 0 (or the emulation) after the sweep: fresh processes, the oracle,
 * the reports; the exit status. */
static int finish(const bp_inv_coll_cl_t *c, bp_inv_study_t *st, int argc, char **argv)
{
    if (c->digests)
        return bp_inv_proc_write_digests(stdout, st) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
    bp_error_t err = {0};
    if (c->processes) {
        char *args[128], alloc[32];
        bp_inv_child_args(argc, argv, args, 128);
        for (int p = 0; p < c->processes; p++) {
            bp_cli_progress("\rfresh process %d of %d   ", p + 1, c->processes);
            char **env = fresh_env(p + 1, alloc, sizeof alloc);
            bp_status s = env ? bp_inv_proc_compare(args, env, st, &err)
                              : bp_error_set(&err, BP_ENOMEM, "out of memory");
            free(env);
            bp_cli_progress("\r%40s\r", "");
            if (s)
                return bp_cli_fail(&err);
        }
    }
    for (size_t i = 0; c->oracle && i < st->ncmaps; i++) {
        bp_cli_progress("\roracle: map %zu of %zu   ", i + 1, st->ncmaps);
        bp_status s = bp_coll_map_arbitrate(&st->cmaps[i], c->verbose, c->threads, &err);
        bp_cli_progress("\r%40s\r", "");
        if (s)
            return bp_cli_fail(&err);
    }
    for (size_t i = 0; i < st->ncmaps; i++)
        bp_coll_map_finish(&st->cmaps[i]);
    int rc = bp_inv_reports(&c->rep, c->svg, c->verbose, st, argc, argv);
    if (rc)
        return rc;
    return bp_inv_study_failures(st) ? BP_EXIT_DRIFT : BP_EXIT_OK;
}

static void study_init(const bp_inv_coll_cl_t *c, bp_inv_study_t *st)
{
    bp_inv_study_init(st);
    st->seed = c->seed;
    st->repeat = c->repeat;
    st->processes = c->processes;
    st->policy = c->policy;
}

static int emulate(const bp_inv_coll_cl_t *c, plan_t *p, const char *note, int argc,
                   char **argv)
{
    bp_inv_study_t st;
    study_init(c, &st);
    if (note)
        bp_inv_study_note(&st, "%s", note);
    p->so.progress = c->digests ? NULL : progress;
    int rc = -1;
    for (int i = 0; rc < 0 && i < p->nworlds; i++) {
        bp_coll_engine_t *e;
        bp_error_t err = {0};
        bp_coll_map_t *maps = NULL;
        size_t n = 0;
        if (bp_coll_engine_emulate(p->worlds[i], c->seed, &e, &err) ||
            bp_coll_sweep(e, &p->so, &maps, &n, &err) ||
            bp_inv_study_add_coll(&st, maps, n, &err))
            rc = bp_cli_fail(&err);
        bp_cli_progress_clear();
        free(maps);
        bp_coll_engine_close(e);
    }
    if (rc < 0)
        rc = finish(c, &st, argc, argv);
    bp_inv_study_free(&st);
    return rc;
}

#ifdef BP_HAVE_CUDA
/* This process is rank e->rank of an NCCL job. */
static int as_rank(const bp_inv_coll_cl_t *c, plan_t *p, const bp_ranks_env_t *env, int argc,
                   char **argv)
{
    bp_error_t err = {0};
    bp_nccl_id_t id;
    char path[PATH_MAX];
    const char *a = getenv("BP_COLL_ALLOC");
    int alloc = a ? atoi(a) : 0;
    bp_coll_engine_t *e = NULL;
    bp_coll_map_t *maps = NULL;
    size_t n = 0;
    p->so.progress = c->digests || env->rank ? NULL : progress;
    bp_status s = bp_cli_rank_id(env, &id, path, sizeof path, &err);
    if (!s)
        s = bp_coll_engine_nccl(env, &id, c->seed, alloc > 0 ? alloc : 0, &e, &err);
    if (!s)
        s = bp_coll_sweep(e, &p->so, &maps, &n, &err);
    bp_cli_progress_clear();
    bp_coll_engine_close(e); /* the GPUs are free before any fresh job starts */
    if (path[0] && env->rank == 0)
        unlink(path);
    if (s) {
        fprintf(stderr, "bitprobe invariance: rank %d: %s\n", env->rank, err.msg);
        return BP_EXIT_TROUBLE;
    }
    if (env->rank != 0) {
        for (size_t i = 0; i < n; i++)
            bp_coll_map_free(&maps[i]);
        free(maps);
        return BP_EXIT_OK;
    }
    bp_inv_study_t st;
    study_init(c, &st);
    int rc = bp_inv_study_add_coll(&st, maps, n, &err) ? bp_cli_fail(&err) : -1;
    free(maps);
    if (rc < 0)
        rc = finish(c, &st, argc, argv);
    bp_inv_study_free(&st);
    return rc;
}
#endif

/* How many GPUs are visible (0 without CUDA or a driver). */
static int gpus(void)
{
#ifdef BP_HAVE_CUDA
    bp_error_t err = {0};
    json_t *env = bp_be_cuda_env(&err);
    int n = env ? (int)json_array_size(json_object_get(env, "devices")) : 0;
    json_decref(env);
    return n;
#else
    return 0;
#endif
}

int cmd_invariance_coll(const bp_inv_coll_cl_t *c, int argc, char **argv)
{
    const char *eng = c->engine ? c->engine : "auto";
    if (strcmp(eng, "nccl") && strcmp(eng, "emulate") && strcmp(eng, "auto"))
        return usage("--collective runs on --engine nccl, emulate or auto, not '%s'", eng);
    bp_ranks_env_t env;
    bool found;
    bp_error_t err = {0};
    if (bp_ranks_env(&env, &found, &err))
        return bp_cli_fail(&err);
    plan_t *p = calloc(1, sizeof *p);
    if (!p)
        return BP_EXIT_TROUBLE;
    int rc = -1;
    char note[256] = "";
    bool nccl = !strcmp(eng, "nccl");
    if (!strcmp(eng, "auto")) {
        /* nccl under a launcher, or where the ranks asked for have GPUs */
        int want = found ? env.world : 0, have = found ? 0 : gpus();
        if (!found && c->ranks)
            want = atoi(c->ranks);
        bool nccl_ok = !bp_nccl_load(&err);
        nccl = found || (have >= 2 && have >= want && nccl_ok);
        if (!nccl)
            snprintf(note, sizeof note, "engine emulate: %s", !have ? "no GPU here"
                     : !nccl_ok ? "NCCL could not be loaded" : "fewer GPUs than ranks");
    }
    if ((rc = plan(c, nccl, p)) >= 0)
        goto out;
    if (!nccl) {
        if ((rc = worlds(c, p, found ? env.world : 4)) < 0)
            rc = emulate(c, p, note[0] ? note : NULL, argc, argv);
        goto out;
    }
    if ((rc = worlds(c, p, found ? env.world : gpus())) >= 0)
        goto out;
    if (p->nworlds != 1) {
        rc = usage("--engine nccl: one rank count per run (the ranks of a run are one NCCL "
                   "job), not '%s'", c->ranks);
        goto out;
    }
    int W = p->worlds[0];
    if (W < 2 && !found) {
        fprintf(stderr, "bitprobe invariance: --engine nccl needs 2 or more GPUs, one per "
                        "rank: %d visible\n", W);
        rc = BP_EXIT_TROUBLE;
        goto out;
    }
    if (found && env.world != W) {
        fprintf(stderr, "bitprobe invariance: --ranks %d, but the %s launcher started %d "
                        "rank%s\n", W, env.launcher, env.world, env.world == 1 ? "" : "s");
        rc = BP_EXIT_TROUBLE;
        goto out;
    }
#ifdef BP_HAVE_CUDA
    rc = found ? as_rank(c, p, &env, argc, argv)
               : bp_cli_ranks_launch("invariance", W, argc, argv);
#else
    rc = bp_cli_ranks_launch("invariance", W, argc, argv);
#endif
out:
    free(p);
    return rc;
}
