/* Saved runs and tensor sets.  A bundle is a directory written by
 * `run --save DIR`: DIR/manifest.json (tool, command, environment,
 * backends, results, and "files": the relative paths of its containers) and
 * DIR/<probe>/<backend-key>.safetensors.gz, one per probe and backend, with
 * one tensor per (buffer, dtype) named "<buffer>.<dtype>".
 * A tensor set is what `diff` compares: the tensors of a bundle (named
 * "<probe>/<key>/<tensor>"), of one safetensors file (plain or gzip), or
 * of one .npy file (named after the file). */
#ifndef BP_BUNDLE_H
#define BP_BUNDLE_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "st.h"

/* Caps on what a manifest may name: hostile bundles stay bounded. */
#define BP_BUNDLE_MAX_FILES 100000
#define BP_BUNDLE_MAX_MANIFEST (64u << 20)

bp_status bp_bundle_save_probe(const char *dir, const char *probe, const char *key,
                               const bp_st_file_t *f, bp_error_t *err);
/* run --save DIR writes its bundle into a staging directory beside DIR
 * (registered for removal on interruption, interrupt.h), which replaces
 * DIR whole once complete: DIR is the bundle before the run or after it,
 * never a mix.  bp_bundle_stage refuses a DIR that exists and holds
 * something other than a bundle (no manifest.json), creates DIR's parents
 * and the staging directory, and puts its path into stage (n bytes). */
bp_status bp_bundle_stage(const char *dir, char *stage, size_t n, bp_error_t *err);
/* Puts the staging directory in DIR's place (the old bundle removed). */
bp_status bp_bundle_commit(const char *dir, const char *stage, bp_error_t *err);
/* Removes what is left of a staging directory (nothing after a commit). */
void bp_bundle_abandon(const char *stage);
/* Writes manifest.json (adding nothing: the caller fills "files"). */
bp_status bp_bundle_save_manifest(const char *dir, json_t *manifest, bp_error_t *err);
/* Reads and validates DIR/manifest.json: an object with "tool":"bitprobe"
 * and "files": relative paths without "..", at most BP_BUNDLE_MAX_FILES. */
bp_status bp_bundle_read_manifest(const char *dir, json_t **out, bp_error_t *err);
/* The same from memory (label names it in messages). */
bp_status bp_bundle_parse_manifest(const char *text, size_t len, const char *label,
                                   json_t **out, bp_error_t *err);

/* Loads a bundle directory, a safetensors file or a .npy file (as_bf16:
 * 16-bit integer arrays are bf16). */
bp_status bp_tset_load(const char *path, bool as_bf16, bp_st_file_t *out, bp_error_t *err);

#endif
