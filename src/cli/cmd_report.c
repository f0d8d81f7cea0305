/* bitprobe report FILE: read a JSON report (or a bundle's manifest) back
 * and render it again, in any format; the exit status is the verdict of
 * the command that wrote it. */
#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "rep.h"
#include "report_read.h"

const char cmd_report_usage[] =
    "bitprobe report FILE [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet] [-v] [--first K]\n"
    "  FILE              a report written by --json (run, diff, explain, stack; '-':\n"
    "                    standard input) or a bundle directory (run --save)\n"
    "  --json FILE       the report as JSON again ('-': stdout instead of the text)\n"
    "  --junit FILE      JUnit XML, one testcase per comparison\n"
    "  --markdown FILE   a self-contained bug-ticket report in Markdown\n"
    "  --github          GitHub annotations and step summary (default when\n"
    "                    GITHUB_ACTIONS=true)\n"
    "  --first K         show at most K mismatches per comparison (default: all the\n"
    "                    report holds, as its command showed them)\n"
    "  --quiet           print only the verdict and the failures (diff: nothing\n"
    "                    when identical)\n"
    "  -v, --verbose     the detail of every difference; -vv: every result\n"
    "  Exit status: 0 no drift beyond policy in the report, 1 drift (as the command\n"
    "  that wrote it), 2 bad input.";

int cmd_report(int argc, char **argv)
{
    enum { O_FIRST = 256 };
    static const struct option opts[] = {
        {"first", required_argument, 0, O_FIRST}, BP_REP_LONG_OPTIONS,
        BP_REP_VERBOSE_OPTION, {0, 0, 0, 0}};
    bp_rep_targets_t t;
    bp_rep_targets_init(&t);
    /* By default every mismatch the report holds: what its command showed. */
    size_t first = SIZE_MAX;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qv", opts, NULL)) != -1) {
        if (c == O_FIRST && !bp_cli_count(optarg, 1000000, &first))
            return bp_cli_usage_error("report", "--first needs a count, not '%s'", optarg);
        if (c != O_FIRST && !bp_rep_targets_option(&t, c, optarg))
            return bp_cli_unknown_option("report", opts, argv[optind - 1]);
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
    t.text.quiet = bp_cli_quiet;
    t.text.color = bp_cli_color();
    t.text.first = first;
    bp_tally_t tally;
    bp_report_tally(&rep, &tally);
    rc = bp_rep_emit(&t, &rep) ? BP_EXIT_TROUBLE : tally.exit;
    bp_report_free(&rep);
    return rc;
}
