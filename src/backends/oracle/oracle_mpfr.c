/* The oracle's numeric core (see oracle_mpfr.h). */
#include "oracle_mpfr.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if ULONG_MAX < UINT64_MAX
#error "the oracle reads 64-bit integers through mpz_get_ui: needs 64-bit long"
#endif

mpfr_prec_t bp_oracle_prec(bp_dtype_t dt)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    return in && in->is_float ? (mpfr_prec_t)in->man_bits + 1 : 0;
}

void bp_oracle_load(mpfr_t v, bp_dtype_t dt, const void *data, size_t i)
{
    uint64_t bits = bp_dtype_load_bits(dt, data, i);
    switch (dt) {
    case BP_I64:
        mpfr_set_sj(v, (intmax_t)(int64_t)bits, MPFR_RNDN);
        break;
    case BP_I32:
        mpfr_set_si(v, (long)(int32_t)(uint32_t)bits, MPFR_RNDN);
        break;
    default:
        /* Every float dtype widens to double exactly. */
        mpfr_set_d(v, bp_dtype_bits_to_double(dt, bits), MPFR_RNDN);
    }
}

static uint64_t canonical_nan(bp_dtype_t dt)
{
    switch (dt) {
    case BP_F64: return 0x7ff8000000000000ull;
    case BP_F32: return 0x7fc00000u;
    case BP_F8_E4M3:
    case BP_F8_E5M2: return 0x7fu; /* c10's fp8 conversions */
    default: return 0x7fffu; /* bf16/f16: what dtype.c and CUDA write */
    }
}

static uint64_t round_int(bp_oracle_ws_t *ws)
{
    if (ws->out_dt == BP_BOOL) /* C's and PyTorch's bool(): nonzero, NaN too */
        return !mpfr_zero_p(ws->r);
    unsigned w = (unsigned)bp_dtype_info(ws->out_dt)->size * 8u;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    if (!mpfr_number_p(ws->r))
        return (1ull << (w - 1)) & mask;
    /* r holds the exact value rounded toward zero at a precision that
     * keeps its integer part, so this truncates the exact value. */
    mpfr_get_z(ws->z, ws->r, MPFR_RNDZ);
    mpz_fdiv_r_2exp(ws->z, ws->z, 64);
    return (uint64_t)mpz_get_ui(ws->z) & mask;
}

uint64_t bp_oracle_round(bp_oracle_ws_t *ws, int inex)
{
    const bp_dtype_info_t *in = bp_dtype_info(ws->out_dt);
    if (!in->is_float)
        return round_int(ws);
    if (mpfr_nan_p(ws->r))
        return canonical_nan(ws->out_dt);
    /* MPFR writes x = m * 2^e with 1/2 <= m < 1: the format's largest
     * finite value is below 2^(bias+1) and its least subnormal is
     * 2^(2-bias-p) = 1/2 * 2^(3-bias-p). */
    long p = in->man_bits + 1, bias = (1L << (in->exp_bits - 1)) - 1;
    /* e4m3fn's top exponent holds values (to 448; 480 would be its NaN):
     * its range reaches one binade further. */
    long top = bias + 1 + (ws->out_dt == BP_F8_E4M3);
    /* Zeros, infinities and normal values (2^(1-bias) <= |r| < 2^(bias+1))
     * are final already; only the rest needs the format's range. */
    if (mpfr_regular_p(ws->r) && (mpfr_get_exp(ws->r) < 2 - bias ||
                                  mpfr_get_exp(ws->r) > top)) {
        mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
        mpfr_set_emin(3 - bias - p);
        mpfr_set_emax(top);
        inex = mpfr_check_range(ws->r, inex, MPFR_RNDN);
        mpfr_subnormalize(ws->r, inex, MPFR_RNDN);
        mpfr_set_emin(emin);
        mpfr_set_emax(emax);
    }
    /* r is now a value of the format, so these conversions are exact. */
    switch (ws->out_dt) {
    case BP_F64: return bp_f64_bits(mpfr_get_d(ws->r, MPFR_RNDN));
    case BP_F32: return bp_f32_bits(mpfr_get_flt(ws->r, MPFR_RNDN));
    case BP_BF16: return bp_f32_bits(mpfr_get_flt(ws->r, MPFR_RNDN)) >> 16;
    /* Beyond the largest finite value (448 rounds up to 480, or infinity)
     * the non-saturating encoders give e4m3fn's NaN, e5m2's infinity. */
    case BP_F8_E4M3: return bp_f32_to_f8e4m3(mpfr_get_flt(ws->r, MPFR_RNDN), false);
    case BP_F8_E5M2: return bp_f32_to_f8e5m2(mpfr_get_flt(ws->r, MPFR_RNDN), false);
    default: return bp_f32_to_f16(mpfr_get_flt(ws->r, MPFR_RNDN));
    }
}

static void ws_init(bp_oracle_ws_t *ws, bp_dtype_t dt)
{
    memset(ws, 0, sizeof *ws);
    mpfr_prec_t p = bp_oracle_prec(dt);
    ws->out_dt = dt;
    ws->rnd = p ? MPFR_RNDN : MPFR_RNDZ;
    mpfr_init2(ws->r, p ? p : BP_ORACLE_INT_PREC);
    mpfr_init2(ws->x, BP_ORACLE_IN_PREC);
    mpfr_init2(ws->y, BP_ORACLE_IN_PREC);
    mpfr_init2(ws->t, 2 * BP_ORACLE_IN_PREC);
    mpfr_init2(ws->acc, MPFR_PREC_MIN);
    mpfr_init2(ws->part, MPFR_PREC_MIN);
    mpz_init(ws->z);
    ws->row = -1;
}

static void arrays_free(bp_oracle_ws_t *ws)
{
    for (size_t i = 0; i < ws->cap; i++) {
        mpfr_clear(ws->va[i]);
        mpfr_clear(ws->vb[i]);
    }
    free(ws->va);
    free(ws->vb);
    free(ws->pa);
    free(ws->pb);
    ws->va = ws->vb = NULL;
    ws->pa = ws->pb = NULL;
    ws->cap = 0;
}

static void ws_clear(bp_oracle_ws_t *ws)
{
    arrays_free(ws);
    mpfr_clears(ws->r, ws->x, ws->y, ws->t, ws->acc, ws->part, (mpfr_ptr)0);
    mpz_clear(ws->z);
}

bp_status bp_oracle_ws_reserve(bp_oracle_ws_t *ws, size_t n, bp_error_t *err)
{
    if (n <= ws->cap)
        return BP_OK;
    arrays_free(ws);
    ws->row = -1;
    ws->va = malloc(n * sizeof *ws->va);
    ws->vb = malloc(n * sizeof *ws->vb);
    ws->pa = malloc(n * sizeof *ws->pa);
    ws->pb = malloc(n * sizeof *ws->pb);
    if (!ws->va || !ws->vb || !ws->pa || !ws->pb) {
        free(ws->va);
        free(ws->vb);
        free(ws->pa);
        free(ws->pb);
        ws->va = ws->vb = NULL;
        ws->pa = ws->pb = NULL;
        return bp_error_set(err, BP_ENOMEM,
                            "out of memory for %zu oracle registers", n);
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(ws->va[i], BP_ORACLE_IN_PREC);
        mpfr_init2(ws->vb[i], 2 * BP_ORACLE_IN_PREC); /* products in place */
        ws->pa[i] = ws->va[i];
        ws->pb[i] = ws->vb[i];
    }
    ws->cap = n;
    return BP_OK;
}

int bp_oracle_threads(int requested)
{
    if (!mpfr_buildopt_tls_p())
        return 1;
    if (requested > 0)
        return requested;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}

typedef struct {
    bp_oracle_kernel_fn kernel;
    const void *ctx;
    bp_dtype_t out_dt;
    size_t begin, end;
    bp_status st;
    bp_error_t err;
} chunk_t;

static void chunk_run(chunk_t *c)
{
    bp_oracle_ws_t ws;
    ws_init(&ws, c->out_dt);
    c->st = c->kernel(&ws, c->ctx, c->begin, c->end, &c->err);
    ws_clear(&ws);
}

static void *chunk_thread(void *arg)
{
    chunk_run(arg);
    /* Constants MPFR cached for this thread (pi, log 2) die with it. */
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    return NULL;
}

/* Workers kept from one map to the next, so that an op does not pay for
 * starting and joining a thread per chunk, nor each thread for MPFR's
 * constants again (a suite runs some 200 maps; on 16 cores 15 threads
 * each).  Maps may run at once (several probes on the oracle beside each
 * other, or several oracles): each queues its chunks, the workers take
 * chunks from the oldest map that has some left, and the map's caller
 * takes its own map's chunks too and then waits for those the workers
 * took.  So the workers are shared, never more than the most any map
 * asked for (threads - 1), and a map is never left waiting for a thread
 * that is not working for it.  Which thread runs which chunk changes
 * nothing (see oracle_mpfr.h).  A forked child starts with none
 * (pthread_atfork). */
typedef struct map {
    chunk_t *chunks;
    size_t n, next, left; /* chunks, the next to take, those not finished */
    pthread_cond_t done;  /* left reached 0 */
    struct map *after;    /* the queue of maps with chunks to take */
} map_t;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t go;
    size_t started;     /* workers running */
    map_t *head, *tail; /* maps with chunks left to take, oldest first */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, NULL};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_forked(void)
{
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.go, NULL);
    pool.started = 0;
    pool.head = pool.tail = NULL;
}

static void pool_init(void)
{
    pthread_atfork(NULL, NULL, pool_forked);
}

/* Takes m out of the queue (under the lock), wherever it is: a map
 * leaves it when its last chunk is taken. */
static void unqueue(map_t *m)
{
    map_t **at = &pool.head, *prev = NULL;
    while (*at && *at != m) {
        prev = *at;
        at = &(*at)->after;
    }
    if (!*at)
        return;
    *at = m->after;
    if (pool.tail == m)
        pool.tail = prev;
    m->after = NULL;
}

/* Takes m's next chunk (under the lock; m has one). */
static chunk_t *take(map_t *m)
{
    chunk_t *c = &m->chunks[m->next++];
    if (m->next == m->n)
        unqueue(m);
    return c;
}

/* Runs chunk c of m (called and returning under the lock). */
static void run_taken(map_t *m, chunk_t *c)
{
    pthread_mutex_unlock(&pool.mu);
    chunk_run(c);
    pthread_mutex_lock(&pool.mu);
    if (--m->left == 0)
        pthread_cond_signal(&m->done);
}

static void *pool_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.head)
            pthread_cond_wait(&pool.go, &pool.mu);
        map_t *m = pool.head;
        run_taken(m, take(m));
    }
    return NULL;
}

/* Runs cs[0..nt) with the kept workers; false (nothing run) when no worker
 * runs or can be started. */
static bool pool_run(chunk_t *cs, size_t nt)
{
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.mu);
    while (pool.started < nt - 1) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &at, pool_worker, NULL);
        pthread_attr_destroy(&at);
        if (rc)
            break;
        pool.started++;
    }
    if (!pool.started) {
        pthread_mutex_unlock(&pool.mu);
        return false;
    }
    map_t m = {.chunks = cs, .n = nt, .left = nt};
    pthread_cond_init(&m.done, NULL);
    /* Queued last: the maps before it finish first. */
    if (pool.tail)
        pool.tail->after = &m;
    else
        pool.head = &m;
    pool.tail = &m;
    pthread_cond_broadcast(&pool.go);
    /* The caller takes what the workers leave, then waits for theirs. */
    while (m.next < m.n)
        run_taken(&m, take(&m));
    while (m.left)
        pthread_cond_wait(&m.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_cond_destroy(&m.done);
    return true;
}

bp_status bp_oracle_map(int threads, size_t grain, bp_dtype_t out_dt,
                        size_t n, bp_oracle_kernel_fn kernel, const void *ctx,
                        bp_error_t *err)
{
    if (n == 0)
        return BP_OK;
    if (grain == 0)
        grain = 1;
    size_t nt = threads > 0 ? (size_t)threads : 1;
    if (nt > (n + grain - 1) / grain)
        nt = (n + grain - 1) / grain;
    if (nt <= 1) {
        chunk_t c = {kernel, ctx, out_dt, 0, n, BP_OK, {0}};
        chunk_run(&c);
        if (c.st && err)
            *err = c.err;
        return c.st;
    }
    chunk_t *cs = calloc(nt, sizeof *cs);
    pthread_t *tid = calloc(nt, sizeof *tid);
    bool *started = calloc(nt, sizeof *started);
    if (!cs || !tid || !started) {
        free(cs);
        free(tid);
        free(started);
        return bp_error_set(err, BP_ENOMEM, "out of memory for %zu threads",
                            nt);
    }
    for (size_t k = 0; k < nt; k++)
        cs[k] = (chunk_t){kernel, ctx, out_dt, n * k / nt, n * (k + 1) / nt,
                          BP_OK, {0}};
    if (!pool_run(cs, nt)) {
        /* Chunk 0 runs here; a thread that cannot start runs here later. */
        for (size_t k = 1; k < nt; k++)
            started[k] = pthread_create(&tid[k], NULL, chunk_thread, &cs[k]) == 0;
        chunk_run(&cs[0]);
        for (size_t k = 1; k < nt; k++) {
            if (started[k])
                pthread_join(tid[k], NULL);
            else
                chunk_run(&cs[k]);
        }
    }
    bp_status st = BP_OK;
    for (size_t k = 0; k < nt && !st; k++) {
        st = cs[k].st;
        if (st && err)
            *err = cs[k].err;
    }
    free(cs);
    free(tid);
    free(started);
    return st;
}
