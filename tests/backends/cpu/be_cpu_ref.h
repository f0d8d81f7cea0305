/* Helpers shared by the CPU backend's test files: building and running
 * ops by hand, MPFR's correct rounding to each format, hashing of output
 * bits, a seeded generator. */
#ifndef BP_TEST_BE_CPU_REF_H
#define BP_TEST_BE_CPU_REF_H

#include <check.h>
#include <mpfr.h>
#include <stdbool.h>
#include <stdint.h>

#include "be_cpu.h"

extern bp_error_t err;

typedef struct {
    int prec;
    mpfr_exp_t emin, emax;
} fmt_t;

/* Operations rounded by mp_round; MP_SET rounds a itself. */
typedef enum {
    MP_ADD,
    MP_SUB,
    MP_MUL,
    MP_DIV,
    MP_SQRT,
    MP_RECIP,
    MP_SET
} mp_op_t;

/* The CPU backend modelling ATen's capability isa (AUTO: as bitprobe
 * picks it here) beside oneDNN's ISA of a host of that capability
 * (avx512_core_fp16, avx2, sse41); cpu_math and cpu model AVX2, whatever
 * the host; cpu_onednn names oneDNN's ISA. */
bp_backend_t *cpu_isa(bp_cpu_math_t m, bp_cpu_isa_t isa);
bp_backend_t *cpu_onednn(bp_cpu_math_t m, bp_cpu_isa_t isa, bp_onednn_isa_t onednn);
bp_backend_t *cpu_math(bp_cpu_math_t m);
bp_backend_t *cpu(void);
/* The backend of math m under capability isa has this key, and its
 * fingerprint records the capability cap (from --cpu-isa) and lanes fp32
 * lanes. */
void ck_isa_key(bp_cpu_math_t m, bp_cpu_isa_t isa, const char *key, const char *cap,
                int lanes);
void set_vec_bytes(bp_backend_t *be, int bytes);
/* Runs op with a tensor where a/b is given, else the scalar av/bv (NAN:
 * no argument). */
bp_status run_op(bp_backend_t *be, bp_op_t *op, const bp_buf_t *a, double av,
                 const bp_buf_t *b, double bv, bp_buf_t *out);
/* A zeroed buffer owned by the test: released by ref_release() (a
 * teardown fixture) or earlier by ref_free(). */
bp_buf_t alloc(bp_dtype_t dt, int ndim, const int64_t *shape);
void ref_free(bp_buf_t *b);
void ref_release(void);
bp_buf_t vec_of(bp_dtype_t dt, size_t n);
/* A new buffer holding the op's result; the test fails on error. */
bp_buf_t op2f(bp_backend_t *be, bp_op_kind_t k, bp_form_t form,
              const bp_buf_t *a, double av, const bp_buf_t *b, double bv,
              bp_dtype_t dt, int ndim, const int64_t *shape);
/* Same, default formulation, shaped like the tensor operand. */
bp_buf_t op2(bp_backend_t *be, bp_op_kind_t k, const bp_buf_t *a, double av,
             const bp_buf_t *b, double bv, bp_dtype_t dt);
bp_buf_t arange(bp_backend_t *be, bp_dtype_t dt, double start, double step,
                size_t n);
uint64_t bits(const bp_buf_t *b, size_t i);
uint32_t fbits(float f);
bool isnan_bits(bp_dtype_t dt, uint64_t v);
/* FNV-1a 64 of the element bytes, NaNs canonical. */
uint64_t hash(const bp_buf_t *b);
fmt_t fmt_of(bp_dtype_t dt);
/* Bits of d, a value of dt. */
uint64_t encode(bp_dtype_t dt, double d);
/* op(a, b) correctly rounded to dt, as a double. */
double mp_round(bp_dtype_t dt, mp_op_t op, double a, double b);
uint64_t mp_bits(bp_dtype_t dt, mp_op_t op, double a, double b);
/* Equal bits, or both NaN. */
bool same(bp_dtype_t dt, uint64_t a, uint64_t b);
uint64_t rnd(void);
/* Seeds rnd() and prints the seed. */
void seed(const char *test, uint64_t s);
void fill_random(bp_buf_t *b);
bp_buf_t t50(bp_backend_t *be, bp_dtype_t dt);
/* Every bit pattern of a 16-bit dtype, in order (65536 elements). */
bp_buf_t every16(bp_dtype_t dt);

#define ck_hash(buf, want, what)                                              \
    do {                                                                      \
        uint64_t h_ = hash(buf);                                              \
        ck_assert_msg(h_ == (want),                                           \
                      "%s: hash %016llx, PyTorch's %016llx (elements 0..2: "  \
                      "%llx %llx %llx)",                                      \
                      what, (unsigned long long)h_,                           \
                      (unsigned long long)(want),                             \
                      (unsigned long long)bits(buf, 0),                       \
                      (unsigned long long)bits(buf, 1 % (buf)->numel),        \
                      (unsigned long long)bits(buf, 2 % (buf)->numel));       \
    } while (0)

#define ck_bits(buf, i, want)                                                 \
    do {                                                                      \
        uint64_t g_ = bits(buf, i);                                           \
        ck_assert_msg(g_ == (uint64_t)(want),                                 \
                      "element %zu: got %a (0x%llx), want %a (0x%llx)",       \
                      (size_t)(i), bp_buf_get(buf, i),                        \
                      (unsigned long long)g_,                                 \
                      bp_dtype_bits_to_double((buf)->dtype, (want)),          \
                      (unsigned long long)(want));                            \
    } while (0)

#endif
