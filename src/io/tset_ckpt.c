/* Hugging Face sharded checkpoints as one tensor set (see tset.h and
 * ckpt_index.h).  The index's rules are checked first; then each shard is
 * opened beneath the index's directory (never outside it, symbolic links
 * included: safeopen.h), its header read, and the index and the shards
 * must agree: every listed tensor in the shard the index names, no tensor
 * in two shards, no tensor a shard holds that the index does not list. */
#include "tset_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_index.h"
#include "safeopen.h"

#define INDEX_SUFFIX ".safetensors.index.json"

bool bp_tset_is_index(const char *path)
{
    size_t a = strlen(path), b = strlen(INDEX_SUFFIX);
    return a > b && strcmp(path + a - b, INDEX_SUFFIX) == 0;
}

int bp_tset_find_index(const char *dir, char *out, size_t n, bp_error_t *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", dir, strerror(errno));
        return -1;
    }
    int found = 0;
    char first[NAME_MAX + 1] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!bp_tset_is_index(e->d_name))
            continue;
        if (found++ == 0) {
            snprintf(first, sizeof first, "%s", e->d_name);
            snprintf(out, n, "%s/%s", dir, e->d_name);
        } else {
            bp_error_set(err, BP_EINPUT, "cannot read '%s': two checkpoint indexes, '%s' "
                         "and '%s' (name the one to read)", dir, first, e->d_name);
            found = -1;
            break;
        }
    }
    closedir(d);
    return found;
}

static bp_status read_index(const char *path, char **text, size_t *len, bp_error_t *err)
{
    *text = NULL;
    const char *why;
    int fd = bp_safe_path(path, &why);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0) {
            why = strerror(errno);
            close(fd);
        }
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, why);
    }
    bp_status st = BP_OK;
    if ((uint64_t)sb.st_size > BP_INDEX_MAX_BYTES)
        st = bp_error_set(err, BP_EINPUT, "cannot read '%s': %lld bytes (an index is at "
                          "most %u)", path, (long long)sb.st_size, BP_INDEX_MAX_BYTES);
    else if (!(*text = malloc((size_t)sb.st_size + 1)))
        st = bp_tset_oom(path, err);
    size_t got = 0;
    while (!st && got < (size_t)sb.st_size) {
        ssize_t k = pread(fd, *text + got, (size_t)sb.st_size - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            st = bp_error_set(err, BP_EIO, "cannot read '%s': %s", path,
                              k < 0 ? strerror(errno) : "file shrank while read");
        else
            got += (size_t)k;
    }
    close(fd);
    if (st) {
        free(*text);
        *text = NULL;
    }
    *len = got;
    return st;
}

/* Opens shard k beneath dfd and adds its tensors. */
static bp_status open_shard(bp_tset_t *s, const bp_safe_dir_t *root, const char *dir,
                            const char *label, const bp_ckpt_index_t *x, size_t k,
                            bp_error_t *err)
{
    const char *rel = x->shards[k], *why, *some = NULL;
    for (size_t i = 0; i < x->n && !some; i++)
        if (x->e[i].shard == k)
            some = x->e[i].tensor;
    int fd = bp_safe_in(root, rel, &why);
    if (fd < 0)
        return bp_error_set(err, BP_EINPUT, "%s: shard '%s' of tensor '%s'%s%s", label, rel,
                            some, errno == ENOENT ? " does not exist" : ": ",
                            errno == ENOENT ? "" : why);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return bp_error_set(err, BP_EIO, "%s: shard '%s': %s", label, rel, strerror(e));
    }
    unsigned char magic[2];
    bool gz = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    bp_tsrc_t src = {gz ? BP_TF_GZIP : BP_TF_MAP, 0, (uint64_t)sb.st_size,
                     gz ? UINT64_MAX : (uint64_t)sb.st_size};
    char path[2 * PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t fi;
    bp_status st = bp_tset_add_file(s, fd, false, path, &src, &fi, err);
    return st ? st : bp_tset_add_st(s, fi, NULL, true, NULL, err);
}

typedef struct {
    const char *name;
    size_t shard; /* of the index (listed) or of the file (found) */
    bool listed;
} who_t;

static int cmp_who(const void *a, const void *b)
{
    const who_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c || x->listed != y->listed)
        return c ? c : (int)y->listed - (int)x->listed; /* the listing first */
    return (x->shard > y->shard) - (x->shard < y->shard);
}

/* The index and the shards agree (see the top of this file). */
static bp_status agree(const bp_tset_t *s, const char *label, const bp_ckpt_index_t *x,
                       const size_t *shard_of_file, bp_error_t *err)
{
    size_t n = x->n + s->n;
    who_t *w = malloc((n ? n : 1) * sizeof *w);
    if (!w)
        return bp_tset_oom(label, err);
    for (size_t i = 0; i < x->n; i++)
        w[i] = (who_t){x->e[i].tensor, x->e[i].shard, true};
    for (size_t i = 0; i < s->n; i++)
        w[x->n + i] = (who_t){s->t[i].name, shard_of_file[s->t[i].file], false};
    qsort(w, n, sizeof *w, cmp_who);
    bp_status st = BP_OK;
    for (size_t i = 0; i < n && !st;) {
        size_t j = i;
        while (j < n && strcmp(w[j].name, w[i].name) == 0)
            j++;
        /* w[i, j): one name; the listing (if any) first, then its files */
        bool listed = w[i].listed;
        size_t files = j - i - listed;
        const who_t *f0 = &w[i + listed];
        if (!listed)
            st = bp_error_set(err, BP_EINPUT, "%s: tensor '%s' of shard '%s' is not in "
                              "weight_map (every tensor of a shard must be listed)",
                              label, f0->name, x->shards[f0->shard]);
        else if (files == 0)
            st = bp_error_set(err, BP_EINPUT, "%s: tensor '%s' is listed in shard '%s', "
                              "which has no such tensor", label, w[i].name,
                              x->shards[w[i].shard]);
        else if (files > 1)
            st = bp_error_set(err, BP_EINPUT, "%s: tensor '%s' is in two shards, '%s' and "
                              "'%s' (a tensor must be in exactly one)", label, w[i].name,
                              x->shards[f0[0].shard], x->shards[f0[1].shard]);
        else if (f0->shard != w[i].shard)
            st = bp_error_set(err, BP_EINPUT, "%s: tensor '%s' is listed in shard '%s' but "
                              "is in '%s'", label, w[i].name, x->shards[w[i].shard],
                              x->shards[f0->shard]);
        i = j;
    }
    free(w);
    return st;
}

bp_status bp_tset_open_ckpt(bp_tset_t *s, const char *index, bp_error_t *err)
{
    s->kind = BP_TSET_CHECKPOINT;
    char dir[PATH_MAX], label[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", index);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(label, sizeof label, "cannot read '%s'", index);
    char *text;
    size_t len = 0;
    bp_status st = read_index(index, &text, &len, err);
    if (st)
        return st;
    bp_ckpt_index_t x;
    st = bp_ckpt_index_parse(text, len, label, &x, err);
    free(text);
    if (st)
        return st;
    bp_safe_dir_t root;
    const char *why;
    size_t *shard_of_file = calloc(x.nshards ? x.nshards : 1, sizeof *shard_of_file);
    if (bp_safe_dir(dir, &root, &why) < 0)
        st = bp_error_set(err, BP_EINPUT, "%s: its directory: %s", label, why);
    else if (!shard_of_file)
        st = bp_tset_oom(label, err);
    for (size_t k = 0; !st && k < x.nshards; k++) {
        shard_of_file[s->nf] = k; /* file i of the set is shard i */
        st = open_shard(s, &root, dir, label, &x, k, err);
    }
    if (!st)
        st = agree(s, label, &x, shard_of_file, err);
    bp_safe_dir_close(&root);
    free(shard_of_file);
    bp_ckpt_index_free(&x);
    return st;
}

bp_status bp_tset_index_shards(const char *index, bp_ckpt_index_t *out, bp_error_t *err)
{
    char *text, label[PATH_MAX + 32];
    size_t len = 0;
    snprintf(label, sizeof label, "cannot read '%s'", index);
    bp_status st = read_index(index, &text, &len, err);
    if (st)
        return st;
    st = bp_ckpt_index_parse(text, len, label, out, err);
    free(text);
    return st;
}
