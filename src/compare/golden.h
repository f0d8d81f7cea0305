/* The golden store: golden/<probe>/<backend-key>.safetensors.gz holds one
 * tensor per (output, dtype), named "<output>.<dtype>", with metadata: tool
 * version, probe name and hash, backend key, and the environment
 * fingerprint of the machine that blessed it.  Goldens are replaced only
 * through bp_golden_store (atomic, under the golden's lock). */
#ifndef BP_GOLDEN_H
#define BP_GOLDEN_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "probe.h"
#include "st.h"

/* root/<probe>/<key>.safetensors.gz */
bp_status bp_golden_path(const char *root, const char *probe, const char *key,
                         char *out, size_t n, bp_error_t *err);
/* "<output>.<dtype>" */
void bp_golden_tensor_name(const char *output, bp_dtype_t dt, char *out, size_t n);

/* Loads and verifies the golden of p for key.  *missing is set (and
 * BP_EINPUT returned with a message) when there is no such file.  A golden
 * blessed from another definition of the probe (hash differs) is an error
 * naming the probe. */
bp_status bp_golden_load(const char *root, const bp_probe_t *p, const char *key,
                         bp_st_file_t *out, bool *missing, bp_error_t *err);
/* The same without the definition check: the golden as it is (bless
 * compares old and new contents even when the probe changed). */
bp_status bp_golden_read(const char *root, const bp_probe_t *p, const char *key,
                         bp_st_file_t *out, bool *missing, bp_error_t *err);
/* Whether f was blessed from p's current definition (same hash). */
bool bp_golden_same_definition(const bp_st_file_t *f, const bp_probe_t *p);
/* Sets the metadata of a golden for p and key (fingerprint may be NULL). */
bp_status bp_golden_set_meta(bp_st_file_t *f, const bp_probe_t *p, const char *key,
                             json_t *fingerprint, bp_error_t *err);
/* Writes f gzip'd to path atomically; the caller holds path's lock. */
bp_status bp_golden_store(const char *path, const bp_st_file_t *f, bp_error_t *err);

#endif
