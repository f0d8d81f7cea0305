/* Lanes (lanes.h): a mutex and one condition variable guard every lane's
 * progress and the consumer's position. */
#include "lanes.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct lane lane_t;

typedef struct {
    lane_t *ln;
    int idx;       /* the lane's thread idx: 0 runs begin */
    pthread_t th;
    bool started;
} worker_t;

struct lane {
    bp_lanes_t *l;
    int k;
    int nthreads;
    worker_t *w;
    bool begun;    /* begin has returned */
    bool begin_failed;
    int live;      /* threads not yet out of their loop */
    size_t next;   /* the first job of the next group to take (with late
                      jobs: the next job that is not late) */
    const bool *late; /* NULL: none (lanes.h) */
    bool costly;      /* bp_lane_spec_t.costly_first */
    bool *taken;      /* per job: a group that starts there was taken */
    size_t next_late; /* the next late job */
    size_t fail;   /* the first job that failed (or 0 when begin did); njobs: none */
    size_t done;   /* jobs 0..done-1 finished */
    bool *fin;     /* per job: finished */
};

struct bp_lanes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bp_lane_fns_t fns;
    size_t njobs, ahead;
    size_t *csum;     /* cost's sums: csum[j] of jobs 0..j-1 (NULL: no cost) */
    const bool *joined;
    size_t budget;
    size_t consumed;  /* jobs the consumer is done with */
    bool quit;
    int n;
    lane_t *lane;
};

/* Whether job j may start now (under the lock). */
static bool may_start(const bp_lanes_t *l, size_t j)
{
    if (j <= l->consumed)
        return true;
    if (j >= l->consumed + l->ahead)
        return false;
    return !l->csum || l->csum[j + 1] - l->csum[l->consumed] <= l->budget;
}

/* The job after the group that starts at g. */
static size_t group_end(const bp_lanes_t *l, size_t g)
{
    size_t e = g + 1;
    while (e < l->njobs && l->joined && l->joined[e])
        e++;
    return e;
}

/* The group a thread of a wide lane takes next (under the lock): with
 * costly_first the costliest of the groups not taken whose jobs may all
 * start now (the first of equals), else the first group not taken. */
static size_t pick_group(const bp_lanes_t *l, const lane_t *ln)
{
    size_t best = ln->next, most = 0;
    bool found = false;
    for (size_t g = ln->next, e; ln->costly && l->csum && g < l->njobs; g = e) {
        e = group_end(l, g);
        if (!may_start(l, e - 1)) /* nor may any later job */
            break;
        if (!ln->taken[g] && (!found || l->csum[e] - l->csum[g] > most)) {
            best = g;
            most = l->csum[e] - l->csum[g];
            found = true;
        }
    }
    return best;
}

/* Runs job j on lane ln (under the lock, released while the job runs);
 * false when it failed. */
static bool run_job(bp_lanes_t *l, lane_t *ln, size_t j)
{
    pthread_mutex_unlock(&l->mu);
    bp_status st = l->fns.job(l->fns.ctx, ln->k, j);
    pthread_mutex_lock(&l->mu);
    pthread_cond_broadcast(&l->cv);
    if (st) {
        if (j < ln->fail)
            ln->fail = j;
        return false;
    }
    ln->fin[j] = true;
    while (ln->done < l->njobs && ln->fin[ln->done])
        ln->done++;
    return true;
}

/* Runs the jobs of the group that starts at g (under the lock; it is
 * released while a job runs). */
static void run_group(bp_lanes_t *l, lane_t *ln, size_t g)
{
    size_t e = group_end(l, g);
    ln->taken[g] = true;
    while (ln->next < l->njobs && ln->taken[ln->next])
        ln->next = group_end(l, ln->next);
    for (size_t j = g; j < e; j++) {
        while (!l->quit && j < ln->fail && !may_start(l, j))
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->quit || j >= ln->fail || !run_job(l, ln, j))
            return;
    }
}

/* The first job from j on whose lateness is `late` (njobs: none). */
static size_t next_of(const bp_lanes_t *l, const lane_t *ln, size_t j, bool late)
{
    while (j < l->njobs && ln->late[j] != late)
        j++;
    return j;
}

/* A lane of one thread with late jobs (under the lock; it is released
 * while a job runs): its next other job where that may start, else its
 * next late job where that may, else it waits. */
static void run_late_lane(bp_lanes_t *l, lane_t *ln)
{
    for (;;) {
        size_t end = ln->fail < l->njobs ? ln->fail : l->njobs;
        size_t n = ln->next, d = ln->next_late, j;
        if (l->quit || (n >= end && d >= end))
            return;
        if (n < end && may_start(l, n)) {
            j = n;
            ln->next = next_of(l, ln, n + 1, false);
        } else if (d < end && may_start(l, d)) {
            j = d;
            ln->next_late = next_of(l, ln, d + 1, true);
        } else {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        run_job(l, ln, j);
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    lane_t *ln = w->ln;
    bp_lanes_t *l = ln->l;
    if (w->idx == 0) {
        bp_status st = l->fns.begin ? l->fns.begin(l->fns.ctx, ln->k) : BP_OK;
        pthread_mutex_lock(&l->mu);
        ln->begun = true;
        if (st) {
            ln->begin_failed = true;
            ln->fail = 0;
        }
        pthread_cond_broadcast(&l->cv);
    } else {
        pthread_mutex_lock(&l->mu);
        while (!ln->begun && !l->quit)
            pthread_cond_wait(&l->cv, &l->mu);
    }
    if (ln->late && ln->begun)
        run_late_lane(l, ln);
    for (size_t g; !ln->late && ln->begun && !l->quit && ln->next < l->njobs &&
                   (g = pick_group(l, ln)) < ln->fail;)
        run_group(l, ln, g);
    ln->live--;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (l->fns.end)
        l->fns.end(l->fns.ctx, ln->k);
    return NULL;
}

/* Frees what bp_lanes_start_wide allocated (no thread running). */
static void lanes_free(bp_lanes_t *l)
{
    for (int k = 0; k < l->n; k++) {
        free(l->lane[k].w);
        free(l->lane[k].fin);
        free(l->lane[k].taken);
    }
    free(l->csum);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->lane);
    free(l);
}

bp_lanes_t *bp_lanes_start_wide(int nlanes, const bp_lane_spec_t *spec, const bool *joined,
                                size_t njobs, size_t ahead, const size_t *cost,
                                size_t budget, const bp_lane_fns_t *fns, bp_error_t *err)
{
    bp_lanes_t *l = calloc(1, sizeof *l);
    lane_t *lane = calloc(nlanes > 0 ? (size_t)nlanes : 1, sizeof *lane);
    if (!l || !lane) {
        free(l);
        free(lane);
        bp_error_set(err, BP_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->fns = *fns;
    l->njobs = njobs;
    l->ahead = ahead ? ahead : 1;
    l->joined = joined;
    l->budget = budget;
    l->n = nlanes;
    l->lane = lane;
    l->csum = cost ? malloc((njobs + 1) * sizeof *l->csum) : NULL;
    bool ok = !cost || l->csum;
    for (size_t j = 0; ok && cost && j <= njobs; j++)
        l->csum[j] = j ? l->csum[j - 1] + cost[j - 1] : 0;
    for (int k = 0; k < nlanes && ok; k++) {
        lane_t *ln = &lane[k];
        ln->l = l;
        ln->k = k;
        ln->fail = njobs;
        ln->nthreads = spec && spec[k].width > 1 ? spec[k].width : 1;
        ln->late = spec && ln->nthreads == 1 ? spec[k].late : NULL;
        if (ln->late) {
            ln->next = next_of(l, ln, 0, false);
            ln->next_late = next_of(l, ln, 0, true);
        }
        ln->w = calloc((size_t)ln->nthreads, sizeof *ln->w);
        ln->fin = calloc(njobs ? njobs : 1, sizeof *ln->fin);
        ln->taken = calloc(njobs ? njobs : 1, sizeof *ln->taken);
        ln->costly = spec && ln->nthreads > 1 && spec[k].costly_first;
        ok = ln->w && ln->fin && ln->taken;
    }
    if (!ok) {
        lanes_free(l);
        bp_error_set(err, BP_ENOMEM, "out of memory");
        return NULL;
    }
    for (int k = 0; k < nlanes; k++) {
        lane_t *ln = &lane[k];
        for (int i = 0; i < ln->nthreads; i++) {
            worker_t *w = &ln->w[i];
            w->ln = ln;
            w->idx = i;
            pthread_mutex_lock(&l->mu);
            ln->live++;
            pthread_mutex_unlock(&l->mu);
            int e = pthread_create(&w->th, NULL, worker_main, w);
            if (e) {
                pthread_mutex_lock(&l->mu);
                ln->live--;
                pthread_mutex_unlock(&l->mu);
                if (i > 0)
                    break; /* the lane runs on the threads it has */
                bp_lanes_finish(l);
                bp_error_set(err, BP_ENOMEM, "cannot start a thread for backend %d: %s", k + 1,
                             strerror(e));
                return NULL;
            }
            w->started = true;
        }
    }
    return l;
}

bp_lanes_t *bp_lanes_start(int nlanes, size_t njobs, size_t ahead, const size_t *cost,
                           size_t budget, const bp_lane_fns_t *fns, bp_error_t *err)
{
    return bp_lanes_start_wide(nlanes, NULL, NULL, njobs, ahead, cost, budget, fns, err);
}

int bp_lanes_wait_begun(bp_lanes_t *l)
{
    pthread_mutex_lock(&l->mu);
    for (int k = 0; k < l->n; k++)
        while (!l->lane[k].begun)
            pthread_cond_wait(&l->cv, &l->mu);
    int failed = -1;
    for (int k = 0; k < l->n && failed < 0; k++)
        if (l->lane[k].begin_failed)
            failed = k;
    pthread_mutex_unlock(&l->mu);
    return failed;
}

int bp_lanes_wait(bp_lanes_t *l, size_t j)
{
    pthread_mutex_lock(&l->mu);
    for (int k = 0; k < l->n; k++) {
        lane_t *ln = &l->lane[k];
        /* Jobs before a failed one still run; none from it on. */
        while (ln->done <= j && ln->fail > j && ln->live > 0)
            pthread_cond_wait(&l->cv, &l->mu);
    }
    int failed = -1;
    for (int k = 0; k < l->n && failed < 0; k++)
        if (l->lane[k].done <= j)
            failed = k;
    pthread_mutex_unlock(&l->mu);
    return failed;
}

void bp_lanes_release(bp_lanes_t *l, size_t j)
{
    pthread_mutex_lock(&l->mu);
    if (j + 1 > l->consumed)
        l->consumed = j + 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void bp_lanes_finish(bp_lanes_t *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->quit = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (int k = 0; k < l->n; k++)
        for (int i = 0; i < l->lane[k].nthreads; i++)
            if (l->lane[k].w[i].started)
                pthread_join(l->lane[k].w[i].th, NULL);
    lanes_free(l);
}
