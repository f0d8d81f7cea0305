/* Fuzz target: the one rule for data in text lines (esc.h) and the text
 * report that applies it.  The input is split at NUL bytes into strings
 * that become a report's names, labels, notes and hints (the first byte
 * picks -q, -v or -vv); escaping a string, formatting with it and
 * rendering the report must give text in which no name breaks a line,
 * starts a workflow command or carries a control character
 * (text_check.h), and escaping must not change a string that needs none. */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "fuzz.h"
#include "rep.h"
#include "text_check.h"

/* The i-th NUL-separated string of the input (empty past its end). */
static const char *field(char *const *f, size_t n, size_t i)
{
    return i < n ? f[i] : "";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = malloc(size + 1);
    char **f = malloc((size + 1) * sizeof *f);
    FUZZ_CHECK(text && f, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    size_t nf = 0;
    for (size_t i = 0; i <= size; i += strlen(text + i) + 1)
        f[nf++] = text + i;
    /* each string alone */
    for (size_t i = 0; i < nf; i++) {
        char out[512];
        bp_esc_str(f[i], out, sizeof out);
        fuzz_text_check("bp_esc_str", out, strlen(out));
        char *d = bp_esc_dup(f[i]);
        FUZZ_CHECK(d, "out of memory");
        fuzz_text_check("bp_esc_dup", d, strlen(d));
        if (!bp_esc_needed(f[i]))
            FUZZ_CHECK(strcmp(d, f[i]) == 0, "'%s' changed though it needs no escape", f[i]);
        else
            FUZZ_CHECK(strcmp(d, f[i]) != 0, "'%s' needs an escape and has none", f[i]);
        free(d);
    }
    /* a report of them */
    bp_report_t rep;
    memset(&rep, 0, sizeof rep);
    for (size_t i = 0; i + 5 < nf || (i == 0 && nf); i += 6) {
        bp_result_t r = {0};
        r.probe = (char *)field(f, nf, i);
        r.output = (char *)field(f, nf, i + 1);
        r.a = (char *)field(f, nf, i + 2);
        r.b = (char *)field(f, nf, i + 3);
        r.note = (char *)field(f, nf, i + 4);
        r.kind = BP_RES_DIFF;
        r.dtype = BP_F32;
        r.counts = i % 12 == 0;
        r.status = (bp_res_status_t)((i / 6) % BP_RS_COUNT);
        if (r.status <= BP_RS_DRIFT) { /* compared: one element differs */
            r.compared = true;
            r.cmp.total = 2;
            r.cmp.mismatched = 1;
        }
        bp_policy_exact(&r.policy);
        FUZZ_CHECK(bp_report_add(&rep, &r), "out of memory");
    }
    bp_report_note(&rep, "%s", field(f, nf, 1));
    bp_report_hint(&rep, field(f, nf, 2));
    bp_rep_opts_t o = {.quiet = size && data[0] % 4 == 1, .verbose = size ? data[0] % 4 / 2 : 0,
                       .first = 4};
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    FUZZ_CHECK(m, "open_memstream");
    bp_rep_text(m, &rep, &o);
    bp_esc_printf(m, "error: %s: %s\n", field(f, nf, 0), field(f, nf, 1));
    fclose(m);
    fuzz_text_check("bp_rep_text", buf, len);
    free(buf);
    bp_report_free(&rep);
    free(f);
    free(text);
    return 0;
}
