/* The "invariance" object of the JSON report (inv_report.h). */
#include <inttypes.h>
#include <stdio.h>

#include "inv_report.h"
#include "jsonval.h"

static json_t *algo_json(const bp_inv_algo_t *a)
{
    if (!a->known)
        return json_null();
    json_t *o = json_pack("{s:s, s:s}", "source", a->source, "text", a->text);
    if (!o)
        return NULL;
    if (a->lt) {
        const char *t = bp_inv_tile_name(a->tile), *s = bp_inv_stages_name(a->stages),
                   *r = bp_inv_reduction_name(a->reduction);
        json_t *lt = json_pack(
            "{s:i, s:I, s:o, s:I, s:o, s:i, s:I, s:o, s:I, s:I, s:i, s:i, s:I, s:f}",
            "algo_id", (int)a->id, "tile", (json_int_t)a->tile, "tile_name",
            t ? json_string(t) : json_null(), "stages", (json_int_t)a->stages,
            "stages_name", s ? json_string(s) : json_null(), "splitk", (int)a->splitk,
            "reduction", (json_int_t)a->reduction, "reduction_name",
            r ? json_string(r) : json_null(), "swizzle", (json_int_t)a->swizzle,
            "custom", (json_int_t)a->custom, "inner_shape", (int)a->inner,
            "cluster_shape", (int)a->cluster, "workspace", (json_int_t)a->workspace,
            "waves", (double)a->waves);
        if (!lt || json_object_update(o, lt)) {
            json_decref(lt);
            json_decref(o);
            return NULL;
        }
        json_decref(lt);
    }
    if (a->same_bits >= 0)
        json_object_set_new(o, "reproduces_bits", json_boolean(a->same_bits));
    return o;
}

static json_t *group_json(const bp_inv_map_t *m, size_t g)
{
    const bp_inv_group_t *gr = &m->g[g];
    char d[20];
    snprintf(d, sizeof d, "%016" PRIx64, gr->digest);
    json_t *o = json_pack("{s:I, s:s, s:I, s:b}", "group", (json_int_t)g, "digest", d,
                          "configurations", (json_int_t)gr->nconfigs, "pass",
                          bp_inv_group_pass(m, (int)g));
    if (!o)
        return NULL;
    if (gr->compared) {
        json_object_set_new(o, "mismatched", json_integer((json_int_t)gr->cmp.mismatched));
        json_object_set_new(o, "max_ulp", bp_json_ulp(gr->cmp.max_ulp));
    }
    if (m->oracle)
        json_object_set_new(o, "oracle",
                            json_pack("{s:o, s:I, s:I, s:f}", "max_ulp",
                                      bp_json_ulp(gr->max_ulp), "max_ulp_index",
                                      (json_int_t)gr->max_ulp_idx, "exact",
                                      (json_int_t)gr->exact, "mean_ulp", gr->mean_ulp));
    return o;
}

static json_t *band_json(const bp_inv_map_t *m, const bp_inv_band_t *b)
{
    json_t *cfgs = json_array(), *ivs = json_array(), *bds = json_array();
    json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:o}", "placement",
                          bp_inv_place_name(b->place), "breaking",
                          (json_int_t)bp_inv_band_breaking(m, b), "configurations", cfgs,
                          "intervals", ivs, "boundaries", bds);
    if (!o)
        return NULL;
    for (size_t i = 0; i < b->ncfg; i++) {
        const bp_inv_cfg_t *c = &b->cfg[i];
        char d[20];
        snprintf(d, sizeof d, "%016" PRIx64, c->digest);
        json_t *x = json_pack("{s:I, s:i, s:s, s:o, s:i, s:i, s:i, s:i}", "value",
                              (json_int_t)c->value, "group", c->group, "digest", d,
                              "algo", algo_json(&c->algo), "repeats", (int)c->repeats,
                              "repeat_differ", (int)c->repeat_differ, "processes",
                              (int)c->processes, "process_differ", (int)c->process_differ);
        if (!x || json_array_append_new(cfgs, x))
            goto fail;
    }
    for (size_t i = 0; i < b->niv; i++) {
        const bp_inv_run_t *r = &b->iv[i];
        json_t *x = json_pack("{s:I, s:I, s:i, s:I}", "from",
                              (json_int_t)b->cfg[r->first].value, "to",
                              (json_int_t)b->cfg[r->last].value, "group", r->group,
                              "count", (json_int_t)(r->last - r->first + 1));
        if (!x || json_array_append_new(ivs, x))
            goto fail;
        if (!i)
            continue;
        const bp_inv_cfg_t *l = &b->cfg[b->iv[i - 1].last], *rt = &b->cfg[r->first];
        json_t *y = json_pack("{s:I, s:I, s:i, s:i, s:o, s:o}", "left",
                              (json_int_t)l->value, "right", (json_int_t)rt->value,
                              "left_group", l->group, "right_group", rt->group,
                              "left_algo", algo_json(&l->algo), "right_algo",
                              algo_json(&rt->algo));
        if (!y || json_array_append_new(bds, y))
            goto fail;
        if (m->oracle) {
            bp_inv_closer_t c;
            bp_inv_closer(m, l->group, rt->group, &c);
            json_object_set_new(y, "closer",
                                json_pack("{s:I, s:I, s:I}", "left",
                                          (json_int_t)c.a_closer, "right",
                                          (json_int_t)c.b_closer, "ties",
                                          (json_int_t)c.ties));
        }
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}

json_t *bp_inv_json(const bp_inv_study_t *s)
{
    char pol[128];
    bp_policy_format(&s->policy, pol, sizeof pol);
    json_t *maps = json_array(), *notes = json_copy(s->notes);
    json_t *o = json_pack("{s:I, s:i, s:i, s:s, s:o, s:o, s:I}", "seed",
                          (json_int_t)s->seed, "repeat", s->repeat, "processes",
                          s->processes, "policy", pol, "notes",
                          notes, "maps", maps, "failures",
                          (json_int_t)bp_inv_study_failures(s));
    if (!o)
        return NULL;
    if (s->ncmaps) {
        json_t *c = bp_coll_json(s);
        if (!c || json_object_set_new(o, "collectives", c))
            goto fail;
    }
    for (size_t i = 0; i < s->nmaps; i++) {
        const bp_inv_map_t *m = &s->maps[i];
        json_t *groups = json_array(), *bands = json_array();
        json_t *x = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:b, "
                              "s:o, s:o, s:I, s:I}",
                              "op", m->op, "shape", m->shape, "dtype", m->dtype_name,
                              "engine", m->engine, "engine_desc", m->engine_desc, "axis",
                              bp_inv_axis_letter(m->axis), "values", m->values, "batch",
                              (json_int_t)m->batch, "rows", (json_int_t)m->rows,
                              "cols", (json_int_t)m->cols, "pass", bp_inv_map_pass(m),
                              "groups", groups, "bands", bands, "unstable",
                              (json_int_t)bp_inv_map_unstable(m), "skipped",
                              (json_int_t)m->nskipped);
        if (!x || json_array_append_new(maps, x))
            goto fail;
        if (m->nskipped)
            json_object_set_new(x, "skipped_reason", json_string(m->skipped));
        if (!m->oracle && m->oracle_note[0])
            json_object_set_new(x, "oracle_note", json_string(m->oracle_note));
        for (size_t g = 0; g < m->ng; g++) {
            json_t *y = group_json(m, g);
            if (!y || json_array_append_new(groups, y))
                goto fail;
        }
        for (int b = 0; b < m->nbands; b++) {
            json_t *y = band_json(m, &m->band[b]);
            if (!y || json_array_append_new(bands, y))
                goto fail;
        }
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}
