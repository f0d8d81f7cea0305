/* PLACEHOLDER: replaced by the backend work. */
#include "backend.h"
bp_status bp_be_oracle_open(const bp_backend_opts_t *o, bp_backend_t **out, bp_error_t *err) { (void)o; *out = NULL; return bp_error_set(err, BP_EUNAVAIL, "backend 'oracle' not built yet"); }
