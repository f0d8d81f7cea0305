/* The ledger hash, fmix64-sum/1 (ledger_fmix.h: the same function as
 * bitprobe_torch.hash_bytes and its torch, native and CUDA versions), and
 * the captured tensors checked against it. */
#include "ledger.h"
#include "ledger_fmix.h"

#include <limits.h>
#include <string.h>

#include "safeopen.h"

uint64_t bp_ledger_hash(const void *data, size_t nbytes)
{
    return bp_ledger_hash_inline(data, nbytes);
}

bp_status bp_ledger_captures_path(const bp_ledger_t *l, char *out, size_t n, bp_error_t *err)
{
    const char *c = bp_ledger_header_str(l, "captures");
    if (!c)
        return bp_error_set(err, BP_EINPUT, "ledger '%s' has no captured tensors (record with "
                            "--capture, --capture-bytes or --reference)", l->path);
    const char *slash = strrchr(l->path, '/');
    int len = slash ? snprintf(out, n, "%.*s/%s", (int)(slash - l->path), l->path, c)
                    : snprintf(out, n, "%s", c);
    if (len < 0 || (size_t)len >= n)
        return bp_error_set(err, BP_EINPUT, "path too long next to '%s'", l->path);
    return BP_OK;
}

static bp_status check_one(const bp_ledger_t *l, const char *path, const bp_st_file_t *f,
                           size_t seq, const char *role, uint32_t k,
                           const bp_ledger_tensor_t *t, bp_error_t *err)
{
    const bp_st_tensor_t *s = bp_st_find(f, t->capture);
    if (!s)
        return bp_error_set(err, BP_EINPUT, "captures '%s' lack tensor '%s' (ledger '%s', "
                            "record %zu, %s[%u])", path, t->capture, l->path, seq, role, k);
    const char *dt = bp_dtype_info(s->buf.dtype)->st_name;
    if (strcmp(dt, t->dtype) != 0 || !bp_shape_equal(t->ndim, t->shape, s->buf.ndim, s->buf.shape)) {
        char a[128], b[128];
        bp_shape_format(t->ndim < BP_MAXDIM ? t->ndim : BP_MAXDIM, t->shape, a, sizeof a);
        bp_shape_format(s->buf.ndim, s->buf.shape, b, sizeof b);
        return bp_error_set(err, BP_EINPUT, "captured tensor '%s' in '%s' is %s %s, record %zu "
                            "of '%s' says %s %s", t->capture, path, dt, b, seq, l->path,
                            t->dtype, a);
    }
    uint64_t h = bp_ledger_hash(s->buf.data, bp_buf_nbytes(&s->buf));
    if (h != t->hash)
        return bp_error_set(err, BP_EINPUT, "captured tensor '%s' in '%s' hashes to %016llx, "
                            "record %zu of '%s' says %016llx: the captures do not belong to "
                            "this ledger", t->capture, path, (unsigned long long)h, seq,
                            l->path, (unsigned long long)t->hash);
    return BP_OK;
}

bp_status bp_ledger_read_captures(const bp_ledger_t *l, bp_st_file_t *f, bp_error_t *err)
{
    char path[PATH_MAX];
    bp_status st = bp_ledger_captures_path(l, path, sizeof path, err);
    if (st)
        return st;
    char dir[PATH_MAX];
    if (!bp_safe_dirname(l->path, dir, sizeof dir))
        return bp_error_set(err, BP_EINPUT, "path too long: '%s'", l->path);
    if ((st = bp_st_read_in(dir, bp_ledger_header_str(l, "captures"), f, err)))
        return st;
    for (size_t i = 0; !st && i < l->n; i++) {
        const bp_ledger_op_t *op = &l->ops[i];
        for (uint32_t k = 0; !st && k < op->nin; k++)
            if (op->in[k].capture)
                st = check_one(l, path, f, i, "in", k, &op->in[k], err);
        for (uint32_t k = 0; !st && k < op->nout; k++)
            if (op->out[k].capture)
                st = check_one(l, path, f, i, "out", k, &op->out[k], err);
    }
    if (st)
        bp_st_free(f);
    return st;
}
