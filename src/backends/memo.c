/* Reuse of op results across the dtypes of one probe (see memo.h). */
#include "memo.h"

#include <stdlib.h>
#include <string.h>

/* Results kept per backend at most: beyond it a run keeps nothing, so that
 * the memo never holds more than this next to the run's own buffers. */
#define MEMO_MAX_BYTES ((size_t)1 << 30)

struct bp_memo {
    const bp_probe_t *probe; /* NULL: nothing kept */
    char hash[17];
    bp_dtype_t dtype;
    bp_buf_t *bufs;          /* probe->nops kept results */
    size_t n;
};

bp_memo_t *bp_memo_new(void)
{
    return calloc(1, sizeof(bp_memo_t));
}

void bp_memo_clear(bp_memo_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->bufs && i < m->n; i++)
        bp_buf_free(&m->bufs[i]);
    free(m->bufs);
    m->bufs = NULL;
    m->n = 0;
    m->probe = NULL;
}

void bp_memo_free(bp_memo_t *m)
{
    bp_memo_clear(m);
    free(m);
}

/* The same probe: the same object with the same definition (a freed and
 * reallocated probe at the same address has another hash, or computes the
 * same thing). */
static bool same_probe(const bp_memo_t *m, const bp_probe_t *p)
{
    return m->probe == p && m->n == p->nops && strcmp(m->hash, p->hash) == 0;
}

bool bp_memo_begin(bp_memo_t *m, const bp_probe_t *p, bp_dtype_t dt)
{
    if (!m)
        return false;
    if (m->probe && !same_probe(m, p))
        bp_memo_clear(m);
    return m->probe && m->dtype != dt;
}

const bp_buf_t *bp_memo_kept(const bp_memo_t *m, size_t i)
{
    if (!m || !m->probe || i >= m->n || !m->bufs[i].data)
        return NULL;
    return &m->bufs[i];
}

const bp_buf_t *bp_memo_match(const bp_memo_t *m, size_t i,
                              const bp_meta_t *meta)
{
    const bp_buf_t *k = bp_memo_kept(m, i);
    if (!k || k->dtype != meta->dtype || k->ndim != meta->ndim)
        return NULL;
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] != meta->shape[d])
            return NULL;
    return k;
}

bool bp_memo_same(const bp_buf_t *a, const bp_buf_t *b)
{
    if (!a || !b || a->dtype != b->dtype || a->ndim != b->ndim ||
        a->numel != b->numel)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    size_t n = bp_buf_nbytes(a);
    return n == 0 || (a->data && b->data && memcmp(a->data, b->data, n) == 0);
}

bp_status bp_memo_keep(bp_memo_t *m, const bp_probe_t *p, bp_dtype_t dt,
                       const bp_buf_t *bufs, const bool *reused,
                       bp_error_t *err)
{
    if (!m)
        return BP_OK;
    size_t total = 0;
    for (size_t i = 0; i < p->nops; i++)
        total += bp_buf_nbytes(&bufs[i]);
    if (total > MEMO_MAX_BYTES) {
        bp_memo_clear(m);
        return BP_OK;
    }
    if (!same_probe(m, p)) {
        bp_memo_clear(m);
        m->bufs = calloc(p->nops ? p->nops : 1, sizeof *m->bufs);
        if (!m->bufs)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        m->n = p->nops;
    }
    /* The kept run is now this one: where nothing was reused, a copy of
     * this run's result replaces the kept one. */
    for (size_t i = 0; i < p->nops; i++) {
        if (reused && reused[i] && m->bufs[i].data)
            continue;
        bp_buf_free(&m->bufs[i]);
        bp_status st = bp_buf_copy(&m->bufs[i], &bufs[i], err);
        if (st) {
            bp_memo_clear(m);
            return st;
        }
    }
    m->probe = p;
    memcpy(m->hash, p->hash, sizeof m->hash);
    m->dtype = dt;
    return BP_OK;
}
