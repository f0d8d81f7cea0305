/* A collective configuration: what NCCL is told when a communicator
 * starts (NCCL_ALGO, NCCL_PROTO, the channel count) and, for a caller that
 * cuts its data, the bucket size; its name and parser; sizes in bytes; and
 * the communicator opened with it.  Shared by `stack --ranks` and
 * `invariance --collective`.
 *
 * NCCL reads NCCL_ALGO and NCCL_PROTO (getenv, src/graph/tuning.cc) each
 * time a communicator starts: they are set around the ncclCommInitRank*
 * call and restored.  NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS are read
 * once per process (NCCL_PARAM caches them): a channel count per
 * communicator goes through ncclConfig_t's minCTAs = maxCTAs instead
 * (src/graph/connect.cc applies both the same way; NCCL 2.17 and later). */
#ifndef BP_NCCL_CFG_H
#define BP_NCCL_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "nccl_dl.h"

typedef struct {
    char algo[16];   /* NCCL_ALGO: "Ring", "Tree", ...; "" NCCL's choice */
    char proto[8];   /* NCCL_PROTO: "LL", "LL128", "Simple"; "" */
    int nch;         /* channels (ncclConfig_t minCTAs = maxCTAs); 0 */
    uint64_t bucket; /* bytes per call (stack --ranks); 0: one call */
} bp_coll_cfg_t;

/* NCCL's algorithm and protocol names, NULL-terminated, in NCCL's spelling
 * (src/graph/tuning.cc: ncclAlgoStr, ncclProtoStr). */
extern const char *const bp_coll_algos[];
extern const char *const bp_coll_protos[];
/* The orders only the CPU emulation knows ("Pairwise", "Rank"): a
 * configuration may name them, NCCL cannot run them. */
extern const char *const bp_coll_emu_algos[];
bool bp_coll_cfg_is_nccl(const bp_coll_cfg_t *c);

/* "default", "Ring", "Ring/LL128", "Tree/Simple/4ch", "Ring/bucket=1M". */
void bp_coll_cfg_name(const bp_coll_cfg_t *c, char *out, size_t n);
/* One configuration: fields separated by '/': an algorithm (or "default"),
 * a protocol, "<N>ch", "bucket=SIZE", each at most once, in any order
 * after the algorithm; names case-insensitive.  BP_EINPUT naming the
 * field. */
bp_status bp_coll_cfg_parse(const char *s, bp_coll_cfg_t *c, bp_error_t *err);
bool bp_coll_cfg_equal(const bp_coll_cfg_t *a, const bp_coll_cfg_t *b);
/* The configurations of --algo, --proto and --channels (comma-separated;
 * "all" takes every NCCL name; "default" leaves the choice to NCCL):
 * "default" first, then every algorithm x protocol x channel count that
 * names something, in the lists' order.  At most max. */
bp_status bp_coll_cfg_expand(const char *algos, const char *protos, const char *channels,
                             bp_coll_cfg_t *out, size_t max, size_t *n, bp_error_t *err);

/* "1K", "256M", "1.5G", "4096" (binary K, M, G, T; a trailing "B" or "iB"
 * allowed) into bytes; false when not a size of 1 byte to 1 TiB. */
bool bp_coll_bytes_parse(const char *s, uint64_t *out);
/* "1K", "1.5M", "3000", as short as exact. */
void bp_coll_bytes_format(uint64_t b, char *out, size_t n);

/* A communicator of `world` ranks on id with configuration c (NCCL loaded).
 * Not tried, BP_EUNAVAIL saying why: NVLS and NVLSTree where
 * NCCL_NVLS_ENABLE=0 (NVLink multicast kept off: bitprobe never turns it
 * on), CollNet where NCCL_COLLNET_ENABLE is not 1, a channel count before
 * NCCL 2.17, an emulation-only order; NCCL refusing to start one is
 * BP_EUNAVAIL too, with NCCL's words. */
bp_status bp_nccl_cfg_open(const bp_coll_cfg_t *c, int world, const bp_nccl_id_t *id, int rank,
                           bp_nccl_comm_t *out, bp_error_t *err);

#endif
