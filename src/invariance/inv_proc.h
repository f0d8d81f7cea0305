/* Run-to-run in fresh processes: this binary run again on the same sweep
 * (`bitprobe invariance ... --digests`), each child writing every
 * configuration's digest (bp_inv_digest of its result) to its standard
 * output, and the parent comparing them with its own.
 *
 * The stream is not a file format: a count n (uint64, native byte order:
 * parent and child are one binary on one machine) and then n digests, map
 * by map and band by band in sweep order (bp_inv_map_digests), then the
 * collective maps' cells (bp_coll_map_digests).  The parent
 * knows how many it expects and reads exactly that many bytes. */
#ifndef BP_INV_PROC_H
#define BP_INV_PROC_H

#include <stdio.h>

#include "error.h"
#include "inv_report.h"

/* The child's side: every map's digests on f.  Non-zero when f fails. */
int bp_inv_proc_write_digests(FILE *f, const bp_inv_study_t *s);
/* The parent's side: runs /proc/self/exe with argv (NULL-terminated, argv[0]
 * the command name) in envp (NULL: this process's environment), reads its
 * digests and counts, per configuration (and collective cell), the ones
 * that differ from s's (bp_inv_map_check_digests,
 * bp_coll_map_check_digests).  A child that fails, writes another count or
 * is killed is an error naming its exit. */
bp_status bp_inv_proc_compare(char *const *argv, char *const *envp, bp_inv_study_t *s,
                              bp_error_t *err);

#endif
