/* PLACEHOLDER: replaced by the CUDA-backend work. */
#include "backend.h"
bp_status bp_be_cuda_open(const bp_backend_opts_t *o, bp_backend_t **out, bp_error_t *err) { (void)o; *out = NULL; return bp_error_set(err, BP_EUNAVAIL, "backend 'cuda' not built yet"); }
json_t *bp_be_cuda_env(bp_error_t *err) { bp_error_set(err, BP_EUNAVAIL, "not built yet"); return NULL; }
