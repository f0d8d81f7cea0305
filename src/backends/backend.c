/* Backend registry and the generic probe executor (see backend.h). */
#include "backend.h"

#include <dirent.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "memo.h"

typedef bp_status (*open_fn)(const bp_backend_opts_t *, bp_backend_t **,
                             bp_error_t *);

#ifndef BP_HAVE_CUDA
static bp_status cuda_unbuilt(const bp_backend_opts_t *o, bp_backend_t **out,
                              bp_error_t *err)
{
    (void)o;
    *out = NULL;
    return bp_error_set(err, BP_EUNAVAIL,
                        "backend 'cuda' is not available: bitprobe was built "
                        "without CUDA");
}
#endif

/* The cpu backend's ops only read its state. */
static bool cpu_shared(void)
{
    return true;
}

/* Every backend bitprobe knows, built or not: a build without CUDA lists
 * cuda as unavailable, as a machine without a GPU does. */
static const struct {
    const char *name;
    open_fn open;
    const bp_op_fn *ops; /* NULL: not built */
    bool (*shared)(void); /* see bp_backend_shared; NULL: not shared */
    bool gemm_late;       /* see bp_backend_gemm_late */
} registry[] = {
    {"cpu", bp_be_cpu_open, bp_cpu_ops, cpu_shared, false},
    {"oracle", bp_be_oracle_open, bp_oracle_ops, bp_be_oracle_shared, false},
#ifdef BP_HAVE_CUDA
    {"cuda", bp_be_cuda_open, bp_cuda_ops, NULL, true},
#else
    {"cuda", cuda_unbuilt, NULL, NULL, false},
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

const bp_op_fn *bp_backend_ops(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(name, registry[i].name) == 0)
            return registry[i].ops;
    return NULL;
}

bool bp_backend_shared(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(name, registry[i].name) == 0)
            return registry[i].shared && registry[i].shared();
    return false;
}

bool bp_backend_gemm_late(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(name, registry[i].name) == 0)
            return registry[i].gemm_late;
    return false;
}

bool bp_backend_probe_gemm(const bp_probe_t *p)
{
    for (size_t i = 0; i < p->nops; i++)
        if (bp_op_has(p->ops[i].kind, BP_OPF_VIEWS))
            return true;
    return false;
}

bp_backend_t *bp_backend_runner(const bp_backend_t *be)
{
    bp_backend_t *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    *r = *be;
    r->destroy = NULL; /* the state is be's */
    r->elems = r->elems_reused = 0;
    r->memo = NULL;
    if (be->memo && !(r->memo = bp_memo_new())) {
        free(r);
        return NULL;
    }
    return r;
}

void bp_backend_runner_free(bp_backend_t *r)
{
    if (!r)
        return;
    bp_memo_free(r->memo);
    free(r);
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

/* Set once a device backend has opened (backends open on several threads). */
static atomic_bool device_opened;

bool bp_backend_device_opened(void)
{
    return atomic_load(&device_opened);
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
    /* "cuda:K": device K, under that name (several GPUs in one run) */
    const char *colon = strchr(name, ':');
    if (colon && (size_t)(colon - name) == 4 && strncmp(name, "cuda", 4) == 0) {
        char *end;
        long k = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || k < 0 || k > 4095)
            return bp_error_set(err, BP_EINPUT, "backend '%s': a device index must follow "
                                "'cuda:'", name);
        bp_backend_opts_t one = *opts;
        one.gpu = (int)k;
        one.gpus = NULL;
        bp_status st = bp_backend_open("cuda", &one, out, err);
        if (!st) {
            snprintf((*out)->inst, sizeof (*out)->inst, "cuda:%ld", k);
            (*out)->name = (*out)->inst;
        }
        return st;
    }
    if (opts->gpus && strcmp(name, "cuda") == 0)
        return bp_error_set(err, BP_EINPUT, "--gpu %s: this command runs one GPU; name one "
                            "(--gpu N)", opts->gpus);
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(name, registry[i].name) == 0) {
            bp_status st = registry[i].open(opts, out, err);
            if (!st && (*out)->device)
                atomic_store(&device_opened, true);
            return st;
        }
    char known[64] = "";
    for (size_t i = 0; i < NREG; i++) {
        size_t l = strlen(known);
        snprintf(known + l, sizeof known - l, "%s%s", i ? ", " : "",
                 registry[i].name);
    }
    return bp_error_set(err, BP_EINPUT, "unknown backend '%s' (known: %s)",
                        name, known);
}

/* GPUs the NVIDIA driver lists without CUDA, or -1. */
static int driver_gpus(void)
{
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

bool bp_backend_pin_gpu(bp_backend_opts_t *o)
{
#ifdef BP_HAVE_CUDA
    const char *all = getenv("BP_CUDA_ALL_DEVICES");
    if (o->gpus || o->pinned || o->gpu < 0 || (all && *all && strcmp(all, "0") != 0))
        return false;
    char one[256];
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis) { /* the gpu-th of its entries (indices, UUIDs, MIG names) */
        const char *p = vis;
        for (int k = 0; k < o->gpu && p; k++)
            if ((p = strchr(p, ',')))
                p++;
        size_t len = p ? strcspn(p, ",") : 0;
        if (!len || len >= sizeof one)
            return false;
        memcpy(one, p, len);
        one[len] = '\0';
    } else {
        if (o->gpu >= driver_gpus())
            return false;
        snprintf(one, sizeof one, "%d", o->gpu);
    }
    if (setenv("CUDA_VISIBLE_DEVICES", one, 1) != 0)
        return false;
    o->gpu_given = o->gpu;
    o->gpu = 0;
    o->pinned = true;
    return true;
#else
    (void)o;
    return false;
#endif
}

bp_status bp_backend_gpu_list(const char *sel, int *idx, int max, int *n, bp_error_t *err)
{
    int count = 0;
    *n = 0;
#ifdef BP_HAVE_CUDA
    json_t *env = bp_be_cuda_env(err);
    if (!env)
        return BP_EUNAVAIL;
    count = (int)json_array_size(json_object_get(env, "devices"));
    json_decref(env);
#else
    (void)count;
    return bp_error_set(err, BP_EUNAVAIL, "--gpu %s: bitprobe was built without CUDA", sel);
#endif
    if (strcmp(sel, "all") == 0) {
        for (int k = 0; k < count && k < max; k++)
            idx[(*n)++] = k;
        return BP_OK;
    }
    for (const char *p = sel; *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || k < 0)
            return bp_error_set(err, BP_EINPUT, "--gpu '%s': not all, an index or a "
                                "comma-separated list of indices", sel);
        if (k >= count)
            return bp_error_set(err, BP_EUNAVAIL, "--gpu %ld: there %s %d CUDA device%s", k,
                                count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
        for (int j = 0; j < *n; j++)
            if (idx[j] == (int)k)
                return bp_error_set(err, BP_EINPUT, "--gpu '%s': %ld is named twice", sel, k);
        if (*n == max)
            return bp_error_set(err, BP_EINPUT, "--gpu '%s': more than %d GPUs", sel, max);
        idx[(*n)++] = (int)k;
        p = *end ? end + 1 : end;
    }
    return BP_OK;
}

void bp_backend_thread_done(void)
{
    bp_be_oracle_thread_done();
}

void bp_backend_close(bp_backend_t *be)
{
    if (!be)
        return;
    bp_memo_free(be->memo);
    be->memo = NULL;
    if (be->destroy)
        be->destroy(be);
}

bp_status bp_backend_memo(bp_backend_t *be, bool on, bp_error_t *err)
{
    if (!on) {
        bp_memo_free(be->memo);
        be->memo = NULL;
    } else if (!be->memo && !(be->memo = bp_memo_new())) {
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    return BP_OK;
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

bp_status bp_op_unsupported(bp_backend_t *be, const bp_exec_t *x,
                            bp_error_t *err)
{
    return bp_error_set(err, BP_EUNAVAIL, "op '%s' is not supported on backend '%s'",
                        bp_op_name(x->op->kind), be->name);
}

bp_status bp_op_load_host(const bp_exec_t *x, bp_error_t *err)
{
    const bp_op_t *op = x->op;
    size_t n = bp_buf_nbytes(x->out);
    if (!op->data)
        return bp_error_set(err, BP_EINPUT, "load '%s' has no tensor: a probe read from a "
                            "file takes it from the .safetensors file next to it", op->out);
    if (op->ndata != n || (n && !x->out->data))
        return bp_error_set(err, BP_EINTERNAL, "load '%s': %zu bytes for a result of %zu",
                            op->out, op->ndata, n);
    if (n)
        memcpy(x->out->data, op->data, n);
    return BP_OK;
}

bp_dtype_t bp_exec_promote(const bp_exec_t *x)
{
    bp_dtype_t dts[2];
    int nd[2], n = 0;
    const bp_buf_t *t[2] = {x->a, x->b};
    for (int k = 0; k < 2; k++)
        if (t[k]) {
            dts[n] = t[k]->dtype;
            nd[n++] = t[k]->ndim;
        }
    return bp_op_promote(x->op, n, dts, nd);
}

bool bp_backend_supports(const bp_backend_t *be, bp_op_kind_t k)
{
    return (unsigned)k < BP_OP_COUNT && be->op && be->op[k] &&
           be->op[k] != bp_op_unsupported;
}

/* Every op of p is one be computes: refused before anything runs. */
static bp_status check_supported(const bp_backend_t *be, const bp_probe_t *p,
                                 bp_error_t *err)
{
    for (size_t i = 0; i < p->nops; i++) {
        const bp_op_t *op = &p->ops[i];
        if (!bp_backend_supports(be, op->kind))
            return bp_error_set(err, BP_EUNAVAIL,
                                "%s:%d:%d: op '%s' is not supported on backend "
                                "'%s'", p->path, op->line, op->col,
                                bp_op_name(op->kind), be->name);
    }
    return BP_OK;
}

/* The op's operands and result are all in dtypes the backend computes. */
static bp_status computes(const bp_backend_t *be, const bp_exec_t *x,
                          bp_error_t *err)
{
    const bp_buf_t *seen[3 + BP_OP_MAXINPUTS] = {x->out, x->a, x->b};
    int n = 3;
    for (int k = 0; k < x->ninputs && n < 3 + BP_OP_MAXINPUTS; k++)
        seen[n++] = x->inputs[k];
    for (int k = 0; k < n; k++) {
        if (!seen[k] || (be->dtypes & BP_DTYPE_BIT(seen[k]->dtype)))
            continue;
        char list[160] = "";
        size_t len = 0;
        for (int d = 0; d < BP_NDTYPES && len < sizeof list; d++)
            if (be->dtypes & BP_DTYPE_BIT(d))
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                        len ? " " : "", bp_dtype_name((bp_dtype_t)d));
        return bp_error_set(err, BP_EUNAVAIL,
                            "backend '%s' does not compute in %s (the %s's "
                            "dtype); it computes in %s",
                            be->name, bp_dtype_name(seen[k]->dtype),
                            k == 0 ? "result" : "operand", list);
    }
    return BP_OK;
}

/* Empty operands, one rule for every backend and op, so that no kernel sees
 * a row of no values: an op with no result element computes nothing; a
 * reduction over an empty extent with result elements gives each of them
 * the value PyTorch gives (the identity of the fold: sum 0, prod 1; mean
 * and var 0/0, NaN; logsumexp log 0, -inf; matmul, bmm and sdpa over no
 * keys sums of nothing, 0), written by the backend's own fill.  amax and
 * amin have no identity: the shape inference refuses them (op.c).  Other
 * ops (baddbmm over k = 0: beta * input; sdpa of head size 0) compute
 * from their operands as usual. */
typedef enum { EMPTY_NO, EMPTY_NOTHING, EMPTY_FILL } empty_t;

static empty_t empty_rule(const bp_exec_t *x, double *fill)
{
    if (!x->out->numel)
        return x->op->kind == BP_OP_LOAD ? EMPTY_NO /* it checks its file */
                                         : EMPTY_NOTHING;
    const bp_buf_t *r = NULL; /* the operand whose emptiness empties the extent */
    switch (x->op->kind) {
    case BP_OP_SUM: case BP_OP_MEAN: case BP_OP_VAR: case BP_OP_LOGSUMEXP:
    case BP_OP_PROD:
        r = x->a;
        break;
    case BP_OP_MATMUL: case BP_OP_BMM: /* [.., m, k] x [.., k, n], m n > 0 */
        r = x->a && x->a->numel ? x->b : x->a;
        break;
    case BP_OP_SDPA: /* v [.., S, Ev], Ev > 0: S = 0 keys */
        r = x->ninputs > 2 ? x->inputs[2] : NULL;
        break;
    default:
        return EMPTY_NO;
    }
    if (!r || r->numel)
        return EMPTY_NO;
    switch (x->op->kind) {
    case BP_OP_PROD: *fill = 1; break;
    case BP_OP_MEAN: case BP_OP_VAR: *fill = NAN; break;
    case BP_OP_LOGSUMEXP: *fill = -INFINITY; break;
    default: *fill = 0; break;
    }
    return EMPTY_FILL;
}

bp_status bp_backend_op(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = be->enter ? be->enter(be, err) : BP_OK;
    if (st)
        return st;
    double v = 0;
    switch (empty_rule(x, &v)) {
    case EMPTY_NOTHING:
        return BP_OK;
    case EMPTY_FILL: {
        bp_op_t fill = *x->op;
        fill.kind = BP_OP_FULL;
        fill.value = v;
        bp_exec_t y = {.op = &fill, .out = x->out};
        return be->op[BP_OP_FULL](be, &y, err);
    }
    default:
        return be->op[x->op->kind](be, x, err);
    }
}

bp_status bp_backend_exec(bp_backend_t *be, const bp_exec_t *x, bp_error_t *err)
{
    bp_status st = computes(be, x, err);
    return st ? st : bp_backend_op(be, x, err);
}

/* views[r] for each tensor operand of op i (exec_t's order): the buffer a
 * chain of views reads and its geometry; a base without a device copy
 * (taken from the memo, or not read directly by explain's single op) gets
 * one. */
static bp_status resolve_views(bp_backend_t *be, const bp_probe_t *p, size_t i,
                               const bp_meta_t *metas, bp_buf_t *bufs, bp_opview_t *views,
                               bp_error_t *err)
{
    const bp_op_t *op = &p->ops[i];
    int idx[2 + BP_OP_MAXINPUTS], n = 2 + op->ninputs;
    idx[0] = op->a.kind == BP_ARG_BUF ? op->a.buf : -1;
    idx[1] = op->b.kind == BP_ARG_BUF ? op->b.buf : -1;
    for (int k = 0; k < op->ninputs; k++)
        idx[2 + k] = op->inputs[k];
    for (int r = 0; r < n; r++) {
        memset(&views[r], 0, sizeof views[r]);
        if (idx[r] < 0)
            continue;
        int base;
        bp_strided_resolve(p, metas, idx[r], &base, &views[r].geo);
        bp_buf_t *b = &bufs[base];
        if (!b->dev && bp_buf_nbytes(b)) {
            bp_status st = be->dev_alloc(be, b, err);
            if (!st)
                st = be->upload(be, b, err);
            if (st)
                return st;
        }
        views[r].base = b;
    }
    return BP_OK;
}

static bp_status exec_one(bp_backend_t *be, const bp_probe_t *p, size_t i,
                          const bp_meta_t *metas, bp_buf_t *bufs, bp_buf_t *out,
                          bp_error_t *err)
{
    const bp_op_t *op = &p->ops[i];
    const bp_buf_t *ins[BP_OP_MAXINPUTS];
    bp_opview_t views[2 + BP_OP_MAXINPUTS];
    if (op->ninputs > BP_OP_MAXINPUTS)
        return bp_error_set(err, BP_EINPUT, "%s of more than %d inputs",
                            bp_op_name(op->kind), BP_OP_MAXINPUTS);
    for (int k = 0; k < op->ninputs; k++)
        ins[k] = &bufs[op->inputs[k]];
    bp_exec_t x = {
        .op = op,
        .a = op->a.kind == BP_ARG_BUF ? &bufs[op->a.buf] : NULL,
        .b = op->b.kind == BP_ARG_BUF ? &bufs[op->b.buf] : NULL,
        .inputs = ins,
        .ninputs = op->ninputs,
        .out = out,
        .gemm_layout = bp_probe_gemm_layout(p, bufs, i),
    };
    bp_status st = computes(be, &x, err);
    if (!st && be->device && bp_op_has(op->kind, BP_OPF_VIEWS)) {
        st = resolve_views(be, p, i, metas, bufs, views, err);
        x.views = views;
    }
    if (!st)
        st = bp_backend_op(be, &x, err);
    if (st)
        bp_error_prefix(err, "%s:%d: op '%s' (%s) on %s: ", p->path, op->line,
                        op->out, bp_op_name(op->kind), be->name);
    return st;
}

/* Per-buffer state of a run on a device backend. */
enum { B_REUSED = 1, B_HOST = 2 /* host copy current */ };

/* Makes the host copy of computed buffer j current (device backends). */
static bp_status host_copy(bp_backend_t *be, bp_buf_t *b, unsigned char *f,
                           bp_error_t *err)
{
    if (!be->device || (*f & B_HOST) || !b->dev)
        return BP_OK;
    bp_status st = be->download(be, b, err);
    if (!st)
        *f |= B_HOST;
    return st;
}

/* Whether op i can take the memo's result: see memo.h.  Inputs computed in
 * this run are compared on the host (downloaded once, early). */
static bp_status try_reuse(bp_backend_t *be, const bp_probe_t *p, size_t i,
                           const bp_meta_t *meta, bp_buf_t *bufs,
                           unsigned char *flags, bool *hit, bp_error_t *err)
{
    *hit = false;
    const bp_buf_t *k = bp_memo_match(be->memo, i, meta);
    if (!k)
        return BP_OK;
    int reads[BP_OP_MAXREADS];
    int n = bp_op_reads(&p->ops[i], reads);
    for (int r = 0; r < n; r++) {
        int j = reads[r];
        if (j < 0 || (size_t)j >= i)
            return BP_OK;
        if (flags[j] & B_REUSED)
            continue; /* a copy of the kept buffer j itself */
        bp_status st = host_copy(be, &bufs[j], &flags[j], err);
        if (st)
            return st;
        if (!bp_memo_same(&bufs[j], bp_memo_kept(be->memo, (size_t)j)))
            return BP_OK;
    }
    bp_status st = bp_buf_copy(&bufs[i], k, err);
    if (!st) {
        *hit = true;
        flags[i] = B_REUSED | B_HOST;
    }
    return st;
}

/* A device op reads device copies: reused inputs get theirs on demand. */
static bp_status upload_reused(bp_backend_t *be, const bp_op_t *op,
                               bp_buf_t *bufs, bp_error_t *err)
{
    int reads[BP_OP_MAXREADS];
    int n = bp_op_reads(op, reads);
    for (int r = 0; r < n; r++) {
        bp_buf_t *b = &bufs[reads[r]];
        if (b->dev)
            continue;
        bp_status st = be->dev_alloc(be, b, err);
        if (!st)
            st = be->upload(be, b, err);
        if (st)
            return st;
    }
    return BP_OK;
}

bp_status bp_backend_run(bp_backend_t *be, const bp_probe_t *p, bp_dtype_t dt,
                         bp_buf_t *bufs, bp_error_t *err)
{
    size_t n = p->nops ? p->nops : 1;
    bp_meta_t *metas = calloc(n, sizeof *metas);
    unsigned char *flags = calloc(n, 1);
    bool *reused = calloc(n, sizeof *reused);
    if (!metas || !flags || !reused) {
        free(metas);
        free(flags);
        free(reused);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    bp_status st = check_supported(be, p, err);
    if (!st)
        st = bp_probe_infer(p, dt, metas, err);
    bool memo = !st && bp_memo_begin(be->memo, p, dt);
    for (size_t i = 0; !st && i < p->nops; i++) {
        bool hit = false;
        if (memo)
            st = try_reuse(be, p, i, &metas[i], bufs, flags, &hit, err);
        if (st || hit) {
            if (hit) {
                reused[i] = true;
                be->elems_reused += bufs[i].numel;
            }
            continue;
        }
        st = place(be, &bufs[i], &metas[i], err);
        if (!st && be->device && memo)
            st = upload_reused(be, &p->ops[i], bufs, err);
        if (!st)
            st = exec_one(be, p, i, metas, bufs, &bufs[i], err);
        if (!st)
            be->elems += bufs[i].numel;
    }
    for (size_t i = 0; be->device && i < p->nops; i++) {
        if (!st)
            st = host_copy(be, &bufs[i], &flags[i], err);
        dev_release(be, &bufs[i]);
    }
    if (be->memo) {
        if (st)
            bp_memo_clear(be->memo);
        else
            st = bp_memo_keep(be->memo, p, dt, bufs, reused, err);
    }
    free(metas);
    free(flags);
    free(reused);
    return st;
}

/* Whether op reads buffer j (only those need a device copy). */
static bool op_reads(const bp_op_t *op, int j)
{
    int reads[BP_OP_MAXREADS];
    int n = bp_op_reads(op, reads);
    for (int r = 0; r < n; r++)
        if (reads[r] == j)
            return true;
    return false;
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
    if (!st && !bp_backend_supports(be, p->ops[i].kind))
        st = bp_error_set(err, BP_EUNAVAIL,
                          "%s:%d:%d: op '%s' is not supported on backend '%s'",
                          p->path, p->ops[i].line, p->ops[i].col,
                          bp_op_name(p->ops[i].kind), be->name);
    if (!st)
        st = bp_probe_infer(p, dt, metas, err);
    /* Shallow views of the given host buffers; device backends get their
     * own uploaded copies of the ones op i reads. */
    for (size_t j = 0; !st && j < i; j++) {
        view[j] = given[j];
        view[j].dev = NULL;
        if (be->device && op_reads(&p->ops[i], (int)j)) {
            st = be->dev_alloc(be, &view[j], err);
            if (!st)
                st = be->upload(be, &view[j], err);
        }
    }
    if (!st)
        st = place(be, out, &metas[i], err);
    if (!st)
        st = exec_one(be, p, i, metas, view, out, err);
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
