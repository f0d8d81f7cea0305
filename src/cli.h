/* Helpers every command shares: usage errors, help, library errors, and the
 * output conventions (progress on stderr only when it is a terminal,
 * --quiet, NO_COLOR). */
#ifndef BP_CLI_H
#define BP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cmd.h"
#include "error.h"

/* "bitprobe CMD: what\nusage: ..." on stderr; returns 2. */
int bp_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The command's usage on stdout; returns 0. */
int bp_cli_help(const char *cmd);
/* "bitprobe: <message>" on stderr; returns 2. */
int bp_cli_fail(const bp_error_t *err);
/* True when argv holds -h or --help before any "--". */
bool bp_cli_wants_help(int argc, char **argv);

extern bool bp_cli_quiet;
/* Progress lines: stderr, only when it is a terminal and not --quiet. */
void bp_cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether colour may be used on stdout (a terminal, NO_COLOR unset). */
bool bp_cli_color(void);

/* Where probes and goldens are: the option's value if given, else
 * $BITPROBE_PROBES / $BITPROBE_GOLDEN, else ./probes or ./golden when that
 * directory exists, else the installed copy. */
const char *bp_cli_probes_dir(const char *opt);
const char *bp_cli_golden_dir(const char *opt);

/* A count option's value: a decimal integer in 0..max. */
bool bp_cli_count(const char *s, long max, size_t *out);

/* Writes j, indented, to path ('-': standard output), taking j; returns 0,
 * or 2 after saying on stderr that "bitprobe CMD" could not write it. */
int bp_cli_json_out(const char *cmd, const char *path, json_t *j);

/* Splits a comma-separated list in place; returns the count (at most max). */
int bp_cli_split(char *s, char **items, int max);

#endif
