/* bitprobe report FILE: read a JSON report (or a bundle's manifest) back
 * and render it again, in any format; the exit status is the verdict of
 * the command that wrote it. */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "rep.h"
#include "report_read.h"

const char cmd_report_usage[] =
    "bitprobe report FILE [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet] [-v] [--first K]";

int cmd_report(int argc, char **argv)
{
    bp_rep_targets_t t;
    bp_rep_targets_init(&t);
    /* By default every mismatch the report holds: what its command showed. */
    size_t first = SIZE_MAX;
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("  FILE              a report written by --json (run, diff, explain, stack; '-':\n"
                     "                    standard input) or a bundle directory (run --save)\n"),
        BP_OPT_REPORT_(&t,
           "  --json FILE       the report as JSON again ('-': stdout instead of the text)\n",
           "  --junit FILE      JUnit XML, one testcase per comparison\n",
           "  --markdown FILE   a self-contained bug-ticket report in Markdown\n",
           "  -v, --verbose     the detail of every difference; -vv: every result\n"),
        BP_OPT_SIZE_("first", &first, 1000000,
           "  --first K         show at most K mismatches per comparison (default: all the\n"
           "                    report holds, as its command showed them)\n"),
        BP_OPT_TEXT_("  Exit status: 0 no drift beyond policy in the report, 1 drift (as the command\n"
                     "  that wrote it), 2 bad input.\n"),
        BP_OPT_END_};
    int pos, rc;
    if ((rc = bp_opt_parse("report", opts, NULL, argc, argv, &pos)))
        return rc < 0 ? BP_EXIT_OK : rc;
    if (argc - pos != 1)
        return bp_cli_usage_error("report", "needs one report file, got %d", argc - pos);
    rc = bp_rep_targets_check("report", &t);
    if (rc >= 0)
        return rc;
    bp_report_t rep;
    bp_error_t err = {0};
    if (bp_report_read(argv[pos], &rep, &err))
        return bp_cli_fail(&err);
    t.text.quiet = bp_cli_quiet;
    t.text.color = bp_cli_color();
    t.text.first = first;
    bp_tally_t tally;
    bp_report_tally(&rep, &tally);
    rc = bp_rep_emit(&t, &rep) ? BP_EXIT_TROUBLE : tally.exit;
    bp_report_free(&rep);
    return rc;
}
