/* The collective sweep and the emulation's engine (coll_run.h). */
#include "coll_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_emu.h"
#include "timing.h"

/* ---- the emulation as an engine ---------------------------------------- */

typedef struct {
    bp_dtype_t dt;
    bp_coll_input_t in;
    uint64_t cap;
    char *x; /* every rank's input, W x cap elements */
} emu_input_t;

typedef struct {
    bp_coll_emu_t m;
    emu_input_t in[16];
    int nin;
} emu_t;

/* Every rank's input of a kind, made once at the map's largest size. */
static char *emu_inputs(bp_coll_engine_t *e, bp_dtype_t dt, bp_coll_input_t in, uint64_t cap,
                        bp_error_t *err)
{
    emu_t *s = e->state;
    emu_input_t *x = NULL;
    for (int i = 0; i < s->nin && !x; i++)
        if (s->in[i].dt == dt && s->in[i].in == in)
            x = &s->in[i];
    if (x && x->cap >= cap)
        return x->x;
    if (!x) {
        if (s->nin == 16) {
            bp_error_set(err, BP_EINTERNAL, "too many inputs");
            return NULL;
        }
        x = &s->in[s->nin++];
        x->dt = dt;
        x->in = in;
        x->x = NULL;
    }
    size_t es = bp_dtype_info(dt)->size;
    free(x->x);
    x->cap = 0;
    if (!(x->x = malloc((size_t)e->world * (size_t)(cap ? cap : 1) * es))) {
        bp_error_set(err, BP_ENOMEM, "out of memory");
        return NULL;
    }
    for (int r = 0; r < e->world; r++)
        bp_coll_input(in, dt, e->world, r, e->seed, 0, cap, x->x + (size_t)r * cap * es);
    x->cap = cap;
    return x->x;
}

static bp_status emu_begin(bp_coll_engine_t *e, const bp_coll_cfg_t *c, bp_error_t *err)
{
    emu_t *s = e->state;
    char desc[160];
    /* the chunk follows the dtype: set per call */
    return bp_coll_emu_for(c, BP_F32, &s->m, desc, sizeof desc, err);
}

static bp_status emu_run(bp_coll_engine_t *e, bp_coll_kind_t k, bp_coll_redop_t op,
                         bp_dtype_t dt, bp_coll_input_t in, uint64_t n, uint64_t cap, int repeat,
                         void *out, bp_coll_info_t *info, bp_error_t *err)
{
    (void)repeat;
    emu_t *s = e->state;
    bp_coll_emu_t m = s->m;
    /* the model's pieces are bytes: the same bytes in every dtype */
    size_t es = bp_dtype_info(dt)->size;
    m.chunk = m.chunk * 4 / es;
    memset(info, 0, sizeof *info);
    if (!out)
        return BP_OK;
    /* the all-gather's inputs: n / W elements each; the cache holds cap */
    uint64_t per = k == BP_COLL_ALL_GATHER ? cap / (uint64_t)e->world : cap;
    char *x = emu_inputs(e, dt, in, per, err);
    if (!x)
        return err->code;
    const void *ins[BP_COLL_ORDER_MAX];
    for (int r = 0; r < e->world; r++)
        ins[r] = x + (size_t)r * (size_t)per * es;
    return bp_coll_emu_run(&m, k, op, dt, e->world, ins, n, out, err);
}

static void emu_end(bp_coll_engine_t *e)
{
    (void)e;
}

static void emu_close(bp_coll_engine_t *e)
{
    emu_t *s = e->state;
    for (int i = 0; s && i < s->nin; i++)
        free(s->in[i].x);
    free(s);
    free(e);
}

bp_status bp_coll_engine_emulate(int world, uint64_t seed, bp_coll_engine_t **out,
                                 bp_error_t *err)
{
    *out = NULL;
    if (world < 1 || world > BP_COLL_ORDER_MAX)
        return bp_error_set(err, BP_EINPUT, "the emulation runs 1 to %d ranks, not %d",
                            BP_COLL_ORDER_MAX, world);
    bp_coll_engine_t *e = calloc(1, sizeof *e);
    emu_t *s = calloc(1, sizeof *s);
    if (!e || !s) {
        free(e);
        free(s);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    snprintf(e->name, sizeof e->name, "emulate");
    snprintf(e->desc, sizeof e->desc, "the CPU's emulation of %d ranks: Ring as a ring of "
             "pieces (LL 4K, LL128 32K, Simple 128K; the channels given, else 1), Tree as a "
             "chain to rank 0; partial sums rounded to the dtype", world);
    e->world = world;
    e->rank = 0;
    e->seed = seed;
    e->state = s;
    e->begin = emu_begin;
    e->run = emu_run;
    e->end = emu_end;
    e->close = emu_close;
    *out = e;
    return BP_OK;
}

void bp_coll_engine_close(bp_coll_engine_t *e)
{
    if (e)
        e->close(e);
}

/* ---- the sweep --------------------------------------------------------- */

static void free_maps(bp_coll_map_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bp_coll_map_free(&v[i]);
    free(v);
}

static bp_status make_maps(const bp_coll_engine_t *e, const bp_coll_sweep_opts_t *o,
                           bp_coll_map_t **out, size_t *nout, bp_error_t *err)
{
    size_t cap = (size_t)o->nkinds * (size_t)o->ndtypes * (size_t)(o->nops ? o->nops : 1);
    bp_coll_map_t *v = calloc(cap ? cap : 1, sizeof *v);
    if (!v)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    size_t n = 0;
    bp_status st = BP_OK;
    for (int k = 0; k < o->nkinds && !st; k++)
        for (int d = 0; d < o->ndtypes && !st; d++) {
            bp_coll_size_t *sizes;
            size_t ns;
            st = bp_coll_sizes_parse(o->bytes, bp_dtype_info(o->dtypes[d])->size, &sizes, &ns,
                                     err);
            int nops = bp_coll_kind_reduces(o->kinds[k]) ? o->nops : 1;
            for (int p = 0; p < nops && !st; p++) {
                bp_coll_map_t *m = &v[n];
                st = bp_coll_map_init(m, o->kinds[k], o->dtypes[d],
                                      bp_coll_kind_reduces(o->kinds[k]) ? o->ops[p]
                                                                        : BP_COLL_SUM,
                                      e->world, sizes, ns, o->cfg, o->ncfg, &o->policy, e->seed,
                                      err);
                if (st)
                    break;
                n++;
                snprintf(m->engine, sizeof m->engine, "%s", e->name);
                snprintf(m->engine_desc, sizeof m->engine_desc, "%s", e->desc);
                snprintf(m->lib, sizeof m->lib, "%s", e->lib);
            }
            free(sizes);
        }
    if (st) {
        free_maps(v, n);
        return st;
    }
    *out = v;
    *nout = n;
    return BP_OK;
}

/* The cells of map m under configuration c. */
static bp_status map_cells(bp_coll_engine_t *e, const bp_coll_sweep_opts_t *o,
                           bp_coll_map_t *m, size_t c, void *out, void *pout, bp_error_t *err)
{
    bool root = e->rank == 0;
    char unavailable[300] = "";
    uint64_t cap = 0;
    for (size_t s = 0; s < m->nsizes; s++)
        cap = m->sz[s].n > cap ? m->sz[s].n : cap;
    for (size_t s = 0; s < m->nsizes; s++) {
        uint64_t n = m->sz[s].n;
        if (!n) {
            if (root)
                bp_coll_map_skip(m, s, c, BP_CELL_NOTRUN, "smaller than one element per rank");
            continue;
        }
        if (unavailable[0]) {
            if (root)
                bp_coll_map_skip(m, s, c, BP_CELL_UNAVAIL, unavailable);
            continue;
        }
        double t0 = bp_timing_now();
        bp_coll_info_t info;
        bp_error_t e2 = {0};
        bp_status st = BP_OK;
        bool reduces = bp_coll_kind_reduces(m->kind);
        if (reduces && o->probe) {
            st = e->run(e, m->kind, m->op, m->dtype, BP_COLL_PROBES, n, cap, 0, root ? pout : NULL,
                        &info, &e2);
            if (!st && root)
                st = bp_coll_map_order(m, s, c, pout, &e2);
        }
        if (!st)
            st = e->run(e, m->kind, m->op, m->dtype, reduces ? BP_COLL_VALUES : BP_COLL_BITS, n,
                        cap, 0, root ? out : NULL, &info, &e2);
        if (st == BP_EUNAVAIL) {
            char sz[32];
            bp_coll_bytes_format(m->sz[s].bytes, sz, sizeof sz);
            if (root)
                bp_coll_map_skip(m, s, c, BP_CELL_UNAVAIL, e2.msg);
            snprintf(unavailable, sizeof unavailable, "not tried: unavailable at %s (%.200s)",
                     sz, e2.msg);
            continue;
        }
        if (st) {
            *err = e2;
            return st;
        }
        if (root && (st = bp_coll_map_result(m, s, c, out, info.ranks_differ,
                                             info.copy_differ, err)))
            return st;
        for (int r = 1; r < o->repeat; r++) {
            st = e->run(e, m->kind, m->op, m->dtype, reduces ? BP_COLL_VALUES : BP_COLL_BITS,
                        n, cap, r, root ? out : NULL, &info, &e2);
            if (st) {
                *err = e2;
                return bp_error_prefix(err, "repeat %d: ", r + 1);
            }
            if (root)
                bp_coll_map_repeat(m, s, c, out, info.ranks_differ);
        }
        if (root)
            bp_coll_cell(m, s, c)->seconds = bp_timing_now() - t0;
        if (o->progress)
            o->progress(o->ctx, m, s, c);
    }
    return BP_OK;
}

bp_status bp_coll_sweep(bp_coll_engine_t *e, const bp_coll_sweep_opts_t *o,
                        bp_coll_map_t **maps, size_t *nmaps, bp_error_t *err)
{
    bp_coll_map_t *v = NULL;
    size_t n = 0;
    bp_status st = make_maps(e, o, &v, &n, err);
    if (st)
        return st;
    /* the largest message of any map, for the result buffers */
    size_t most = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < v[i].nsizes; s++) {
            size_t b = (size_t)v[i].sz[s].n * bp_dtype_info(v[i].dtype)->size;
            most = b > most ? b : most;
        }
    void *out = NULL, *pout = NULL;
    if (e->rank == 0 && (!(out = malloc(most)) || !(pout = malloc(most))))
        st = bp_error_set(err, BP_ENOMEM, "out of memory: two buffers of %zu bytes", most);
    for (size_t c = 0; !st && c < o->ncfg; c++) {
        bp_error_t e2 = {0};
        bp_status b = e->begin(e, &o->cfg[c], &e2);
        if (b == BP_EUNAVAIL) {
            for (size_t i = 0; e->rank == 0 && i < n; i++)
                for (size_t s = 0; s < v[i].nsizes; s++)
                    bp_coll_map_skip(&v[i], s, c, BP_CELL_UNAVAIL, e2.msg);
            continue;
        }
        if (b) {
            *err = e2;
            st = b;
            break;
        }
        for (size_t i = 0; !st && i < n; i++)
            st = map_cells(e, o, &v[i], c, out, pout, err);
        e->end(e);
        if (st) {
            char name[64];
            bp_coll_cfg_name(&o->cfg[c], name, sizeof name);
            bp_error_prefix(err, "%s: ", name);
        }
    }
    free(out);
    free(pout);
    if (st) {
        free_maps(v, n);
        return st;
    }
    *maps = v;
    *nmaps = n;
    return BP_OK;
}
