/* The probe loader's entry points (probe.h): a file or text through the
 * YAML layer (probe_yaml.c) into the schema (probe_schema.c), and every
 * probe of a directory. */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_yaml.h"
#include "safeopen.h"
#include "st.h"
#include "suggest.h"

/* The tensors of the probe's load ops, from <dir>/<name>.safetensors next
 * to its file: each the tensor named like the op's buffer, with the dtype
 * and shape the op says.  The hash then covers the bytes. */
static bp_status resolve_loads(bp_probe_t *p, bp_error_t *err)
{
    size_t nload = 0;
    for (size_t i = 0; i < p->nops; i++)
        nload += p->ops[i].kind == BP_OP_LOAD;
    if (!nload)
        return BP_OK;
    size_t len = strlen(p->path);
    char *tpath = malloc(len + 32);
    if (!tpath)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    memcpy(tpath, p->path, len + 1);
    if (len > 5 && strcmp(tpath + len - 5, ".yaml") == 0)
        tpath[len - 5] = '\0';
    else if (len > 4 && strcmp(tpath + len - 4, ".yml") == 0)
        tpath[len - 4] = '\0';
    strcat(tpath, ".safetensors");
    /* beside the probe file, and nowhere else */
    char dir[PATH_MAX];
    const char *base = strrchr(tpath, '/');
    bp_st_file_t f;
    bp_status st = bp_safe_dirname(tpath, dir, sizeof dir)
                       ? bp_st_read_in(dir, base ? base + 1 : tpath, &f, err)
                       : bp_error_set(err, BP_EINPUT, "path too long: '%s'", tpath);
    if (st) {
        const bp_op_t *op = NULL;
        for (size_t i = 0; !op && i < p->nops; i++)
            if (p->ops[i].kind == BP_OP_LOAD)
                op = &p->ops[i];
        bp_error_prefix(err, "%s:%d:%d: load '%s' reads the probe's tensors: ", p->path,
                        op->line, op->col, op->out);
        free(tpath);
        return st;
    }
    for (size_t i = 0; !st && i < p->nops; i++) {
        bp_op_t *op = &p->ops[i];
        if (op->kind != BP_OP_LOAD)
            continue;
        const bp_st_tensor_t *t = bp_st_find(&f, op->out);
        bool same = t && t->buf.dtype == op->dtype && t->buf.ndim == op->ndim;
        for (int d = 0; same && d < op->ndim; d++)
            same = t->buf.shape[d] == op->shape[d];
        if (!t) {
            st = bp_error_set(err, BP_EINPUT, "%s:%d:%d: load '%s': '%s' has no tensor '%s'",
                              p->path, op->line, op->col, op->out, tpath, op->out);
        } else if (!same) {
            char a[96], b[96];
            bp_shape_format(op->ndim, op->shape, a, sizeof a);
            bp_shape_format(t->buf.ndim, t->buf.shape, b, sizeof b);
            st = bp_error_set(err, BP_EINPUT, "%s:%d:%d: load '%s' says %s %s, '%s' holds %s %s",
                              p->path, op->line, op->col, op->out, bp_dtype_name(op->dtype), a,
                              tpath, bp_dtype_name(t->buf.dtype), b);
        } else {
            op->ndata = bp_buf_nbytes(&t->buf);
            op->data = malloc(op->ndata ? op->ndata : 1);
            if (!op->data)
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
            else if (op->ndata)
                memcpy(op->data, t->buf.data, op->ndata);
        }
    }
    bp_st_free(&f);
    free(tpath);
    if (!st)
        bp_probe_hash(p, p->hash);
    return st;
}

static bp_status load_file(const char *path, const bp_param_arg_t *args, size_t nargs,
                           bp_probe_t **out, bp_error_t *err)
{
    *out = NULL;
    bp_ynode_t *root = NULL;
    bp_status st = bp_yaml_read(path, &root, err);
    st = bp_probe_from_tree(path, root, st, args, nargs, out, err);
    if (!st && (st = resolve_loads(*out, err))) {
        bp_probe_free(*out);
        *out = NULL;
    }
    return st;
}

bp_status bp_probe_load(const char *path, bp_probe_t **out, bp_error_t *err)
{
    return load_file(path, NULL, 0, out, err);
}

bp_status bp_probe_load_params(const char *path, const bp_param_arg_t *args, size_t nargs,
                               bp_probe_t **out, bp_error_t *err)
{
    return load_file(path, args, nargs, out, err);
}

bool bp_probe_file_name(const char *s)
{
    size_t n = strlen(s);
    return (n > 5 && strcmp(s + n - 5, ".yaml") == 0) || (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

bool bp_probe_bad_add(bp_probe_bad_t **bad, size_t *nbad, const char *path, const char *msg)
{
    bp_probe_bad_t *t = realloc(*bad, (*nbad + 1) * sizeof *t);
    if (!t)
        return false;
    *bad = t;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t sl = strlen(base);
    sl -= sl > 5 && strcmp(base + sl - 5, ".yaml") == 0 ? 5
          : sl > 4 && strcmp(base + sl - 4, ".yml") == 0 ? 4 : 0;
    bp_probe_bad_t b = {strdup(path), strndup(base, sl), strdup(msg)};
    if (!b.path || !b.stem || !b.msg) {
        free(b.path);
        free(b.stem);
        free(b.msg);
        return false;
    }
    t[(*nbad)++] = b;
    return true;
}

void bp_probe_bad_free(bp_probe_bad_t *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(bad[i].path);
        free(bad[i].stem);
        free(bad[i].msg);
    }
    free(bad);
}

bp_status bp_probe_parse(const char *text, size_t len, const char *label,
                         bp_probe_t **out, bp_error_t *err)
{
    *out = NULL;
    bp_ynode_t *root = NULL;
    bp_status st = bp_yaml_parse(text, len, label, &root, err);
    return bp_probe_from_tree(label, root, st, NULL, 0, out, err);
}

/* ---- directories ----------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int probe_cmp(const void *a, const void *b)
{
    const bp_probe_t *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static bool is_yaml_name(const char *s)
{
    return s[0] != '.' && bp_probe_file_name(s);
}

bp_status bp_probe_load_dir(const char *dir, bp_probe_t ***out, size_t *n,
                            bp_error_t *err)
{
    return bp_probe_load_dir_params(dir, NULL, 0, out, n, err);
}

bp_status bp_probe_load_dir_params(const char *dir, const bp_param_arg_t *args,
                                   size_t nargs, bp_probe_t ***out, size_t *n,
                                   bp_error_t *err)
{
    return bp_probe_load_dir_ex(dir, args, nargs, out, n, NULL, NULL, err);
}

bp_status bp_probe_load_dir_ex(const char *dir, const bp_param_arg_t *args, size_t nargs,
                               bp_probe_t ***out, size_t *n, bp_probe_bad_t **bad,
                               size_t *nbad, bp_error_t *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return bp_error_set(err, BP_EIO, "cannot open probe directory '%s': %s",
                            dir, strerror(errno));
    char **names = NULL;
    size_t nn = 0, cap = 0;
    bp_status st = BP_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (!is_yaml_name(e->d_name))
            continue;
        if (nn == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **t = realloc(names, nc * sizeof *t);
            if (!t) {
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
                break;
            }
            names = t;
            cap = nc;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[nn] = malloc(len))) {
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
            break;
        }
        snprintf(names[nn++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, str_cmp);
    bp_probe_t **ps = st ? NULL : calloc(nn ? nn : 1, sizeof *ps);
    if (!st && !ps)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    size_t np = 0;
    for (size_t i = 0; !st && i < nn; i++) {
        if (!(st = load_file(names[i], args, nargs, &ps[np], err)))
            np++;
        else if (bad && st != BP_ENOMEM) {
            st = bp_probe_bad_add(bad, nbad, names[i], err->msg)
                     ? BP_OK
                     : bp_error_set(err, BP_ENOMEM, "out of memory");
            err->msg[0] = '\0';
        }
    }
    if (!st && np)
        qsort(ps, np, sizeof *ps, probe_cmp);
    for (size_t i = 1; !st && i < np; i++)
        if (strcmp(ps[i - 1]->name, ps[i]->name) == 0)
            st = bp_error_set(err, BP_EINPUT,
                              "%s:1:1: probe '%s' is also defined by '%s'",
                              ps[i]->path, ps[i]->name, ps[i - 1]->path);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (st) {
        bp_probe_free_all(ps, np);
        return st;
    }
    *out = ps;
    *n = np;
    return BP_OK;
}

bp_status bp_probe_params_check(bp_probe_t *const *probes, size_t n,
                                const bp_param_arg_t *args, size_t nargs,
                                bp_error_t *err)
{
    for (size_t a = 0; a < nargs; a++) {
        const char *names[256];
        size_t nn = 0;
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            for (size_t k = 0; k < probes[i]->nparams; k++) {
                const char *pn = probes[i]->params[k].name;
                found |= strcmp(pn, args[a].name) == 0;
                bool dup = false;
                for (size_t j = 0; j < nn; j++)
                    dup |= strcmp(names[j], pn) == 0;
                if (!dup && nn < 256)
                    names[nn++] = pn;
            }
        if (found)
            continue;
        char list[400] = "";
        for (size_t j = 0; j < nn; j++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", j ? ", " : "", names[j]);
        }
        const char *near = bp_suggest(args[a].name, names, nn);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
        return bp_error_set(err, BP_EINPUT, "--param %s: unknown parameter '%s' (%s%s)%s",
                            args[a].name, args[a].name,
                            nn ? "the probes have " : "the probes have no parameters",
                            list, hint);
    }
    return BP_OK;
}
