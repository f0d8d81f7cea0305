/* The environment fingerprint of this host: tool version and build, CPU
 * model, compiler, library versions and, when built with CUDA, the GPUs. */
#ifndef BP_ENVINFO_H
#define BP_ENVINFO_H

#include <jansson.h>
#include <stddef.h>

/* A new JSON object (caller owns it).  Never fails short of memory: parts
 * that cannot be read say why instead of a value. */
json_t *bp_envinfo_collect(void);
/* The host part alone (no GPU query: cheap, no CUDA context). */
json_t *bp_envinfo_host(void);

/* The NCCL a collective would load (libnccl.so.2 by the loader's search,
 * or $BP_NCCL_LIB): {"version", "file"}, or {"none": why}.  Not part of
 * the fingerprint: a fact about this host's collectives, for `env`. */
json_t *bp_envinfo_nccl(void);

/* The NVIDIA kernel driver's version as nvidia-smi shows it ("580.65.06"),
 * from /proc/driver/nvidia/version, or "unknown". */
void bp_envinfo_nvidia_driver(char *out, size_t n);

#endif
