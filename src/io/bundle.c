/* Saved runs and tensor sets (see bundle.h). */
#define _GNU_SOURCE /* memrchr */
#include "bundle.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "atomicfile.h"
#include "interrupt.h"
#include "jsonread.h"
#include "npy.h"
#include "safeopen.h"

/* DIR's length without trailing slashes. */
static size_t dir_len(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    return len;
}

/* Removes what runs of `run --save DIR` killed before they could tidy
 * left beside DIR: DIR.partial.PID (a stage) and DIR.old.PID (a bundle
 * moved aside by the commit of an older bitprobe), each only when process
 * PID is gone (one of this machine's: a stage of a run on another host of
 * a shared file system, whose PID means nothing here, could be removed
 * only by a PID that happens to be free here, which is why a live one is
 * left alone). */
static void clean_stale(const char *dir)
{
    size_t len = dir_len(dir);
    char parent[PATH_MAX], base[NAME_MAX + 1];
    const char *slash = memrchr(dir, '/', len);
    size_t bl = slash ? len - (size_t)(slash + 1 - dir) : len;
    if (bl == 0 || bl > NAME_MAX - 32)
        return;
    memcpy(base, slash ? slash + 1 : dir, bl);
    base[bl] = '\0';
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash == dir ? 1 : slash - dir) : 1,
             slash ? dir : ".");
    DIR *d = opendir(parent);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *rest = e->d_name;
        if (strncmp(rest, base, bl) != 0)
            continue;
        rest += bl;
        if (strncmp(rest, ".partial.", 9) == 0)
            rest += 9;
        else if (strncmp(rest, ".old.", 5) == 0)
            rest += 5;
        else
            continue;
        char *end;
        long pid = strtol(rest, &end, 10);
        if (*rest < '1' || *rest > '9' || *end || pid <= 0 || pid == (long)getpid() ||
            kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", parent, e->d_name) < (int)sizeof path)
            bp_intr_rmtree(path);
    }
    if (d)
        closedir(d);
}

bp_status bp_bundle_stage(const char *dir, char *stage, size_t n, bp_error_t *err)
{
    struct stat st;
    char p[PATH_MAX];
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return bp_error_set(err, BP_EINPUT, "--save '%s': not a directory", dir);
        DIR *d = opendir(dir);
        bool empty = true;
        for (struct dirent *e; d && (e = readdir(d));)
            empty &= strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        if (d)
            closedir(d);
        snprintf(p, sizeof p, "%s/manifest.json", dir);
        if (!empty && access(p, F_OK) != 0)
            return bp_error_set(err, BP_EINPUT,
                                "--save '%s': the directory holds something other than a "
                                "bundle (no manifest.json): it would be replaced", dir);
    }
    size_t len = dir_len(dir);
    if (snprintf(stage, n, "%.*s.partial.%ld", (int)len, dir, (long)getpid()) >= (int)n)
        return bp_error_set(err, BP_EINPUT, "path too long: '%s'", dir);
    clean_stale(dir);
    /* registered first: an interruption from here on removes it */
    if (!bp_intr_add(stage, true))
        return bp_error_set(err, BP_ENOMEM, "too many temporary files");
    snprintf(p, sizeof p, "%s/x", stage);
    return bp_mkdir_parents(p, err); /* makes DIR's parents and stage */
}

/* renameat2(RENAME_EXCHANGE) through the system call (glibc has a wrapper
 * only from 2.28); -1 with errno ENOSYS where the kernel lacks it. */
static int exchange(const char *a, const char *b)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 1 << 1 /* RENAME_EXCHANGE */);
#else
    (void)a, (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

/* The stage takes DIR's place.  Where DIR is there, one renameat2 with
 * RENAME_EXCHANGE swaps the two directories: at every instant DIR is the
 * old bundle or the new, whatever kills the process; the old one, now at
 * the stage's path (which interruption removes), is removed after.  Where
 * the file system cannot exchange, DIR is moved aside and the stage
 * renamed in: a kill between the two leaves DIR.old.PID, which the next
 * save beside it removes (clean_stale) while DIR is missing. */
bp_status bp_bundle_commit(const char *dir, const char *stage, bp_error_t *err)
{
    char old[PATH_MAX];
    snprintf(old, sizeof old, "%.*s.old.%ld", (int)dir_len(dir), dir, (long)getpid());
    bp_status s = BP_OK;
    bool had = false;
    bp_intr_lock();
    if (exchange(stage, dir) == 0) {
        /* the old bundle is at the stage's path, still registered */
        bp_intr_unlock();
        bp_intr_rmtree(stage);
        bp_intr_remove(stage);
        return BP_OK;
    }
    if (errno != ENOENT && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        s = bp_error_set(err, BP_EIO, "cannot swap '%s' into '%s': %s", stage, dir,
                         strerror(errno));
    else if (errno == ENOENT && access(stage, F_OK) != 0)
        s = bp_error_set(err, BP_EIO, "cannot rename '%s' to '%s': %s", stage, dir,
                         strerror(errno));
    else if (rename(dir, old) == 0)
        had = true;
    else if (errno != ENOENT)
        s = bp_error_set(err, BP_EIO, "cannot move '%s' aside: %s", dir, strerror(errno));
    if (!s && rename(stage, dir) != 0) {
        s = bp_error_set(err, BP_EIO, "cannot rename '%s' to '%s': %s", stage, dir,
                         strerror(errno));
        if (had)
            rename(old, dir);
        had = false;
    }
    if (!s)
        bp_intr_remove_locked(stage);
    if (had)
        bp_intr_add_locked(old, true);
    bp_intr_unlock();
    if (had) {
        bp_intr_rmtree(old);
        bp_intr_remove(old);
    }
    return s;
}

void bp_bundle_abandon(const char *stage)
{
    bp_intr_rmtree(stage);
    bp_intr_remove(stage);
}

static bp_status fill_st(int fd, void *ctx, bp_error_t *err)
{
    return bp_st_write_fd(fd, ctx, true, err);
}

bp_status bp_bundle_save_probe(const char *dir, const char *probe, const char *key,
                               const bp_st_file_t *f, bp_error_t *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s/%s.safetensors.gz", dir, probe, key) >=
        (int)sizeof path)
        return bp_error_set(err, BP_EINPUT, "path too long under '%s'", dir);
    bp_status st = bp_mkdir_parents(path, err);
    return st ? st : bp_atomic_write(path, fill_st, (void *)f, err);
}

bp_status bp_bundle_save_manifest(const char *dir, json_t *manifest, bp_error_t *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/manifest.json", dir) >= (int)sizeof path)
        return bp_error_set(err, BP_EINPUT, "path too long under '%s'", dir);
    char *s = json_dumps(manifest, JSON_INDENT(1) | JSON_SORT_KEYS);
    if (!s)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = bp_mkdir_parents(path, err);
    if (!st)
        st = bp_atomic_replace(path, s, strlen(s), err);
    free(s);
    return st;
}

static bool safe_relative(const char *p)
{
    if (!*p || *p == '/' || strlen(p) >= PATH_MAX / 2)
        return false;
    for (const char *s = p; *s; s++)
        if ((s == p || s[-1] == '/') && s[0] == '.' && s[1] == '.' &&
            (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

bp_status bp_bundle_parse_manifest(const char *text, size_t len, const char *label,
                                   json_t **out, bp_error_t *err)
{
    bp_json_err_t je;
    *out = NULL;
    json_t *m = bp_json_load(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!m && je.over)
        return bp_json_limit_error(label, len, &je, err);
    if (!m)
        return bp_error_set(err, BP_EINPUT, "%s: invalid JSON: %s at byte %d", label,
                            je.je.text, je.je.position);
    const char *tool = json_string_value(json_object_get(m, "tool"));
    json_t *files = json_object_get(m, "files");
    bp_status st = BP_OK;
    if (!json_is_object(m) || !tool || strcmp(tool, "bitprobe") != 0)
        st = bp_error_set(err, BP_EINPUT, "%s: not a bitprobe manifest (no \"tool\": \"bitprobe\")",
                          label);
    else if (!json_is_array(files) || json_array_size(files) > BP_BUNDLE_MAX_FILES)
        st = bp_error_set(err, BP_EINPUT, "%s: \"files\" must be an array of at most %d paths",
                          label, BP_BUNDLE_MAX_FILES);
    for (size_t i = 0; !st && i < json_array_size(files); i++) {
        const char *f = json_string_value(json_array_get(files, i));
        if (!f || !safe_relative(f))
            st = bp_error_set(err, BP_EINPUT,
                              "%s: files[%zu] is not a relative path inside the bundle", label, i);
    }
    if (st)
        json_decref(m);
    else
        *out = m;
    return st;
}

bp_status bp_bundle_read_manifest(const char *dir, json_t **out, bp_error_t *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/manifest.json", dir) >= (int)sizeof path)
        return bp_error_set(err, BP_EINPUT, "path too long: '%s'", dir);
    const char *why;
    FILE *f = bp_safe_fopen_in(dir, "manifest.json", &why);
    if (!f)
        return bp_error_set(err, BP_EINPUT, "cannot read bundle '%s': %s: %s", dir, path, why);
    char *buf = malloc(BP_BUNDLE_MAX_MANIFEST + 1);
    size_t n = buf ? fread(buf, 1, BP_BUNDLE_MAX_MANIFEST + 1, f) : 0;
    fclose(f);
    if (!buf)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st;
    if (n > BP_BUNDLE_MAX_MANIFEST)
        st = bp_error_set(err, BP_EINPUT, "%s: manifest larger than %u bytes", path,
                          BP_BUNDLE_MAX_MANIFEST);
    else
        st = bp_bundle_parse_manifest(buf, n, path, out, err);
    free(buf);
    return st;
}

/* "dir/seed-div/cpu-sleef.safetensors.gz" -> prefix "seed-div/cpu-sleef/" */
static void prefix_of(const char *rel, char *out, size_t n)
{
    snprintf(out, n, "%s", rel);
    char *dot = strstr(out, ".safetensors");
    if (dot)
        *dot = '\0';
    size_t l = strlen(out);
    if (l + 1 < n) {
        out[l] = '/';
        out[l + 1] = '\0';
    }
}

static bp_status load_bundle(const char *dir, bp_st_file_t *out, bp_error_t *err)
{
    json_t *m;
    bp_status st = bp_bundle_read_manifest(dir, &m, err);
    if (st)
        return st;
    json_t *files = json_object_get(m, "files");
    for (size_t i = 0; !st && i < json_array_size(files); i++) {
        const char *rel = json_string_value(json_array_get(files, i));
        char prefix[PATH_MAX], name[PATH_MAX + 256];
        prefix_of(rel, prefix, sizeof prefix);
        bp_st_file_t f;
        st = bp_st_read_in(dir, rel, &f, err);
        for (size_t k = 0; !st && k < f.n; k++) {
            snprintf(name, sizeof name, "%s%s", prefix, f.t[k].name);
            st = bp_st_add(out, name, &f.t[k].buf, err);
        }
        bp_st_free(&f);
    }
    json_decref(m);
    return st;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

bp_status bp_tset_load(const char *path, bool as_bf16, bp_st_file_t *out, bp_error_t *err)
{
    struct stat sb;
    bp_st_init(out);
    if (stat(path, &sb) != 0)
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, strerror(errno));
    bp_status st;
    if (S_ISDIR(sb.st_mode)) {
        st = load_bundle(path, out, err);
    } else if (ends_with(path, ".npy")) {
        bp_buf_t b;
        char name[PATH_MAX];
        const char *base = strrchr(path, '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : path);
        name[strlen(name) - 4] = '\0';
        st = bp_npy_read(path, as_bf16, &b, err);
        if (!st) {
            st = bp_st_add(out, name, &b, err);
            bp_buf_free(&b);
        }
    } else {
        st = bp_st_read(path, out, err);
    }
    if (st)
        bp_st_free(out);
    return st;
}
