/* The collective maps in invariance's text report and in the common
 * report's results (inv_report.h).  A map's text: the configurations that
 * could not run, then its sizes in intervals over which the configurations
 * fall into the same groups, each group with its members, its inferred
 * order, what the emulation predicted and how far it is from group 0; the
 * oracle's verdict where groups differ; the boundaries; run-to-run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inv_report.h"

static void size_name(const bp_coll_map_t *m, size_t s, char *out, size_t n)
{
    bp_coll_bytes_format(m->sz[s].bytes, out, n);
}

static bool ran(const bp_coll_map_t *m, size_t s, size_t c)
{
    return bp_coll_cell(m, s, c)->state == BP_CELL_RAN;
}

static bool any_ran(const bp_coll_map_t *m, size_t s)
{
    for (size_t c = 0; c < m->ncfg; c++)
        if (ran(m, s, c))
            return true;
    return false;
}

static bool same_ran(const bp_coll_map_t *m, size_t a, size_t b)
{
    for (size_t c = 0; c < m->ncfg; c++)
        if (ran(m, a, c) != ran(m, b, c))
            return false;
    return true;
}

static size_t max_groups(const bp_coll_map_t *m)
{
    size_t g = 0;
    for (size_t s = 0; s < m->nsizes; s++)
        g = m->sz[s].ng > g ? m->sz[s].ng : g;
    return g;
}

static size_t breaking(const bp_coll_map_t *m, size_t *first_s, size_t *first_c)
{
    size_t n = 0;
    for (size_t s = 0; s < m->nsizes; s++)
        for (size_t c = 0; c < m->ncfg; c++)
            if (bp_coll_cell_breaks(m, s, c) && !n++) {
                *first_s = s;
                *first_c = c;
            }
    return n;
}

/* Boundaries: partition changes and order changes. */
static size_t boundaries(const bp_coll_map_t *m)
{
    size_t n = 0, prev = SIZE_MAX;
    for (size_t s = 0; s < m->nsizes; s++) {
        if (!any_ran(m, s))
            continue;
        if (prev != SIZE_MAX) {
            n += !bp_coll_same_partition(m, prev, s);
            for (size_t c = 0; c < m->ncfg; c++)
                n += prev == s - 1 && bp_coll_order_changes(m, s, c);
        }
        prev = s;
    }
    return n;
}

static void members(FILE *f, const bp_coll_map_t *m, size_t s, int g)
{
    bool first = true;
    for (size_t c = 0; c < m->ncfg; c++) {
        const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
        if (x->state != BP_CELL_RAN || x->group != g)
            continue;
        char name[64];
        bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
        fprintf(f, "%s%s", first ? "" : ", ", name);
        first = false;
    }
}

static void group_detail(FILE *f, const bp_coll_map_t *m, size_t s, int g, bool verbose)
{
    const bp_coll_slot_t *z = &m->sz[s];
    const bp_coll_group_t *gr = &z->g[g];
    char sz[32];
    size_name(m, s, sz, sizeof sz);
    fprintf(f, "    group %d: ", g);
    members(f, m, s, g);
    if (g && gr->compared)
        fprintf(f, ": at %s %zu of %zu differ from group 0, max %" PRIu64 " ulp%s", sz,
                gr->cmp.mismatched, gr->cmp.total, gr->cmp.max_ulp,
                gr->cmp.pass ? " (within policy)" : "");
    fputc('\n', f);
    const bp_coll_cell_t *x = bp_coll_cell(m, s, (size_t)gr->first);
    if (bp_coll_kind_reduces(m->kind)) {
        char sum[1024];
        bp_coll_order_summary(&x->order, sum, sizeof sum);
        fprintf(f, "      order at %s: %s\n", sz, sum);
        if (x->order.done && x->verify_checked)
            fprintf(f, "      the order recomputes %s%" PRIu64 " of %" PRIu64 " elements of "
                    "the values%s\n", x->verify_same == x->verify_checked ? "all " : "",
                    x->verify_same, x->verify_checked,
                    x->verify_same == x->verify_checked ? ", bit for bit" : "");
        if (x->emu_agree >= 0 && (verbose || x->emu_agree < 1))
            fprintf(f, "      %s: predicts the order of %.1f%% of the elements; the same "
                    "set of orders: %s\n", x->emu_desc, 100 * x->emu_agree,
                    x->emu_same_set ? "yes" : "no");
        /* the group's members should agree on the order */
        char a[1024], b[1024];
        bp_coll_order_set(&x->order, a, sizeof a);
        for (size_t c = 0; c < m->ncfg; c++) {
            const bp_coll_cell_t *y = bp_coll_cell(m, s, c);
            if (y->state != BP_CELL_RAN || y->group != g || !y->order.done || y == x)
                continue;
            bp_coll_order_set(&y->order, b, sizeof b);
            if (strcmp(a, b)) {
                char name[64];
                bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
                fprintf(f, "      (%s, same bits, was inferred another order: %s)\n", name, b);
            }
        }
    }
}

static void oracle_line(FILE *f, const bp_coll_map_t *m, size_t s)
{
    const bp_coll_slot_t *z = &m->sz[s];
    if (z->ng < 2 || !z->g[0].arbitrated)
        return;
    char sz[32];
    size_name(m, s, sz, sizeof sz);
    fprintf(f, "    oracle at %s (the exact %s rounded once to %s, %zu elements):\n", sz,
            m->op == BP_COLL_AVG ? "mean" : "sum", bp_dtype_name(m->dtype), z->ns);
    int best = 0;
    for (size_t g = 0; g < z->ng; g++) {
        const bp_coll_group_t *gr = &z->g[g];
        char mu[32];
        if (gr->max_ulp == UINT64_MAX)
            snprintf(mu, sizeof mu, "inf/nan");
        else
            snprintf(mu, sizeof mu, "%" PRIu64, gr->max_ulp);
        fprintf(f, "      group %zu: %zu correctly rounded, max %s ulp, mean %.3g ulp", g,
                gr->exact, mu, gr->mean_ulp);
        if (g)
            fprintf(f, "; nearer than group 0 on %zu, farther on %zu, %zu tied",
                    gr->closer.b_closer, gr->closer.a_closer, gr->closer.ties);
        fputc('\n', f);
        const bp_coll_group_t *b = &z->g[best];
        if (gr->exact > b->exact || (gr->exact == b->exact && gr->mean_ulp < b->mean_ulp))
            best = (int)g;
    }
    fprintf(f, "      closest to the exact result: group %d\n", best);
}

/* The first size from which configuration c did not run (SIZE_MAX: it
 * ran everywhere) and whether that holds for every size. */
static size_t unavail_from(const bp_coll_map_t *m, size_t c, bool *all)
{
    size_t first = SIZE_MAX, count = 0;
    for (size_t s = 0; s < m->nsizes; s++) {
        const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
        if (x->state == BP_CELL_UNAVAIL || x->state == BP_CELL_FAILED) {
            if (first == SIZE_MAX)
                first = s;
            count++;
        }
    }
    *all = count == m->nsizes;
    return first;
}

/* The configurations that did not run, one line per reason and first size:
 * "not available: NVLS/LL, NVLS/Simple: NVLink multicast is off here". */
static void unavailable(FILE *f, const bp_coll_map_t *m)
{
    bool *done = calloc(m->ncfg ? m->ncfg : 1, 1);
    for (size_t c = 0; c < m->ncfg; c++) {
        bool all;
        size_t first = unavail_from(m, c, &all);
        if (first == SIZE_MAX || (done && done[c]))
            continue;
        const char *why = bp_coll_cell(m, first, c)->why;
        char name[64], sz[32];
        bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
        fprintf(f, "  not available: %s", name);
        for (size_t d = c + 1; done && d < m->ncfg; d++) {
            bool all2;
            size_t first2 = unavail_from(m, d, &all2);
            if (first2 != first || all2 != all || done[d] ||
                strcmp(bp_coll_cell(m, first2, d)->why, why))
                continue;
            done[d] = true;
            bp_coll_cfg_name(&m->cfg[d], name, sizeof name);
            fprintf(f, ", %s", name);
        }
        size_name(m, first, sz, sizeof sz);
        if (all)
            fprintf(f, ": %s\n", why);
        else
            fprintf(f, " from %s on: %s\n", sz, why);
    }
    free(done);
}

static void runs_to_runs(FILE *f, const bp_inv_study_t *st, const bp_coll_map_t *m)
{
    size_t shown = 0;
    for (size_t s = 0; s < m->nsizes; s++)
        for (size_t c = 0; c < m->ncfg; c++) {
            const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
            if (x->state != BP_CELL_RAN)
                continue;
            char name[64], sz[32];
            bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
            size_name(m, s, sz, sizeof sz);
            if (x->repeat_differ && shown++ < 20)
                fprintf(f, "  run to run: %s at %s: %u of %u runs in this process (after other "
                        "allocations) gave other bits\n", name, sz, x->repeat_differ,
                        x->repeats - 1);
            if (x->process_differ && shown++ < 20)
                fprintf(f, "  run to run: %s at %s: %u of %u fresh processes gave other bits\n",
                        name, sz, x->process_differ, x->processes);
            if (x->ranks_differ && shown++ < 20)
                fprintf(f, "  ranks disagree: %s at %s: %u rank%s output differs from rank "
                        "0's\n", name, sz, x->ranks_differ, x->ranks_differ == 1 ? "'s" : "s'");
            if (x->copy_differ && shown++ < 20)
                fprintf(f, "  NOT A COPY: %s at %s: %" PRIu64 " elements differ from the "
                        "inputs (over all ranks)\n", name, sz, x->copy_differ);
        }
    if (!shown && (st->repeat > 1 || st->processes))
        fprintf(f, "  run to run: %d run%s per cell%s%s, %d fresh process%s: the same bits "
                "every time\n", st->repeat, st->repeat == 1 ? "" : "s",
                st->repeat > 1 ? " (each after another allocation pattern)" : "",
                "", st->processes, st->processes == 1 ? "" : "es");
    if (!bp_coll_kind_reduces(m->kind) && !shown)
        fprintf(f, "  copies: every rank's output equals the inputs bit for bit at every "
                "size\n");
}

static void map_detail(FILE *f, const bp_inv_study_t *st, const bp_coll_map_t *m,
                       const bp_inv_text_opts_t *o)
{
    char t[128];
    bp_coll_map_title(m, t, sizeof t);
    fprintf(f, "\n%s (%s%s%s):\n", t, m->engine, m->lib[0] ? ", " : "", m->lib);
    if (m->engine_desc[0] && o->verbose)
        fprintf(f, "  %s\n", m->engine_desc);
    unavailable(f, m);
    size_t s = 0;
    while (s < m->nsizes) {
        if (!any_ran(m, s)) {
            s++;
            continue;
        }
        size_t e = s;
        while (e + 1 < m->nsizes && any_ran(m, e + 1) && same_ran(m, s, e + 1) &&
               bp_coll_same_partition(m, e, e + 1) && !o->verbose)
            e++;
        char a[32], b[32];
        size_name(m, s, a, sizeof a);
        size_name(m, e, b, sizeof b);
        if (e > s)
            fprintf(f, "  %s-%s (%zu sizes): %zu result group%s\n", a, b, e - s + 1,
                    m->sz[e].ng, m->sz[e].ng == 1 ? "" : "s");
        else
            fprintf(f, "  %s%s%s%s: %zu result group%s\n", a, m->sz[s].what ? " (" : "",
                    m->sz[s].what ? m->sz[s].what : "", m->sz[s].what ? ")" : "", m->sz[s].ng,
                    m->sz[s].ng == 1 ? "" : "s");
        /* the interval's largest size speaks for it */
        for (size_t g = 0; g < m->sz[e].ng; g++)
            group_detail(f, m, e, (int)g, o->verbose);
        oracle_line(f, m, e);
        s = e + 1;
    }
    /* boundaries */
    int head = 0;
    size_t prev = SIZE_MAX;
    for (size_t s2 = 0; s2 < m->nsizes; s2++) {
        if (!any_ran(m, s2))
            continue;
        if (prev != SIZE_MAX) {
            char a[32], b[32];
            size_name(m, prev, a, sizeof a);
            size_name(m, s2, b, sizeof b);
            if (!bp_coll_same_partition(m, prev, s2)) {
                if (!head++)
                    fprintf(f, "  boundaries:\n");
                fprintf(f, "    %s|%s: the configurations regroup: %zu group%s -> %zu\n", a, b,
                        m->sz[prev].ng, m->sz[prev].ng == 1 ? "" : "s", m->sz[s2].ng);
            }
            for (size_t c = 0; prev == s2 - 1 && c < m->ncfg; c++)
                if (bp_coll_order_changes(m, s2, c)) {
                    char name[64], x[1024], y[1024];
                    bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
                    bp_coll_order_set(&bp_coll_cell(m, prev, c)->order, x, sizeof x);
                    bp_coll_order_set(&bp_coll_cell(m, s2, c)->order, y, sizeof y);
                    if (!head++)
                        fprintf(f, "  boundaries:\n");
                    fprintf(f, "    %s|%s: %s's orders change: %s -> %s\n", a, b, name, x, y);
                }
        }
        prev = s2;
    }
    runs_to_runs(f, st, m);
}

int bp_coll_text(FILE *f, const bp_inv_study_t *s, const bp_inv_text_opts_t *o)
{
    size_t fails = bp_inv_study_failures(s), cells = 0;
    for (size_t i = 0; i < s->ncmaps; i++)
        for (size_t k = 0; k < bp_coll_map_ncells(&s->cmaps[i]); k++)
            cells += s->cmaps[i].cell[k].state == BP_CELL_RAN;
    char pol[128];
    bp_policy_format(&s->policy, pol, sizeof pol);
    if (!cells)
        fprintf(f, "invariance: NOTHING COMPARED: no collective configuration ran\n");
    else if (fails)
        fprintf(f, "invariance: DRIFT: %zu of %zu collective maps break invariance (policy "
                "%s)\n", fails, s->ncmaps, pol);
    else
        fprintf(f, "invariance: passed: %zu collective map%s, every configuration gives the "
                "reference's bits at every size\n", s->ncmaps, s->ncmaps == 1 ? "" : "s");
    size_t i;
    json_t *note;
    json_array_foreach(s->notes, i, note)
        fprintf(f, "  note: %s\n", json_string_value(note));
    if (!o->quiet) {
        for (size_t k = 0; k < s->ncmaps; k++) {
            const bp_coll_map_t *m = &s->cmaps[k];
            char t[128], a[32], b[32];
            bp_coll_map_title(m, t, sizeof t);
            size_t na = 0;
            for (size_t c = 0; c < m->ncfg; c++) {
                bool any = false;
                for (size_t z = 0; z < m->nsizes && !any; z++)
                    any = ran(m, z, c);
                na += !any;
            }
            bp_coll_bytes_format(m->nsizes ? m->sz[0].bytes : 0, a, sizeof a);
            bp_coll_bytes_format(m->nsizes ? m->sz[m->nsizes - 1].bytes : 0, b, sizeof b);
            fprintf(f, "  %s: %zu sizes %s-%s x %zu configurations", t, m->nsizes, a, b,
                    m->ncfg);
            if (na)
                fprintf(f, " (%zu not available)", na);
            size_t g = max_groups(m), nb = boundaries(m), un = bp_coll_map_unstable(m);
            if (g <= 1 && !nb)
                fprintf(f, ": one result group everywhere");
            else
                fprintf(f, ": up to %zu result groups, %zu boundar%s", g, nb,
                        nb == 1 ? "y" : "ies");
            if (un)
                fprintf(f, "; %zu cells differ from run to run", un);
            fputc('\n', f);
        }
        for (size_t k = 0; k < s->ncmaps; k++)
            map_detail(f, s, &s->cmaps[k], o);
    }
    if (fails) {
        fprintf(f, "%sFAILED:\n", o->quiet ? "" : "\n");
        for (size_t k = 0; k < s->ncmaps; k++) {
            const bp_coll_map_t *m = &s->cmaps[k];
            size_t fs = 0, fc = 0, n = breaking(m, &fs, &fc);
            char t[128], name[64], sz[32];
            bp_coll_map_title(m, t, sizeof t);
            if (!n) {
                if (!bp_coll_map_pass(m))
                    fprintf(f, "  %s: nothing ran\n", t);
                continue;
            }
            bp_coll_cfg_name(&m->cfg[fc], name, sizeof name);
            size_name(m, fs, sz, sizeof sz);
            fprintf(f, "  %s: %zu of %zu cells break invariance (first: %s at %s)\n", t, n,
                    bp_coll_map_ncells(m), name, sz);
        }
    }
    return ferror(f) ? 2 : 0;
}

/* ---- the common report: one result per map, size and group ---------------- */

bool bp_coll_fill_report(bp_report_t *rep, const bp_inv_study_t *s)
{
    for (size_t k = 0; k < s->ncmaps; k++) {
        const bp_coll_map_t *m = &s->cmaps[k];
        char t[128];
        bp_coll_map_title(m, t, sizeof t);
        for (size_t z = 0; z < m->nsizes; z++) {
            const bp_coll_slot_t *sl = &m->sz[z];
            char sz[32];
            size_name(m, z, sz, sizeof sz);
            for (size_t g = 0; g < sl->ng; g++) {
                char probe[160], output[64], a[96], b[512] = "", note[512] = "";
                snprintf(probe, sizeof probe, "invariance %s", t);
                snprintf(output, sizeof output, "%s message", sz);
                char ref[64];
                bp_coll_cfg_name(&m->cfg[sl->g[0].first], ref, sizeof ref);
                snprintf(a, sizeof a, "%s (group 0)", ref);
                size_t w = 0, unstable = 0;
                bool bad = false;
                for (size_t c = 0; c < m->ncfg; c++) {
                    const bp_coll_cell_t *x = bp_coll_cell(m, z, c);
                    if (x->state != BP_CELL_RAN || x->group != (int)g)
                        continue;
                    char name[64];
                    bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
                    if (w < sizeof b)
                        w += (size_t)snprintf(b + w, sizeof b - w, "%s%s", w ? ", " : "", name);
                    unstable += x->repeat_differ || x->process_differ;
                    bad |= x->ranks_differ || x->copy_differ;
                }
                if (unstable)
                    snprintf(note, sizeof note, "%zu configurations differ from run to run",
                             unstable);
                else if (bad)
                    snprintf(note, sizeof note, "ranks disagree, or an all-gather is not a "
                             "copy");
                else if (g)
                    snprintf(note, sizeof note, "result group %zu instead of group 0's bits",
                             g);
                bp_result_t r = {0};
                r.probe = probe;
                r.output = output;
                r.dtype = m->dtype;
                r.kind = BP_RES_CROSS;
                r.a = a;
                r.b = b;
                r.policy = m->policy;
                r.compared = true;
                r.counts = true;
                r.note = note[0] ? note : NULL;
                if (g && sl->g[g].compared) {
                    r.cmp = sl->g[g].cmp;
                    r.cmp.first = NULL;
                    r.cmp.nfirst = 0;
                    if (sl->g[g].cmp.nfirst) {
                        r.cmp.first = malloc(sl->g[g].cmp.nfirst * sizeof *r.cmp.first);
                        if (!r.cmp.first)
                            return false;
                        memcpy(r.cmp.first, sl->g[g].cmp.first,
                               sl->g[g].cmp.nfirst * sizeof *r.cmp.first);
                        r.cmp.nfirst = sl->g[g].cmp.nfirst;
                    }
                } else {
                    r.cmp.dtype = m->dtype;
                    r.cmp.ndim = 1;
                    r.cmp.shape[0] = (int64_t)sl->n;
                    r.cmp.total = (size_t)sl->n;
                    r.cmp.hist[0] = (uint64_t)sl->n;
                    r.cmp.pass = true;
                }
                if (unstable || bad)
                    r.cmp.pass = false;
                if (!bp_report_add(rep, &r))
                    return false;
            }
        }
    }
    return true;
}
