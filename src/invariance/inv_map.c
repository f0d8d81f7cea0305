/* Invariance maps: result groups, bands, intervals and arbitration (inv.h). */
#include "inv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const axis_letters[BP_INV_NAXES] = {"M", "S", "T"};
static const char *const axis_names[BP_INV_NAXES] = {"batch", "split", "ranks"};
static const char *const place_names[BP_INV_NPLACES] = {"first", "middle", "last"};

const char *bp_inv_axis_letter(bp_inv_axis_t a)
{
    return (unsigned)a < BP_INV_NAXES ? axis_letters[a] : "?";
}

const char *bp_inv_axis_name(bp_inv_axis_t a)
{
    return (unsigned)a < BP_INV_NAXES ? axis_names[a] : "?";
}

const char *bp_inv_place_name(bp_inv_place_t p)
{
    return (unsigned)p < BP_INV_NPLACES ? place_names[p] : "?";
}

bool bp_inv_place_parse(const char *s, bp_inv_place_t *out)
{
    for (int i = 0; i < BP_INV_NPLACES; i++)
        if (strcmp(s, place_names[i]) == 0) {
            *out = (bp_inv_place_t)i;
            return true;
        }
    return false;
}

int64_t bp_inv_place_row(bp_inv_place_t p, int64_t m, int64_t r)
{
    switch (p) {
    case BP_INV_MIDDLE: return (m - r) / 2;
    case BP_INV_LAST: return m - r;
    default: return 0;
    }
}

void bp_inv_algo_init(bp_inv_algo_t *a)
{
    memset(a, 0, sizeof *a);
    a->same_bits = -1;
}

bool bp_inv_algo_equal(const bp_inv_algo_t *a, const bp_inv_algo_t *b)
{
    if (a->known != b->known || a->lt != b->lt)
        return false;
    if (a->lt && (a->id != b->id || a->tile != b->tile || a->stages != b->stages ||
                  a->reduction != b->reduction || a->swizzle != b->swizzle ||
                  a->custom != b->custom || a->splitk != b->splitk ||
                  a->inner != b->inner || a->cluster != b->cluster))
        return false;
    return strcmp(a->text, b->text) == 0;
}

void bp_inv_algo_format(const bp_inv_algo_t *a, char *out, size_t n)
{
    if (!a->known) {
        snprintf(out, n, "-");
        return;
    }
    if (!a->lt) {
        snprintf(out, n, "%s", a->text);
        return;
    }
    const char *t = bp_inv_tile_name(a->tile), *s = bp_inv_stages_name(a->stages),
               *r = bp_inv_reduction_name(a->reduction);
    char ts[32], ss[32], rs[32];
    snprintf(ts, sizeof ts, "%s", t ? t : "?");
    snprintf(ss, sizeof ss, "%s", s ? s : "?");
    if (r)
        snprintf(rs, sizeof rs, "%s", r);
    else
        snprintf(rs, sizeof rs, "0x%x", a->reduction);
    snprintf(out, n,
             "algo %" PRId32 ", tile %s (id %" PRIu32 "), stages %s (id %" PRIu32
             "), split-K %" PRId32 ", reduction %s, swizzle %" PRIu32
             ", custom %" PRIu32 ", workspace %" PRIu64 "%s%s",
             a->id, ts, a->tile, ss, a->stages, a->splitk, rs, a->swizzle,
             a->custom, a->workspace, a->text[0] ? "; " : "", a->text);
}

uint64_t bp_inv_digest(const void *bits, size_t n)
{
    const unsigned char *p = bits;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static size_t result_bytes(const bp_inv_map_t *m)
{
    return m->nout * bp_dtype_info(m->dtype)->size;
}

bp_status bp_inv_map_init(bp_inv_map_t *m, bp_dtype_t dt, int64_t rows,
                          int64_t cols, const void *ref, const bp_policy_t *pol,
                          bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    m->dtype = dt;
    m->rows = rows;
    m->cols = cols;
    m->nout = (size_t)rows * (size_t)cols;
    snprintf(m->dtype_name, sizeof m->dtype_name, "%s", bp_dtype_name(dt));
    if (pol)
        m->policy = *pol;
    else
        bp_policy_exact(&m->policy);
    size_t nb = result_bytes(m);
    m->g = calloc(4, sizeof *m->g);
    void *bits = malloc(nb ? nb : 1);
    if (!m->g || !bits) {
        free(m->g);
        free(bits);
        m->g = NULL;
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    memcpy(bits, ref, nb);
    m->capg = 4;
    m->ng = 1;
    m->g[0].bits = bits;
    m->g[0].digest = bp_inv_digest(bits, nb);
    return BP_OK;
}

void bp_inv_map_free(bp_inv_map_t *m)
{
    for (size_t i = 0; i < m->ng; i++) {
        free(m->g[i].bits);
        bp_cmp_free(&m->g[i].cmp);
    }
    free(m->g);
    for (int b = 0; b < m->nbands; b++) {
        free(m->band[b].cfg);
        free(m->band[b].iv);
    }
    free(m->oracle);
    memset(m, 0, sizeof *m);
}

bp_status bp_inv_map_band(bp_inv_map_t *m, bp_inv_place_t p, bp_inv_band_t **out,
                          bp_error_t *err)
{
    if (m->nbands >= BP_INV_MAXBANDS)
        return bp_error_set(err, BP_EINTERNAL, "invariance map: more than %d bands",
                            BP_INV_MAXBANDS);
    bp_inv_band_t *b = &m->band[m->nbands++];
    memset(b, 0, sizeof *b);
    b->place = p;
    *out = b;
    return BP_OK;
}

/* The group holding exactly these bits, or -1. */
static int find_group(const bp_inv_map_t *m, const void *bits, uint64_t digest)
{
    size_t nb = result_bytes(m);
    for (size_t i = 0; i < m->ng; i++)
        if (m->g[i].digest == digest && memcmp(m->g[i].bits, bits, nb) == 0)
            return (int)i;
    return -1;
}

bp_status bp_inv_map_add(bp_inv_map_t *m, bp_inv_band_t *b, int64_t value,
                         const void *bits, const bp_inv_algo_t *algo,
                         bp_inv_cfg_t **cfg, bp_error_t *err)
{
    size_t nb = result_bytes(m);
    uint64_t d = bp_inv_digest(bits, nb);
    int g = find_group(m, bits, d);
    if (g < 0) {
        if (m->ng == m->capg) {
            size_t cap = m->capg * 2;
            bp_inv_group_t *ng = realloc(m->g, cap * sizeof *ng);
            if (!ng)
                return bp_error_set(err, BP_ENOMEM, "out of memory");
            m->g = ng;
            m->capg = cap;
        }
        void *copy = malloc(nb ? nb : 1);
        if (!copy)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        memcpy(copy, bits, nb);
        g = (int)m->ng++;
        memset(&m->g[g], 0, sizeof m->g[g]);
        m->g[g].bits = copy;
        m->g[g].digest = d;
    }
    if (b->ncfg == b->capcfg) {
        size_t cap = b->capcfg ? b->capcfg * 2 : 64;
        bp_inv_cfg_t *nc = realloc(b->cfg, cap * sizeof *nc);
        if (!nc)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        b->cfg = nc;
        b->capcfg = cap;
    }
    bp_inv_cfg_t *c = &b->cfg[b->ncfg++];
    memset(c, 0, sizeof *c);
    c->value = value;
    c->group = g;
    c->digest = d;
    if (algo)
        c->algo = *algo;
    else
        bp_inv_algo_init(&c->algo);
    m->g[g].nconfigs++;
    if (cfg)
        *cfg = c;
    return BP_OK;
}

static bp_status band_intervals(bp_inv_band_t *b, bp_error_t *err)
{
    free(b->iv);
    b->iv = NULL;
    b->niv = 0;
    if (!b->ncfg)
        return BP_OK;
    size_t n = 1;
    for (size_t i = 1; i < b->ncfg; i++)
        n += b->cfg[i].group != b->cfg[i - 1].group;
    b->iv = malloc(n * sizeof *b->iv);
    if (!b->iv)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    size_t k = 0;
    b->iv[0] = (bp_inv_run_t){0, 0, b->cfg[0].group};
    for (size_t i = 1; i < b->ncfg; i++) {
        if (b->cfg[i].group != b->iv[k].group)
            b->iv[++k] = (bp_inv_run_t){i, i, b->cfg[i].group};
        else
            b->iv[k].last = i;
    }
    b->niv = n;
    return BP_OK;
}

static void as_buf(const bp_inv_map_t *m, void *bits, bp_buf_t *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = m->dtype;
    out->ndim = 2;
    out->shape[0] = m->rows;
    out->shape[1] = m->cols;
    out->numel = m->nout;
    out->data = bits;
}

bp_status bp_inv_map_finish(bp_inv_map_t *m, bp_error_t *err)
{
    bp_status st;
    for (int b = 0; b < m->nbands; b++)
        if ((st = band_intervals(&m->band[b], err)))
            return st;
    bp_buf_t ref;
    as_buf(m, m->g[0].bits, &ref);
    for (size_t i = 0; i < m->ng; i++) {
        bp_buf_t x;
        as_buf(m, m->g[i].bits, &x);
        bp_cmp_free(&m->g[i].cmp);
        if ((st = bp_compare(&ref, &x, &m->policy, NULL, &m->g[i].cmp, err)))
            return st;
        m->g[i].compared = true;
    }
    m->finished = true;
    return BP_OK;
}

bp_status bp_inv_map_arbitrate(bp_inv_map_t *m, const void *oracle, bp_error_t *err)
{
    size_t nb = result_bytes(m), es = bp_dtype_info(m->dtype)->size;
    free(m->oracle);
    m->oracle = malloc(nb ? nb : 1);
    if (!m->oracle)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    memcpy(m->oracle, oracle, nb);
    for (size_t g = 0; g < m->ng; g++) {
        bp_inv_group_t *gr = &m->g[g];
        gr->max_ulp = 0;
        gr->max_ulp_idx = 0;
        gr->exact = 0;
        double sum = 0;
        size_t finite = 0;
        for (size_t i = 0; i < m->nout; i++) {
            uint64_t o = bp_dtype_load_bits(m->dtype, oracle, i),
                     v = bp_dtype_load_bits(m->dtype, gr->bits, i);
            uint64_t u = bp_ulp_distance(m->dtype, o, v);
            if (bp_dtype_bits_equal(m->dtype, o, v, false))
                gr->exact++;
            if (u != UINT64_MAX) {
                sum += (double)u;
                finite++;
            }
            if (u > gr->max_ulp) {
                gr->max_ulp = u;
                gr->max_ulp_idx = i;
            }
        }
        gr->mean_ulp = finite ? sum / (double)finite : 0;
    }
    (void)es;
    return BP_OK;
}

void bp_inv_closer(const bp_inv_map_t *m, int a, int b, bp_inv_closer_t *out)
{
    memset(out, 0, sizeof *out);
    if (!m->oracle)
        return;
    for (size_t i = 0; i < m->nout; i++) {
        uint64_t o = bp_dtype_load_bits(m->dtype, m->oracle, i);
        uint64_t va = bp_dtype_load_bits(m->dtype, m->g[a].bits, i),
                 vb = bp_dtype_load_bits(m->dtype, m->g[b].bits, i);
        uint64_t ua = bp_ulp_distance(m->dtype, o, va), ub = bp_ulp_distance(m->dtype, o, vb);
        /* at one distance, the oracle's own bits (its zero's sign) are closer */
        bool ea = bp_dtype_bits_equal(m->dtype, o, va, false),
             eb = bp_dtype_bits_equal(m->dtype, o, vb, false);
        if (ua < ub || (ua == ub && ea && !eb))
            out->a_closer++;
        else if (ub < ua || (ua == ub && eb && !ea))
            out->b_closer++;
        else
            out->ties++;
    }
}

bool bp_inv_group_pass(const bp_inv_map_t *m, int g)
{
    if (g == 0)
        return true;
    return m->g[g].compared && m->g[g].cmp.pass;
}

bool bp_inv_cfg_breaks(const bp_inv_map_t *m, const bp_inv_cfg_t *c)
{
    return !bp_inv_group_pass(m, c->group) || c->repeat_differ || c->process_differ;
}

size_t bp_inv_band_breaking(const bp_inv_map_t *m, const bp_inv_band_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->ncfg; i++)
        n += bp_inv_cfg_breaks(m, &b->cfg[i]);
    return n;
}

bool bp_inv_map_pass(const bp_inv_map_t *m)
{
    for (int b = 0; b < m->nbands; b++)
        if (bp_inv_band_breaking(m, &m->band[b]))
            return false;
    return true;
}

size_t bp_inv_map_unstable(const bp_inv_map_t *m)
{
    size_t n = 0;
    for (int b = 0; b < m->nbands; b++)
        for (size_t i = 0; i < m->band[b].ncfg; i++)
            n += m->band[b].cfg[i].repeat_differ || m->band[b].cfg[i].process_differ;
    return n;
}

size_t bp_inv_map_nconfigs(const bp_inv_map_t *m)
{
    size_t n = 0;
    for (int b = 0; b < m->nbands; b++)
        n += m->band[b].ncfg;
    return n;
}

void bp_inv_map_digests(const bp_inv_map_t *m, uint64_t *out)
{
    size_t k = 0;
    for (int b = 0; b < m->nbands; b++)
        for (size_t i = 0; i < m->band[b].ncfg; i++)
            out[k++] = m->band[b].cfg[i].digest;
}

size_t bp_inv_map_check_digests(bp_inv_map_t *m, const uint64_t *d)
{
    size_t k = 0, differ = 0;
    for (int b = 0; b < m->nbands; b++)
        for (size_t i = 0; i < m->band[b].ncfg; i++) {
            bp_inv_cfg_t *c = &m->band[b].cfg[i];
            c->processes++;
            if (d[k++] != c->digest) {
                c->process_differ++;
                differ++;
            }
        }
    return differ;
}
