/* fingerprint: small crafted probes, built in C, that reveal how a backend
 * implements arithmetic: each item runs a few ops on the backend, compares
 * the bits with the formulations it could be using (computed here on the
 * host with explicit roundings), and states a verdict with its evidence
 * (inputs and outputs in hex).  Items (key: verdicts):
 *  - div_scalar, div_tensor: "true" (a / b rounded once) or "reciprocal"
 *    (a * fl(1/b)), over the 64 quotients i / 10;
 *  - fma: "on" or "off": arange(-3, 1, 1 + 2^-23) element 3 is
 *    -3 + 3*step, 0x34c00000 rounded once (fused, or computed wider),
 *    0x35000000 rounded twice;
 *  - subnormals: "kept", "ftz" (results flushed), "daz" (inputs read as
 *    zero) or "ftz+daz": 2^-140 * 2^20, 2^-126 * 0.5, 2^-140 * 1;
 *  - matmul_fp32: "fp32" or "tf32": [1+2^-20] x 4 dot [1] x 4 is exactly
 *    4 + 2^-18 (0x40800008) in any order; TF32 inputs (10 mantissa bits)
 *    give 4 (0x40800000);
 *  - matmul_bf16: "fp32-accumulate" or "bf16-accumulate": 1024 ones dot
 *    1024 ones in bf16 is 1024 (0x4480); a left-to-right bf16 accumulator
 *    stops at 256 (0x4380);
 *  - nan_bf16: "canonical-7fff", "canonical-7fc0", "payload-kept" (the
 *    upper 16 bits, quieted) or "other": the f32 NaNs 0x7fc12345,
 *    0xffa00001, 0x7f800001 cast to bf16;
 *  - arange: "float" (start + step*i in float), "double" (in double,
 *    rounded to float), "aten-cpu" (ATen's CPU kernel: a double base
 *    per 8-lane register rounded to float, lanes base + k*step in double)
 *    or "other": arange(0, 64, 0.1), 640 elements;
 *  - sin, cos, exp, log, pow: accuracy class against the oracle on 4096
 *    fixed inputs (the counter generator): "correctly-rounded", "1-ulp" or
 *    "N-ulp" (the greatest distance in ulps).
 * The library never prints; cmd_fingerprint.c renders the table. */
#ifndef BP_FINGERPRINT_H
#define BP_FINGERPRINT_H

#include <jansson.h>
#include <stddef.h>

#include "backend.h"
#include "error.h"
#include "probe_build.h"

#define BP_FP_MAX_ITEMS 16

typedef struct bp_fp_item {
    const char *key;   /* "div_scalar" */
    const char *title; /* "tensor / scalar" */
    char verdict[32];  /* "reciprocal" */
    char summary[160]; /* what the verdict means */
    char evidence[640];
} bp_fp_item_t;

/* Runs every item on be (and the oracle, opened here unless be is it);
 * items receives up to BP_FP_MAX_ITEMS, *n how many. */
bp_status bp_fingerprint_run(bp_backend_t *be, bp_fp_item_t *items, size_t *n,
                             bp_error_t *err);
/* {"<key>": {"title", "verdict", "summary", "evidence"}, ...} */
json_t *bp_fingerprint_json(const bp_fp_item_t *items, size_t n);
/* Both in one: the "behaviour" object stored with a backend's fingerprint. */
bp_status bp_fingerprint_probe(bp_backend_t *be, json_t **out, bp_error_t *err);

/* Items with host-side candidates (fingerprint_math.c). */
typedef struct bp_fp_ctx {
    bp_backend_t *be, *oracle;
} bp_fp_ctx_t;
bp_status bp_fp_matmul_fp32(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err);
bp_status bp_fp_matmul_bf16(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err);
bp_status bp_fp_arange(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err);
/* fn: one of BP_OP_SIN, COS, EXP, LOG, POW (10 ** x). */
bp_status bp_fp_accuracy(bp_fp_ctx_t *c, bp_op_kind_t fn, bp_fp_item_t *it,
                         bp_error_t *err);

/* Each item's probe (probe_build.h) has at most BP_FP_MAX_OPS ops, its
 * last op's buffer the output. */
#define BP_FP_MAX_OPS 4
void bp_fp_probe_init(bp_probe_build_t *m, const char *name);
/* Runs m in f32 (its ops name their own dtypes) into bufs[BP_FP_MAX_OPS]. */
bp_status bp_fp_probe_run(bp_backend_t *be, bp_probe_build_t *m, bp_buf_t *bufs,
                          bp_error_t *err);

#endif
