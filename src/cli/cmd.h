/* The command table: one entry per command, git-style.  main.c owns the
 * table; each cmd_*.c implements one handler and keeps its usage text
 * beside its option table (cmd_NAME_usage).  Handlers return the exit
 * status: 0 no drift, 1 drift, 2 bad input, usage or environment. */
#ifndef BP_CMD_H
#define BP_CMD_H

#include <stdbool.h>

enum { BP_EXIT_OK = 0, BP_EXIT_DRIFT = 1, BP_EXIT_TROUBLE = 2 };

/* A subcommand's name is its command's, a space and its own ("stack
 * ranks"): bitprobe stack ranks ... runs it. */
typedef struct bp_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary; /* one line */
    const char *usage;   /* first line is the synopsis; the rest, options */
    bool table;          /* usage is the synopsis alone: the command prints
                          * --help from its option table (opt.h) */
} bp_cmd_t;

extern const bp_cmd_t bp_commands[];
const bp_cmd_t *bp_cmd_find(const char *name);

#define BP_CMD_DECLARE(name)                                                             \
    int cmd_##name(int argc, char **argv);                                               \
    extern const char cmd_##name##_usage[];
BP_CMD_DECLARE(env)
BP_CMD_DECLARE(list)
BP_CMD_DECLARE(run)
BP_CMD_DECLARE(bless)
BP_CMD_DECLARE(diff)
BP_CMD_DECLARE(explain)
BP_CMD_DECLARE(fingerprint)
BP_CMD_DECLARE(stack)
BP_CMD_DECLARE(report)
BP_CMD_DECLARE(screen)
BP_CMD_DECLARE(invariance)
BP_CMD_DECLARE(init_audit)
/* stack ranks, also spelt stack --ranks (cmd_stack_ranks.c) */
int cmd_stack_ranks(int argc, char **argv);
int cmd_stack_ranks_sub(int argc, char **argv);
extern const char cmd_stack_ranks_usage[];
/* diff consensus, also spelt diff --consensus (cmd_consensus.c) */
int cmd_diff_consensus(int argc, char **argv);
int cmd_diff_consensus_sub(int argc, char **argv);
extern const char cmd_diff_consensus_usage[];

#endif
