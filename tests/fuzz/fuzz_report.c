/* Fuzz target: the report JSON reader (report_read.h) from memory.  A
 * failure names the input; a report read is written back as JSON and read
 * again to the same JSON (a round trip changes nothing), and is rendered
 * as text, JUnit and Markdown (the text's lines keep text_check.h's
 * promises whatever the names in the report). */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rep.h"
#include "report_read.h"
#include "text_check.h"

static char *json_of(const bp_report_t *rep)
{
    json_t *j = bp_rep_json_build(rep);
    FUZZ_CHECK(j, "out of memory");
    char *s = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(j);
    FUZZ_CHECK(s, "out of memory");
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bp_report_t rep, again;
    bp_error_t e = {0};
    bp_status st = bp_report_parse((const char *)data, size, "fuzz.json", &rep, &e);
    if (st) {
        FUZZ_CHECK_FAIL(st, &e, "fuzz.json");
        return 0;
    }
    char *s = json_of(&rep);
    st = bp_report_parse(s, strlen(s), "again.json", &again, &e);
    FUZZ_CHECK(st == BP_OK, "its own JSON does not read back: %s", e.msg);
    char *t = json_of(&again);
    FUZZ_CHECK(strcmp(s, t) == 0, "the round trip changed the report");
    free(s);
    free(t);
    bp_report_free(&again);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    FUZZ_CHECK(m, "open_memstream");
    bp_rep_opts_t o = {.verbose = 2, .first = 4};
    bp_rep_text(m, &rep, &o);
    fclose(m);
    fuzz_text_check("report text", buf, len);
    free(buf);
    m = fopen("/dev/null", "w");
    FUZZ_CHECK(m, "/dev/null");
    bp_rep_junit(m, &rep);
    bp_rep_markdown(m, &rep);
    fclose(m);
    bp_report_free(&rep);
    return 0;
}
