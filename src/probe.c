/* PLACEHOLDER: replaced by the probe-format work. */
#include "probe.h"
void bp_probe_free(bp_probe_t *p) { (void)p; }
void bp_probe_free_all(bp_probe_t **ps, size_t n) { (void)ps; (void)n; }
int bp_probe_find_buf(const bp_probe_t *p, const char *name) { (void)p; (void)name; return -1; }
bp_status bp_probe_infer(const bp_probe_t *p, bp_dtype_t run_dtype, bp_meta_t *metas, bp_error_t *err) { (void)p; (void)run_dtype; (void)metas; return bp_error_set(err, BP_EINTERNAL, "not built yet"); }
bp_status bp_probe_load_dir(const char *dir, bp_probe_t ***out, size_t *n, bp_error_t *err) { (void)dir; (void)out; (void)n; return bp_error_set(err, BP_EINTERNAL, "not built yet"); }
