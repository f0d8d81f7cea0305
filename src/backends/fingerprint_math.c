/* fingerprint items about precision: matmul inputs and accumulation, float
 * arange accumulation, and the accuracy of the elementwise functions
 * against the oracle (see fingerprint.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fingerprint.h"

/* One [1, k] x [k, 1] product of constants a and b in dtype dt. */
static bp_status dot(bp_fp_ctx_t *c, bp_dtype_t dt, size_t k, double a, double b,
                     uint64_t *got, bp_error_t *err)
{
    double av[1024], bv[1024]; /* not static: backends open on parallel lanes */
    for (size_t i = 0; i < k; i++) {
        av[i] = a;
        bv[i] = b;
    }
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-matmul");
    bp_op_t *x = bp_probe_build_op(&m, BP_OP_TENSOR, "a", dt);
    x->values = av;
    x->nvalues = k;
    x->ndim = 2;
    x->shape[0] = 1;
    x->shape[1] = (int64_t)k;
    bp_op_t *y = bp_probe_build_op(&m, BP_OP_TENSOR, "b", dt);
    *y = *x;
    y->out = (char *)"b";
    y->values = bv;
    y->shape[0] = (int64_t)k;
    y->shape[1] = 1;
    bp_op_t *p = bp_probe_build_op(&m, BP_OP_MATMUL, "y", BP_NDTYPES);
    p->a = bp_arg_buf(0);
    p->b = bp_arg_buf(1);
    bp_buf_t o[BP_FP_MAX_OPS];
    bp_status st = bp_fp_probe_run(c->be, &m, o, err);
    if (st)
        return st;
    *got = bp_buf_bits(&o[2], 0);
    bp_backend_bufs_free(o, BP_FP_MAX_OPS);
    return BP_OK;
}

/* The backend's own account of its GEMM settings, when it gives one. */
static void gemm_mode(const bp_backend_t *be, char *out, size_t n)
{
    const char *mm = json_string_value(json_object_get(be->fingerprint, "math_mode"));
    const char *gc = json_string_value(json_object_get(be->fingerprint, "gemm_compute"));
    const char *cpu = json_string_value(json_object_get(be->fingerprint, "matmul"));
    json_t *tf = json_object_get(be->fingerprint, "tf32");
    if (mm || gc)
        snprintf(out, n, "; %s reports math mode %s, compute %s, tf32 %s", be->name,
                 mm ? mm : "?", gc ? gc : "?",
                 json_is_true(tf) ? "on" : json_is_false(tf) ? "off" : "?");
    else if (cpu)
        snprintf(out, n, "; %s reports matmul: %s", be->name, cpu);
    else
        out[0] = '\0';
}

bp_status bp_fp_matmul_fp32(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    uint64_t got;
    bp_status st = dot(c, BP_F32, 4, 1 + 0x1p-20, 1, &got, err);
    if (st)
        return st;
    const uint32_t full = 0x40800008u, tf32 = 0x40800000u; /* 4 + 2^-18, 4 */
    char mode[256];
    gemm_mode(c->be, mode, sizeof mode);
    snprintf(it->verdict, sizeof it->verdict, "%s",
             got == full ? "fp32" : got == tf32 ? "tf32" : "other");
    snprintf(it->summary, sizeof it->summary, "%s",
             got == full   ? "inputs used with all 24 bits (no TF32)"
             : got == tf32 ? "inputs rounded to 10 mantissa bits (TF32)"
                           : "neither the exact product nor TF32's");
    snprintf(it->evidence, sizeof it->evidence,
             "4 x 0x3f800008 (1 + 2^-20) dot 4 x 0x3f800000 -> 0x%08x "
             "(exact 0x%08x in any order; TF32 0x%08x)%s",
             (unsigned)got, full, tf32, mode);
    return BP_OK;
}

bp_status bp_fp_matmul_bf16(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    uint64_t got;
    bp_status st = dot(c, BP_BF16, 1024, 1, 1, &got, err);
    if (st)
        return st;
    const uint16_t exact = 0x4480, seq = 0x4380; /* 1024, 256 */
    snprintf(it->verdict, sizeof it->verdict, "%s",
             got == exact ? "fp32-accumulate" : got == seq ? "bf16-accumulate" : "other");
    snprintf(it->summary, sizeof it->summary, "%s",
             got == exact ? "no loss: a wider accumulator (or an order that hides a bf16 one)"
             : got == seq ? "a bf16 accumulator, left to right (stuck at 256)"
                          : "a reduced-precision accumulation");
    snprintf(it->evidence, sizeof it->evidence,
             "1024 x 0x3f80 dot 1024 x 0x3f80 (bf16 ones) -> 0x%04x (exact 0x%04x = 1024; "
             "a bf16 running sum gives 0x%04x = 256)",
             (unsigned)got, exact, seq);
    return BP_OK;
}

/* ATen's CPU arange for f32 (RangeFactoriesKernel.cpp, AVX2 build): one
 * chunk below the grain; two 8-lane registers per step while 16 elements
 * remain, each from base = float(start + step*r) in double, lane k =
 * float(base + k*step) in double (fused); the rest float(start + step*i). */
static float aten_cpu(double start, double step, size_t i, size_t n)
{
    if (i < n - n % 16) {
        size_t r = i - i % 8, k = i - r;
        float base = (float)fma(step, (double)r, start);
        return k ? (float)fma((double)k, step, (double)base) : base;
    }
    return (float)fma(step, (double)i, start);
}

bp_status bp_fp_arange(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    const double start = 0, end = 64, step = 0.1;
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-arange");
    bp_op_t *a = bp_probe_build_op(&m, BP_OP_ARANGE, "x", BP_F32);
    a->start = start;
    a->end = end;
    a->step = step;
    bp_buf_t o[BP_FP_MAX_OPS];
    bp_status st = bp_fp_probe_run(c->be, &m, o, err);
    if (st)
        return st;
    size_t n = o[0].numel, nf = 0, nd = 0, na = 0, first = n;
    const float fs = (float)start, fd = (float)step;
    uint32_t g0 = 0, f0 = 0, d0 = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t g = (uint32_t)bp_buf_bits(&o[0], i);
        uint32_t f = bp_f32_bits(fmaf(fd, (float)i, fs));
        uint32_t d = bp_f32_bits((float)fma(step, (double)i, start));
        nf += g == f;
        nd += g == d;
        na += g == bp_f32_bits(aten_cpu(start, step, i, n));
        if (first == n && f != d) {
            first = i;
            g0 = g;
            f0 = f;
            d0 = d;
        }
    }
    const char *v = nf == n ? "float" : na == n ? "aten-cpu" : nd == n ? "double" : "other";
    snprintf(it->verdict, sizeof it->verdict, "%s", v);
    snprintf(it->summary, sizeof it->summary, "%s",
             nf == n   ? "start + step*i in float, then stored"
             : na == n ? "ATen's CPU kernel: a double base per 8-lane register, rounded "
                         "to float, lanes base + k*step in double"
             : nd == n ? "start + step*i in double, rounded to float once"
                       : "none of the float, double or ATen CPU formulations");
    snprintf(it->evidence, sizeof it->evidence,
             "arange(0, 64, 0.1), %zu elements: [%zu] -> 0x%08x (float 0x%08x, double "
             "0x%08x); matches float %zu, double %zu, ATen CPU lanes %zu of %zu",
             n, first, g0, f0, d0, nf, nd, na, n);
    bp_backend_bufs_free(o, BP_FP_MAX_OPS);
    return BP_OK;
}

/* fn on 4096 counter-generator inputs, against the oracle on the same
 * inputs. */
bp_status bp_fp_accuracy(bp_fp_ctx_t *c, bp_op_kind_t fn, bp_fp_item_t *it, bp_error_t *err)
{
    double lo = -64, hi = 64;
    if (fn == BP_OP_EXP)
        lo = -80, hi = 80;
    else if (fn == BP_OP_LOG)
        lo = 0x1p-10, hi = 1000;
    else if (fn == BP_OP_POW)
        lo = -10, hi = 10;
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-accuracy");
    bp_op_t *u = bp_probe_build_op(&m, BP_OP_UNIFORM, "x", BP_F32);
    u->ndim = 1;
    u->shape[0] = 4096;
    u->seed = 20240;
    u->stream = (uint64_t)fn;
    u->low = lo;
    u->high = hi;
    bp_op_t *y = bp_probe_build_op(&m, fn, "y", BP_NDTYPES);
    if (fn == BP_OP_POW) {
        y->a = bp_arg_num(10, true);
        y->b = bp_arg_buf(0);
    } else {
        y->a = bp_arg_buf(0);
    }
    bp_buf_t o[BP_FP_MAX_OPS], ref = {0};
    bp_status st = bp_fp_probe_run(c->be, &m, o, err);
    if (st)
        return st;
    st = bp_backend_run_op(c->oracle, &m.p, 1, BP_F32, o, &ref, err);
    if (st) {
        bp_backend_bufs_free(o, BP_FP_MAX_OPS);
        return st;
    }
    uint64_t worst = 0;
    size_t at = 0, exact = 0;
    for (size_t i = 0; i < ref.numel; i++) {
        uint64_t d = bp_ulp_distance(BP_F32, bp_buf_bits(&o[1], i), bp_buf_bits(&ref, i));
        exact += d == 0;
        if (d > worst) {
            worst = d;
            at = i;
        }
    }
    if (worst == 0)
        snprintf(it->verdict, sizeof it->verdict, "correctly-rounded");
    else if (worst == UINT64_MAX)
        snprintf(it->verdict, sizeof it->verdict, "class-change");
    else
        snprintf(it->verdict, sizeof it->verdict, "%llu-ulp", (unsigned long long)worst);
    if (worst == 0)
        snprintf(it->summary, sizeof it->summary, "every result correctly rounded");
    else
        snprintf(it->summary, sizeof it->summary,
                 "at most %llu ulp from the correctly rounded result",
                 (unsigned long long)worst);
    snprintf(it->evidence, sizeof it->evidence,
             "%s of 4096 inputs in [%g, %g): %zu correctly rounded", fn == BP_OP_POW ? "10 ** x"
             : bp_op_name(fn), lo, hi, exact);
    if (worst) {
        size_t len = strlen(it->evidence);
        snprintf(it->evidence + len, sizeof it->evidence - len,
                 "; worst at x = 0x%08x: 0x%08x, the oracle 0x%08x",
                 (unsigned)bp_buf_bits(&o[0], at), (unsigned)bp_buf_bits(&o[1], at),
                 (unsigned)bp_buf_bits(&ref, at));
    }
    bp_buf_free(&ref);
    bp_backend_bufs_free(o, BP_FP_MAX_OPS);
    return BP_OK;
}
