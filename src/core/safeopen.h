/* Opening a file named by untrusted input (a checkpoint's index, a saved
 * run's manifest) so that it cannot lead outside a directory: the name must
 * be relative, without "..", and its resolution may not leave the
 * directory through a symbolic link either.  Linux's openat2 with
 * RESOLVE_BENEATH settles that in the kernel; where it is missing, every
 * component is opened with O_NOFOLLOW and symbolic links are refused
 * outright. */
#ifndef BP_SAFEOPEN_H
#define BP_SAFEOPEN_H

#include "error.h"

/* Why a name is refused, or NULL when it is a plain relative path. */
const char *bp_safe_name_rule(const char *rel);
/* Opens rel beneath the directory open as dirfd, read-only and
 * non-blocking (the caller checks that it is a regular file); on failure
 * *why says the rule ("it leaves the directory through a symbolic link")
 * or the system's reason, and errno is kept. */
int bp_open_beneath(int dirfd, const char *rel, const char **why);

#endif
