/* explain's saved-run side: every buffer of one probe and dtype from a
 * bundle written by run --save --intermediates (see explain.h). */
#include "explain.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "golden.h"

#define MAX_KEYS 32

/* Keys k with "<probe>/<k>.safetensors.gz" in the manifest's files. */
static size_t keys_of(json_t *files, const char *probe, char keys[][64], size_t max)
{
    size_t n = 0, pl = strlen(probe);
    static const char suffix[] = ".safetensors.gz";
    for (size_t i = 0; i < json_array_size(files) && n < max; i++) {
        const char *f = json_string_value(json_array_get(files, i));
        size_t fl = f ? strlen(f) : 0;
        if (!f || fl <= pl + 1 + strlen(suffix) || strncmp(f, probe, pl) != 0 ||
            f[pl] != '/' || strcmp(f + fl - strlen(suffix), suffix) != 0)
            continue;
        size_t kl = fl - pl - 1 - strlen(suffix);
        if (kl >= 64 || memchr(f + pl + 1, '/', kl))
            continue;
        memcpy(keys[n], f + pl + 1, kl);
        keys[n][kl] = '\0';
        n++;
    }
    return n;
}

static void key_list(char keys[][64], size_t n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", keys[i]);
}

static bp_status pick_key(const char *dir, const bp_probe_t *p, const char *key,
                          char *key_out, bp_error_t *err)
{
    json_t *m;
    bp_status st = bp_bundle_read_manifest(dir, &m, err);
    if (st)
        return st;
    char keys[MAX_KEYS][64], list[MAX_KEYS * 66];
    size_t n = keys_of(json_object_get(m, "files"), p->name, keys, MAX_KEYS);
    json_decref(m);
    key_list(keys, n, list, sizeof list);
    if (n == 0)
        return bp_error_set(err, BP_EINPUT, "saved run '%s' holds no buffers of probe '%s'",
                            dir, p->name);
    for (size_t i = 0; key && i < n; i++)
        if (strcmp(keys[i], key) == 0) {
            snprintf(key_out, 64, "%s", key);
            return BP_OK;
        }
    if (key)
        return bp_error_set(err, BP_EINPUT,
                            "saved run '%s' holds probe '%s' for %s, not for '%s'", dir,
                            p->name, list, key);
    if (n > 1)
        return bp_error_set(err, BP_EINPUT,
                            "saved run '%s' holds probe '%s' for several backend keys (%s): "
                            "name one", dir, p->name, list);
    snprintf(key_out, 64, "%s", keys[0]);
    return BP_OK;
}

bp_status bp_explain_load_bundle(const char *dir, const bp_probe_t *p, bp_dtype_t dt,
                                 const char *key, bp_buf_t *bufs, char *key_out,
                                 bp_error_t *err)
{
    char path[PATH_MAX], rel[PATH_MAX], name[512];
    bp_status st = pick_key(dir, p, key, key_out, err);
    if (st)
        return st;
    if (snprintf(rel, sizeof rel, "%s/%s.safetensors.gz", p->name, key_out) >= (int)sizeof rel ||
        snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
        return bp_error_set(err, BP_EINPUT, "path too long under '%s'", dir);
    bp_st_file_t f;
    if ((st = bp_st_read_in(dir, rel, &f, err)))
        return st;
    const char *probe = bp_st_get_meta(&f, "probe");
    const char *hash = bp_st_get_meta(&f, "probe_hash");
    if (!probe || strcmp(probe, p->name) != 0)
        st = bp_error_set(err, BP_EINPUT, "'%s' belongs to probe '%s', not '%s'", path,
                          probe ? probe : "(none)", p->name);
    else if (!bp_golden_same_definition(&f, p))
        st = bp_error_set(err, BP_EINPUT,
                          "'%s' was saved from a different definition of probe '%s' "
                          "(hash %.16s, the probe now hashes to %s)", path, p->name,
                          hash ? hash : "(none)", p->hash);
    for (size_t i = 0; !st && i < p->nops; i++) {
        bp_golden_tensor_name(p->ops[i].out, dt, name, sizeof name);
        const bp_st_tensor_t *t = bp_st_find(&f, name);
        if (!t)
            st = bp_error_set(err, BP_EINPUT,
                              "'%s' has no buffer '%s': explain needs every buffer (save "
                              "with 'bitprobe run %s --dtype %s --save DIR --intermediates')",
                              path, name, p->name, bp_dtype_name(dt));
        else
            st = bp_buf_copy(&bufs[i], &t->buf, err);
    }
    bp_st_free(&f);
    if (st)
        bp_backend_bufs_free(bufs, p->nops);
    return st;
}
