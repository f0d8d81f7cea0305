/* Fuzz target: the saved-run manifest reader from memory. */
#include <string.h>

#include "bundle.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *m = NULL;
    bp_error_t e = {0};
    bp_status st = bp_bundle_parse_manifest((const char *)data, size,
                                            "fuzz/manifest.json", &m, &e);
    if (st) {
        FUZZ_CHECK(m == NULL, "a failed read returned a manifest");
        FUZZ_CHECK_FAIL(st, &e, "fuzz/manifest.json");
        return 0;
    }
    /* What the reader promises: tool is bitprobe, files are at most
     * BP_BUNDLE_MAX_FILES relative paths that never climb out. */
    FUZZ_CHECK(json_is_object(m), "not an object");
    const char *tool = json_string_value(json_object_get(m, "tool"));
    FUZZ_CHECK(tool && strcmp(tool, "bitprobe") == 0, "tool");
    json_t *files = json_object_get(m, "files");
    FUZZ_CHECK(json_is_array(files) &&
                   json_array_size(files) <= BP_BUNDLE_MAX_FILES,
               "files");
    for (size_t i = 0; i < json_array_size(files); i++) {
        const char *f = json_string_value(json_array_get(files, i));
        FUZZ_CHECK(f && *f && f[0] != '/', "files[%zu]", i);
        for (const char *s = f; (s = strstr(s, "..")); s++)
            FUZZ_CHECK(!((s == f || s[-1] == '/') && (s[2] == '/' || !s[2])),
                       "files[%zu] = '%s' climbs out", i, f);
    }
    json_decref(m);
    return 0;
}
