/* bitprobe stack: the reference layer stack run with two inits of its RoPE
 * buffers on one device (stack.h), reported as text, JSON (the common
 * report with a "stack" object) and an SVG plot.  Exit 0 ok, 1 when a
 * sharded parameter or a repeated forward differs or the policy is
 * exceeded, 2 trouble. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_stack.h"
#include "cli.h"
#include "opt.h"
#include "envinfo.h"
#include "esc.h"
#include "outfile.h"
#include "rep.h"
#include "rep_stack.h"
#include "stack.h"

const char cmd_stack_usage[] =
    "bitprobe stack [--preset P] [--device cpu|cuda] [--dtype D] [--init-dtype D] [--positions A:B] [--layers N] [--plot FILE.svg] [--json FILE] [--markdown FILE]";

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    long long v;
    if (!bp_cli_int(s, lo, hi, &v))
        return false;
    *out = v;
    return true;
}

static bool parse_positions(const char *s, int64_t *a, int64_t *b)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return false;
    char first[32];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof first)
        return false;
    memcpy(first, s, n);
    first[n] = '\0';
    return parse_i64(first, 0, INT64_MAX, a) &&
           parse_i64(colon + 1, 0, INT64_MAX, b);
}

static bool parse_init(const char *s, bp_stack_init_t *out)
{
    if (strcmp(s, "unsharded") == 0)
        *out = BP_STACK_UNSHARDED;
    else if (strcmp(s, "sharded") == 0)
        *out = BP_STACK_SHARDED;
    else
        return false;
    return true;
}

static void progress(void *ctx, const char *msg)
{
    (void)ctx;
    bp_cli_progress("stack: %s\n", msg);
}

static bp_mismatch_t *dup_first(const bp_cmp_t *c)
{
    if (!c->nfirst)
        return NULL;
    bp_mismatch_t *m = malloc(c->nfirst * sizeof *m);
    if (m)
        memcpy(m, c->first, c->nfirst * sizeof *m);
    return m;
}

/* One comparison of the stack as a result of the common report. */
static bool add(bp_report_t *rep, const char *probe, const char *output,
                const char *a, const char *b, bool counts, const bp_cmp_t *c)
{
    bp_result_t res = {
        .probe = (char *)probe, .output = (char *)output, .dtype = c->dtype,
        .kind = BP_RES_CROSS, .a = (char *)a, .b = (char *)b,
        .compared = true, .counts = counts, .cmp = *c,
    };
    bp_policy_exact(&res.policy);
    res.cmp.first = dup_first(c);
    if (c->nfirst && !res.cmp.first)
        return false;
    if (bp_report_add(rep, &res))
        return true;
    bp_cmp_free(&res.cmp);
    return false;
}

static bool fill_report(bp_report_t *rep, const bp_stack_result_t *r)
{
    const char *a = r->side_desc[0], *b = r->side_desc[1];
    bool ok = true;
    for (int k = 0; ok && r->have_buffers && k < 3; k++)
        ok = add(rep, "stack.buffers", bp_stack_buf_names[k], a, b, false,
                 &r->buf[k]);
    char lb[64];
    snprintf(lb, sizeof lb, "sharded %d-way, gathered", r->opts.shards);
    for (size_t i = 0; ok && i < r->params_checked; i++)
        ok = add(rep, "stack.params", r->params[i].p.name, "unsharded", lb,
                 true, &r->params[i].cmp);
    for (int l = 0; ok && l < r->nlayers; l++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d", r->layers[l].layer);
        ok = add(rep, "stack.layers", name, a, b, false, &r->layers[l].cmp);
    }
    if (ok && r->have_forward)
        ok = add(rep, "stack.final", "logits", a, b, false, &r->logits) &&
             add(rep, "stack.final", "logp", a, b, false, &r->logp);
    /* An exceeded policy or repeated forwards that differ fail the stack:
     * they fail its final result here too, so every report gives the
     * stack's verdict (parameters that differ already count). */
    if (ok && rep->n && (!r->policy_pass || r->repeat_differ)) {
        char msg[1024];
        if (!r->policy_pass)
            snprintf(msg, sizeof msg, "policy exceeded: %s", r->policy_msg);
        else
            snprintf(msg, sizeof msg, "%d forwards of A: %zu tensors differ from the first "
                     "forward (first in forward %d)", r->repeat, r->repeat_differ,
                     r->repeat_first_bad);
        bp_result_t *last = &rep->r[rep->n - 1];
        free(last->note);
        last->note = strdup(msg);
        last->counts = true;
        last->cmp.pass = false;
        ok = last->note != NULL;
    }
    for (int i = 0; ok && i < r->nnotes; i++)
        ok = bp_report_note(rep, "%s", r->notes[i]);
    return ok;
}

/* The common report of the stack's comparisons, with this host's
 * environment (the GPU's too when the forward ran there). */
static bool build_report(bp_report_t *rep, const bp_stack_result_t *r, int argc,
                         char **argv)
{
    bp_report_init(rep, argc, argv);
    rep->env = strcmp(r->opts.device, "cuda") == 0 ? bp_envinfo_collect()
                                                   : bp_envinfo_host();
    return fill_report(rep, r);
}

static int write_json(const char *path, const bp_stack_result_t *r, int argc,
                      char **argv)
{
    bp_report_t rep;
    json_t *doc = NULL, *st = NULL;
    int rc = BP_EXIT_TROUBLE;
    if (build_report(&rep, r, argc, argv) && (doc = bp_rep_json_build(&rep)) &&
        (st = bp_rep_stack_json(r))) {
        json_object_set_new(doc, "stack", st);
        int flags = JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17);
        bp_out_t o;
        if (!bp_out_open(&o, path)) {
            bp_esc_printf(stderr, "bitprobe stack: cannot write '%s': %s\n", path,
                          strerror(errno));
        } else {
            FILE *f = o.f;
            rc = json_dumpf(doc, f, flags) == 0 && fputc('\n', f) != EOF
                     ? BP_EXIT_OK
                     : BP_EXIT_TROUBLE;
            if (!bp_out_close(&o, rc == BP_EXIT_OK))
                rc = BP_EXIT_TROUBLE;
            if (rc)
                bp_esc_printf(stderr, "bitprobe stack: cannot write '%s'\n", path);
        }
    } else {
        fprintf(stderr, "bitprobe stack: out of memory building the JSON "
                        "report\n");
    }
    json_decref(doc);
    bp_report_free(&rep);
    return rc;
}

/* The stack result the Markdown writer appends (bp_rep_write's writers
 * take the report alone). */
static const bp_stack_result_t *md_stack;

/* The common Markdown report (verdict, command, environment, every
 * comparison), then the stack's own report as text. */
static int stack_markdown(FILE *f, const bp_report_t *rep)
{
    int rc = bp_rep_markdown(f, rep);
    if (rc)
        return rc;
    fputs("## Layer stack\n\n```text\n", f);
    rc = bp_rep_stack_text(f, md_stack, false);
    fputs("```\n", f);
    return rc || ferror(f) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
}

static int write_markdown(const char *path, const bp_stack_result_t *r, int argc,
                          char **argv)
{
    bp_report_t rep;
    int rc = BP_EXIT_TROUBLE;
    if (build_report(&rep, r, argc, argv)) {
        md_stack = r;
        rc = bp_rep_write(path, stack_markdown, &rep) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
    } else {
        fprintf(stderr, "bitprobe stack: out of memory building the Markdown report\n");
    }
    bp_report_free(&rep);
    return rc;
}

static int write_svg(const char *path, const bp_stack_result_t *r)
{
    bp_out_t o;
    if (!bp_out_open(&o, path)) {
        bp_esc_printf(stderr, "bitprobe stack: cannot write '%s': %s\n", path, strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    int rc = bp_rep_svg(o.f, r);
    if (!bp_out_close(&o, rc == 0)) {
        bp_esc_printf(stderr, "bitprobe stack: cannot write '%s'\n", path);
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

enum { O_HIDDEN, O_HEADS, O_LAYERS, O_INTER, O_VOCAB, O_MAXPOS, O_POS, O_INIT, O_DEVICE,
       O_SIDES, O_GEMM, O_POLICY };

typedef struct {
    bp_stack_opts_t *o;
    const char *preset, *plot, *json, *markdown, *ufrom, *sfrom;
    int64_t field[6];
    bool has_field[6], has_pos, has_init;
} cli_t;

static int parse_size(const char *opt, const char *v, int64_t *out)
{
    if (!parse_i64(v, 1, INT64_MAX, out))
        return bp_cli_usage_error("stack", "--%s needs a positive integer, "
                                  "not '%s'", opt, v);
    return BP_EXIT_OK;
}

int cmd_stack_gemm(const char *cmd, const char *arg, bp_stack_gemm_t *out)
{
    if (strcmp(arg, "pedantic") == 0)
        *out = BP_STACK_GEMM_PEDANTIC;
    else if (strcmp(arg, "default") == 0)
        *out = BP_STACK_GEMM_DEFAULT;
    else
        return bp_cli_usage_error(cmd, "--gemm takes pedantic or default, not '%s'", arg);
    return 0;
}

/* The options whose values are more than a number, a name or a path. */
static int stack_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    cli_t *cl = ctx;
    bp_stack_opts_t *o = cl->o;
    bp_error_t err = {0};
    int rc;
    switch (e->id) {
    case O_HIDDEN:
    case O_HEADS:
    case O_LAYERS:
    case O_INTER:
    case O_VOCAB:
    case O_MAXPOS:
        if ((rc = parse_size(e->name, arg, &cl->field[e->id])))
            return rc;
        cl->has_field[e->id] = true;
        return 0;
    case O_POS:
        if (!parse_positions(arg, &o->pos_begin, &o->pos_end))
            return bp_cli_usage_error(cmd, "--positions takes A:B "
                                      "(two integers), not '%s'", arg);
        cl->has_pos = true;
        return 0;
    case O_INIT:
        cl->has_init = true;
        return bp_opt_dtype(cmd, e->name, arg, &o->init_dtype);
    case O_DEVICE:
        if (strcmp(arg, "cpu") && strcmp(arg, "cuda"))
            return bp_cli_usage_error(cmd, "--device takes cpu or "
                                      "cuda, not '%s'", arg);
        o->device = arg;
        return 0;
    case O_SIDES: {
        char buf[64], *comma;
        snprintf(buf, sizeof buf, "%s", arg);
        if (!(comma = strchr(buf, ',')) ||
            (*comma = '\0', !parse_init(buf, &o->side[0])) ||
            !parse_init(comma + 1, &o->side[1]))
            return bp_cli_usage_error(cmd, "--sides takes A,B with "
                                      "each unsharded or sharded, not "
                                      "'%s'", arg);
        return 0;
    }
    case O_GEMM: return cmd_stack_gemm(cmd, arg, &o->gemm);
    case O_POLICY:
        if (bp_stack_policy_parse(arg, &o->policy, &err))
            return bp_cli_usage_error(cmd, "--policy: %s", err.msg);
        return 0;
    }
    return BP_EXIT_TROUBLE;
}

static int parse_args(int argc, char **argv, bp_stack_opts_t *o, cli_t *cl)
{
#define S_(name, id, h) BP_OPT_CALL_(name, 0, true, stack_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_STRING_("preset", 0, &cl->preset,
           "  --preset P          tiny (default: hidden 256, 4 heads, 8 layers, 512 positions)\n"
           "                      or llama2-7b (hidden 4096, 32 heads, 32 layers, 4096 positions;\n"
           "                      its forward runs on a GPU only)\n"),
        S_("hidden", O_HIDDEN,
           "  --hidden N, --heads N, --layers N, --intermediate N, --vocab N, --max-positions N\n"
           "                      override the preset's fields\n"),
        S_("heads", O_HEADS, NULL),
        S_("layers", O_LAYERS, NULL),
        S_("intermediate", O_INTER, NULL),
        S_("vocab", O_VOCAB, NULL),
        S_("max-positions", O_MAXPOS, NULL),
        S_("positions", O_POS,
           "  --positions A:B     run the tokens at positions A..B-1 (default: all)\n"),
        BP_OPT_DTYPE_("dtype", &o->dtype,
           "  --dtype D           model dtype: fp32, bf16 (default), fp16\n"),
        S_("init-dtype", O_INIT,
           "  --init-dtype D      dtype the sharded init casts the positions to (default: --dtype)\n"),
        S_("device", O_DEVICE,
           "  --device D          cpu (default) or cuda: where the forward and the sharded init run\n"),
        BP_OPT_GPU_(&o->gpu,
           "  --gpu N             CUDA device index, 0 to 1023 (default 0)\n"),
        S_("gemm", O_GEMM,
           "  --gemm G            cuda matmuls: pedantic (default: bitprobe's pinned GEMM) or\n"
           "                      default (PyTorch's calls and settings)\n"),
        BP_OPT_INT_("shards", &o->shards, 1, 65536,
           "  --shards W          ranks of the sharded parameter generation (default 8)\n"),
        BP_OPT_TEXT_("  --ranks W           the sharded init over W real ranks, one process and GPU each,\n"
                     "                      gathered with NCCL and compared bit for bit with the unsharded\n"
                     "                      init and the one-device emulation, then a tensor-parallel\n"
                     "                      all-reduce per collective configuration (--algos: default,\n"
                     "                      Ring, Tree; each ALGO[/PROTO][/Nch][/bucket=SIZE], e.g.\n"
                     "                      Tree/LL128 or Ring/Simple/4ch/bucket=64K) against the\n"
                     "                      unsharded matmul and the oracle; bitprobe starts the ranks,\n"
                     "                      or runs as one under torchrun, mpirun or srun.  With it:\n"
                     "                      --preset, --layers, --dtype, --seed, --gemm, --json, --quiet,\n"
                     "                      --tp-rows N (16), --algos LIST, --no-params, --no-tp,\n"
                     "                      --no-oracle, --threads N (as 'bitprobe stack ranks W')\n"),
        BP_OPT_SEED_(&o->seed,
           "  --seed S            seed of the weights and token ids, decimal (default 0)\n"),
        BP_OPT_STRING_("unsharded-from", 0, &cl->ufrom,
           "  --unsharded-from F  the unsharded side's cos, sin, inv_freq from a safetensors file\n"),
        BP_OPT_STRING_("sharded-from", 0, &cl->sfrom,
           "  --sharded-from F    the sharded side's buffers from a safetensors file\n"),
        S_("sides", O_SIDES,
           "  --sides A,B         inits of the reference and the compared side\n"
           "                      (default unsharded,sharded)\n"),
        BP_OPT_FLAG_("buffers-only", 0, &o->buffers_only,
           "  --buffers-only      compare the RoPE buffers only (no parameters, no forward)\n"),
        BP_OPT_FLAG_("forward-only", 0, &o->forward_only,
           "  --forward-only      one init, no comparison: time the forward\n"),
        BP_OPT_INT_("repeat", &o->repeat, 1, 1000,
           "  --repeat N          run the reference side's forward N times; any bit that\n"
           "                      changes between runs is a failure\n"),
        S_("policy", O_POLICY,
           "  --policy P          limits on the final outputs: logprob_abs=X, logit_abs=X, kl=X,\n"
           "                      top1=F (least agreement), comma-separated; exceeded: exit 1\n"),
        BP_OPT_PATH_("plot", 0, &cl->plot,
           "  --plot FILE.svg     drift against depth, one line per metric, log scale\n"),
        BP_OPT_PATH_("json", 0, &cl->json,
           "  --json FILE         the full report as JSON ('-': stdout instead of the text)\n"),
        BP_OPT_PATH_("markdown", 0, &cl->markdown,
           "  --markdown FILE     a report for a bug ticket: verdict, command, environment,\n"
           "                      every comparison, then the text report ('-': stdout)\n"),
        BP_OPT_QUIET_(
           "  -q, --quiet         no progress lines\n"),
        BP_OPT_TEXT_("  Exit status: 0 ok, 1 sharded parameters or repeated forwards differ or the\n"
                     "  policy is exceeded, 2 bad options, files or environment.\n"),
        BP_OPT_END_};
#undef S_
    bp_error_t err = {0};
    int rc, pos;
    cl->o = o;
    if ((rc = bp_opt_parse("stack", opts, cl, argc, argv, &pos)))
        return rc;
    if (pos < argc)
        return bp_cli_usage_error("stack", "unexpected argument '%s'",
                                  argv[pos]);
    if (cl->preset && bp_stack_preset(cl->preset, &o->cfg, &err))
        return bp_cli_usage_error("stack", "--preset: %s", err.msg);
    int64_t *dst[6] = {&o->cfg.hidden, &o->cfg.heads, &o->cfg.layers,
                       &o->cfg.intermediate, &o->cfg.vocab,
                       &o->cfg.max_positions};
    for (int k = 0; k < 6; k++)
        if (cl->has_field[k])
            *dst[k] = cl->field[k];
    if (!cl->has_pos) {
        o->pos_begin = 0;
        o->pos_end = o->cfg.max_positions;
    }
    if (!cl->has_init)
        o->init_dtype = o->dtype;
    for (int s = 0; s < 2; s++)
        o->from[s] = o->side[s] == BP_STACK_UNSHARDED ? cl->ufrom : cl->sfrom;
    if (cl->json && cl->markdown && strcmp(cl->json, "-") == 0 &&
        strcmp(cl->markdown, "-") == 0)
        return bp_cli_usage_error("stack", "--json and --markdown cannot both go to "
                                  "standard output");
    if (cl->plot && (o->buffers_only || o->forward_only))
        return bp_cli_usage_error("stack", "--plot needs the per-layer "
                                  "comparison (not with --buffers-only or "
                                  "--forward-only)");
    return BP_EXIT_OK;
}

int cmd_stack(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0 && !bp_cli_wants_help(argc, argv);
         i++)
        if (strcmp(argv[i], "--ranks") == 0 || strncmp(argv[i], "--ranks=", 8) == 0)
            return cmd_stack_ranks(argc, argv);
    bp_stack_opts_t o;
    bp_stack_opts_init(&o);
    o.progress = progress;
    cli_t cl;
    memset(&cl, 0, sizeof cl);
    int rc = parse_args(argc, argv, &o, &cl);
    if (rc)
        return rc < 0 ? BP_EXIT_OK : rc; /* -1: --help */
    bp_stack_result_t r;
    bp_error_t err = {0};
    if (bp_stack_run(&o, &r, &err))
        return bp_cli_fail(&err);
    bool taken = (cl.json && strcmp(cl.json, "-") == 0) ||
                 (cl.markdown && strcmp(cl.markdown, "-") == 0);
    if (!taken)
        rc = bp_rep_stack_text(stdout, &r, bp_cli_color());
    if (!rc && cl.json)
        rc = write_json(cl.json, &r, argc, argv);
    if (!rc && cl.markdown)
        rc = write_markdown(cl.markdown, &r, argc, argv);
    if (!rc && cl.plot)
        rc = write_svg(cl.plot, &r);
    if (!rc)
        rc = bp_stack_failed(&r) ? BP_EXIT_DRIFT : BP_EXIT_OK;
    bp_stack_result_free(&r);
    return rc;
}
