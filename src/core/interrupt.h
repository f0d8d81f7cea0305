/* Clean interruption.  SIGINT, SIGTERM and SIGHUP end the process through
 * one watcher thread: it removes every temporary file and staging
 * directory registered here, says "interrupted" on stderr and exits with
 * status 128 + the signal's number, as a shell reports a process the
 * signal killed (SIGINT 130, SIGTERM 143, SIGHUP 129), so that an
 * interrupted command leaves what it writes as it was before (or
 * complete), never half-written.  A file that becomes
 * final (renamed into place) is unregistered under the same lock as the
 * rename (bp_intr_lock), so the watcher sees it either before the rename
 * (and removes the temporary) or after (and leaves the result). */
#ifndef BP_INTERRUPT_H
#define BP_INTERRUPT_H

#include <stdbool.h>

/* Installs the handlers and starts the watcher (once; main calls it). */
void bp_intr_install(void);
/* Registers a temporary file, or (dir) a staging directory removed with
 * everything in it; false when the table is full. */
bool bp_intr_add(const char *path, bool dir);
/* mkstemp(tmpl), the file registered in the same step; -1 on failure
 * (errno set). */
int bp_intr_mkstemp(char *tmpl);
/* bp_intr_add under bp_intr_lock. */
bool bp_intr_add_locked(const char *path, bool dir);
/* rm -rf path (no symbolic link followed). */
void bp_intr_rmtree(const char *path);
/* Unregisters path. */
void bp_intr_remove(const char *path);
/* Holds the watcher off while a temporary becomes final: rename under the
 * lock, then bp_intr_remove_locked, then unlock. */
void bp_intr_lock(void);
void bp_intr_remove_locked(const char *path);
void bp_intr_unlock(void);

#endif
