/* The golden store: golden/<probe>/<backend-key>.safetensors.gz holds one
 * tensor per (output, dtype), named "<output>.<dtype>", with metadata: tool
 * version, probe name and hash, backend key, and the environment
 * fingerprint of the machine that blessed it.  A probe run under --param
 * overrides has goldens of its own, "<backend-key>+<overrides>", beside the
 * probe's: blessing under an override never replaces the probe's goldens.
 * Goldens are replaced only through bp_golden_lock and bp_golden_store
 * (atomic, under the golden's lock), which refuse, whoever calls them, any
 * path under bitprobe's installation (bp_golden_dest_check): the installed
 * probes and goldens are read, never written. */
#ifndef BP_GOLDEN_H
#define BP_GOLDEN_H

#include <jansson.h>
#include <stdbool.h>

#include "atomicfile.h"
#include "error.h"
#include "probe.h"
#include "st.h"

/* root/<probe>/<key>.safetensors.gz */
bp_status bp_golden_path(const char *root, const char *probe, const char *key,
                         char *out, size_t n, bp_error_t *err);
/* The key p's goldens for backend key be_key are stored under: be_key, or
 * "<be_key>+<overrides>" when p runs under --param overrides (characters
 * other than letters, digits and ".-_=," as '_'; past 96 characters the
 * probe's hash stands for them). */
void bp_golden_key(const bp_probe_t *p, const char *be_key, char *out, size_t n);
/* Whether path may be written as a golden (or its lock): BP_EINPUT naming
 * it when it lies under bitprobe's installation prefix (BP_PREFIX; where
 * the prefix holds the home directory, or is "/", under the installed data
 * BP_DATADIR only).  The path's nearest existing ancestor is resolved, so
 * that a directory not made yet is judged where it would be made. */
bp_status bp_golden_dest_check(const char *path, bp_error_t *err);
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
/* Takes path's lock, after bp_golden_dest_check. */
bp_status bp_golden_lock(const char *path, bp_lock_t *lk, bp_error_t *err);
/* Writes f gzip'd to path atomically, after bp_golden_dest_check; the
 * caller holds path's lock. */
bp_status bp_golden_store(const char *path, const bp_st_file_t *f, bp_error_t *err);

#endif
