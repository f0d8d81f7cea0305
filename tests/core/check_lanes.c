/* Tests of the lanes (lanes.c) that run's backends work on: every lane runs
 * every job once, in order; no lane starts a job beyond the bounds (count
 * and cost budget) relative to the job being consumed; a failing begin or
 * job is reported for the right lane and job; stopping early joins lanes
 * that wait for the consumer.  Lanes of several threads: a group's jobs
 * run in order on one thread while other groups run beside them, begin
 * once per lane and end once per thread, the same bounds, and a failure
 * stops the lane at that job while the jobs before it still finish.
 * Late jobs: a lane of one thread runs its other jobs first, then the late
 * ones, each kind in order, within the same bounds (a consumer waiting
 * for a late job while the lane's next other job may not start does not
 * wait forever), and a late job's failure is reported at that job.
 * costly_first: a wide lane's threads start with the costliest groups
 * that may start, within the same bounds.
 * Expected values are the bounds and job numbers themselves, checked
 * inside the jobs under a lock by the test's own bookkeeping (which the
 * lanes cannot see). */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lanes.h"

#define NLANES 3
#define NJOBS 40

typedef struct {
    pthread_mutex_t mu;
    size_t consumed;            /* the test's copy of the consumer position */
    int ran[NLANES][NJOBS];     /* times lane k ran job j */
    size_t next[NLANES];        /* the job lane k must run next */
    bool out_of_order;
    size_t max_ahead;           /* most jobs a lane started beyond consumed */
    size_t max_cost;            /* most cost held from consumed to a started job */
    const size_t *cost;
    int fail_lane, fail_job;    /* job that fails (-1: none) */
    int fail_begin;             /* lane whose begin fails (-1: none) */
    int began[NLANES], ended[NLANES];
    bool slow_lane0;
    size_t seq[NLANES][NJOBS]; /* the jobs lane k started, in that order */
    size_t nseq[NLANES];
} ctx_t;

static void ctx_init(ctx_t *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->fail_lane = c->fail_job = c->fail_begin = -1;
}

static bp_status begin(void *arg, int k)
{
    ctx_t *c = arg;
    pthread_mutex_lock(&c->mu);
    c->began[k]++;
    pthread_mutex_unlock(&c->mu);
    return k == c->fail_begin ? BP_EUNAVAIL : BP_OK;
}

static bp_status job(void *arg, int k, size_t j)
{
    ctx_t *c = arg;
    if (c->slow_lane0 && k == 0)
        usleep(200);
    pthread_mutex_lock(&c->mu);
    c->ran[k][j]++;
    if (c->nseq[k] < NJOBS)
        c->seq[k][c->nseq[k]++] = j;
    if (c->next[k] != j)
        c->out_of_order = true;
    c->next[k] = j + 1;
    size_t ahead = j >= c->consumed ? j - c->consumed : 0;
    if (ahead > c->max_ahead)
        c->max_ahead = ahead;
    if (c->cost) {
        size_t sum = 0;
        for (size_t i = c->consumed; i <= j; i++)
            sum += c->cost[i];
        if (sum > c->max_cost)
            c->max_cost = sum;
    }
    pthread_mutex_unlock(&c->mu);
    return (int)j == c->fail_job && k == c->fail_lane ? BP_EINTERNAL : BP_OK;
}

static void end(void *arg, int k)
{
    ctx_t *c = arg;
    pthread_mutex_lock(&c->mu);
    c->ended[k]++;
    pthread_mutex_unlock(&c->mu);
}

/* Consumes every job (the test's position moves before the lanes'), and
 * returns the first job for which a wait reported a failure (-1: none);
 * *lane gets the lane reported. */
static int consume_all(ctx_t *c, bp_lanes_t *l, size_t njobs, int *lane)
{
    for (size_t j = 0; j < njobs; j++) {
        int f = bp_lanes_wait(l, j);
        if (f >= 0) {
            *lane = f;
            return (int)j;
        }
        for (int k = 0; k < NLANES; k++)
            ck_assert_int_eq(c->ran[k][j], 1);
        pthread_mutex_lock(&c->mu);
        c->consumed = j + 1;
        pthread_mutex_unlock(&c->mu);
        bp_lanes_release(l, j);
    }
    return -1;
}

static const bp_lane_fns_t *fns_for(ctx_t *c)
{
    static bp_lane_fns_t f;
    f = (bp_lane_fns_t){.begin = begin, .job = job, .end = end, .ctx = c};
    return &f;
}

START_TEST(t_all_in_order)
{
    ctx_t c;
    ctx_init(&c);
    c.slow_lane0 = true;
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, NJOBS, 4, NULL, 0, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    ck_assert_int_eq(bp_lanes_wait_begun(l), -1);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), -1);
    bp_lanes_finish(l);
    ck_assert(!c.out_of_order);
    for (int k = 0; k < NLANES; k++) {
        ck_assert_int_eq(c.began[k], 1);
        ck_assert_int_eq(c.ended[k], 1);
        for (int j = 0; j < NJOBS; j++)
            ck_assert_int_eq(c.ran[k][j], 1);
    }
    /* At most ahead - 1 jobs beyond the one being consumed. */
    ck_assert_uint_le(c.max_ahead, 3);
}
END_TEST

START_TEST(t_cost_budget)
{
    static size_t cost[NJOBS];
    for (int j = 0; j < NJOBS; j++)
        cost[j] = (j % 7 == 3) ? 50 : 1 + (size_t)j % 3;
    ctx_t c;
    ctx_init(&c);
    c.cost = cost;
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, NJOBS, NJOBS, cost, 100, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    int lane = -1;
    /* Jobs 0..3 cost 1+2+3+50 = 56, with 4..9: 56+2+3+1+2+3+1 = 68, job 10
     * (50) would make 118 > 100: exactly jobs 0 to 9 may run before anything
     * is consumed.  Lane 1 must get there (polled, no clock: a lane that
     * stalls short of it runs into the test case's timeout); that no lane
     * goes further is the cost bookkeeping's max_cost, checked below. */
    size_t ran0 = 0;
    while (ran0 < 10) {
        usleep(1000);
        pthread_mutex_lock(&c.mu);
        ran0 = c.next[1];
        pthread_mutex_unlock(&c.mu);
    }
    ck_assert_uint_eq(ran0, 10);
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), -1);
    bp_lanes_finish(l);
    ck_assert_uint_le(c.max_cost, 100);
    ck_assert(!c.out_of_order);
}
END_TEST

START_TEST(t_job_fails)
{
    ctx_t c;
    ctx_init(&c);
    c.fail_lane = 1;
    c.fail_job = 5;
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, NJOBS, 3, NULL, 0, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    ck_assert_int_eq(bp_lanes_wait_begun(l), -1);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), 5);
    ck_assert_int_eq(lane, 1);
    bp_lanes_finish(l);
    /* The failing lane ran nothing after its failure. */
    for (int j = 6; j < NJOBS; j++)
        ck_assert_int_eq(c.ran[1][j], 0);
    for (int k = 0; k < NLANES; k++)
        ck_assert_int_eq(c.ended[k], 1);
}
END_TEST

START_TEST(t_begin_fails)
{
    ctx_t c;
    ctx_init(&c);
    c.fail_begin = 2;
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, NJOBS, 3, NULL, 0, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    ck_assert_int_eq(bp_lanes_wait_begun(l), 2);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), 0);
    ck_assert_int_eq(lane, 2);
    bp_lanes_finish(l);
    for (int j = 0; j < NJOBS; j++)
        ck_assert_int_eq(c.ran[2][j], 0);
}
END_TEST

START_TEST(t_stop_early)
{
    /* The consumer stops after 2 jobs; lanes waiting for it are joined. */
    ctx_t c;
    ctx_init(&c);
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, NJOBS, 2, NULL, 0, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    for (size_t j = 0; j < 2; j++) {
        ck_assert_int_eq(bp_lanes_wait(l, j), -1);
        bp_lanes_release(l, j);
    }
    /* Every lane runs up to its bound, job 3 (one beyond job 2, the one the
     * consumer would take next), and then waits for the consumer: finish
     * joins lanes that are waiting. */
    for (int k = 0; k < NLANES; k++) {
        size_t next = 0;
        while (next < 4) {
            usleep(1000);
            pthread_mutex_lock(&c.mu);
            next = c.next[k];
            pthread_mutex_unlock(&c.mu);
        }
    }
    bp_lanes_finish(l);
    for (int k = 0; k < NLANES; k++) {
        ck_assert_int_eq(c.ended[k], 1);
        for (int j = 4; j < NJOBS; j++)
            ck_assert_int_eq(c.ran[k][j], 0);
    }
}
END_TEST

START_TEST(t_no_jobs)
{
    ctx_t c;
    ctx_init(&c);
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start(NLANES, 0, 2, NULL, 0, fns_for(&c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    ck_assert_int_eq(bp_lanes_wait_begun(l), -1);
    bp_lanes_finish(l);
    for (int k = 0; k < NLANES; k++)
        ck_assert_int_eq(c.began[k] + c.ended[k], 2);
}
END_TEST

/* ---- late jobs ---- */

static bp_lanes_t *start_late(ctx_t *c, const bool *late, size_t ahead)
{
    bp_lane_spec_t spec[NLANES] = {{.width = 1}, {.width = 1, .late = late}, {.width = 1}};
    bp_error_t err = {0};
    bp_lanes_t *l =
        bp_lanes_start_wide(NLANES, spec, NULL, NJOBS, ahead, NULL, 0, fns_for(c), &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    return l;
}

/* Whether lane k's late jobs, and its other jobs, each started in job
 * order. */
static bool kinds_in_order(const ctx_t *c, int k, const bool *late)
{
    long last[2] = {-1, -1};
    for (size_t i = 0; i < c->nseq[k]; i++) {
        size_t j = c->seq[k][i];
        if ((long)j < last[late[j]])
            return false;
        last[late[j]] = (long)j;
    }
    return true;
}

START_TEST(t_late_order)
{
    /* Nothing bounds the lanes: lane 1 runs its 35 other jobs, then its
     * late ones, though the consumer waits for job 0 all along. */
    static const size_t lates[] = {0, 3, 4, 17, 39};
    static bool late[NJOBS];
    for (size_t i = 0; i < sizeof lates / sizeof lates[0]; i++)
        late[lates[i]] = true;
    ctx_t c;
    ctx_init(&c);
    bp_lanes_t *l = start_late(&c, late, NJOBS);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), -1);
    bp_lanes_finish(l);
    ck_assert_uint_eq(c.nseq[1], NJOBS);
    size_t i = 0;
    for (size_t j = 0; j < NJOBS; j++)
        if (!late[j])
            ck_assert_uint_eq(c.seq[1][i++], j);
    for (size_t n = 0; n < sizeof lates / sizeof lates[0]; n++)
        ck_assert_uint_eq(c.seq[1][i++], lates[n]);
    for (int k = 0; k < NLANES; k++) {
        ck_assert_int_eq(c.ended[k], 1);
        for (int j = 0; j < NJOBS; j++)
            ck_assert_int_eq(c.ran[k][j], 1);
    }
    for (int j = 0; j < NJOBS; j++) /* lanes 0 and 2 in job order */
        ck_assert(c.seq[0][j] == (size_t)j && c.seq[2][j] == (size_t)j);
}
END_TEST

START_TEST(t_late_bounded)
{
    /* At most 2 jobs beyond the consumer's: the consumer waits for late
     * job 1 while lane 1's next other job, 3, may not start before job 1
     * is consumed; the lane must run job 1 then. */
    static bool late[NJOBS];
    late[1] = late[2] = late[8] = late[20] = late[NJOBS - 1] = true;
    ctx_t c;
    ctx_init(&c);
    c.slow_lane0 = true;
    bp_lanes_t *l = start_late(&c, late, 3);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), -1);
    bp_lanes_finish(l);
    ck_assert_uint_le(c.max_ahead, 2);
    ck_assert(kinds_in_order(&c, 1, late));
    for (int k = 0; k < NLANES; k++)
        for (int j = 0; j < NJOBS; j++)
            ck_assert_int_eq(c.ran[k][j], 1);
}
END_TEST

START_TEST(t_late_fails)
{
    /* Late job 5 fails on lane 1: the consumer learns it at job 5; late
     * job 6, after it, never runs; the other jobs had run before it. */
    static bool late[NJOBS];
    late[5] = late[6] = true;
    ctx_t c;
    ctx_init(&c);
    c.fail_lane = 1;
    c.fail_job = 5;
    bp_lanes_t *l = start_late(&c, late, NJOBS);
    int lane = -1;
    ck_assert_int_eq(consume_all(&c, l, NJOBS, &lane), 5);
    ck_assert_int_eq(lane, 1);
    bp_lanes_finish(l);
    ck_assert_int_eq(c.ran[1][6], 0);
    ck_assert_int_eq(c.ran[1][NJOBS - 1], 1);
    for (int k = 0; k < NLANES; k++)
        ck_assert_int_eq(c.ended[k], 1);
}
END_TEST

/* ---- lanes of several threads ---- */

#define WJOBS 30

/* Groups of 1, 2 and 3 jobs in turn: 0 | 1 2 | 3 4 5 | 6 | 7 8 | ... */
static bool wide_joined[WJOBS];
static void wide_groups(void)
{
    for (int j = 0, size = 1, at = 0; j < WJOBS; j++) {
        wide_joined[j] = at > 0;
        if (++at == size) {
            at = 0;
            size = size % 3 + 1;
        }
    }
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t consumed;
    int ran[NLANES][WJOBS];
    pthread_t by[NLANES][WJOBS]; /* the thread that ran it */
    bool done[NLANES][WJOBS];
    int running[NLANES], most[NLANES]; /* jobs of a lane running at once */
    bool joined_broken;  /* a group's job before its predecessor, or elsewhere */
    size_t max_ahead;
    int fail_job;        /* on lane 0 (-1: none) */
    bool hold_first;     /* lane 0's job 0 waits for job 1 (another group) to start */
    bool hold_timed_out;
    int began[NLANES], ended[NLANES];
    size_t starts[WJOBS]; /* lane 0's group-first jobs, as they started */
    size_t nstarts;
} wctx_t;

static bp_status wbegin(void *arg, int k)
{
    wctx_t *c = arg;
    pthread_mutex_lock(&c->mu);
    c->began[k]++;
    pthread_mutex_unlock(&c->mu);
    return BP_OK;
}

static void wend(void *arg, int k)
{
    wctx_t *c = arg;
    pthread_mutex_lock(&c->mu);
    c->ended[k]++;
    pthread_mutex_unlock(&c->mu);
}

static bp_status wjob(void *arg, int k, size_t j)
{
    wctx_t *c = arg;
    pthread_mutex_lock(&c->mu);
    c->ran[k][j]++;
    if (k == 0 && !wide_joined[j])
        c->starts[c->nstarts++] = j;
    c->by[k][j] = pthread_self();
    if (wide_joined[j] && (!c->done[k][j - 1] || !pthread_equal(c->by[k][j - 1], c->by[k][j])))
        c->joined_broken = true;
    size_t ahead = j >= c->consumed ? j - c->consumed : 0;
    if (ahead > c->max_ahead)
        c->max_ahead = ahead;
    if (++c->running[k] > c->most[k])
        c->most[k] = c->running[k];
    pthread_cond_broadcast(&c->cv);
    /* Job 0 (a group of its own) waits, 5 s at most, until job 1 (the
     * next group) has started: only a second thread can start it. */
    if (c->hold_first && k == 0 && j == 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5;
        while (!c->ran[0][1] && !c->hold_timed_out)
            c->hold_timed_out = pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0;
    }
    pthread_mutex_unlock(&c->mu);
    usleep(300);
    pthread_mutex_lock(&c->mu);
    c->running[k]--;
    c->done[k][j] = true;
    pthread_mutex_unlock(&c->mu);
    return k == 0 && (int)j == c->fail_job ? BP_EINTERNAL : BP_OK;
}

static void wctx_init(wctx_t *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->fail_job = -1;
    wide_groups();
}

/* Consumes the jobs in order; the first job whose wait failed (-1: none). */
static int wconsume(wctx_t *c, bp_lanes_t *l, int *lane)
{
    for (size_t j = 0; j < WJOBS; j++) {
        int f = bp_lanes_wait(l, j);
        if (f >= 0) {
            *lane = f;
            return (int)j;
        }
        pthread_mutex_lock(&c->mu);
        for (int k = 0; k < NLANES; k++)
            ck_assert_int_eq(c->ran[k][j], 1);
        c->consumed = j + 1;
        pthread_mutex_unlock(&c->mu);
        bp_lanes_release(l, j);
    }
    return -1;
}

START_TEST(t_wide_groups)
{
    static const bp_lane_spec_t width[NLANES] = {{.width = 3}, {.width = 1}, {.width = 2}};
    wctx_t c;
    wctx_init(&c);
    c.hold_first = true;
    bp_lane_fns_t f = {.begin = wbegin, .job = wjob, .end = wend, .ctx = &c};
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start_wide(NLANES, width, wide_joined, WJOBS, 6, NULL, 0, &f, &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    ck_assert_int_eq(bp_lanes_wait_begun(l), -1);
    int lane = -1;
    ck_assert_int_eq(wconsume(&c, l, &lane), -1);
    bp_lanes_finish(l);
    ck_assert_msg(!c.hold_timed_out, "lane 0 (3 threads) never ran two groups at once");
    ck_assert_msg(!c.joined_broken, "a group's job ran before its predecessor or elsewhere");
    ck_assert_int_eq(c.most[1], 1); /* one thread, one job at a time */
    ck_assert_int_le(c.most[0], 3);
    ck_assert_int_le(c.most[2], 2);
    ck_assert_uint_le(c.max_ahead, 5);
    for (int k = 0; k < NLANES; k++) {
        ck_assert_int_eq(c.began[k], 1);
        ck_assert_int_eq(c.ended[k], width[k].width);
        for (int j = 0; j < WJOBS; j++)
            ck_assert_int_eq(c.ran[k][j], 1);
    }
}
END_TEST

/* Runs and consumes every job on lanes of spec with cost, ahead and
 * budget; every lane ran every job once, each group whole on one thread. */
static void wrun_costly(wctx_t *c, const bp_lane_spec_t *spec, const size_t *cost,
                        size_t ahead, size_t budget)
{
    bp_lane_fns_t f = {.begin = wbegin, .job = wjob, .end = wend, .ctx = c};
    bp_error_t err = {0};
    bp_lanes_t *l =
        bp_lanes_start_wide(NLANES, spec, wide_joined, WJOBS, ahead, cost, budget, &f, &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    int lane = -1;
    ck_assert_int_eq(wconsume(c, l, &lane), -1);
    bp_lanes_finish(l);
    ck_assert(!c->joined_broken);
    for (int k = 0; k < NLANES; k++)
        for (int j = 0; j < WJOBS; j++)
            ck_assert_int_eq(c->ran[k][j], 1);
}

START_TEST(t_wide_costly)
{
    /* Groups 0 | 1 2 | 3 4 5 | 6 | ... cost 1 per job, but group 21 22 23
     * 10 per job and group 12 20: lane 0's two threads take those two
     * first, wherever they are; all the groups run, each whole on one
     * thread. */
    static size_t cost[WJOBS];
    for (int j = 0; j < WJOBS; j++)
        cost[j] = 1;
    cost[21] = cost[22] = cost[23] = 10;
    cost[12] = 20;
    static const bp_lane_spec_t spec[NLANES] = {
        {.width = 2, .costly_first = true}, {.width = 1}, {.width = 2}};
    wctx_t c;
    wctx_init(&c);
    ck_assert(!wide_joined[21] && wide_joined[22] && wide_joined[23] && !wide_joined[24]);
    ck_assert(!wide_joined[12] && !wide_joined[13]);
    wrun_costly(&c, spec, cost, WJOBS, 1000);
    ck_assert_uint_ge(c.nstarts, 2);
    ck_assert_uint_eq(c.starts[0] + c.starts[1], 21 + 12);
    ck_assert(c.starts[0] == 21 || c.starts[0] == 12);
}
END_TEST

START_TEST(t_wide_costly_bounded)
{
    /* The same costs within a budget of 25 and 4 jobs ahead: group 21 may
     * not start before the consumer is near it, nothing goes beyond the
     * bounds, and the consumer never waits forever. */
    static size_t cost[WJOBS];
    for (int j = 0; j < WJOBS; j++)
        cost[j] = j == 12 ? 20 : j >= 21 && j <= 23 ? 5 : 1;
    static const bp_lane_spec_t spec[NLANES] = {
        {.width = 3, .costly_first = true}, {.width = 2, .costly_first = true}, {.width = 1}};
    wctx_t c;
    wctx_init(&c);
    wrun_costly(&c, spec, cost, 4, 25);
    ck_assert_uint_le(c.max_ahead, 3);
}
END_TEST

START_TEST(t_wide_fails)
{
    static const bp_lane_spec_t width[NLANES] = {{.width = 3}, {.width = 2}, {.width = 1}};
    wctx_t c;
    wctx_init(&c);
    c.fail_job = 7; /* the first of its group (6 | 7 8 | ...) */
    ck_assert(!wide_joined[7] && wide_joined[8]);
    bp_lane_fns_t f = {.begin = wbegin, .job = wjob, .end = wend, .ctx = &c};
    bp_error_t err = {0};
    bp_lanes_t *l = bp_lanes_start_wide(NLANES, width, wide_joined, WJOBS, WJOBS, NULL, 0, &f,
                                        &err);
    ck_assert_msg(l != NULL, "%s", err.msg);
    int lane = -1;
    /* Jobs 0 to 6 finish on every lane, job 7 fails on lane 0. */
    ck_assert_int_eq(wconsume(&c, l, &lane), 7);
    ck_assert_int_eq(lane, 0);
    bp_lanes_finish(l);
    /* Its group's next job never ran. */
    ck_assert_int_eq(c.ran[0][8], 0);
    for (int k = 0; k < NLANES; k++)
        ck_assert_int_eq(c.ended[k], width[k].width);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lanes");
    TCase *tc = tcase_create("lanes");
    tcase_add_test(tc, t_all_in_order);
    tcase_add_test(tc, t_cost_budget);
    tcase_add_test(tc, t_job_fails);
    tcase_add_test(tc, t_begin_fails);
    tcase_add_test(tc, t_stop_early);
    tcase_add_test(tc, t_no_jobs);
    tcase_add_test(tc, t_late_order);
    tcase_add_test(tc, t_late_bounded);
    tcase_add_test(tc, t_late_fails);
    tcase_add_test(tc, t_wide_groups);
    tcase_add_test(tc, t_wide_fails);
    tcase_add_test(tc, t_wide_costly);
    tcase_add_test(tc, t_wide_costly_bounded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
