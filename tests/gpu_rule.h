/* When a GPU test may skip: the rule of tests/cli/lib.sh (need_gpu,
 * gpu_skip), for the C suites.  A GPU suite calls bp_test_gpu_skip() with
 * bitprobe's reason when no CUDA device is usable, and returns what it
 * returns from main:
 *   - 77 (SKIP) where the machine has no GPU at all: no NVIDIA device
 *     node, and the reason is a missing driver or device;
 *   - 1 (FAIL) where a device node is present (the GPU is there, bitprobe
 *     failed to use it: a detection regression, a driver too old, a
 *     failing CUDA call), or the reason is anything else;
 *   - 1 (FAIL) whenever BP_REQUIRE_GPU=1 (the GPU machine's sessions: a
 *     skip there means the GPU tests did not run).
 * CUDA_VISIBLE_DEVICES set to "", -1 or NoDevFiles hides the device nodes
 * on purpose. */
#ifndef BP_TEST_GPU_RULE_H
#define BP_TEST_GPU_RULE_H

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static bool bp_test_gpu_node(char *path, size_t n)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (v && (!*v || !strcmp(v, "-1") || !strcmp(v, "NoDevFiles")))
        return false;
    glob_t g;
    bool found = glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc > 0;
    if (found)
        snprintf(path, n, "%s", g.gl_pathv[0]);
    globfree(&g);
    return found;
}

/* name: the suite; why: bitprobe's reason (bp_be_cuda_env's message). */
static int bp_test_gpu_skip(const char *name, const char *why)
{
    const char *req = getenv("BP_REQUIRE_GPU");
    char node[256];
    if (req && !strcmp(req, "1")) {
        fprintf(stderr, "%s: FAIL: BP_REQUIRE_GPU=1, but no CUDA device is usable: %s\n",
                name, why);
        return 1;
    }
    if (bp_test_gpu_node(node, sizeof node)) {
        fprintf(stderr, "%s: FAIL: a GPU device is present (%s), but no CUDA device is "
                "usable: %s\n", name, node, why);
        return 1;
    }
    if (!strstr(why, "no CUDA driver") && !strstr(why, "no CUDA device")) {
        fprintf(stderr, "%s: FAIL: no CUDA device is usable for a reason other than a "
                "missing GPU: %s\n", name, why);
        return 1;
    }
    printf("%s: SKIP: no GPU here (%s)\n", name, why);
    return 77;
}

/* The start of a Check suite on the cuda backend: its cases run in this
 * process (a CUDA context does not survive fork(); srunner_run_all reads
 * CK_FORK), and the backend must open.  -1: go on; otherwise what main
 * returns, by the rule above. */
static inline int bp_test_cuda_suite(const char *name)
{
    setenv("CK_FORK", "no", 1);
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    if (bp_backend_open("cuda", NULL, &be, &err) != BP_OK)
        return bp_test_gpu_skip(name, err.msg);
    bp_backend_close(be);
    return -1;
}

#endif
