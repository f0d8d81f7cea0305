/* The golden store (see golden.h). */
#include "golden.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomicfile.h"
#include "config.h"

bp_status bp_golden_path(const char *root, const char *probe, const char *key,
                         char *out, size_t n, bp_error_t *err)
{
    if ((size_t)snprintf(out, n, "%s/%s/%s.safetensors.gz", root, probe, key) >= n)
        return bp_error_set(err, BP_EINPUT, "golden path too long for probe '%s'", probe);
    return BP_OK;
}

void bp_golden_key(const bp_probe_t *p, const char *be_key, char *out, size_t n)
{
    if (!p->overrides) {
        snprintf(out, n, "%s", be_key);
        return;
    }
    char ov[128];
    size_t len = strlen(p->overrides);
    if (len > 96) {
        snprintf(ov, sizeof ov, "%s", p->hash);
    } else {
        for (size_t i = 0; i <= len; i++) {
            char c = p->overrides[i];
            ov[i] = !c || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || strchr(".-_=,", c)
                        ? c
                        : '_';
        }
    }
    snprintf(out, n, "%s+%s", be_key, ov);
}

/* realpath of path, or of its nearest existing ancestor with the rest
 * appended: where path is, or would be made. */
static bool resolve(const char *path, char *out)
{
    char d[PATH_MAX], r[PATH_MAX], rest[PATH_MAX] = "", t[PATH_MAX];
    if (snprintf(d, sizeof d, "%s", *path ? path : ".") >= (int)sizeof d)
        return false;
    for (size_t n = strlen(d); n > 1 && d[n - 1] == '/';)
        d[--n] = '\0';
    while (!realpath(d, r)) {
        char *slash = strrchr(d, '/');
        const char *last = slash ? slash + 1 : d;
        if (snprintf(t, sizeof t, "%s%s%s", last, *rest ? "/" : "", rest) >= (int)sizeof t)
            return false;
        memcpy(rest, t, sizeof rest);
        if (!slash) /* a relative name alone: under the working directory */
            snprintf(d, sizeof d, ".");
        else if (slash == d)
            d[1] = '\0';
        else
            *slash = '\0';
        if (strcmp(d, "/") == 0 && !realpath(d, r))
            return false;
    }
    return snprintf(out, PATH_MAX, "%s%s%s", r, *rest && strcmp(r, "/") ? "/" : "", rest) <
           PATH_MAX;
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return true;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bp_status bp_golden_dest_check(const char *path, bp_error_t *err)
{
    char where[PATH_MAX], prefix[PATH_MAX], home[PATH_MAX];
    const char *guard = BP_PREFIX;
    if (!resolve(path, where))
        return bp_error_set(err, BP_EINPUT, "cannot write golden '%s': path too long", path);
    if (!resolve(BP_PREFIX, prefix))
        return BP_OK;
    /* A prefix that holds the users' own directories (/, /home, $HOME)
     * cannot be fenced off whole: there, the installed data is. */
    const char *h = getenv("HOME");
    if (strcmp(prefix, "/") == 0 || (h && *h && resolve(h, home) && under(home, prefix))) {
        guard = BP_DATADIR;
        if (!resolve(BP_DATADIR, prefix))
            return BP_OK;
    }
    if (!under(where, prefix))
        return BP_OK;
    return bp_error_set(err, BP_EINPUT,
                        "will not write golden '%s': it lies under bitprobe's installation "
                        "(%s), whose probes and goldens are read, never written; name where "
                        "goldens go with --golden DIR, or copy the probe file into a "
                        "directory of your own (its goldens go beside it)", path, guard);
}

void bp_golden_tensor_name(const char *output, bp_dtype_t dt, char *out, size_t n)
{
    snprintf(out, n, "%s.%s", output, bp_dtype_name(dt));
}

bp_status bp_golden_read(const char *root, const bp_probe_t *p, const char *key,
                         bp_st_file_t *out, bool *missing, bp_error_t *err)
{
    char path[4096], gk[256];
    *missing = false;
    bp_st_init(out);
    bp_golden_key(p, key, gk, sizeof gk);
    bp_status st = bp_golden_path(root, p->name, gk, path, sizeof path, err);
    if (st)
        return st;
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        *missing = true;
        return bp_error_set(err, BP_EINPUT,
                            "no golden for probe '%s'%s%s on backend '%s': '%s' does not exist",
                            p->name, p->overrides ? " with --param " : "",
                            p->overrides ? p->overrides : "", key, path);
    }
    st = bp_st_read(path, out, err);
    if (st)
        return bp_error_prefix(err, "golden of probe '%s' is unusable: ", p->name);
    const char *name = bp_st_get_meta(out, "probe");
    if (!name || strcmp(name, p->name) != 0) {
        bp_error_set(err, BP_EINPUT, "golden '%s' belongs to probe '%s', not '%s'", path,
                     name ? name : "(none)", p->name);
        bp_st_free(out);
        return BP_EINPUT;
    }
    return BP_OK;
}

bool bp_golden_same_definition(const bp_st_file_t *f, const bp_probe_t *p)
{
    const char *hash = bp_st_get_meta(f, "probe_hash");
    return hash && strcmp(hash, p->hash) == 0;
}

bp_status bp_golden_load(const char *root, const bp_probe_t *p, const char *key,
                         bp_st_file_t *out, bool *missing, bp_error_t *err)
{
    bp_status st = bp_golden_read(root, p, key, out, missing, err);
    if (st || bp_golden_same_definition(out, p))
        return st;
    char path[4096], gk[256];
    const char *hash = bp_st_get_meta(out, "probe_hash");
    bp_golden_key(p, key, gk, sizeof gk);
    bp_golden_path(root, p->name, gk, path, sizeof path, NULL);
    bp_error_set(err, BP_EINPUT,
                 "golden '%s' was blessed from a different definition of probe '%s'%s%s "
                 "(hash %.16s, the probe now hashes to %s)",
                 path, p->name, p->overrides ? " with --param " : "",
                 p->overrides ? p->overrides : "", hash ? hash : "(none)", p->hash);
    bp_st_free(out);
    return BP_EINPUT;
}

bp_status bp_golden_set_meta(bp_st_file_t *f, const bp_probe_t *p, const char *key,
                             json_t *fingerprint, bp_error_t *err)
{
    bp_status st = bp_st_set_meta(f, "tool_version", PACKAGE_VERSION, err);
    if (!st)
        st = bp_st_set_meta(f, "probe", p->name, err);
    if (!st)
        st = bp_st_set_meta(f, "probe_hash", p->hash, err);
    if (!st)
        st = bp_st_set_meta(f, "backend_key", key, err);
    if (!st && p->overrides)
        st = bp_st_set_meta(f, "param_overrides", p->overrides, err);
    if (!st && fingerprint) {
        char *s = json_dumps(fingerprint, JSON_COMPACT | JSON_SORT_KEYS);
        if (!s)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        st = bp_st_set_meta(f, "fingerprint", s, err);
        free(s);
    }
    return st;
}

static bp_status fill_st(int fd, void *ctx, bp_error_t *err)
{
    return bp_st_write_fd(fd, ctx, true, err);
}

bp_status bp_golden_lock(const char *path, bp_lock_t *lk, bp_error_t *err)
{
    bp_status st = bp_golden_dest_check(path, err);
    return st ? st : bp_atomic_lock(path, lk, err);
}

bp_status bp_golden_store(const char *path, const bp_st_file_t *f, bp_error_t *err)
{
    bp_status st = bp_golden_dest_check(path, err);
    if (!st)
        st = bp_mkdir_parents(path, err);
    if (!st)
        st = bp_atomic_write(path, fill_st, (void *)f, err);
    return st;
}
