/* Opening names beneath a directory (see safeopen.h). */
#include "safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

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

int bp_open_beneath(int dirfd, const char *rel, const char **why)
{
    *why = bp_safe_name_rule(rel);
    if (*why) {
        errno = EACCES;
        return -1;
    }
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK; /* a FIFO must not block */
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
