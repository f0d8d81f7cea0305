/* PLACEHOLDER: replaced by the probe-format work. */
#include "probe.h"
bp_status bp_probe_load(const char *path, bp_probe_t **out, bp_error_t *err) { (void)path; (void)out; return bp_error_set(err, BP_EINTERNAL, "not built yet"); }
