/* oneDNN's CPU ISA: which of its JIT kernels PyTorch's x86 build runs for
 * the ops ATen hands to oneDNN (gelu's erf form: Activation.cpp
 * use_mkldnn), so that the CPU backend can model the same arithmetic.
 *
 * ATen's CPU capability (cpu_isa.h, ATEN_CPU_CAPABILITY) does not reach
 * oneDNN: it picks its own ISA, the best this CPU has
 * (dnnl::get_effective_cpu_isa), capped by ONEDNN_MAX_CPU_ISA (or the older
 * DNNL_MAX_CPU_ISA).  A host runs AVX-512 gelu under
 * ATEN_CPU_CAPABILITY=avx2 unless ONEDNN_MAX_CPU_ISA=AVX2 is set too.
 *
 * bitprobe keeps the ISAs whose arithmetic differs (oneDNN's cpu_isa_t
 * collapsed to what its eltwise injector and ideep's dtype checks see):
 *   none              mkldnn disabled (torch.backends.mkldnn.enabled = False
 *                     or a build without it): ATen's kernels everywhere
 *   sse41             (and avx) no fma: every multiply-add rounded twice
 *   avx2              (and avx2_vnni) fp32 only: ideep's bf16 check needs
 *                     avx2_vnni_2 or better
 *   avx2_vnni_2       fp32, bf16 and fp16
 *   avx512_core       (vnni, bf16) fp32 and bf16; AVX-512's own gelu
 *   avx512_core_fp16  (avx10_1_512 and every AMX level above) fp16 too
 * "auto" resolves as oneDNN does: ONEDNN_MAX_CPU_ISA, capped by what this
 * CPU has, else what it has. */
#ifndef BP_ONEDNN_ISA_H
#define BP_ONEDNN_ISA_H

#include <stdbool.h>

#include "error.h"

typedef enum {
    BP_ONEDNN_AUTO,
    BP_ONEDNN_NONE,
    BP_ONEDNN_SSE41,
    BP_ONEDNN_AVX2,
    BP_ONEDNN_AVX2_VNNI_2,
    BP_ONEDNN_AVX512_CORE,
    BP_ONEDNN_AVX512_CORE_BF16,
    BP_ONEDNN_AVX512_CORE_FP16
} bp_onednn_isa_t;

/* "auto", "none", "sse41", "avx2", "avx2_vnni_2", "avx512_core",
 * "avx512_core_bf16", "avx512_core_fp16". */
const char *bp_onednn_isa_name(bp_onednn_isa_t i);
/* bitprobe's names (above), or any ONEDNN_MAX_CPU_ISA value (case
 * ignored: AVX, AVX2_VNNI, AVX512_CORE_BF16, AVX10_1_512_AMX, ALL, ...),
 * mapped to the level whose arithmetic it runs. */
bool bp_onednn_isa_parse(const char *s, bp_onednn_isa_t *out);
/* The best level this CPU offers oneDNN. */
bp_onednn_isa_t bp_onednn_isa_detect(void);
/* The level to model: want unless AUTO, else ONEDNN_MAX_CPU_ISA (or
 * DNNL_MAX_CPU_ISA) capped by the CPU, else the CPU's.  *source says which
 * ("--onednn-isa", "ONEDNN_MAX_CPU_ISA", "detected").  An environment
 * value oneDNN would not accept fails with the variable and the value. */
bp_status bp_onednn_isa_resolve(bp_onednn_isa_t want, bp_onednn_isa_t *got,
                                const char **source, bp_error_t *err);

#endif
