/* bitprobe stack --ranks W: the layer stack's sharded init and a
 * tensor-parallel reduction over W real ranks, one process per GPU, NCCL
 * between them (stack_ranks.h).  Without a launcher's variables bitprobe
 * starts the W processes itself (ranks.h) and returns the worst of their
 * exit statuses; under torchrun, mpirun or srun it is one of the ranks.
 * Rank 0 prints the report.  Exit 0 every gathered parameter equals the
 * unsharded init and the one-device emulation bit for bit, 1 one differs,
 * 2 trouble. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd_stack.h"
#include "config.h"
#include "esc.h"
#include "opt.h"
#include "ranks.h"
#include "stack_ranks.h"

/* tiny, bf16, o_proj's reduction over 16 rows, the three algorithms */
static void opts_init(bp_ranks_opts_t *o)
{
    bp_error_t err = {0};
    memset(o, 0, sizeof *o);
    bp_stack_preset("tiny", &o->cfg, &err);
    o->dtype = BP_BF16;
    o->gemm = BP_STACK_GEMM_PEDANTIC;
    o->tp_rows = 16;
    o->params = o->tp = o->oracle = true;
    bp_coll_cfg_parse("default", &o->algos[0], &err);
    bp_coll_cfg_parse("Ring", &o->algos[1], &err);
    bp_coll_cfg_parse("Tree", &o->algos[2], &err);
    o->nalgos = 3;
}

#ifdef BP_HAVE_CUDA
static const char *cmp_line(const bp_cmp_t *c, char *out, size_t n)
{
    if (!c->mismatched)
        snprintf(out, n, "bit-identical");
    else
        snprintf(out, n, "%zu of %zu differ, max %llu ulp", c->mismatched, c->total,
                 (unsigned long long)c->max_ulp);
    return out;
}

static json_t *cmp_json(const bp_cmp_t *c)
{
    return json_pack("{s:I, s:I, s:I}", "elements", (json_int_t)c->total, "differ",
                     (json_int_t)c->mismatched, "max_ulp", (json_int_t)c->max_ulp);
}

static void print_text(const bp_ranks_env_t *e, const bp_ranks_opts_t *o,
                       const bp_ranks_result_t *r)
{
    char a[128], b[128], d[128];
    const char *env_algo = getenv("NCCL_ALGO");
    printf("stack --ranks %d: %s, %d rank%s (%s launch), NCCL %s, %s, preset %s\n",
           r->world, bp_ranks_failed(r) ? "FAIL" : "ok", r->world, r->world == 1 ? "" : "s",
           e->launcher, r->nccl, bp_dtype_name(o->dtype), o->cfg.preset);
    for (int k = 0; k < r->world; k++)
        printf("  rank %d: %s\n", k, r->gpus[k]);
    if (o->params) {
        if (!r->params_differ)
            printf("parameters: all %zu gathered over NCCL are bit-identical to the unsharded "
                   "init and to the one-device emulation (%llu elements on each of %d rank%s, "
                   "%.2f s)\n", r->nparams, (unsigned long long)r->elems, r->world,
                   r->world == 1 ? "" : "s", r->t_params);
        else
            printf("parameters: FAIL: %zu of %zu gathered over NCCL differ (elements summed "
                   "over the ranks):\n", r->params_differ, r->nparams);
        size_t shown = 0;
        for (size_t i = 0; i < r->nparams && shown < 20; i++)
            if (r->params[i].vs_whole || r->params[i].vs_emulated) {
                printf("  %s: %llu elements vs the unsharded init, %llu vs the emulation\n",
                       r->params[i].p.name, (unsigned long long)r->params[i].vs_whole,
                       (unsigned long long)r->params[i].vs_emulated);
                shown++;
            }
    }
    if (o->tp) {
        printf("tensor-parallel reduction: %s, x [%lld, %lld] w^T, K split over %d rank%s, "
               "partials and sums in %s (%.2f s)\n", r->tp_weight, (long long)r->tp_T,
               (long long)r->tp_K, r->world, r->world == 1 ? "" : "s", bp_dtype_name(o->dtype),
               r->t_tp);
        if (r->have_oracle)
            printf("  unsharded (one cuBLAS call over K) vs the oracle: %s (oracle %.2f s)\n",
                   cmp_line(&r->unsharded_vs_oracle, a, sizeof a), r->t_oracle);
        char label[BP_RANKS_MAX_ALGOS][96];
        int w = 9;
        for (int k = 0; k < r->ntp; k++) {
            const bp_ranks_tp_t *t = &r->tp[k];
            if (!t->cfg.algo[0] && env_algo)
                snprintf(label[k], sizeof label[k], "%s (NCCL_ALGO=%s)", t->algo, env_algo);
            else
                snprintf(label[k], sizeof label[k], "%s", t->algo);
            w = (int)strlen(label[k]) > w ? (int)strlen(label[k]) : w;
        }
        printf("  %-*s %-34s %-34s %-34s %s\n", w, "config", "vs unsharded", "vs the first",
               "vs the oracle", "nearer/farther than unsharded");
        for (int k = 0; k < r->ntp; k++) {
            const bp_ranks_tp_t *t = &r->tp[k];
            if (!t->ran) {
                printf("  %-*s not run: %s\n", w, label[k], t->error);
                continue;
            }
            printf("  %-*s %-34s %-34s %-34s", w, label[k],
                   cmp_line(&t->vs_unsharded, a, sizeof a), cmp_line(&t->vs_first, b, sizeof b),
                   t->have_oracle ? cmp_line(&t->vs_oracle, d, sizeof d) : "-");
            if (t->have_oracle)
                printf(" %zu / %zu", t->nearer, t->farther);
            printf("\n");
        }
    }
}

static json_t *result_json(const bp_ranks_env_t *e, const bp_ranks_opts_t *o,
                           const bp_ranks_result_t *r)
{
    json_t *gpus = json_array(), *diff = json_array(), *algos = json_array();
    for (int k = 0; k < r->world; k++)
        json_array_append_new(gpus, json_string(r->gpus[k]));
    for (size_t i = 0; i < r->nparams; i++)
        if (r->params[i].vs_whole || r->params[i].vs_emulated)
            json_array_append_new(diff, json_pack("{s:s, s:I, s:I}", "name",
                                                  r->params[i].p.name, "vs_unsharded",
                                                  (json_int_t)r->params[i].vs_whole,
                                                  "vs_emulated",
                                                  (json_int_t)r->params[i].vs_emulated));
    for (int k = 0; k < r->ntp; k++) {
        const bp_ranks_tp_t *t = &r->tp[k];
        json_array_append_new(
            algos, json_pack("{s:s, s:o, s:b, s:i, s:o, s:o, s:o, s:o, s:I, s:I}", "algo",
                             t->algo, "config",
                             json_pack("{s:o, s:o, s:o, s:o}", "nccl_algo",
                                       t->cfg.algo[0] ? json_string(t->cfg.algo) : json_null(),
                                       "nccl_proto",
                                       t->cfg.proto[0] ? json_string(t->cfg.proto) : json_null(),
                                       "channels",
                                       t->cfg.nch ? json_integer(t->cfg.nch) : json_null(),
                                       "bucket_bytes",
                                       t->cfg.bucket ? json_integer((json_int_t)t->cfg.bucket)
                                                     : json_null()),
                             "ran", t->ran, "group", t->ran ? t->group : -1, "error",
                             t->ran ? json_null() : json_string(t->error),
                             "vs_unsharded", t->ran ? cmp_json(&t->vs_unsharded) : json_null(),
                             "vs_first", t->ran ? cmp_json(&t->vs_first) : json_null(),
                             "vs_oracle", t->have_oracle ? cmp_json(&t->vs_oracle)
                                                         : json_null(),
                             "nearer_oracle", (json_int_t)t->nearer, "farther_oracle",
                             (json_int_t)t->farther));
    }
    const char *env_algo = getenv("NCCL_ALGO");
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "tool", "bitprobe",
        "version", PACKAGE_VERSION, "command", "stack --ranks", "verdict",
        bp_ranks_failed(r) ? "fail" : "pass", "world", r->world, "launcher", e->launcher,
        "nccl", r->nccl, "dtype", bp_dtype_name(o->dtype), "preset", o->cfg.preset, "gpus",
        gpus, "params",
        o->params ? json_pack("{s:I, s:I, s:I, s:f, s:o}", "count", (json_int_t)r->nparams,
                              "differ", (json_int_t)r->params_differ, "elements",
                              (json_int_t)r->elems, "seconds", r->t_params, "differing", diff)
                  : (json_decref(diff), json_null()),
        "tp",
        o->tp ? json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:f}", "weight", r->tp_weight,
                          "rows", (json_int_t)r->tp_T, "k", (json_int_t)r->tp_K, "n",
                          (json_int_t)r->tp_N, "env_nccl_algo",
                          env_algo ? json_string(env_algo) : json_null(), "unsharded_vs_oracle",
                          r->have_oracle ? cmp_json(&r->unsharded_vs_oracle) : json_null(),
                          "algos", algos, "seconds", r->t_tp)
              : (json_decref(algos), json_null()));
}

/* This process is rank e->rank: the unique id, the run, rank 0's report. */
static int as_rank(const bp_ranks_env_t *e, const bp_ranks_opts_t *o, const char *json_path)
{
    bp_error_t err = {0};
    bp_nccl_id_t id;
    char path[PATH_MAX] = "";
    bp_status st = bp_cli_rank_id(e, &id, path, sizeof path, &err);
    bp_ranks_result_t res;
    memset(&res, 0, sizeof res);
    if (!st)
        st = bp_stack_ranks(e, &id, o, &res, &err);
    if (path[0] && e->rank == 0)
        unlink(path);
    if (st) {
        bp_esc_printf(stderr, "bitprobe stack: rank %d: %s\n", e->rank, err.msg);
        bp_ranks_result_free(&res);
        return BP_EXIT_TROUBLE;
    }
    int rc = bp_ranks_failed(&res) ? BP_EXIT_DRIFT : BP_EXIT_OK;
    if (e->rank == 0) {
        if (json_path) {
            if (bp_cli_json_out("stack", json_path, result_json(e, o, &res)))
                rc = BP_EXIT_TROUBLE;
        }
        if (!json_path || strcmp(json_path, "-") != 0)
            print_text(e, o, &res);
        fflush(stdout);
    }
    bp_ranks_result_free(&res);
    return rc;
}

#endif

enum { O_RANKS, O_PRESET, O_LAYERS, O_GEMM, O_TP_ROWS, O_ALGOS, O_NO_PARAMS, O_NO_TP,
       O_NO_ORACLE, O_THREADS };

typedef struct {
    bool sub; /* stack ranks, not stack --ranks */
    bp_ranks_opts_t o;
    size_t W;
    long layers;
    char algos[512];
} ranks_cli_t;

static int ranks_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    ranks_cli_t *cl = ctx;
    bp_ranks_opts_t *o = &cl->o;
    bp_error_t err = {0};
    size_t v;
    switch (e->id) {
    case O_RANKS:
        if (!bp_cli_count(arg, 4096, &cl->W) || cl->W == 0)
            return bp_cli_usage_error(cmd, "--ranks needs a number of ranks (1-4096), "
                                      "not '%s'", arg);
        return 0;
    case O_PRESET:
        if (bp_stack_preset(arg, &o->cfg, &err))
            return bp_cli_usage_error(cmd, "%s", err.msg);
        return 0;
    case O_LAYERS:
        if (!bp_cli_count(arg, 1024, &v) || v == 0)
            return bp_cli_usage_error(cmd, "--layers needs 1-1024, not '%s'", arg);
        cl->layers = (long)v;
        return 0;
    case O_GEMM: return cmd_stack_gemm(cmd, arg, &o->gemm);
    case O_TP_ROWS:
        if (!bp_cli_count(arg, 4096, &v) || v == 0)
            return bp_cli_usage_error(cmd, "--tp-rows needs 1-4096, not '%s'", arg);
        o->tp_rows = (int64_t)v;
        return 0;
    case O_ALGOS: {
        snprintf(cl->algos, sizeof cl->algos, "%s", arg);
        char *items[BP_RANKS_MAX_ALGOS + 1];
        int n = bp_cli_split(cl->algos, items, BP_RANKS_MAX_ALGOS + 1);
        if (n < 1 || n > BP_RANKS_MAX_ALGOS)
            return bp_cli_usage_error(cmd, "--algos: 1 to %d collective "
                                      "configurations (default, Ring, Tree/LL128, "
                                      "Ring/Simple/4ch/bucket=25M ...)",
                                      BP_RANKS_MAX_ALGOS);
        o->nalgos = 0;
        for (int i = 0; i < n; i++) {
            bp_coll_cfg_t *k = &o->algos[o->nalgos++];
            if (bp_coll_cfg_parse(items[i], k, &err))
                return bp_cli_usage_error(cmd, "--algos: %s", err.msg);
            if (!bp_coll_cfg_is_nccl(k))
                return bp_cli_usage_error(cmd, "--algos: %s is an order of the "
                                          "emulation (invariance --engine emulate), not "
                                          "an NCCL algorithm", k->algo);
        }
        return 0;
    }
    case O_NO_PARAMS: o->params = false; return 0;
    case O_NO_TP: o->tp = false; return 0;
    case O_NO_ORACLE: o->oracle = false; return 0;
    case O_THREADS:
        if (!bp_cli_count(arg, 4096, &v))
            return bp_cli_usage_error(cmd, "--threads needs a number, not '%s'", arg);
        o->oracle_threads = (int)v;
        return 0;
    }
    return BP_EXIT_TROUBLE;
}

/* An option of stack's own, or of none: the mode names it. */
static int ranks_unknown(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)e;
    if (((ranks_cli_t *)ctx)->sub)
        return bp_cli_usage_error(cmd, "option '%s' does not apply (see 'bitprobe stack "
                                  "ranks --help')", arg);
    return bp_cli_usage_error(cmd, "--ranks: option '%s' does not apply (see "
                              "'bitprobe help stack')", arg);
}

const char cmd_stack_ranks_usage[] =
    "bitprobe stack ranks W [--preset P] [--layers N] [--dtype D] [--seed S] [--gemm G] [--tp-rows N] [--algos LIST] [--no-params] [--no-tp] [--no-oracle] [--threads N] [--json FILE] [--quiet]";

/* The children's command line, in the spelling every bitprobe reads:
 * stack, the options as given, --ranks W. */
static int launch(const char *cmd, int W, int nopts, char **argv)
{
    char w[32];
    snprintf(w, sizeof w, "--ranks=%d", W);
    char **av = calloc((size_t)nopts + 3, sizeof *av);
    if (!av)
        return bp_cli_usage_error(cmd, "out of memory");
    av[0] = (char *)"stack";
    for (int i = 1; i < nopts; i++)
        av[i] = argv[i];
    av[nopts] = w;
    int rc = bp_cli_ranks_launch("stack", W, nopts + 1, av);
    free(av);
    return rc;
}

/* stack --ranks W (cmd "stack": the mode inside stack) and stack ranks W
 * (its own entry in the command table): one table. */
static int ranks_main(const char *cmd, bool sub, int argc, char **argv)
{
    ranks_cli_t cl = {.sub = sub, .layers = -1};
    bp_ranks_opts_t *op = &cl.o;
    const char *json_path = NULL;
#define R_(name, arg, id, h) BP_OPT_CALL_(name, 0, arg, ranks_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("  W                   ranks, one process and GPU each (1-4096): the sharded init\n"
                     "                      gathered with NCCL and compared bit for bit with the\n"
                     "                      unsharded init and the one-device emulation, then a\n"
                     "                      tensor-parallel all-reduce per collective configuration\n"
                     "                      against the unsharded matmul and the oracle; bitprobe\n"
                     "                      starts the ranks, or runs as one under torchrun, mpirun\n"
                     "                      or srun.  'bitprobe stack --ranks W' is the same\n"),
        R_("ranks", true, O_RANKS,
           "  --ranks W           W as an option\n"),
        R_("preset", true, O_PRESET,
           "  --preset P          tiny (default) or llama2-7b, as for stack\n"),
        R_("layers", true, O_LAYERS,
           "  --layers N          override the preset's layers (1-1024)\n"),
        BP_OPT_DTYPE_("dtype", &op->dtype,
           "  --dtype D           model dtype: fp32, bf16 (default), fp16\n"),
        BP_OPT_SEED_(&op->seed,
           "  --seed S            seed of the weights, decimal (default 0)\n"),
        R_("gemm", true, O_GEMM,
           "  --gemm G            cuda matmuls: pedantic (default) or default, as for stack\n"),
        R_("tp-rows", true, O_TP_ROWS,
           "  --tp-rows N         rows of the tensor-parallel reduction (1-4096, default 16)\n"),
        R_("algos", true, O_ALGOS,
           "  --algos LIST        collective configurations (default: default,Ring,Tree),\n"
           "                      each ALGO[/PROTO][/Nch][/bucket=SIZE], e.g. Tree/LL128 or\n"
           "                      Ring/Simple/4ch/bucket=64K\n"),
        R_("no-params", false, O_NO_PARAMS,
           "  --no-params         skip the sharded parameters\n"),
        R_("no-tp", false, O_NO_TP,
           "  --no-tp             skip the tensor-parallel reduction\n"),
        R_("no-oracle", false, O_NO_ORACLE,
           "  --no-oracle         no oracle for the reduction\n"),
        R_("threads", true, O_THREADS,
           "  --threads N         oracle worker threads (default: one per core)\n"),
        BP_OPT_PATH_("json", 0, &json_path,
           "  --json FILE         the report as JSON ('-': stdout instead of the text)\n"),
        BP_OPT_QUIET_(
           "  -q, --quiet         no progress lines\n"),
        BP_OPT_TEXT_("  Exit status: 0 every gathered parameter is bit-identical on every rank,\n"
                     "  1 one differs, 2 bad options or environment (no CUDA, too few GPUs).\n"),
        BP_OPT_END_UNKNOWN_(ranks_unknown)};
#undef R_
    opts_init(op);
    bp_error_t err = {0};
    int pos, rc;
    if ((rc = bp_opt_parse(cmd, opts, &cl, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    int nopts = pos;
    if (sub && pos < argc && cl.W == 0) {
        const bp_opt_t *w = &opts[1]; /* --ranks */
        if ((rc = ranks_option(cmd, w, argv[pos], &cl)))
            return rc;
        pos++;
    }
    if (pos < argc)
        return bp_cli_usage_error(cmd, "unexpected argument '%s'", argv[pos]);
    if (cl.W == 0)
        return bp_cli_usage_error(cmd, "needs the number of ranks (W)");
    bp_ranks_opts_t o = cl.o;
    size_t W = cl.W;
    long layers = cl.layers;
    if (layers > 0)
        o.cfg.layers = layers;
    if (bp_stack_cfg_check(&o.cfg, &err))
        return bp_cli_usage_error(cmd, "%s", err.msg);
    if (!o.params && !o.tp)
        return bp_cli_usage_error(cmd, "--no-params and --no-tp leave nothing to run");
    bp_ranks_env_t e;
    bool found;
    if (bp_ranks_env(&e, &found, &err))
        return bp_cli_fail(&err);
    if (found && e.world != (int)W) {
        bp_esc_printf(stderr,
                      "bitprobe stack: --ranks %zu, but the %s launcher started %d rank%s\n", W,
                      e.launcher, e.world, e.world == 1 ? "" : "s");
        return BP_EXIT_TROUBLE;
    }
#ifdef BP_HAVE_CUDA
    return found ? as_rank(&e, &o, json_path) : launch(cmd, (int)W, nopts, argv);
#else
    (void)json_path, (void)nopts, (void)launch;
    fprintf(stderr, "bitprobe stack: --ranks needs CUDA GPUs: this bitprobe was built "
                    "without CUDA\n");
    return BP_EXIT_TROUBLE;
#endif
}

int cmd_stack_ranks(int argc, char **argv)
{
    return ranks_main("stack", false, argc, argv);
}

int cmd_stack_ranks_sub(int argc, char **argv)
{
    return ranks_main("stack ranks", true, argc, argv);
}
