/* The golden store (see golden.h). */
#include "golden.h"

#include <errno.h>
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

void bp_golden_tensor_name(const char *output, bp_dtype_t dt, char *out, size_t n)
{
    snprintf(out, n, "%s.%s", output, bp_dtype_name(dt));
}

bp_status bp_golden_read(const char *root, const bp_probe_t *p, const char *key,
                         bp_st_file_t *out, bool *missing, bp_error_t *err)
{
    char path[4096];
    *missing = false;
    bp_st_init(out);
    bp_status st = bp_golden_path(root, p->name, key, path, sizeof path, err);
    if (st)
        return st;
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        *missing = true;
        return bp_error_set(err, BP_EINPUT,
                            "no golden for probe '%s' on backend '%s': '%s' does not exist",
                            p->name, key, path);
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
    char path[4096];
    const char *hash = bp_st_get_meta(out, "probe_hash");
    bp_golden_path(root, p->name, key, path, sizeof path, NULL);
    if (p->overrides)
        bp_error_set(err, BP_EINPUT,
                     "probe '%s' runs with --param %s, which changes its hash to %s; "
                     "golden '%s' is of another definition (hash %.16s): use "
                     "--no-golden, or bless under the override",
                     p->name, p->overrides, p->hash, path, hash ? hash : "(none)");
    else
        bp_error_set(err, BP_EINPUT,
                     "golden '%s' was blessed from a different definition of probe '%s' "
                     "(hash %.16s, the probe now hashes to %s)",
                     path, p->name, hash ? hash : "(none)", p->hash);
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

bp_status bp_golden_store(const char *path, const bp_st_file_t *f, bp_error_t *err)
{
    bp_status st = bp_mkdir_parents(path, err);
    if (!st)
        st = bp_atomic_write(path, fill_st, (void *)f, err);
    return st;
}
