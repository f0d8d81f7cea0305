/* The environment fingerprint of this host: tool version and build, CPU
 * model, compiler, library versions and, when built with CUDA, the GPUs. */
#ifndef BP_ENVINFO_H
#define BP_ENVINFO_H

#include <jansson.h>

/* A new JSON object (caller owns it).  Never fails short of memory: parts
 * that cannot be read say why instead of a value. */
json_t *bp_envinfo_collect(void);
/* The host part alone (no GPU query: cheap, no CUDA context). */
json_t *bp_envinfo_host(void);

#endif
