/* The stack's two inits: RoPE buffers built by the shipped probes' ops on
 * a backend (or read from a user's file), and the parameters generated
 * whole or shard by shard (see stack.h for the definitions). */
#include "stack_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st.h"

/* ---- RoPE buffers --------------------------------------------------------- */

/* dtype: dt, or the run dtype (`dtype: $dtype`). */
static void cast_to(bp_op_t *op, int src, bool is_run, bp_dtype_t dt)
{
    op->a = bp_arg_buf(src);
    op->has_dtype = true;
    op->dtype_is_run = is_run;
    op->dtype = is_run ? BP_F32 : dt;
}

/* The index of the buffer the last op appended makes. */
static int last(const bp_probe_build_t *b)
{
    return (int)b->p.nops - 1;
}

void bp_stack_rope_probe(bp_stack_rope_probe_t *rp, const bp_stack_cfg_t *c,
                         bool zero_init, bool init_is_run,
                         bp_dtype_t init_dtype)
{
    memset(rp, 0, sizeof *rp);
    bp_probe_build_t *b = &rp->b;
    double dim = (double)bp_stack_head_dim(c), pos = (double)c->max_positions;
    bp_probe_build_init(b, zero_init ? "rope-llama2-zero-init" : "rope-llama2",
                        BP_DTYPES_RUN);
    /* Each op reads the one before it unless said otherwise. */
    bp_op_t *op = bp_probe_build_op(b, BP_OP_ARANGE, "idx", BP_I64);
    op->end = dim;
    op->step = 2;
    int prev = last(b);
    cast_to(bp_probe_build_op(b, BP_OP_CAST, "idx_f", BP_NDTYPES), prev, false, BP_F32);
    prev = last(b);
    op = bp_probe_build_op(b, BP_OP_DIV, "expo", BP_NDTYPES);
    op->a = bp_arg_buf(prev);
    op->b = bp_arg_num(dim, true);
    prev = last(b);
    op = bp_probe_build_op(b, BP_OP_POW, "denom", BP_NDTYPES);
    op->a = bp_arg_num(c->rope_base, c->rope_base == (double)(int64_t)c->rope_base);
    op->b = bp_arg_buf(prev);
    prev = last(b);
    bp_probe_build_op(b, BP_OP_RECIPROCAL, "recip", BP_NDTYPES)->a = bp_arg_buf(prev);
    prev = last(b);
    op = bp_probe_build_op(b, BP_OP_MUL, "inv_freq_f32", BP_NDTYPES);
    op->a = bp_arg_buf(prev);
    op->b = bp_arg_num(1.0, false);
    rp->inv_freq_f32 = last(b);
    op = bp_probe_build_op(b, BP_OP_ARANGE, zero_init ? "t_f32" : "t", BP_F32);
    op->end = pos;
    op->step = 1;
    prev = last(b);
    if (zero_init) /* zero.Init's cast of a float constructor's result */
        cast_to(bp_probe_build_op(b, BP_OP_CAST, "t", BP_NDTYPES), prev, init_is_run,
                init_dtype);
    int t = last(b);
    op = bp_probe_build_op(b, BP_OP_OUTER, "freqs", BP_NDTYPES);
    op->a = bp_arg_buf(t);
    op->b = bp_arg_buf(rp->inv_freq_f32);
    int freqs = last(b);
    op = bp_probe_build_op(b, BP_OP_CONCAT, "emb", BP_NDTYPES);
    bp_probe_build_inputs(b, op, (const int[2]){freqs, freqs}, 2);
    op->has_axis = true;
    op->axis = -1;
    int emb = last(b);
    bp_probe_build_op(b, BP_OP_COS, "cos_f32", BP_NDTYPES)->a = bp_arg_buf(emb);
    bp_probe_build_op(b, BP_OP_SIN, "sin_f32", BP_NDTYPES)->a = bp_arg_buf(emb);
    cast_to(bp_probe_build_op(b, BP_OP_CAST, "inv_freq", BP_NDTYPES), rp->inv_freq_f32,
            true, BP_F32);
    cast_to(bp_probe_build_op(b, BP_OP_CAST, "cos", BP_NDTYPES), emb + 1, true, BP_F32);
    cast_to(bp_probe_build_op(b, BP_OP_CAST, "sin", BP_NDTYPES), emb + 2, true, BP_F32);
    rp->cos = last(b) - 1;
    rp->sin = last(b);
    for (int k = rp->sin - 2; k <= rp->sin; k++)
        bp_probe_build_output(b, k); /* inv_freq, cos, sin */
    bp_probe_build_param(b, "dim", dim);
    bp_probe_build_param(b, "base", c->rope_base);
    bp_probe_build_param(b, "positions", pos);
    bp_probe_build_done(b);
}

void bp_stack_rope_free(bp_stack_rope_t *r)
{
    bp_buf_free(&r->inv_freq);
    bp_buf_free(&r->cos);
    bp_buf_free(&r->sin);
}

bp_status bp_stack_rope_build(const bp_stack_cfg_t *c, bp_backend_t *be,
                              bool zero_init, bp_dtype_t init_dtype,
                              bp_dtype_t dt, bp_stack_rope_t *out,
                              bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    bp_stack_rope_probe_t *rp = malloc(sizeof *rp);
    bp_buf_t *bufs = calloc(16, sizeof *bufs);
    bp_status st = BP_OK;
    if (!rp || !bufs) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    bp_stack_rope_probe(rp, c, zero_init, init_dtype == dt, init_dtype);
    if ((st = bp_backend_run(be, &rp->b.p, dt, bufs, err))) {
        bp_error_prefix(err, "RoPE buffers (%s) on %s: ", rp->b.p.name,
                        be->name);
        goto done;
    }
    /* Move the three kept buffers out; the rest are freed below. */
    out->inv_freq = bufs[rp->inv_freq_f32];
    out->cos = bufs[rp->cos];
    out->sin = bufs[rp->sin];
    memset(&bufs[rp->inv_freq_f32], 0, sizeof *bufs);
    memset(&bufs[rp->cos], 0, sizeof *bufs);
    memset(&bufs[rp->sin], 0, sizeof *bufs);
done:
    if (bufs && rp)
        bp_backend_bufs_free(bufs, rp->b.p.nops);
    free(bufs);
    free(rp);
    return st;
}

/* Tensor name of f converted to dt with its shape checked. */
static bp_status take(const bp_st_file_t *f, const char *path,
                      const char *name, int ndim, const int64_t *shape,
                      bp_dtype_t dt, bp_buf_t *out, char *note, size_t nl,
                      bp_error_t *err)
{
    const bp_st_tensor_t *t = bp_st_find(f, name);
    if (!t)
        return bp_error_set(err, BP_EINPUT,
                            "cannot use '%s': no tensor '%s' (the file needs "
                            "cos, sin and inv_freq)", path, name);
    const bp_buf_t *b = &t->buf;
    bool ok = b->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = b->shape[d] == shape[d];
    char want[64], got[64];
    bp_shape_format(ndim, shape, want, sizeof want);
    bp_shape_format(b->ndim, b->shape, got, sizeof got);
    if (!ok)
        return bp_error_set(err, BP_EINPUT,
                            "cannot use '%s': tensor '%s' has shape %s, the "
                            "model needs %s (max positions x head dim; see "
                            "--max-positions, --hidden, --heads)", path, name,
                            got, want);
    if (!bp_dtype_info(b->dtype)->is_float)
        return bp_error_set(err, BP_EINPUT,
                            "cannot use '%s': tensor '%s' is %s, not a float "
                            "type", path, name, bp_dtype_name(b->dtype));
    bp_status st = bp_buf_alloc(out, dt, ndim, shape, err);
    if (st)
        return st;
    if (b->dtype == dt) {
        memcpy(out->data, b->data, bp_buf_nbytes(b));
        return BP_OK;
    }
    for (size_t i = 0; i < b->numel; i++)
        bp_buf_set(out, i, bp_buf_get(b, i));
    size_t len = strlen(note);
    snprintf(note + len, nl - len, "%s%s in '%s' is %s: converted to %s",
             len ? "; " : "", name, path, bp_dtype_name(b->dtype),
             bp_dtype_name(dt));
    return BP_OK;
}

bp_status bp_stack_rope_load(const char *path, const bp_stack_cfg_t *c,
                             bp_dtype_t dt, bp_stack_rope_t *out, char *note,
                             size_t nl, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    note[0] = '\0';
    bp_st_file_t f;
    bp_status st = bp_st_read(path, &f, err);
    if (st)
        return st;
    int64_t d = bp_stack_head_dim(c);
    int64_t cs[2] = {c->max_positions, d}, is[1] = {d / 2};
    if ((st = take(&f, path, "cos", 2, cs, dt, &out->cos, note, nl, err)) ||
        (st = take(&f, path, "sin", 2, cs, dt, &out->sin, note, nl, err)) ||
        (st = take(&f, path, "inv_freq", 1, is, BP_F32, &out->inv_freq, note,
                   nl, err)))
        bp_stack_rope_free(out);
    bp_st_free(&f);
    return st;
}

/* ---- parameters ----------------------------------------------------------- */

void bp_stack_shard_range(size_t n, int W, int r, size_t *lo, size_t *hi)
{
    *lo = (size_t)((unsigned __int128)n * (unsigned)r / (unsigned)W);
    *hi = (size_t)((unsigned __int128)n * (unsigned)(r + 1) / (unsigned)W);
}

bp_status bp_stack_params_generate(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                                   uint64_t seed, bp_dtype_t dt, bp_buf_t *w,
                                   bp_error_t *err)
{
    size_t np = bp_stack_nparams(c);
    for (size_t i = 0; i < np; i++) {
        bp_stack_param_t p;
        bp_stack_param(c, i, &p);
        bp_status st = ops->alloc(ops, &w[i], dt, p.ndim, p.shape, err);
        if (!st)
            st = ops->uniform(ops, &w[i], 0, p.numel, seed, p.stream, 0, p.low,
                              p.high, err);
        if (st)
            return bp_error_prefix(err, "generating %s: ", p.name);
    }
    return BP_OK;
}

void bp_stack_params_release(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                             bp_buf_t *w)
{
    size_t np = bp_stack_nparams(c);
    for (size_t i = 0; w && i < np; i++)
        if (w[i].data || w[i].dev)
            ops->release(ops, &w[i]);
}

/* A view of the first n elements of a scratch tensor, as shape. */
static bp_buf_t view(const bp_buf_t *scratch, int ndim, const int64_t *shape,
                     size_t n)
{
    bp_buf_t v = *scratch;
    v.ndim = ndim;
    for (int d = 0; d < ndim; d++)
        v.shape[d] = shape[d];
    v.numel = n;
    return v;
}

bp_status bp_stack_param_emulate(bp_stack_dev_t *ops, const bp_stack_param_t *p,
                                 uint64_t seed, int W, const bp_buf_t *shard,
                                 bp_buf_t *g, bp_error_t *err)
{
    size_t lo, hi;
    bp_status st = BP_OK;
    for (int r = 0; !st && r < W; r++) {
        bp_stack_shard_range(p->numel, W, r, &lo, &hi);
        int64_t n1[1] = {(int64_t)(hi - lo)};
        bp_buf_t sh = view(shard, 1, n1, hi - lo);
        st = ops->uniform(ops, &sh, 0, hi - lo, seed, p->stream, lo, p->low,
                          p->high, err);
        if (!st)
            st = ops->copy(ops, g, lo, &sh, 0, hi - lo, err);
    }
    return st;
}

bp_status bp_stack_params_check(bp_stack_dev_t *ops, const bp_stack_cfg_t *c,
                                uint64_t seed, bp_dtype_t dt, int W,
                                const bp_buf_t *w, bp_stack_pcheck_t *out,
                                bp_error_t *err)
{
    size_t np = bp_stack_nparams(c), most = 0, lo, hi, shard_most = 0;
    if (W < 1)
        return bp_error_set(err, BP_EINPUT, "--shards %d: at least 1", W);
    for (size_t i = 0; i < np; i++) {
        bp_stack_param(c, i, &out[i].p);
        size_t n = out[i].p.numel;
        most = n > most ? n : most;
        for (int r = 0; r < W; r++) {
            bp_stack_shard_range(n, W, r, &lo, &hi);
            shard_most = hi - lo > shard_most ? hi - lo : shard_most;
        }
    }
    bp_buf_t shard = {0}, gathered = {0}, ha = {0}, hb = {0};
    int64_t s1[1] = {(int64_t)shard_most}, g1[1] = {(int64_t)most};
    bp_status st = ops->alloc(ops, &shard, dt, 1, s1, err);
    if (!st)
        st = ops->alloc(ops, &gathered, dt, 1, g1, err);
    if (!st)
        st = bp_buf_alloc(&ha, dt, 1, g1, err);
    if (!st)
        st = bp_buf_alloc(&hb, dt, 1, g1, err);
    for (size_t i = 0; !st && i < np; i++) {
        const bp_stack_param_t *p = &out[i].p;
        bp_buf_t g = view(&gathered, p->ndim, p->shape, p->numel);
        st = bp_stack_param_emulate(ops, p, seed, W, &shard, &g, err);
        bp_buf_t a = view(&ha, p->ndim, p->shape, p->numel),
                 b = view(&hb, p->ndim, p->shape, p->numel);
        if (!st)
            st = ops->get(ops, &w[i], a.data, err);
        if (!st)
            st = ops->get(ops, &g, b.data, err);
        if (!st)
            st = bp_compare(&a, &b, NULL, NULL, &out[i].cmp, err);
        if (st)
            bp_error_prefix(err, "checking sharded %s: ", p->name);
    }
    if (shard.data || shard.dev)
        ops->release(ops, &shard);
    if (gathered.data || gathered.dev)
        ops->release(ops, &gathered);
    bp_buf_free(&ha);
    bp_buf_free(&hb);
    return st;
}
