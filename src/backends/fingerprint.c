/* fingerprint: probes built in C and the items that need no oracle:
 * division, FMA contraction, subnormals, NaN payloads (see fingerprint.h).
 * Host-side expectations use explicit float arithmetic (the library is
 * built with -ffp-contract=off, so a*b+c is two roundings unless fmaf says
 * otherwise). */
#include "fingerprint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bitfmt.h"

void bp_fp_probe_init(bp_probe_build_t *m, const char *name)
{
    bp_probe_build_init(m, name,
                        BP_DTYPES_RUN | BP_DTYPE_BIT(BP_F64));
    m->p.path = (char *)"fingerprint";
}

bp_status bp_fp_probe_run(bp_backend_t *be, bp_probe_build_t *m, bp_buf_t *bufs,
                          bp_error_t *err)
{
    memset(bufs, 0, BP_FP_MAX_OPS * sizeof *bufs);
    if (m->p.nops > BP_FP_MAX_OPS)
        return bp_error_set(err, BP_EINTERNAL, "fingerprint probe of %zu ops",
                            m->p.nops);
    bp_probe_build_done(m);
    bp_status st = bp_backend_run(be, &m->p, BP_F32, bufs, err);
    if (st)
        bp_backend_bufs_free(bufs, BP_FP_MAX_OPS);
    return st;
}

static const char *hex32(uint32_t b, char *buf)
{
    snprintf(buf, 12, "0x%08x", b);
    return buf;
}

/* i / 10 for i in 0..63, the divisor a number or a tensor of 10s. */
static bp_status item_div(bp_fp_ctx_t *c, bool tensor, bp_fp_item_t *it, bp_error_t *err)
{
    double xs[64], tens[64]; /* not static: backends open on parallel lanes */
    for (int i = 0; i < 64; i++) {
        xs[i] = i;
        tens[i] = 10;
    }
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-div");
    bp_op_t *x = bp_probe_build_op(&m, BP_OP_TENSOR, "x", BP_F32);
    x->values = xs;
    x->nvalues = 64;
    x->ndim = 1;
    x->shape[0] = 64;
    if (tensor) {
        bp_op_t *d = bp_probe_build_op(&m, BP_OP_TENSOR, "d", BP_F32);
        *d = *x;
        d->out = (char *)"d";
        d->values = tens;
    }
    bp_op_t *q = bp_probe_build_op(&m, BP_OP_DIV, "q", BP_NDTYPES);
    q->a = bp_arg_buf(0);
    q->b = tensor ? bp_arg_buf(1) : bp_arg_num(10, true);
    bp_buf_t b[BP_FP_MAX_OPS];
    bp_status st = bp_fp_probe_run(c->be, &m, b, err);
    if (st)
        return st;
    const bp_buf_t *out = &b[m.p.outputs[0].buf];
    int nt = 0, nr = 0, first = -1;
    uint32_t got = 0, tq = 0, rq = 0;
    const float rcp = 1.0f / 10.0f;
    for (int i = 0; i < 64; i++) {
        uint32_t g = (uint32_t)bp_buf_bits(out, (size_t)i);
        uint32_t t = bp_f32_bits((float)i / 10.0f), r = bp_f32_bits((float)i * rcp);
        nt += g == t;
        nr += g == r;
        if (first < 0 && t != r) {
            first = i;
            got = g;
            tq = t;
            rq = r;
        }
    }
    char h1[12], h2[12], h3[12], h4[12];
    snprintf(it->verdict, sizeof it->verdict, "%s",
             nt == 64 ? "true" : nr == 64 ? "reciprocal" : "other");
    snprintf(it->summary, sizeof it->summary, "%s",
             nt == 64   ? "a / b rounded once (true division)"
             : nr == 64 ? "a * fl(1/b): the reciprocal is rounded first"
                        : "neither true division nor a * fl(1/b) everywhere");
    snprintf(it->evidence, sizeof it->evidence,
             "%d / 10 -> %s (true %s, %d * fl(1/10 = %s) %s); of the quotients "
             "0/10..63/10, %d match true division, %d the reciprocal",
             first, hex32(got, h1), hex32(tq, h2), first, hex32(bp_f32_bits(rcp), h3),
             hex32(rq, h4), nt, nr);
    bp_backend_bufs_free(b, BP_FP_MAX_OPS);
    return BP_OK;
}

/* arange(-3, 1, 1 + 2^-23)[3] = -3 + 3*step: exactly 3 * 2^-23. */
static bp_status item_fma(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    const float step = 1.0f + 0x1p-23f, start = -3.0f;
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-fma");
    bp_op_t *a = bp_probe_build_op(&m, BP_OP_ARANGE, "x", BP_F32);
    a->start = start;
    a->end = 1;
    a->step = step;
    bp_buf_t b[BP_FP_MAX_OPS];
    bp_status st = bp_fp_probe_run(c->be, &m, b, err);
    if (st)
        return st;
    uint32_t got = b[0].numel == 4 ? (uint32_t)bp_buf_bits(&b[0], 3) : 0;
    uint32_t fused = bp_f32_bits(fmaf(step, 3.0f, start));
    float prod = step * 3.0f;
    uint32_t twice = bp_f32_bits(start + prod);
    char h1[12], h2[12], h3[12], h4[12];
    snprintf(it->verdict, sizeof it->verdict, "%s",
             got == fused ? "on" : got == twice ? "off" : "other");
    snprintf(it->summary, sizeof it->summary, "%s",
             got == fused   ? "a*b+c rounded once (fused multiply-add, or computed wider)"
             : got == twice ? "a*b+c rounded twice (no contraction)"
                            : "a*b+c neither fused nor rounded twice");
    snprintf(it->evidence, sizeof it->evidence,
             "arange(-3, 1, %s)[3] = -3 + %s*3 -> %s (rounded once %s, rounded twice %s)",
             hex32(bp_f32_bits(step), h1), hex32(bp_f32_bits(step), h1), hex32(got, h2),
             hex32(fused, h3), hex32(twice, h4));
    bp_backend_bufs_free(b, BP_FP_MAX_OPS);
    return BP_OK;
}

/* 2^-140 * 2^20 (subnormal in, normal out), 2^-126 * 0.5 (normal in,
 * subnormal out), 2^-140 * 1 (subnormal in and out). */
static bp_status item_subnormals(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    static double av[3] = {0x1p-140, 0x1p-126, 0x1p-140}, bv[3] = {0x1p20, 0.5, 1};
    static const double want[3] = {0x1p-120, 0x1p-127, 0x1p-140};
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-subnormals");
    bp_op_t *a = bp_probe_build_op(&m, BP_OP_TENSOR, "a", BP_F32);
    a->values = av;
    a->nvalues = 3;
    a->ndim = 1;
    a->shape[0] = 3;
    bp_op_t *b = bp_probe_build_op(&m, BP_OP_TENSOR, "b", BP_F32);
    *b = *a;
    b->out = (char *)"b";
    b->values = bv;
    bp_op_t *p = bp_probe_build_op(&m, BP_OP_MUL, "p", BP_NDTYPES);
    p->a = bp_arg_buf(0);
    p->b = bp_arg_buf(1);
    bp_buf_t o[BP_FP_MAX_OPS];
    bp_status st = bp_fp_probe_run(c->be, &m, o, err);
    if (st)
        return st;
    uint32_t g[3];
    bool ok[3];
    for (int i = 0; i < 3; i++) {
        g[i] = (uint32_t)bp_buf_bits(&o[2], (size_t)i);
        ok[i] = g[i] == bp_f32_bits((float)want[i]);
    }
    /* A flushed input makes the first product 0; a flushed output, the
     * second and third. */
    bool daz = !ok[0] && g[0] == 0, ftz = (!ok[1] && (g[1] & 0x7fffffff) == 0) ||
                                         (!ok[2] && (g[2] & 0x7fffffff) == 0);
    const char *v = ok[0] && ok[1] && ok[2] ? "kept"
                    : daz && ftz            ? "ftz+daz"
                    : daz                   ? "daz"
                    : ftz && ok[0]          ? "ftz"
                                            : "other";
    snprintf(it->verdict, sizeof it->verdict, "%s", v);
    snprintf(it->summary, sizeof it->summary, "%s",
             !strcmp(v, "kept")  ? "subnormal inputs and results kept (no FTZ, no DAZ)"
             : !strcmp(v, "ftz") ? "subnormal results flushed to zero (FTZ)"
             : !strcmp(v, "daz") ? "subnormal inputs read as zero (DAZ)"
             : !strcmp(v, "ftz+daz") ? "subnormal inputs and results flushed to zero"
                                     : "unexpected products");
    char h[6][12];
    snprintf(it->evidence, sizeof it->evidence,
             "0x00000200 * 0x49800000 -> %s (2^-120 is %s); 0x00800000 * 0x3f000000 -> %s "
             "(2^-127 is %s); 0x00000200 * 0x3f800000 -> %s (2^-140 is %s)",
             hex32(g[0], h[0]), hex32(bp_f32_bits(0x1p-120f), h[1]), hex32(g[1], h[2]),
             hex32(bp_f32_bits(0x1p-127f), h[3]), hex32(g[2], h[4]),
             hex32(bp_f32_bits(0x1p-140f), h[5]));
    bp_backend_bufs_free(o, BP_FP_MAX_OPS);
    return BP_OK;
}

/* f32 NaNs with payloads cast to bf16, the inputs given as raw bits. */
static bp_status item_nan(bp_fp_ctx_t *c, bp_fp_item_t *it, bp_error_t *err)
{
    static double zeros[3];
    static const uint32_t in[3] = {0x7fc12345, 0xffa00001, 0x7f800001};
    bp_probe_build_t m;
    bp_fp_probe_init(&m, "fingerprint-nan");
    bp_op_t *a = bp_probe_build_op(&m, BP_OP_TENSOR, "a", BP_F32);
    a->values = zeros;
    a->nvalues = 3;
    a->ndim = 1;
    a->shape[0] = 3;
    bp_op_t *k = bp_probe_build_op(&m, BP_OP_CAST, "h", BP_BF16);
    k->a = bp_arg_buf(0);
    bp_buf_t given[2] = {{0}}, out = {0};
    bp_status st = bp_buf_alloc(&given[0], BP_F32, 1, (int64_t[]){3}, err);
    for (int i = 0; !st && i < 3; i++)
        bp_dtype_store_bits(BP_F32, given[0].data, (size_t)i, in[i]);
    if (!st)
        st = bp_backend_run_op(c->be, &m.p, 1, BP_F32, given, &out, err);
    if (st) {
        bp_buf_free(&given[0]);
        bp_buf_free(&out);
        return st;
    }
    int canon = 0, canon_c0 = 0, kept = 0;
    uint16_t g[3];
    for (int i = 0; i < 3; i++) {
        g[i] = (uint16_t)bp_buf_bits(&out, (size_t)i);
        canon += g[i] == 0x7fff;
        canon_c0 += g[i] == 0x7fc0;
        kept += g[i] == (uint16_t)((in[i] >> 16) | 0x0040);
    }
    const char *v = canon == 3      ? "canonical-7fff"
                    : canon_c0 == 3 ? "canonical-7fc0"
                    : kept == 3     ? "payload-kept"
                                    : "other";
    snprintf(it->verdict, sizeof it->verdict, "%s", v);
    snprintf(it->summary, sizeof it->summary, "%s",
             canon == 3      ? "every NaN becomes 0x7fff: sign and payload dropped"
             : canon_c0 == 3 ? "every NaN becomes 0x7fc0: sign and payload dropped"
             : kept == 3     ? "sign and the upper payload bits kept, quieted"
                             : "NaNs become other bits");
    snprintf(it->evidence, sizeof it->evidence,
             "0x7fc12345 -> 0x%04x, 0xffa00001 -> 0x%04x, 0x7f800001 -> 0x%04x", g[0], g[1],
             g[2]);
    bp_buf_free(&given[0]);
    bp_buf_free(&out);
    return BP_OK;
}

bp_status bp_fingerprint_run(bp_backend_t *be, bp_fp_item_t *items, size_t *n,
                             bp_error_t *err)
{
    static const struct {
        const char *key, *title;
    } names[] = {
        {"div_scalar", "tensor / scalar"},
        {"div_tensor", "tensor / tensor"},
        {"fma", "FMA contraction of a*b+c"},
        {"subnormals", "flush to zero"},
        {"matmul_fp32", "fp32 matmul inputs"},
        {"matmul_bf16", "bf16 matmul accumulation"},
        {"nan_bf16", "NaN payload, f32 -> bf16"},
        {"arange", "float arange accumulation"},
        {"sin", "sin accuracy"},
        {"cos", "cos accuracy"},
        {"exp", "exp accuracy"},
        {"log", "log accuracy"},
        {"pow", "pow accuracy (10 ** x)"},
    };
    static const bp_op_kind_t fns[] = {BP_OP_SIN, BP_OP_COS, BP_OP_EXP, BP_OP_LOG, BP_OP_POW};
    bp_fp_ctx_t c = {.be = be};
    bp_backend_t *own = NULL;
    bp_status st = BP_OK;
    *n = 0;
    if (strcmp(be->name, "oracle") == 0)
        c.oracle = be;
    else if ((st = bp_backend_open("oracle", NULL, &own, err)))
        return bp_error_prefix(err, "fingerprint needs the oracle: ");
    else
        c.oracle = own;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !st; i++) {
        bp_fp_item_t *it = &items[i];
        memset(it, 0, sizeof *it);
        it->key = names[i].key;
        it->title = names[i].title;
        switch (i) {
        case 0: st = item_div(&c, false, it, err); break;
        case 1: st = item_div(&c, true, it, err); break;
        case 2: st = item_fma(&c, it, err); break;
        case 3: st = item_subnormals(&c, it, err); break;
        case 4: st = bp_fp_matmul_fp32(&c, it, err); break;
        case 5: st = bp_fp_matmul_bf16(&c, it, err); break;
        case 6: st = item_nan(&c, it, err); break;
        case 7: st = bp_fp_arange(&c, it, err); break;
        default: st = bp_fp_accuracy(&c, fns[i - 8], it, err); break;
        }
        if (st)
            bp_error_prefix(err, "fingerprint item '%s' on %s: ", it->key, be->name);
        else
            (*n)++;
    }
    bp_backend_close(own);
    return st;
}

json_t *bp_fingerprint_json(const bp_fp_item_t *items, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++)
        json_object_set_new(o, items[i].key,
                            json_pack("{s:s, s:s, s:s, s:s}", "title", items[i].title,
                                      "verdict", items[i].verdict, "summary",
                                      items[i].summary, "evidence", items[i].evidence));
    return o;
}

bp_status bp_fingerprint_probe(bp_backend_t *be, json_t **out, bp_error_t *err)
{
    bp_fp_item_t items[BP_FP_MAX_ITEMS];
    size_t n;
    *out = NULL;
    bp_status st = bp_fingerprint_run(be, items, &n, err);
    if (st)
        return st;
    *out = bp_fingerprint_json(items, n);
    return *out ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
}
