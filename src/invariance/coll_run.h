/* The collective sweep: one engine (nccl: this process is one of W ranks;
 * emulate: the CPU plays all W), every configuration, collective, dtype,
 * reduction and message size, into maps (coll_map.h).
 *
 * Every rank runs the same sweep and makes the same calls in the same
 * order (the collectives need all of them); rank 0 alone receives the
 * results and fills the maps.  Configuration-major: a configuration is
 * begun once (NCCL reads NCCL_ALGO and NCCL_PROTO when a communicator
 * starts: one communicator per configuration) and every cell of every map
 * is computed under it: for a reduction the probe message first (its
 * order), then the values; --repeat N computes the values N times, each
 * repeat after a different allocation pattern.  A configuration that
 * cannot run a map's call (NCCL refuses the algorithm for that collective,
 * say) is marked unavailable there with the reason, and that map's larger
 * sizes are not tried under it. */
#ifndef BP_COLL_RUN_H
#define BP_COLL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "coll_map.h"
#include "error.h"
#include "policy.h"
#include "ranks.h"

typedef struct {
    uint32_t ranks_differ; /* ranks whose output is not rank 0's */
    uint64_t copy_differ;  /* all-gather: elements not equal to the inputs */
} bp_coll_info_t;

typedef struct bp_coll_engine bp_coll_engine_t;
struct bp_coll_engine {
    char name[24];     /* "nccl", "emulate" */
    char desc[320];
    char lib[48];      /* "NCCL 2.28.3", or "" */
    int world, rank;   /* emulate: rank 0 of world */
    uint64_t seed;
    void *state;
    /* Starts configuration c (BP_EUNAVAIL, the reason in err: it cannot
     * run here; the sweep goes on). */
    bp_status (*begin)(bp_coll_engine_t *e, const bp_coll_cfg_t *c, bp_error_t *err);
    /* One call: n elements of the message (coll.h) of input `in`; cap:
     * the most elements any call of this map will ask (inputs are made
     * once at that size); rank 0's out (NULL elsewhere) gets the whole
     * result; repeat > 0: after another allocation pattern.  BP_EUNAVAIL:
     * this configuration cannot make this call (the engine is ready for
     * the next one). */
    bp_status (*run)(bp_coll_engine_t *e, bp_coll_kind_t k, bp_coll_redop_t op, bp_dtype_t dt,
                     bp_coll_input_t in, uint64_t n, uint64_t cap, int repeat, void *out,
                     bp_coll_info_t *info, bp_error_t *err);
    void (*end)(bp_coll_engine_t *e);
    void (*close)(bp_coll_engine_t *e);
};

/* The CPU's emulation for W ranks (coll_emu.h). */
bp_status bp_coll_engine_emulate(int world, uint64_t seed, bp_coll_engine_t **out,
                                 bp_error_t *err);
/* NCCL (coll_nccl.c, CUDA builds): this process is rank env->rank of
 * env->world on GPU env->local_rank; id: the job's unique id (its control
 * communicator); alloc: the fresh-process allocation pattern (0: none;
 * p: p * 37 MiB + p * 4 KiB held on the GPU for the whole run, so that
 * every buffer, NCCL's too, sits elsewhere). */
bp_status bp_coll_engine_nccl(const bp_ranks_env_t *env, const bp_nccl_id_t *id, uint64_t seed,
                              int alloc, bp_coll_engine_t **out, bp_error_t *err);
void bp_coll_engine_close(bp_coll_engine_t *e);

typedef struct {
    bp_coll_kind_t kinds[BP_COLL_NKINDS];
    int nkinds;
    bp_dtype_t dtypes[4];
    int ndtypes;
    bp_coll_redop_t ops[BP_COLL_NOPS];
    int nops;
    const char *bytes;          /* the size list (coll.h) */
    const bp_coll_cfg_t *cfg;
    size_t ncfg;
    int repeat;                 /* >= 1 */
    bool probe;                 /* infer orders */
    bp_policy_t policy;
    /* after each cell (may be NULL) */
    void (*progress)(void *ctx, const bp_coll_map_t *m, size_t s, size_t c);
    void *ctx;
} bp_coll_sweep_opts_t;

/* The sweep on engine e.  The maps (kind-major, then dtype, then
 * reduction) are filled on rank 0 and built, empty, on the others; the
 * caller frees them (bp_coll_map_free, then free). */
bp_status bp_coll_sweep(bp_coll_engine_t *e, const bp_coll_sweep_opts_t *o,
                        bp_coll_map_t **maps, size_t *nmaps, bp_error_t *err);

#endif
