/* Crash-safe replacement of a file: the new content goes to a temporary file
 * in the same directory, is fsync'd, renamed over the target, and the
 * directory is fsync'd; all under an exclusive lock on "<target>.lock"
 * (flock: released by the kernel if the process dies).  The lock file is
 * removed by its holder before it lets go, so that none stays beside the
 * target (a golden directory under version control holds goldens only); a
 * waiter that then holds a lock file no longer in place opens the new one
 * (the classic remove-under-lock protocol: no two holders at once).
 * Readers see the old content or the new, never a mix or a truncated file;
 * on any failure the old file is untouched and the temporary removed.
 *
 * For crash tests only: with BP_TEST_SLOW_WRITE=<usec> in the environment
 * (1 to 1000000), bp_atomic_write stages the content in memory, copies it
 * into the temporary file in 1 KiB chunks with a pause of usec after each,
 * and pauses again before the rename and before the directory fsync, so
 * that a test can kill the process at any step.  The bytes written and
 * the steps taken are the same; unset (or 0, or not a number) changes
 * nothing. */
#ifndef BP_ATOMICFILE_H
#define BP_ATOMICFILE_H

#include <stddef.h>

#include "error.h"

typedef struct bp_lock {
    int fd;
    char path[4096]; /* the lock file, removed at unlock */
} bp_lock_t;

/* Takes the exclusive lock of target (blocking); creates parent dirs.  An
 * interruption removes the lock file (interrupt.h) before the process
 * ends; a SIGKILL leaves it, and the next holder removes it. */
bp_status bp_atomic_lock(const char *target, bp_lock_t *lk, bp_error_t *err);
void bp_atomic_unlock(bp_lock_t *lk);
/* Writes the content through fill(fd) into a temporary file next to
 * target, then replaces target; the caller holds target's lock. */
typedef bp_status (*bp_atomic_fill_fn)(int fd, void *ctx, bp_error_t *err);
bp_status bp_atomic_write(const char *target, bp_atomic_fill_fn fill, void *ctx,
                          bp_error_t *err);
/* The same with a buffer as the content. */
bp_status bp_atomic_replace(const char *target, const void *data, size_t len,
                            bp_error_t *err);
/* mkdir -p of the directory part of path. */
bp_status bp_mkdir_parents(const char *path, bp_error_t *err);

#endif
