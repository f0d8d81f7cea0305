/* Streamed, threaded comparison of paired tensors (see diffrun.h). */
#include "diffrun.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "st.h"

typedef enum { J_STREAM, J_SEG, J_VERIFY } jkind_t;

typedef struct {
    jkind_t kind;
    size_t pair, seg;  /* J_SEG */
    uint64_t e0, e1;   /* J_SEG: element range */
    int side;          /* J_STREAM: the set; J_VERIFY: the tensor's set */
    size_t file;       /* J_STREAM */
    const bp_tent_t *t; /* J_VERIFY */
} job_t;

/* A pair's segments, merged once all are done. */
typedef struct {
    bp_cmp_t *seg;
    uint32_t *crc[2];
    uint64_t *len[2];
    size_t nseg;
    int stream_side;   /* -1, or the side whose stream job compares it */
} pstate_t;

typedef struct {
    const bp_tset_t *set[2];
    const bp_pairs_t *p;
    const bp_drun_opts_t *o;
    job_t *jobs;
    size_t njobs;
    atomic_size_t next;
    atomic_bool failed;
    pthread_mutex_t mu;
    bp_error_t err;
    bp_status st;
    pstate_t *ps;
    long *pair_of[2];  /* tensor index -> pair index, or -1 */
    /* side B's streams read by the job of the A stream they are compared
     * with (when one A stream holds every counterpart): file -> A file, or
     * -1 when the stream has its own job */
    long *carried;
} ctx_t;

static bool random_side(const ctx_t *c, int side, const bp_tent_t *t)
{
    return bp_tread_random(&bp_tset_file(c->set[side], t)->src);
}

static void fail(ctx_t *c, bp_status st, const bp_error_t *e)
{
    pthread_mutex_lock(&c->mu);
    if (!c->st) {
        c->st = st;
        c->err = *e;
    }
    atomic_store(&c->failed, true);
    pthread_mutex_unlock(&c->mu);
}

static bp_status short_data(const bp_tfile_t *f, uint64_t at, const char *name,
                            bp_error_t *err)
{
    if (f->safetensors)
        return bp_st_stream_error(f->label, f->src.kind != BP_TF_MAP, at, f->hlen,
                                  f->data_len, err);
    return bp_error_set(err, BP_EINPUT, "%s: content ends inside tensor '%s' at byte %llu",
                        f->label, name, (unsigned long long)at);
}

static bp_status crc_check(const bp_tfile_t *f, const bp_tent_t *t, uint32_t crc,
                           bp_error_t *err)
{
    if (!t->has_crc || crc == t->crc)
        return BP_OK;
    return bp_tset_crc_error(f, t, crc, err);
}

/* Elements [e0, e1) of pair p through the engine: side readers r[0], r[1];
 * crc[s] accumulates side s's bytes when its tensor carries a CRC. */
static bp_status compare_range(ctx_t *c, const bp_pair_t *p, bp_tread_t *r[2], uint64_t e0,
                               uint64_t e1, bp_cmp_t *out, uint32_t crc[2], bp_error_t *err)
{
    const bp_tent_t *t[2] = {p->a, p->b};
    const bool widen[2] = {p->widen_a, p->widen_b};
    size_t sz[2] = {bp_dtype_info(t[0]->dt)->size, bp_dtype_info(t[1]->dt)->size};
    size_t sw = bp_dtype_info(p->dt)->size, big = sz[0] > sz[1] ? sz[0] : sz[1];
    if (sw > big)
        big = sw;
    size_t chunk = BP_TREAD_WINDOW / big;
    unsigned char *wbuf[2] = {NULL, NULL};
    bp_cmp_stream_t *cs;
    bp_status st = bp_cmp_begin(p->dt, t[0]->ndim, t[0]->shape, (size_t)e0, c->o->pol, c->o->co,
                                &cs, err);
    for (int s = 0; !st && s < 2; s++)
        if (widen[s] && !(wbuf[s] = malloc(chunk * sw)))
            st = bp_error_set(err, BP_ENOMEM, "comparing '%s': out of memory", t[s]->name);
    for (uint64_t e = e0; !st && e < e1;) {
        size_t k = e1 - e < chunk ? (size_t)(e1 - e) : chunk;
        const unsigned char *d[2];
        for (int s = 0; !st && s < 2; s++) {
            size_t got;
            uint64_t at = t[s]->off + e * sz[s];
            st = bp_tread_get(r[s], at, k * sz[s], &d[s], &got, err);
            if (!st && got < k * sz[s])
                st = short_data(bp_tset_file(c->set[s], t[s]), at + got, t[s]->name, err);
            if (st)
                break;
            if (t[s]->has_crc)
                crc[s] = (uint32_t)crc32_z(crc[s], d[s], k * sz[s]);
            if (widen[s]) {
                bp_dtype_widen(t[s]->dt, p->dt, d[s], wbuf[s], k);
                d[s] = wbuf[s];
            }
        }
        if (!st) {
            bp_cmp_feed(cs, d[0], d[1], k);
            e += k;
        }
        if (atomic_load(&c->failed))
            break;
    }
    free(wbuf[0]);
    free(wbuf[1]);
    if (st) {
        bp_cmp_abort(cs);
        return st;
    }
    return bp_cmp_end(cs, out, err);
}

static uint64_t numel(const bp_tent_t *t)
{
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= (uint64_t)t->shape[d];
    return n;
}

static bp_status open_reader(const ctx_t *c, int side, const bp_tent_t *t, bp_tread_t **r,
                             bp_error_t *err)
{
    const bp_tfile_t *f = bp_tset_file(c->set[side], t);
    return bp_tread_open(f->fd, f->label, &f->src, r, err);
}

/* A tensor's bytes, read for their CRC. */
static bp_status verify(ctx_t *c, bp_tread_t *r, int side, const bp_tent_t *t, bp_error_t *err)
{
    const bp_tfile_t *f = bp_tset_file(c->set[side], t);
    uint32_t crc = 0;
    for (uint64_t at = 0; at < t->nbytes && !atomic_load(&c->failed);) {
        size_t k = t->nbytes - at < BP_TREAD_WINDOW ? (size_t)(t->nbytes - at) : BP_TREAD_WINDOW,
               got;
        const unsigned char *d;
        bp_status st = bp_tread_get(r, t->off + at, k, &d, &got, err);
        if (!st && got < k)
            st = short_data(f, t->off + at + got, t->name, err);
        if (st)
            return st;
        crc = (uint32_t)crc32_z(crc, d, k);
        at += k;
    }
    return crc_check(f, t, crc, err);
}

static int cmp_off(const void *x, const void *y)
{
    const bp_tent_t *a = *(const bp_tent_t *const *)x, *b = *(const bp_tent_t *const *)y;
    return (a->off > b->off) - (a->off < b->off);
}

/* B's stream g, whose compared tensors an A stream's job compared: the
 * tensors nothing compared are read for their CRCs, then its end checked. */
static bp_status finish_carried(ctx_t *c, size_t g, bp_error_t *err)
{
    const bp_tset_t *s = c->set[1];
    const bp_tfile_t *f = &s->f[g];
    size_t n = 0;
    const bp_tent_t **ts = malloc((s->n ? s->n : 1) * sizeof *ts);
    if (!ts)
        return bp_error_set(err, BP_ENOMEM, "%s: out of memory", f->label);
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i].file == g)
            ts[n++] = &s->t[i];
    qsort(ts, n, sizeof *ts, cmp_off);
    bp_tread_t *r;
    bp_status st = bp_tread_open(f->fd, f->label, &f->src, &r, err);
    for (size_t i = 0; !st && i < n; i++) {
        long pi = c->pair_of[1][ts[i] - s->t];
        bool compared = pi >= 0 && c->p->p[pi].kind == BP_PAIR_COMPARE;
        if (!compared && ts[i]->has_crc)
            st = verify(c, r, 1, ts[i], err);
    }
    if (!st)
        st = bp_tset_file_end(f, r, err);
    bp_tread_close(r);
    free(ts);
    return st;
}

/* One stream, front to back (see diffrun.h). */
static bp_status run_stream(ctx_t *c, const job_t *j, bp_error_t *err)
{
    const bp_tset_t *s = c->set[j->side];
    const bp_tfile_t *f = &s->f[j->file];
    size_t n = 0;
    const bp_tent_t **ts = malloc((s->n ? s->n : 1) * sizeof *ts);
    if (!ts)
        return bp_error_set(err, BP_ENOMEM, "%s: out of memory", f->label);
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i].file == j->file)
            ts[n++] = &s->t[i];
    qsort(ts, n, sizeof *ts, cmp_off);
    bp_tread_t *rx, *ro = NULL;
    size_t ro_file = 0;
    bp_status st = bp_tread_open(f->fd, f->label, &f->src, &rx, err);
    for (size_t i = 0; !st && i < n && !atomic_load(&c->failed); i++) {
        const bp_tent_t *t = ts[i];
        long pi = c->pair_of[j->side][t - s->t];
        const bp_pair_t *p = pi >= 0 ? &c->p->p[pi] : NULL;
        if (!p || p->kind != BP_PAIR_COMPARE || c->ps[pi].stream_side != j->side) {
            if (t->has_crc)
                st = verify(c, rx, j->side, t, err);
            continue;
        }
        int other = 1 - j->side;
        const bp_tent_t *to = other ? p->b : p->a;
        bp_tread_t *r[2] = {NULL, NULL};
        r[j->side] = rx;
        /* the other side's reader stays open while its file stays the
         * same: a stream there is then read forward once, not again from
         * its start for every tensor */
        if (ro && ro_file != to->file) {
            bp_tread_close(ro);
            ro = NULL;
        }
        if (!ro && (st = open_reader(c, other, to, &ro, err)))
            break;
        ro_file = to->file;
        r[other] = ro;
        uint32_t crc[2] = {0, 0};
        st = compare_range(c, p, r, 0, numel(t), &c->ps[pi].seg[0], crc, err);
        if (!st)
            st = crc_check(f, t, crc[j->side], err);
        if (!st)
            st = crc_check(bp_tset_file(c->set[other], to), to, crc[other], err);
    }
    if (!st && !atomic_load(&c->failed))
        st = bp_tset_file_end(f, rx, err);
    bp_tread_close(rx);
    bp_tread_close(ro);
    free(ts);
    /* B's streams this job carries: the rest of them, and their ends */
    for (size_t g = 0; !st && j->side == 0 && g < c->set[1]->nf; g++)
        if (c->carried[g] == (long)j->file)
            st = finish_carried(c, g, err);
    return st;
}

static bp_status run_job(ctx_t *c, const job_t *j, bp_error_t *err)
{
    if (j->kind == J_STREAM)
        return run_stream(c, j, err);
    bp_tread_t *r[2] = {NULL, NULL};
    bp_status st;
    if (j->kind == J_VERIFY) {
        if ((st = open_reader(c, j->side, j->t, &r[0], err)))
            return st;
        st = verify(c, r[0], j->side, j->t, err);
        bp_tread_close(r[0]);
        return st;
    }
    const bp_pair_t *p = &c->p->p[j->pair];
    pstate_t *ps = &c->ps[j->pair];
    st = open_reader(c, 0, p->a, &r[0], err);
    if (!st)
        st = open_reader(c, 1, p->b, &r[1], err);
    uint32_t crc[2] = {0, 0};
    if (!st)
        st = compare_range(c, p, r, j->e0, j->e1, &ps->seg[j->seg], crc, err);
    for (int s = 0; !st && s < 2; s++) {
        const bp_tent_t *t = s ? p->b : p->a;
        ps->crc[s][j->seg] = crc[s];
        ps->len[s][j->seg] = (j->e1 - j->e0) * bp_dtype_info(t->dt)->size;
    }
    bp_tread_close(r[0]);
    bp_tread_close(r[1]);
    return st;
}

static void *worker(void *arg)
{
    ctx_t *c = arg;
    for (;;) {
        size_t k = atomic_fetch_add(&c->next, 1);
        if (k >= c->njobs || atomic_load(&c->failed))
            break;
        bp_error_t e = {0};
        bp_status st = run_job(c, &c->jobs[k], &e);
        if (st)
            fail(c, st, &e);
    }
    return NULL;
}

/* ---- planning ---------------------------------------------------------- */

static bool add_job(ctx_t *c, size_t *cap, job_t j)
{
    if (c->njobs == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        job_t *p = realloc(c->jobs, nc * sizeof *p);
        if (!p)
            return false;
        c->jobs = p;
        *cap = nc;
    }
    c->jobs[c->njobs++] = j;
    return true;
}

static bp_status plan(ctx_t *c, bp_error_t *err)
{
    size_t cap = 0;
    const bp_pairs_t *P = c->p;
    for (int s = 0; s < 2; s++) {
        size_t n = c->set[s]->n;
        if (!(c->pair_of[s] = malloc((n ? n : 1) * sizeof *c->pair_of[s])))
            return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
        for (size_t i = 0; i < n; i++)
            c->pair_of[s][i] = -1;
    }
    for (size_t i = 0; i < P->n; i++) {
        const bp_pair_t *p = &P->p[i];
        if (p->a)
            c->pair_of[0][p->a - c->set[0]->t] = (long)i;
        if (p->b)
            c->pair_of[1][p->b - c->set[1]->t] = (long)i;
    }
    size_t nfb = c->set[1]->nf;
    if (!(c->carried = malloc((nfb ? nfb : 1) * sizeof *c->carried)))
        return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
    for (size_t g = 0; g < nfb; g++)
        c->carried[g] = -2; /* no counterpart seen yet */
    for (size_t i = 0; i < P->n; i++) {
        const bp_pair_t *p = &P->p[i];
        if (p->kind != BP_PAIR_COMPARE || random_side(c, 1, p->b))
            continue;
        long *cg = &c->carried[p->b->file];
        long fa = random_side(c, 0, p->a) ? -1 : (long)p->a->file;
        *cg = *cg == -2 || *cg == fa ? fa : -1;
    }
    /* streams: one job each, whole, but for B's that an A job carries */
    for (int s = 0; s < 2; s++)
        for (size_t f = 0; f < c->set[s]->nf; f++)
            if (!bp_tread_random(&c->set[s]->f[f].src) && !(s == 1 && c->carried[f] >= 0) &&
                !add_job(c, &cap, (job_t){.kind = J_STREAM, .side = s, .file = f}))
                return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
    for (size_t i = 0; i < P->n; i++) {
        const bp_pair_t *p = &P->p[i];
        pstate_t *ps = &c->ps[i];
        ps->stream_side = -1;
        if (p->kind != BP_PAIR_COMPARE)
            continue;
        bool ra = random_side(c, 0, p->a), rb = random_side(c, 1, p->b);
        uint64_t n = numel(p->a);
        size_t big = bp_dtype_info(p->a->dt)->size;
        if (bp_dtype_info(p->b->dt)->size > big)
            big = bp_dtype_info(p->b->dt)->size;
        uint64_t per = (c->o->segment ? c->o->segment : BP_DIFF_SEGMENT) / big;
        if (per == 0)
            per = 1;
        if (!c->o->segment && n / per >= BP_DIFF_MAX_SEGMENTS)
            per = (n + BP_DIFF_MAX_SEGMENTS - 1) / BP_DIFF_MAX_SEGMENTS;
        ps->nseg = ra && rb && n > per ? (size_t)((n + per - 1) / per) : 1;
        ps->seg = calloc(ps->nseg, sizeof *ps->seg);
        for (int s = 0; s < 2; s++) {
            ps->crc[s] = calloc(ps->nseg, sizeof *ps->crc[s]);
            ps->len[s] = calloc(ps->nseg, sizeof *ps->len[s]);
        }
        if (!ps->seg || !ps->crc[0] || !ps->crc[1] || !ps->len[0] || !ps->len[1])
            return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
        if (!ra || !rb) {
            ps->stream_side = ra ? 1 : 0; /* A's stream when both are */
            continue;
        }
        for (size_t g = 0; g < ps->nseg; g++) {
            uint64_t e0 = g * per, e1 = e0 + per < n ? e0 + per : n;
            if (!add_job(c, &cap, (job_t){.kind = J_SEG, .pair = i, .seg = g, .e0 = e0,
                                          .e1 = e1}))
                return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
        }
    }
    /* mapped tensors with a CRC that nothing compares */
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < c->set[s]->n; i++) {
            const bp_tent_t *t = &c->set[s]->t[i];
            long pi = c->pair_of[s][i];
            if (!t->has_crc || !random_side(c, s, t) ||
                (pi >= 0 && P->p[pi].kind == BP_PAIR_COMPARE))
                continue;
            if (!add_job(c, &cap, (job_t){.kind = J_VERIFY, .side = s, .t = t}))
                return bp_error_set(err, BP_ENOMEM, "diff: out of memory");
        }
    return BP_OK;
}

/* Merges a pair's segments in order and checks the mapped sides' CRCs. */
static bp_status settle(ctx_t *c, size_t i, bp_cmp_t *out, bp_error_t *err)
{
    const bp_pair_t *p = &c->p->p[i];
    pstate_t *ps = &c->ps[i];
    *out = ps->seg[0];
    memset(&ps->seg[0], 0, sizeof ps->seg[0]);
    bp_status st = BP_OK;
    for (size_t g = 1; g < ps->nseg; g++) {
        bp_cmp_t seg = ps->seg[g];
        memset(&ps->seg[g], 0, sizeof ps->seg[g]);
        if (!st)
            st = bp_cmp_merge(out, &seg, c->o->pol, c->o->co ? c->o->co->first_k
                                                             : BP_CMP_FIRST_K, err);
        else
            bp_cmp_free(&seg);
    }
    if (ps->stream_side >= 0 || st)
        return st;
    for (int s = 0; !st && s < 2; s++) {
        const bp_tent_t *t = s ? p->b : p->a;
        if (!t->has_crc)
            continue;
        uint32_t crc = ps->crc[s][0];
        for (size_t g = 1; g < ps->nseg; g++)
            crc = (uint32_t)crc32_combine(crc, ps->crc[s][g], (z_off_t)ps->len[s][g]);
        st = crc_check(bp_tset_file(c->set[s], t), t, crc, err);
    }
    return st;
}

static bp_status in_memory(const bp_tset_t *a, const bp_tset_t *b, const bp_pairs_t *P,
                           const bp_drun_opts_t *o, bp_cmp_t *out, bp_error_t *err)
{
    bp_status st = BP_OK;
    for (size_t i = 0; !st && i < P->n; i++) {
        const bp_pair_t *p = &P->p[i];
        if (p->kind != BP_PAIR_COMPARE)
            continue;
        bp_buf_t x, y, w;
        if ((st = bp_tset_read_tensor(a, p->a, &x, err)))
            break;
        if ((st = bp_tset_read_tensor(b, p->b, &y, err))) {
            bp_buf_free(&x);
            break;
        }
        bp_buf_t *side[2] = {&x, &y};
        for (int s = 0; !st && s < 2; s++)
            if (s ? p->widen_b : p->widen_a) {
                if (!(st = bp_buf_alloc(&w, p->dt, side[s]->ndim, side[s]->shape, err))) {
                    bp_dtype_widen(side[s]->dtype, p->dt, side[s]->data, w.data, w.numel);
                    bp_buf_free(side[s]);
                    *side[s] = w;
                }
            }
        if (!st)
            st = bp_compare(&x, &y, o->pol, o->co, &out[i], err);
        bp_buf_free(&x);
        bp_buf_free(&y);
    }
    return st;
}

bp_status bp_diff_run(const bp_tset_t *a, const bp_tset_t *b, const bp_pairs_t *p,
                      const bp_drun_opts_t *o, bp_cmp_t *out, bp_error_t *err)
{
    memset(out, 0, p->n * sizeof *out);
    (void)bp_cmp_kernel(); /* chosen before threads share it */
    bp_status st;
    if (o->in_memory) {
        st = in_memory(a, b, p, o, out, err);
    } else {
        ctx_t c = {.set = {a, b}, .p = p, .o = o};
        pthread_mutex_init(&c.mu, NULL);
        atomic_init(&c.next, 0);
        atomic_init(&c.failed, false);
        c.ps = calloc(p->n ? p->n : 1, sizeof *c.ps);
        st = c.ps ? plan(&c, err) : bp_error_set(err, BP_ENOMEM, "diff: out of memory");
        if (!st) {
            long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
            int nt = o->threads > 0 ? o->threads : ncpu < 1 ? 1 : ncpu > 16 ? 16 : (int)ncpu;
            if ((size_t)nt > c.njobs)
                nt = c.njobs ? (int)c.njobs : 1;
            bp_tread_set_map(BP_DIFF_MAP_BUDGET / (2 * (size_t)nt));
            pthread_t th[64];
            int started = 0;
            for (; started < nt - 1 && started < 64; started++)
                if (pthread_create(&th[started], NULL, worker, &c) != 0)
                    break;
            worker(&c);
            for (int k = 0; k < started; k++)
                pthread_join(th[k], NULL);
            if (c.st) {
                st = c.st;
                *err = c.err;
            }
        }
        for (size_t i = 0; !st && i < p->n; i++)
            if (p->p[i].kind == BP_PAIR_COMPARE)
                st = settle(&c, i, &out[i], err);
        for (size_t i = 0; c.ps && i < p->n; i++) {
            for (size_t g = 0; g < c.ps[i].nseg; g++)
                bp_cmp_free(&c.ps[i].seg[g]);
            free(c.ps[i].seg);
            for (int s = 0; s < 2; s++) {
                free(c.ps[i].crc[s]);
                free(c.ps[i].len[s]);
            }
        }
        free(c.ps);
        free(c.jobs);
        free(c.pair_of[0]);
        free(c.pair_of[1]);
        free(c.carried);
        pthread_mutex_destroy(&c.mu);
    }
    if (st)
        for (size_t i = 0; i < p->n; i++)
            bp_cmp_free(&out[i]);
    return st;
}
