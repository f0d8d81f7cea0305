/* bitprobe run's parts: the main loop (cmd_run.c) and the golden
 * comparison (cmd_run_golden.c), which keeps the goldens it loads in a
 * cache the run owns. */
#ifndef BP_CMD_RUN_H
#define BP_CMD_RUN_H

#include <pthread.h>

#include "runopts.h"
#include "st.h"

struct bp_timing;

/* Loaded goldens, one per (probe, backend slot): a backend's lane loads
 * the golden of the probe it runs while the consumer may still compare an
 * earlier probe, so entries live until the consumer is done with their
 * probe.  The list is shared under the lock; an entry is written only by
 * the one that loads it, before it is listed. */
typedef struct bp_run_goldens {
    pthread_mutex_t lock;
    struct bp_run_gentry *list;
    /* the goldens to bless, for the run's hints: probe x backend */
    struct bp_run_gneed *need;
    size_t nneed, capneed;
} bp_run_goldens_t;

void bp_run_goldens_init(bp_run_goldens_t *g);
/* Frees every golden still loaded. */
void bp_run_goldens_free(bp_run_goldens_t *g);
/* Loads backend slot k's golden of p (blessed for key) ahead of
 * bp_run_goldens_compare; safe on backend k's lane while other threads
 * load or compare theirs. */
void bp_run_goldens_prepare(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                            int k, const char *key, struct bp_timing *t, const char *be_name);
/* Compares output oi of p (dtype dt) on each backend with its golden; a
 * missing golden is a result (an error unless --missing=skip), and so is
 * an unusable one.  Returns the exit status (0: go on). */
int bp_run_goldens_compare(bp_run_goldens_t *g, const bp_run_opts_t *o, const bp_probe_t *p,
                           size_t oi, bp_dtype_t dt, bp_backend_t *const *bes,
                           bp_buf_t *const *bufs, int n, bp_report_t *rep);
/* Frees the goldens of p (run is done with it). */
void bp_run_goldens_done(bp_run_goldens_t *g, const bp_probe_t *p);
/* The hints that bless what was missing or unusable (counting results
 * only), once for all the probes that need the same command: "bless the
 * missing goldens with 'bitprobe bless a b --device cpu,oracle'".  False
 * when out of memory. */
bool bp_run_goldens_hints(const bp_run_goldens_t *g, const bp_run_opts_t *o,
                          bp_report_t *rep);

#endif
