/* Collective maps (coll_map.h). */
#include "coll_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "coll_emu.h"
#include "oracle_mpfr.h"

#define WORK 320

uint64_t bp_coll_digest(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

bp_coll_cell_t *bp_coll_cell(const bp_coll_map_t *m, size_t s, size_t c)
{
    return &m->cell[s * m->ncfg + c];
}

void bp_coll_map_title(const bp_coll_map_t *m, char *out, size_t n)
{
    if (bp_coll_kind_reduces(m->kind))
        snprintf(out, n, "%s %s %s, %d rank%s", bp_coll_kind_name(m->kind),
                 bp_dtype_name(m->dtype), bp_coll_redop_name(m->op), m->world,
                 m->world == 1 ? "" : "s");
    else
        snprintf(out, n, "%s %s, %d rank%s", bp_coll_kind_name(m->kind),
                 bp_dtype_name(m->dtype), m->world, m->world == 1 ? "" : "s");
}

bp_status bp_coll_map_init(bp_coll_map_t *m, bp_coll_kind_t kind, bp_dtype_t dt,
                           bp_coll_redop_t op, int world, const bp_coll_size_t *sizes,
                           size_t nsizes, const bp_coll_cfg_t *cfg, size_t ncfg,
                           const bp_policy_t *pol, uint64_t seed, bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->dtype = dt;
    m->op = op;
    m->world = world;
    m->seed = seed;
    if (pol)
        m->policy = *pol;
    else
        bp_policy_exact(&m->policy);
    m->sz = calloc(nsizes ? nsizes : 1, sizeof *m->sz);
    m->cfg = malloc((ncfg ? ncfg : 1) * sizeof *m->cfg);
    m->cell = calloc((nsizes ? nsizes : 1) * (ncfg ? ncfg : 1), sizeof *m->cell);
    if (!m->sz || !m->cfg || !m->cell) {
        bp_coll_map_free(m);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    m->nsizes = nsizes;
    m->ncfg = ncfg;
    memcpy(m->cfg, cfg, ncfg * sizeof *cfg);
    size_t es = bp_dtype_info(dt)->size;
    for (size_t s = 0; s < nsizes; s++) {
        m->sz[s].bytes = sizes[s].bytes;
        m->sz[s].what = sizes[s].what;
        m->sz[s].n = bp_coll_elements(kind, sizes[s].bytes, es, world);
    }
    for (size_t i = 0; i < nsizes * ncfg; i++) {
        m->cell[i].group = -1;
        m->cell[i].emu_agree = -1;
    }
    return BP_OK;
}

static void slot_free(bp_coll_slot_t *z)
{
    for (size_t g = 0; g < z->ng; g++) {
        bp_cmp_free(&z->g[g].cmp);
        free(z->g[g].sample);
    }
    free(z->g);
    free(z->ref);
    free(z->sidx);
    free(z->sin);
    free(z->exact);
    memset(z, 0, sizeof *z);
}

void bp_coll_map_free(bp_coll_map_t *m)
{
    for (size_t s = 0; m->sz && s < m->nsizes; s++)
        slot_free(&m->sz[s]);
    for (size_t i = 0; m->cell && i < m->nsizes * m->ncfg; i++)
        bp_coll_order_free(&m->cell[i].order);
    free(m->sz);
    free(m->cfg);
    free(m->cell);
    memset(m, 0, sizeof *m);
}

void bp_coll_map_skip(bp_coll_map_t *m, size_t s, size_t c, bp_coll_state_t state,
                      const char *why)
{
    bp_coll_cell_t *x = bp_coll_cell(m, s, c);
    x->state = state;
    snprintf(x->why, sizeof x->why, "%s", why ? why : "");
}

/* How often the emulation of c predicts the inferred order. */
static void emu_check(bp_coll_map_t *m, size_t s, size_t c, bp_coll_cell_t *x)
{
    bp_coll_emu_t em;
    bp_error_t e;
    const bp_coll_order_t *o = &x->order;
    if (!o->done || o->world < 3 ||
        bp_coll_emu_for(&m->cfg[c], m->dtype, &em, x->emu_desc, sizeof x->emu_desc, &e))
        return;
    /* which inferred order each of the model's pieces has */
    int W = m->world, match[BP_COLL_ORDER_MAX];
    char set[BP_COLL_ORDER_MAX][BP_COLL_TREE_TEXT];
    for (int p = 0; p < W; p++) {
        bp_coll_tree_t t;
        bp_coll_emu_tree(&em, W, p, &t);
        bp_coll_tree_format(&t, set[p], sizeof set[p]);
        match[p] = -1;
        for (size_t k = 0; k < o->nords; k++)
            if (o->ords[k].kind == BP_ORD_TREE && !strcmp(o->ords[k].text, set[p]))
                match[p] = (int)k;
    }
    uint64_t agree = 0, n = m->sz[s].n;
    for (size_t r = 0; r < o->nruns; r++) {
        const bp_coll_orun_t *run = &o->runs[r];
        if (run->ord < 0)
            continue;
        /* pieces are whole blocks or more: sample each block's first element */
        uint64_t step = o->block ? o->block : 1;
        for (uint64_t i = run->first; i < run->first + run->count; i += step) {
            uint64_t take = run->first + run->count - i < step ? run->first + run->count - i
                                                               : step;
            if (match[bp_coll_emu_piece(&em, m->kind, W, i, n)] == run->ord)
                agree += take;
        }
    }
    x->emu_agree = o->probed ? (double)agree / (double)o->probed : -1;
    /* the same set of orders, wherever they sit */
    bool same = true;
    int pieces = em.algo == BP_EMU_RING ? W : 1;
    for (size_t k = 0; k < o->nords && same; k++) {
        bool found = false;
        for (int p = 0; p < pieces && !found; p++)
            found = !strcmp(o->ords[k].text, set[p]);
        same = found;
    }
    for (int p = 0; p < pieces && same; p++)
        same = match[p] >= 0;
    x->emu_same_set = same && !o->mixed;
}

bp_status bp_coll_map_order(bp_coll_map_t *m, size_t s, size_t c, const void *probe,
                            bp_error_t *err)
{
    bp_coll_cell_t *x = bp_coll_cell(m, s, c);
    bp_coll_order_free(&x->order);
    bp_status st = bp_coll_order_infer(m->dtype, m->world, probe, m->sz[s].n, &x->order, err);
    if (!st && strcmp(m->engine, "emulate"))
        emu_check(m, s, c, x);
    return st;
}

static bp_buf_t view(const bp_coll_map_t *m, const void *bits, uint64_t n)
{
    bp_buf_t b = {0};
    b.dtype = m->dtype;
    b.ndim = 1;
    b.shape[0] = (int64_t)n;
    b.numel = (size_t)n;
    b.data = (void *)bits;
    return b;
}

/* The sample of size s and every rank's values there (reductions). */
static bp_status sample(bp_coll_map_t *m, bp_coll_slot_t *z, bp_error_t *err)
{
    if (z->sidx)
        return BP_OK;
    z->ns = z->n < BP_COLL_SAMPLE ? (size_t)z->n : BP_COLL_SAMPLE;
    if (!(z->sidx = malloc((z->ns ? z->ns : 1) * sizeof *z->sidx)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (size_t k = 0; k < z->ns; k++)
        z->sidx[k] = (uint64_t)((unsigned __int128)k * z->n / z->ns);
    if (!bp_coll_kind_reduces(m->kind))
        return BP_OK;
    size_t W = (size_t)m->world;
    if (!(z->sin = malloc((z->ns ? z->ns : 1) * W * sizeof *z->sin)))
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (size_t k = 0; k < z->ns; k++)
        for (size_t r = 0; r < W; r++) {
            uint64_t b = 0;
            bp_coll_input(BP_COLL_VALUES, m->dtype, m->world, (int)r, m->seed, z->sidx[k], 1,
                          &b);
            z->sin[k * W + r] = bp_dtype_bits_to_double(m->dtype, b);
        }
    return BP_OK;
}

bp_status bp_coll_map_result(bp_coll_map_t *m, size_t s, size_t c, const void *bits,
                             uint32_t ranks_differ, uint64_t copy_differ, bp_error_t *err)
{
    bp_coll_slot_t *z = &m->sz[s];
    bp_coll_cell_t *x = bp_coll_cell(m, s, c);
    size_t es = bp_dtype_info(m->dtype)->size, nb = (size_t)z->n * es;
    bp_status st = sample(m, z, err);
    if (st)
        return st;
    x->state = BP_CELL_RAN;
    x->digest = bp_coll_digest(bits, nb);
    x->ranks_differ = ranks_differ;
    x->copy_differ = copy_differ;
    x->repeats = 1;
    if (x->order.done && z->sin)
        bp_coll_order_verify(&x->order, m->op, z->sidx, z->ns, z->sin, bits,
                             &x->verify_checked, &x->verify_same);
    for (size_t g = 0; g < z->ng; g++)
        if (z->g[g].digest == x->digest) {
            x->group = (int)g;
            z->g[g].members++;
            return BP_OK;
        }
    bp_coll_group_t *ng = realloc(z->g, (z->ng + 1) * sizeof *ng);
    if (!ng)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    z->g = ng;
    bp_coll_group_t *g = &z->g[z->ng];
    memset(g, 0, sizeof *g);
    g->first = (int)c;
    g->digest = x->digest;
    g->members = 1;
    if (!z->ng) { /* group 0: the whole result kept */
        if (!(z->ref = malloc(nb ? nb : 1)))
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        memcpy(z->ref, bits, nb);
    }
    g->sample = malloc((z->ns ? z->ns : 1) * es);
    if (!g->sample)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (size_t k = 0; k < z->ns; k++)
        bp_dtype_store_bits(m->dtype, g->sample, k,
                            bp_dtype_load_bits(m->dtype, bits, (size_t)z->sidx[k]));
    if (z->ng && z->ref) {
        bp_buf_t a = view(m, z->ref, z->n), b = view(m, bits, z->n);
        bp_cmp_opts_t co;
        bp_cmp_opts_init(&co);
        co.nan_payload = true; /* bits are bits: a copy keeps every payload */
        if ((st = bp_compare(&a, &b, &m->policy, &co, &g->cmp, err)))
            return st;
        g->compared = true;
    }
    x->group = (int)z->ng++;
    return BP_OK;
}

void bp_coll_map_repeat(bp_coll_map_t *m, size_t s, size_t c, const void *bits,
                        uint32_t ranks_differ)
{
    bp_coll_cell_t *x = bp_coll_cell(m, s, c);
    size_t nb = (size_t)m->sz[s].n * bp_dtype_info(m->dtype)->size;
    x->repeats++;
    x->repeat_differ += bp_coll_digest(bits, nb) != x->digest;
    if (ranks_differ > x->ranks_differ)
        x->ranks_differ = ranks_differ;
}

/* ---- the oracle -------------------------------------------------------- */

typedef struct {
    const bp_coll_map_t *m;
    const bp_coll_slot_t *z;
    void *out;
} octx_t;

static bp_status okernel(bp_oracle_ws_t *ws, const void *vctx, size_t begin, size_t end,
                         bp_error_t *err)
{
    (void)err;
    const octx_t *c = vctx;
    const bp_coll_map_t *m = c->m;
    mpfr_t s, t;
    mpfr_inits2(WORK, s, t, (mpfr_ptr)0);
    for (size_t k = begin; k < end; k++) {
        mpfr_set_zero(s, 1);
        for (int r = 0; r < m->world; r++) {
            mpfr_set_d(t, c->z->sin[k * (size_t)m->world + (size_t)r], MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN); /* exact at WORK bits */
        }
        if (m->op == BP_COLL_AVG)
            mpfr_div_ui(s, s, (unsigned long)m->world, MPFR_RNDN);
        int inex = mpfr_set(ws->r, s, MPFR_RNDN);
        bp_dtype_store_bits(m->dtype, c->out, k, bp_oracle_round(ws, inex));
    }
    mpfr_clears(s, t, (mpfr_ptr)0);
    return BP_OK;
}

bp_status bp_coll_map_arbitrate(bp_coll_map_t *m, bool all, int threads, bp_error_t *err)
{
    if (!bp_coll_kind_reduces(m->kind)) {
        snprintf(m->oracle_note, sizeof m->oracle_note, "a copy: the inputs are its reference");
        return BP_OK;
    }
    size_t es = bp_dtype_info(m->dtype)->size;
    for (size_t s = 0; s < m->nsizes; s++) {
        bp_coll_slot_t *z = &m->sz[s];
        if (!z->ng || !z->ns || !z->sin || (!all && z->ng < 2) || z->exact)
            continue;
        if (!(z->exact = malloc(z->ns * es)))
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        octx_t c = {m, z, z->exact};
        bp_status st = bp_oracle_map(bp_oracle_threads(threads), 64, m->dtype, z->ns, okernel,
                                     &c, err);
        if (st)
            return st;
        for (size_t g = 0; g < z->ng; g++) {
            bp_coll_group_t *gr = &z->g[g];
            double sum = 0;
            size_t fin = 0;
            gr->max_ulp = 0;
            gr->exact = 0;
            memset(&gr->closer, 0, sizeof gr->closer);
            for (size_t k = 0; k < z->ns; k++) {
                uint64_t o = bp_dtype_load_bits(m->dtype, z->exact, k);
                uint64_t v = bp_dtype_load_bits(m->dtype, gr->sample, k);
                uint64_t d = bp_ulp_distance(m->dtype, o, v);
                if (d > gr->max_ulp)
                    gr->max_ulp = d;
                gr->exact += d == 0;
                if (d != UINT64_MAX) {
                    sum += (double)d;
                    fin++;
                }
                uint64_t d0 = bp_ulp_distance(m->dtype, o,
                                              bp_dtype_load_bits(m->dtype, z->g[0].sample, k));
                if (d0 < d)
                    gr->closer.a_closer++;
                else if (d < d0)
                    gr->closer.b_closer++;
                else
                    gr->closer.ties++;
            }
            gr->mean_ulp = fin ? sum / (double)fin : 0;
            gr->arbitrated = true;
        }
    }
    return BP_OK;
}

void bp_coll_map_finish(bp_coll_map_t *m)
{
    for (size_t s = 0; s < m->nsizes; s++) {
        free(m->sz[s].ref);
        m->sz[s].ref = NULL;
    }
}

/* ---- verdicts ---------------------------------------------------------- */

bool bp_coll_cell_breaks(const bp_coll_map_t *m, size_t s, size_t c)
{
    const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
    if (x->state != BP_CELL_RAN)
        return false;
    const bp_coll_group_t *g = &m->sz[s].g[x->group];
    bool group_fails = x->group > 0 && (!g->compared || !g->cmp.pass);
    return group_fails || x->repeat_differ || x->process_differ || x->ranks_differ ||
           x->copy_differ;
}

bool bp_coll_map_pass(const bp_coll_map_t *m)
{
    bool ran = false;
    for (size_t s = 0; s < m->nsizes; s++)
        for (size_t c = 0; c < m->ncfg; c++) {
            ran |= bp_coll_cell(m, s, c)->state == BP_CELL_RAN;
            if (bp_coll_cell_breaks(m, s, c))
                return false;
        }
    return ran; /* nothing compared is never a pass */
}

size_t bp_coll_map_unstable(const bp_coll_map_t *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nsizes * m->ncfg; i++)
        n += m->cell[i].repeat_differ || m->cell[i].process_differ;
    return n;
}

bool bp_coll_same_partition(const bp_coll_map_t *m, size_t s1, size_t s2)
{
    for (size_t a = 0; a < m->ncfg; a++)
        for (size_t b = a + 1; b < m->ncfg; b++) {
            const bp_coll_cell_t *a1 = bp_coll_cell(m, s1, a), *b1 = bp_coll_cell(m, s1, b),
                                 *a2 = bp_coll_cell(m, s2, a), *b2 = bp_coll_cell(m, s2, b);
            if (a1->state != BP_CELL_RAN || b1->state != BP_CELL_RAN ||
                a2->state != BP_CELL_RAN || b2->state != BP_CELL_RAN)
                continue;
            if ((a1->group == b1->group) != (a2->group == b2->group))
                return false;
        }
    return true;
}

bool bp_coll_order_changes(const bp_coll_map_t *m, size_t s, size_t c)
{
    if (!s)
        return false;
    const bp_coll_cell_t *x = bp_coll_cell(m, s - 1, c), *y = bp_coll_cell(m, s, c);
    if (!x->order.done || !y->order.done || !x->order.nords || !y->order.nords)
        return false;
    char a[1024], b[1024];
    bp_coll_order_set(&x->order, a, sizeof a);
    bp_coll_order_set(&y->order, b, sizeof b);
    return strcmp(a, b) != 0;
}

size_t bp_coll_map_ncells(const bp_coll_map_t *m)
{
    return m->nsizes * m->ncfg;
}

void bp_coll_map_digests(const bp_coll_map_t *m, uint64_t *out)
{
    for (size_t i = 0; i < m->nsizes * m->ncfg; i++)
        out[i] = m->cell[i].state == BP_CELL_RAN ? m->cell[i].digest : 0;
}

size_t bp_coll_map_check_digests(bp_coll_map_t *m, const uint64_t *d)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nsizes * m->ncfg; i++) {
        bp_coll_cell_t *x = &m->cell[i];
        if (x->state != BP_CELL_RAN)
            continue;
        x->processes++;
        if (d[i] != x->digest) {
            x->process_differ++;
            n++;
        }
    }
    return n;
}
