/* bitprobe screen: the known-answer screen of every visible GPU, every SM
 * (screen.h says what is tested and where the expected bits come from).
 * Text: the verdict, one line per GPU, then each kept fault; JSON for a
 * fleet's collector.  Exit 0 every bit right, 1 a wrong bit, 2 trouble.
 *
 * Environment: BP_SCREEN_INJECT=GPU:SM:TEST[,...] flips a bit of that
 * SM's results inside the kernel (detection is exercised for real);
 * BP_SCREEN_FAKE=GxS[,dead=G:S] screens fake GPUs computed on the host
 * (for the tests of machines without a GPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitfmt.h"
#include "cli.h"
#include "config.h"
#include "esc.h"
#include "opt.h"
#include "screen_dev.h"
#include "screen_golden.h"
#include "screen_run.h"
#include "timing.h"

const char cmd_screen_usage[] =
    "bitprobe screen [--gpu all|LIST] [--depth N] [--test LIST] [--list] [--golden DIR] [--no-golden] [--bless] [--json FILE] [--verbose] [--quiet]";

#define MAX_GPUS 64

static const char *by_name(bp_screen_by_t b)
{
    return b == BP_SCR_BY_HOST ? "host" : b == BP_SCR_BY_MPFR ? "mpfr" : "golden|vote";
}

static int list_tests(void)
{
    printf("%-12s %-12s %s\n", "test", "expected", "what");
    for (int i = 0; i < bp_screen_ntests; i++)
        printf("%-12s %-12s %s\n", bp_screen_tests[i].name, by_name(bp_screen_tests[i].by),
               bp_screen_tests[i].what);
    return BP_EXIT_OK;
}

/* --gpu: "all", an index or a list; indices checked against count. */
static int parse_gpus(char *sel, int count, int *out, int *n)
{
    *n = 0;
    if (strcmp(sel, "all") == 0) {
        for (int i = 0; i < count && i < MAX_GPUS; i++)
            out[(*n)++] = i;
        return 0;
    }
    char *items[MAX_GPUS + 1];
    int k = bp_cli_split(sel, items, MAX_GPUS + 1);
    if (k > MAX_GPUS)
        return bp_cli_usage_error("screen", "--gpu: more than %d GPUs", MAX_GPUS);
    for (int i = 0; i < k; i++) {
        size_t v;
        if (!bp_cli_count(items[i], BP_OPT_GPU_MAX, &v))
            return bp_cli_usage_error("screen", "--gpu: '%s' is not all, an index or a "
                                      "comma-separated list of indices", items[i]);
        if ((int)v >= count) {
            bp_esc_printf(stderr, "bitprobe screen: --gpu %zu: there %s %d GPU%s here\n", v,
                          count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
            return BP_EXIT_TROUBLE;
        }
        for (int j = 0; j < *n; j++)
            if (out[j] == (int)v)
                return bp_cli_usage_error("screen", "--gpu: %zu is named twice", v);
        out[(*n)++] = (int)v;
    }
    return 0;
}

static void fault_line(const bp_screen_gpu_t *g, const bp_screen_fault_t *f)
{
    const bp_screen_test_t *T = &bp_screen_tests[f->test];
    char e[64], v[64], ed[64], vd[64], sm[16];
    bp_fmt_hex(T->dt, f->expected, e, sizeof e);
    bp_fmt_hex(T->dt, f->got, v, sizeof v);
    if (f->sm >= 0)
        snprintf(sm, sizeof sm, "SM %d", f->sm);
    else
        snprintf(sm, sizeof sm, "%s", T->family == BP_SCR_CUBLAS ? "any SM" : "all SMs");
    if (T->dt == BP_I32) {
        printf("  GPU %d %-7s %-11s round %d index %llu: expected %s got %s\n", g->index, sm,
               T->name, f->round, (unsigned long long)f->index, e, v);
        return;
    }
    bp_fmt_shortest(T->dt, f->expected, ed, sizeof ed);
    bp_fmt_shortest(T->dt, f->got, vd, sizeof vd);
    printf("  GPU %d %-7s %-11s round %d index %llu: expected %s (%s) got %s (%s)%s\n",
           g->index, sm, T->name, f->round, (unsigned long long)f->index, e, ed, v, vd,
           f->sm < 0 && T->family != BP_SCR_CUBLAS ? " [oracle bound]" : "");
}

/* "SM 17 (div-fp32, pow-fp32)" for the verdict line: the first faulty
 * SMs of a GPU and their tests. */
static void wrong_summary(const bp_screen_gpu_t *g, const int *tests, int nt, char *out,
                          size_t n)
{
    size_t len = 0;
    int shown = 0;
    out[0] = '\0';
    for (unsigned s = 0; s <= g->nsmid && shown < 3; s++) {
        int sm = s == g->nsmid ? -1 : (int)s;
        if (sm >= 0 && !g->wrong_by_sm[s])
            continue;
        char names[160] = "";
        size_t nl = 0;
        for (int i = 0; i < nt; i++) {
            const bp_screen_tres_t *tr = &g->t[tests[i]];
            bool hit = false;
            for (int f = 0; f < tr->nkept && !hit; f++)
                hit = tr->kept[f].sm == sm;
            if (sm >= 0 && tr->sm_wrong)
                hit = tr->sm_wrong[s] != 0;
            if (hit && nl + 20 < sizeof names)
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "",
                                       bp_screen_tests[tests[i]].name);
        }
        if (!names[0])
            continue;
        if (sm >= 0)
            len += (size_t)snprintf(out + len, n > len ? n - len : 0, "%sSM %d (%s)",
                                    shown ? ", " : "", sm, names);
        else
            len += (size_t)snprintf(out + len, n > len ? n - len : 0, "%swhole GPU (%s)",
                                    shown ? ", " : "", names);
        shown++;
    }
}

static void print_text(const bp_screen_gpu_t *g, int ng, const int *tests, int nt, int depth,
                       double secs, bool verbose, bool quiet)
{
    int st = bp_screen_status(g, ng), named = -1;
    char sum[512];
    if (st == 0) {
        printf("screen: PASS: %d GPU%s, %d test%s, every SM covered, no wrong bit "
               "(depth %d, %.1f s)\n", ng, ng == 1 ? "" : "s", nt, nt == 1 ? "" : "s", depth,
               secs);
    } else if (st == 1) {
        int bad = 0, shown = 0;
        for (int k = 0; k < ng; k++)
            bad += bp_screen_gpu_wrong(&g[k]);
        printf("screen: FAIL: wrong bits on ");
        for (int k = 0; k < ng && shown < 3; k++)
            if (bp_screen_gpu_wrong(&g[k])) {
                wrong_summary(&g[k], tests, nt, sum, sizeof sum);
                printf("%sGPU %d %s", shown ? "; " : "", g[k].index, sum);
                shown++;
            }
        if (bad > shown)
            printf("; and %d more GPU%s", bad - shown, bad - shown == 1 ? "" : "s");
        printf(" (%d of %d GPU%s; depth %d, %.1f s)\n", bad, ng, ng == 1 ? "" : "s", depth,
               secs);
    } else {
        for (int k = 0; k < ng; k++)
            if (g[k].trouble) {
                printf("screen: TROUBLE: GPU %d: %s\n", g[k].index, g[k].error);
                named = k;
                break;
            }
    }
    for (int k = 0; k < ng; k++) {
        const bp_screen_gpu_t *x = &g[k];
        int covered = -1; /* the fewest SMs any pinned test covered */
        uint64_t wrong = 0;
        int wsms = 0;
        for (int i = 0; i < nt; i++) {
            const bp_screen_tres_t *tr = &x->t[tests[i]];
            if (tr->ran && tr->covered >= 0 && (covered < 0 || tr->covered < covered))
                covered = tr->covered;
            wrong += tr->wrong;
        }
        for (unsigned s = 0; x->wrong_by_sm && s < x->nsmid; s++)
            wsms += x->wrong_by_sm[s] > 0;
        uint64_t on_sms = 0;
        for (unsigned s = 0; x->wrong_by_sm && s < x->nsmid; s++)
            on_sms += x->wrong_by_sm[s];
        char state[160];
        size_t sl = 0;
        if (wrong) {
            sl = (size_t)snprintf(state, sizeof state, "FAIL  %llu wrong result%s",
                                  (unsigned long long)wrong, wrong == 1 ? "" : "s");
            if (wsms)
                sl += (size_t)snprintf(state + sl, sizeof state - sl, " on %d SM%s", wsms,
                                       wsms == 1 ? "" : "s");
            if (wrong > on_sms)
                snprintf(state + sl, sizeof state - sl, "%s%llu whole-GPU", wsms ? ", " : " (",
                         (unsigned long long)(wrong - on_sms));
            if (wrong > on_sms && !wsms)
                snprintf(state + strlen(state), sizeof state - strlen(state), ")");
        } else if (x->trouble) {
            snprintf(state, sizeof state, "TROUBLE");
        } else {
            snprintf(state, sizeof state, "ok");
        }
        if (quiet && !wrong && !x->trouble)
            continue;
        bool any = false;
        for (int i = 0; i < nt; i++)
            any |= x->t[tests[i]].ran;
        char cov[32];
        if (covered < 0 && any)
            snprintf(cov, sizeof cov, "device-wide");
        else
            snprintf(cov, sizeof cov, "%d/%d SMs", covered < 0 ? 0 : covered, x->sms);
        printf("GPU %-2d %s  %s  %s  %s  %s  %.1f s\n", x->index, x->name, x->pci, x->uuid,
               cov, state, x->seconds);
        if (x->trouble && k != named)
            printf("  trouble: %s\n", x->error);
        if (verbose)
            for (int i = 0; i < nt; i++) {
                const bp_screen_tres_t *tr = &x->t[tests[i]];
                if (!tr->ran)
                    continue;
                char cov[32];
                if (tr->covered < 0)
                    snprintf(cov, sizeof cov, "device-wide");
                else
                    snprintf(cov, sizeof cov, "%d/%d SMs", tr->covered, x->sms);
                printf("  %-12s %-15s %-12s %12llu checked %8llu wrong  %.3f s\n",
                       bp_screen_tests[tests[i]].name, tr->by ? tr->by : "-", cov,
                       (unsigned long long)tr->checked, (unsigned long long)tr->wrong,
                       tr->seconds);
            }
    }
    bool header = false;
    for (int k = 0; k < ng; k++)
        for (int i = 0; i < nt; i++) {
            const bp_screen_tres_t *tr = &g[k].t[tests[i]];
            if (tr->nkept && !header) {
                printf("faults (the first %d per GPU and test):\n", BP_SCREEN_KEEP);
                header = true;
            }
            for (int f = 0; f < tr->nkept; f++)
                fault_line(&g[k], &tr->kept[f]);
        }
    for (int k = 0; k < ng && !quiet; k++)
        if (g[k].note[0] && (k == 0 || strcmp(g[k].note, g[k - 1].note) != 0))
            printf("note: GPU %d: %s\n", g[k].index, g[k].note);
}

static void progress(void *ctx, int done, int depth)
{
    (void)ctx;
    bp_cli_progress("screen: round %d of %d done\n", done, depth);
}

/* One golden per key; GPUs sharing a key must agree bit for bit. */
static int bless(const char *root, bp_screen_gpu_t *g, int ng, const int *tests, int nt)
{
    bp_screen_job_t jobs[BP_SCREEN_MAX_TESTS];
    bp_error_t err = {0};
    int rc = BP_EXIT_OK;
    for (int i = 0; i < nt; i++)
        if (bp_screen_job_make(tests[i], 0, &jobs[i], &err)) {
            for (int j = 0; j < i; j++)
                bp_screen_job_free(&jobs[j]);
            return bp_cli_fail(&err);
        }
    for (int k = 0; k < ng && !rc; k++) {
        bool first = true;
        for (int p = 0; p < k && first; p++)
            first = strcmp(g[p].key, g[k].key) != 0;
        if (!first)
            continue;
        for (int p = k + 1; p < ng && !rc; p++) {
            if (strcmp(g[p].key, g[k].key) != 0)
                continue;
            for (int i = 0; i < nt; i++) {
                const bp_screen_tres_t *a = &g[k].t[tests[i]], *b = &g[p].t[tests[i]];
                size_t es = bp_dtype_info(bp_screen_tests[tests[i]].dt)->size;
                if (a->agreed && b->agreed &&
                    memcmp(a->agreed, b->agreed, a->nagreed * es) != 0) {
                    bp_esc_printf(stderr,
                                  "bitprobe screen: --bless: GPUs %d and %d (both %s) "
                                  "disagree on %s: nothing written\n",
                                  g[k].index, g[p].index, g[k].key,
                                  bp_screen_tests[tests[i]].name);
                    rc = BP_EXIT_DRIFT;
                    break;
                }
            }
        }
        char path[4096];
        int written;
        if (!rc && bp_screen_golden_bless(root, &g[k], jobs, nt, path, sizeof path, &written,
                                          &err))
            rc = bp_cli_fail(&err);
        else if (!rc)
            printf("blessed %s: %d golden sweep%s from GPU %d (%s)\n", path, written,
                   written == 1 ? "" : "s", g[k].index, g[k].name);
    }
    for (int i = 0; i < nt; i++)
        bp_screen_job_free(&jobs[i]);
    return rc;
}

/* No GPU to screen: said with the way out, and, with --json, a row that
 * says why, so that a fleet's collector counts this host.  Exit 2. */
static int not_screened(const char *why, const char *json_path, const int *tests, int nt,
                        int depth)
{
    fprintf(stderr, "bitprobe screen: no GPU to screen here: %s; screen checks CUDA GPUs "
                    "(run it on a GPU machine; 'bitprobe run --device cpu,oracle' checks "
                    "this host's CPU)\n", why);
    if (json_path)
        bp_cli_json_out("screen", json_path, bp_screen_json_unscreened(why, tests, nt, depth));
    return BP_EXIT_TROUBLE;
}

/* --depth, --gpu, --list: a check beyond the kind's, or the work itself. */
static int screen_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    int rc;
    switch (e->id) {
    case 'd':
        if (!bp_cli_count(arg, 1000000, e->target) || *(size_t *)e->target == 0)
            return bp_cli_usage_error(cmd, "--depth needs a number of rounds "
                                      "(1-1000000), not '%s'", arg);
        return 0;
    case 'g':
        if ((rc = bp_opt_gpus(cmd, arg)))
            return rc;
        *(char **)e->target = (char *)arg;
        return 0;
    case 'l': return list_tests() ? BP_EXIT_TROUBLE : -1;
    }
    return BP_EXIT_TROUBLE;
}

int cmd_screen(int argc, char **argv)
{
    char *gpu_sel = NULL, *test_sel = NULL;
    const char *golden = NULL, *json_path = NULL;
    bool no_golden = false, do_bless = false;
    int verbose = 0;
    size_t depth = 1;
    const bp_opt_t opts[] = {
        {"gpu", 0, BP_OPT_CALL, &gpu_sel, 0, 0, screen_option, 'g', true,
           "  --gpu SEL         all (default), one index (0 to 1023) or a comma-separated\n"
           "                    list (0,2)\n"},
        {"depth", 0, BP_OPT_CALL, &depth, 0, 0, screen_option, 'd', true,
           "  --depth N         rounds (default 1, a few seconds per GPU); each round draws\n"
           "                    new inputs for the tests whose answers the host computes\n"},
        BP_OPT_STRING_("test", 0, &test_sel,
           "  --test LIST       comma-separated tests (default: all)\n"),
        BP_OPT_CALL_("list", 0, false, screen_option, 'l',
           "  --list            the tests and where their expected bits come from\n"),
        BP_OPT_STRING_("golden", 0, &golden,
           "  --golden DIR      goldens under DIR (default: beside the probes, as for run)\n"),
        BP_OPT_FLAG_("no-golden", 0, &no_golden,
           "  --no-golden       the SMs vote on the math-library sweeps even where a golden exists\n"),
        BP_OPT_FLAG_("bless", 0, &do_bless,
           "  --bless           write the math-library sweeps' bits as this GPU kind's golden\n"
           "                    (only when every test passed and same-kind GPUs agree)\n"),
        BP_OPT_PATH_("json", 0, &json_path,
           "  --json FILE       the report as JSON for a fleet's collector ('-': stdout\n"
           "                    instead of the text); without a GPU, a 'not screened' row\n"),
        BP_OPT_VERBOSE_(&verbose,
           "  --verbose, -v     a line per GPU and test\n"),
        BP_OPT_QUIET_(
           "  -q, --quiet       only the verdict, failing GPUs and the faults\n"),
        BP_OPT_TEXT_("  BP_SCREEN_INJECT=GPU:SM:TEST[,...] flips bit 0 of that SM's first result\n"
                     "  inside the kernel (proves that a wrong bit is caught and named).\n"
                     "  Exit status: 0 every bit right on every SM, 1 a wrong bit, 2 trouble (no GPU,\n"
                     "  an SM that never ran, bad options).\n"),
        BP_OPT_END_};
    int rc, pos;
    bp_cli_quiet = false;
    if ((rc = bp_opt_parse("screen", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    bool quiet = bp_cli_quiet;
    if (pos < argc)
        return bp_cli_usage_error("screen", "unexpected argument '%s'", argv[pos]);
    if (do_bless && no_golden)
        return bp_cli_usage_error("screen", "--bless and --no-golden do not go together");

    int tests[BP_SCREEN_MAX_TESTS], nt = 0;
    if (!test_sel || strcmp(test_sel, "all") == 0) {
        for (int i = 0; i < bp_screen_ntests; i++)
            tests[nt++] = i;
    } else {
        char *items[BP_SCREEN_MAX_TESTS + 1];
        int k = bp_cli_split(test_sel, items, BP_SCREEN_MAX_TESTS + 1);
        for (int i = 0; i < k; i++) {
            int t = bp_screen_test_find(items[i]);
            if (t < 0)
                return bp_cli_usage_error("screen", "--test: unknown test '%s' "
                                          "('bitprobe screen --list' shows them)", items[i]);
            for (int j = 0; j < nt; j++)
                if (tests[j] == t)
                    return bp_cli_usage_error("screen", "--test: %s is named twice",
                                              items[i]);
            tests[nt++] = t;
        }
    }

    bp_screen_inject_t inj[BP_SCREEN_MAX_INJECT];
    int ninj = 0;
    bp_error_t err = {0};
    const char *inj_env = getenv("BP_SCREEN_INJECT");
    if (inj_env && *inj_env && bp_screen_inject_parse(inj_env, inj, &ninj, &err))
        return bp_cli_fail(&err);
    const char *fake = getenv("BP_SCREEN_FAKE");
    if (fake && !*fake)
        fake = NULL;

    int count = 0;
    if (fake) {
        if (bp_screen_fake_count(fake, &count, &err))
            return bp_cli_fail(&err);
    } else {
#ifdef BP_HAVE_CUDA
        if (bp_screen_cuda_count(&count, &err))
            return not_screened(err.msg, json_path, tests, nt, (int)depth);
#else
        return not_screened("this bitprobe was built without CUDA", json_path, tests, nt,
                            (int)depth);
#endif
    }
    int gpus[MAX_GPUS], ng = 0;
    char all[] = "all";
    rc = parse_gpus(gpu_sel ? gpu_sel : all, count, gpus, &ng);
    if (rc)
        return rc;
    for (int i = 0; i < ninj; i++) {
        bool gpu_ok = false, test_ok = false;
        for (int k = 0; k < ng; k++)
            gpu_ok |= gpus[k] == inj[i].gpu;
        for (int k = 0; k < nt; k++)
            test_ok |= tests[k] == inj[i].test;
        if (!gpu_ok || !test_ok) {
            bp_esc_printf(stderr,
                          "bitprobe screen: BP_SCREEN_INJECT: %s %d:%d:%s is not screened "
                          "in this run\n",
                          gpu_ok ? "test" : "GPU", inj[i].gpu, inj[i].sm,
                          bp_screen_tests[inj[i].test].name);
            return BP_EXIT_TROUBLE;
        }
    }

    bp_screen_gpu_t *g = calloc((size_t)ng, sizeof *g);
    if (!g) {
        fprintf(stderr, "bitprobe screen: out of memory\n");
        return BP_EXIT_TROUBLE;
    }
    for (int k = 0; k < ng; k++)
        g[k].index = gpus[k];
    bp_screen_opts_t o = {tests, nt, (int)depth, fake,
                          no_golden || do_bless ? NULL : bp_cli_golden_dir(golden, NULL, NULL), inj,
                          ninj,
                          progress, NULL};
    double t0 = bp_timing_now();
    if (bp_screen_run(&o, g, ng, &err)) {
        rc = bp_cli_fail(&err);
        goto out;
    }
    double secs = bp_timing_now() - t0;
    rc = bp_screen_status(g, ng);
    if (json_path) {
        if (bp_cli_json_out("screen", json_path,
                            bp_screen_json(g, ng, tests, nt, (int)depth, secs)))
            rc = BP_EXIT_TROUBLE;
    }
    if (!json_path || strcmp(json_path, "-") != 0)
        print_text(g, ng, tests, nt, (int)depth, secs, verbose > 0, quiet);
    if (do_bless) {
        if (rc != BP_EXIT_OK)
            fprintf(stderr, "bitprobe screen: --bless: the screen did not pass: nothing "
                            "written\n");
        else
            rc = bless(bp_cli_golden_dir(golden, NULL, NULL), g, ng, tests, nt);
    }
out:
    for (int k = 0; k < ng; k++)
        bp_screen_gpu_free(&g[k]);
    free(g);
    return rc;
}
