/* bitprobe: the command table and dispatch.  Nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "config.h"

static int cmd_help(int argc, char **argv);

const bp_cmd_t bp_commands[] = {
    {"list", cmd_list, "List the probes found and the backends with their availability",
     "bitprobe list [--probes DIR] [--ops] [--json]\n"
     "  --probes DIR   read probes from DIR (default: ./probes, then the installed set)\n"
     "  --ops          list the ops a probe can use instead: keys, kind, PyTorch meaning\n"
     "  --json         machine-readable listing (with --ops: every fact about each op)"},
    {"run", cmd_run, "Run probes on backends, compare with goldens and across backends",
     "bitprobe run [PROBE...] [--device LIST] [--dtype LIST] [--probes DIR] [--golden DIR] [--save DIR] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet]\n"
     "  --device LIST     comma-separated backends: cpu, oracle, cuda, auto (default: auto,\n"
     "                    every backend available here; a missing GPU is skipped and said)\n"
     "  --dtype LIST      comma-separated dtypes among fp32, bf16, fp16 (default: the probe's)\n"
     "  --probes DIR      read probes from DIR (default: ./probes, then the installed set)\n"
     "  --golden DIR      goldens under DIR (default: ./golden, then the installed set)\n"
     "  --no-golden       compare across backends only\n"
     "  --missing=MODE    a missing golden is an error (fail, default) or a note (skip)\n"
     "  --agree           differences between backends beyond policy count as drift\n"
     "  --save DIR        write the run as a bundle (containers + manifest.json) for diff\n"
     "  --intermediates   with --save, keep every buffer, not only the outputs\n"
     "  --json FILE       the full report as JSON ('-': stdout instead of the text)\n"
     "  --junit FILE      JUnit XML, one testcase per output, dtype and backend pair\n"
     "  --markdown FILE   a self-contained bug-ticket report in Markdown\n"
     "  --github          GitHub annotations and step summary (default when\n"
     "                    GITHUB_ACTIONS=true)\n"
     "  --cpu-math M      sleef-u10 (default), sleef-u35 or libm for CPU transcendentals\n"
     "  --gpu N           CUDA device index (default 0)\n"
     "  --threads N       oracle worker threads (default: one per core)\n"
     "  --repeat N        run each probe N times per backend; any bit that changes\n"
     "                    between runs is drift (run-to-run nondeterminism)\n"
     "  --first K         show the first K mismatches per comparison (default 10)\n"
     "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"
     "  --timing          where the time went (per backend, probe and dtype) on stderr\n"
     "                    and under \"timing\" in the JSON report\n"
     "  --quiet           print only differences and the summary"},
    {"bless", cmd_bless, "Run probes and replace their goldens atomically",
     "bitprobe bless [PROBE...] [--device LIST] [--dtype LIST] [--probes DIR] [--golden DIR] [--dry-run]\n"
     "  --device LIST     backends whose goldens to write (default: auto)\n"
     "  --dtype LIST      re-run only these dtypes; other blessed dtypes are kept\n"
     "  --dry-run         print what would change, write nothing\n"
     "  Prints per tensor: new, unchanged, or changed: N of M elements."},
    {"diff", cmd_diff, "Compare two saved runs, safetensors files or .npy files tensor by tensor",
     "bitprobe diff A B [--map A=B] [--policy P] [--as bf16] [--first K] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet]\n"
     "  A, B              bundle directories (run --save), .safetensors[.gz] or .npy files\n"
     "  --map A=B         tensor A of the first side is tensor B of the second\n"
     "  --policy P        exact (default), ulp=N, abs=X, rel=X, fraction=F, comma-separated\n"
     "  --as bf16         read 16-bit integer .npy arrays as bf16\n"
     "  --first K         show the first K mismatches per tensor (default 10)\n"
     "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"
     "  --json FILE       the full report as JSON ('-': stdout instead of the text)\n"
     "  --junit FILE      JUnit XML, one testcase per tensor\n"
     "  --markdown FILE   a self-contained bug-ticket report in Markdown\n"
     "  --github          GitHub annotations and step summary (default when\n"
     "                    GITHUB_ACTIONS=true)\n"
     "  --quiet           print only differences and the summary\n"
     "  --consensus RUN...  two or more saved runs (hosts, GPUs): groups of\n"
     "                    bit-identical results per tensor, the majority, the odd ones\n"
     "                    out and what they ran on (with --json, --first, --quiet)\n"
     "  Exit status: 0 identical or within policy (--consensus: every run agrees),\n"
     "  1 different (an outlier, or no majority), 2 trouble."},
    {"report", cmd_report, "Render a saved JSON report again: text, JSON, JUnit, Markdown, GitHub",
     "bitprobe report FILE [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet] [--first K]\n"
     "  FILE              a report written by --json (run, diff, explain, stack; '-':\n"
     "                    standard input) or a bundle directory (run --save)\n"
     "  --json FILE       the report as JSON again ('-': stdout instead of the text)\n"
     "  --junit FILE      JUnit XML, one testcase per comparison\n"
     "  --markdown FILE   a self-contained bug-ticket report in Markdown\n"
     "  --github          GitHub annotations and step summary (default when\n"
     "                    GITHUB_ACTIONS=true)\n"
     "  --first K         show at most K mismatches per comparison (default: all the\n"
     "                    report holds, as its command showed them)\n"
     "  --quiet           print only differences and the summary\n"
     "  Exit status: 0 no drift beyond policy in the report, 1 drift (as the command\n"
     "  that wrote it), 2 bad input."},
    {"explain", cmd_explain, "Find the op that introduced each difference between two sides, and who is right",
     "bitprobe explain PROBE --a B1 --b B2 [--dtype D] [--probes DIR] [--json FILE] [--first K]\n"
     "  --a B1, --b B2    backends (cpu, oracle, cuda) or saved runs (run --save DIR\n"
     "                    --intermediates); each op runs alone on B2 with B1's buffers\n"
     "                    as inputs (first-divergence attribution when B2 is a saved run)\n"
     "  --a-key KEY       the backend key to read from saved run B1 (default: its only one)\n"
     "  --b-key KEY       the same for B2\n"
     "  --dtype D         fp32, bf16 or fp16 (default: fp32 where the probe runs in it)\n"
     "  --probes DIR      read probes from DIR (default: ./probes, then the installed set)\n"
     "  --first K         differing elements detailed per output (default 10)\n"
     "  --json FILE       the report with its \"explain\" section as JSON ('-': stdout)\n"
     "  --cpu-math M      sleef-u10 (default), sleef-u35 or libm for CPU transcendentals\n"
     "  --gpu N           CUDA device index (default 0)\n"
     "  --threads N       oracle worker threads (default: one per core)\n"
     "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"
     "  Exit status: 0 the outputs agree end to end, 1 some differ, 2 trouble."},
    {"fingerprint", cmd_fingerprint, "Show how each backend really computes: division, FMA, FTZ, TF32, NaNs, accuracy",
     "bitprobe fingerprint [--device D] [--json]\n"
     "  --device LIST     comma-separated backends: cpu, oracle, cuda, auto (default: auto)\n"
     "  --json            the tables as JSON (the \"behaviour\" object bless and run --save\n"
     "                    store with each backend's fingerprint)\n"
     "  --cpu-math M      sleef-u10 (default), sleef-u35 or libm for CPU transcendentals\n"
     "  --gpu N           CUDA device index (default 0)\n"
     "  --threads N       oracle worker threads (default: one per core)"},
    {"stack", cmd_stack, "Run a Llama-style layer stack with two RoPE inits and report the drift per layer",
     "bitprobe stack [--preset P] [--device cpu|cuda] [--dtype D] [--init-dtype D] [--positions A:B] [--layers N] [--plot FILE.svg] [--json FILE] [--markdown FILE]\n"
     "  --preset P          tiny (default: hidden 256, 4 heads, 8 layers, 512 positions)\n"
     "                      or llama2-7b (hidden 4096, 32 heads, 32 layers, 4096 positions;\n"
     "                      its forward runs on a GPU only)\n"
     "  --hidden N, --heads N, --layers N, --intermediate N, --vocab N, --max-positions N\n"
     "                      override the preset's fields\n"
     "  --positions A:B     run the tokens at positions A..B-1 (default: all)\n"
     "  --dtype D           model dtype: fp32, bf16 (default), fp16\n"
     "  --init-dtype D      dtype the sharded init casts the positions to (default: --dtype)\n"
     "  --device D          cpu (default) or cuda: where the forward and the sharded init run\n"
     "  --gpu N             CUDA device index (default 0)\n"
     "  --gemm G            cuda matmuls: pedantic (default) or default (tensor cores)\n"
     "  --shards W          ranks of the sharded parameter generation (default 8)\n"
     "  --seed S            seed of the weights and token ids (default 0)\n"
     "  --unsharded-from F  the unsharded side's cos, sin, inv_freq from a safetensors file\n"
     "  --sharded-from F    the sharded side's buffers from a safetensors file\n"
     "  --sides A,B         inits of the reference and the compared side\n"
     "                      (default unsharded,sharded)\n"
     "  --buffers-only      compare the RoPE buffers only (no parameters, no forward)\n"
     "  --forward-only      one init, no comparison: time the forward\n"
     "  --repeat N          run the reference side's forward N times; any bit that\n"
     "                      changes between runs is a failure\n"
     "  --policy P          limits on the final outputs: logprob_abs=X, logit_abs=X, kl=X,\n"
     "                      top1=F (least agreement), comma-separated; exceeded: exit 1\n"
     "  --plot FILE.svg     drift against depth, one line per metric, log scale\n"
     "  --json FILE         the full report as JSON ('-': stdout instead of the text)\n"
     "  --markdown FILE     a report for a bug ticket: verdict, command, environment,\n"
     "                      every comparison, then the text report ('-': stdout)\n"
     "  --quiet             no progress lines\n"
     "  Exit status: 0 ok, 1 sharded parameters or repeated forwards differ or the\n"
     "  policy is exceeded, 2 bad options, files or environment."},
    {"screen", cmd_screen, "Known-answer screen of every GPU and every SM: wrong bits name GPU, SM and test",
     "bitprobe screen [--gpu all|LIST] [--depth N] [--test LIST] [--list] [--golden DIR] [--no-golden] [--bless] [--json FILE] [--verbose] [--quiet]\n"
     "  --gpu SEL         all (default), one index or a comma-separated list (0,2)\n"
     "  --depth N         rounds (default 1, a few seconds per GPU); each round draws\n"
     "                    new inputs for the tests whose answers the host computes\n"
     "  --test LIST       comma-separated tests (default: all)\n"
     "  --list            the tests and where their expected bits come from\n"
     "  --golden DIR      goldens under DIR (default: ./golden, then the installed set)\n"
     "  --no-golden       the SMs vote on the math-library sweeps even where a golden exists\n"
     "  --bless           write the math-library sweeps' bits as this GPU kind's golden\n"
     "                    (only when every test passed and same-kind GPUs agree)\n"
     "  --json FILE       the report as JSON for a fleet's collector ('-': stdout\n"
     "                    instead of the text)\n"
     "  --verbose, -v     a line per GPU and test\n"
     "  --quiet           only the verdict, failing GPUs and the faults\n"
     "  BP_SCREEN_INJECT=GPU:SM:TEST[,...] flips bit 0 of that SM's first result\n"
     "  inside the kernel (proves that a wrong bit is caught and named).\n"
     "  Exit status: 0 every bit right on every SM, 1 a wrong bit, 2 trouble (no GPU,\n"
     "  an SM that never ran, bad options)."},
    {"invariance", cmd_invariance, "Map where a row's bits change with the batch size it is computed in, and why",
     "bitprobe invariance [--shape KxN] [--dtype LIST] [--engine LIST] [--m LIST] [--place LIST] [--repeat N] [--processes P] [--policy P] [--svg FILE] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet]\n"
     "  --op OP           matmul (default): a [M, K] x b [K, N]\n"
     "  --shape KxN       the reduction dimension and the columns (default 4096x4096)\n"
     "  --dtype LIST      fp32, tf32, bf16, fp16, comma-separated (default bf16)\n"
     "  --engine LIST     cublas (torch.mm's cuBLAS call and settings), cublas-pedantic\n"
     "                    (bitprobe's CUDA matmul), cublaslt (PyTorch's cuBLASLt path),\n"
     "                    cpu (bitprobe's CPU matmul), auto (default: the CUDA engines)\n"
     "  --m LIST          batch sizes: N, A:B, A:B:STEP, A:B:xFACTOR, comma-separated\n"
     "                    (default 1:1024)\n"
     "  --place LIST      where the probed rows sit in the batch: first (default),\n"
     "                    middle, last, all\n"
     "  --rows R          probed rows (default 1); the reference is them alone\n"
     "  --seed S          seed of the inputs (counter generator; default 0)\n"
     "  --repeat N        compute each configuration N times in this process; any\n"
     "                    run with other bits breaks invariance\n"
     "  --processes P     run the whole sweep again in P fresh processes and compare\n"
     "  --policy P        exact (default), ulp=N, abs=X, rel=X, fraction=F\n"
     "  --no-oracle       skip the oracle's arbitration of the boundaries\n"
     "  --svg FILE        the map as an SVG strip chart\n"
     "  --save-inputs F   write the inputs (a with the probed rows first, b) as\n"
     "                    safetensors, for the same experiment in PyTorch\n"
     "  --gpu N           CUDA device index (default 0)\n"
     "  --threads N       oracle worker threads (default: one per core)\n"
     "  --json FILE       the report as JSON, with the whole map under \"invariance\"\n"
     "  --junit FILE      JUnit XML, one testcase per band and result group\n"
     "  --markdown FILE   a bug-ticket report in Markdown\n"
     "  --github          GitHub annotations and step summary\n"
     "  -v, --verbose     every interval, the first differing bits of each group\n"
     "  --quiet           the verdict and the failures only\n"
     "  Exit status: 0 invariant within the policy, 1 some configuration breaks\n"
     "  invariance or differs from run to run, 2 bad input or no engine here."},
    {"env", cmd_env, "Print the tool version, build options, library versions and GPUs",
     "bitprobe env [--json]\n"
     "  --json         print the environment as JSON"},
    {"help", cmd_help, "Show the commands, or one command's usage",
     "bitprobe help [COMMAND]"},
    {NULL, NULL, NULL, NULL},
};

const bp_cmd_t *bp_cmd_find(const char *name)
{
    for (const bp_cmd_t *c = bp_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static void overview(FILE *f)
{
    fprintf(f, "usage: bitprobe COMMAND [OPTIONS]\n\n"
               "Audit numerical determinism: run the same math on the CPU, a CUDA GPU\n"
               "and a correctly rounded oracle, and compare the results bit for bit.\n\n"
               "Commands:\n");
    for (const bp_cmd_t *c = bp_commands; c->name; c++)
        fprintf(f, "  %-12s %s\n", c->name, c->summary);
    fprintf(f, "\n'bitprobe help COMMAND' or 'bitprobe COMMAND --help' for details.\n"
               "Exit status: 0 no drift, 1 drift beyond policy, 2 bad input, usage or environment.\n");
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 2)
        return bp_cli_usage_error("help", "too many arguments");
    if (argc == 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
        if (!bp_cmd_find(argv[1])) {
            fprintf(stderr, "bitprobe help: unknown command '%s'\n", argv[1]);
            return BP_EXIT_TROUBLE;
        }
        return bp_cli_help(argv[1]);
    }
    if (argc == 2)
        return bp_cli_help("help");
    overview(stdout);
    return BP_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        overview(stderr);
        return BP_EXIT_TROUBLE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        overview(stdout);
        return BP_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("bitprobe %s\n", PACKAGE_VERSION);
        return BP_EXIT_OK;
    }
    const bp_cmd_t *c = bp_cmd_find(name);
    if (!c) {
        fprintf(stderr, "bitprobe: unknown command '%s'\n"
                        "Try 'bitprobe --help' for the list of commands.\n", name);
        return BP_EXIT_TROUBLE;
    }
    if (c->fn != cmd_help && bp_cli_wants_help(argc - 1, argv + 1))
        return bp_cli_help(c->name);
    return c->fn(argc - 1, argv + 1);
}
