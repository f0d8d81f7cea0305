/* Probes once loaded: freeing, lookup, per-dtype inference and the
 * definition hash (see probe.h; the loader, files and directories, is
 * probe_schema.c over the YAML reader probe_yaml.c).
 *
 * The hash identifies what a golden was computed from.  It covers every
 * field that can change a result or its verdict (params, dtypes, ops,
 * outputs and policies) through a canonical text in which numbers are
 * written in %a (exact) and buffers by index, so that reformatting, comments,
 * key order and the description leave it alone. */
#include "probe.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bp_probe_free(bp_probe_t *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->description);
    free(p->path);
    for (size_t i = 0; i < p->nparams; i++)
        free(p->params[i].name);
    free(p->params);
    for (size_t i = 0; i < p->nops; i++) {
        free(p->ops[i].out);
        free(p->ops[i].inputs);
        free(p->ops[i].values);
        free(p->ops[i].data);
    }
    free(p->ops);
    for (size_t i = 0; i < p->noutputs; i++)
        free(p->outputs[i].name);
    free(p->outputs);
    free(p->overrides);
    free(p);
}

void bp_probe_free_all(bp_probe_t **ps, size_t n)
{
    if (!ps)
        return;
    for (size_t i = 0; i < n; i++)
        bp_probe_free(ps[i]);
    free(ps);
}

int bp_probe_find_buf(const bp_probe_t *p, const char *name)
{
    for (size_t i = 0; i < p->nops; i++)
        if (p->ops[i].out && strcmp(p->ops[i].out, name) == 0)
            return (int)i;
    return -1;
}

static bool ref_ok(const bp_arg_t *a, size_t i)
{
    return a->kind != BP_ARG_BUF || (a->buf >= 0 && (size_t)a->buf < i);
}

bp_status bp_probe_infer(const bp_probe_t *p, bp_dtype_t run_dtype,
                         bp_meta_t *metas, bp_error_t *err)
{
    if ((unsigned)run_dtype >= BP_NDTYPES || !(p->dtypes & (1u << run_dtype)))
        return bp_error_set(err, BP_EINPUT,
                            "probe '%s' does not run in %s (%s)", p->name,
                            bp_dtype_name(run_dtype), p->path);
    for (size_t i = 0; i < p->nops; i++) {
        const bp_op_t *op = &p->ops[i];
        bool ok = ref_ok(&op->a, i) && ref_ok(&op->b, i);
        for (int k = 0; ok && k < op->ninputs; k++)
            ok = op->inputs[k] >= 0 && (size_t)op->inputs[k] < i;
        bp_status st = ok ? bp_op_infer(op, metas, run_dtype, &metas[i], err)
                          : bp_error_set(err, BP_EINPUT,
                                         "cycle: op reads a buffer that is "
                                         "not defined before it");
        if (st) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return bp_error_set(err, st, "%s:%d:%d: %s in op '%s' (%s, %s)",
                                p->path, op->line, op->col, msg, op->out,
                                bp_op_name(op->kind), bp_dtype_name(run_dtype));
        }
    }
    return BP_OK;
}

/* ---- hash ---------------------------------------------------------------- */

typedef struct {
    uint64_t h;
} fnv_t;

static void fnv_bytes(fnv_t *f, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        f->h ^= s[i];
        f->h *= 0x100000001b3ULL;
    }
}

static void fnv_printf(fnv_t *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fnv_printf(fnv_t *f, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        fnv_bytes(f, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Strings are length-prefixed so that no two field lists collide. */
static void fnv_str(fnv_t *f, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    fnv_printf(f, "%zu:", n);
    fnv_bytes(f, s ? s : "", n);
}

static void fnv_arg(fnv_t *f, const bp_arg_t *a)
{
    if (a->kind == BP_ARG_BUF)
        fnv_printf(f, "B%d;", a->buf);
    else if (a->kind == BP_ARG_SCALAR)
        fnv_printf(f, "S%a%c;", a->value, a->is_int ? 'i' : 'f');
    else
        fnv_printf(f, "N;");
}

static void hash_op(fnv_t *f, const bp_op_t *op)
{
    fnv_printf(f, "op%d", (int)op->kind);
    fnv_str(f, op->out);
    fnv_arg(f, &op->a);
    fnv_arg(f, &op->b);
    fnv_printf(f, "in%d:", op->ninputs);
    for (int k = 0; k < op->ninputs; k++)
        fnv_printf(f, "%d,", op->inputs[k]);
    fnv_printf(f, "dt%d%d%d;form%d;", op->has_dtype, op->dtype_is_run,
               op->has_dtype && !op->dtype_is_run ? (int)op->dtype : -1,
               (int)op->form);
    fnv_printf(f, "r%a,%a,%a;", op->start, op->end, op->step);
    fnv_printf(f, "ax%d,%d;", op->has_axis, op->has_axis ? op->axis : 0);
    /* Fields added later enter the text only when set, so that the probes
     * written before them keep their hashes (and goldens). */
    if (op->keepdim)
        fnv_printf(f, "kd1;");
    if (op->has_correction)
        fnv_printf(f, "corr%a;", op->correction);
    if (op->has_eps)
        fnv_printf(f, "eps%a;", op->eps);
    if (op->is_causal)
        fnv_printf(f, "causal;");
    if (op->has_scale)
        fnv_printf(f, "scale%a;", op->scale);
    if (op->ndims) {
        fnv_printf(f, "dm%d:", op->ndims);
        for (int d = 0; d < op->ndims && d < BP_MAXDIM; d++)
            fnv_printf(f, "%" PRId64 ",", op->dims[d]);
    }
    fnv_printf(f, "sl%" PRId64 ",%" PRId64 ",%" PRId64 ";", op->s_start,
               op->s_end, op->s_step);
    fnv_printf(f, "sh%d:", op->ndim);
    for (int d = 0; d < op->ndim && d < BP_MAXDIM; d++)
        fnv_printf(f, "%" PRId64 ",", op->shape[d]);
    fnv_printf(f, "v%zu:", op->nvalues);
    for (size_t k = 0; k < op->nvalues; k++)
        fnv_printf(f, "%a,", op->values[k]);
    fnv_printf(f, "u%" PRIu64 ",%" PRIu64 ",%a,%a;", op->seed, op->stream,
               op->low, op->high);
    if (op->has_min || op->has_max)
        fnv_printf(f, "cl%d%a,%d%a;", op->has_min, op->min, op->has_max, op->max);
    if (op->decimals)
        fnv_printf(f, "dc%" PRId64 ";", op->decimals);
    if (op->kind == BP_OP_FULL)
        fnv_printf(f, "fv%a;", op->value);
    if (op->steps)
        fnv_printf(f, "ls%" PRId64 ";", op->steps);
    if (op->kind == BP_OP_NORMAL)
        fnv_printf(f, "nm%a,%a;", op->mean, op->std);
    if (op->kind == BP_OP_BADDBMM || op->kind == BP_OP_ADDMM)
        fnv_printf(f, "ab%a,%a;", op->beta, op->alpha);
    if (op->kind == BP_OP_LOAD) { /* what it loaded, when it has */
        fnv_printf(f, "ld%zu:", op->ndata);
        fnv_bytes(f, op->data, op->ndata);
    }
}

static int param_cmp(const void *a, const void *b)
{
    const bp_param_t *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

void bp_probe_hash(const bp_probe_t *p, char out[17])
{
    fnv_t f = {0xcbf29ce484222325ULL};
    fnv_printf(&f, "bitprobe-probe-1;");
    fnv_str(&f, p->name);
    /* Params by name: their order in the file means nothing. */
    const bp_param_t **sorted = malloc((p->nparams ? p->nparams : 1) *
                                       sizeof *sorted);
    if (sorted) {
        for (size_t i = 0; i < p->nparams; i++)
            sorted[i] = &p->params[i];
        qsort(sorted, p->nparams, sizeof *sorted, param_cmp);
        fnv_printf(&f, "params%zu:", p->nparams);
        for (size_t i = 0; i < p->nparams; i++) {
            fnv_str(&f, sorted[i]->name);
            fnv_printf(&f, "=%a;", sorted[i]->value);
        }
        free(sorted);
    }
    fnv_printf(&f, "dtypes%" PRIu32 ";ops%zu:", p->dtypes, p->nops);
    for (size_t i = 0; i < p->nops; i++)
        hash_op(&f, &p->ops[i]);
    fnv_printf(&f, "outputs%zu:", p->noutputs);
    for (size_t i = 0; i < p->noutputs; i++) {
        const bp_output_t *o = &p->outputs[i];
        const bp_policy_t *pol = &o->policy;
        fnv_str(&f, o->name);
        fnv_printf(&f, "b%d;u%d,%" PRIu64 ";t%d,%a,%a;m%a;", o->buf,
                   pol->has_ulp, pol->has_ulp ? pol->max_ulp : 0, pol->has_tol,
                   pol->has_tol ? pol->abs : 0.0, pol->has_tol ? pol->rel : 0.0,
                   pol->max_mismatch_fraction);
        if (pol->zero_sign_ignore) /* only then: older probes keep their hash */
            fnv_printf(&f, "z1;");
    }
    snprintf(out, 17, "%016" PRIx64, f.h);
}

static bool is_gemm(bp_op_kind_t k)
{
    return k == BP_OP_MATMUL || k == BP_OP_BMM || k == BP_OP_BADDBMM || k == BP_OP_LINEAR ||
           k == BP_OP_ADDMM || k == BP_OP_SDPA;
}

int bp_probe_cpu_gemm_dep(const bp_probe_t *p, int buf, bool (*replayed)(void *ctx, int op),
                          void *ctx)
{
    if (buf < 0 || (size_t)buf >= p->nops)
        return -1;
    /* ops read only earlier buffers: one pass back from buf marks what it
     * reads, the first GEMM among them is the one reported */
    unsigned char *need = calloc(p->nops, 1);
    if (!need)
        return -1;
    need[buf] = 1;
    int found = -1;
    for (int i = buf; i >= 0; i--) {
        if (!need[i])
            continue;
        if (is_gemm(p->ops[i].kind) && !(replayed && replayed(ctx, i)))
            found = i;
        int r[BP_OP_MAXREADS], n = bp_op_reads(&p->ops[i], r);
        for (int k = 0; k < n; k++)
            if (r[k] >= 0 && r[k] < i)
                need[r[k]] = 1;
    }
    free(need);
    return found;
}

enum { GEO_OTHER, GEO_CONTIG, GEO_T };

/* Whether a 2-D transpose or permute swaps the two dimensions. */
static bool swaps_2d(const bp_op_t *op)
{
    if (op->ndims != 2)
        return false;
    int64_t a = op->dims[0] < 0 ? op->dims[0] + 2 : op->dims[0];
    int64_t b = op->dims[1] < 0 ? op->dims[1] + 2 : op->dims[1];
    return a >= 0 && a < 2 && b >= 0 && b < 2 && a != b;
}

/* The layout of buffer j as PyTorch holds it (bp_probe_gemm_layout's
 * rules): contiguous, transposed 2-D, or other; memo[j] holds it + 1 once
 * known (buffers are shared: each is walked once). */
static int geometry(const bp_probe_t *p, const bp_buf_t *bufs, int j, unsigned char *memo,
                    int depth)
{
    if (j < 0 || (size_t)j >= p->nops || depth > 4096)
        return GEO_OTHER;
    if (memo[j])
        return memo[j] - 1;
    const bp_op_t *op = &p->ops[j];
    int g = GEO_CONTIG;
    switch (op->kind) {
    case BP_OP_MATMUL: case BP_OP_BMM: case BP_OP_BADDBMM: case BP_OP_LINEAR:
    case BP_OP_ADDMM: /* a new result, contiguous */
        break;
    case BP_OP_TRANSPOSE: case BP_OP_PERMUTE:
        if (op->a.kind != BP_ARG_BUF || bufs[op->a.buf].ndim != 2 || !swaps_2d(op)) {
            g = GEO_OTHER;
        } else {
            int a = geometry(p, bufs, op->a.buf, memo, depth + 1);
            g = a == GEO_CONTIG ? GEO_T : a == GEO_T ? GEO_CONTIG : GEO_OTHER;
        }
        break;
    case BP_OP_RESHAPE: case BP_OP_VIEW: case BP_OP_UNSQUEEZE: case BP_OP_SQUEEZE:
        if (op->a.kind != BP_ARG_BUF ||
            geometry(p, bufs, op->a.buf, memo, depth + 1) != GEO_CONTIG)
            g = GEO_OTHER;
        break;
    case BP_OP_EXPAND: case BP_OP_SLICE:
        g = GEO_OTHER;
        break;
    default: {
        int r[BP_OP_MAXREADS], n = bp_op_reads(op, r);
        for (int k = 0; k < n && g == GEO_CONTIG; k++)
            if (geometry(p, bufs, r[k], memo, depth + 1) != GEO_CONTIG)
                g = GEO_OTHER;
    }
    }
    memo[j] = (unsigned char)(g + 1);
    return g;
}

bp_gemm_layout_t bp_probe_gemm_layout(const bp_probe_t *p, const bp_buf_t *bufs, size_t i)
{
    if (i >= p->nops)
        return BP_GEMM_LAYOUT_UNKNOWN;
    const bp_op_t *op = &p->ops[i];
    int a, b;
    bool wt = false; /* F.linear multiplies by weight.t(), a view */
    if (op->kind == BP_OP_MATMUL) {
        if (op->a.kind != BP_ARG_BUF || op->b.kind != BP_ARG_BUF)
            return BP_GEMM_LAYOUT_UNKNOWN;
        a = op->a.buf;
        b = op->b.buf;
    } else if (op->kind == BP_OP_ADDMM && op->ninputs == 3) {
        a = op->inputs[1];
        b = op->inputs[2];
    } else if (op->kind == BP_OP_LINEAR && (op->ninputs == 2 || op->ninputs == 3)) {
        a = op->inputs[0];
        b = op->inputs[1];
        wt = true;
    } else {
        return BP_GEMM_LAYOUT_UNKNOWN;
    }
    /* F.linear: a contiguous x of more dimensions is flattened to [-1, k]
     * (a view: matmul's fold, or _flatten_nd_linear with a 1-D bias);
     * with another bias PyTorch adds it after matmul, which is not
     * modelled */
    if (a < 0 || b < 0 || (size_t)a >= p->nops || (size_t)b >= p->nops ||
        bufs[b].ndim != 2 || bufs[a].ndim < 2 || (!wt && bufs[a].ndim != 2) ||
        (wt && bufs[a].ndim > 2 && op->ninputs == 3 && bufs[op->inputs[2]].ndim != 1))
        return BP_GEMM_LAYOUT_UNKNOWN;
    unsigned char *memo = calloc(p->nops, 1);
    if (!memo)
        return BP_GEMM_LAYOUT_UNKNOWN;
    bp_gemm_layout_t l = BP_GEMM_LAYOUT_UNKNOWN;
    if (geometry(p, bufs, a, memo, 0) == GEO_CONTIG) {
        int g = geometry(p, bufs, b, memo, 0);
        if (wt) /* the weight's transpose */
            g = g == GEO_CONTIG ? GEO_T : g == GEO_T ? GEO_CONTIG : GEO_OTHER;
        l = g == GEO_CONTIG ? BP_GEMM_LAYOUT_NN : g == GEO_T ? BP_GEMM_LAYOUT_TN
                                                             : BP_GEMM_LAYOUT_UNKNOWN;
    }
    free(memo);
    return l;
}
