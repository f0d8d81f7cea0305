/* What the commands that run over ranks share (cli.h): bitprobe's own
 * launch of W copies of itself, one per GPU, and a rank's unique id. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "ranks.h"

bp_status bp_cli_rank_id(const bp_ranks_env_t *e, bp_nccl_id_t *id, char *path, size_t n,
                         bp_error_t *err)
{
    path[0] = '\0';
    if (e->self) {
        const char *hex = getenv("BP_NCCL_ID");
        return hex ? bp_ranks_id_parse(hex, id, err)
                   : bp_error_set(err, BP_EINPUT, "BP_RANKS_CHILD is set without BP_NCCL_ID");
    }
    bp_status st = bp_ranks_id_path(path, n, err);
    if (st)
        return st;
    if (e->rank != 0)
        return bp_ranks_id_wait(path, bp_ranks_timeout(), id, err);
    if ((st = bp_nccl_load(err)))
        return st;
    bp_nccl_result_t r = BP_NCCL(ncclGetUniqueId)(id);
    return r ? bp_nccl_fail(err, "ncclGetUniqueId", r, NULL)
             : bp_ranks_id_publish(path, id, err);
}

int bp_cli_ranks_launch(const char *cmd, int W, int argc, char **argv)
{
#ifdef BP_HAVE_CUDA
    bp_error_t err = {0};
    json_t *env = bp_be_cuda_env(&err);
    int ngpu = env ? (int)json_array_size(json_object_get(env, "devices")) : 0;
    json_decref(env);
    if (!env) {
        fprintf(stderr, "bitprobe %s: --ranks needs CUDA GPUs: %s\n", cmd, err.msg);
        return BP_EXIT_TROUBLE;
    }
    if (ngpu < W) {
        fprintf(stderr, "bitprobe %s: --ranks %d needs %d GPUs, one per rank; %d %s "
                        "visible\n", cmd, W, W, ngpu, ngpu == 1 ? "is" : "are");
        return BP_EXIT_TROUBLE;
    }
    if (bp_nccl_load(&err))
        return bp_cli_fail(&err);
    bp_nccl_id_t id;
    bp_nccl_result_t r = BP_NCCL(ncclGetUniqueId)(&id);
    if (r) {
        bp_nccl_fail(&err, "ncclGetUniqueId", r, NULL);
        return bp_cli_fail(&err);
    }
    char **av = calloc((size_t)argc + 2, sizeof *av);
    if (!av)
        return BP_EXIT_TROUBLE;
    av[0] = (char *)"bitprobe";
    for (int i = 0; i < argc; i++)
        av[i + 1] = argv[i];
    int status = BP_EXIT_TROUBLE;
    bp_status st = bp_ranks_launch(W, av, &id, 30.0, &status, &err);
    free(av);
    if (st)
        return bp_cli_fail(&err);
    return status;
#else
    (void)W;
    (void)argc;
    (void)argv;
    fprintf(stderr, "bitprobe %s: --ranks needs CUDA GPUs: this bitprobe was built without "
                    "CUDA\n", cmd);
    return BP_EXIT_TROUBLE;
#endif
}
