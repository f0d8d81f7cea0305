/* Comparison engine throughput against memcmp on the same buffers.
 *
 * Two f32 tensors of SIZE bytes each (default 1 GiB; argv[1] in MiB):
 *  1. equal: memcmp vs bp_compare (the engine must stay within 2x);
 *  2. every element different, b = nextafter(a, +inf) (1 ulp each), full
 *     statistics; memcmp returns at the first byte there, so the reference
 *     is memcmp's equal-buffer rate;
 *  3. every element different with random bits (signs, magnitudes and
 *     histogram bins unpredictable);
 *  2 again with the scalar loop, the one CPUs without AVX2 get.
 * GB/s counts the bytes of one tensor (10^9 bytes per second), best of 3.
 * Prints the peak RSS: the two tensors and nothing else of size. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "compare.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t sm = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    uint64_t z = (sm += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static volatile int sink;

static double time_memcmp(const void *a, const void *b, size_t n)
{
    double best = INFINITY;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        sink = memcmp(a, b, n);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double best_cpu; /* CPU seconds of the best run, for loaded hosts */

static double time_compare(const bp_buf_t *a, const bp_buf_t *b,
                           bp_cmp_t *keep)
{
    double best = INFINITY;
    for (int r = 0; r < 3; r++) {
        bp_cmp_t c;
        bp_error_t e;
        double c0 = cpu_now(), t0 = now();
        if (bp_compare(a, b, NULL, NULL, &c, &e) != BP_OK) {
            fprintf(stderr, "compare_throughput: %s\n", e.msg);
            exit(2);
        }
        double t = now() - t0, ct = cpu_now() - c0;
        if (t < best) {
            best = t;
            best_cpu = ct;
        }
        if (r == 2)
            *keep = c;
        else
            bp_cmp_free(&c);
    }
    return best;
}

static void line(const char *what, double bytes, double t, double ref)
{
    printf("  %-34s %8.3f s %8.2f GB/s", what, t, bytes / t / 1e9);
    if (ref > 0)
        printf("   %.2fx memcmp's time  (cpu %.3f s)", t / ref, best_cpu);
    printf("\n");
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
    if (mib == 0) {
        fprintf(stderr, "usage: compare_throughput [MiB per tensor]\n");
        return 2;
    }
    size_t bytes = mib << 20, n = bytes / 4;
    bp_buf_t a = {.dtype = BP_F32, .ndim = 1, .shape = {(int64_t)n},
                  .numel = n};
    bp_buf_t b = a;
    float *fa = malloc(bytes), *fb = malloc(bytes);
    if (!fa || !fb) {
        fprintf(stderr, "compare_throughput: cannot allocate 2 x %zu MiB\n",
                mib);
        return 2;
    }
    a.data = fa;
    b.data = fb;
    for (size_t i = 0; i < n; i++) /* finite values of every magnitude */
        fa[i] = ldexpf((float)(rnd() >> 40) / 16777216.0f + 0.5f,
                       (int)(rnd() % 200) - 100) *
                (rnd() & 1 ? -1.0f : 1.0f);
    memcpy(fb, fa, bytes);

    printf("compare_throughput: two f32 tensors of %zu MiB (%zu elements), "
           "single thread, best of 3, kernel %s\n", mib, n, bp_cmp_kernel());
    bp_cmp_t c;
    printf("equal buffers:\n");
    double tm = time_memcmp(fa, fb, bytes);
    line("memcmp", (double)bytes, tm, 0);
    double tc = time_compare(&a, &b, &c);
    line("bp_compare", (double)bytes, tc, tm);
    if (c.mismatched != 0) {
        fprintf(stderr, "compare_throughput: equal buffers mismatched\n");
        return 1;
    }
    bp_cmp_free(&c);

    printf("every element 1 ulp apart (b = nextafter(a, +inf)):\n");
    for (size_t i = 0; i < n; i++)
        fb[i] = nextafterf(fa[i], INFINITY);
    tc = time_compare(&a, &b, &c);
    line("bp_compare, full statistics", (double)bytes, tc, tm);
    printf("    mismatched %zu of %zu, max ulp %" PRIu64 ", max rel %a\n",
           c.mismatched, c.total, c.max_ulp, c.max_rel);
    if (c.mismatched != n || c.hist[1] != n)
        return 1;
    bp_cmp_free(&c);
    if (strcmp(bp_cmp_kernel(), "scalar") != 0) {
        bp_cmp_set_kernel("scalar");
        tc = time_compare(&a, &b, &c);
        line("same, scalar loop", (double)bytes, tc, tm);
        bp_cmp_free(&c);
        bp_cmp_set_kernel("auto");
    }

    printf("every element random (random signs, distances, bins):\n");
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        do
            u = (uint32_t)rnd();
        while ((u & 0x7f800000u) == 0x7f800000u ||
               u == (uint32_t)*(uint32_t *)&fa[i]);
        memcpy(&fb[i], &u, 4);
    }
    tc = time_compare(&a, &b, &c);
    line("bp_compare, full statistics", (double)bytes, tc, tm);
    printf("    mismatched %zu of %zu, max ulp %" PRIu64 ", median ulp <= "
           "%.0f\n", c.mismatched, c.total, c.max_ulp,
           bp_cmp_percentile_ulp(&c, 50));
    bp_cmp_free(&c);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MiB (tensors: %.1f MiB)\n",
           (double)ru.ru_maxrss / 1024.0, 2.0 * (double)bytes / 1048576.0);
    free(fa);
    free(fb);
    return 0;
}
