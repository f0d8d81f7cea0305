/* How every reader opens a file: the one helper, so that no reader can be
 * led outside a directory, hung on a FIFO or a device, or made to read a
 * foreign file into its messages.
 *
 *   - Only regular files: opened O_NONBLOCK (a FIFO or a device is not
 *     waited on) and refused by fstat when they are anything else.
 *   - A name from inside a file or a directory bitprobe reads (a saved
 *     run's manifest.json and the files it lists, a checkpoint's shards, a
 *     ledger's captures, a probe's tensors beside it) is opened beneath the
 *     directory it is relative to: relative,
 *     without "..", and its resolution may not leave that root through a
 *     symbolic link.  Linux's openat2 with RESOLVE_BENEATH settles that in
 *     the kernel; where it is missing, every component is opened with
 *     O_NOFOLLOW and symbolic links are refused outright.
 *   - The root of a directory inside a Hugging Face hub cache
 *     (.../models--ORG--NAME/snapshots/REV, likewise datasets-- and
 *     spaces--) is the repository's directory: its snapshots are symbolic
 *     links into its blobs (../../blobs/SHA), which is the format, not an
 *     escape; a link leaving the repository's directory is still refused.
 *   - A path the user named (an argument, and the probe files of the
 *     probe directory the user named) is opened as given, links followed:
 *     it is the user's choice. */
#ifndef BP_SAFEOPEN_H
#define BP_SAFEOPEN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Why a name is refused, or NULL when it is a plain relative path. */
const char *bp_safe_name_rule(const char *rel);

/* A path the user named: a regular file opened read-only, non-blocking,
 * close-on-exec; -1 with *why (the rule, "it is a FIFO, not a regular
 * file", or the system's reason) and errno kept. */
int bp_safe_path(const char *path, const char **why);

/* A root for names from inside files: the directory open, and the prefix
 * that leads from it to the directory named (empty but in a hub cache). */
typedef struct {
    int fd;
    char prefix[PATH_MAX];
} bp_safe_dir_t;

/* Opens dir as a root (see above); -1 with *why. */
int bp_safe_dir(const char *dir, bp_safe_dir_t *d, const char **why);
void bp_safe_dir_close(bp_safe_dir_t *d);
/* rel (a name from inside a file) beneath d: a regular file, as
 * bp_safe_path opens it; -1 with *why. */
int bp_safe_in(const bp_safe_dir_t *d, const char *rel, const char **why);
/* The same without a root kept open: rel beneath dir. */
int bp_safe_in_dir(const char *dir, const char *rel, const char **why);
/* The same as streams to read ("rb"): NULL with *why. */
FILE *bp_safe_fopen(const char *path, const char **why);
FILE *bp_safe_fopen_in(const char *dir, const char *rel, const char **why);
/* The directory of file (".", "/" or its path up to the last '/'), where
 * the names it holds are rooted; false when it does not fit n bytes. */
bool bp_safe_dirname(const char *file, char *out, size_t n);

#endif
