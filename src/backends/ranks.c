/* Ranks: launchers' variables, the unique id's journey, bitprobe's own
 * launch (ranks.h). */
#include "ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "safeopen.h"
#include "timing.h"

extern char **environ;

/* A variable as a number in [0, max]; *set false when unset. */
static bp_status num(const char *name, long max, int *out, bool *set, bp_error_t *err)
{
    const char *v = getenv(name);
    *set = v != NULL;
    if (!v)
        return BP_OK;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < 0 || x > max)
        return bp_error_set(err, BP_EINPUT, "%s='%s' is not a number from 0 to %ld", name, v,
                            max);
    *out = (int)x;
    return BP_OK;
}

bp_status bp_ranks_env(bp_ranks_env_t *e, bool *found, bp_error_t *err)
{
    static const struct {
        const char *rank, *world, *local, *who;
    } sets[] = {
        {"RANK", "WORLD_SIZE", "LOCAL_RANK", "torchrun"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
         "Open MPI"},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "Slurm"},
    };
    memset(e, 0, sizeof *e);
    *found = false;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        bool sr, sw, sl;
        bp_status st;
        if ((st = num(sets[i].rank, 1 << 20, &e->rank, &sr, err)) ||
            (st = num(sets[i].world, 1 << 20, &e->world, &sw, err)) ||
            (st = num(sets[i].local, 1 << 20, &e->local_rank, &sl, err)))
            return st;
        if (!sr && !sw)
            continue;
        if (!sr || !sw)
            return bp_error_set(err, BP_EINPUT, "%s is set but not %s", sr ? sets[i].rank
                                                                         : sets[i].world,
                                sr ? sets[i].world : sets[i].rank);
        if (e->world < 1 || e->rank >= e->world)
            return bp_error_set(err, BP_EINPUT, "%s=%d is not below %s=%d", sets[i].rank,
                                e->rank, sets[i].world, e->world);
        /* One process per GPU of one host when the launcher does not
         * say which GPU is local. */
        if (!sl)
            e->local_rank = e->rank;
        const char *child = getenv("BP_RANKS_CHILD");
        e->self = i == 0 && child && strcmp(child, "1") == 0;
        e->launcher = e->self ? "bitprobe" : sets[i].who;
        *found = true;
        return BP_OK;
    }
    return BP_OK;
}

void bp_ranks_id_hex(const bp_nccl_id_t *id, char out[BP_RANKS_ID_HEX])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < BP_NCCL_ID_BYTES; i++) {
        unsigned char b = (unsigned char)id->internal[i];
        out[2 * i] = hex[b >> 4];
        out[2 * i + 1] = hex[b & 15];
    }
    out[2 * BP_NCCL_ID_BYTES] = '\0';
}

static int nibble(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bp_status bp_ranks_id_parse(const char *hex, bp_nccl_id_t *id, bp_error_t *err)
{
    size_t len = strcspn(hex, "\n");
    if (len != 2 * BP_NCCL_ID_BYTES)
        return bp_error_set(err, BP_EINPUT, "an NCCL unique id is %d hex digits, not %zu",
                            2 * BP_NCCL_ID_BYTES, len);
    for (int i = 0; i < BP_NCCL_ID_BYTES; i++) {
        int a = nibble(hex[2 * i]), b = nibble(hex[2 * i + 1]);
        if (a < 0 || b < 0)
            return bp_error_set(err, BP_EINPUT, "an NCCL unique id has a non-hex digit at %d",
                                2 * i + (a < 0 ? 0 : 1));
        id->internal[i] = (char)(a << 4 | b);
    }
    return BP_OK;
}

/* A job name safe in a file name. */
static void clean(char *s)
{
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              *s == '.' || *s == '-' || *s == '_'))
            *s = '_';
}

bp_status bp_ranks_id_path(char *out, size_t n, bp_error_t *err)
{
    const char *f = getenv("BP_NCCL_ID_FILE");
    if (f && *f) {
        if (strlen(f) >= n)
            return bp_error_set(err, BP_EINPUT, "BP_NCCL_ID_FILE is too long");
        snprintf(out, n, "%s", f);
        return BP_OK;
    }
    char job[256] = "";
    const char *v;
    if ((v = getenv("TORCHELASTIC_RUN_ID")) && *v)
        snprintf(job, sizeof job, "%s", v);
    else if ((v = getenv("SLURM_JOB_ID")) && *v)
        snprintf(job, sizeof job, "%s.%s", v,
                 getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "0");
    else if ((v = getenv("OMPI_MCA_ess_base_jobid")) && *v)
        snprintf(job, sizeof job, "%s", v);
    else if (getenv("MASTER_ADDR") && getenv("MASTER_PORT"))
        snprintf(job, sizeof job, "%s-%s", getenv("MASTER_ADDR"), getenv("MASTER_PORT"));
    if (!job[0])
        return bp_error_set(err, BP_EINPUT, "under a launcher, the ranks exchange NCCL's "
                            "unique id through a file: set BP_NCCL_ID_FILE to a path every "
                            "rank sees (or run under torchrun, srun or mpirun, whose job "
                            "variables name one)");
    clean(job);
    const char *tmp = getenv("TMPDIR");
    int len = snprintf(out, n, "%s/bitprobe-nccl-%s.id", tmp && *tmp ? tmp : "/tmp", job);
    if (len < 0 || (size_t)len >= n)
        return bp_error_set(err, BP_EINPUT, "TMPDIR is too long");
    return BP_OK;
}

bp_status bp_ranks_id_publish(const char *path, const bp_nccl_id_t *id, bp_error_t *err)
{
    char tmp[PATH_MAX + 32], hex[BP_RANKS_ID_HEX];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    bp_ranks_id_hex(id, hex);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return bp_error_set(err, BP_EIO, "cannot write '%s': %s", tmp, strerror(errno));
    bool ok = fprintf(f, "%s\n", hex) > 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        bp_error_set(err, BP_EIO, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
        return BP_EIO;
    }
    return BP_OK;
}

bp_status bp_ranks_id_wait(const char *path, double timeout_s, bp_nccl_id_t *id,
                           bp_error_t *err)
{
    double end = bp_timing_now() + timeout_s;
    for (;;) {
        const char *why;
        FILE *f = bp_safe_fopen(path, &why);
        if (f) {
            char line[2 * BP_NCCL_ID_BYTES + 8] = "";
            bool got = fgets(line, sizeof line, f) != NULL;
            fclose(f);
            /* written by rename: whole, or not there */
            if (got)
                return bp_ranks_id_parse(line, id, err) ? bp_error_prefix(err, "'%s': ", path)
                                                        : BP_OK;
        }
        if (bp_timing_now() > end)
            return bp_error_set(err, BP_EUNAVAIL, "rank 0 did not publish NCCL's unique id in "
                                "'%s' within %.0f s (BP_NCCL_TIMEOUT)", path, timeout_s);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

double bp_ranks_timeout(void)
{
    const char *v = getenv("BP_NCCL_TIMEOUT");
    char *end;
    double t = v ? strtod(v, &end) : 0;
    return v && *v && !*end && t > 0 ? t : 120;
}

size_t bp_ranks_gather_count(size_t n, int world)
{
    /* the longest of [r*n/W, (r+1)*n/W): ceil(n / W) */
    return world > 0 ? (n + (size_t)world - 1) / (size_t)world : 0;
}

static int child_status(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws) > 2 ? 2 : WEXITSTATUS(ws);
    return 2;
}

bp_status bp_ranks_launch(int world, char **argv, const bp_nccl_id_t *id, double grace_s,
                          int *status, bp_error_t *err)
{
    char hex[BP_RANKS_ID_HEX];
    bp_ranks_id_hex(id, hex);
    pid_t *pid = calloc((size_t)world, sizeof *pid);
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **env = calloc(nenv + 8, sizeof *env);
    char vr[32], vw[32], vl[32], vid[BP_RANKS_ID_HEX + 16];
    if (!pid || !env) {
        free(pid);
        free(env);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    /* the parent's environment without the variables the ranks get */
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        static const char *const ours[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=",
                                           "BP_RANKS_CHILD=", "BP_NCCL_ID=", NULL};
        bool drop = false;
        for (int j = 0; ours[j] && !drop; j++)
            drop = strncmp(environ[i], ours[j], strlen(ours[j])) == 0;
        if (!drop)
            env[k++] = environ[i];
    }
    env[k] = vr;
    env[k + 1] = vw;
    env[k + 2] = vl;
    env[k + 3] = (char *)"BP_RANKS_CHILD=1";
    env[k + 4] = vid;
    env[k + 5] = NULL;
    snprintf(vw, sizeof vw, "WORLD_SIZE=%d", world);
    snprintf(vid, sizeof vid, "BP_NCCL_ID=%s", hex);
    bp_status st = BP_OK;
    int started = 0;
    for (int r = 0; r < world; r++) {
        snprintf(vr, sizeof vr, "RANK=%d", r);
        snprintf(vl, sizeof vl, "LOCAL_RANK=%d", r);
        int e = posix_spawn(&pid[r], "/proc/self/exe", NULL, NULL, argv, env);
        if (e) {
            st = bp_error_set(err, BP_EUNAVAIL, "cannot start rank %d: %s", r, strerror(e));
            break;
        }
        started++;
    }
    int worst = st ? 2 : 0, running = started;
    double deadline = st ? bp_timing_now() + grace_s : -1;
    while (running > 0) {
        int ws;
        pid_t p = waitpid(-1, &ws, deadline < 0 ? 0 : WNOHANG);
        if (p > 0) {
            for (int r = 0; r < started; r++)
                if (pid[r] == p) {
                    pid[r] = 0;
                    running--;
                    int s = child_status(ws);
                    worst = s > worst ? s : worst;
                    if (s == 2 && deadline < 0)
                        deadline = bp_timing_now() + grace_s;
                }
            continue;
        }
        if (p < 0 && errno != EINTR)
            break;
        if (deadline >= 0 && bp_timing_now() > deadline) {
            for (int r = 0; r < started; r++)
                if (pid[r] > 0)
                    kill(pid[r], SIGTERM);
            deadline = bp_timing_now() + 3600; /* once */
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    *status = worst;
    free(pid);
    free(env);
    return st;
}
