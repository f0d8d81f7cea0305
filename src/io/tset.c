/* Tensor sets: files and saved runs (see tset.h; checkpoints are in
 * tset_ckpt.c, .npz in tset_npz.c). */
#include "tset_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bundle.h"
#include "dwalk.h"
#include "npy.h"
#include "safeopen.h"
#include "sniff.h"
#include "st.h"

bp_status bp_tset_oom(const char *what, bp_error_t *err)
{
    return bp_error_set(err, BP_ENOMEM, "%s: out of memory", what);
}

bp_status bp_tset_add_file(bp_tset_t *s, int fd, bool borrowed, const char *path,
                           const bp_tsrc_t *src, size_t *idx, bp_error_t *err)
{
    if (s->nf == s->capf) {
        size_t cap = s->capf ? 2 * s->capf : 8;
        bp_tfile_t *f = realloc(s->f, cap * sizeof *f);
        if (!f) {
            if (!borrowed)
                close(fd);
            return bp_tset_oom(path, err);
        }
        s->f = f;
        s->capf = cap;
    }
    bp_tfile_t *f = &s->f[s->nf];
    memset(f, 0, sizeof *f);
    f->fd = fd;
    f->borrowed = borrowed;
    f->src = *src;
    size_t n = strlen(path) + 16;
    if (!(f->label = malloc(n))) {
        if (!borrowed)
            close(fd);
        return bp_tset_oom(path, err);
    }
    snprintf(f->label, n, "cannot read '%s'", path);
    *idx = s->nf++;
    return BP_OK;
}

bp_tent_t *bp_tset_add(bp_tset_t *s, const char *name, bp_error_t *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        bp_tent_t *t = realloc(s->t, cap * sizeof *t);
        if (!t) {
            bp_tset_oom(s->path, err);
            return NULL;
        }
        s->t = t;
        s->cap = cap;
    }
    bp_tent_t *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) {
        bp_tset_oom(s->path, err);
        return NULL;
    }
    s->n++;
    return t;
}

/* Reads content bytes [off, off + len) of a source into dst. */
bp_status bp_tset_pull(bp_tread_t *r, uint64_t off, void *dst, size_t len, size_t *got,
                       bp_error_t *err)
{
    *got = 0;
    while (*got < len) {
        size_t want = len - *got < BP_TREAD_WINDOW ? len - *got : BP_TREAD_WINDOW, k;
        const unsigned char *p;
        bp_status st = bp_tread_get(r, off + *got, want, &p, &k, err);
        if (st)
            return st;
        memcpy((char *)dst + *got, p, k);
        *got += k;
        if (k < want)
            break;
    }
    return BP_OK;
}

/* ---- safetensors ------------------------------------------------------ */

/* The layout of the safetensors content of file fi; its tensors are
 * added under prefix (NULL: their own names). */
bp_status bp_tset_add_st(bp_tset_t *s, size_t fi, const char *prefix, bool allow_unknown,
                         bp_st_layout_t *keep, bp_error_t *err)
{
    bp_tfile_t *f = &s->f[fi];
    bool inflated = f->src.kind != BP_TF_MAP;
    uint64_t total = inflated ? UINT64_MAX : f->src.ulen;
    bp_tread_t *r;
    bp_status st = bp_tread_open(f->fd, f->label, &f->src, &r, err);
    if (st)
        return st;
    unsigned char len8[8];
    char *hdr = NULL;
    size_t got;
    uint64_t hlen = 0;
    bp_st_layout_t l = {0};
    if (!(st = bp_tset_pull(r, 0, len8, 8, &got, err)) && got < 8)
        st = bp_st_stream_error(f->label, inflated, got, 0, 0, err);
    if (!st)
        st = bp_st_head_len(len8, total, f->label, inflated, &hlen, err);
    if (!st && !(hdr = malloc(hlen + 1)))
        st = bp_tset_oom(f->label, err);
    if (!st && !(st = bp_tset_pull(r, 8, hdr, (size_t)hlen, &got, err)) && got < hlen)
        st = bp_st_stream_error(f->label, inflated, 8 + got, hlen, 0, err);
    if (!st)
        st = bp_st_layout_parse(hdr, hlen, total, f->label, inflated, allow_unknown, &l, err);
    free(hdr);
    bp_tread_close(r);
    if (st)
        return st;
    f->safetensors = true;
    f->hlen = hlen;
    f->data_len = l.data_len;
    f->meta = l.meta ? json_incref(l.meta) : NULL;
    for (size_t i = 0; !st && i < l.n; i++) {
        const bp_st_entry_t *e = &l.e[i];
        char name[PATH_MAX + 512];
        snprintf(name, sizeof name, "%s%s", prefix ? prefix : "", e->name);
        bp_tent_t *t = bp_tset_add(s, name, err);
        if (!t) {
            st = BP_ENOMEM;
            break;
        }
        snprintf(t->dtype, sizeof t->dtype, "%s", e->dtype);
        t->known = e->known;
        t->dt = e->dt;
        t->ndim = e->ndim;
        memcpy(t->shape, e->shape, sizeof t->shape);
        t->nbytes = e->end - e->begin;
        t->file = fi;
        t->off = l.data_start + e->begin;
        t->has_crc = e->has_crc;
        t->crc = e->crc;
    }
    if (keep && !st)
        *keep = l;
    else
        bp_st_layout_free(&l);
    return st;
}

bp_status bp_tset_crc_error(const bp_tfile_t *f, const bp_tent_t *t, uint32_t computed,
                            bp_error_t *err)
{
    if (!f->zip_member)
        return bp_st_crc_error(f->label, f->src.kind != BP_TF_MAP, t->off, t->name, t->crc,
                               computed, err);
    uint32_t got = (uint32_t)crc32_combine(f->head_crc, computed, (z_off_t)t->nbytes);
    return bp_error_set(err, BP_EINPUT, "%s: CRC-32 mismatch: the zip directory says "
                        "0x%08" PRIx32 ", the member's bytes give 0x%08" PRIx32,
                        f->label, f->zip_crc, got);
}

bp_status bp_tset_file_end(const bp_tfile_t *f, bp_tread_t *r, bp_error_t *err)
{
    if (f->src.kind == BP_TF_MAP)
        return BP_OK; /* the layout checked the file's length */
    uint64_t claimed = f->safetensors ? 8 + f->hlen + f->data_len : f->src.ulen, len;
    bp_status st = bp_tread_finish(r, claimed, &len, err);
    if (st || len == claimed)
        return st;
    if (f->safetensors)
        return bp_st_stream_error(f->label, true, len, f->hlen, f->data_len, err);
    return bp_error_set(err, BP_EINPUT, "%s: the stream holds %s bytes than the %llu "
                        "its directory entry says", f->label,
                        len < claimed ? "fewer" : "more", (unsigned long long)claimed);
}

/* ---- .npy ------------------------------------------------------------- */

bp_status bp_tset_add_npy(bp_tset_t *s, size_t fi, const char *name, bool as_bf16,
                          bp_error_t *err)
{
    bp_tfile_t *f = &s->f[fi];
    uint64_t total = f->src.ulen;
    size_t want = total < 12 + BP_NPY_MAX_HEADER ? (size_t)total : 12 + BP_NPY_MAX_HEADER;
    unsigned char *head = malloc(want ? want : 1);
    if (!head)
        return bp_tset_oom(f->label, err);
    bp_tread_t *r;
    size_t got = 0;
    bp_npy_layout_t l;
    bp_status st = bp_tread_open(f->fd, f->label, &f->src, &r, err);
    if (!st) {
        st = bp_tset_pull(r, 0, head, want, &got, err);
        bp_tread_close(r);
    }
    if (!st && got < want) /* a stream that ends before its entry's size */
        st = bp_error_set(err, BP_EINPUT, "%s: the stream holds fewer bytes than the %llu "
                          "its directory entry says", f->label, (unsigned long long)total);
    if (!st)
        st = bp_npy_layout(head, got, total, f->label, as_bf16, &l, err);
    if (!st && f->zip_member) {
        /* the member's CRC covers header and data: the data's own follows
         * (crc(H D) = shift(crc(H), |D|) ^ crc(D), so crc(D) =
         * crc32_combine(crc(H), crc(H D), |D|)); checked as it is read */
        f->head_crc = (uint32_t)crc32_z(0, head, (size_t)l.data_off);
        if (!l.nbytes && f->head_crc != f->zip_crc)
            st = bp_tset_crc_error(f, &(bp_tent_t){.nbytes = 0}, 0, err);
    }
    free(head);
    if (st)
        return st;
    bp_tent_t *t = bp_tset_add(s, name, err);
    if (!t)
        return BP_ENOMEM;
    snprintf(t->dtype, sizeof t->dtype, "%s", l.descr);
    t->known = true;
    t->dt = l.dt;
    t->ndim = l.ndim;
    memcpy(t->shape, l.shape, sizeof t->shape);
    t->nbytes = l.nbytes;
    t->file = fi;
    t->off = l.data_off;
    if (f->zip_member && l.nbytes) {
        t->has_crc = true;
        t->crc = (uint32_t)crc32_combine(f->head_crc, f->zip_crc, (z_off_t)l.nbytes);
    }
    return BP_OK;
}

/* ---- one file ---------------------------------------------------------- */

static bp_status open_file(bp_tset_t *s, int fd, const char *path, const bp_tset_opts_t *o,
                           bp_error_t *err)
{
    struct stat sb;
    bool ok = fstat(fd, &sb) == 0;
    const char *why = ok ? "not a regular file" : strerror(errno);
    if (!ok || !S_ISREG(sb.st_mode)) {
        close(fd);
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, why);
    }
    unsigned char head[512];
    ssize_t n = pread(fd, head, sizeof head, 0);
    if (n < 0) {
        int e = errno;
        close(fd);
        return bp_error_set(err, BP_EIO, "cannot read '%s': %s", path, strerror(e));
    }
    uint64_t size = (uint64_t)sb.st_size;
    bp_sniff_t k = bp_sniff(head, (size_t)n, size);
    if (k == BP_SNIFF_JSON && bp_tset_is_index(path)) {
        close(fd);
        return bp_tset_open_ckpt(s, path, err);
    }
    bp_tsrc_t src = {.kind = BP_TF_MAP, .start = 0, .clen = size, .ulen = size};
    if (k == BP_SNIFF_GZIP)
        src = (bp_tsrc_t){.kind = BP_TF_GZIP, .start = 0, .clen = size, .ulen = UINT64_MAX};
    /* Unknown binary data is read as safetensors: its rules then say what
     * is wrong with it ("header length ... exceeds 100 MB"). */
    if (k != BP_SNIFF_SAFETENSORS && k != BP_SNIFF_GZIP && k != BP_SNIFF_NPY &&
        k != BP_SNIFF_ZIP && k != BP_SNIFF_OTHER) {
        close(fd);
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s, not safetensors, .npy "
                            "or .npz%s", path, bp_sniff_name(k),
                            k == BP_SNIFF_JSON    ? " (a checkpoint's index is named "
                                                    "*.safetensors.index.json)"
                            : k == BP_SNIFF_TORCH ? " (safetensors.torch.save_file writes "
                                                    "its tensors as safetensors)"
                                                  : "");
    }
    size_t fi;
    bp_status st = bp_tset_add_file(s, fd, false, path, &src, &fi, err);
    if (st)
        return st;
    if (k == BP_SNIFF_ZIP)
        return bp_tset_open_npz(s, fi, o->as_bf16, err);
    if (k == BP_SNIFF_NPY) {
        const char *base = strrchr(path, '/');
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s", base ? base + 1 : path);
        size_t l = strlen(name);
        if (l > 4 && strcmp(name + l - 4, ".npy") == 0)
            name[l - 4] = '\0';
        return bp_tset_add_npy(s, fi, name, o->as_bf16, err);
    }
    if (k == BP_SNIFF_GZIP) {
        /* what the gzip holds, named as a plain file would be */
        unsigned char in[512];
        size_t got = 0;
        bp_tread_t *r;
        bp_status st = bp_tread_open(fd, s->f[fi].label, &src, &r, err);
        if (!st) {
            st = bp_tset_pull(r, 0, in, sizeof in, &got, err);
            bp_tread_close(r);
        }
        if (st)
            return st;
        bp_sniff_t ik = bp_sniff(in, got, UINT64_MAX);
        if (ik != BP_SNIFF_SAFETENSORS && ik != BP_SNIFF_OTHER)
            return bp_error_set(err, BP_EINPUT, "cannot read '%s': gzip'd %s, not "
                                "safetensors", path, bp_sniff_name(ik));
    }
    return bp_tset_add_st(s, fi, NULL, true, NULL, err);
}

/* ---- saved runs -------------------------------------------------------- */

/* "seed-div/cpu-sleef.safetensors.gz" -> probe "seed-div", key
 * "cpu-sleef"; false when the path has another form. */
static bool probe_key(const char *rel, char *probe, char *key, size_t n)
{
    const char *slash = strchr(rel, '/'), *dot;
    if (!slash || strchr(slash + 1, '/') || !(dot = strstr(slash + 1, ".safetensors")))
        return false;
    if ((size_t)(slash - rel) >= n || (size_t)(dot - slash - 1) >= n)
        return false;
    snprintf(probe, n, "%.*s", (int)(slash - rel), rel);
    snprintf(key, n, "%.*s", (int)(dot - slash - 1), slash + 1);
    return true;
}

/* The backend name of a key, from the manifest's backends (else the key's
 * first word: "cuda-sm90" -> "cuda"). */
static void backend_of(json_t *m, const char *key, char *out, size_t n)
{
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(m, "backends"), i, b) {
        const char *k = json_string_value(json_object_get(b, "key"));
        const char *nm = json_string_value(json_object_get(b, "name"));
        if (k && nm && strcmp(k, key) == 0) {
            snprintf(out, n, "%s", nm);
            return;
        }
    }
    snprintf(out, n, "%.*s", (int)strcspn(key, "-"), key);
}

static bp_status open_bundle(bp_tset_t *s, const char *dir, bp_error_t *err)
{
    bp_status st = bp_bundle_read_manifest(dir, &s->manifest, err);
    if (st)
        return st;
    s->kind = BP_TSET_BUNDLE;
    bp_safe_dir_t root;
    const char *why;
    if (bp_safe_dir(dir, &root, &why) < 0)
        return bp_error_set(err, BP_EIO, "cannot read bundle '%s': %s", dir, why);
    json_t *files = json_object_get(s->manifest, "files");
    for (size_t i = 0; !st && i < json_array_size(files); i++) {
        const char *rel = json_string_value(json_array_get(files, i));
        char path[PATH_MAX], probe[256], key[256], backend[256], pre[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        int fd = bp_safe_in(&root, rel, &why);
        struct stat sb;
        if (fd < 0) {
            st = bp_error_set(err, BP_EINPUT, "cannot read bundle '%s': files[%zu] '%s': %s",
                              dir, i, rel, why);
            break;
        }
        if (fstat(fd, &sb) != 0) {
            st = bp_error_set(err, BP_EIO, "cannot read bundle '%s': files[%zu] '%s': %s",
                              dir, i, rel, strerror(errno));
            close(fd);
            break;
        }
        unsigned char magic[2];
        bool gz = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
        bp_tsrc_t src = {gz ? BP_TF_GZIP : BP_TF_MAP, 0, (uint64_t)sb.st_size,
                         gz ? UINT64_MAX : (uint64_t)sb.st_size};
        size_t fi, first = s->n;
        if ((st = bp_tset_add_file(s, fd, false, path, &src, &fi, err)))
            break;
        bool meaning = probe_key(rel, probe, key, sizeof probe);
        if (meaning)
            snprintf(pre, sizeof pre, "%s/%s/", probe, key);
        else
            snprintf(pre, sizeof pre, "%s/", rel);
        if ((st = bp_tset_add_st(s, fi, pre, false, NULL, err)) || !meaning)
            continue;
        backend_of(s->manifest, key, backend, sizeof backend);
        for (size_t k = first; !st && k < s->n; k++) {
            bp_tent_t *t = &s->t[k];
            const char *leaf = t->name + strlen(pre), *dot = strrchr(leaf, '.');
            /* "<output>.<run dtype>"; a name without that suffix (a
             * buffer "rotary_emb.inv_freq") is all output */
            t->in_run = dot && bp_dtype_parse(dot + 1, &t->run_dtype);
            size_t ol = t->in_run ? (size_t)(dot - leaf) : strlen(leaf);
            if (!(t->probe = strdup(probe)) || !(t->key = strdup(key)) ||
                !(t->backend = strdup(backend)) || !(t->output = strndup(leaf, ol)))
                st = bp_tset_oom(dir, err);
        }
    }
    bp_safe_dir_close(&root);
    return st;
}

/* ---- the set ----------------------------------------------------------- */

typedef struct {
    const char *name;
    size_t i;
} named_t;

static int by_name_cmp(const void *x, const void *y)
{
    const named_t *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

bp_status bp_tset_index(bp_tset_t *s, bp_error_t *err)
{
    free(s->byname);
    s->byname = malloc((s->n ? s->n : 1) * sizeof *s->byname);
    named_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!s->byname || !v) {
        free(v);
        return bp_tset_oom(s->path, err);
    }
    for (size_t i = 0; i < s->n; i++)
        v[i] = (named_t){s->t[i].name, i};
    qsort(v, s->n, sizeof *v, by_name_cmp);
    bp_status st = BP_OK;
    for (size_t i = 0; i < s->n; i++) {
        s->byname[i] = v[i].i;
        if (!st && i > 0 && strcmp(v[i].name, v[i - 1].name) == 0)
            st = bp_error_set(err, BP_EINPUT, "cannot read '%s': two tensors named '%s'",
                              s->path, v[i].name);
    }
    free(v);
    return st;
}

const bp_tent_t *bp_tset_find(const bp_tset_t *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->t[s->byname[mid]].name, name);
        if (c == 0)
            return &s->t[s->byname[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const bp_tfile_t *bp_tset_file(const bp_tset_t *s, const bp_tent_t *t)
{
    return &s->f[t->file];
}

bp_status bp_tset_dir_kind(const char *dir, bp_dir_kind_t *out, bp_error_t *err)
{
    char p[PATH_MAX];
    struct stat sb;
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    if (stat(p, &sb) == 0) {
        *out = BP_DIR_BUNDLE;
        return BP_OK;
    }
    char index[PATH_MAX];
    int n = bp_tset_find_index(dir, index, sizeof index, err);
    if (n < 0)
        return BP_EINPUT;
    *out = n ? BP_DIR_CHECKPOINT : BP_DIR_PLAIN;
    return BP_OK;
}

/* The one set a plain directory holds (dwalk.h's sets: tensor files,
 * checkpoints, saved runs) into out; more or none: an error saying so. */
static bp_status only_set(const char *dir, char *out, size_t n, bp_error_t *err)
{
    bp_walk_t w;
    bp_status st = bp_walk(dir, &w, err);
    if (st)
        return st;
    if (w.n == 1)
        snprintf(out, n, "%s/%s", dir, w.rel[0]);
    else
        st = bp_error_set(err, BP_EINPUT, "cannot read '%s': a directory with neither "
                          "manifest.json (a saved run) nor one *.safetensors.index.json (a "
                          "checkpoint), holding %s%s%s%s%s; compare it with another "
                          "directory (file by file, as diff -r)%s", dir,
                          w.n ? "several tensor files (" : "no tensor file", w.n ? w.rel[0] : "",
                          w.n ? ", " : "", w.n ? w.rel[1] : "", w.n > 2 ? ", ...)" : w.n ? ")" : "",
                          w.n ? " or name one" : "");
    bp_walk_free(&w);
    return st;
}

bp_status bp_tset_open(const char *path, const bp_tset_opts_t *o, bp_tset_t *out,
                       bp_error_t *err)
{
    bp_tset_opts_t defo = {0};
    memset(out, 0, sizeof *out);
    if (!o)
        o = &defo;
    if (!(out->path = strdup(path)))
        return bp_tset_oom(path, err);
    out->kind = BP_TSET_FILE;
    struct stat sb;
    bp_status st;
    if (stat(path, &sb) != 0) {
        st = bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
        bp_dir_kind_t k;
        char index[PATH_MAX];
        if ((st = bp_tset_dir_kind(path, &k, err)))
            ;
        else if (k == BP_DIR_BUNDLE)
            st = open_bundle(out, path, err);
        else if (k == BP_DIR_CHECKPOINT && bp_tset_find_index(path, index, sizeof index, err) > 0)
            st = bp_tset_open_ckpt(out, index, err);
        else if (!(st = only_set(path, index, sizeof index, err))) {
            /* one tensor file under it: that file's set (a Hugging Face
             * repository's model.safetensors beside config.json) */
            bp_tset_free(out);
            return bp_tset_open(index, o, out, err);
        }
    } else {
        const char *why;
        int fd = bp_safe_path(path, &why);
        if (fd < 0)
            st = bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, why);
        else
            st = open_file(out, fd, path, o, err);
    }
    if (!st)
        st = bp_tset_index(out, err);
    if (st)
        bp_tset_free(out);
    return st;
}

void bp_tset_free(bp_tset_t *s)
{
    for (size_t i = 0; s->t && i < s->n; i++) {
        bp_tent_t *t = &s->t[i];
        free(t->name);
        free(t->probe);
        free(t->key);
        free(t->backend);
        free(t->output);
    }
    for (size_t i = 0; s->f && i < s->nf; i++) {
        if (s->f[i].fd >= 0 && !s->f[i].borrowed)
            close(s->f[i].fd);
        free(s->f[i].label);
        json_decref(s->f[i].meta);
    }
    free(s->t);
    free(s->f);
    free(s->byname);
    free(s->path);
    json_decref(s->manifest);
    memset(s, 0, sizeof *s);
}

bp_status bp_tset_read_tensor(const bp_tset_t *s, const bp_tent_t *t, bp_buf_t *out,
                              bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (!t->known)
        return bp_error_set(err, BP_EINPUT, "tensor '%s': dtype %s is not one bitprobe reads",
                            t->name, t->dtype);
    const bp_tfile_t *f = bp_tset_file(s, t);
    bp_status st = bp_buf_alloc(out, t->dt, t->ndim, t->shape, err);
    bp_tread_t *r = NULL;
    size_t got;
    if (!st)
        st = bp_tread_open(f->fd, f->label, &f->src, &r, err);
    if (!st)
        st = bp_tset_pull(r, t->off, out->data, (size_t)t->nbytes, &got, err);
    if (!st && got < t->nbytes)
        st = f->safetensors
                 ? bp_st_stream_error(f->label, f->src.kind != BP_TF_MAP, t->off + got,
                                      f->hlen, f->data_len, err)
                 : bp_error_set(err, BP_EINPUT, "%s: content ends inside tensor '%s'",
                                f->label, t->name);
    bp_tread_close(r);
    if (!st && t->has_crc) {
        uint32_t crc = (uint32_t)crc32_z(0, out->data, (size_t)t->nbytes);
        if (crc != t->crc)
            st = bp_tset_crc_error(f, t, crc, err);
    }
    if (st)
        bp_buf_free(out);
    return st;
}
