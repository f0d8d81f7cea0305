/* NCCL, opened with dlopen when a command first needs it (dl.h):
 * libnccl.so.2 from the CUDA toolkit's library directory (the run path),
 * the usual search, or the file BP_NCCL_LIB names (PyTorch's wheels carry
 * one under nvidia/nccl/lib).  The few types and functions bitprobe uses
 * are declared here, so that the build needs no nccl.h: NCCL keeps them
 * ABI-stable across 2.x (tests/backends/check_ranks.c checks them against nccl.h
 * where the toolkit has it).  Callers name each function through
 * BP_NCCL(f) after bp_nccl_load has succeeded. */
#ifndef BP_NCCL_DL_H
#define BP_NCCL_DL_H

#include <stddef.h>

#include "error.h"

typedef struct bp_nccl_comm *bp_nccl_comm_t; /* ncclComm_t */
#define BP_NCCL_ID_BYTES 128                 /* NCCL_UNIQUE_ID_BYTES */
typedef struct {
    char internal[BP_NCCL_ID_BYTES];
} bp_nccl_id_t; /* ncclUniqueId */
typedef int bp_nccl_result_t; /* ncclResult_t: 0 ncclSuccess */
/* ncclDataType_t and ncclRedOp_t values */
enum {
    BP_NCCL_INT32 = 2,
    BP_NCCL_INT64 = 4,
    BP_NCCL_FLOAT16 = 6,
    BP_NCCL_FLOAT32 = 7,
    BP_NCCL_FLOAT64 = 8,
    BP_NCCL_BFLOAT16 = 9
};
enum { BP_NCCL_SUM = 0, BP_NCCL_MAX = 2, BP_NCCL_AVG = 4 /* NCCL 2.10 and later */ };

/* The first fields of ncclConfig_t, as NCCL 2.17 laid them out (later
 * versions append fields and read only those their caller's `version`
 * has): ncclCommInitRankConfig takes it with size = sizeof, magic =
 * BP_NCCL_CONFIG_MAGIC, version = BP_NCCL_CONFIG_VERSION and every other
 * field BP_NCCL_UNDEF_INT or NULL (NCCL_CONFIG_INITIALIZER's values). */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
    int splitShare;
} bp_nccl_config_t;
#define BP_NCCL_CONFIG_MAGIC 0xcafebeefu
#define BP_NCCL_CONFIG_VERSION 21700 /* NCCL_VERSION(2, 17, 0) */
#define BP_NCCL_UNDEF_INT (-2147483647 - 1)
/* A config with every field left to NCCL. */
void bp_nccl_config_init(bp_nccl_config_t *c);

/* stream: a cudaStream_t */
typedef struct {
    bp_nccl_result_t (*ncclGetVersion)(int *version);
    bp_nccl_result_t (*ncclGetUniqueId)(bp_nccl_id_t *id);
    bp_nccl_result_t (*ncclCommInitRank)(bp_nccl_comm_t *comm, int nranks, bp_nccl_id_t id,
                                         int rank);
    bp_nccl_result_t (*ncclCommDestroy)(bp_nccl_comm_t comm);
    bp_nccl_result_t (*ncclCommAbort)(bp_nccl_comm_t comm);
    bp_nccl_result_t (*ncclAllGather)(const void *send, void *recv, size_t sendcount,
                                      int dtype, bp_nccl_comm_t comm, void *stream);
    bp_nccl_result_t (*ncclAllReduce)(const void *send, void *recv, size_t count, int dtype,
                                      int op, bp_nccl_comm_t comm, void *stream);
    bp_nccl_result_t (*ncclReduceScatter)(const void *send, void *recv, size_t recvcount,
                                          int dtype, int op, bp_nccl_comm_t comm,
                                          void *stream);
    bp_nccl_result_t (*ncclCommInitRankConfig)(bp_nccl_comm_t *comm, int nranks,
                                               bp_nccl_id_t id, int rank,
                                               bp_nccl_config_t *config);
    bp_nccl_result_t (*ncclBroadcast)(const void *send, void *recv, size_t count, int dtype,
                                      int root, bp_nccl_comm_t comm, void *stream);
    const char *(*ncclGetErrorString)(bp_nccl_result_t r);
    const char *(*ncclGetLastError)(bp_nccl_comm_t comm);
} bp_nccl_t;

extern bp_nccl_t bp_nccl_fns;

/* Opens libnccl.so.2 (or $BP_NCCL_LIB) once per process, from any
 * thread; BP_EUNAVAIL naming the library and dlerror's reason when it or
 * one of the functions is missing. */
bp_status bp_nccl_load(bp_error_t *err);
/* "2.28.9" from ncclGetVersion (after bp_nccl_load). */
void bp_nccl_version(char *out, size_t n);
/* NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z, or 0 when unknown. */
int bp_nccl_version_code(void);
/* The file the library was loaded from (after bp_nccl_load), as the
 * dynamic loader found it: "" when unknown. */
void bp_nccl_file(char *out, size_t n);
/* A failed NCCL call into err: the call, NCCL's error string and, with a
 * communicator, its last error message. */
bp_status bp_nccl_fail(bp_error_t *err, const char *call, bp_nccl_result_t r,
                       bp_nccl_comm_t comm);

#define BP_NCCL(f) (bp_nccl_fns.f)

#endif
