/* Option tables, as git's parse-options: a command lists its options once,
 * each entry with its long name, short letter, kind, where its value goes
 * and its usage line(s) as --help prints them; bp_opt_parse reads argv
 * from that table and prints --help from it.  The common group (--gpu,
 * --seed, --dtype, -q/--quiet, -v) and the report group (--json, --junit,
 * --markdown, --github) are macros here, so that every command that takes
 * them takes them with the same range, base and message.  The caller
 * includes cli.h (BP_OPT_QUIET_ sets bp_cli_quiet). */
#ifndef BP_OPT_H
#define BP_OPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dtype.h"

typedef enum bp_opt_kind {
    BP_OPT_END = 0,
    BP_OPT_FLAG,   /* bool *: set */
    BP_OPT_COUNT,  /* int *: one more each time (-v, -vv) */
    BP_OPT_INT,    /* int *: a decimal integer in lo..hi */
    BP_OPT_SIZE,   /* size_t *: a count, 0..hi */
    BP_OPT_SEED,   /* uint64_t *: an unsigned decimal integer (010 is ten) */
    BP_OPT_GPU,    /* int *: a CUDA device index, 0..BP_OPT_GPU_MAX */
    BP_OPT_DTYPE,  /* bp_dtype_t *: fp32, bf16 or fp16 */
    BP_OPT_DTYPES, /* uint32_t *: a comma-separated list of those, as a mask */
    BP_OPT_STRING, /* const char **: the value as given */
    BP_OPT_PATH,   /* const char **: a file the command writes ("-": stdout) */
    BP_OPT_CALL,   /* fn(cmd, entry, arg, ctx) applies it (arg NULL: none) */
    BP_OPT_TEXT,   /* no option: lines of the usage between the options' */
} bp_opt_kind_t;

struct bp_opt;
/* Applies a BP_OPT_CALL entry's value: 0, the usage error's exit status,
 * or -1 when the option did the command's work (--list): parsing stops and
 * bp_opt_parse returns -1 (exit 0). */
typedef int (*bp_opt_fn)(const char *cmd, const struct bp_opt *o, const char *arg,
                         void *ctx);

typedef struct bp_opt {
    const char *name;  /* long name, without "--" (NULL: a short one only) */
    int short_name;    /* 0: none */
    bp_opt_kind_t kind;
    void *target;      /* where the value goes (see the kinds) */
    long long lo, hi;  /* BP_OPT_INT's range; BP_OPT_SIZE's most */
    bp_opt_fn fn;      /* BP_OPT_CALL */
    int id;            /* BP_OPT_CALL: which option, for a handler of several */
    bool arg;          /* BP_OPT_CALL: takes a value */
    const char *help;  /* its usage lines, as --help prints them (NULL: none) */
} bp_opt_t;

/* The most --gpu accepts (a device index), everywhere. */
#define BP_OPT_GPU_MAX 1023

#define BP_OPT_END_ {NULL, 0, BP_OPT_END, NULL, 0, 0, NULL, 0, false, NULL}
/* The end of a table whose unknown options fn answers (arg: the word as
 * given), for a mode that names the options it does not take. */
#define BP_OPT_END_UNKNOWN_(fn) {NULL, 0, BP_OPT_END, NULL, 0, 0, fn, 0, false, NULL}
#define BP_OPT_FLAG_(l, s, p, h) {l, s, BP_OPT_FLAG, p, 0, 0, NULL, 0, false, h}
#define BP_OPT_COUNT_(l, s, p, h) {l, s, BP_OPT_COUNT, p, 0, 0, NULL, 0, false, h}
#define BP_OPT_INT_(l, p, lo, hi, h) {l, 0, BP_OPT_INT, p, lo, hi, NULL, 0, false, h}
#define BP_OPT_STRING_(l, s, p, h) {l, s, BP_OPT_STRING, p, 0, 0, NULL, 0, true, h}
#define BP_OPT_PATH_(l, s, p, h) {l, s, BP_OPT_PATH, p, 0, 0, NULL, 0, true, h}
#define BP_OPT_SIZE_(l, p, hi, h) {l, 0, BP_OPT_SIZE, p, 0, hi, NULL, 0, true, h}
#define BP_OPT_TEXT_(h) {NULL, 0, BP_OPT_TEXT, NULL, 0, 0, NULL, 0, false, h}
#define BP_OPT_DTYPE_(l, p, h) {l, 0, BP_OPT_DTYPE, p, 0, 0, NULL, 0, true, h}
/* A value (arg true) or a switch applied by fn, with id and ctx. */
#define BP_OPT_CALL_(l, s, arg, fn, id, h) {l, s, BP_OPT_CALL, NULL, 0, 0, fn, id, arg, h}

/* ---- the common group: one range, one base, one check, one message ---- */
#define BP_OPT_GPU_(p, h) {"gpu", 0, BP_OPT_GPU, p, 0, BP_OPT_GPU_MAX, NULL, 0, true, h}
#define BP_OPT_SEED_(p, h) {"seed", 0, BP_OPT_SEED, p, 0, 0, NULL, 0, true, h}
#define BP_OPT_DTYPES_(p, h) {"dtype", 0, BP_OPT_DTYPES, p, 0, 0, NULL, 0, true, h}
/* -q, --quiet: no progress lines and no notes on stderr; text reports
 * print only the verdict and the failures (bp_cli_quiet). */
#define BP_OPT_QUIET_(h) {"quiet", 'q', BP_OPT_FLAG, &bp_cli_quiet, 0, 0, NULL, 0, false, h}
#define BP_OPT_VERBOSE_(p, h) BP_OPT_COUNT_("verbose", 'v', p, h)

/* ---- the report group (t: a bp_rep_targets_t *): --json, --junit,
 * --markdown FILE ('-': stdout), --github, -q/--quiet, -v/--verbose.  The
 * command says what its JSON, JUnit, Markdown and -v hold (hjson, hjunit,
 * hmarkdown, hverbose: their usage lines); --github and --quiet read the
 * same everywhere. ---- */
#define BP_OPT_GITHUB_HELP                                                               \
    "  --github          GitHub annotations and step summary (default when\n"              \
    "                    GITHUB_ACTIONS=true)\n"
#define BP_OPT_QUIET_HELP                                                                \
    "  -q, --quiet       print only the verdict and the failures (diff: nothing\n"      \
    "                    when identical)\n"
#define BP_OPT_REPORT_(t, hjson, hjunit, hmarkdown, hverbose)                            \
    BP_OPT_PATH_("json", 0, &(t)->json, hjson),                                          \
    BP_OPT_PATH_("junit", 0, &(t)->junit, hjunit),                                       \
    BP_OPT_PATH_("markdown", 0, &(t)->markdown, hmarkdown),                              \
    BP_OPT_FLAG_("github", 0, &(t)->github, BP_OPT_GITHUB_HELP),                         \
    BP_OPT_QUIET_(BP_OPT_QUIET_HELP),                                                    \
    BP_OPT_VERBOSE_(&(t)->text.verbose, hverbose)

/* Parses argv[1..] (argv[0] is the command's name) by the table: options
 * and arguments may mix, "--" ends the options, long names may be
 * abbreviated while unique (as getopt_long).  On return *pos is the index
 * of the first argument (the arguments are moved to the end).  Returns 0,
 * -1 after -h or --help anywhere before "--" (the usage printed from the
 * table, under the synopsis of cmd's entry in the command table) or after
 * an option that did the command's work (see bp_opt_fn), or 2 after a
 * usage error naming cmd (an unknown option with the nearest
 * name, a missing value, a value out of range). */
int bp_opt_parse(const char *cmd, const bp_opt_t *tab, void *ctx, int argc, char **argv,
                 int *pos);
/* The table's usage lines, in order. */
void bp_opt_usage(FILE *f, const bp_opt_t *tab);

/* The one check of each kind, for values that come another way. */
int bp_opt_seed(const char *cmd, const char *opt, const char *arg, uint64_t *out);
int bp_opt_gpu(const char *cmd, const char *arg, int *out);
/* --gpu all or a list of device indices (0,2): the syntax and each index's
 * range; the caller checks them against the GPUs it finds. */
int bp_opt_gpus(const char *cmd, const char *arg);
bool bp_opt_gpus_ok(const char *arg);
int bp_opt_dtype(const char *cmd, const char *opt, const char *arg, bp_dtype_t *out);
int bp_opt_dtypes(const char *cmd, const char *opt, const char *arg, uint32_t *mask);
/* The messages of those checks (for a caller that adds to them). */
#define BP_OPT_STR2_(x) #x
#define BP_OPT_STR_(x) BP_OPT_STR2_(x)
#define BP_OPT_GPU_WHAT "a device index (0 to " BP_OPT_STR_(BP_OPT_GPU_MAX) ")"
#define BP_OPT_DTYPE_WHAT "fp32, bf16 or fp16"

#endif
