/* bitprobe report FILE: read a JSON report (or a bundle's manifest) back
 * and render it again, in any format; the exit status is the verdict of
 * the command that wrote it. */
#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "rep.h"
#include "report_read.h"

/* diff also counts a tensor present on one side only, or that cannot be
 * compared, as a difference: a result not compared that counts (older
 * reports: a note "only in SIDE: TENSOR"). */
static bool diff_unmatched(const bp_report_t *rep)
{
    static const char diff[] = "bitprobe diff ";
    if (!rep->command || strncmp(rep->command, diff, sizeof diff - 1) != 0)
        return false;
    for (size_t i = 0; i < rep->n; i++)
        if (rep->r[i].kind == BP_RES_DIFF && !rep->r[i].compared && rep->r[i].counts)
            return true;
    for (size_t i = 0; i < rep->nnotes; i++)
        if (strncmp(rep->notes[i], "only in ", 8) == 0)
            return true;
    return false;
}

int cmd_report(int argc, char **argv)
{
    enum { O_FIRST = 256 };
    static const struct option opts[] = {
        {"first", required_argument, 0, O_FIRST}, BP_REP_LONG_OPTIONS, {0, 0, 0, 0}};
    bp_rep_targets_t t;
    bp_rep_targets_init(&t);
    /* By default every mismatch the report holds: what its command showed. */
    size_t first = SIZE_MAX;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (c == O_FIRST && !bp_cli_count(optarg, 1000000, &first))
            return bp_cli_usage_error("report", "--first needs a count, not '%s'", optarg);
        if (c != O_FIRST && !bp_rep_targets_option(&t, c, optarg))
            return bp_cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return bp_cli_usage_error("report", "needs one report file, got %d", argc - optind);
    int rc = bp_rep_targets_check("report", &t);
    if (rc >= 0)
        return rc;
    bp_report_t rep;
    bp_error_t err = {0};
    if (bp_report_read(argv[optind], &rep, &err))
        return bp_cli_fail(&err);
    t.text = (bp_rep_opts_t){.quiet = bp_cli_quiet, .color = bp_cli_color(), .first = first};
    rc = bp_rep_emit(&t, &rep);
    if (!rc)
        rc = bp_report_failures(&rep) || diff_unmatched(&rep) ? BP_EXIT_DRIFT : BP_EXIT_OK;
    bp_report_free(&rep);
    return rc;
}
