/* Backend registry and the generic probe executor (see backend.h). */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"

typedef bp_status (*open_fn)(const bp_backend_opts_t *, bp_backend_t **,
                             bp_error_t *);

static const struct {
    const char *name;
    open_fn open;
} registry[] = {
    {"cpu", bp_be_cpu_open},
    {"oracle", bp_be_oracle_open},
#ifdef BP_HAVE_CUDA
    {"cuda", bp_be_cuda_open},
#endif
};

#define NREG (sizeof registry / sizeof registry[0])

const char *const *bp_backend_names(void)
{
    static const char *names[NREG + 1];
    for (size_t i = 0; i < NREG; i++)
        names[i] = registry[i].name;
    names[NREG] = NULL;
    return names;
}

void bp_backend_opts_default(bp_backend_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->cpu_math = BP_CPU_MATH_SLEEF_U10;
}

bool bp_cpu_math_parse(const char *s, bp_cpu_math_t *out)
{
    for (int m = BP_CPU_MATH_SLEEF_U10; m <= BP_CPU_MATH_LIBM; m++)
        if (strcmp(s, bp_cpu_math_name((bp_cpu_math_t)m)) == 0) {
            *out = (bp_cpu_math_t)m;
            return true;
        }
    return false;
}

const char *bp_cpu_math_name(bp_cpu_math_t m)
{
    switch (m) {
    case BP_CPU_MATH_SLEEF_U10: return "sleef-u10";
    case BP_CPU_MATH_SLEEF_U35: return "sleef-u35";
    case BP_CPU_MATH_LIBM: return "libm";
    }
    return "?";
}

bp_status bp_backend_open(const char *name, const bp_backend_opts_t *opts,
                          bp_backend_t **out, bp_error_t *err)
{
    bp_backend_opts_t dflt;
    if (!opts) {
        bp_backend_opts_default(&dflt);
        opts = &dflt;
    }
    *out = NULL;
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(name, registry[i].name) == 0)
            return registry[i].open(opts, out, err);
    if (strcmp(name, "cuda") == 0)
        return bp_error_set(err, BP_EUNAVAIL,
                            "backend 'cuda' is not available: bitprobe was "
                            "built without CUDA");
    return bp_error_set(err, BP_EINPUT,
                        "unknown backend '%s' (known: cpu, oracle, cuda)", name);
}

void bp_backend_close(bp_backend_t *be)
{
    if (be && be->destroy)
        be->destroy(be);
}

void bp_backend_bufs_free(bp_buf_t *bufs, size_t n)
{
    for (size_t i = 0; bufs && i < n; i++)
        bp_buf_free(&bufs[i]);
}

static void dev_release(bp_backend_t *be, bp_buf_t *b)
{
    if (be->device && b->dev && be->dev_free)
        be->dev_free(be, b);
    b->dev = NULL;
}

/* Gives out its storage on the backend's side: host memory for host
 * backends, device memory (plus a host copy to download into) otherwise. */
static bp_status place(bp_backend_t *be, bp_buf_t *b, const bp_meta_t *m,
                       bp_error_t *err)
{
    bp_status st = bp_buf_alloc(b, m->dtype, m->ndim, m->shape, err);
    if (st || !be->device)
        return st;
    return be->dev_alloc(be, b, err);
}

static bp_status exec_one(bp_backend_t *be, const bp_probe_t *p, size_t i,
                          bp_buf_t *bufs, bp_buf_t *out, bp_error_t *err)
{
    const bp_op_t *op = &p->ops[i];
    if (!be->op[op->kind])
        return bp_error_set(err, BP_EUNAVAIL,
                            "backend '%s' does not implement op '%s'",
                            be->name, bp_op_name(op->kind));
    const bp_buf_t *ins[64];
    if (op->ninputs > 64)
        return bp_error_set(err, BP_EINPUT, "concat of more than 64 inputs");
    for (int k = 0; k < op->ninputs; k++)
        ins[k] = &bufs[op->inputs[k]];
    bp_exec_t x = {
        .op = op,
        .a = op->a.kind == BP_ARG_BUF ? &bufs[op->a.buf] : NULL,
        .b = op->b.kind == BP_ARG_BUF ? &bufs[op->b.buf] : NULL,
        .inputs = ins,
        .ninputs = op->ninputs,
        .out = out,
    };
    bp_status st = be->op[op->kind](be, &x, err);
    if (st)
        bp_error_prefix(err, "%s:%d: op '%s' (%s) on %s: ", p->path, op->line,
                        op->out, bp_op_name(op->kind), be->name);
    return st;
}

bp_status bp_backend_run(bp_backend_t *be, const bp_probe_t *p, bp_dtype_t dt,
                         bp_buf_t *bufs, bp_error_t *err)
{
    bp_meta_t *metas = calloc(p->nops ? p->nops : 1, sizeof *metas);
    if (!metas)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = bp_probe_infer(p, dt, metas, err);
    for (size_t i = 0; !st && i < p->nops; i++) {
        st = place(be, &bufs[i], &metas[i], err);
        if (!st)
            st = exec_one(be, p, i, bufs, &bufs[i], err);
    }
    for (size_t i = 0; be->device && i < p->nops; i++) {
        if (!st && bufs[i].dev)
            st = be->download(be, &bufs[i], err);
        dev_release(be, &bufs[i]);
    }
    free(metas);
    return st;
}

bp_status bp_backend_run_op(bp_backend_t *be, const bp_probe_t *p, size_t i,
                            bp_dtype_t dt, const bp_buf_t *given,
                            bp_buf_t *out, bp_error_t *err)
{
    bp_meta_t *metas = calloc(p->nops ? p->nops : 1, sizeof *metas);
    bp_buf_t *view = calloc(p->nops ? p->nops : 1, sizeof *view);
    bp_status st = BP_OK;
    if (!metas || !view)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st)
        st = bp_probe_infer(p, dt, metas, err);
    /* Shallow views of the given host buffers; device backends get their
     * own uploaded copies of the ones op i reads. */
    for (size_t j = 0; !st && j < i; j++) {
        view[j] = given[j];
        view[j].dev = NULL;
        if (be->device) {
            st = be->dev_alloc(be, &view[j], err);
            if (!st)
                st = be->upload(be, &view[j], err);
        }
    }
    if (!st)
        st = place(be, out, &metas[i], err);
    if (!st)
        st = exec_one(be, p, i, view, out, err);
    if (be->device) {
        if (!st && out->dev)
            st = be->download(be, out, err);
        dev_release(be, out);
        for (size_t j = 0; j < i; j++)
            dev_release(be, &view[j]);
    }
    free(metas);
    free(view);
    return st;
}
