/* A fake GPU for the screen's tests (screen_dev.h): every "SM" computes on
 * the host what a healthy SM computes (the expected bits where the host
 * knows them, the C library's functions for the golden sweeps), and the
 * injection flips the same bit a real kernel flips, so that the checking,
 * the naming of faults and the reports run exactly as on a GPU.  skew=TEST
 * flips a high bit of element 0 on every SM alike (a whole-GPU error that
 * only the golden or the oracle's bound can see). */
#include "screen_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int gpus, sms;
    int dead_gpu, dead_sm; /* -1: none */
    int skew;              /* test whose every SM is wrong, or -1 */
    int index;
} fake_t;

static bp_status parse(const char *spec, fake_t *f, bp_error_t *err)
{
    char tail[128] = "", name[64];
    int used = 0;
    f->dead_gpu = f->dead_sm = f->skew = -1;
    if (sscanf(spec, "%dx%d%n", &f->gpus, &f->sms, &used) != 2 || f->gpus < 1 ||
        f->gpus > 64 || f->sms < 1 || f->sms > 256 || strlen(spec + used) >= sizeof tail)
        goto bad;
    snprintf(tail, sizeof tail, "%s", spec + used);
    for (char *t = strtok(tail, ","); t; t = strtok(NULL, ",")) {
        if (sscanf(t, "dead=%d:%d%n", &f->dead_gpu, &f->dead_sm, &used) == 2 && !t[used] &&
            f->dead_gpu >= 0 && f->dead_sm >= 0)
            continue;
        if (sscanf(t, "skew=%63s", name) == 1 && (f->skew = bp_screen_test_find(name)) >= 0)
            continue;
        goto bad;
    }
    return BP_OK;
bad:
    return bp_error_set(err, BP_EINPUT, "BP_SCREEN_FAKE='%s': expected GxS[,dead=G:S]"
                        "[,skew=TEST] (1-64 GPUs of 1-256 SMs)", spec);
}

bp_status bp_screen_fake_count(const char *spec, int *n, bp_error_t *err)
{
    fake_t f;
    bp_status st = parse(spec, &f, err);
    *n = st ? 0 : f.gpus;
    return st;
}

static void flip(void *out, size_t es, size_t at)
{
    ((unsigned char *)out)[at * es] ^= 1; /* bit 0, little-endian */
}

static bp_status fake_run(bp_screen_dev_t *d, const bp_screen_gpu_t *g,
                          const bp_screen_job_t *job, size_t per_sm, int inject_sm,
                          void *out, unsigned char *done, bp_error_t *err)
{
    (void)err;
    fake_t *f = d->state;
    const bp_screen_test_t *T = &bp_screen_tests[job->test];
    size_t es = bp_dtype_info(T->dt)->size;
    if (T->family == BP_SCR_CUBLAS) {
        memcpy(out, job->expect, job->n * es);
        if (inject_sm >= 0)
            flip(out, es, 0);
        return BP_OK;
    }
    for (unsigned s = 0; s < g->nsmid; s++) {
        done[s] = 0;
        if (!g->present[s] || (f->dead_gpu == f->index && f->dead_sm == (int)s))
            continue;
        char *row = (char *)out + (size_t)s * per_sm * es;
        if (T->family == BP_SCR_MEM || T->family == BP_SCR_SMEM) {
            for (size_t i = 0; i < per_sm; i++) {
                uint32_t v = bp_screen_pattern(job, per_sm, s, i);
                memcpy(row + 4 * i, &v, 4);
            }
        } else if (job->expect) {
            memcpy(row, job->expect, per_sm * es);
        } else {
            for (size_t i = 0; i < per_sm; i++)
                bp_dtype_store_bits(T->dt, row, i, bp_screen_host_elem(job, i));
        }
        if ((int)s == inject_sm)
            flip(row, es, 0);
        if (job->test == f->skew) /* every SM alike, far beyond any bound */
            ((unsigned char *)row)[es - 1] ^= 0x20;
        done[s] = 1;
    }
    return BP_OK;
}

static void fake_close(bp_screen_dev_t *d)
{
    if (d) {
        free(d->state);
        free(d);
    }
}

bp_status bp_screen_fake_open(const char *spec, int index, bp_screen_gpu_t *g,
                              bp_screen_dev_t **out, bp_error_t *err)
{
    fake_t spec_f;
    bp_status st = parse(spec, &spec_f, err);
    if (st)
        return st;
    int gpus = spec_f.gpus, sms = spec_f.sms;
    if (index < 0 || index >= gpus)
        return bp_error_set(err, BP_EUNAVAIL, "device %d: there %s %d fake GPU%s",
                            index, gpus == 1 ? "is" : "are", gpus, gpus == 1 ? "" : "s");
    bp_screen_dev_t *d = calloc(1, sizeof *d);
    fake_t *f = calloc(1, sizeof *f);
    g->nsmid = (unsigned)(2 * sms);
    g->present = calloc(g->nsmid, 1);
    if (!d || !f || !g->present) {
        free(d);
        free(f);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    *f = spec_f;
    f->index = index;
    d->state = f;
    d->run = fake_run;
    d->close = fake_close;
    g->index = index;
    g->sms = sms;
    for (int s = 0; s < sms; s++)
        g->present[2 * s] = 1;
    g->seen = sms;
    snprintf(g->name, sizeof g->name, "fake GPU");
    snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-0000-0000-%012d", index);
    snprintf(g->pci, sizeof g->pci, "00000000:%02x:00.0", index + 1);
    snprintf(g->cc, sizeof g->cc, "0.0");
    snprintf(g->driver, sizeof g->driver, "none");
    snprintf(g->cuda_driver, sizeof g->cuda_driver, "none");
    snprintf(g->key, sizeof g->key, "fake");
    *out = d;
    return BP_OK;
}
