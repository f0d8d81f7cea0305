/* bitprobe init-audit MODEL: build a model the ways users build it (CPU,
 * bf16 default dtype, CUDA, meta then to_empty, zero.Init, FSDP2 on meta),
 * each in a fresh process, and compare every buffer with the CPU fp32
 * build: the op that introduced each difference, the oracle's verdict on
 * RoPE buffers, uninitialised memory, the effect on a forward.
 *
 * Building a model is PyTorch's work, so the audit is Python
 * (python/bitprobe_init, run as `python3 -m bitprobe_torch init-audit`);
 * it calls this program back for what bitprobe does (diff, explain, the
 * oracle).  This command checks its options as every command does, finds
 * a Python ($PYTHON3, else python3) and the bitprobe_torch package
 * ($BITPROBE_PYTHONPATH, else python/ beside the source tree's src/, else
 * the installed copy), and runs the audit in its place with BITPROBE naming
 * this program: the exit status is the audit's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"

const char cmd_init_audit_usage[] =
    "bitprobe init-audit MODEL [--ways LIST] [--dtype D] [--params] [--effect] [--buffers-only] [-o DIR] [--json FILE] [--markdown FILE] [--first K] [--reinit MODULE:CALLABLE] [--positions N] [--tokens N] [--quiet]";

/* The ways python/bitprobe_init/ways.py builds (tests/cli/init_audit.sh
 * checks the two lists agree). */
static const char *const ways[] = {"cpu", "cpu-bf16", "cuda", "meta", "zero-init",
                                   "fsdp2-meta"};

static bool check_ways(const char *list, char *bad, size_t n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *items[32];
    int k = bp_cli_split(buf, items, 32);
    if (k == 0) {
        snprintf(bad, n, "%s", list);
        return false;
    }
    for (int i = 0; i < k; i++) {
        bool known = false;
        for (size_t j = 0; j < sizeof ways / sizeof *ways; j++)
            known = known || strcmp(items[i], ways[j]) == 0;
        if (!known) {
            snprintf(bad, n, "%s", items[i]);
            return false;
        }
    }
    return true;
}

/* Where bitprobe_torch.py is: $BITPROBE_PYTHONPATH when set (and only
 * there), else python/ next to the src/ this program was built in, else
 * the installed copy. */
static bool find_package(const char *self, char *out, size_t n, char *tried, size_t tn)
{
    char cand[3][PATH_MAX];
    int k = 0;
    const char *e = getenv("BITPROBE_PYTHONPATH");
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", self);
    char *slash = strrchr(d, '/');
    if (e && *e) {
        snprintf(cand[k++], PATH_MAX, "%s", e);
    } else {
        if (slash) {
            *slash = '\0';
            snprintf(cand[k++], PATH_MAX, "%.*s/../python", PATH_MAX - 16, d);
        }
        snprintf(cand[k++], PATH_MAX, "%s/python", BP_DATADIR);
    }
    size_t used = 0;
    tried[0] = '\0';
    for (int i = 0; i < k; i++) {
        char f[PATH_MAX + 32];
        snprintf(f, sizeof f, "%.*s/bitprobe_torch.py", PATH_MAX - 1, cand[i]);
        if (access(f, R_OK) == 0) {
            snprintf(out, n, "%.*s", PATH_MAX - 1, cand[i]);
            return true;
        }
        used += (size_t)snprintf(tried + used, used < tn ? tn - used : 0, "%s%.*s",
                                 i ? ", " : "", PATH_MAX - 1, cand[i]);
    }
    return false;
}

enum { O_WAYS, O_DTYPE, O_FIRST, O_POSITIONS, O_TOKENS, O_REINIT, O_SWITCH };

/* The options are checked here and passed on as given to bitprobe_torch. */
static int ia_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    char bad[256];
    size_t count;
    bp_dtype_t dt;
    switch (e->id) {
    case O_WAYS:
        if (!check_ways(arg, bad, sizeof bad))
            return bp_cli_usage_error(cmd, "--ways: unknown way '%s' (cpu, "
                                      "cpu-bf16, cuda, meta, zero-init, fsdp2-meta)", bad);
        return 0;
    case O_DTYPE: return bp_opt_dtype(cmd, e->name, arg, &dt);
    case O_FIRST:
    case O_POSITIONS:
        if (!bp_cli_count(arg, 100000000, &count))
            return bp_cli_usage_error(cmd, "--%s needs a count, not '%s'", e->name, arg);
        return 0;
    case O_TOKENS:
        if (!bp_cli_count(arg, 1000000, &count) || count == 0)
            return bp_cli_usage_error(cmd, "--tokens needs a positive count, not "
                                      "'%s'", arg);
        return 0;
    case O_REINIT:
        if (!strchr(arg, ':'))
            return bp_cli_usage_error(cmd, "--reinit takes MODULE:CALLABLE, not "
                                      "'%s'", arg);
        return 0;
    case O_SWITCH: return 0;
    }
    return BP_EXIT_TROUBLE;
}

int cmd_init_audit(int argc, char **argv)
{
    const char *out = NULL, *json = NULL, *md = NULL;
#define A_(name, arg, id, h) BP_OPT_CALL_(name, 0, arg, ia_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("  MODEL             a Hugging Face config.json, or a directory holding one (built\n"
                     "                    with transformers' AutoModel*.from_config, no weights), or\n"
                     "                    MODULE:CALLABLE or FILE.py:CALLABLE returning an nn.Module\n"),
        A_("ways", true, O_WAYS,
           "  --ways LIST       comma-separated, each built in a fresh process (default: every\n"
           "                    one that can run here; the others are named, with why):\n"
           "                    cpu         on the CPU in fp32: the reference, always built\n"
           "                    cpu-bf16    the model dtype as default dtype (torch_dtype=)\n"
           "                    cuda        constructed on the GPU (default device cuda)\n"
           "                    meta        on meta, to_empty(), then the model's\n"
           "                                re-initialisation (--reinit, else init_weights(),\n"
           "                                else every module's reset_parameters())\n"
           "                    zero-init   inside DeepSpeed's zero.Init; without DeepSpeed its\n"
           "                                constructor wrappers reproduced exactly (float\n"
           "                                results cast to the model dtype at once)\n"
           "                    fsdp2-meta  on meta, fully_shard (FSDP2), to_empty(),\n"
           "                                re-initialisation\n"),
        A_("dtype", true, O_DTYPE,
           "  --dtype D         bf16 (default), fp16 or fp32: the model dtype (cpu-bf16's default\n"
           "                    dtype, zero.Init's dtype); floating buffers are also compared in it\n"),
        A_("params", false, O_SWITCH,
           "  --params          compare the parameters too (default: every buffer, persistent\n"
           "                    or not, and the cos/sin a rotary module's forward gives)\n"),
        A_("effect", false, O_SWITCH,
           "  --effect          a forward on fixed token ids with each way's buffers (random\n"
           "                    weights): largest log-probability difference, top-1 changes per\n"
           "                    position\n"),
        A_("buffers-only", false, O_SWITCH,
           "  --buffers-only    every way builds its parameters on meta (the default when they\n"
           "                    do not fit this host; the report says so)\n"),
        BP_OPT_PATH_("output", 'o', &out,
           "  -o, --output DIR  keep a bundle per way (bitprobe diff reads it), its init\n"
           "                    ledger, the comparisons, the oracle's probes and explain's\n"
           "                    (default: a temporary directory, removed)\n"),
        BP_OPT_PATH_("json", 0, &json,
           "  --json FILE       the report as JSON ('-': stdout instead of the text)\n"),
        BP_OPT_PATH_("markdown", 0, &md,
           "  --markdown FILE   a bug ticket in Markdown that says which way to use\n"),
        A_("first", true, O_FIRST,
           "  --first K         mismatches shown per buffer group (default 5)\n"),
        A_("reinit", true, O_REINIT,
           "  --reinit MODULE:CALLABLE  the re-initialisation after to_empty(), called with\n"
           "                    the model\n"),
        A_("positions", true, O_POSITIONS,
           "  --positions N     positions of a rotary forward's cos/sin (default:\n"
           "                    max_position_embeddings, at most 8192; 0: none)\n"),
        A_("tokens", true, O_TOKENS,
           "  --tokens N        --effect's token ids (default 512, at most the cached positions)\n"),
        BP_OPT_QUIET_(
           "  -q, --quiet       the verdict and the failures only\n"),
        BP_OPT_TEXT_("  Environment: PYTHON3 (the Python with PyTorch, default python3),\n"
                     "  BITPROBE_PYTHONPATH (where bitprobe_torch.py is).\n"
                     "  Exit status: 0 every way's buffers are bit-identical to cpu's, 1 a buffer differs\n"
                     "  (or is uninitialised, or is in one build only), 2 trouble (a bad MODEL, no\n"
                     "  PyTorch, a way that cannot run here or could not be built).\n"),
        BP_OPT_END_};
    int pos, prc;
    if ((prc = bp_opt_parse("init-audit", opts, NULL, argc, argv, &pos)))
        return prc < 0 ? BP_EXIT_OK : prc;
    if (argc - pos != 1)
        return bp_cli_usage_error("init-audit", "needs one MODEL, got %d", argc - pos);
    int rc;
    if ((rc = bp_cli_check_output("init-audit", "--json", json, false)) >= 0 ||
        (rc = bp_cli_check_output("init-audit", "--markdown", md, false)) >= 0 ||
        (rc = bp_cli_check_output("init-audit", "-o", out, true)) >= 0)
        return rc;

    char self[PATH_MAX], pkg[PATH_MAX], tried[3 * PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "bitprobe init-audit: cannot find this program's path "
                        "(/proc/self/exe): %s\n", strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    self[len] = '\0';
    if (!find_package(self, pkg, sizeof pkg, tried, sizeof tried)) {
        fprintf(stderr, "bitprobe init-audit: cannot find bitprobe_torch.py (looked in %s); "
                        "set BITPROBE_PYTHONPATH to its directory\n", tried);
        return BP_EXIT_TROUBLE;
    }
    const char *old = getenv("PYTHONPATH");
    char *path = malloc(strlen(pkg) + (old ? strlen(old) : 0) + 2);
    if (!path) {
        fprintf(stderr, "bitprobe init-audit: out of memory\n");
        return BP_EXIT_TROUBLE;
    }
    sprintf(path, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    if (setenv("PYTHONPATH", path, 1) != 0 || setenv("BITPROBE", self, 1) != 0) {
        fprintf(stderr, "bitprobe init-audit: cannot set the environment: %s\n",
                strerror(errno));
        free(path);
        return BP_EXIT_TROUBLE;
    }
    free(path);
    const char *py = getenv("PYTHON3");
    if (!py || !*py)
        py = "python3";
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) {
        fprintf(stderr, "bitprobe init-audit: out of memory\n");
        return BP_EXIT_TROUBLE;
    }
    args[0] = (char *)py;
    args[1] = "-m";
    args[2] = "bitprobe_torch";
    args[3] = "init-audit";
    for (int i = 1; i < argc; i++)
        args[3 + i] = argv[i];
    fflush(NULL);
    execvp(py, args);
    fprintf(stderr, "bitprobe init-audit: cannot run '%s': %s (set PYTHON3 to a Python with "
                    "PyTorch)\n", py, strerror(errno));
    free(args);
    return BP_EXIT_TROUBLE;
}
