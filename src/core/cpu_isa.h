/* ATen's CPU capability: which build of its vectorised kernels PyTorch runs
 * on this host (AVX-512, AVX2 or the portable DEFAULT build), chosen as
 * aten/src/ATen/native/DispatchStub.cpp does, so that the CPU backend can
 * model the same register width and SLEEF entry points.
 *
 * ATen takes ATEN_CPU_CAPABILITY when it is avx512, avx2 or default (any
 * other value is ignored with a warning), else asks cpuinfo: AVX512 needs
 * avx512vl, avx512bw, avx512dq and fma3; AVX2 needs avx2 and fma3; else
 * DEFAULT.  bitprobe's --cpu-isa comes first, then the same two steps. */
#ifndef BP_CPU_ISA_H
#define BP_CPU_ISA_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef enum {
    BP_CPU_ISA_AUTO,    /* ATEN_CPU_CAPABILITY, else what this CPU offers */
    BP_CPU_ISA_DEFAULT, /* ATen's portable build: std:: math per lane */
    BP_CPU_ISA_AVX2,
    BP_CPU_ISA_AVX512
} bp_cpu_isa_t;

/* "auto", "default", "avx2", "avx512". */
const char *bp_cpu_isa_name(bp_cpu_isa_t i);
bool bp_cpu_isa_parse(const char *s, bp_cpu_isa_t *out);

/* A library's ISA level by the name its environment variable takes (MKL,
 * oneDNN), case-insensitive: the index of s in names[0..n), else the level
 * its alias names; -1 where neither does. */
typedef struct {
    const char *name;
    int level;
} bp_isa_alias_t;
int bp_isa_lookup(const char *s, const char *const *names, size_t n,
                  const bp_isa_alias_t *aliases, size_t naliases);

/* ATen's choice from this CPU's features alone. */
bp_cpu_isa_t bp_cpu_isa_detect(void);
/* Whether this CPU can run the entry points isa needs (AVX-512 F/BW/DQ/VL
 * and FMA; AVX2 and FMA; DEFAULT always). */
bool bp_cpu_isa_supported(bp_cpu_isa_t isa);

/* The capability to model: want unless it is AUTO, else ATen's choice
 * (ATEN_CPU_CAPABILITY, then the CPU's features).  *source says which
 * ("--cpu-isa", "ATEN_CPU_CAPABILITY", "detected"); *ignored is set to the
 * environment value when ATen would ignore it (NULL otherwise).  Fails
 * (BP_EUNAVAIL) when the CPU cannot run what was asked for. */
bp_status bp_cpu_isa_resolve(bp_cpu_isa_t want, bp_cpu_isa_t *got, const char **source,
                             const char **ignored, bp_error_t *err);

#endif
