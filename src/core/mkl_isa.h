/* MKL's code path: which of its sgemm kernels PyTorch's x86 wheels run for
 * an fp32 GEMM (ATen's CPUBlas.cpp gemm calls sgemm_), so that the CPU
 * backend can replay the orders fitted to them (backends/cpu/mkl_sgemm.h).
 *
 * ATen's CPU capability (cpu_isa.h, ATEN_CPU_CAPABILITY) does not reach
 * MKL: it dispatches on the CPU itself, capped by MKL_ENABLE_INSTRUCTIONS;
 * MKL_CBWR (conditional numerical reproducibility, AUTO included: fixed
 * blocking, deterministic reductions) may replace its kernels by others.
 * PyTorch 2.11 under ATEN_CPU_CAPABILITY=avx2 on an AVX-512 host gives
 * the AVX-512 sgemm's bits.
 *
 * bitprobe's levels:
 *   avx512   MKL's AVX-512 path (an Intel CPU with AVX-512 F, BW, DQ and
 *            VL): the path whose orders were fitted (on a Sapphire
 *            Rapids-class host, MKL 2024.2)
 *   avx2     its AVX2 paths (AVX2_E1 too; assumed on CPUs not Intel's)
 *   sse42    older paths (SSE4_2, AVX)
 *   cnr      MKL_CBWR set (but to OFF): reproducible kernels
 * "auto" resolves as MKL does: MKL_CBWR, else MKL_ENABLE_INSTRUCTIONS
 * capped by what this CPU has, else what it has.  Only avx512 has fitted
 * orders; at the others bitprobe keeps its own order and says the
 * results are not PyTorch's. */
#ifndef BP_MKL_ISA_H
#define BP_MKL_ISA_H

#include <stdbool.h>

#include "error.h"

typedef enum {
    BP_MKL_AUTO,
    BP_MKL_CNR,
    BP_MKL_SSE42,
    BP_MKL_AVX2,
    BP_MKL_AVX512
} bp_mkl_isa_t;

/* "auto", "cnr", "sse42", "avx2", "avx512". */
const char *bp_mkl_isa_name(bp_mkl_isa_t i);
/* bitprobe's names (above), or an MKL_ENABLE_INSTRUCTIONS value (case
 * ignored: SSE4_2, AVX, AVX2, AVX2_E1, AVX512, AVX512_E1 ... AVX512_E5,
 * AVX10), mapped to the level whose kernels it runs. */
bool bp_mkl_isa_parse(const char *s, bp_mkl_isa_t *out);
/* The best path this CPU offers MKL. */
bp_mkl_isa_t bp_mkl_isa_detect(void);
/* The level to model: want unless AUTO, else cnr where MKL_CBWR is set
 * (but to OFF), else MKL_ENABLE_INSTRUCTIONS capped by the CPU, else the
 * CPU's.  *source says which ("--mkl-isa", "MKL_CBWR",
 * "MKL_ENABLE_INSTRUCTIONS", "detected").  A value MKL would not accept
 * fails with the variable and the value. */
bp_status bp_mkl_isa_resolve(bp_mkl_isa_t want, bp_mkl_isa_t *got, const char **source,
                             bp_error_t *err);

#endif
