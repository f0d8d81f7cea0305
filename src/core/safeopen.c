/* Opening files to read (see safeopen.h). */
#include "safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#define READ_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK)

const char *bp_safe_name_rule(const char *rel)
{
    if (!*rel)
        return "the name is empty";
    if (*rel == '/')
        return "an absolute path leaves the directory";
    if (strlen(rel) >= PATH_MAX / 2)
        return "the name is too long";
    for (const char *s = rel; *s; s++) {
        if ((s == rel || s[-1] == '/') && s[0] == '.' && s[1] == '.' &&
            (s[2] == '/' || s[2] == '\0'))
            return "'..' leaves the directory";
        if (*s == '\\')
            return "backslashes are not path separators here";
    }
    return NULL;
}

/* Keeps fd when it is a regular file; else closes it, says why, -1. */
static int regular(int fd, const char **why)
{
    if (fd < 0)
        return fd;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        *why = strerror(e);
        return -1;
    }
    if (S_ISREG(sb.st_mode))
        return fd;
    close(fd);
    *why = S_ISFIFO(sb.st_mode)                          ? "it is a FIFO, not a regular file"
           : S_ISDIR(sb.st_mode)                         ? "it is a directory, not a regular file"
           : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "it is a device, not a regular file"
           : S_ISSOCK(sb.st_mode)                        ? "it is a socket, not a regular file"
                                                         : "it is not a regular file";
    errno = EINVAL;
    return -1;
}

int bp_safe_path(const char *path, const char **why)
{
    int fd = open(path, READ_FLAGS);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    return regular(fd, why);
}

/* Without openat2: one component at a time, links refused. */
static int walk(int dirfd, const char *rel, const char **why)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof buf) {
        errno = ENAMETOOLONG;
        *why = "the name is too long";
        return -1;
    }
    memcpy(buf, rel, n + 1);
    int fd = dup(dirfd);
    char *save = NULL;
    for (char *c = strtok_r(buf, "/", &save); c && fd >= 0;) {
        char *next = strtok_r(NULL, "/", &save);
        int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (next ? O_DIRECTORY : O_NONBLOCK);
        int nfd = openat(fd, c, flags);
        int e = errno;
        close(fd);
        errno = e;
        if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR))
            *why = "it is or passes through a symbolic link (links are refused "
                   "on this kernel: it has no openat2)";
        fd = nfd;
        c = next;
    }
    return fd;
}

/* rel beneath dirfd, whatever it is (the caller checks). */
static int beneath(int dirfd, const char *rel, const char **why)
{
    *why = bp_safe_name_rule(rel);
    if (*why) {
        errno = EACCES;
        return -1;
    }
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = READ_FLAGS;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) {
        if (fd < 0 && errno == EXDEV)
            *why = "it leaves the directory through a symbolic link";
        else if (fd < 0)
            *why = strerror(errno);
        return fd;
    }
#endif
    int fd2 = walk(dirfd, rel, why);
    if (fd2 < 0 && !*why)
        *why = strerror(errno);
    return fd2;
}

/* The length of the repository directory's path in real, when real is
 * .../models--ORG--NAME/snapshots/REV (a Hugging Face hub cache), else 0. */
static size_t hub_repo(const char *real)
{
    const char *rev = strrchr(real, '/');
    if (!rev || rev == real || !rev[1])
        return 0;
    const char *snap = rev - 1;
    while (snap > real && *snap != '/')
        snap--;
    if (*snap != '/' || (size_t)(rev - snap) != 10 || strncmp(snap, "/snapshots", 10) != 0)
        return 0;
    const char *repo = snap - 1;
    while (repo > real && *repo != '/')
        repo--;
    if (*repo != '/')
        return 0;
    repo++;
    static const char *const kinds[] = {"models--", "datasets--", "spaces--"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strncmp(repo, kinds[k], strlen(kinds[k])) == 0 && repo + strlen(kinds[k]) < snap)
            return (size_t)(snap - real);
    return 0;
}

int bp_safe_dir(const char *dir, bp_safe_dir_t *d, const char **why)
{
    d->prefix[0] = '\0';
    char *real = realpath(dir, NULL);
    size_t repo = real ? hub_repo(real) : 0;
    if (repo) {
        snprintf(d->prefix, sizeof d->prefix, "%s/", real + repo + 1);
        real[repo] = '\0';
        d->fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else {
        d->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (d->fd < 0)
        *why = strerror(errno);
    free(real);
    return d->fd;
}

void bp_safe_dir_close(bp_safe_dir_t *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}

int bp_safe_in(const bp_safe_dir_t *d, const char *rel, const char **why)
{
    if ((*why = bp_safe_name_rule(rel))) {
        errno = EACCES;
        return -1;
    }
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s%s", d->prefix, rel) >= (int)sizeof full) {
        errno = ENAMETOOLONG;
        *why = "the name is too long";
        return -1;
    }
    return regular(beneath(d->fd, full, why), why);
}

int bp_safe_in_dir(const char *dir, const char *rel, const char **why)
{
    bp_safe_dir_t d;
    if (bp_safe_dir(dir, &d, why) < 0)
        return -1;
    int fd = bp_safe_in(&d, rel, why);
    int e = errno;
    bp_safe_dir_close(&d);
    errno = e;
    return fd;
}

bool bp_safe_dirname(const char *file, char *out, size_t n)
{
    const char *slash = strrchr(file, '/');
    int len = !slash ? snprintf(out, n, ".")
              : slash == file ? snprintf(out, n, "/")
                              : snprintf(out, n, "%.*s", (int)(slash - file), file);
    return len >= 0 && (size_t)len < n;
}

static FILE *stream(int fd, const char **why)
{
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        *why = strerror(errno);
        close(fd);
    }
    return f;
}

FILE *bp_safe_fopen(const char *path, const char **why)
{
    return stream(bp_safe_path(path, why), why);
}

FILE *bp_safe_fopen_in(const char *dir, const char *rel, const char **why)
{
    return stream(bp_safe_in_dir(dir, rel, why), why);
}
