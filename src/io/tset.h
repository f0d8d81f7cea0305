/* Tensor sets: what diff compares, opened without reading their data.
 *
 * A set is one of
 *  - a saved run (a directory with manifest.json, `run --save`): its
 *    containers' tensors, named "<probe>/<key>/<output>.<dtype>" and
 *    carrying that meaning (probe, backend key and name, output, dtype) so
 *    that runs can be paired by it (tpair.h);
 *  - a Hugging Face sharded checkpoint: a "*.safetensors.index.json" (or
 *    the directory holding exactly one) whose "weight_map" names each
 *    tensor's shard, read as one set across the shards;
 *  - one tensor file: safetensors (plain or gzip), .npy (one tensor, named
 *    after the file), .npz (a zip of .npy members, named after them).
 * The kind is told by content, never by the file name; a file of another
 * kind is refused with what it looks like ("JSON, not safetensors").
 *
 * Only headers are read here.  Each tensor says where its bytes are (a
 * file of the set and an offset in that file's content); tread.h reads
 * them.  Every file is opened once, safely (a name from a manifest or an
 * index is opened beneath its directory: safeopen.h), and stays open
 * while the set is.
 *
 * Hostile input: the checkpoint index and the zip directory are checked
 * before any shard or member is used; errors are BP_EINPUT naming the file
 * and the rule ("cannot read 'ck/model.safetensors.index.json': shard
 * '../x.safetensors' of tensor 'w': '..' leaves the directory"). */
#ifndef BP_TSET_H
#define BP_TSET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "tread.h"

/* Caps on what an index may name. */
#define BP_INDEX_MAX_BYTES (64u << 20)
#define BP_INDEX_MAX_SHARDS 100000

typedef enum { BP_TSET_BUNDLE, BP_TSET_CHECKPOINT, BP_TSET_FILE } bp_tset_kind_t;

typedef struct {
    char *name;         /* unique in the set */
    char dtype[32];     /* as the file spells it: "F32", "F4", "<f4" */
    bool known;         /* dt is valid (else: not comparable) */
    bp_dtype_t dt;
    int ndim;
    int64_t shape[BP_MAXDIM];
    uint64_t nbytes;
    size_t file;        /* index into the set's files */
    uint64_t off;       /* of the data in that file's content */
    bool has_crc;
    uint32_t crc;       /* zlib CRC-32 of the data, when the file gives one */
    /* saved runs: what it is (else NULL), and the dtype of the run that
     * made it (the name's suffix: "t_f32.bf16"), when it names one */
    char *probe, *key, *backend, *output;
    bool in_run;
    bp_dtype_t run_dtype;
} bp_tent_t;

typedef struct {
    char *label;        /* "cannot read '<path>'" */
    int fd;
    bool borrowed;      /* fd is another file's (.npz members share the zip's) */
    bp_tsrc_t src;
    bool safetensors;   /* a stream's length is checked against: */
    uint64_t hlen, data_len;
    json_t *meta;       /* safetensors __metadata__, or NULL */
    /* a zip member: the CRC-32 its directory gives for all of its bytes, and
     * that of its .npy header (the tensor's own CRC, of its data, follows
     * from the two: bp_tset_add_npy) */
    bool zip_member;
    uint32_t zip_crc, head_crc;
} bp_tfile_t;

typedef struct {
    char *path;         /* as the user named it */
    bp_tset_kind_t kind;
    bp_tent_t *t;
    size_t n, cap;
    bp_tfile_t *f;
    size_t nf, capf;
    json_t *manifest;   /* saved runs */
    size_t *byname;     /* indices of t sorted by name */
} bp_tset_t;

typedef struct {
    bool as_bf16;       /* .npy 16-bit integers are bf16 bits */
} bp_tset_opts_t;

/* What a directory is: a saved run, a checkpoint, or neither (0, and diff
 * walks it as diff -r does). */
typedef enum { BP_DIR_PLAIN, BP_DIR_BUNDLE, BP_DIR_CHECKPOINT } bp_dir_kind_t;
bp_status bp_tset_dir_kind(const char *dir, bp_dir_kind_t *out, bp_error_t *err);

/* The index's entries and shards (its rules checked: ckpt_index.h). */
struct bp_ckpt_index;
bp_status bp_tset_index_shards(const char *index, struct bp_ckpt_index *out,
                               bp_error_t *err);
/* Whether a file name is a checkpoint index's ("*.safetensors.index.json"). */
bool bp_tset_is_index(const char *path);
/* The one such index in dir: 1 and its path, 0 when there is none, -1
 * (err set) when there are several. */
int bp_tset_find_index(const char *dir, char *out, size_t n, bp_error_t *err);

/* Opens path (a directory that is a saved run or checkpoint, or a file). */
bp_status bp_tset_open(const char *path, const bp_tset_opts_t *o, bp_tset_t *out,
                       bp_error_t *err);
void bp_tset_free(bp_tset_t *s);
/* The tensor named name, or NULL. */
const bp_tent_t *bp_tset_find(const bp_tset_t *s, const char *name);
/* The tensor's source, for tread. */
const bp_tfile_t *bp_tset_file(const bp_tset_t *s, const bp_tent_t *t);
/* Reads a whole tensor into memory (the in-memory path; tests). */
bp_status bp_tset_read_tensor(const bp_tset_t *s, const bp_tent_t *t, bp_buf_t *out,
                              bp_error_t *err);
/* A tensor's bytes gave CRC-32 `computed`, not the one its file gives: the
 * error, in the file's terms (a safetensors tensor's CRC, a zip member's). */
bp_status bp_tset_crc_error(const bp_tfile_t *f, const bp_tent_t *t, uint32_t computed,
                            bp_error_t *err);
/* Checks a source's end once all of its content was read through r: a
 * stream's own integrity, and for safetensors its length against the
 * header's claim, in bp_st_read's words. */
bp_status bp_tset_file_end(const bp_tfile_t *f, bp_tread_t *r, bp_error_t *err);

#endif
