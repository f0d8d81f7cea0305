/* Replays fuzz corpora through one target's LLVMFuzzerTestOneInput
 * without libFuzzer: a plain program for `make check` (any sanitizer the
 * build uses applies).  Arguments are files or directories (every regular
 * file in them); with none, the corpus of the target it was built for,
 * $srcdir/fuzz/corpus/<target> ($srcdir: the tests directory, as the test
 * harness sets it).  Prints how many inputs ran; a broken contract
 * aborts in the target. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET names the corpus"
#endif

static size_t nrun;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: out of memory\n");
            fclose(f);
            return 1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        unsigned char *t = realloc(buf, cap *= 2);
        if (!t)
            free(buf);
        buf = t;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read '%s'\n", path);
        free(buf);
        return 1;
    }
    /* An exact-size copy, so that a read past the end is caught. */
    unsigned char *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    if (getenv("REPLAY_VERBOSE"))
        fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    nrun++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (nn == cap) {
            char **t = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *t);
            if (!t)
                abort();
            names = t;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[nn] = malloc(len)))
            abort();
        snprintf(names[nn++], len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
        rc |= run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= run_path(argv[i]);
    } else {
        const char *src = getenv("srcdir");
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", src ? src : "tests",
                 FUZZ_TARGET);
        rc = run_path(dir);
    }
    printf("replay %s: %zu inputs\n", FUZZ_TARGET, nrun);
    if (nrun == 0) {
        fprintf(stderr, "replay %s: no inputs\n", FUZZ_TARGET);
        rc = 1;
    }
    return rc;
}
