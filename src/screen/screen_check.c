/* Checking a device's results against the expected bits, or, for the
 * golden sweeps without a golden, SM against SM (screen.h). */
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpk.h"

typedef struct {
    bp_screen_gpu_t *g;
    bp_screen_tres_t *tr;
    const bp_screen_job_t *job;
    unsigned char *sm_wrong; /* the test's tr->sm_wrong */
} ctx_t;

static void fault(ctx_t *c, int sm, uint64_t index, uint64_t expected, uint64_t got)
{
    bp_screen_tres_t *tr = c->tr;
    tr->wrong++;
    if (sm >= 0) {
        c->g->wrong_by_sm[sm]++;
        if (!c->sm_wrong[sm]) {
            c->sm_wrong[sm] = 1;
            tr->wrong_sms++;
        }
    }
    if (tr->nkept < BP_SCREEN_KEEP)
        tr->kept[tr->nkept++] = (bp_screen_fault_t){sm, c->job->test, c->job->round,
                                                    index, expected, got};
}

static uint64_t bits_at(bp_dtype_t dt, const void *p, size_t i)
{
    return bp_dtype_load_bits(dt, p, i);
}

/* row against expected, element by element only where memcmp differs */
static void against(ctx_t *c, int sm, bp_dtype_t dt, const void *row, const void *exp,
                    size_t n)
{
    size_t es = bp_dtype_info(dt)->size;
    if (memcmp(row, exp, n * es) == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = bits_at(dt, exp, i), g = bits_at(dt, row, i);
        if (e != g)
            fault(c, sm, i, e, g);
    }
}

static void memory(ctx_t *c, int sm, const uint32_t *row, size_t per_sm)
{
    const bp_screen_test_t *T = &bp_screen_tests[c->job->test];
    uint32_t salt = c->job->salt;
    if (T->family == BP_SCR_MEM) {
        int p = T->code;
        uint64_t base = (uint64_t)sm * per_sm;
        for (size_t i = 0; i < per_sm; i++) {
            uint32_t e = ~BPK_SCR_PATTERN(p, base + i, salt);
            if (row[i] != e)
                fault(c, sm, i, e, row[i]);
        }
        return;
    }
    for (size_t i = 0; i < per_sm; i++) {
        uint32_t e = bp_screen_pattern(c->job, per_sm, (unsigned)sm, i);
        if (row[i] != e)
            fault(c, sm, i, e, row[i]);
    }
}

/* Each element's majority over the SMs; every SM that differs from it is
 * wrong.  Without a strict majority the most common value (Boyer-Moore's
 * candidate) stands, and every other SM is named. */
static void vote(ctx_t *c, const int *sms, int ns, bp_dtype_t dt, const char *out,
                 size_t n, void *agreed)
{
    size_t es = bp_dtype_info(dt)->size, rowb = n * es;
    int same = 1;
    for (int s = 1; s < ns && same; s++)
        same = memcmp(out + (size_t)sms[s] * rowb, out + (size_t)sms[0] * rowb, rowb) == 0;
    if (same) {
        memcpy(agreed, out + (size_t)sms[0] * rowb, rowb);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t cand = 0;
        int cnt = 0;
        for (int s = 0; s < ns; s++) {
            uint64_t v = bits_at(dt, out + (size_t)sms[s] * rowb, i);
            if (cnt == 0)
                cand = v, cnt = 1;
            else
                cnt += v == cand ? 1 : -1;
        }
        bp_dtype_store_bits(dt, agreed, i, cand);
        for (int s = 0; s < ns; s++) {
            uint64_t v = bits_at(dt, out + (size_t)sms[s] * rowb, i);
            if (v != cand)
                fault(c, sms[s], i, cand, v);
        }
    }
}

/* The agreed bits within `bound` ulps of the correctly rounded ones (one
 * more where the exact value sits at a binade's edge). */
static void bound(ctx_t *c, bp_dtype_t dt, const void *agreed, const void *oracle,
                  size_t n, int ulps)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a = bits_at(dt, agreed, i), o = bits_at(dt, oracle, i);
        bool an = bp_dtype_bits_isnan(dt, a), on = bp_dtype_bits_isnan(dt, o);
        uint64_t u = an ? 0 : bp_ulp_distance(dt, a, o);
        /* a zero of the other sign is 0 ulp away and still wrong bits */
        if (an != on || u > (uint64_t)ulps + 1 || (!an && u == 0 && a != o))
            fault(c, -1, i, o, a);
    }
}

bp_status bp_screen_check(bp_screen_gpu_t *g, const bp_screen_job_t *job, const void *out,
                          size_t per_sm, const unsigned char *done, const void *golden,
                          const void *oracle, bp_error_t *err)
{
    const bp_screen_test_t *T = &bp_screen_tests[job->test];
    bp_screen_tres_t *tr = &g->t[job->test];
    if (!tr->sm_wrong)
        tr->sm_wrong = calloc(g->nsmid ? g->nsmid : 1, 1);
    ctx_t c = {g, tr, job, tr->sm_wrong};
    int *sms = malloc((g->nsmid ? g->nsmid : 1) * sizeof *sms);
    if (!c.sm_wrong || !sms) {
        free(sms);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    tr->ran = true;
    if (T->family == BP_SCR_CUBLAS) {
        tr->covered = -1;
        tr->by = "host";
        against(&c, -1, T->dt, out, job->expect, job->n);
        tr->checked += job->n;
        goto done;
    }
    /* Coverage: an SM that never ran a block cannot be vouched for. */
    int ns = 0;
    bool missed = false;
    if (!g->uncovered && !(g->uncovered = calloc(g->nsmid ? g->nsmid : 1, 1))) {
        free(sms);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    for (unsigned s = 0; s < g->nsmid; s++) {
        if (!g->present[s])
            continue;
        if (done[s])
            sms[ns++] = (int)s;
        else
            missed = (g->uncovered[s] = 1);
    }
    tr->covered = ns;
    if (missed)
        g->uncovered_tests |= 1u << job->test;
    size_t es = bp_dtype_info(T->dt)->size, rowb = per_sm * es;
    const char *o = out;
    tr->checked += (uint64_t)ns * per_sm;
    if (T->family == BP_SCR_MEM || T->family == BP_SCR_SMEM) {
        tr->by = "host";
        for (int s = 0; s < ns; s++)
            memory(&c, sms[s], (const uint32_t *)(o + (size_t)sms[s] * rowb), per_sm);
    } else if (T->by != BP_SCR_BY_GOLDEN || golden) {
        const void *exp = golden ? golden : job->expect;
        tr->by = golden ? "golden" : T->by == BP_SCR_BY_MPFR ? "mpfr" : "host";
        for (int s = 0; s < ns; s++)
            against(&c, sms[s], T->dt, o + (size_t)sms[s] * rowb, exp, per_sm);
        if (golden && !tr->agreed && (tr->agreed = malloc(rowb))) {
            memcpy(tr->agreed, golden, rowb);
            tr->nagreed = per_sm;
        }
    } else if (ns > 0) {
        void *agreed = malloc(rowb);
        if (!agreed) {
            free(sms);
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        }
        vote(&c, sms, ns, T->dt, o, per_sm, agreed);
        tr->by = "sm-vote";
        if (oracle && T->ulp_bound >= 0) {
            tr->by = "sm-vote+oracle";
            bound(&c, T->dt, agreed, oracle, per_sm, T->ulp_bound);
        }
        if (!tr->agreed) {
            tr->agreed = agreed;
            tr->nagreed = per_sm;
        } else {
            /* Later rounds repeat the sweep: the bits must not move. */
            for (size_t i = 0; i < per_sm; i++) {
                uint64_t a = bits_at(T->dt, tr->agreed, i), b = bits_at(T->dt, agreed, i);
                if (a != b)
                    fault(&c, -1, i, a, b);
            }
            free(agreed);
        }
    }
done:
    free(sms);
    return BP_OK;
}
