/* bitprobe: the command table and dispatch.  Nothing else lives here. */
#define _GNU_SOURCE /* clone */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd.h"
#include "config.h"
#include "esc.h"
#include "interrupt.h"
#include "suggest.h"

static int cmd_help(int argc, char **argv);

const bp_cmd_t bp_commands[] = {
    {"list", cmd_list, "List the probes found and the backends with their availability",
     cmd_list_usage, true},
    {"run", cmd_run, "Run probes on backends, compare with goldens and across backends",
     cmd_run_usage, true},
    {"bless", cmd_bless, "Run probes and replace their goldens atomically",
     cmd_bless_usage, true},
    {"diff", cmd_diff, "Compare two saved runs, safetensors or .npy files tensor by tensor, or two op ledgers op by op",
     cmd_diff_usage, true},
    {"diff consensus", cmd_diff_consensus_sub, "Group many hosts' or GPUs' saved runs tensor by tensor: the majority and the odd ones out",
     cmd_diff_consensus_usage, true},
    {"report", cmd_report, "Render a saved JSON report again: text, JSON, JUnit, Markdown, GitHub",
     cmd_report_usage, true},
    {"explain", cmd_explain, "Find the op that introduced each difference between two sides, and who is right",
     cmd_explain_usage, true},
    {"fingerprint", cmd_fingerprint, "Show how each backend really computes: division, FMA, FTZ, TF32, NaNs, accuracy",
     cmd_fingerprint_usage, true},
    {"stack", cmd_stack, "Run a Llama-style layer stack with two RoPE inits and report the drift per layer",
     cmd_stack_usage, true},
    {"stack ranks", cmd_stack_ranks_sub, "The stack's sharded init and a tensor-parallel all-reduce over W ranks, one process and GPU each",
     cmd_stack_ranks_usage, true},
    {"screen", cmd_screen, "Known-answer screen of every GPU and every SM: wrong bits name GPU, SM and test",
     cmd_screen_usage, true},
    {"invariance", cmd_invariance, "Where a row's bits change with the batch, split or ranks it is computed in, and why",
     cmd_invariance_usage, true},
    {"init-audit", cmd_init_audit, "Build a model the ways users build it and find every buffer that differs, why, and who is right",
     cmd_init_audit_usage, true},
    {"env", cmd_env, "Print the tool version, build options, library versions and GPUs",
     cmd_env_usage, true},
    {"help", cmd_help, "Show the commands, or one command's usage",
     "bitprobe help [COMMAND]", false},
    {NULL, NULL, NULL, NULL, false},
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
        fprintf(f, "  %-14s %s\n", c->name, c->summary);
    fprintf(f, "\n'bitprobe help COMMAND' or 'bitprobe COMMAND --help' for details.\n"
               "Exit status: 0 no drift, 1 drift beyond policy, 2 bad input, usage or environment.\n");
}

/* The subcommand argv[0] argv[1] ("stack ranks") when the table has it. */
static const bp_cmd_t *find_sub(int argc, char **argv)
{
    if (argc < 2)
        return NULL;
    char name[64];
    int n = snprintf(name, sizeof name, "%s %s", argv[0], argv[1]);
    return n > 0 && (size_t)n < sizeof name ? bp_cmd_find(name) : NULL;
}

static int cmd_help(int argc, char **argv)
{
    const bp_cmd_t *sub = argc == 3 ? find_sub(argc - 1, argv + 1) : NULL;
    if (sub)
        return bp_cli_help(sub->name);
    if (argc > 2)
        return bp_cli_usage_error("help", "too many arguments");
    if (argc == 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
        if (!bp_cmd_find(argv[1])) {
            bp_esc_printf(stderr, "bitprobe help: unknown command '%s'\n", argv[1]);
            return BP_EXIT_TROUBLE;
        }
        return bp_cli_help(argv[1]);
    }
    if (argc == 2)
        return bp_cli_help("help");
    overview(stdout);
    return BP_EXIT_OK;
}

static int run(int argc, char **argv)
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
        const char *names[64];
        size_t n = 0;
        for (const bp_cmd_t *k = bp_commands; k->name && n < 64; k++)
            names[n++] = k->name;
        const char *near = bp_suggest(name, names, n);
        bp_esc_printf(stderr, "bitprobe: unknown command '%s'", name);
        if (near)
            bp_esc_printf(stderr, "; did you mean '%s'?", near);
        fprintf(stderr, "\nTry 'bitprobe --help' for the list of commands.\n");
        return BP_EXIT_TROUBLE;
    }
    const bp_cmd_t *sub = find_sub(argc - 1, argv + 1);
    if (sub) {
        bp_intr_install();
        return sub->fn(argc - 2, argv + 2);
    }
    if (c->fn != cmd_help && !c->table && bp_cli_wants_help(argc - 1, argv + 1))
        return bp_cli_help(c->name);
    bp_intr_install();
    return c->fn(argc - 1, argv + 1);
}

/* Data goes to standard output: a write that failed there (a full disk,
 * a closed pipe with SIGPIPE ignored) fails the command, said on stderr,
 * whatever it found. */
static int stdout_done(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    bp_esc_printf(stderr, "bitprobe: cannot write to standard output: %s\n",
                  errno ? strerror(errno) : "write error");
    return BP_EXIT_TROUBLE;
}

/* Ends the process, output written.  Where a device backend was opened,
 * an ordinary exit first releases in the process what CUDA started
 * (cuBLAS handles, device memory, the primary context, the runtime's
 * exit handlers), which the kernel frees anyway when the process ends: a
 * run took 0.14 s on an H200 after its last report line, against well
 * under a second for the whole suite.  So such a process leaves with
 * _exit once its output streams are flushed (stdout_done checked
 * stdout), and run leaves its device backends open for it.  Without a
 * device (CI's sanitizer builds with their leak checks) the exit is the
 * ordinary one.
 *
 * Even after _exit the kernel's release of the GPU's files (the driver
 * tearing the context down) took 0.10-0.15 s on an H200, while the
 * process is still there for whoever waits for it.  So, unless
 * BP_CUDA_WAIT_EXIT says otherwise, a child started here holds those
 * files, with /dev/null for its standard streams (a pipe reading bitprobe
 * ends with bitprobe), until the parent is gone, and the teardown happens
 * in it, after bitprobe has exited with its status.  The child shares
 * the parent's memory (clone with CLONE_VM, not fork: fork copied the
 * page tables of 0.7 GB, 12-15 ms on an H200 host) and has its own copy
 * of the file table; it only closes, opens, reads and exits, on a stack
 * of its own, while the parent only exits.  Without clone or a pipe the
 * exit is as before. */
static int teardown_pipe[2];

static int teardown_holder(void *arg)
{
    (void)arg;
    close(teardown_pipe[1]);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
    }
    char c;
    while (read(teardown_pipe[0], &c, 1) < 0 && errno == EINTR)
        ;
    return 0;
}

static void detach_teardown(void)
{
    const char *w = getenv("BP_CUDA_WAIT_EXIT");
    if (w && *w && strcmp(w, "0") != 0)
        return;
    enum { STACK = 64 << 10 };
    char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED || pipe(teardown_pipe) != 0)
        return;
    if (clone(teardown_holder, stack + STACK, CLONE_VM | SIGCHLD, NULL) < 0)
        return;
    close(teardown_pipe[0]); /* the write end goes with the parent */
}

static int leave(int rc)
{
    if (!bp_backend_device_opened())
        return rc;
    bp_cli_progress_clear();
    fflush(NULL);
    detach_teardown();
    _exit(rc);
}

int main(int argc, char **argv)
{
    return leave(stdout_done(run(argc, argv)));
}
