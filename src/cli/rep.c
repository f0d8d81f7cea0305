/* Report dispatch: every format a command asked for, each to its own
 * destination (see rep.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rep.h"

static bool to_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

void bp_rep_targets_init(bp_rep_targets_t *t)
{
    const char *gh = getenv("GITHUB_ACTIONS");
    *t = (bp_rep_targets_t){.github = gh && strcmp(gh, "true") == 0};
}

int bp_rep_targets_check(const char *cmd, const bp_rep_targets_t *t)
{
    int n = to_stdout(t->json) + to_stdout(t->junit) + to_stdout(t->markdown);
    if (n > 1)
        return bp_cli_usage_error(cmd, "only one of --json, --junit and --markdown "
                                       "can write to standard output ('-')");
    int rc;
    if ((rc = bp_cli_check_output(cmd, "--json", t->json, false)) >= 0 ||
        (rc = bp_cli_check_output(cmd, "--junit", t->junit, false)) >= 0 ||
        (rc = bp_cli_check_output(cmd, "--markdown", t->markdown, false)) >= 0)
        return rc;
    return -1;
}

int bp_rep_emit(const bp_rep_targets_t *t, const bp_report_t *rep)
{
    bool taken = to_stdout(t->json) || to_stdout(t->junit) || to_stdout(t->markdown);
    bp_cli_progress_clear();
    if (!taken && bp_rep_text(stdout, rep, &t->text))
        return 2;
    if (t->json && bp_rep_write(t->json, bp_rep_json, rep))
        return 2;
    if (t->junit && bp_rep_write(t->junit, bp_rep_junit, rep))
        return 2;
    if (t->markdown && bp_rep_write(t->markdown, bp_rep_markdown, rep))
        return 2;
    if (t->github) {
        fflush(stdout);
        if (bp_rep_github(taken ? stderr : stdout, rep))
            return 2;
    }
    return 0;
}
