/* One process per GPU, as training jobs run: who this process is, how the
 * ranks agree on NCCL's unique id, and bitprobe's own launch of W copies
 * of itself.  No transport of bitprobe's own: NCCL moves the data; the
 * launchers' variables say who is who; the 128-byte unique id travels in
 * the environment (bitprobe's launch) or through a file (a launcher's).
 *
 * Launchers recognised, first match wins:
 *   RANK, WORLD_SIZE, LOCAL_RANK            torchrun (and bitprobe's own)
 *   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK  Open MPI's mpirun
 *   SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID srun
 * LOCAL_RANK picks the GPU (CUDA_VISIBLE_DEVICES applies).
 *
 * The unique id under a launcher: rank 0 creates it and writes it
 * (atomically: a temporary file renamed) to $BP_NCCL_ID_FILE, or, on one
 * host, to ${TMPDIR:-/tmp}/bitprobe-nccl-<job>.id where <job> is the
 * first of TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID,
 * OMPI_MCA_ess_base_jobid, MASTER_ADDR-MASTER_PORT that is set; the other
 * ranks wait for the file (BP_NCCL_TIMEOUT seconds, default 120).  Rank 0
 * removes it when its run ends.  Over several hosts, BP_NCCL_ID_FILE must
 * name a file on a shared filesystem. */
#ifndef BP_RANKS_H
#define BP_RANKS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "nccl_dl.h"

typedef struct {
    int rank, world, local_rank;
    const char *launcher; /* "bitprobe", "torchrun", "Open MPI", "Slurm" */
    bool self;            /* started by bitprobe's own launch */
} bp_ranks_env_t;

/* The launcher's variables; *found false (BP_OK) when none are set.
 * BP_EINPUT naming the variable when one is not a number, a rank is not
 * below the world size, or one of a set is missing. */
bp_status bp_ranks_env(bp_ranks_env_t *e, bool *found, bp_error_t *err);

#define BP_RANKS_ID_HEX (2 * BP_NCCL_ID_BYTES + 1)
void bp_ranks_id_hex(const bp_nccl_id_t *id, char out[BP_RANKS_ID_HEX]);
bp_status bp_ranks_id_parse(const char *hex, bp_nccl_id_t *id, bp_error_t *err);

/* Where the id goes under a launcher (see above); BP_EINPUT when nothing
 * names a job. */
bp_status bp_ranks_id_path(char *out, size_t n, bp_error_t *err);
bp_status bp_ranks_id_publish(const char *path, const bp_nccl_id_t *id, bp_error_t *err);
/* Waits until path holds an id (polling), at most timeout_s seconds. */
bp_status bp_ranks_id_wait(const char *path, double timeout_s, bp_nccl_id_t *id,
                           bp_error_t *err);
/* BP_NCCL_TIMEOUT, or 120. */
double bp_ranks_timeout(void);

/* Starts `world` copies of this program (/proc/self/exe) with argv, each
 * with RANK, WORLD_SIZE, LOCAL_RANK = r, BP_RANKS_CHILD=1 and
 * BP_NCCL_ID=<id in hex>, and waits for them.  *status: the worst exit
 * status (0 < 1 < 2; killed by a signal counts as 2).  Once one copy
 * fails, the others get grace_s seconds (they may be waiting in NCCL for
 * the one that died) before each is sent SIGTERM. */
bp_status bp_ranks_launch(int world, char **argv, const bp_nccl_id_t *id, double grace_s,
                          int *status, bp_error_t *err);

/* The shards of n elements over W ranks (stack.h: [r*n/W, (r+1)*n/W))
 * padded for an all-gather, which sends equal counts: every rank sends
 * `count` = the longest shard; rank r's elements land at r*count in the
 * padded buffer of W*count and move to lo(r) in the tensor. */
size_t bp_ranks_gather_count(size_t n, int world);

#endif
