/* run --timing as text (see rep.h). */
#include <string.h>

#include "esc.h"
#include "rep.h"
#include "timing.h"

int bp_rep_timing(FILE *f, const bp_timing_t *t)
{
    fprintf(f, "timing (wall seconds, CLOCK_MONOTONIC):\n");
    fprintf(f, "  %-8s %8s %8s %8s %9s %8s %8s %11s %11s %11s\n", "backend", "open",
            "driver", "context", "run", "g.load", "g.cmp", "elements", "reused", "elem/s");
    for (int k = 0; k < t->nbe; k++) {
        const bp_timing_be_t *b = &t->be[k];
        char drv[32] = "-", ctx[32] = "-", rate[32] = "-";
        if (b->init_s > 0)
            snprintf(drv, sizeof drv, "%.4f", b->init_s);
        if (b->ctx_s > 0)
            snprintf(ctx, sizeof ctx, "%.4f", b->ctx_s);
        if (b->run_s > 0)
            snprintf(rate, sizeof rate, "%.4g", (double)b->elems / b->run_s);
        if (!b->opened) {
            fprintf(f, "  %-8s %8.4f (not available)\n", b->name, b->open_s);
            continue;
        }
        fprintf(f, "  %-8s %8.4f %8s %8s %9.4f %8.4f %8.4f %11llu %11llu %11s\n", b->name,
                b->open_s, drv, ctx, b->run_s, b->golden_load_s, b->golden_cmp_s,
                (unsigned long long)b->elems, (unsigned long long)b->reused, rate);
    }
    fprintf(f, "  %-24s %-5s", "probe", "dtype");
    for (int k = 0; k < t->nbe; k++)
        if (t->be[k].opened)
            fprintf(f, " %9s", t->be[k].name);
    fputc('\n', f);
    /* One row per probe and dtype, in run order; repeats add up. */
    for (size_t i = 0; i < t->nruns; i++) {
        const bp_timing_run_t *r = &t->runs[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->runs[j].dtype == r->dtype && strcmp(t->runs[j].probe, r->probe) == 0;
        if (seen)
            continue;
        bp_esc_printf(f, "  %-24s %-5s", r->probe, bp_dtype_name(r->dtype));
        for (int k = 0; k < t->nbe; k++) {
            if (!t->be[k].opened)
                continue;
            double s = 0;
            for (size_t j = i; j < t->nruns; j++)
                if (t->runs[j].be == k && t->runs[j].dtype == r->dtype &&
                    strcmp(t->runs[j].probe, r->probe) == 0)
                    s += t->runs[j].s;
            fprintf(f, " %9.4f", s);
        }
        fputc('\n', f);
    }
    fprintf(f, "  results held at once: at most %.1f MiB\n", (double)t->held_peak / 1048576.0);
    fprintf(f, "  probes load %.4f, cross-backend compare %.4f, report %.4f\n", t->load_s,
            t->cross_cmp_s, t->report_s);
    fprintf(f, "  total %.3f wall, %.3f CPU (user %.3f, sys %.3f)\n", t->total_s,
            t->user_s + t->sys_s, t->user_s, t->sys_s);
    return ferror(f) ? 2 : 0;
}
