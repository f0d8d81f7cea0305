/* Shared command-line helpers (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

bool bp_cli_quiet;

int bp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bitprobe %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const bp_cmd_t *c = bp_cmd_find(cmd);
    if (c) {
        const char *nl = strchr(c->usage, '\n');
        int len = nl ? (int)(nl - c->usage) : (int)strlen(c->usage);
        fprintf(stderr, "\nusage: %.*s\n", len, c->usage);
        fprintf(stderr, "Try 'bitprobe %s --help' for more.\n", cmd);
    } else {
        fputc('\n', stderr);
    }
    return BP_EXIT_TROUBLE;
}

int bp_cli_help(const char *cmd)
{
    const bp_cmd_t *c = bp_cmd_find(cmd);
    if (!c)
        return BP_EXIT_TROUBLE;
    printf("usage: %s\n\n%s.\n", c->usage, c->summary);
    return BP_EXIT_OK;
}

int bp_cli_fail(const bp_error_t *err)
{
    fprintf(stderr, "bitprobe: %s\n", err->msg[0] ? err->msg : "failed");
    return BP_EXIT_TROUBLE;
}

bool bp_cli_count(const char *s, long max, size_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < 0 || v > max)
        return false;
    *out = (size_t)v;
    return true;
}

bool bp_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

void bp_cli_progress(const char *fmt, ...)
{
    if (bp_cli_quiet || !isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

bool bp_cli_color(void)
{
    const char *nc = getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && !(nc && *nc);
}

static const char *data_dir(const char *opt, const char *env, const char *local,
                            const char *installed)
{
    if (opt)
        return opt;
    const char *e = getenv(env);
    if (e && *e)
        return e;
    struct stat st;
    if (stat(local, &st) == 0 && S_ISDIR(st.st_mode))
        return local;
    return installed;
}

const char *bp_cli_probes_dir(const char *opt)
{
    return data_dir(opt, "BITPROBE_PROBES", "probes", BP_DATADIR "/probes");
}

const char *bp_cli_golden_dir(const char *opt)
{
    return data_dir(opt, "BITPROBE_GOLDEN", "golden", BP_DATADIR "/golden");
}

int bp_cli_split(char *s, char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            items[n++] = tok;
    return n;
}

int bp_cli_json_out(const char *cmd, const char *path, json_t *j)
{
    bool out = strcmp(path, "-") == 0;
    FILE *f = out ? stdout : fopen(path, "w");
    bool ok = j && f && json_dumpf(j, f, JSON_INDENT(1)) == 0 && fputc('\n', f) != EOF;
    if (f && !out)
        ok = fclose(f) == 0 && ok;
    json_decref(j);
    if (!ok)
        fprintf(stderr, "bitprobe %s: cannot write the JSON report to '%s'\n", cmd, path);
    return ok ? BP_EXIT_OK : BP_EXIT_TROUBLE;
}
