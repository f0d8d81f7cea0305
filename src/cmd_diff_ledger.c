/* bitprobe diff A.ledger B.ledger: two recorded op streams aligned, the op
 * that introduced a difference named (ledger_diff.h).  Exit 0 when every
 * compared op is identical, 1 when some differ or nothing could be
 * compared, 2 on bad input. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "envinfo.h"
#include "rep_ledger.h"

int cmd_diff_ledger(const char *pa, const char *pb, const bp_rep_targets_t *t, size_t first,
                    int argc, char **argv)
{
    bool la = bp_ledger_sniff(pa), lb = bp_ledger_sniff(pb);
    if (la != lb) {
        fprintf(stderr, "bitprobe diff: '%s' is an op ledger and '%s' is not: a ledger is "
                        "compared with another ledger\n", la ? pa : pb, la ? pb : pa);
        return BP_EXIT_TROUBLE;
    }
    bp_error_t err = {0};
    bp_ledger_t A, B;
    if (bp_ledger_read(pa, &A, &err))
        return bp_cli_fail(&err);
    if (bp_ledger_read(pb, &B, &err)) {
        bp_ledger_free(&A);
        return bp_cli_fail(&err);
    }
    bp_ledger_diff_t d;
    int rc = BP_EXIT_OK;
    if (bp_ledger_diff(&A, &B, &d, &err)) {
        rc = bp_cli_fail(&err);
        goto out;
    }
    bp_rep_opts_t text = {.quiet = bp_cli_quiet, .color = bp_cli_color(),
                          .first = first ? first : 10};
    bool taken = (t->json && strcmp(t->json, "-") == 0) ||
                 (t->junit && strcmp(t->junit, "-") == 0) ||
                 (t->markdown && strcmp(t->markdown, "-") == 0);
    if (!taken)
        rc = bp_rep_ledger_text(stdout, &d, &text);
    if (!rc && t->json) {
        bp_report_t rep;
        bp_report_init(&rep, argc, argv);
        rep.env = bp_envinfo_host();
        rep.extra = json_pack("{s:o}", "ledger", bp_ledger_diff_json(&d, SIZE_MAX));
        rc = bp_rep_write(t->json, bp_rep_json, &rep);
        bp_report_free(&rep);
    }
    if (!rc) {
        size_t differ = d.count[BP_LOP_INTRODUCED] + d.count[BP_LOP_INHERITED] +
                        d.count[BP_LOP_ABSORBED];
        rc = differ || !d.count[BP_LOP_IDENTICAL] ? BP_EXIT_DRIFT : BP_EXIT_OK;
    }
    bp_ledger_diff_free(&d);
out:
    bp_ledger_free(&A);
    bp_ledger_free(&B);
    return rc;
}
