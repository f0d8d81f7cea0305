/* The op ledger: a PyTorch program's ATen ops as python/bitprobe_torch.py
 * recorded them (docs/ledger-format.md), read as hostile input.
 *
 * A ledger is JSON Lines: a header, one record per op, an end line with
 * the counts.  The reader checks every rule of the format (version, hash
 * name, seq numbering, members and types, dtype names, shapes, nbytes
 * against shape x dtype without overflow, {"t": K} references, the end
 * counts) and fails with the file, the line, the record and the byte
 * offset of the line.  Memory grows with the records, not with the
 * lines' claims: a line is at most BP_LEDGER_MAX_LINE bytes (the header
 * line BP_LEDGER_MAX_HEADER), a file at most BP_LEDGER_MAX_FILE, and the
 * JSON of a line takes memory bounded by its length (jsonread.h).
 *
 * Captured tensors live in a safetensors file next to the ledger; they
 * are read (and each checked against its recorded dtype, shape and hash)
 * only when asked for. */
#ifndef BP_LEDGER_H
#define BP_LEDGER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "st.h"

#define BP_LEDGER_FORMAT "bitprobe-ledger"
#define BP_LEDGER_VERSION 1
#define BP_LEDGER_HASH "fmix64-sum/1"
#define BP_LEDGER_MAX_LINE ((size_t)16 << 20)
#define BP_LEDGER_MAX_HEADER ((size_t)1 << 20) /* the header line (the recorder
                                                   writes a few KiB) */
#define BP_LEDGER_MAX_FILE ((uint64_t)4 << 30)
#define BP_LEDGER_MAXDIM 32
#define BP_LEDGER_MAX_NAME 256

typedef struct bp_ledger_tensor {
    const char *dtype;   /* safetensors name: "F32", "BF16", "BOOL", ... */
    const char *device;  /* "cpu", "cuda:0" */
    const char *why;     /* why there is no hash, or NULL */
    const char *capture; /* name in the captures file, or NULL */
    const int64_t *shape;
    int ndim;
    bool has_hash;
    uint64_t hash;
    uint64_t nbytes;
} bp_ledger_tensor_t;

typedef struct bp_ledger_op {
    const char *op;      /* "aten::div.Tensor" */
    const char *module;  /* "layers.0.attn", "" outside any module */
    const char *call;    /* {"args":[...],"kwargs":{...}} as compact JSON */
    bp_ledger_tensor_t *in, *out;
    uint32_t nin, nout;
    uint64_t line;       /* 1-based line of the record */
    uint64_t offset;     /* byte offset of that line */
} bp_ledger_op_t;

typedef struct bp_ledger {
    char *path;
    json_t *header;      /* line 1, whole */
    json_t *end;         /* the end line's object */
    bp_ledger_op_t *ops; /* ops[i] is record seq i */
    size_t n;
    size_t ncaptures;    /* distinct capture names used */
    struct bp_ledger_mem *mem; /* strings, shapes and tensors (ledger.c) */
} bp_ledger_t;

/* Reads and checks the ledger at path. */
bp_status bp_ledger_read(const char *path, bp_ledger_t *out, bp_error_t *err);
/* The same from an open stream; name labels the messages. */
bp_status bp_ledger_read_stream(FILE *f, const char *name, bp_ledger_t *out, bp_error_t *err);
void bp_ledger_free(bp_ledger_t *l);

/* Whether path names a ledger (it ends in ".ledger", or its first line
 * names the format): how diff tells a ledger from a tensor file. */
bool bp_ledger_sniff(const char *path);

/* Bytes per element of a ledger dtype name; false when unknown. */
bool bp_ledger_dtype_size(const char *name, size_t *size);

/* The ledger hash (fmix64-sum/1) of nbytes bytes. */
uint64_t bp_ledger_hash(const void *data, size_t nbytes);

/* The captures file's path (next to the ledger), or an error when the
 * ledger names none. */
bp_status bp_ledger_captures_path(const bp_ledger_t *l, char *out, size_t n, bp_error_t *err);
/* Reads the captures file and checks every tensor the records name: it is
 * there, with the recorded dtype and shape, and its bytes hash to the
 * recorded hash.  f receives the file (bp_st_free). */
bp_status bp_ledger_read_captures(const bp_ledger_t *l, bp_st_file_t *f, bp_error_t *err);

/* Hashes for the ledger modules' tables (not the tensor hash): FNV-1a of
 * a string, and a 64-bit combiner. */
uint64_t bp_ledger_str_hash(const char *s);
uint64_t bp_ledger_mix(uint64_t h, uint64_t v);

/* A header member as a string, or NULL. */
const char *bp_ledger_header_str(const bp_ledger_t *l, const char *key);

#endif
