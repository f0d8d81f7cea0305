/* The screen's goldens: <root>/screen/<key>.safetensors.gz, one tensor
 * per golden test (named after it, its dtype, [BP_SCREEN_SWEEP_N]), with
 * metadata "inputs.<test>" = the CRC-32 of the inputs it was blessed
 * from, the GPU, driver and tool version.  A tensor blessed from other
 * inputs is set aside (the SMs vote instead) and said in the note. */
#include "screen_golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "config.h"
#include "golden.h"
#include "safeopen.h"
#include "st.h"

bp_status bp_screen_golden_path(const char *root, const char *key, char *out, size_t n,
                                bp_error_t *err)
{
    int len = snprintf(out, n, "%s/screen/%s.safetensors.gz", root, key);
    if (len < 0 || (size_t)len >= n)
        return bp_error_set(err, BP_EINPUT, "golden path under '%s' is too long", root);
    return BP_OK;
}

static void note_add(char *note, size_t nl, const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(note);
    if (len + 4 < nl)
        snprintf(note + len, nl - len, fmt, len ? "; " : "", a, b);
}

bp_status bp_screen_golden_load(const char *root, const char *key, const bp_screen_job_t *jobs,
                                int njobs, void **golden, char *note, size_t nl,
                                bp_error_t *err)
{
    char path[4096];
    bp_status st = bp_screen_golden_path(root, key, path, sizeof path, err);
    if (st)
        return st;
    int want = 0;
    for (int i = 0; i < njobs; i++) {
        golden[i] = NULL;
        want += bp_screen_tests[jobs[i].test].by == BP_SCR_BY_GOLDEN && jobs[i].n > 0;
    }
    if (!want)
        return BP_OK;
    const char *why;
    FILE *probe = bp_safe_fopen(path, &why);
    if (!probe) {
        note_add(note, nl, "%sno golden %s%s: the SMs vote", path, "");
        return BP_OK;
    }
    fclose(probe);
    bp_st_file_t f;
    if ((st = bp_st_read(path, &f, err)))
        return st;
    for (int i = 0; i < njobs && !st; i++) {
        const bp_screen_test_t *T = &bp_screen_tests[jobs[i].test];
        if (T->by != BP_SCR_BY_GOLDEN)
            continue;
        char mk[96], crc[16];
        snprintf(mk, sizeof mk, "inputs.%s", T->name);
        snprintf(crc, sizeof crc, "0x%08x", jobs[i].inputs_crc);
        const char *m = bp_st_get_meta(&f, mk);
        const bp_st_tensor_t *t = bp_st_find(&f, T->name);
        if (!t) {
            note_add(note, nl, "%s%s is not in %s: the SMs vote", T->name, path);
        } else if (!m || strcmp(m, crc) != 0) {
            note_add(note, nl, "%s%s's golden in %s was blessed from other inputs: the SMs "
                     "vote", T->name, path);
        } else if (t->buf.dtype != T->dt || t->buf.numel != jobs[i].n) {
            st = bp_error_set(err, BP_EINPUT, "golden '%s': %s is %s of %zu elements, not "
                              "%s of %zu", path, T->name, bp_dtype_name(t->buf.dtype),
                              t->buf.numel, bp_dtype_name(T->dt), jobs[i].n);
        } else if (!(golden[i] = malloc(bp_buf_nbytes(&t->buf)))) {
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
        } else {
            memcpy(golden[i], t->buf.data, bp_buf_nbytes(&t->buf));
        }
    }
    bp_st_free(&f);
    if (st)
        for (int i = 0; i < njobs; i++) {
            free(golden[i]);
            golden[i] = NULL;
        }
    return st;
}

bp_status bp_screen_golden_bless(const char *root, const bp_screen_gpu_t *g,
                                 const bp_screen_job_t *jobs, int njobs, char *path,
                                 size_t pn, int *written, bp_error_t *err)
{
    *written = 0;
    bp_status st = bp_screen_golden_path(root, g->key, path, pn, err);
    if (st)
        return st;
    bp_st_file_t f;
    bp_st_init(&f);
    for (int i = 0; i < njobs && !st; i++) {
        const bp_screen_test_t *T = &bp_screen_tests[jobs[i].test];
        const bp_screen_tres_t *tr = &g->t[jobs[i].test];
        if (T->by != BP_SCR_BY_GOLDEN || !tr->agreed)
            continue;
        bp_buf_t b = {0};
        int64_t shape[1] = {(int64_t)tr->nagreed};
        char mk[96], crc[16];
        snprintf(mk, sizeof mk, "inputs.%s", T->name);
        snprintf(crc, sizeof crc, "0x%08x", jobs[i].inputs_crc);
        st = bp_buf_shape(&b, T->dt, 1, shape, err);
        b.data = tr->agreed;
        if (!st)
            st = bp_st_add(&f, T->name, &b, err);
        if (!st)
            st = bp_st_set_meta(&f, mk, crc, err);
        if (!st)
            (*written)++;
    }
    if (!st && *written == 0)
        st = bp_error_set(err, BP_EINPUT, "nothing to bless: no golden test ran");
    if (!st)
        st = bp_st_set_meta(&f, "tool_version", PACKAGE_VERSION, err);
    if (!st)
        st = bp_st_set_meta(&f, "key", g->key, err);
    if (!st)
        st = bp_st_set_meta(&f, "gpu", g->name, err);
    if (!st)
        st = bp_st_set_meta(&f, "driver", g->driver, err);
    bp_lock_t lk;
    if (!st && !(st = bp_golden_lock(path, &lk, err))) {
        st = bp_golden_store(path, &f, err);
        bp_atomic_unlock(&lk);
    }
    bp_st_free(&f);
    return st;
}
