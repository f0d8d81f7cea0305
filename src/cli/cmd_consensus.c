/* bitprobe diff --consensus RUN...: many hosts' saved runs (bundles,
 * safetensors or .npy files) grouped tensor by tensor into sets of
 * bit-identical results (consensus.h); the verdict first, then each tensor
 * with outliers (the majority, the odd ones out and how far they are from
 * it), then every run with what it ran on.  Exit 0 every run agrees on
 * every tensor it shares, 1 an outlier or a tensor without a majority,
 * 2 trouble. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "compare.h"
#include "consensus.h"
#include "report.h"
#include "tpair.h"
#include "tset.h"
#include "esc.h"
#include "opt.h"

/* One loaded tensor set per path, the last one asked for. */
typedef struct {
    char *path;
    bp_st_file_t f;
} cache_t;

static const bp_st_tensor_t *tensor_of(cache_t *cache, const bp_cons_member_t *m,
                                       const char *item, bp_error_t *err)
{
    if (!m->path)
        return NULL;
    if (!cache->path || strcmp(cache->path, m->path) != 0) {
        bp_st_free(&cache->f);
        free(cache->path);
        cache->path = NULL;
        if (bp_tset_load(m->path, false, &cache->f, err))
            return NULL;
        cache->path = strdup(m->path);
    }
    char name[PATH_MAX];
    bp_cons_tensor_name(m, item, name, sizeof name);
    return bp_st_find(&cache->f, name);
}

/* "1 of 4096 differ, max 1 ulp, first [17]" between the majority's
 * representative and member m. */
static void distance(cache_t *ca, cache_t *cb, const bp_cons_t *c, const bp_cons_item_t *it,
                     int rep, int m, char *out, size_t n)
{
    bp_error_t err = {0};
    const bp_st_tensor_t *a = tensor_of(ca, bp_cons_member_at(c, rep), it->name, &err);
    const bp_st_tensor_t *b = a ? tensor_of(cb, bp_cons_member_at(c, m), it->name, &err) : NULL;
    bp_cmp_t cmp;
    bp_cmp_opts_t co;
    bp_cmp_opts_init(&co);
    co.nan_payload = true;
    *out = '\0';
    if (!a || !b || bp_compare(&a->buf, &b->buf, NULL, &co, &cmp, &err)) {
        snprintf(out, n, "%s", err.msg[0] ? err.msg : "not comparable");
        return;
    }
    char idx[64] = "";
    if (cmp.nfirst && a->buf.ndim > 0)
        bp_index_format(&a->buf, cmp.first[0].index, idx, sizeof idx);
    char ulp[64];
    bp_cmp_max_ulp_text(&cmp, ulp, sizeof ulp);
    snprintf(out, n, "%zu of %zu differ, %s%s%s", cmp.mismatched, cmp.total, ulp,
             idx[0] ? ", first at " : "", idx);
    bp_cmp_free(&cmp);
}

static void member_list(const bp_cons_t *c, const bp_cons_group_t *g, char *out, size_t n)
{
    size_t len = 0;
    *out = '\0';
    for (int i = 0; i < g->n && len + 8 < n; i++) {
        if (i == 8 && g->n > 9) {
            snprintf(out + len, n - len, ", and %d more", g->n - 8);
            return;
        }
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "",
                                bp_cons_member_at(c, g->members[i])->label);
    }
}

/* One tensor whose runs disagree: the majority (or, without one, the
 * largest group) first, then each other run, with how far it is from
 * that group's first run and, where it differs, what it ran on. */
static void print_item(const bp_cons_t *c, const bp_cons_item_t *it, cache_t *ca, cache_t *cb)
{
    char shape[64], h[40], who[1024], d[1200];
    bp_shape_format(it->ndim, it->shape, shape, sizeof shape);
    bp_esc_printf(stdout, "%s %s %s%s\n", it->name, bp_dtype_name(it->dtype), shape,
           it->mixed ? " (dtype or shape differs between runs)" : "");
    bool maj = it->majority >= 0;
    const bp_cons_group_t *ref = &it->groups[maj ? it->majority : 0];
    int rep = ref->members[0];
    for (int g = 0; g < it->ngroups; g++) {
        const bp_cons_group_t *gr = &it->groups[g];
        bp_cons_hash_str(gr, h, sizeof h);
        member_list(c, gr, who, sizeof who);
        if (gr == ref) {
            bp_esc_printf(stdout, "  %4d %-6s %s  %s\n", gr->n, maj ? "agree" : "same", h, who);
            continue;
        }
        for (int i = 0; i < gr->n; i++) {
            int m = gr->members[i];
            const char *lab = bp_cons_member_at(c, m)->label;
            *d = '\0';
            if (!it->mixed)
                distance(ca, cb, c, it, rep, m, d, sizeof d);
            if (i == 0)
                bp_esc_printf(stdout, "  %4d %-6s %s  %s%s%s\n", gr->n, maj ? "odd" : "other", h, lab,
                       *d ? ": " : "", d);
            else
                bp_esc_printf(stdout, "  %4s %-6s %16s  %s%s%s\n", "", "", "", lab, *d ? ": " : "", d);
            const char *ab = bp_cons_about(c, m, it->name), *rab = bp_cons_about(c, rep, it->name);
            if (ab[0] && strcmp(ab, rab) != 0)
                bp_esc_printf(stdout, "%30s%s runs on %s (%s: %s)\n", "", lab, ab,
                       bp_cons_member_at(c, rep)->label, rab);
        }
    }
}

/* What run's tensors are as items: the first run's tensors they pair
 * with, as plain diff pairs two sets (tpair.h: a cpu-libm run's outputs
 * with a cpu-sleef run's, one CPU run's with another's whatever their
 * ISA); *out is NULL where every tensor keeps its name. */
static int item_names(const char *first, const char *run, json_t **out)
{
    bp_tset_t a, b;
    bp_tset_opts_t so = {0};
    bp_pair_opts_t po = {0};
    bp_pairs_t P;
    bp_error_t err = {0};
    *out = NULL;
    if (bp_tset_open(first, &so, &a, &err))
        return bp_cli_fail(&err);
    if (bp_tset_open(run, &so, &b, &err)) {
        bp_tset_free(&a);
        return bp_cli_fail(&err);
    }
    int rc = BP_EXIT_OK;
    if (bp_pair_sets(&a, &b, &po, &P, &err)) {
        rc = bp_cli_fail(&err);
    } else {
        for (size_t i = 0; i < P.n && !rc; i++) {
            const bp_pair_t *p = &P.p[i];
            if (!p->a || !p->b || strcmp(p->a->name, p->b->name) == 0)
                continue;
            if ((!*out && !(*out = json_object())) ||
                json_object_set_new(*out, p->b->name, json_string(p->a->name)))
                rc = bp_cli_usage_error("diff", "out of memory");
        }
        bp_pairs_free(&P);
    }
    bp_tset_free(&a);
    bp_tset_free(&b);
    return rc;
}

const char cmd_diff_consensus_usage[] =
    "bitprobe diff consensus RUN... [--json FILE] [--first K] [--quiet]";

/* An option consensus does not take: under diff --consensus the mode says
 * so; as diff consensus, the nearest option it takes. */
static int cons_unknown(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)e;
    if (!ctx)
        return bp_cli_usage_error(cmd, "--consensus: option '%s' does not apply "
                                  "(--json, --first, --quiet do)", arg);
    const struct option lo[] = {{"json", required_argument, 0, 0},
                                {"first", required_argument, 0, 0},
                                {"quiet", no_argument, 0, 0},
                                {0, 0, 0, 0}};
    return bp_cli_unknown_option(cmd, lo, arg);
}

/* diff --consensus (cmd "diff", the mode inside diff) and diff consensus
 * (its own entry in the command table): one table. */
static int consensus_main(const char *cmd, bool sub, int argc, char **argv)
{
    const char *json_path = NULL;
    size_t first = 20;
    bool mode = false;
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("  RUN...            saved runs (bundles of run --save, safetensors or .npy\n"
                     "                    files) of several hosts or GPUs, paired with the first\n"
                     "                    run's names and grouped tensor by tensor into sets of\n"
                     "                    bit-identical results; one run of several GPUs (run\n"
                     "                    --gpu all --save) holds one per GPU.  'bitprobe diff\n"
                     "                    --consensus RUN...' is the same\n"),
        BP_OPT_FLAG_("consensus", 0, &mode, NULL),
        BP_OPT_PATH_("json", 0, &json_path,
           "  --json FILE       the groups as JSON ('-': stdout instead of the text)\n"),
        BP_OPT_SIZE_("first", &first, 1000000,
           "  --first K         show at most K tensors that differ (default 20)\n"),
        BP_OPT_QUIET_(
           "  -q, --quiet       the verdict and the tensors that differ, not the runs\n"),
        BP_OPT_TEXT_("  Exit status: 0 every run agrees on every tensor it shares, 1 an outlier\n"
                     "  or a tensor without a majority, 2 trouble or nothing compared.\n"),
        BP_OPT_END_UNKNOWN_(cons_unknown)};
    int pos, prc;
    if ((prc = bp_opt_parse(cmd, opts, sub ? &mode : NULL, argc, argv, &pos)))
        return prc < 0 ? BP_EXIT_OK : prc;
    bool quiet = bp_cli_quiet;
    int nruns = argc - pos;
    if (nruns < 1)
        return bp_cli_usage_error(cmd, "--consensus needs saved runs (two or more, or one "
                                  "of several GPUs)");
    bp_cons_t *cs = bp_cons_new();
    bp_error_t err = {0};
    if (!cs)
        return bp_cli_usage_error("diff", "out of memory");
    for (int i = pos; i < argc; i++) {
        bp_cli_progress("reading %s\n", argv[i]);
        for (int j = pos; j < i; j++)
            if (strcmp(argv[i], argv[j]) == 0) {
                bp_cons_free(cs);
                return bp_cli_usage_error(cmd, "--consensus: '%s' is named twice", argv[i]);
            }
        json_t *names = NULL;
        int nrc = i > pos ? item_names(argv[pos], argv[i], &names) : BP_EXIT_OK;
        if (nrc || bp_cons_add_path(cs, argv[i], argv[i], names, &err)) {
            json_decref(names);
            bp_cons_free(cs);
            return nrc ? nrc : bp_cli_fail(&err);
        }
        json_decref(names);
    }
    bp_cons_settle(cs);
    bp_cons_tally_t t;
    bp_cons_tally(cs, &t);
    int nm = bp_cons_nmembers(cs), odd = 0;
    if (nm < 2) {
        bp_esc_printf(stderr,
                      "bitprobe diff: --consensus needs at least two runs: '%s' holds one "
                      "(a run of several GPUs, run --gpu all --save, holds one per GPU)\n",
                      argv[pos]);
        bp_cons_free(cs);
        return BP_EXIT_TROUBLE;
    }
    for (int m = 0; m < nm; m++)
        odd += bp_cons_outlier_count(cs, m) > 0;
    int rc = t.outliers || t.split ? BP_EXIT_DRIFT : BP_EXIT_OK;
    if (t.items == 0) {
        fprintf(stderr, "bitprobe diff: --consensus: the runs hold no tensor\n");
        bp_cons_free(cs);
        return BP_EXIT_TROUBLE;
    }
    if (t.compared == 0) /* nothing compared is never agreement */
        rc = BP_EXIT_TROUBLE;
    if (json_path) {
        json_t *j = bp_cons_json(cs, false);
        json_object_set_new(j, "verdict", json_string(rc == BP_EXIT_TROUBLE ? "error"
                                                      : rc                  ? "differ"
                                                                            : "agree"));
        if (rc == BP_EXIT_TROUBLE)
            json_object_set_new(j, "nothing_compared", json_string("no tensor in common"));
        json_object_set_new(j, "exit_status", json_integer(rc));
        if (bp_cli_json_out("diff", json_path, j))
            rc = BP_EXIT_TROUBLE;
        if (strcmp(json_path, "-") == 0) {
            bp_cons_free(cs);
            return rc;
        }
    }
    if (t.compared == 0) {
        printf("consensus: error: nothing compared (no tensor in common): each of the %zu "
               "tensors is in one run only\n", t.items);
    } else if (rc == BP_EXIT_OK) {
        printf("consensus: AGREE: %d runs, %zu tensor%s, %sbit-identical in every run that "
               "has it\n", nm, t.compared, t.compared == 1 ? "" : "s",
               t.compared == 1 ? "" : "each ");
    } else {
        printf("consensus: DIFFER: ");
        if (t.outliers)
            bp_esc_printf(stdout, "%d of %d runs %s in %zu of %zu tensor%s%s", odd, nm,
                   odd == 1 ? "is an outlier" : "are outliers", t.outliers, t.compared,
                   t.compared == 1 ? "" : "s", t.split ? "; " : "");
        if (t.split)
            printf("no majority in %zu of %zu tensor%s", t.split, t.compared,
                   t.compared == 1 ? "" : "s");
        printf(" (%zu agree in every run)\n", t.unanimous);
    }
    if (t.partial)
        bp_esc_printf(stdout, "  note: %zu tensor%s missing from some runs\n", t.partial,
               t.partial == 1 ? " is" : "s are");
    cache_t ca = {0}, cb = {0};
    size_t shown = 0;
    for (size_t i = 0; i < bp_cons_nitems(cs); i++) {
        const bp_cons_item_t *it = bp_cons_item_at(cs, i);
        if (it->ngroups < 2)
            continue;
        if (shown++ == first) {
            printf("(%zu more tensors differ: --first to see more)\n",
                   t.outliers + t.split - first);
            break;
        }
        print_item(cs, it, &ca, &cb);
    }
    if (!quiet) {
        printf("runs:\n");
        for (int m = 0; m < nm; m++) {
            const bp_cons_member_t *mb = bp_cons_member_at(cs, m);
            const char *k;
            json_t *v;
            char about[1024] = "";
            size_t len = 0;
            json_object_foreach(mb->about, k, v) {
                if (len + 8 < sizeof about && !strstr(about, json_string_value(v)))
                    len += (size_t)snprintf(about + len, sizeof about - len, "%s%s",
                                            len ? "; " : "", json_string_value(v));
            }
            size_t n = bp_cons_outlier_count(cs, m);
            bp_esc_printf(stdout, "  %-24s %zu outlier tensor%s  %s\n", mb->label, n, n == 1 ? "" : "s", about);
        }
    }
    bp_st_free(&ca.f);
    bp_st_free(&cb.f);
    free(ca.path);
    free(cb.path);
    bp_cons_free(cs);
    return rc;
}

int cmd_diff_consensus(int argc, char **argv)
{
    return consensus_main("diff", false, argc, argv);
}

int cmd_diff_consensus_sub(int argc, char **argv)
{
    return consensus_main("diff consensus", true, argc, argv);
}
