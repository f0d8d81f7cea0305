/* Tests of the ranks' plumbing (ranks.h, nccl_dl.h) without a GPU: the
 * launchers' variables, the unique id in hex and through a file, the
 * all-gather's padding, bitprobe's own launch of W processes (this test
 * binary, re-executed: a copy that sees BP_RANKS_CHILD acts as a rank and
 * reports what it was given), and NCCL's declarations against nccl.h
 * where the toolkit has it.  Expected values are hand-derived. */
#include <check.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "nccl_dl.h"
#include "ranks.h"
#include "stack.h"
#include "stack_int.h"

#if defined(BP_HAVE_CUDA) && defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert(sizeof(ncclUniqueId) == sizeof(bp_nccl_id_t), "ncclUniqueId");
_Static_assert(NCCL_UNIQUE_ID_BYTES == BP_NCCL_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
/* as ints: the two sides are different enums */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(ncclInt32, BP_NCCL_INT32) && SAME(ncclInt64, BP_NCCL_INT64), "int types");
_Static_assert(SAME(ncclFloat16, BP_NCCL_FLOAT16) && SAME(ncclFloat32, BP_NCCL_FLOAT32) &&
                   SAME(ncclFloat64, BP_NCCL_FLOAT64) && SAME(ncclBfloat16, BP_NCCL_BFLOAT16),
               "float types");
_Static_assert(SAME(ncclSum, BP_NCCL_SUM) && SAME(ncclSuccess, 0), "sum, success");
_Static_assert(sizeof(ncclResult_t) == sizeof(bp_nccl_result_t), "ncclResult_t");
_Static_assert(NCCL_MAJOR == 2, "NCCL 2");
_Static_assert(SAME(ncclAvg, BP_NCCL_AVG) && SAME(ncclMax, BP_NCCL_MAX), "avg, max");
/* the prefix of ncclConfig_t that bitprobe fills, field by field */
#define AT(f) (offsetof(ncclConfig_t, f) == offsetof(bp_nccl_config_t, f))
_Static_assert(AT(size) && AT(magic) && AT(version) && AT(blocking) && AT(cgaClusterSize) &&
                   AT(minCTAs) && AT(maxCTAs) && AT(netName) && AT(splitShare),
               "ncclConfig_t's first fields");
_Static_assert(sizeof(bp_nccl_config_t) <= sizeof(ncclConfig_t), "a prefix");
_Static_assert(NCCL_CONFIG_UNDEF_INT == BP_NCCL_UNDEF_INT, "NCCL_CONFIG_UNDEF_INT");
_Static_assert(NCCL_VERSION(2, 17, 0) == BP_NCCL_CONFIG_VERSION, "2.17's version code");
#define HAVE_NCCL_H 1
#endif
#endif

static void clear_env(void)
{
    static const char *const vars[] = {
        "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
        "BP_RANKS_CHILD", "BP_NCCL_ID", "BP_NCCL_ID_FILE", "TORCHELASTIC_RUN_ID",
        "SLURM_JOB_ID", "SLURM_STEP_ID", "OMPI_MCA_ess_base_jobid", "MASTER_ADDR",
        "MASTER_PORT", NULL};
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
}

START_TEST(test_env)
{
    bp_ranks_env_t e;
    bool found;
    bp_error_t err = {0};
    clear_env();
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert(!found);
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("LOCAL_RANK", "1", 1);
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert(found && !e.self);
    ck_assert_int_eq(e.rank, 3);
    ck_assert_int_eq(e.world, 8);
    ck_assert_int_eq(e.local_rank, 1);
    ck_assert_str_eq(e.launcher, "torchrun");
    setenv("BP_RANKS_CHILD", "1", 1);
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert(e.self);
    ck_assert_str_eq(e.launcher, "bitprobe");
    /* without LOCAL_RANK: one host, the rank is the GPU */
    clear_env();
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert_str_eq(e.launcher, "Open MPI");
    ck_assert_int_eq(e.local_rank, 2);
    clear_env();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("SLURM_LOCALID", "0", 1);
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert_str_eq(e.launcher, "Slurm");
    /* torchrun's variables win over Slurm's (torchrun inside srun) */
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_OK);
    ck_assert_str_eq(e.launcher, "torchrun");
    ck_assert_int_eq(e.rank, 1);
    /* what is wrong is named */
    static const struct {
        const char *rank, *world, *msg;
    } bad[] = {
        {"2", "2", "RANK=2 is not below WORLD_SIZE=2"},
        {"x", "2", "RANK='x' is not a number"},
        {"1", NULL, "RANK is set but not WORLD_SIZE"},
        {NULL, "4", "WORLD_SIZE is set but not RANK"},
        {"0", "0", "RANK=0 is not below WORLD_SIZE=0"},
        {"-1", "2", "RANK='-1' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_env();
        if (bad[i].rank)
            setenv("RANK", bad[i].rank, 1);
        if (bad[i].world)
            setenv("WORLD_SIZE", bad[i].world, 1);
        ck_assert_int_eq(bp_ranks_env(&e, &found, &err), BP_EINPUT);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "%zu: '%s'", i, err.msg);
    }
    clear_env();
}
END_TEST

/* bp_backend_pin_gpu: one GPU shown to CUDA, by CUDA_VISIBLE_DEVICES's
 * own entries where it is set; nothing where it cannot name the device. */
static bool pin(const char *vis, const char *all, int gpu, const char *gpus,
                bp_backend_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->gpu = gpu;
    o->gpus = gpus;
    if (vis)
        setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    if (all)
        setenv("BP_CUDA_ALL_DEVICES", all, 1);
    else
        unsetenv("BP_CUDA_ALL_DEVICES");
    return bp_backend_pin_gpu(o);
}

static const char *vis(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    return v ? v : "(unset)";
}

START_TEST(test_pin_gpu)
{
    bp_backend_opts_t o;
#ifdef BP_HAVE_CUDA
    ck_assert(pin("3,5", NULL, 1, NULL, &o));
    ck_assert_str_eq(vis(), "5");
    ck_assert(o.pinned && o.gpu == 0 && o.gpu_given == 1);
    ck_assert(!bp_backend_pin_gpu(&o)); /* once */
    ck_assert_str_eq(vis(), "5");
    ck_assert(pin("3,5", NULL, 0, NULL, &o));
    ck_assert_str_eq(vis(), "3");
    ck_assert(pin("GPU-8f3a,MIG-77c1", NULL, 1, NULL, &o));
    ck_assert_str_eq(vis(), "MIG-77c1");
    ck_assert(pin("0", "0", 0, NULL, &o)); /* BP_CUDA_ALL_DEVICES=0: off */
    /* beyond the entries, several GPUs, asked not to, hidden: unchanged */
    ck_assert(!pin("3,5", NULL, 2, NULL, &o) && !o.pinned && o.gpu == 2);
    ck_assert_str_eq(vis(), "3,5");
    ck_assert(!pin("3,5", NULL, 0, "all", &o));
    ck_assert_str_eq(vis(), "3,5");
    ck_assert(!pin("3,5", "1", 0, NULL, &o));
    ck_assert_str_eq(vis(), "3,5");
    ck_assert(!pin("", NULL, 0, NULL, &o));
    ck_assert_str_eq(vis(), "");
    ck_assert(!pin("3,,5", NULL, 1, NULL, &o));
    /* unset: the driver's own list of GPUs decides */
    bool listed = access("/proc/driver/nvidia/gpus", R_OK) == 0;
    ck_assert(pin(NULL, NULL, 0, NULL, &o) == listed);
    if (listed)
        ck_assert_str_eq(vis(), "0");
    ck_assert(!pin(NULL, NULL, 4096, NULL, &o));
#else
    ck_assert(!pin("3,5", NULL, 1, NULL, &o)); /* no CUDA: nothing to pin */
    ck_assert_str_eq(vis(), "3,5");
#endif
}
END_TEST

START_TEST(test_id_hex)
{
    bp_nccl_id_t a, b;
    char hex[BP_RANKS_ID_HEX];
    bp_error_t err = {0};
    for (int i = 0; i < BP_NCCL_ID_BYTES; i++)
        a.internal[i] = (char)(i * 37 + 5);
    bp_ranks_id_hex(&a, hex);
    ck_assert_uint_eq(strlen(hex), 256);
    ck_assert(strncmp(hex, "052a4f74", 8) == 0); /* 5, 42, 79, 116 */
    ck_assert_int_eq(bp_ranks_id_parse(hex, &b, &err), BP_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    hex[10] = 'g';
    ck_assert_int_eq(bp_ranks_id_parse(hex, &b, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "non-hex digit at 10"));
    ck_assert_int_eq(bp_ranks_id_parse("abcd", &b, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "is 256 hex digits, not 4"));
}
END_TEST

START_TEST(test_id_file)
{
    char path[512], dir[] = "/tmp/bp-ranks-XXXXXX";
    bp_error_t err = {0};
    ck_assert_ptr_nonnull(mkdtemp(dir));
    clear_env();
    ck_assert_int_eq(bp_ranks_id_path(path, sizeof path, &err), BP_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "set BP_NCCL_ID_FILE"));
    setenv("TMPDIR", dir, 1);
    setenv("MASTER_ADDR", "10.0.0.1", 1);
    setenv("MASTER_PORT", "29500", 1);
    ck_assert_int_eq(bp_ranks_id_path(path, sizeof path, &err), BP_OK);
    char want[600];
    snprintf(want, sizeof want, "%s/bitprobe-nccl-10.0.0.1-29500.id", dir);
    ck_assert_str_eq(path, want);
    setenv("TORCHELASTIC_RUN_ID", "run/7 x", 1); /* the job names the file, made safe */
    ck_assert_int_eq(bp_ranks_id_path(path, sizeof path, &err), BP_OK);
    snprintf(want, sizeof want, "%s/bitprobe-nccl-run_7_x.id", dir);
    ck_assert_str_eq(path, want);
    setenv("BP_NCCL_ID_FILE", "/shared/id", 1);
    ck_assert_int_eq(bp_ranks_id_path(path, sizeof path, &err), BP_OK);
    ck_assert_str_eq(path, "/shared/id");
    /* rank 1 waits in a child while rank 0 publishes a little later */
    snprintf(path, sizeof path, "%s/id", dir);
    bp_nccl_id_t id, got;
    for (int i = 0; i < BP_NCCL_ID_BYTES; i++)
        id.internal[i] = (char)(255 - i);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        bp_error_t e2 = {0};
        if (bp_ranks_id_wait(path, 30, &got, &e2) || memcmp(&got, &id, sizeof id) != 0)
            _exit(1);
        _exit(0);
    }
    usleep(200000);
    ck_assert_int_eq(bp_ranks_id_publish(path, &id, &err), BP_OK);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    /* nobody publishes: the wait ends, saying where it waited */
    snprintf(path, sizeof path, "%s/never", dir);
    ck_assert_int_eq(bp_ranks_id_wait(path, 0.2, &got, &err), BP_EUNAVAIL);
    ck_assert_ptr_nonnull(strstr(err.msg, "did not publish"));
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    clear_env();
    unsetenv("TMPDIR");
}
END_TEST

START_TEST(test_gather_count)
{
    /* shards [r*n/W, (r+1)*n/W): the longest is ceil(n/W), every shard
     * fits it, and the padded buffer holds all of them */
    ck_assert_uint_eq(bp_ranks_gather_count(10, 4), 3); /* 2, 3, 2, 3 */
    ck_assert_uint_eq(bp_ranks_gather_count(8, 4), 2);
    ck_assert_uint_eq(bp_ranks_gather_count(1, 8), 1);  /* seven empty shards */
    ck_assert_uint_eq(bp_ranks_gather_count(0, 8), 0);
    for (size_t n = 0; n < 200; n++)
        for (int W = 1; W <= 9; W++) {
            size_t cnt = bp_ranks_gather_count(n, W), total = 0, lo, hi, prev = 0;
            for (int r = 0; r < W; r++) {
                bp_stack_shard_range(n, W, r, &lo, &hi);
                ck_assert_uint_eq(lo, prev);
                ck_assert_uint_le(hi - lo, cnt);
                total += hi - lo;
                prev = hi;
            }
            ck_assert_uint_eq(total, n);
            ck_assert(cnt * (size_t)W >= n && (cnt == 0 || (cnt - 1) * (size_t)W < n));
        }
}
END_TEST

/* A copy started by bp_ranks_launch: writes what it got to
 * $BP_TEST_DIR/rank<r> and exits with the status $BP_TEST_STATUS_<r> asks
 * ("hang": sleeps until killed). */
static int as_child(void)
{
    bp_ranks_env_t e;
    bool found;
    bp_error_t err = {0};
    if (bp_ranks_env(&e, &found, &err) || !found || !e.self)
        return 3;
    char path[512], var[64];
    snprintf(path, sizeof path, "%s/rank%d", getenv("BP_TEST_DIR"), e.rank);
    FILE *f = fopen(path, "w");
    if (!f)
        return 3;
    fprintf(f, "%d %d %d %s\n", e.rank, e.world, e.local_rank, getenv("BP_NCCL_ID"));
    fclose(f);
    snprintf(var, sizeof var, "BP_TEST_STATUS_%d", e.rank);
    const char *s = getenv(var);
    if (s && strcmp(s, "hang") == 0)
        for (;;)
            pause();
    return s ? atoi(s) : 0;
}

static int launch(int W, const char *dir, int *status)
{
    char *argv[] = {(char *)"check_ranks", NULL};
    bp_nccl_id_t id;
    bp_error_t err = {0};
    memset(&id, 0xab, sizeof id);
    setenv("BP_TEST_DIR", dir, 1);
    setenv("RANK", "99", 1); /* the parent's own values must not leak */
    bp_status st = bp_ranks_launch(W, argv, &id, 0.5, status, &err);
    unsetenv("RANK");
    return st;
}

START_TEST(test_launch)
{
    char dir[] = "/tmp/bp-launch-XXXXXX", path[600], line[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    clear_env();
    int status;
    ck_assert_int_eq(launch(3, dir, &status), BP_OK);
    ck_assert_int_eq(status, 0);
    for (int r = 0; r < 3; r++) {
        snprintf(path, sizeof path, "%s/rank%d", dir, r);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        fclose(f);
        char want[32];
        snprintf(want, sizeof want, "%d 3 %d abababab", r, r);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "rank %d: %s", r, line);
    }
    /* the worst status wins: 1 over 0, 2 over 1 */
    setenv("BP_TEST_STATUS_1", "1", 1);
    ck_assert_int_eq(launch(3, dir, &status), BP_OK);
    ck_assert_int_eq(status, 1);
    setenv("BP_TEST_STATUS_2", "2", 1);
    ck_assert_int_eq(launch(3, dir, &status), BP_OK);
    ck_assert_int_eq(status, 2);
    /* a rank that fails leaves the others its grace, then they are
     * stopped (a killed rank counts as trouble) */
    unsetenv("BP_TEST_STATUS_1");
    setenv("BP_TEST_STATUS_0", "hang", 1);
    ck_assert_int_eq(launch(3, dir, &status), BP_OK);
    ck_assert_int_eq(status, 2);
    unsetenv("BP_TEST_STATUS_0");
    unsetenv("BP_TEST_STATUS_2");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_nccl_load)
{
    bp_error_t err = {0};
    if (bp_nccl_load(&err)) {
        /* the message says what is missing and how to name another file */
        ck_assert_ptr_nonnull(strstr(err.msg, "NCCL could not be loaded"));
        fprintf(stderr, "check_ranks: no NCCL here (%s): its calls are not tried\n", err.msg);
        return;
    }
    char v[32];
    bp_nccl_version(v, sizeof v);
    ck_assert_msg(v[0] == '2' && v[1] == '.', "version '%s'", v);
#ifdef HAVE_NCCL_H
    char want[32];
    snprintf(want, sizeof want, "%d.%d.", NCCL_MAJOR, NCCL_MINOR);
    ck_assert_msg(strncmp(v, want, strlen(want)) == 0, "library %s, header %s", v, want);
#endif
    /* a unique id needs no GPU */
    bp_nccl_id_t a, b;
    ck_assert_int_eq(BP_NCCL(ncclGetUniqueId)(&a), 0);
    ck_assert_int_eq(BP_NCCL(ncclGetUniqueId)(&b), 0);
    ck_assert(memcmp(&a, &b, sizeof a) != 0);
    /* the collectives' calls resolved; a config as NCCL_CONFIG_INITIALIZER
     * leaves it, but at 2.17's version */
    ck_assert_ptr_nonnull(bp_nccl_fns.ncclReduceScatter);
    ck_assert_ptr_nonnull(bp_nccl_fns.ncclCommInitRankConfig);
    ck_assert_int_ge(bp_nccl_version_code(), 21400);
    bp_nccl_config_t c;
    bp_nccl_config_init(&c);
    ck_assert_uint_eq(c.size, sizeof c);
    ck_assert_uint_eq(c.magic, 0xcafebeefu);
    ck_assert_uint_eq(c.version, 21700);
    ck_assert_int_eq(c.minCTAs, BP_NCCL_UNDEF_INT);
    ck_assert_ptr_null(c.netName);
#ifdef HAVE_NCCL_H
    ncclConfig_t full = NCCL_CONFIG_INITIALIZER;
    ck_assert_int_eq(c.maxCTAs, full.maxCTAs);
    ck_assert_uint_eq(c.magic, full.magic);
#endif
    /* an NCCL failure is named with its call and NCCL's words */
    ck_assert_int_eq(bp_nccl_fail(&err, "ncclAllGather", 4, NULL), BP_EINTERNAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "ncclAllGather failed: "));
    ck_assert_ptr_nonnull(strstr(err.msg, "(NCCL error 4)"));
}
END_TEST

int main(void)
{
    const char *child = getenv("BP_RANKS_CHILD");
    if (child && strcmp(child, "1") == 0)
        return as_child();
    Suite *s = suite_create("ranks");
    TCase *tc = tcase_create("ranks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_env);
    tcase_add_test(tc, test_pin_gpu);
    tcase_add_test(tc, test_id_hex);
    tcase_add_test(tc, test_id_file);
    tcase_add_test(tc, test_gather_count);
    tcase_add_test(tc, test_launch);
    tcase_add_test(tc, test_nccl_load);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
