/* A ledger diff as JSON (the "ledger" member of diff's JSON report):
 *   {a{path, ops, torch, recorder, created, status, devices[]}, b{...},
 *    alignment{exact, paired, fuzzy, only_a, only_b},
 *    counts{identical, introduced, inherited, absorbed, not_comparable},
 *    first_introduced ENTRY|null, first_differing ENTRY|null,
 *    entries[ENTRY] (those not identical, in order), entries_omitted,
 *    modules[{module, ops, identical, introduced, inherited, absorbed,
 *             not_comparable, outputs, outputs_differ, first ENTRY|null}]}
 *   ENTRY = {status, a SEQ|null, b SEQ|null, op, op_a? (a fuzzy pair's A
 *            name), module, fuzzy, by_presence, via_provenance, external,
 *            args_differ,
 *            differ{a{in[K], out[K]}, b{...}}, from{a SEQ|null, b SEQ|null}}
 */
#include "ledger_diff.h"

#include <string.h>

static json_t *seq(long i)
{
    return i < 0 ? json_null() : json_integer(i);
}

static json_t *side_json(const bp_ledger_t *L)
{
    json_t *o = json_pack("{s:s, s:I}", "path", L->path, "ops", (json_int_t)L->n);
    const char *keys[] = {"torch", "recorder", "created", "python", "platform"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = bp_ledger_header_str(L, keys[i]);
        if (v)
            json_object_set_new(o, keys[i], json_string(v));
    }
    json_t *cuda = json_object_get(L->header, "cuda");
    if (cuda)
        json_object_set(o, "cuda", cuda);
    json_t *set = json_object_get(L->header, "settings");
    if (set)
        json_object_set(o, "settings", set);
    json_t *st = json_object_get(L->end, "status");
    if (st)
        json_object_set(o, "status", st);
    /* The devices its tensors lived on, in order of first appearance. */
    json_t *devs = json_array();
    for (size_t i = 0; i < L->n && json_array_size(devs) < 16; i++)
        for (uint32_t k = 0; k < L->ops[i].nin + L->ops[i].nout; k++) {
            const char *dv = k < L->ops[i].nin ? L->ops[i].in[k].device
                                               : L->ops[i].out[k - L->ops[i].nin].device;
            size_t j;
            json_t *x;
            bool seen = false;
            json_array_foreach(devs, j, x)
                seen = seen || strcmp(json_string_value(x), dv) == 0;
            if (!seen)
                json_array_append_new(devs, json_string(dv));
        }
    json_object_set_new(o, "devices", devs);
    return o;
}

static json_t *differ_json(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e, int side)
{
    long i = side ? e->b : e->a;
    if (i < 0)
        return json_null();
    const bp_ledger_op_t *op = side ? &d->B->ops[i] : &d->A->ops[i];
    json_t *in = json_array(), *out = json_array();
    for (uint32_t k = 0; k < op->nin + op->nout; k++)
        if (bp_ledger_entry_differs(d, e, side, k))
            json_array_append_new(k < op->nin ? in : out,
                                  json_integer(k < op->nin ? k : k - op->nin));
    return json_pack("{s:o, s:o}", "in", in, "out", out);
}

static json_t *entry_json(const bp_ledger_diff_t *d, size_t x)
{
    if (x == SIZE_MAX)
        return json_null();
    const bp_ledger_entry_t *e = &d->e[x];
    const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
    json_t *o = json_pack("{s:s, s:o, s:o, s:s, s:s, s:b, s:b, s:b, s:b, s:b}",
                          "status", bp_lop_status_name(e->status), "a", seq(e->a), "b",
                          seq(e->b), "op", op->op, "module", op->module, "fuzzy", e->fuzzy,
                          "by_presence", e->by_presence, "via_provenance", e->via_provenance,
                          "external", e->external, "args_differ", e->args_differ);
    if (e->fuzzy && strcmp(d->A->ops[e->a].op, op->op) != 0)
        json_object_set_new(o, "op_a", json_string(d->A->ops[e->a].op));
    json_object_set_new(o, "differ", json_pack("{s:o, s:o}", "a", differ_json(d, e, 0), "b",
                                               differ_json(d, e, 1)));
    json_object_set_new(o, "from", json_pack("{s:o, s:o}", "a", seq(e->from_a), "b",
                                             seq(e->from_b)));
    return o;
}

json_t *bp_ledger_diff_json(const bp_ledger_diff_t *d, size_t max_ops)
{
    json_t *counts = json_object();
    for (int s = 0; s < BP_LOP_NSTATUS; s++) {
        char key[32];
        snprintf(key, sizeof key, "%s", bp_lop_status_name((bp_lop_status_t)s));
        for (char *p = key; *p; p++)
            if (*p == ' ')
                *p = '_';
        json_object_set_new(counts, key, json_integer((json_int_t)d->count[s]));
    }
    json_t *entries = json_array();
    size_t omitted = 0;
    for (size_t x = 0; x < d->n; x++) {
        if (d->e[x].status == BP_LOP_IDENTICAL)
            continue;
        if (json_array_size(entries) < max_ops)
            json_array_append_new(entries, entry_json(d, x));
        else
            omitted++;
    }
    json_t *mods = json_array();
    for (size_t m = 0; m < d->nmods; m++) {
        const bp_ledger_module_t *md = &d->mods[m];
        json_array_append_new(
            mods, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "module",
                            md->module, "ops", (json_int_t)md->ops, "identical",
                            (json_int_t)md->count[BP_LOP_IDENTICAL], "introduced",
                            (json_int_t)md->count[BP_LOP_INTRODUCED], "inherited",
                            (json_int_t)md->count[BP_LOP_INHERITED], "absorbed",
                            (json_int_t)md->count[BP_LOP_ABSORBED], "not_comparable",
                            (json_int_t)md->count[BP_LOP_NOT_COMPARABLE], "outputs",
                            (json_int_t)md->outs, "outputs_differ",
                            (json_int_t)md->outs_differ, "first", entry_json(d, md->first)));
    }
    return json_pack("{s:o, s:o, s:{s:b, s:I, s:I, s:I, s:I}, s:o, s:o, s:o, s:o, s:I, s:o}",
                     "a", side_json(d->A), "b", side_json(d->B), "alignment", "exact",
                     d->exact, "paired", (json_int_t)d->paired, "fuzzy", (json_int_t)d->fuzzy,
                     "only_a", (json_int_t)d->only_a, "only_b", (json_int_t)d->only_b,
                     "counts", counts, "first_introduced", entry_json(d, d->first_introduced),
                     "first_differing", entry_json(d, d->first_differing), "entries", entries,
                     "entries_omitted", (json_int_t)omitted, "modules", mods);
}
