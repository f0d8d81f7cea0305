/* The "collectives" array of the invariance object (inv_report.h): per
 * map its configurations, and per message size the result groups (members,
 * distance to group 0, inferred order, the emulation's prediction, the
 * oracle's verdict) and every cell; then the boundaries. */
#include <inttypes.h>
#include <stdio.h>

#include "inv_report.h"
#include "jsonval.h"

static const char *const state_names[] = {"not run", "ran", "unavailable", "failed"};

static json_t *order_json(const bp_coll_cell_t *x)
{
    const bp_coll_order_t *o = &x->order;
    char sum[1024];
    bp_coll_order_summary(o, sum, sizeof sum);
    if (!o->done)
        return json_pack("{s:b, s:s}", "inferred", 0, "why", o->why[0] ? o->why : "not probed");
    json_t *ords = json_array(), *runs = json_array();
    for (size_t i = 0; i < o->nords; i++)
        json_array_append_new(ords, json_pack("{s:s, s:s, s:I, s:I}", "order", o->ords[i].text,
                                               "width", o->ords[i].width, "elements",
                                               (json_int_t)o->ords[i].elements, "runs",
                                               (json_int_t)o->ords[i].runs));
    /* the first runs: where each order sits */
    for (size_t i = 0; i < o->nruns && i < 64; i++)
        json_array_append_new(runs, json_pack("[I, I, i, I, I]", (json_int_t)o->runs[i].first,
                                              (json_int_t)o->runs[i].count, o->runs[i].ord,
                                              (json_int_t)o->runs[i].amb_lo,
                                              (json_int_t)o->runs[i].amb_hi));
    json_t *j = json_pack("{s:b, s:s, s:I, s:I, s:o, s:I, s:o, s:I, s:b}", "inferred", 1,
                          "summary", sum, "block", (json_int_t)o->block, "probed",
                          (json_int_t)o->probed, "orders", ords, "runs_total",
                          (json_int_t)o->nruns, "runs", runs, "mixed", (json_int_t)o->mixed,
                          "runs_cut", o->runs_cut);
    if (j && x->verify_checked)
        json_object_set_new(j, "recomputed", json_pack("{s:I, s:I}", "checked",
                                                       (json_int_t)x->verify_checked, "same",
                                                       (json_int_t)x->verify_same));
    if (j && x->emu_agree >= 0)
        json_object_set_new(j, "emulation", json_pack("{s:s, s:f, s:b}", "model", x->emu_desc,
                                                      "agree", x->emu_agree, "same_set",
                                                      x->emu_same_set));
    return j;
}

static json_t *size_json(const bp_coll_map_t *m, size_t s)
{
    const bp_coll_slot_t *z = &m->sz[s];
    json_t *groups = json_array(), *cells = json_array();
    for (size_t g = 0; g < z->ng; g++) {
        const bp_coll_group_t *gr = &z->g[g];
        char d[20];
        snprintf(d, sizeof d, "%016" PRIx64, gr->digest);
        json_t *mem = json_array();
        for (size_t c = 0; c < m->ncfg; c++) {
            const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
            if (x->state == BP_CELL_RAN && x->group == (int)g) {
                char name[64];
                bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
                json_array_append_new(mem, json_string(name));
            }
        }
        json_t *y = json_pack("{s:I, s:s, s:o, s:b}", "group", (json_int_t)g, "digest", d,
                              "members", mem, "pass", !g || (gr->compared && gr->cmp.pass));
        if (!y)
            goto fail;
        json_array_append_new(groups, y);
        if (gr->compared) {
            json_object_set_new(y, "mismatched", json_integer((json_int_t)gr->cmp.mismatched));
            json_object_set_new(y, "max_ulp", bp_json_ulp(gr->cmp.max_ulp));
        }
        if (bp_coll_kind_reduces(m->kind))
            json_object_set_new(y, "order", order_json(bp_coll_cell(m, s, (size_t)gr->first)));
        if (gr->arbitrated)
            json_object_set_new(y, "oracle",
                                json_pack("{s:o, s:I, s:f, s:I, s:I, s:I, s:I}", "max_ulp",
                                          bp_json_ulp(gr->max_ulp), "exact",
                                          (json_int_t)gr->exact, "mean_ulp", gr->mean_ulp,
                                          "sampled", (json_int_t)z->ns, "nearer",
                                          (json_int_t)gr->closer.b_closer, "farther",
                                          (json_int_t)gr->closer.a_closer, "tied",
                                          (json_int_t)gr->closer.ties));
    }
    for (size_t c = 0; c < m->ncfg; c++) {
        const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
        char name[64];
        bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
        json_t *y = json_pack("{s:s, s:s, s:i, s:o, s:i, s:i, s:i, s:i, s:i, s:I, s:f, s:b}",
                              "config", name, "state", state_names[x->state], "group", x->group,
                              "why", x->why[0] ? json_string(x->why) : json_null(), "repeats",
                              (int)x->repeats, "repeat_differ", (int)x->repeat_differ,
                              "processes", (int)x->processes, "process_differ",
                              (int)x->process_differ, "ranks_differ", (int)x->ranks_differ,
                              "copy_differ", (json_int_t)x->copy_differ, "seconds", x->seconds,
                              "breaks", bp_coll_cell_breaks(m, s, c));
        if (!y)
            goto fail;
        json_array_append_new(cells, y);
    }
    return json_pack("{s:I, s:I, s:o, s:o, s:o}", "bytes", (json_int_t)z->bytes, "elements",
                     (json_int_t)z->n, "what", z->what ? json_string(z->what) : json_null(),
                     "groups", groups, "cells", cells);
fail:
    json_decref(groups);
    json_decref(cells);
    return NULL;
}

static json_t *boundaries_json(const bp_coll_map_t *m)
{
    json_t *b = json_array();
    size_t prev = SIZE_MAX;
    for (size_t s = 0; s < m->nsizes; s++) {
        bool ran = false;
        for (size_t c = 0; c < m->ncfg && !ran; c++)
            ran = bp_coll_cell(m, s, c)->state == BP_CELL_RAN;
        if (!ran)
            continue;
        if (prev != SIZE_MAX) {
            if (!bp_coll_same_partition(m, prev, s))
                json_array_append_new(b, json_pack("{s:s, s:I, s:I}", "kind", "regroup",
                                                   "after", (json_int_t)m->sz[prev].bytes,
                                                   "at", (json_int_t)m->sz[s].bytes));
            for (size_t c = 0; prev == s - 1 && c < m->ncfg; c++)
                if (bp_coll_order_changes(m, s, c)) {
                    char name[64], x[1024], y[1024];
                    bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
                    bp_coll_order_set(&bp_coll_cell(m, prev, c)->order, x, sizeof x);
                    bp_coll_order_set(&bp_coll_cell(m, s, c)->order, y, sizeof y);
                    json_array_append_new(b, json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "kind",
                                                       "order", "config", name, "after",
                                                       (json_int_t)m->sz[prev].bytes, "at",
                                                       (json_int_t)m->sz[s].bytes, "from", x,
                                                       "to", y));
                }
        }
        prev = s;
    }
    return b;
}

json_t *bp_coll_json(const bp_inv_study_t *st)
{
    json_t *a = json_array();
    for (size_t k = 0; a && k < st->ncmaps; k++) {
        const bp_coll_map_t *m = &st->cmaps[k];
        json_t *cfgs = json_array(), *sizes = json_array();
        for (size_t c = 0; c < m->ncfg; c++) {
            char name[64];
            bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
            json_array_append_new(cfgs, json_string(name));
        }
        for (size_t s = 0; s < m->nsizes; s++) {
            json_t *y = size_json(m, s);
            if (!y || json_array_append_new(sizes, y))
                goto fail;
        }
        json_t *x = json_pack("{s:s, s:s, s:o, s:i, s:s, s:s, s:s, s:b, s:I, s:o, s:o, s:o}",
                              "collective", bp_coll_kind_name(m->kind), "dtype",
                              bp_dtype_name(m->dtype), "op",
                              bp_coll_kind_reduces(m->kind) ? json_string(bp_coll_redop_name(m->op))
                                                            : json_null(),
                              "world", m->world, "engine", m->engine, "engine_desc",
                              m->engine_desc, "library", m->lib, "pass", bp_coll_map_pass(m),
                              "unstable", (json_int_t)bp_coll_map_unstable(m), "configurations",
                              cfgs, "sizes", sizes, "boundaries", boundaries_json(m));
        if (!x || json_array_append_new(a, x))
            goto fail;
        if (m->oracle_note[0])
            json_object_set_new(x, "oracle_note", json_string(m->oracle_note));
    }
    return a;
fail:
    json_decref(a);
    return NULL;
}
