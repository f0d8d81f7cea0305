/* Shared harness of the CUDA backend tests (check_be_cuda*.c): the open
 * backend, buffers with host and device copies, running one op, and
 * bitwise / ulp expectations reported in %a and hex. */
#ifndef BE_CUDA_HARNESS_H
#define BE_CUDA_HARNESS_H

#include <check.h>
#include <stdint.h>

#include "backend.h"

extern bp_backend_t *tb_be;

uint64_t tb_rand(void);
float tb_rand_float(int lo_exp, int hi_exp);

void tb_check(bp_status st, const bp_error_t *err, const char *what);
/* Host buffer (zeroed) plus a device buffer. */
void tb_make(bp_buf_t *b, bp_dtype_t dt, int ndim, const int64_t *shape);
void tb_make1(bp_buf_t *b, bp_dtype_t dt, int64_t n);
void tb_upload(bp_buf_t *b);
void tb_download(bp_buf_t *b);
void tb_drop(bp_buf_t *b);

/* A zeroed op of kind (slice step 1); operands are set by the caller. */
bp_op_t tb_op(bp_op_kind_t kind);
void tb_arg_scalar(bp_arg_t *arg, double v);
/* Runs op on the backend and downloads out (out made by tb_make). */
bp_status tb_try(bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
                 const bp_buf_t *const *inputs, int ninputs, bp_buf_t *out,
                 bp_error_t *err);
void tb_exec(bp_op_t *op, const bp_buf_t *a, const bp_buf_t *b,
             bp_buf_t *out);

/* Bits of the f32 value v stored in dt (round to nearest even). */
uint64_t tb_bits_of(bp_dtype_t dt, float v);
/* v rounded to dt and widened back to f32. */
float tb_round(bp_dtype_t dt, float v);
void tb_expect_bits(const bp_buf_t *got, size_t i, uint64_t want,
                    const char *what);
uint64_t tb_ulps(const bp_buf_t *got, size_t i, double ref);

TCase *tb_tcase_backend(void);
TCase *tb_tcase_seed(void);
TCase *tb_tcase_elementwise(void);
TCase *tb_tcase_data(void);

/* Builders of the seed formulations (check_be_cuda_ops.c), also used to
 * write the fidelity dump.  Outputs are made by the builder, downloaded. */
void tb_arange(bp_dtype_t dt, double start, double end, double step,
               bp_buf_t *out);
void tb_seed_div(bp_dtype_t dt, bp_form_t form, bp_buf_t *out);
void tb_seed_inv_freq(bp_dtype_t dt, bp_buf_t *e, bp_buf_t *p);
void tb_rope(int dim, int64_t positions, double base, bp_buf_t *inv,
             bp_buf_t *emb, bp_buf_t *cosb, bp_buf_t *sinb);

#endif
