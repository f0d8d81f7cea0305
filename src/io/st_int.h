/* Internals of the safetensors reader shared by st.c (the byte pump,
 * gzip, entry points) and st_header.c (the header's rules).  Not for use
 * outside the st module. */
#ifndef BP_ST_INT_H
#define BP_ST_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "st.h"

/* Stages of the input: length field, header, tensor data, past the end. */
enum { ST_LEN, ST_HDR, ST_DATA, ST_END };

typedef struct {
    uint64_t begin, end, hpos; /* hpos: header offset of data_offsets */
    size_t kpos;               /* header offset of the tensor's key */
    char *name;
    bp_dtype_t dt;
    bool known;                /* dt is a dtype bitprobe reads */
    char dtname[24];           /* the header's dtype string, quoted */
    int ndim;
    int64_t shape[BP_MAXDIM];
    bool has_crc;
    uint32_t crc;
} bp_st_ent_t;

typedef struct {
    const char *label;
    bool inflated;
    uint64_t total;   /* input length when known, else UINT64_MAX */
    uint64_t pos;     /* bytes consumed */
    int stage;
    unsigned char lenbuf[8];
    uint64_t hlen, data_end;
    char *hdr;
    bp_st_ent_t *ents; /* sorted by offset once the header is parsed */
    size_t nents, cur;
    uint64_t fill;    /* bytes of ents[cur] received */
    bool has_hcrc;    /* the header's CRC was present and matched */
    bool lazy;        /* length unknown: buffers grow as bytes arrive */
    uint64_t have;    /* bytes allocated for the current stage's buffer */
    bp_st_file_t *out;
    bp_error_t *err;
    /* Layout only (bp_st_layout_parse): no buffers are allocated, the
     * entries stay in ents and the metadata goes to layout_meta. */
    bool layout_only;
    bool allow_unknown;        /* unknown dtypes become !known entries */
    json_t *layout_meta;
    unsigned char trap[64];
} bp_st_parser_t;

/* Fails with "<label>: <rule> at byte <off>[ of the inflated stream]". */
bp_status bp_st_fail(bp_st_parser_t *p, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* name for a message: escaped as every name is (esc.h), cut to fit n bytes. */
void bp_st_quote(const char *name, char *out, size_t n);
/* Checks the complete header in p->hdr; on success the tensors are laid
 * out in p->ents (data order) and allocated in p->out. */
bp_status bp_st_parse_header(bp_st_parser_t *p);

#endif
