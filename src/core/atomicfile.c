/* Crash-safe file replacement under a lock (see atomicfile.h). */
#define _GNU_SOURCE /* memfd_create */
#include "atomicfile.h"
#include "interrupt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void dir_of(const char *path, char *out, size_t n)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(out, n, "%s", dirname(tmp));
}

bp_status bp_mkdir_parents(const char *path, bp_error_t *err)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    /* under the interruption lock: no directory appears in a staging
     * directory after an interruption removed it */
    bp_intr_lock();
    bp_status st = BP_OK;
    for (char *p = dir + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                st = bp_error_set(err, BP_EIO, "cannot create directory '%s': %s", dir,
                                  strerror(errno));
                break;
            }
            *p = c;
        }
        if (c == '\0')
            break;
    }
    bp_intr_unlock();
    return st;
}

bp_status bp_atomic_lock(const char *target, bp_lock_t *lk, bp_error_t *err)
{
    char lpath[PATH_MAX];
    lk->fd = -1;
    if (snprintf(lpath, sizeof lpath, "%s.lock", target) >= (int)sizeof lpath)
        return bp_error_set(err, BP_EINPUT, "path too long: '%s'", target);
    bp_status st = bp_mkdir_parents(target, err);
    if (st)
        return st;
    for (;;) {
        int fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            return bp_error_set(err, BP_EIO, "cannot open lock file '%s': %s", lpath,
                                strerror(errno));
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                int e = errno;
                close(fd);
                return bp_error_set(err, BP_EIO, "cannot lock '%s': %s", lpath, strerror(e));
            }
        }
        /* held: still the file at lpath?  (its holder removes it before
         * letting go; then a new one is the lock) */
        struct stat held, now;
        if (fstat(fd, &held) == 0 && stat(lpath, &now) == 0 && held.st_ino == now.st_ino &&
            held.st_dev == now.st_dev) {
            lk->fd = fd;
            snprintf(lk->path, sizeof lk->path, "%s", lpath);
            bp_intr_add(lk->path, false); /* an interruption removes it, held */
            return BP_OK;
        }
        close(fd);
    }
}

void bp_atomic_unlock(bp_lock_t *lk)
{
    if (lk->fd >= 0) {
        /* removed while held, so that no lock file stays beside the target */
        bp_intr_lock();
        unlink(lk->path);
        bp_intr_remove_locked(lk->path);
        bp_intr_unlock();
        flock(lk->fd, LOCK_UN);
        close(lk->fd);
        lk->fd = -1;
    }
}

/* Temporaries left by a process killed mid-write: harmless, but tidy them
 * while we hold the lock (nobody else can be writing one). */
static void remove_stale(const char *target)
{
    char dir[PATH_MAX], base[PATH_MAX], tmp[PATH_MAX];
    dir_of(target, dir, sizeof dir);
    snprintf(tmp, sizeof tmp, "%s", target);
    snprintf(base, sizeof base, "%s.tmp.", basename(tmp));
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    size_t bl = strlen(base);
    while ((e = readdir(d)))
        if (strncmp(e->d_name, base, bl) == 0 && strlen(e->d_name) == bl + 6) {
            char p[PATH_MAX];
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
                unlink(p);
        }
    closedir(d);
}

static bp_status write_all(int fd, const void *data, size_t len, const char *path,
                           bp_error_t *err)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return bp_error_set(err, BP_EIO, "cannot write '%s': %s", path,
                                w < 0 ? strerror(errno) : "short write");
        p += w;
        len -= (size_t)w;
    }
    return BP_OK;
}

typedef struct {
    const void *data;
    size_t len;
} membuf_t;

static bp_status fill_mem(int fd, void *ctx, bp_error_t *err)
{
    membuf_t *m = ctx;
    return write_all(fd, m->data, m->len, "temporary file", err);
}

bp_status bp_atomic_replace(const char *target, const void *data, size_t len,
                            bp_error_t *err)
{
    membuf_t m = {data, len};
    return bp_atomic_write(target, fill_mem, &m, err);
}

/* ---- BP_TEST_SLOW_WRITE (see atomicfile.h) ------------------------------ */

#define SLOW_CHUNK 1024

static long slow_usec(void)
{
    const char *s = getenv("BP_TEST_SLOW_WRITE");
    if (!s || !*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v <= 0 ? 0 : v > 1000000 ? 1000000 : v;
}

static void pause_usec(long usec)
{
    struct timespec ts = {usec / 1000000, (usec % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The content is staged in a memory file, then copied into fd in chunks
 * with a pause after each: the same bytes, written slowly. */
static bp_status slow_fill(int fd, bp_atomic_fill_fn fill, void *ctx, long usec,
                           bp_error_t *err)
{
    int mfd = memfd_create("bp-slow-write", MFD_CLOEXEC);
    if (mfd < 0)
        return bp_error_set(err, BP_EIO, "memfd_create: %s", strerror(errno));
    bp_status st = fill(mfd, ctx, err);
    off_t at = 0;
    char buf[SLOW_CHUNK];
    while (!st) {
        ssize_t r = pread(mfd, buf, sizeof buf, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            st = bp_error_set(err, BP_EIO, "memfd read: %s", strerror(errno));
        if (r <= 0)
            break;
        st = write_all(fd, buf, (size_t)r, "temporary file", err);
        at += r;
        pause_usec(usec);
    }
    close(mfd);
    return st;
}

bp_status bp_atomic_write(const char *target, bp_atomic_fill_fn fill, void *ctx,
                          bp_error_t *err)
{
    long slow = slow_usec();
    char tmp[PATH_MAX], dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", target) >= (int)sizeof tmp)
        return bp_error_set(err, BP_EINPUT, "path too long: '%s'", target);
    remove_stale(target);
    int fd = bp_intr_mkstemp(tmp);
    if (fd < 0)
        return bp_error_set(err, BP_EIO, "cannot create a temporary file next to '%s': %s",
                            target, strerror(errno));
    bp_status st = slow ? slow_fill(fd, fill, ctx, slow, err) : fill(fd, ctx, err);
    if (!st && fchmod(fd, 0644) != 0)
        st = bp_error_set(err, BP_EIO, "cannot chmod '%s': %s", tmp, strerror(errno));
    if (!st && fsync(fd) != 0)
        st = bp_error_set(err, BP_EIO, "cannot fsync '%s': %s", tmp, strerror(errno));
    if (close(fd) != 0 && !st)
        st = bp_error_set(err, BP_EIO, "cannot close '%s': %s", tmp, strerror(errno));
    if (slow)
        pause_usec(slow);
    bp_intr_lock();
    if (!st && rename(tmp, target) != 0)
        st = bp_error_set(err, BP_EIO, "cannot rename '%s' to '%s': %s", tmp, target,
                          strerror(errno));
    if (st)
        unlink(tmp);
    bp_intr_remove_locked(tmp);
    bp_intr_unlock();
    if (st)
        return st;
    if (slow)
        pause_usec(slow);
    dir_of(target, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return bp_error_set(err, BP_EIO, "cannot open directory '%s': %s", dir,
                            strerror(errno));
    int rc = fsync(dfd);
    close(dfd);
    if (rc != 0)
        return bp_error_set(err, BP_EIO, "cannot fsync directory '%s': %s", dir,
                            strerror(errno));
    return BP_OK;
}
