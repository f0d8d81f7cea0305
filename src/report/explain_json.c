/* explain's result as JSON, the "explain" section of a report.  Schema:
 *   {probe, dtype, a, b, a_source, b_source (saved runs' directories or
 *    null), attribution: "isolated" | "first-divergence",
 *    oracle: bool, end_results: bool, reference: "fp64" | null,
 *    ops[{index, buffer, kind, dtype, shape[], elements, end_to_end,
 *         introduced, inherited, masked, max_ulp_introduced,
 *         max_ulp_index[], verdicts{a_correct, b_correct, neither,
 *         both_within_half_ulp} (only where the oracle ran),
 *         max_ulp_a, max_ulp_b}],
 *    outputs[{output, buffer, elements, end_to_end,
 *             introduced_by[{op, buffer, kind, count}],
 *             closer{a, b, equal}, first[ELEMENT]}]}
 *   ELEMENT = {index[], flat, a{VALUE}, b{VALUE}, ulp,
 *              origin{op, buffer, kind, index[], flat, via_reduction,
 *                     a{VALUE}, b{VALUE}, oracle{VALUE}, ulp_a, ulp_b,
 *                     verdict: "a" | "b" | "neither" | "both"},
 *              end{oracle{VALUE}, ulp_a, ulp_b, reference, reference_ulp_a,
 *                  reference_ulp_b, closer: "a" | "b" | "equal"}}
 *   VALUE = {hex, exact, shortest, fields}
 * An ulp that is not finite (a class change) is the string "class change";
 * non-finite numbers are "inf", "-inf", "nan". */
#include <math.h>
#include <stdio.h>

#include "bitfmt.h"
#include "explain.h"
#include "jsonval.h"
#include "report.h"

static json_t *value_json(bp_dtype_t dt, uint64_t bits)
{
    char hx[BP_FMT_MAX], ex[BP_FMT_MAX], fl[BP_FMT_MAX], sh[BP_FMT_MAX];
    bp_fmt_hex(dt, bits, hx, sizeof hx);
    bp_fmt_exact(dt, bits, ex, sizeof ex);
    bp_fmt_fields(dt, bits, fl, sizeof fl);
    bp_fmt_shortest(dt, bits, sh, sizeof sh);
    return json_pack("{s:s, s:s, s:s, s:s}", "hex", hx, "exact", ex, "shortest", sh,
                     "fields", fl);
}

static json_t *index_json(const bp_meta_t *m, size_t flat)
{
    return bp_report_index_json(m->ndim, m->shape, flat);
}

static const char *verdict_key(bp_verdict_t v)
{
    static const char *k[] = {"a", "b", "neither", "both"};
    return v < BP_VERDICT_COUNT ? k[v] : "?";
}

const char *bp_verdict_name(bp_verdict_t v, const char *la, const char *lb, char *buf,
                            size_t n)
{
    switch (v) {
    case BP_VERDICT_A: snprintf(buf, n, "%s correct", la); break;
    case BP_VERDICT_B: snprintf(buf, n, "%s correct", lb); break;
    case BP_VERDICT_NEITHER: snprintf(buf, n, "neither"); break;
    default: snprintf(buf, n, "both within 0.5 ulp"); break;
    }
    return buf;
}

static json_t *op_json(const bp_explain_t *x, size_t i)
{
    const bp_explain_op_t *r = &x->ops[i];
    const bp_meta_t *m = &x->metas[i];
    json_t *shape = json_array();
    for (int d = 0; d < m->ndim; d++)
        json_array_append_new(shape, json_integer(m->shape[d]));
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}", "index",
                          (json_int_t)i, "buffer", x->p->ops[i].out, "kind",
                          bp_op_name(x->p->ops[i].kind), "dtype", bp_dtype_name(m->dtype),
                          "shape", shape, "elements", (json_int_t)r->total, "end_to_end",
                          (json_int_t)r->e2e, "introduced", (json_int_t)r->introduced,
                          "inherited", (json_int_t)r->inherited, "masked",
                          (json_int_t)r->masked);
    if (r->introduced) {
        json_object_set_new(o, "max_ulp_introduced", bp_json_ulp(r->max_ulp));
        json_object_set_new(o, "max_ulp_index", index_json(m, r->max_ulp_idx));
    }
    if (r->verdicts_done) {
        json_object_set_new(
            o, "verdicts",
            json_pack("{s:I, s:I, s:I, s:I}", "a_correct",
                      (json_int_t)r->verdicts[BP_VERDICT_A], "b_correct",
                      (json_int_t)r->verdicts[BP_VERDICT_B], "neither",
                      (json_int_t)r->verdicts[BP_VERDICT_NEITHER], "both_within_half_ulp",
                      (json_int_t)r->verdicts[BP_VERDICT_BOTH]));
        json_object_set_new(o, "max_ulp_a", bp_json_ulp(r->max_ulp_a));
        json_object_set_new(o, "max_ulp_b", bp_json_ulp(r->max_ulp_b));
    }
    return o;
}

static json_t *elem_json(const bp_explain_t *x, const bp_explain_elem_t *el)
{
    const bp_probe_t *p = x->p;
    int j = p->outputs[el->output].buf, k = el->origin;
    bp_dtype_t dt = x->metas[j].dtype, odt = x->metas[k].dtype;
    json_t *origin = json_pack("{s:i, s:s, s:s, s:o, s:I, s:b, s:o, s:o}", "op", k, "buffer",
                               p->ops[k].out, "kind", bp_op_name(p->ops[k].kind), "index",
                               index_json(&x->metas[k], el->origin_index), "flat",
                               (json_int_t)el->origin_index, "via_reduction",
                               el->via_reduction, "a", value_json(odt, el->oa), "b",
                               value_json(odt, el->ob));
    if (el->has_oracle) {
        json_object_set_new(origin, "oracle", value_json(odt, el->oo));
        json_object_set_new(origin, "ulp_a", bp_json_ulp(el->ulp_a));
        json_object_set_new(origin, "ulp_b", bp_json_ulp(el->ulp_b));
        json_object_set_new(origin, "verdict", json_string(verdict_key(el->verdict)));
    }
    json_t *o = json_pack("{s:o, s:I, s:o, s:o, s:o, s:o}", "index",
                          index_json(&x->metas[j], el->index), "flat", (json_int_t)el->index,
                          "a", value_json(dt, el->a), "b", value_json(dt, el->b), "ulp",
                          bp_json_ulp(el->ulp), "origin", origin);
    if (el->has_end || el->has_ref) {
        static const char *closer[] = {"a", "b", "equal"};
        json_t *end = json_object();
        if (el->has_end) {
            json_object_set_new(end, "oracle", value_json(dt, el->end));
            json_object_set_new(end, "ulp_a", bp_json_ulp(el->end_ulp_a));
            json_object_set_new(end, "ulp_b", bp_json_ulp(el->end_ulp_b));
        }
        if (el->has_ref) {
            json_object_set_new(end, "reference", bp_json_num(el->ref));
            json_object_set_new(end, "reference_ulp_a", bp_json_num(el->ref_ulp_a));
            json_object_set_new(end, "reference_ulp_b", bp_json_num(el->ref_ulp_b));
        }
        if (el->closer >= 0)
            json_object_set_new(end, "closer", json_string(closer[el->closer]));
        json_object_set_new(o, "end", end);
    }
    return o;
}

static json_t *out_json(const bp_explain_t *x, size_t oi)
{
    const bp_probe_t *p = x->p;
    const bp_explain_out_t *out = &x->outs[oi];
    json_t *by = json_array(), *first = json_array();
    for (size_t k = 0; k < p->nops; k++)
        if (out->by_origin[k])
            json_array_append_new(by, json_pack("{s:I, s:s, s:s, s:I}", "op", (json_int_t)k,
                                                "buffer", p->ops[k].out, "kind",
                                                bp_op_name(p->ops[k].kind), "count",
                                                (json_int_t)out->by_origin[k]));
    for (size_t e = 0; e < out->nfirst; e++)
        json_array_append_new(first, elem_json(x, &x->elems[out->first + e]));
    return json_pack("{s:s, s:s, s:I, s:I, s:o, s:{s:I, s:I, s:I}, s:o}", "output",
                     p->outputs[oi].name, "buffer", p->ops[out->buf].out, "elements",
                     (json_int_t)out->total, "end_to_end", (json_int_t)out->e2e,
                     "introduced_by", by, "closer", "a", (json_int_t)out->closer[0], "b",
                     (json_int_t)out->closer[1], "equal", (json_int_t)out->closer[2],
                     "first", first);
}

json_t *bp_explain_json(const bp_explain_t *x)
{
    const bp_probe_t *p = x->p;
    json_t *ops = json_array(), *outs = json_array();
    for (size_t i = 0; i < p->nops; i++)
        json_array_append_new(ops, op_json(x, i));
    for (size_t oi = 0; oi < p->noutputs; oi++)
        json_array_append_new(outs, out_json(x, oi));
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:b, s:b, s:o, s:o, s:o}", "probe",
                     p->name, "dtype", bp_dtype_name(x->dtype), "a", x->label_a, "b",
                     x->label_b, "a_source", x->source_a ? json_string(x->source_a) : json_null(),
                     "b_source", x->source_b ? json_string(x->source_b) : json_null(),
                     "attribution", x->isolated ? "isolated" : "first-divergence", "oracle",
                     x->has_oracle, "end_results", x->has_end, "reference",
                     x->has_ref ? json_string("fp64") : json_null(), "ops", ops, "outputs",
                     outs);
}
