/* The invariance study and its text report (inv_report.h).  The text reads
 * like a test runner's: the verdict first, one line per map band, then for
 * every band that is not invariant its intervals with the algorithm that
 * ran there, the oracle's verdict at each boundary, and at the end the
 * failures again, one line each. */
#include "inv_report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bitfmt.h"
#include "esc.h"

void bp_inv_study_init(bp_inv_study_t *s)
{
    memset(s, 0, sizeof *s);
    s->repeat = 1;
    bp_policy_exact(&s->policy);
    s->notes = json_array();
}

void bp_inv_study_free(bp_inv_study_t *s)
{
    for (size_t i = 0; i < s->nmaps; i++)
        bp_inv_map_free(&s->maps[i]);
    free(s->maps);
    for (size_t i = 0; i < s->ncmaps; i++)
        bp_coll_map_free(&s->cmaps[i]);
    free(s->cmaps);
    json_decref(s->notes);
    memset(s, 0, sizeof *s);
}

bp_status bp_inv_study_add(bp_inv_study_t *s, bp_inv_map_t *m, bp_error_t *err)
{
    if (s->nmaps == s->capmaps) {
        size_t cap = s->capmaps ? s->capmaps * 2 : 8;
        bp_inv_map_t *nm = realloc(s->maps, cap * sizeof *nm);
        if (!nm)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        s->maps = nm;
        s->capmaps = cap;
    }
    s->maps[s->nmaps++] = *m;
    memset(m, 0, sizeof *m);
    return BP_OK;
}

bp_status bp_inv_study_add_coll(bp_inv_study_t *s, bp_coll_map_t *m, size_t n,
                                bp_error_t *err)
{
    bp_coll_map_t *v = realloc(s->cmaps, (s->ncmaps + n + 1) * sizeof *v);
    if (!v)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    s->cmaps = v;
    memcpy(v + s->ncmaps, m, n * sizeof *m);
    memset(m, 0, n * sizeof *m);
    s->ncmaps += n;
    return BP_OK;
}

bool bp_inv_study_note(bp_inv_study_t *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return s->notes && json_array_append_new(s->notes, json_string(buf)) == 0;
}

size_t bp_inv_study_failures(const bp_inv_study_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nmaps; i++)
        n += !bp_inv_map_pass(&s->maps[i]);
    for (size_t i = 0; i < s->ncmaps; i++)
        n += !bp_coll_map_pass(&s->cmaps[i]);
    return n;
}

void bp_inv_run_format(const bp_inv_band_t *b, const bp_inv_run_t *r, char *out,
                       size_t n)
{
    int64_t a = b->cfg[r->first].value, z = b->cfg[r->last].value;
    if (a == z)
        snprintf(out, n, "%" PRId64, a);
    else if (r->last - r->first == (size_t)(z - a))
        snprintf(out, n, "%" PRId64 "-%" PRId64, a, z);
    else /* not every value between was swept */
        snprintf(out, n, "%" PRId64 "..%" PRId64 " (%zu values)", a, z,
                 r->last - r->first + 1);
}

static void map_title(const bp_inv_map_t *m, char *out, size_t n)
{
    snprintf(out, n, "%s %s %s %s", m->op, m->shape, m->dtype_name, m->engine);
}

/* "4 result groups, 3 boundaries" or "invariant". */
static void band_summary(const bp_inv_map_t *m, const bp_inv_band_t *b, char *out,
                         size_t n)
{
    size_t breaking = bp_inv_band_breaking(m, b);
    size_t groups = 0;
    bool seen[64] = {0};
    for (size_t i = 0; i < b->niv; i++) {
        int g = b->iv[i].group;
        if (g >= 64 || !seen[g])
            groups++;
        if (g < 64)
            seen[g] = true;
    }
    const char *ax = bp_inv_axis_letter(m->axis);
    if (!b->ncfg) {
        snprintf(out, n, "nothing swept");
        return;
    }
    size_t unstable = 0;
    for (size_t i = 0; i < b->ncfg; i++)
        unstable += b->cfg[i].repeat_differ || b->cfg[i].process_differ;
    int k = 0;
    if (b->niv == 1 && b->iv[0].group == 0)
        k = snprintf(out, n, "invariant: the reference's bits at every %s (%zu)",
                     ax, b->ncfg);
    else
        k = snprintf(out, n, "%zu result group%s, %zu boundar%s: %zu of %zu "
                     "configurations %s", groups, groups == 1 ? "" : "s",
                     b->niv - 1, b->niv == 2 ? "y" : "ies", breaking, b->ncfg,
                     breaking ? "beyond policy" : "differ, within policy");
    if (unstable && k > 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, "; %zu differ from run to run", unstable);
}

static void group_line(FILE *f, const bp_inv_map_t *m, int g)
{
    const bp_inv_group_t *gr = &m->g[g];
    if (g == 0) {
        fprintf(f, "group 0 = reference");
        return;
    }
    const bp_cmp_t *c = &gr->cmp;
    fprintf(f, "group %d: %zu of %zu differ, max %" PRIu64 " ulp%s", g,
            c->mismatched, c->total, c->max_ulp,
            c->pass ? " (within policy)" : "");
}

/* The distinct algorithms of a run, at most two named. */
static void run_algos(FILE *f, const bp_inv_band_t *b, const bp_inv_run_t *r)
{
    const bp_inv_algo_t *first = &b->cfg[r->first].algo;
    char buf[512];
    bp_inv_algo_format(first, buf, sizeof buf);
    size_t changes = 0;
    for (size_t i = r->first + 1; i <= r->last; i++)
        changes += !bp_inv_algo_equal(&b->cfg[i].algo, &b->cfg[i - 1].algo);
    fprintf(f, "%s", buf);
    if (first->same_bits == 1)
        fprintf(f, " [reproduces these bits]");
    else if (first->same_bits == 0)
        fprintf(f, " [does NOT reproduce these bits]");
    if (changes)
        fprintf(f, " (algorithm changes %zu time%s inside, bits do not)",
                changes, changes == 1 ? "" : "s");
}

static void oracle_lines(FILE *f, const bp_inv_map_t *m, const bp_inv_band_t *b)
{
    if (!m->oracle) {
        if (m->oracle_note[0])
            fprintf(f, "    oracle: %s\n", m->oracle_note);
        return;
    }
    fprintf(f, "    oracle (the exact result rounded once to %s):\n",
            bp_dtype_name(m->dtype));
    bool seen[1024] = {0};
    for (size_t i = 0; i < b->niv; i++) {
        int g = b->iv[i].group;
        if (g < 1024 && seen[g])
            continue;
        if (g < 1024)
            seen[g] = true;
        const bp_inv_group_t *gr = &m->g[g];
        char mu[32];
        if (gr->max_ulp == UINT64_MAX)
            snprintf(mu, sizeof mu, "inf/nan");
        else
            snprintf(mu, sizeof mu, "%" PRIu64, gr->max_ulp);
        fprintf(f, "      group %d: max %s ulp, %zu of %zu correctly rounded, mean "
                "%.3g ulp\n", g, mu, gr->exact, m->nout, gr->mean_ulp);
    }
    for (size_t i = 1; i < b->niv; i++) {
        int ga = b->iv[i - 1].group, gb = b->iv[i].group;
        bp_inv_closer_t c;
        bp_inv_closer(m, ga, gb, &c);
        const bp_inv_cfg_t *x = &b->cfg[b->iv[i - 1].last], *y = &b->cfg[b->iv[i].first];
        int win = c.a_closer > c.b_closer ? ga : c.b_closer > c.a_closer ? gb : -1;
        fprintf(f, "    at %s %" PRId64 "|%" PRId64 ": group %d -> %d; closer to the "
                "exact result: ", bp_inv_axis_letter(m->axis), x->value, y->value, ga, gb);
        if (win >= 0)
            fprintf(f, "group %d (on %zu element%s against %zu, %zu tied)\n", win,
                    win == ga ? c.a_closer : c.b_closer,
                    (win == ga ? c.a_closer : c.b_closer) == 1 ? "" : "s",
                    win == ga ? c.b_closer : c.a_closer, c.ties);
        else
            fprintf(f, "neither (%zu element%s each, %zu tied)\n", c.a_closer,
                    c.a_closer == 1 ? "" : "s", c.ties);
    }
}

static void first_bits(FILE *f, const bp_inv_map_t *m, int g, size_t k)
{
    const bp_cmp_t *c = &m->g[g].cmp;
    for (size_t i = 0; i < c->nfirst && i < k; i++) {
        const bp_mismatch_t *mm = &c->first[i];
        char idx[64], ha[BP_FMT_MAX], hb[BP_FMT_MAX], da[BP_FMT_MAX], db[BP_FMT_MAX];
        bp_cmp_index_format(c, mm->index, idx, sizeof idx);
        bp_fmt_hex(m->dtype, mm->a, ha, sizeof ha);
        bp_fmt_hex(m->dtype, mm->b, hb, sizeof hb);
        bp_fmt_shortest(m->dtype, mm->a, da, sizeof da);
        bp_fmt_shortest(m->dtype, mm->b, db, sizeof db);
        fprintf(f, "        %s: reference %s (%s), group %d %s (%s), %" PRIu64 " ulp\n",
                idx, ha, da, g, hb, db, mm->ulp);
    }
}

/* Two bands of a map with the same configurations, groups and run-to-run
 * counts (the placement did not matter). */
static bool same_band(const bp_inv_band_t *x, const bp_inv_band_t *y)
{
    if (x->ncfg != y->ncfg)
        return false;
    for (size_t i = 0; i < x->ncfg; i++)
        if (x->cfg[i].value != y->cfg[i].value || x->cfg[i].group != y->cfg[i].group ||
            x->cfg[i].repeat_differ != y->cfg[i].repeat_differ ||
            x->cfg[i].process_differ != y->cfg[i].process_differ ||
            !bp_inv_algo_equal(&x->cfg[i].algo, &y->cfg[i].algo))
            return false;
    return true;
}

static void band_detail(FILE *f, const bp_inv_map_t *m, const bp_inv_band_t *b,
                        const bp_inv_text_opts_t *o)
{
    char t[256];
    map_title(m, t, sizeof t);
    for (const bp_inv_band_t *p = m->band; p < b; p++)
        if (same_band(p, b)) {
            fprintf(f, "\n%s, probed row%s %s: the same map as %s\n", t,
                    m->rows == 1 ? "" : "s", bp_inv_place_name(b->place),
                    bp_inv_place_name(p->place));
            return;
        }
    fprintf(f, "\n%s, probed row%s %s:\n", t, m->rows == 1 ? "" : "s",
            bp_inv_place_name(b->place));
    if (m->engine_desc[0])
        fprintf(f, "  %s\n", m->engine_desc);
    size_t shown = o->verbose ? b->niv : (b->niv < 24 ? b->niv : 20);
    for (size_t i = 0; i < shown; i++) {
        const bp_inv_run_t *r = &b->iv[i];
        char span[64];
        bp_inv_run_format(b, r, span, sizeof span);
        fprintf(f, "  %s %-14s ", bp_inv_axis_letter(m->axis), span);
        group_line(f, m, r->group);
        /* a fixed formulation says nothing the engine's line has not */
        const bp_inv_algo_t *a = &b->cfg[r->first].algo;
        if (a->lt || (a->known && strcmp(a->source, "fixed"))) {
            fprintf(f, "\n      ");
            run_algos(f, b, r);
        }
        fputc('\n', f);
    }
    if (shown < b->niv)
        fprintf(f, "  ... %zu more intervals (-v, or the JSON report, has them all)\n",
                b->niv - shown);
    for (size_t i = 0; i < b->ncfg; i++) {
        const bp_inv_cfg_t *c = &b->cfg[i];
        if (c->repeat_differ)
            fprintf(f, "  %s %" PRId64 ": %u of %u repeats in this process gave "
                    "other bits\n", bp_inv_axis_letter(m->axis), c->value,
                    c->repeat_differ, c->repeats);
        if (c->process_differ)
            fprintf(f, "  %s %" PRId64 ": %u of %u fresh processes gave other "
                    "bits\n", bp_inv_axis_letter(m->axis), c->value,
                    c->process_differ, c->processes);
    }
    oracle_lines(f, m, b);
    if (o->verbose) {
        bool seen[1024] = {0};
        for (size_t i = 0; i < b->niv; i++) {
            int g = b->iv[i].group;
            if (!g || (g < 1024 && seen[g]))
                continue;
            if (g < 1024)
                seen[g] = true;
            fprintf(f, "    first differences of group %d:\n", g);
            first_bits(f, m, g, 5);
        }
    }
}

int bp_inv_text(FILE *f, const bp_inv_study_t *s, const bp_inv_text_opts_t *o)
{
    size_t fails = bp_inv_study_failures(s), nbands = 0, varying = 0;
    for (size_t i = 0; i < s->nmaps; i++)
        for (int b = 0; b < s->maps[i].nbands; b++) {
            nbands++;
            varying += s->maps[i].band[b].niv > 1 ||
                       bp_inv_band_breaking(&s->maps[i], &s->maps[i].band[b]);
        }
    char pol[128];
    bp_policy_format(&s->policy, pol, sizeof pol);
    if (s->ncmaps && !s->nmaps)
        return bp_coll_text(f, s, o);
    if (!s->nmaps)
        fprintf(f, "invariance: NOTHING SWEPT\n");
    else if (fails)
        fprintf(f, "invariance: DRIFT: %zu of %zu maps break invariance (policy %s)\n",
                fails, s->nmaps, pol);
    else if (varying)
        fprintf(f, "invariance: passed within policy %s: %zu of %zu bands change "
                "bits, none beyond the policy\n", pol, varying, nbands);
    else
        fprintf(f, "invariance: passed: %zu map%s, every configuration gives the "
                "reference's bits\n", s->nmaps, s->nmaps == 1 ? "" : "s");
    size_t i;
    json_t *note;
    json_array_foreach(s->notes, i, note)
        bp_esc_printf(f, "  note: %s\n", json_string_value(note));
    if (!o->quiet) {
        for (size_t i = 0; i < s->nmaps; i++) {
            const bp_inv_map_t *m = &s->maps[i];
            if (i == 0 || strcmp(m->op, s->maps[i - 1].op) ||
                strcmp(m->shape, s->maps[i - 1].shape) ||
                strcmp(m->dtype_name, s->maps[i - 1].dtype_name) ||
                strcmp(m->values, s->maps[i - 1].values) || m->axis != s->maps[i - 1].axis)
            {
                char where[64] = "";
                if (m->axis != BP_INV_BATCH)
                    snprintf(where, sizeof where, " in a batch of %lld",
                             (long long)m->batch);
                fprintf(f, "  %s %s %s, %s %s%s, seed %" PRIu64 "%s\n", m->op, m->shape,
                        m->dtype_name, bp_inv_axis_letter(m->axis), m->values, where,
                        s->seed, s->repeat > 1 || s->processes ? ", run-to-run checked"
                                                               : "");
            }
            for (int b = 0; b < m->nbands; b++) {
                char sum[256];
                band_summary(m, &m->band[b], sum, sizeof sum);
                fprintf(f, "    %-16s %-6s %s\n", m->engine,
                        bp_inv_place_name(m->band[b].place), sum);
            }
            if (m->nskipped)
                fprintf(f, "    %-16s %zu configuration%s not run: %s\n", m->engine,
                        m->nskipped, m->nskipped == 1 ? "" : "s", m->skipped);
        }
        for (size_t i = 0; i < s->nmaps; i++) {
            const bp_inv_map_t *m = &s->maps[i];
            for (int b = 0; b < m->nbands; b++)
                if (o->verbose || m->band[b].niv > 1 ||
                    bp_inv_band_breaking(m, &m->band[b]))
                    band_detail(f, m, &m->band[b], o);
        }
    }
    if (fails) {
        fprintf(f, "%sFAILED:\n", o->quiet ? "" : "\n");
        for (size_t i = 0; i < s->nmaps; i++) {
            const bp_inv_map_t *m = &s->maps[i];
            for (int b = 0; b < m->nbands; b++) {
                const bp_inv_band_t *bd = &m->band[b];
                size_t n = bp_inv_band_breaking(m, bd);
                if (!n)
                    continue;
                char t[256];
                map_title(m, t, sizeof t);
                int64_t first = 0;
                for (size_t k = 0; k < bd->ncfg; k++)
                    if (bp_inv_cfg_breaks(m, &bd->cfg[k])) {
                        first = bd->cfg[k].value;
                        break;
                    }
                fprintf(f, "  %s %s: %zu of %zu configurations break invariance "
                        "(first at %s %" PRId64 ")\n", t,
                        bp_inv_place_name(bd->place), n, bd->ncfg,
                        bp_inv_axis_letter(m->axis), first);
            }
        }
    }
    return ferror(f) ? 2 : 0;
}

/* ---- the common report ---- */

static bool add_result(bp_report_t *rep, const bp_inv_map_t *m, const bp_inv_band_t *b,
                       int g, const char *where, const char *note, bool unstable)
{
    char probe[256], output[64], a[96], bside[160];
    snprintf(probe, sizeof probe, "invariance %s %s", m->op, m->shape);
    snprintf(output, sizeof output, "rows %s", bp_inv_place_name(b->place));
    snprintf(a, sizeof a, "%s %s=%lld (reference)", m->engine,
             bp_inv_axis_letter(m->axis),
             (long long)(m->axis == BP_INV_BATCH ? m->rows : 1));
    snprintf(bside, sizeof bside, "%s %s %s", m->engine,
             bp_inv_axis_letter(m->axis), where);
    bp_result_t r = {0};
    r.probe = probe;
    r.output = output;
    r.dtype = m->dtype;
    r.kind = BP_RES_CROSS;
    r.a = a;
    r.b = bside;
    r.policy = m->policy;
    r.compared = true;
    r.counts = true;
    r.note = (char *)note;
    bp_error_t err;
    bp_buf_t ra = {0}, rb = {0};
    ra.dtype = rb.dtype = m->dtype;
    ra.ndim = rb.ndim = 2;
    ra.shape[0] = rb.shape[0] = m->rows;
    ra.shape[1] = rb.shape[1] = m->cols;
    ra.numel = rb.numel = m->nout;
    ra.data = m->g[0].bits;
    rb.data = m->g[g].bits;
    if (bp_compare(&ra, &rb, &m->policy, NULL, &r.cmp, &err))
        return false;
    if (unstable)
        r.cmp.pass = false;
    return bp_report_add(rep, &r) != NULL;
}

bool bp_inv_fill_report(bp_report_t *rep, const bp_inv_study_t *s)
{
    if (s->ncmaps && !bp_coll_fill_report(rep, s))
        return false;
    for (size_t i = 0; i < s->nmaps; i++) {
        const bp_inv_map_t *m = &s->maps[i];
        for (int bi = 0; bi < m->nbands; bi++) {
            const bp_inv_band_t *b = &m->band[bi];
            /* one result per group the band holds, with where it holds it */
            for (size_t g = 0; g < m->ng; g++) {
                char where[160] = "", note[512] = "";
                size_t count = 0, w = 0;
                for (size_t k = 0; k < b->niv; k++) {
                    if (b->iv[k].group != (int)g)
                        continue;
                    char span[64];
                    bp_inv_run_format(b, &b->iv[k], span, sizeof span);
                    count += b->iv[k].last - b->iv[k].first + 1;
                    if (w < sizeof where)
                        w += (size_t)snprintf(where + w, sizeof where - w, "%s%s",
                                              w ? "," : "", span);
                }
                if (!count)
                    continue;
                size_t unstable = 0;
                for (size_t k = 0; k < b->ncfg; k++)
                    if (b->cfg[k].group == (int)g &&
                        (b->cfg[k].repeat_differ || b->cfg[k].process_differ))
                        unstable++;
                if (unstable)
                    snprintf(note, sizeof note, "%zu configurations differ from run "
                             "to run (repeats in one process or fresh processes)",
                             unstable);
                else if (g)
                    snprintf(note, sizeof note, "%zu configurations give result group "
                             "%zu instead of the reference's bits", count, g);
                if (!add_result(rep, m, b, (int)g, where, note[0] ? note : NULL,
                                unstable > 0))
                    return false;
            }
        }
    }
    size_t i;
    json_t *note;
    json_array_foreach(s->notes, i, note)
        if (!bp_report_note(rep, "%s", json_string_value(note)))
            return false;
    return true;
}
