/* Lanes (lanes.h): a mutex and one condition variable guard each lane's
 * progress and the consumer's position. */
#include "lanes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bp_lanes_t *l;
    int k;
    pthread_t th;
    bool started;
    bool begun;    /* begin has returned */
    bool begin_failed;
    bool stopped;  /* begin or a job failed, or the lane ran out of jobs */
    size_t done;   /* jobs finished */
} lane_t;

struct bp_lanes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bp_lane_fns_t fns;
    size_t njobs, ahead;
    const size_t *cost;
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
    if (!l->cost)
        return true;
    size_t sum = 0;
    for (size_t i = l->consumed; i <= j; i++) {
        if (l->cost[i] > l->budget - sum)
            return false;
        sum += l->cost[i];
    }
    return true;
}

static void *lane_main(void *arg)
{
    lane_t *ln = arg;
    bp_lanes_t *l = ln->l;
    bp_status st = l->fns.begin ? l->fns.begin(l->fns.ctx, ln->k) : BP_OK;
    pthread_mutex_lock(&l->mu);
    ln->begun = true;
    ln->begin_failed = ln->stopped = st != BP_OK;
    pthread_cond_broadcast(&l->cv);
    for (size_t j = 0; !ln->stopped && j < l->njobs;) {
        while (!l->quit && !may_start(l, j))
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->quit)
            break;
        pthread_mutex_unlock(&l->mu);
        st = l->fns.job(l->fns.ctx, ln->k, j);
        pthread_mutex_lock(&l->mu);
        if (st)
            ln->stopped = true;
        else
            ln->done = ++j;
        pthread_cond_broadcast(&l->cv);
    }
    ln->stopped = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (l->fns.end)
        l->fns.end(l->fns.ctx, ln->k);
    return NULL;
}

bp_lanes_t *bp_lanes_start(int nlanes, size_t njobs, size_t ahead, const size_t *cost,
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
    l->cost = cost;
    l->budget = budget;
    l->n = nlanes;
    l->lane = lane;
    for (int k = 0; k < nlanes; k++) {
        lane[k].l = l;
        lane[k].k = k;
        int e = pthread_create(&lane[k].th, NULL, lane_main, &lane[k]);
        if (e) {
            bp_lanes_finish(l);
            bp_error_set(err, BP_ENOMEM, "cannot start a thread for backend %d: %s", k + 1,
                         strerror(e));
            return NULL;
        }
        lane[k].started = true;
    }
    return l;
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
    for (int k = 0; k < l->n; k++)
        while (l->lane[k].done <= j && !l->lane[k].stopped)
            pthread_cond_wait(&l->cv, &l->mu);
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
        if (l->lane[k].started)
            pthread_join(l->lane[k].th, NULL);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->lane);
    free(l);
}
