/* Oracle throughput: correctly rounded sin (MPFR) of 524288 fp32 elements
 * on 1, 2, 4, ... and N threads (N: the online cores), with a hash of the
 * output per thread count: the bits must not depend on the thread count
 * (exit 1 if they do).
 *
 * Two inputs:
 *  1. x_i = i / 128, all distinct, in [0, 4096) (the angles of a 4096-
 *     position RoPE cache): one MPFR evaluation per element, so
 *     elements/second is MPFR evaluations per second;
 *  2. rope-llama2's emb = concat(freqs, freqs), freqs = outer(arange(4096),
 *     inv_freq): every value twice, so the oracle's evaluation once per
 *     distinct value halves the work.
 * Each thread count gets a fresh oracle backend, so no result is kept from
 * the run before.  Prints wall and CPU time, elements/second, the speedup
 * over one thread, the hash, and the peak RSS with the size of the buffers
 * (the oracle's own tables included).
 *   oracle_throughput [ELEMENTS] [MAX_THREADS]
 * Links no CUDA library: the peak RSS is the oracle's own. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <stdint.h>
#include <mpfr.h>

#include "backend.h"

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* sin of in on `threads` threads into out; returns wall seconds. */
static int run_sin(int threads, const bp_buf_t *in, bp_buf_t *out, double *wall,
                   double *cpu)
{
    bp_backend_opts_t o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    bp_backend_t *be = NULL;
    bp_error_t err = {0};
    if (bp_be_oracle_open(&o, &be, &err)) {
        fprintf(stderr, "oracle_throughput: %s\n", err.msg);
        return 2;
    }
    bp_op_t op;
    memset(&op, 0, sizeof op);
    op.kind = BP_OP_SIN;
    op.out = (char *)"y";
    op.a.kind = BP_ARG_BUF;
    bp_exec_t x = {.op = &op, .a = in, .out = out};
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC);
    bp_status st = be->op[BP_OP_SIN](be, &x, &err);
    *wall = now(CLOCK_MONOTONIC) - t0;
    *cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    be->destroy(be);
    if (st) {
        fprintf(stderr, "oracle_throughput: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static int sweep(const char *what, const bp_buf_t *in, bp_buf_t *out, int maxt)
{
    printf("%s\n", what);
    printf("  %7s %9s %9s %14s %8s  %s\n", "threads", "wall s", "cpu s", "elements/s",
           "speedup", "output hash (FNV-1a 64)");
    double base = 0;
    uint64_t first = 0;
    int rc = 0;
    for (int t = 1; t <= maxt; t = t * 2 > maxt && t < maxt ? maxt : t * 2) {
        double wall, cpu;
        if (run_sin(t, in, out, &wall, &cpu))
            return 2;
        uint64_t h = fnv1a(out->data, bp_buf_nbytes(out));
        if (t == 1) {
            base = wall;
            first = h;
        }
        printf("  %7d %9.3f %9.3f %14.4g %7.2fx  %016" PRIx64 "%s\n", t, wall, cpu,
               (double)in->numel / wall, base / wall, h,
               h == first ? "" : "  DIFFERS from 1 thread");
        if (h != first)
            rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 524288;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int maxt = argc > 2 ? atoi(argv[2]) : (int)(ncpu > 0 ? ncpu : 1);
    if (n < 2 || n % 2 || maxt < 1) {
        fprintf(stderr, "usage: oracle_throughput [ELEMENTS (even)] [MAX_THREADS]\n");
        return 2;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss0 = (double)ru.ru_maxrss / 1024.0;
    int64_t shape[1] = {(int64_t)n};
    bp_buf_t in, out;
    bp_error_t err = {0};
    if (bp_buf_alloc(&in, BP_F32, 1, shape, &err) ||
        bp_buf_alloc(&out, BP_F32, 1, shape, &err)) {
        fprintf(stderr, "oracle_throughput: %s\n", err.msg);
        return 2;
    }
    float *x = in.data;
    printf("oracle_throughput: sin of %zu fp32 elements, MPFR %s, %ld online cores\n", n,
           mpfr_get_version(), ncpu);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((double)i / 128.0);
    int rc = sweep("distinct inputs x_i = i/128 (one MPFR evaluation each):", &in, &out,
                   maxt);
    /* emb rows of 128 = freqs (64) twice; as many rows as fit. */
    for (size_t i = 0; i < n; i++) {
        size_t pos = i / 128, j = (i % 128) % 64;
        float inv = (float)(1.0 / pow(10000.0, (double)(2 * j) / 128.0));
        x[i] = (float)pos * inv;
    }
    int rc2 = sweep("rope-llama2's emb (every value twice; evaluated once per distinct value):",
                    &in, &out, maxt);
    getrusage(RUSAGE_SELF, &ru);
    /* The oracle's working memory, as oracle_unique.c and be_oracle.c size
     * it for n distinct fp32 values: six tables of n 4-byte entries while
     * an op runs (slots, distinct values, their results, misses, new
     * results, the cosines evaluated with them) and the results it keeps,
     * sines and cosines, 12 bytes a place, places the next power of two
     * >= 2 * 2n. */
    size_t cap = 4096;
    while (cap < 4 * n)
        cap *= 2;
    double mib = 1048576.0, bufs = 2.0 * (double)bp_buf_nbytes(&in) / mib,
           tables = 24.0 * (double)n / mib, kept = 12.0 * (double)cap / mib;
    printf("peak RSS %.1f MiB: %.1f MiB at start (libraries), %.1f MiB more for %.1f MiB of "
           "buffers: input and output %.1f, the oracle's tables %.1f and kept results %.1f\n",
           (double)ru.ru_maxrss / 1024.0, rss0, (double)ru.ru_maxrss / 1024.0 - rss0,
           bufs + tables + kept, bufs, tables, kept);
    bp_buf_free(&in);
    bp_buf_free(&out);
    return rc ? rc : rc2;
}
