/* Tensor container: safetensors files, plain or gzip-compressed.
 *
 * Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON
 * object, then the raw little-endian data of every tensor, back to back.
 * Gzip is recognised by its magic bytes (1f 8b), never by the file name.
 *
 * The reader enforces, in this order, and fails with BP_EINPUT and
 * "<label>: <rule> at byte <offset>" on the first violation:
 *   - at least 8 bytes; N <= BP_ST_MAX_HEADER (100 MB, as the reference
 *     reader) and 8 + N within the file;
 *   - the header starts with '{' (no leading whitespace), is valid UTF-8
 *     and valid JSON (trailing spaces allowed: writers pad with them);
 *   - no duplicate keys; "__metadata__", when present, is an object of
 *     strings; every other key is a tensor whose value is an object with
 *     exactly "dtype" (F64 F32 BF16 F16 I64 I32), "shape" (at most
 *     BP_MAXDIM non-negative integers) and "data_offsets" ([begin, end],
 *     non-negative integers, end >= begin);
 *   - end - begin == numel * element size, computed with overflow checks;
 *     no tensor above BP_BUF_MAX_BYTES;
 *   - sorted by offset, tensors are contiguous from 0: no hole, no overlap;
 *   - the data section is exactly as long as the last end: no missing and
 *     no trailing bytes;
 *   - bitprobe's own metadata "crc32.<tensor>" = "0x%08x" (zlib CRC-32 of
 *     the tensor's raw bytes, lower-case hex) matches the data; a CRC key
 *     naming no tensor is an error, and once one tensor carries a CRC every
 *     tensor must (a bit flip in a name cannot hide a tensor from the
 *     check);
 *   - the header's own CRC, "crc32.__header__" = "0x%08x": zlib CRC-32 of
 *     the N header bytes (padding included) with that value's 8 hex digits
 *     read as '0', written without escapes.  It is required once any
 *     tensor carries a CRC, and then every tensor must carry one.  With
 *     the tensor CRCs it makes every bit of a plain file count: a flipped
 *     bit in the length field breaks the layout, one in the header breaks
 *     its CRC (or, in that CRC's own key, the rule that CRC'd tensors need
 *     it), one in the data breaks a tensor's CRC.
 * Offsets: header rules point into the header (8 + position of the
 * offending key or value), data rules into the data (8 + N + begin for a
 * CRC mismatch, the first missing or extra byte for a length mismatch).
 * For gzip input these are offsets in the inflated stream, and the message
 * says so; gzip damage itself (corrupt, truncated, trailing garbage) is
 * reported at its compressed byte offset.
 *
 * Resource limits: the header is at most 100 MB; the inflated stream is at
 * most BP_ST_MAX_INFLATED and never more than the 8 + N + end bytes its own
 * header claims: inflation stops at the first byte beyond, so a gzip bomb
 * costs the time to inflate that many bytes.  Data is inflated or read
 * straight into the tensor buffers, without a second copy of the file.
 * Input of known length (memory, a regular file) gets its buffers at
 * once, after the claimed sizes are checked against that length; input of
 * unknown length (gzip, a pipe) gets them as its bytes arrive, so memory
 * follows the bytes actually received, not the sizes a header claims.
 *
 * The writer is deterministic: the same tensors and metadata give the same
 * bytes.  Tensor data keeps insertion order; JSON keys are sorted; the
 * header is padded with spaces to a multiple of 8 bytes (as the reference
 * writer does, so the data stays aligned); "crc32.<tensor>" entries are
 * recomputed for every tensor, stale ones dropped, and the header CRC
 * added (so "__header__" cannot name a tensor).  Gzip output is level 6
 * with a fixed gzip header (mtime 0, no name, OS 255) carrying a header
 * CRC, so that the gzip header is checked too.  A flipped bit in the
 * compressed bytes then breaks inflation or the CRC-32 of the inflated
 * bytes, or leaves the inflated bytes identical (deflate has many
 * encodings of one content, and the final byte's padding bits are not
 * read): the content, all that is ever used, cannot change unnoticed. */
#ifndef BP_ST_H
#define BP_ST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "buf.h"
#include "error.h"

#define BP_ST_MAX_HEADER 100000000u
#define BP_ST_MAX_INFLATED ((uint64_t)8 << 30)
#define BP_ST_CRC_PREFIX "crc32."
/* The header's own CRC (see above); "__header__" names no tensor. */
#define BP_ST_HEADER_CRC "crc32.__header__"

typedef struct {
    char *name;
    bp_buf_t buf;
} bp_st_tensor_t;

typedef struct {
    bp_st_tensor_t *t; /* in data order (empty tensors at one offset: by name) */
    size_t n, cap;
    json_t *meta;      /* __metadata__: an object of strings, or NULL */
} bp_st_file_t;

/* An empty file (no tensors, no metadata); equivalent to zeroing it. */
void bp_st_init(bp_st_file_t *f);

/* Reads a plain or gzip'd safetensors file; messages start "cannot read
 * '<path>': ".  out need not be initialised; on failure it is empty.  The
 * file is opened as safeopen.h says: path as the user named it; with
 * bp_st_read_in, rel (a name from inside a file) beneath dir. */
bp_status bp_st_read(const char *path, bp_st_file_t *out, bp_error_t *err);
bp_status bp_st_read_in(const char *dir, const char *rel, bp_st_file_t *out,
                        bp_error_t *err);
/* The same from memory (plain or gzip, by magic); label names the input
 * in messages. */
bp_status bp_st_parse(const void *data, size_t len, const char *label,
                      bp_st_file_t *out, bp_error_t *err);

/* The plain (uncompressed) bytes of f, malloc'd into *out. */
bp_status bp_st_encode(const bp_st_file_t *f, void **out, size_t *len,
                       bp_error_t *err);
/* Writes f to fd, gzip'd or plain; does not fsync or close fd. */
bp_status bp_st_write_fd(int fd, const bp_st_file_t *f, bool gzip,
                         bp_error_t *err);
/* Creates or truncates path and writes f (not atomic: see golden.c). */
bp_status bp_st_write(const char *path, const bp_st_file_t *f, bool gzip,
                      bp_error_t *err);

/* Appends a copy of b (host data) under name; names are unique UTF-8,
 * "__metadata__" is reserved. */
bp_status bp_st_add(bp_st_file_t *f, const char *name, const bp_buf_t *b,
                    bp_error_t *err);
/* Sets a metadata string (copied), creating the metadata object if needed. */
bp_status bp_st_set_meta(bp_st_file_t *f, const char *key, const char *value,
                         bp_error_t *err);
/* The metadata string for key, or NULL. */
const char *bp_st_get_meta(const bp_st_file_t *f, const char *key);
const bp_st_tensor_t *bp_st_find(const bp_st_file_t *f, const char *name);
/* Frees everything f owns and leaves it empty. */
void bp_st_free(bp_st_file_t *f);

/* ---- layouts: where the tensors are, without their data ----
 * For readers that stream the data themselves (diff, tset.h).  The same
 * rules as bp_st_read for everything the header says, in the same words;
 * with allow_unknown a dtype bitprobe does not read is no error: its
 * entry has known == false, its dtype string, and data_offsets as given
 * (only the layout rules apply to it).  The data's own rules (CRCs, a
 * stream's length) are the streaming reader's to check. */
typedef struct {
    char *name;
    char dtype[24];      /* as the header spells it (quoted, cut to fit) */
    bool known;          /* dt is valid */
    bp_dtype_t dt;
    int ndim;
    int64_t shape[BP_MAXDIM];
    uint64_t begin, end; /* in the data section */
    bool has_crc;
    uint32_t crc;
} bp_st_entry_t;

typedef struct {
    bp_st_entry_t *e;    /* in data order */
    size_t n;
    json_t *meta;        /* __metadata__, or NULL */
    uint64_t data_start; /* 8 + header length */
    uint64_t data_len;   /* the last tensor's end */
} bp_st_layout_t;

/* The length field's rules for the first 8 bytes (total: the input's
 * length, UINT64_MAX when unknown; inflated: offsets are in the inflated
 * stream). */
bp_status bp_st_head_len(const unsigned char len8[8], uint64_t total,
                         const char *label, bool inflated, uint64_t *hlen,
                         bp_error_t *err);
/* The header's hlen bytes (following the length field) into out. */
bp_status bp_st_layout_parse(const char *hdr, uint64_t hlen, uint64_t total,
                             const char *label, bool inflated,
                             bool allow_unknown, bp_st_layout_t *out,
                             bp_error_t *err);
void bp_st_layout_free(bp_st_layout_t *l);
/* A stream whose content ends at pos, before the 8 + hlen + data_end
 * bytes its header claims (or, pos beyond that, runs past them): the
 * error bp_st_read gives for it. */
bp_status bp_st_stream_error(const char *label, bool inflated, uint64_t pos,
                             uint64_t hlen, uint64_t data_end, bp_error_t *err);
/* A tensor whose data (at off) does not match its stored CRC. */
bp_status bp_st_crc_error(const char *label, bool inflated, uint64_t off, const char *name,
                          uint32_t stored, uint32_t computed, bp_error_t *err);

/* True when data starts with the gzip magic 1f 8b. */
bool bp_st_is_gzip(const void *data, size_t len);

#endif
