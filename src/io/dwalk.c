/* Walking directories for diff -r (see dwalk.h). */
#include "dwalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_index.h"
#include "sniff.h"
#include "tset.h"

static bool push(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 32;
        char **p = realloc(*v, c * sizeof *p);
        if (!p)
            return false;
        *v = p;
        *cap = c;
    }
    if (!((*v)[*n] = strdup(s)))
        return false;
    (*n)++;
    return true;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    const char *root;
    bp_walk_t *w;
    size_t entries;
    bp_error_t *err;
} walk_t;

static bp_status oom(walk_t *k)
{
    return bp_error_set(k->err, BP_ENOMEM, "walking '%s': out of memory", k->root);
}

static bp_status skip(walk_t *k, const char *rel, const char *what)
{
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "%s: %s", rel, what);
    return push(&k->w->skipped, &k->w->nskipped, &k->w->capskipped, line) ? BP_OK : oom(k);
}

/* rel: "" for the root, else "a/b" */
static bp_status walk_dir(walk_t *k, const char *rel, int depth)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s%s%s", k->root, *rel ? "/" : "", rel) >= (int)sizeof dir)
        return bp_error_set(k->err, BP_EINPUT, "walking '%s': path too long at '%s'", k->root,
                            rel);
    if (depth > BP_WALK_MAX_DEPTH)
        return bp_error_set(k->err, BP_EINPUT, "walking '%s': more than %d levels deep at '%s'",
                            k->root, BP_WALK_MAX_DEPTH, rel);
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/manifest.json", dir);
    struct stat sb;
    if (*rel && stat(sub, &sb) == 0)
        return push(&k->w->rel, &k->w->n, &k->w->cap, rel) ? BP_OK : oom(k);
    /* a checkpoint here: its index is a set, its shards are not */
    char index[PATH_MAX];
    int ni = bp_tset_find_index(dir, index, sizeof index, k->err);
    if (ni < 0)
        return BP_EINPUT;
    bp_ckpt_index_t x = {0};
    if (ni) {
        bp_status st = bp_tset_index_shards(index, &x, k->err);
        if (st)
            return st;
        const char *base = strrchr(index, '/') + 1;
        char r[PATH_MAX];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", base);
        if (!push(&k->w->rel, &k->w->n, &k->w->cap, r)) {
            bp_ckpt_index_free(&x);
            return oom(k);
        }
    }
    DIR *d = opendir(dir);
    if (!d) {
        bp_ckpt_index_free(&x);
        return bp_error_set(k->err, BP_EINPUT, "cannot read '%s': %s", dir, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bp_status st = BP_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (++k->entries > BP_WALK_MAX_ENTRIES)
            st = bp_error_set(k->err, BP_EINPUT, "walking '%s': more than %d entries",
                              k->root, BP_WALK_MAX_ENTRIES);
        else if (!push(&names, &n, &cap, e->d_name))
            st = oom(k);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_str);
    for (size_t i = 0; !st && i < n; i++) {
        char r[PATH_MAX], p[2 * PATH_MAX];
        if (snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", names[i]) >= (int)sizeof r) {
            st = bp_error_set(k->err, BP_EINPUT, "walking '%s': path too long at '%s'",
                              k->root, rel);
            break;
        }
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        bool shard = false;
        for (size_t s = 0; s < x.nshards && !shard; s++)
            shard = strcmp(x.shards[s], names[i]) == 0;
        if (shard || (ni && bp_tset_is_index(names[i])))
            continue;
        if (lstat(p, &sb) != 0) {
            st = bp_error_set(k->err, BP_EINPUT, "cannot read '%s': %s", p, strerror(errno));
            break;
        }
        if (S_ISLNK(sb.st_mode) && stat(p, &sb) != 0) {
            st = skip(k, r, "a dangling symbolic link");
            continue;
        }
        if (S_ISDIR(sb.st_mode)) {
            if (lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode))
                st = skip(k, r, "a symbolic link to a directory (not followed)");
            else
                st = walk_dir(k, r, depth + 1);
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            st = skip(k, r, "not a regular file");
            continue;
        }
        unsigned char head[512];
        int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        ssize_t got = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
        if (fd >= 0)
            close(fd);
        if (got < 0) {
            st = bp_error_set(k->err, BP_EINPUT, "cannot read '%s': %s", p, strerror(errno));
            break;
        }
        bp_sniff_t kind = bp_sniff(head, (size_t)got, (uint64_t)sb.st_size);
        if (kind == BP_SNIFF_SAFETENSORS || kind == BP_SNIFF_GZIP || kind == BP_SNIFF_NPY ||
            kind == BP_SNIFF_ZIP)
            st = push(&k->w->rel, &k->w->n, &k->w->cap, r) ? BP_OK : oom(k);
        else
            st = skip(k, r, bp_sniff_name(kind));
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    bp_ckpt_index_free(&x);
    return st;
}

bp_status bp_walk(const char *root, bp_walk_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    walk_t k = {root, out, 0, err};
    bp_status st = walk_dir(&k, "", 0);
    if (!st && out->n)
        qsort(out->rel, out->n, sizeof *out->rel, by_str);
    if (st)
        bp_walk_free(out);
    return st;
}

void bp_walk_free(bp_walk_t *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->rel[i]);
    for (size_t i = 0; i < w->nskipped; i++)
        free(w->skipped[i]);
    free(w->rel);
    free(w->skipped);
    memset(w, 0, sizeof *w);
}
