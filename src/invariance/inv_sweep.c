/* The invariance sweep and its value lists (inv_sweep.h). */
#include "inv_sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bp_status bp_inv_sweep(bp_inv_engine_t *e, const bp_inv_problem_t *p,
                       const bp_inv_sweep_opts_t *o, bp_inv_map_t *m,
                       bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    bp_status st = e->setup(e, p, err);
    if (st)
        return st;
    bp_dtype_t rdt = bp_inv_result_dtype(p);
    size_t nout = bp_inv_result_elems(p), es = bp_dtype_info(rdt)->size;
    bool batch = p->axis == BP_INV_BATCH;
    void *ref = malloc(nout * es), *bits = malloc(nout * es),
         *again = malloc(nout * es);
    if (!ref || !bits || !again) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    bp_inv_algo_t algo;
    bp_inv_algo_init(&algo);
    /* the reference: the probed rows alone, or unsplit, or one rank */
    if ((st = e->run(e, batch ? p->rows : 1, 0, ref, &algo, err)) ||
        (st = bp_inv_map_init(m, rdt, bp_inv_result_rows(p), bp_inv_result_cols(p), ref,
                               &o->policy, err)))
        goto done;
    snprintf(m->op, sizeof m->op, "%s", bp_inv_op_name(p->op));
    bp_inv_shape_format(p, m->shape, sizeof m->shape);
    bp_inv_dims_format(p, m->dims, sizeof m->dims);
    if (p->axis == BP_INV_BATCH)
        snprintf(m->engine, sizeof m->engine, "%s", e->name);
    else /* one map per order */
        snprintf(m->engine, sizeof m->engine, "%.31s/%s", e->name,
                 bp_inv_combine_name(p->combine));
    snprintf(m->engine_desc, sizeof m->engine_desc, "%s", e->desc);
    snprintf(m->dtype_name, sizeof m->dtype_name, "%s", bp_inv_dtype_name(p));
    m->axis = p->axis;
    bp_inv_band_t *band[BP_INV_NPLACES] = {0};
    for (int k = 0; k < BP_INV_NPLACES; k++)
        if (o->place[k] && (st = bp_inv_map_band(m, (bp_inv_place_t)k, &band[k], err)))
            goto done;
    for (size_t i = 0; i < o->nvalues; i++) {
        int64_t v = o->values[i];
        if (batch && (v < p->rows || v > p->mmax))
            continue;
        for (int k = 0; k < BP_INV_NPLACES; k++) {
            if (!band[k])
                continue;
            int64_t pos = bp_inv_place_row((bp_inv_place_t)k, batch ? v : p->batch,
                                           p->rows);
            bp_inv_algo_init(&algo);
            if ((st = e->run(e, v, pos, bits, &algo, err)) == BP_EUNAVAIL) {
                if (!m->nskipped++)
                    snprintf(m->skipped, sizeof m->skipped, "%s %lld: %.120s",
                             bp_inv_axis_letter(p->axis), (long long)v, err->msg);
                st = BP_OK;
                continue;
            }
            if (st)
                goto done;
            bp_inv_cfg_t *c;
            if ((st = bp_inv_map_add(m, band[k], v, bits, &algo, &c, err)))
                goto done;
            for (int r = 1; r < o->repeat; r++) {
                bp_inv_algo_t a2;
                bp_inv_algo_init(&a2);
                if ((st = e->run(e, v, pos, again, &a2, err)))
                    goto done;
                c->repeats++;
                c->repeat_differ += memcmp(again, bits, nout * es) != 0;
            }
        }
        if (o->progress)
            o->progress(o->ctx, m, v);
    }
    st = bp_inv_map_finish(m, err);
done:
    free(ref);
    free(bits);
    free(again);
    if (st)
        bp_inv_map_free(m);
    return st;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool parse_num(const char *s, const char *end, int64_t *out)
{
    if (s == end || end - s > 19)
        return false;
    int64_t v = 0;
    for (const char *c = s; c < end; c++) {
        if (*c < '0' || *c > '9')
            return false;
        v = v * 10 + (*c - '0');
    }
    *out = v;
    return true;
}

bp_status bp_inv_values_parse(const char *s, int64_t max, int64_t **out,
                              size_t *n, bp_error_t *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0, k = 0;
    int64_t *v = NULL;
    const char *p = s;
    if (!*s)
        return bp_error_set(err, BP_EINPUT, "empty list of values");
    while (1) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        int64_t a, b, step = 1;
        bool geometric = false;
        const char *c1 = memchr(p, ':', (size_t)(e - p));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
        bool ok;
        if (!c1)
            ok = parse_num(p, e, &a) && (b = a, true);
        else if (!c2)
            ok = parse_num(p, c1, &a) && parse_num(c1 + 1, e, &b);
        else {
            geometric = c2[1] == 'x';
            ok = parse_num(p, c1, &a) && parse_num(c1 + 1, c2, &b) &&
                 parse_num(c2 + 1 + geometric, e, &step) &&
                 step > (int64_t)geometric;
        }
        if (!ok || a < 1 || b < a || b > max) {
            free(v);
            return bp_error_set(err, BP_EINPUT,
                                "bad value item '%.*s': N, A:B, A:B:STEP or "
                                "A:B:xFACTOR with 1 <= A <= B <= %" PRId64
                                ", STEP >= 1, FACTOR >= 2",
                                (int)(e - p), p, max);
        }
        for (int64_t x = a;;) {
            if (k == cap) {
                if (cap >= BP_INV_MAX_VALUES) {
                    free(v);
                    return bp_error_set(err, BP_EINPUT, "more than %d values",
                                        BP_INV_MAX_VALUES);
                }
                cap = cap ? cap * 2 : 64;
                int64_t *nv = realloc(v, cap * sizeof *nv);
                if (!nv) {
                    free(v);
                    return bp_error_set(err, BP_ENOMEM, "out of memory");
                }
                v = nv;
            }
            v[k++] = x;
            if (geometric ? x > b / step : b - x < step)
                break;
            x = geometric ? x * step : x + step;
        }
        if (!*e)
            break;
        p = e + 1;
    }
    qsort(v, k, sizeof *v, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || v[u - 1] != v[i])
            v[u++] = v[i];
    *out = v;
    *n = u;
    return BP_OK;
}
