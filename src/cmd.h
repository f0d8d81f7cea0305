/* The command table: one entry per command, git-style.  main.c owns the
 * table; each cmd_*.c implements one handler.  Handlers return the exit
 * status: 0 no drift, 1 drift, 2 bad input, usage or environment. */
#ifndef BP_CMD_H
#define BP_CMD_H

enum { BP_EXIT_OK = 0, BP_EXIT_DRIFT = 1, BP_EXIT_TROUBLE = 2 };

typedef struct bp_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary; /* one line */
    const char *usage;   /* first line is the synopsis; the rest, options */
} bp_cmd_t;

extern const bp_cmd_t bp_commands[];
const bp_cmd_t *bp_cmd_find(const char *name);

int cmd_env(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bless(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_fingerprint(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_screen(int argc, char **argv);
/* diff --consensus (cmd_consensus.c) */
int cmd_diff_consensus(int argc, char **argv);
int cmd_invariance(int argc, char **argv);

#endif
