/* PLACEHOLDER: replaced by the probe-format work. */
#include "op.h"
const char *bp_op_name(bp_op_kind_t k) { (void)k; return "?"; }
bool bp_op_lookup(const char *name, bp_op_kind_t *k) { (void)name; (void)k; return false; }
const char *bp_form_name(bp_form_t f) { (void)f; return "?"; }
bp_status bp_op_infer(const bp_op_t *op, const bp_meta_t *metas, bp_dtype_t run_dtype, bp_meta_t *out, bp_error_t *err) { (void)op; (void)metas; (void)run_dtype; (void)out; return bp_error_set(err, BP_EINTERNAL, "not built yet"); }
bp_status bp_arange_length(double start, double end, double step, int64_t *n, bp_error_t *err) { (void)start; (void)end; (void)step; (void)n; return bp_error_set(err, BP_EINTERNAL, "not built yet"); }
