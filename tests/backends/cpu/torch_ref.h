/* PyTorch's CPU results for the CPU backend's tests, by case name: the
 * FNV-1a 64 of a result's bits (NaNs as one pattern, be_cpu_ref.c's
 * hash()), read from tests/data/torch/torch_cpu.json.  That file is
 * written by tests/refs/torch_cpu_ref.py, which states each case's
 * PyTorch expression, dtype, ATen CPU capability and threads, and records
 * the PyTorch version and build it ran on; torch_compare.py checks a new
 * run against it.  A case named here that the file lacks fails the test
 * (torch_ref) or is reported as not checked (torch_ref_find). */
#ifndef BP_TEST_TORCH_REF_H
#define BP_TEST_TORCH_REF_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_files.h"

/* The cases object of the file, loaded once per process; NULL, with the
 * reason in torch_ref_why, where it cannot be read.  (No ck_assert here:
 * main() calls it too, outside any test.) */
static char torch_ref_why[1536];

static inline json_t *torch_ref_cases(void)
{
    static json_t *doc;
    if (!doc) {
        char path[1024];
        json_error_t je;
        test_data_path("data/torch", "torch_cpu.json", path, sizeof path);
        doc = json_load_file(path, 0, &je);
        if (!doc) {
            snprintf(torch_ref_why, sizeof torch_ref_why, "%s:%d:%d: %s", path, je.line,
                     je.column, je.text);
            return NULL;
        }
    }
    json_t *c = json_object_get(doc, "cases");
    if (!json_is_object(c))
        snprintf(torch_ref_why, sizeof torch_ref_why, "torch_cpu.json has no \"cases\"");
    return json_is_object(c) ? c : NULL;
}

/* Whether the file holds case name; its hash in *h. */
static inline bool torch_ref_find(const char *name, uint64_t *h)
{
    json_t *cases = torch_ref_cases();
    const char *s = json_string_value(json_object_get(json_object_get(cases, name), "fnv1a64"));
    char *end = NULL;
    if (cases && !s)
        snprintf(torch_ref_why, sizeof torch_ref_why,
                 "tests/data/torch/torch_cpu.json has no case '%s' (see "
                 "tests/refs/torch_cpu_ref.py)", name);
    if (!s)
        return false;
    *h = strtoull(s, &end, 16);
    if (*end || end == s) {
        snprintf(torch_ref_why, sizeof torch_ref_why, "torch_cpu.json %s: bad hash '%s'",
                 name, s);
        return false;
    }
    return true;
}

static inline uint64_t torch_ref(const char *name)
{
    uint64_t h = 0;
    if (!torch_ref_find(name, &h))
        ck_abort_msg("%s", torch_ref_why);
    return h;
}

#endif
