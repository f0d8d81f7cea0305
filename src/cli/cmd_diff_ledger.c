/* bitprobe diff A.ledger B.ledger: two recorded op streams aligned, the op
 * that introduced a difference named (ledger_diff.h).  Exit 0 when every
 * compared op is identical, 1 when some differ, 2 when no op could be
 * compared or on bad input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "envinfo.h"
#include "esc.h"
#include "outfile.h"
#include "cmd_ledger.h"
#include "rep_ledger.h"

/* Writes a report of d to path ('-': standard output). */
static int write_to(const char *path, const bp_ledger_diff_t *d, size_t first, bool junit)
{
    bp_out_t o;
    if (!bp_out_open(&o, path)) {
        bp_esc_printf(stderr, "bitprobe diff: cannot write '%s': %s\n", path, strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    FILE *f = o.f;
    int rc = junit ? bp_rep_ledger_junit(f, d) : bp_rep_ledger_markdown(f, d, first);
    if (!bp_out_close(&o, rc == 0)) {
        bp_esc_printf(stderr, "bitprobe diff: cannot write '%s'\n", path);
        return BP_EXIT_TROUBLE;
    }
    return BP_EXIT_OK;
}

int cmd_diff_ledger(const char *pa, const char *pb, const bp_rep_targets_t *t, size_t first,
                    int argc, char **argv)
{
    bool la = bp_ledger_sniff(pa), lb = bp_ledger_sniff(pb);
    if (la != lb) {
        bp_esc_printf(stderr,
                      "bitprobe diff: '%s' is an op ledger and '%s' is not: a ledger is "
                      "compared with another ledger\n",
                      la ? pa : pb, la ? pb : pa);
        return BP_EXIT_TROUBLE;
    }
    bp_error_t err = {0};
    bp_ledger_t A, B;
    bp_ledger_diff_t d;
    if (bp_ledger_diff_files(pa, pb, &A, &B, &d, &err))
        return bp_cli_fail(&err);
    int rc = BP_EXIT_OK;
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
        /* One result per module, so that the report's summary and verdict
         * are the command's: a module where every op agrees is compared,
         * its outputs bit-identical; one where an op differs is "not
         * comparable" element by element (a ledger holds hashes, not
         * values) and counts (exit 1), the note saying what differs. */
        for (size_t m = 0; m < d.nmods && !rc; m++) {
            const bp_ledger_module_t *md = &d.mods[m];
            char note[600];
            int len = snprintf(note, sizeof note, "op ledger hashes differ: ");
            bp_rep_ledger_module_summary(&d, md, note + len, sizeof note - (size_t)len);
            bool differs = md->count[BP_LOP_INTRODUCED] + md->count[BP_LOP_INHERITED] +
                           md->count[BP_LOP_ABSORBED];
            bp_result_t r = {.probe = (char *)(*md->module ? md->module : "(no module)"),
                             .output = "", .dtype = BP_F32, .kind = BP_RES_DIFF,
                             .a = (char *)pa, .b = (char *)pb, .compared = !differs,
                             .counts = true, .note = note, .status = BP_RS_NOT_COMPARABLE};
            bp_policy_exact(&r.policy);
            if (!differs) {
                r.cmp = (bp_cmp_t){.dtype = BP_F32, .ndim = 1, .shape = {(int64_t)md->outs},
                                   .total = md->outs, .pass = true};
                r.cmp.hist[0] = md->outs;
            }
            if (!bp_report_add(&rep, &r))
                rc = BP_EXIT_TROUBLE;
        }
        if (!rc)
            rc = bp_rep_write(t->json, bp_rep_json, &rep);
        bp_report_free(&rep);
    }
    if (!rc && t->junit)
        rc = write_to(t->junit, &d, text.first, true);
    if (!rc && t->markdown)
        rc = write_to(t->markdown, &d, text.first, false);
    const char *summary = getenv("GITHUB_STEP_SUMMARY");
    if (!rc && t->github && summary && *summary) {
        FILE *f = fopen(summary, "a");
        if (!f || bp_rep_ledger_markdown(f, &d, text.first) || fclose(f) != 0) {
            bp_esc_printf(stderr, "bitprobe diff: cannot append to GITHUB_STEP_SUMMARY '%s'\n",
                          summary);
            rc = BP_EXIT_TROUBLE;
        }
    }
    if (!rc) {
        size_t differ = d.count[BP_LOP_INTRODUCED] + d.count[BP_LOP_INHERITED] +
                        d.count[BP_LOP_ABSORBED];
        /* no op compared at all: nothing compared is an error, as in
         * every diff */
        rc = differ ? BP_EXIT_DRIFT : d.count[BP_LOP_IDENTICAL] ? BP_EXIT_OK : BP_EXIT_TROUBLE;
    }
    bp_ledger_diff_free(&d);
    bp_ledger_free(&A);
    bp_ledger_free(&B);
    return rc;
}
