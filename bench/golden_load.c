/* Golden load throughput: reading a gzip'd safetensors file with bp_st_read
 * (inflate, header rules, CRC per tensor, data straight into the tensor
 * buffer) against the reference of zlib's gzread of the same file into one
 * buffer, in the same run; also the plain (uncompressed) file.  Prints MB/s
 * of tensor data, the ratio and the peak RSS with the buffers held.
 *   golden_load [MiB]   (default 256; files go under $TMPDIR) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "rng.h"
#include "st.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    size_t n = mib * (1u << 20) / 4;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char gz[512], plain[512];
    snprintf(gz, sizeof gz, "%s/bp-bench-golden-%d.safetensors.gz", tmp, (int)getpid());
    snprintf(plain, sizeof plain, "%s/bp-bench-golden-%d.safetensors", tmp, (int)getpid());
    bp_error_t err = {0};
    bp_buf_t b;
    int64_t shape[1] = {(int64_t)n};
    if (bp_buf_alloc(&b, BP_F32, 1, shape, &err))
        return fprintf(stderr, "%s\n", err.msg), 2;
    /* Like a real golden: RoPE-like values, i.e. mostly incompressible
     * mantissas with a few repeated high bytes. */
    float *f = b.data;
    for (size_t i = 0; i < n; i++)
        f[i] = bp_rng_uniform(1, 0, i, -1.0f, 1.0f);
    bp_st_file_t st;
    bp_st_init(&st);
    if (bp_st_add(&st, "x.fp32", &b, &err) || bp_st_write(gz, &st, true, &err) ||
        bp_st_write(plain, &st, false, &err))
        return fprintf(stderr, "%s\n", err.msg), 2;
    bp_st_free(&st);
    bp_buf_free(&b);
    printf("golden_load: one f32 tensor of %zu MiB, best of 3\n", mib);
    double best_st = 1e30, best_gz = 1e30, best_plain = 1e30;
    void *raw = malloc(mib * (1u << 20) + (1u << 20));
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        bp_st_file_t g;
        if (bp_st_read(gz, &g, &err))
            return fprintf(stderr, "%s\n", err.msg), 2;
        double t1 = now();
        bp_st_free(&g);
        gzFile z = gzopen(gz, "rb");
        gzbuffer(z, 1u << 17);
        double t2 = now();
        long total = 0;
        int got;
        while ((got = gzread(z, (char *)raw + total, 1u << 20)) > 0)
            total += got;
        double t3 = now();
        gzclose(z);
        bp_st_file_t p;
        double t4 = now();
        if (bp_st_read(plain, &p, &err))
            return fprintf(stderr, "%s\n", err.msg), 2;
        double t5 = now();
        bp_st_free(&p);
        if (t1 - t0 < best_st) best_st = t1 - t0;
        if (t3 - t2 < best_gz) best_gz = t3 - t2;
        if (t5 - t4 < best_plain) best_plain = t5 - t4;
    }
    double mb = (double)mib * 1.048576;
    FILE *fz = fopen(gz, "rb");
    fseek(fz, 0, SEEK_END);
    long zsize = ftell(fz);
    fclose(fz);
    printf("  compressed size            %.1f MB (%.1f%% of %.1f MB)\n", zsize / 1e6,
           100.0 * (double)zsize / (mb * 1e6), mb);
    printf("  bp_st_read, gzip           %8.1f MB/s  (%.3f s)\n", mb / best_st, best_st);
    printf("  reference: zlib gzread     %8.1f MB/s  (%.3f s)   ratio %.2f\n", mb / best_gz,
           best_gz, best_gz / best_st);
    printf("  bp_st_read, plain          %8.1f MB/s  (%.3f s)\n", mb / best_plain, best_plain);
    printf("  peak RSS %.1f MiB (buffers: the tensor read, %zu MiB, and gzread's reference "
           "buffer, %zu MiB)\n", peak_mib(), mib, mib + 1);
    free(raw);
    unlink(gz);
    unlink(plain);
    return 0;
}
