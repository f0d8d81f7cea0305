/* The screen on a CUDA GPU (screen_dev.h): the CUDA backend's context,
 * stream and memory, the GEMM module's pinned (pedantic) GEMM for the
 * cuBLAS job (cuda_gemm.h: the call no BLAS setting moves), and the
 * pinned kernels of kernels/screen.cu.  Plain C: no CUDA
 * header here (be_cuda.c and kernels/ own them).
 *
 * A pinned job is launched with a grid that fills the device; the host
 * then reads each SM's queue counter and launches again, for the SMs
 * whose share did not run, up to MAX_LAUNCHES times.  An SM still
 * missing after that is reported (not done), never silently passed. */
#include "screen_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_cuda.h"
#include "bpk.h"
#include "cuda_gemm.h"

#define MAX_LAUNCHES 16

typedef struct {
    bp_backend_t *be;
    bp_cuda_blas_t *gemm; /* pedantic */
    bp_buf_t pin;    /* u32 [2 * nsmid]: want, then next */
    unsigned *hpin;  /* its host copy */
} cstate_t;

static bp_status dalloc(bp_backend_t *be, bp_buf_t *b, bp_dtype_t dt, size_t n,
                        bp_error_t *err)
{
    int64_t shape[1] = {(int64_t)(n ? n : 1)};
    memset(b, 0, sizeof *b);
    bp_status st = bp_buf_shape(b, dt, 1, shape, err);
    return st ? st : be->dev_alloc(be, b, err);
}

static void dfree(bp_backend_t *be, bp_buf_t *b)
{
    if (b->dev)
        be->dev_free(be, b);
}

/* Host memory <-> b's device copy, b->data pointing at host for the copy. */
static bp_status xfer(bp_backend_t *be, bp_buf_t *b, void *host, bool up, bp_error_t *err)
{
    b->data = host;
    bp_status st = up ? be->upload(be, b, err) : be->download(be, b, err);
    b->data = NULL;
    return st;
}

bp_status bp_screen_cuda_count(int *n, bp_error_t *err)
{
    json_t *env = bp_be_cuda_env(err);
    if (!env)
        return err->code ? err->code : BP_EUNAVAIL;
    *n = (int)json_array_size(json_object_get(env, "devices"));
    json_decref(env);
    return BP_OK;
}

typedef bp_status (*launch_fn)(void *ctx, bpk_pin_t pin, bp_error_t *err);

static bp_status pinned(cstate_t *c, const bp_screen_gpu_t *g, unsigned items, int inject_sm,
                        launch_fn launch, void *ctx, unsigned char *done, bp_error_t *err)
{
    unsigned ns = g->nsmid, *want = c->hpin, *next = c->hpin + ns;
    for (unsigned s = 0; s < ns; s++) {
        want[s] = g->present[s] ? 1u : 0u;
        next[s] = 0;
        done[s] = 0;
    }
    bp_status st = xfer(c->be, &c->pin, c->hpin, true, err);
    for (int attempt = 0; !st && attempt < MAX_LAUNCHES; attempt++) {
        bpk_pin_t pin = {(const unsigned *)c->pin.dev, (unsigned *)c->pin.dev + ns, ns, items,
                         inject_sm};
        if ((st = launch(ctx, pin, err)) || (st = xfer(c->be, &c->pin, c->hpin, false, err)))
            break;
        unsigned pending = 0;
        for (unsigned s = 0; s < ns; s++) {
            if (!want[s])
                continue;
            if (next[s] >= items) {
                want[s] = 0;
                done[s] = 1;
            } else {
                next[s] = 0; /* its share runs again, whole */
                pending++;
            }
        }
        if (!pending)
            break;
        st = xfer(c->be, &c->pin, c->hpin, true, err);
    }
    return st;
}

/* ---- launchers -------------------------------------------------------- */

typedef struct {
    bp_backend_t *be;
    const bp_screen_job_t *job;
    void *out;
    const void *in[3];
    size_t per_sm;
    int pass;
} lctx_t;

static bp_status l_elem(void *v, bpk_pin_t pin, bp_error_t *err)
{
    lctx_t *l = v;
    const bp_screen_test_t *T = &bp_screen_tests[l->job->test];
    return bp_cuda_finish(l->be, T->name,
                          bpk_screen_elem(bp_cuda_stream(l->be), T->code, pin, l->out,
                                          l->in[0], l->in[1], l->in[2], (int64_t)l->job->n),
                          err);
}

static bp_status l_gemm(void *v, bpk_pin_t pin, bp_error_t *err)
{
    lctx_t *l = v;
    const bp_screen_test_t *T = &bp_screen_tests[l->job->test];
    return bp_cuda_finish(l->be, T->name,
                          bpk_screen_gemm(bp_cuda_stream(l->be), T->code, pin, l->out,
                                          l->in[0], l->in[1], l->job->m, l->job->nn,
                                          l->job->k),
                          err);
}

static bp_status l_mem(void *v, bpk_pin_t pin, bp_error_t *err)
{
    lctx_t *l = v;
    const bp_screen_test_t *T = &bp_screen_tests[l->job->test];
    if (l->pass == 0)
        pin.inject_sm = -1;
    return bp_cuda_finish(l->be, T->name,
                          bpk_screen_mem(bp_cuda_stream(l->be), l->pass, pin, l->out,
                                         (int64_t)l->per_sm, T->code, l->job->salt),
                          err);
}

static bp_status l_smem(void *v, bpk_pin_t pin, bp_error_t *err)
{
    lctx_t *l = v;
    return bp_cuda_finish(l->be, "smem",
                          bpk_screen_smem(bp_cuda_stream(l->be), pin, l->out, l->job->salt),
                          err);
}

static unsigned chunks(size_t n)
{
    return (unsigned)((n + BPK_SCR_CHUNK - 1) / BPK_SCR_CHUNK);
}

static bp_status cuda_run(bp_screen_dev_t *d, const bp_screen_gpu_t *g,
                          const bp_screen_job_t *job, size_t per_sm, int inject_sm, void *out,
                          unsigned char *done, bp_error_t *err)
{
    cstate_t *c = d->state;
    bp_backend_t *be = c->be;
    const bp_screen_test_t *T = &bp_screen_tests[job->test];
    bool wide = T->family == BP_SCR_CUBLAS;
    bp_dtype_t in_dt = T->family == BP_SCR_CUBLAS ? T->dt
                       : T->code == BPK_SCR_GEMM_MMA16 && T->family == BP_SCR_GEMM ? BP_F16
                       : T->code == BPK_SCR_GEMM_MMABF16 && T->family == BP_SCR_GEMM ? BP_BF16
                       : T->family == BP_SCR_GEMM ? BP_F32 : T->dt;
    size_t nout = wide ? job->n : (size_t)g->nsmid * per_sm;
    size_t nin[2] = {job->n, job->n};
    if (T->family == BP_SCR_GEMM || wide) {
        nin[0] = (size_t)job->m * job->k;
        nin[1] = (size_t)job->k * job->nn;
    }
    bp_buf_t ob = {0}, ib[3] = {{0}};
    lctx_t l = {be, job, NULL, {NULL, NULL, NULL}, per_sm, 0};
    bp_status st = bp_cuda_use(be, err);
    if (!st)
        st = dalloc(be, &ob, T->dt, nout, err);
    int nin_used = T->family == BP_SCR_ELEM ? T->nin
                   : (T->family == BP_SCR_GEMM || wide) ? 2 : 0;
    for (int i = 0; !st && i < nin_used; i++) {
        size_t cnt = T->family == BP_SCR_ELEM ? job->n : nin[i];
        st = dalloc(be, &ib[i], in_dt, cnt, err);
        if (!st)
            st = xfer(be, &ib[i], job->in[i], true, err);
        l.in[i] = ib[i].dev;
    }
    l.out = ob.dev;
    if (!st) {
        switch (T->family) {
        case BP_SCR_ELEM:
            st = pinned(c, g, chunks(job->n), inject_sm, l_elem, &l, done, err);
            break;
        case BP_SCR_GEMM: {
            unsigned items = T->code == BPK_SCR_GEMM_FFMA
                                 ? (unsigned)(job->m / 32 * (job->nn / 32))
                                 : (unsigned)(job->m / 32 * (job->nn / 64));
            st = pinned(c, g, items, inject_sm, l_gemm, &l, done, err);
            break;
        }
        case BP_SCR_MEM: {
            unsigned char *d2 = malloc(g->nsmid ? g->nsmid : 1);
            if (!d2) {
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
                break;
            }
            st = pinned(c, g, chunks(per_sm), inject_sm, l_mem, &l, d2, err);
            l.pass = 1;
            if (!st)
                st = pinned(c, g, chunks(per_sm), inject_sm, l_mem, &l, done, err);
            for (unsigned s = 0; s < g->nsmid; s++)
                done[s] = done[s] && d2[s];
            free(d2);
            break;
        }
        case BP_SCR_SMEM:
            st = pinned(c, g, BP_SCREEN_SMEM_ITEMS, inject_sm, l_smem, &l, done, err);
            break;
        case BP_SCR_CUBLAS: {
            int64_t sa[2] = {job->m, job->k}, sb[2] = {job->k, job->nn};
            bp_cuda_mat_t ma = {ib[0].dev, {0}}, mb = {ib[1].dev, {0}};
            bp_strided_contiguous(2, sa, &ma.geo);
            bp_strided_contiguous(2, sb, &mb.geo);
            st = bp_cuda_addmm(c->gemm, T->dt, NULL, &ma, &mb, 0.0, 1.0, ob.dev, NULL, err);
            if (!st && inject_sm >= 0)
                st = bp_cuda_finish(be, "bpk_screen_flip",
                                    bpk_screen_flip(bp_cuda_stream(be), ob.dev, 0, 0), err);
            break;
        }
        }
    }
    if (!st)
        st = xfer(be, &ob, out, false, err);
    dfree(be, &ob);
    for (int i = 0; i < 3; i++)
        dfree(be, &ib[i]);
    if (st)
        bp_error_prefix(err, "%s: ", T->name);
    return st;
}

static void cuda_close(bp_screen_dev_t *d)
{
    if (!d)
        return;
    cstate_t *c = d->state;
    if (c) {
        if (c->be) {
            dfree(c->be, &c->pin);
            bp_cuda_blas_close(c->gemm);
            bp_backend_close(c->be);
        }
        free(c->hpin);
        free(c);
    }
    free(d);
}

static void str_from(json_t *o, const char *k, char *out, size_t n)
{
    const char *v = json_string_value(json_object_get(o, k));
    snprintf(out, n, "%s", v ? v : "unknown");
}

/* Which SM ids run blocks: launches of a device-filling grid until every
 * SM the device reports has been seen. */
static bp_status sm_map(cstate_t *c, bp_screen_gpu_t *g, bp_error_t *err)
{
    bp_buf_t b;
    unsigned *h = calloc(BPK_SCR_MAXSM + 1, sizeof *h);
    if (!h)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_status st = dalloc(c->be, &b, BP_I32, BPK_SCR_MAXSM + 1, err);
    if (!st)
        st = xfer(c->be, &b, h, true, err);
    int seen = 0;
    for (int attempt = 0; !st && attempt < MAX_LAUNCHES && seen < g->sms; attempt++) {
        st = bp_cuda_finish(c->be, "bpk_screen_smids",
                            bpk_screen_smids(bp_cuda_stream(c->be), b.dev,
                                             (unsigned *)b.dev + BPK_SCR_MAXSM),
                            err);
        if (!st)
            st = xfer(c->be, &b, h, false, err);
        seen = 0;
        for (unsigned s = 0; s < BPK_SCR_MAXSM; s++)
            seen += h[s] > 0;
    }
    if (!st) {
        unsigned ns = h[BPK_SCR_MAXSM] < BPK_SCR_MAXSM ? h[BPK_SCR_MAXSM] : BPK_SCR_MAXSM;
        for (unsigned s = ns; s < BPK_SCR_MAXSM; s++)
            if (h[s])
                ns = s + 1;
        g->nsmid = ns;
        g->seen = seen;
        g->present = calloc(ns ? ns : 1, 1);
        c->hpin = calloc(2 * (size_t)(ns ? ns : 1), sizeof *c->hpin);
        if (!g->present || !c->hpin)
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
        for (unsigned s = 0; !st && s < ns; s++)
            g->present[s] = h[s] > 0;
        if (!st)
            st = dalloc(c->be, &c->pin, BP_I32, 2 * (size_t)ns, err);
        if (!st && seen < g->sms) {
            g->trouble = true;
            snprintf(g->error, sizeof g->error, "only %d of %d SMs ran a block in %d launches",
                     seen, g->sms, MAX_LAUNCHES);
        }
    }
    dfree(c->be, &b);
    free(h);
    return st;
}

bp_status bp_screen_cuda_open(int index, bp_screen_gpu_t *g, bp_screen_dev_t **out,
                              bp_error_t *err)
{
    *out = NULL;
    g->index = index;
    json_t *env = bp_be_cuda_env(err);
    if (!env)
        return err->code ? err->code : BP_EUNAVAIL;
    json_t *dev = json_array_get(json_object_get(env, "devices"), (size_t)index);
    if (dev) {
        str_from(dev, "name", g->name, sizeof g->name);
        str_from(dev, "uuid", g->uuid, sizeof g->uuid);
        str_from(dev, "pci_bus_id", g->pci, sizeof g->pci);
        str_from(dev, "cc", g->cc, sizeof g->cc);
        g->sms = (int)json_integer_value(json_object_get(dev, "sms"));
    }
    str_from(env, "nvidia_driver", g->driver, sizeof g->driver);
    str_from(env, "driver", g->cuda_driver, sizeof g->cuda_driver);
    json_decref(env);
    bp_backend_opts_t o;
    bp_backend_opts_default(&o);
    o.gpu = index;
    bp_screen_dev_t *d = calloc(1, sizeof *d);
    cstate_t *c = calloc(1, sizeof *c);
    if (!d || !c) {
        free(d);
        free(c);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    d->state = c;
    d->run = cuda_run;
    d->close = cuda_close;
    bp_status st = bp_be_cuda_open(&o, &c->be, err);
    if (!st) {
        bp_blas_settings_t pinned;
        bp_blas_settings_default(&pinned);
        pinned.pedantic = true;
        st = bp_cuda_blas_open(c->be, &pinned, &c->gemm, err);
    }
    if (!st) {
        const char *nv = json_string_value(json_object_get(c->be->fingerprint, "nvcc"));
        snprintf(g->key, sizeof g->key, "%.40s-nvcc%.16s", c->be->key, nv ? nv : "unknown");
        st = sm_map(c, g, err);
    }
    if (st) {
        cuda_close(d);
        return st;
    }
    *out = d;
    return BP_OK;
}
