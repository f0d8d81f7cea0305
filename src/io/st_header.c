/* Safetensors reader, the header's rules (see st.h for the rules and
 * their error offsets).
 *
 * The header's JSON is parsed by jansson (duplicates rejected); a light
 * scan of the same text recovers the byte position of every key and
 * value, since jansson keeps object members in document order but not
 * their positions. */
#include "jsonread.h"
#include "st_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "esc.h"

/* ---- header positions ---------------------------------------------- */

typedef struct pos {
    size_t key, val; /* offsets in the header of a member's key and value */
    struct pos *sub; /* members of an object value, or NULL */
    size_t nsub;
} pos_t;

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

static size_t skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\')
            i++;
    return i + 1;
}

static size_t skip_value(const char *s, size_t n, size_t i)
{
    if (i < n && s[i] == '"')
        return skip_string(s, n, i);
    int depth = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            i = skip_string(s, n, i) - 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth-- == 0)
                return i;
            if (depth == 0)
                return i + 1;
        } else if (depth == 0 &&
                   (c == ',' || c == ' ' || c == '\t' || c == '\n' ||
                    c == '\r')) {
            return i;
        }
    }
    return i;
}

/* Members of the object at s[i] ('{'), in document order: key and value
 * positions; with nest, also the members of object values (one level). */
static bp_status scan_members(const char *s, size_t n, size_t i, bool nest,
                              pos_t *pos, size_t *npos, size_t cap)
{
    size_t k = 0;
    *npos = 0;
    i = skip_ws(s, n, i + 1);
    while (i < n && s[i] == '"') {
        if (k == cap)
            return BP_EINTERNAL;
        size_t me = k++;
        *npos = k;
        pos[me].key = i;
        i = skip_ws(s, n, skip_string(s, n, i));
        i = skip_ws(s, n, i + 1); /* ':' */
        pos[me].val = i;
        pos[me].nsub = 0;
        pos[me].sub = NULL;
        if (nest && i < n && s[i] == '{') {
            size_t m = 0, j = skip_ws(s, n, i + 1);
            while (j < n && s[j] == '"') { /* count first */
                m++;
                j = skip_ws(s, n, skip_string(s, n, j));
                j = skip_ws(s, n, skip_value(s, n, skip_ws(s, n, j + 1)));
                if (j < n && s[j] == ',')
                    j = skip_ws(s, n, j + 1);
            }
            pos[me].sub = calloc(m ? m : 1, sizeof *pos[me].sub);
            if (!pos[me].sub)
                return BP_ENOMEM;
            scan_members(s, n, i, false, pos[me].sub, &pos[me].nsub, m);
        }
        i = skip_ws(s, n, skip_value(s, n, i));
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    *npos = k;
    return BP_OK;
}

/* Returns the length of the valid UTF-8 prefix (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF). */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (n - i < len)
            return i;
        for (size_t k = 1; k < len; k++) {
            unsigned d = s[i + k];
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF))
                return i;
        }
        i += len;
    }
    return n;
}

void bp_st_quote(const char *name, char *out, size_t n)
{
    bp_esc_str(name, out, n);
}

/* ---- the header ---------------------------------------------------- */

/* Data order.  Only empty tensors can share a place; they go by name, not
 * by their keys' order in the header, so that the order read depends on
 * the file's content alone and a file read, written (keys sorted) and read
 * again lists its tensors in the same order. */
static int ent_cmp_off(const void *a, const void *b)
{
    const bp_st_ent_t *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int ent_cmp_name(const void *a, const void *b)
{
    return strcmp((*(bp_st_ent_t *const *)a)->name,
                  (*(bp_st_ent_t *const *)b)->name);
}

/* A non-negative JSON integer. */
static bool get_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* One tensor entry: fields, dtype, shape, offsets and their sizes. */
static bp_status parse_tensor(bp_st_parser_t *p, const char *name, json_t *v,
                              const pos_t *ps, bp_st_ent_t *e)
{
    char q[256];
    bp_st_quote(name, q, sizeof q);
    if (!json_is_object(v))
        return bp_st_fail(p, 8 + ps->val, "tensor '%s' is not an object", q);
    const char *fk;
    json_t *fv, *dtype = NULL, *shape = NULL, *offs = NULL;
    size_t j = 0, dpos = 0, spos = 0, opos = 0;
    json_object_foreach(v, fk, fv) {
        size_t at = 8 + (j < ps->nsub ? ps->sub[j].val : ps->val);
        if (strcmp(fk, "dtype") == 0) {
            dtype = fv;
            dpos = at;
        } else if (strcmp(fk, "shape") == 0) {
            shape = fv;
            spos = at;
        } else if (strcmp(fk, "data_offsets") == 0) {
            offs = fv;
            opos = at;
        } else {
            char qk[128];
            bp_st_quote(fk, qk, sizeof qk);
            return bp_st_fail(p, 8 + (j < ps->nsub ? ps->sub[j].key : ps->val),
                              "unknown field '%s' in tensor '%s'", qk, q);
        }
        j++;
    }
    const char *missing = NULL;
    if (!offs)
        missing = "data_offsets";
    if (!shape)
        missing = "shape";
    if (!dtype)
        missing = "dtype";
    if (missing)
        return bp_st_fail(p, 8 + ps->val, "tensor '%s' has no '%s'", q,
                          missing);
    if (!json_is_string(dtype))
        return bp_st_fail(p, dpos, "dtype of tensor '%s' is not a string", q);
    bp_st_quote(json_string_value(dtype), e->dtname, sizeof e->dtname);
    e->known = bp_dtype_from_st(json_string_value(dtype), &e->dt);
    if (!e->known && !p->allow_unknown)
        return bp_st_fail(p, dpos, "unknown dtype '%s' for tensor '%s'",
                          e->dtname, q);
    if (!e->known)
        e->dt = BP_U8; /* sizes below count bytes; data_offsets decide */
    if (!json_is_array(shape))
        return bp_st_fail(p, spos, "shape of tensor '%s' is not an array", q);
    if (json_array_size(shape) > BP_MAXDIM)
        return bp_st_fail(p, spos,
                          "shape of tensor '%s' has %zu dimensions "
                          "(at most %d)",
                          q, json_array_size(shape), BP_MAXDIM);
    e->ndim = (int)json_array_size(shape);
    /* numel * size with overflow checks, as the reference reader does */
    uint64_t nbytes = bp_dtype_info(e->dt)->size;
    bool over = false;
    for (int d = 0; d < e->ndim; d++) {
        uint64_t dim;
        if (!get_u64(json_array_get(shape, (size_t)d), &dim))
            return bp_st_fail(p, spos,
                              "shape of tensor '%s' has a dimension that "
                              "is not a non-negative integer",
                              q);
        e->shape[d] = (int64_t)dim;
        if (dim && nbytes > UINT64_MAX / dim)
            over = true;
        nbytes *= dim;
    }
    for (int d = 0; d < e->ndim; d++)
        if (e->shape[d] == 0)
            over = false, nbytes = 0; /* an empty tensor is never too big */
    if (!json_is_array(offs) || json_array_size(offs) != 2 ||
        !get_u64(json_array_get(offs, 0), &e->begin) ||
        !get_u64(json_array_get(offs, 1), &e->end))
        return bp_st_fail(p, opos,
                          "data_offsets of tensor '%s' is not a pair of "
                          "non-negative integers",
                          q);
    e->hpos = opos;
    if (e->end < e->begin)
        return bp_st_fail(p, opos,
                          "data_offsets of tensor '%s' end (%" PRIu64
                          ") before they begin (%" PRIu64 ")",
                          q, e->end, e->begin);
    if (!e->known)
        return BP_OK; /* no element size: the layout rules alone apply */
    char sh[160];
    bp_shape_format(e->ndim, e->shape, sh, sizeof sh);
    if (over)
        return bp_st_fail(p, spos,
                          "size of tensor '%s' (shape %s, %s) overflows "
                          "64 bits",
                          q, sh, json_string_value(dtype));
    if (nbytes > BP_BUF_MAX_BYTES)
        return bp_st_fail(p, spos,
                          "tensor '%s' (shape %s, %s) has %" PRIu64
                          " bytes, more than the limit of %zu",
                          q, sh, json_string_value(dtype), nbytes,
                          (size_t)BP_BUF_MAX_BYTES);
    if (e->end - e->begin != nbytes)
        return bp_st_fail(p, opos,
                          "tensor '%s' has data_offsets [%" PRIu64 ", %" PRIu64
                          "] (%" PRIu64
                          " bytes) but shape %s of %s needs %" PRIu64 " bytes",
                          q, e->begin, e->end, e->end - e->begin, sh,
                          json_string_value(dtype), nbytes);
    return BP_OK;
}

static bool parse_crc(const char *s, uint32_t *out)
{
    if (strlen(s) != 10 || s[0] != '0' || s[1] != 'x')
        return false;
    uint32_t v = 0;
    for (int i = 2; i < 10; i++) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return false;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return true;
}

/* The header's CRC entry: checked against the raw header text, where the
 * value must stand as it is (no escapes) for its digits to be found. */
static bp_status header_crc(bp_st_parser_t *p, const char *val,
                            const pos_t *sp)
{
    uint32_t want;
    const char *h = p->hdr;
    size_t n = (size_t)p->hlen, at = sp->val;
    if (!parse_crc(val, &want) || at + 12 > n || h[at] != '"' ||
        memcmp(h + at + 1, val, 10) != 0 || h[at + 11] != '"') {
        char qv[64];
        bp_st_quote(val, qv, sizeof qv);
        return bp_st_fail(p, 8 + at,
                          "malformed header CRC '%s' (not 0x and 8 "
                          "lower-case hex digits, written without escapes)",
                          qv);
    }
    static const unsigned char zeros[8] = "00000000";
    size_t d = at + 3; /* the digits */
    uLong c = crc32_z(0, (const unsigned char *)h, d);
    c = crc32_z(c, zeros, 8);
    c = crc32_z(c, (const unsigned char *)h + d + 8, n - d - 8);
    if ((uint32_t)c != want)
        return bp_st_fail(p, 8 + at,
                          "header CRC mismatch (stored 0x%08" PRIx32
                          ", computed 0x%08" PRIx32
                          "): the header was altered",
                          want, (uint32_t)c);
    p->has_hcrc = true;
    return BP_OK;
}

/* __metadata__: strings only; CRC entries attached to their tensors. */
static bp_status parse_meta(bp_st_parser_t *p, json_t *v, const pos_t *ps,
                            bp_st_ent_t **byname)
{
    bp_status st;
    if (!json_is_object(v))
        return bp_st_fail(p, 8 + ps->val, "__metadata__ is not an object");
    const char *k;
    json_t *mv;
    size_t j = 0;
    json_object_foreach(v, k, mv) {
        const pos_t *sp = j < ps->nsub ? &ps->sub[j] : ps;
        j++;
        char qk[256];
        bp_st_quote(k, qk, sizeof qk);
        if (!json_is_string(mv))
            return bp_st_fail(p, 8 + sp->val,
                              "__metadata__ value for '%s' is not a string",
                              qk);
        size_t plen = strlen(BP_ST_CRC_PREFIX);
        if (strncmp(k, BP_ST_CRC_PREFIX, plen) != 0)
            continue;
        if (strcmp(k, BP_ST_HEADER_CRC) == 0) {
            if ((st = header_crc(p, json_string_value(mv), sp)))
                return st;
            continue;
        }
        const char *tn = k + plen;
        bp_st_ent_t key = {.name = (char *)tn}, *kp = &key;
        bp_st_ent_t **hit =
            bsearch(&kp, byname, p->nents, sizeof *byname, ent_cmp_name);
        if (!hit)
            return bp_st_fail(p, 8 + sp->key,
                              "CRC for tensor '%s', which is not in the file",
                              qk + plen);
        bp_st_ent_t *e = *hit;
        if (!parse_crc(json_string_value(mv), &e->crc)) {
            char qv[64];
            bp_st_quote(json_string_value(mv), qv, sizeof qv);
            return bp_st_fail(p, 8 + sp->val,
                              "malformed CRC '%s' for tensor '%s' "
                              "(not 0x and 8 lower-case hex digits)",
                              qv, qk + plen);
        }
        e->has_crc = true;
    }
    return BP_OK;
}

static void free_pos(pos_t *ps, size_t n)
{
    for (size_t i = 0; ps && i < n; i++)
        free(ps[i].sub);
    free(ps);
}

/* Tensors, metadata and layout; then the tensor buffers are allocated. */
static bp_status check_header(bp_st_parser_t *p, json_t *root, pos_t *ps)
{
    size_t nm = json_object_size(root), i = 0, meta_i = 0;
    json_t *meta = NULL, *v;
    const char *k;
    bp_status st;
    p->ents = calloc(nm ? nm : 1, sizeof *p->ents);
    if (!p->ents)
        return bp_error_set(p->err, BP_ENOMEM, "%s: out of memory", p->label);
    json_object_foreach(root, k, v) {
        if (strcmp(k, "__metadata__") == 0) {
            meta = v;
            meta_i = i++;
            continue;
        }
        bp_st_ent_t *e = &p->ents[p->nents];
        e->kpos = 8 + ps[i].key;
        if (!(e->name = strdup(k)))
            return bp_error_set(p->err, BP_ENOMEM, "%s: out of memory",
                                p->label);
        p->nents++;
        if ((st = parse_tensor(p, k, v, &ps[i], e)))
            return st;
        i++;
    }
    bp_st_ent_t **byname = malloc((p->nents ? p->nents : 1) * sizeof *byname);
    if (!byname)
        return bp_error_set(p->err, BP_ENOMEM, "%s: out of memory", p->label);
    for (i = 0; i < p->nents; i++)
        byname[i] = &p->ents[i];
    qsort(byname, p->nents, sizeof *byname, ent_cmp_name);
    st = meta ? parse_meta(p, meta, &ps[meta_i], byname) : BP_OK;
    free(byname);
    if (st)
        return st;
    bool any_crc = false;
    for (i = 0; i < p->nents; i++)
        any_crc |= p->ents[i].has_crc;
    for (i = 0; (any_crc || p->has_hcrc) && i < p->nents; i++)
        if (!p->ents[i].has_crc) {
            char q[256];
            bp_st_quote(p->ents[i].name, q, sizeof q);
            return bp_st_fail(p, p->ents[i].kpos,
                              "tensor '%s' has no CRC but %s", q,
                              any_crc ? "other tensors do"
                                      : "the header does");
        }
    if (any_crc && !p->has_hcrc)
        return bp_st_fail(p, meta ? 8 + ps[meta_i].val : 8,
                          "tensors carry CRCs but the header has none "
                          "('" BP_ST_HEADER_CRC "')");

    qsort(p->ents, p->nents, sizeof *p->ents, ent_cmp_off);
    uint64_t at = 0;
    for (i = 0; i < p->nents; i++) {
        const bp_st_ent_t *e = &p->ents[i];
        char q[256];
        bp_st_quote(e->name, q, sizeof q);
        if (e->begin > at)
            return bp_st_fail(p, e->hpos,
                              "hole in the data: tensor '%s' begins "
                              "at data byte %" PRIu64
                              " but the data before it ends at %" PRIu64,
                              q, e->begin, at);
        if (e->begin < at)
            return bp_st_fail(p, e->hpos,
                              "overlap in the data: tensor '%s' "
                              "begins at data byte %" PRIu64
                              " but the data before it ends at %" PRIu64,
                              q, e->begin, at);
        at = e->end;
    }
    p->data_end = at;
    uint64_t claimed = 8 + p->hlen + at;
    if (p->total != UINT64_MAX && claimed > p->total)
        return bp_st_fail(p, p->total,
                          "input ends inside the data: the header "
                          "claims %" PRIu64 " data bytes, up to byte %" PRIu64,
                          at, claimed);
    if (p->total != UINT64_MAX && claimed < p->total)
        return bp_st_fail(p, claimed,
                          "%" PRIu64 " trailing bytes after the %" PRIu64
                          " data bytes the header claims",
                          p->total - claimed, at);
    if (p->total == UINT64_MAX && claimed > BP_ST_MAX_INFLATED)
        return bp_st_fail(p, p->nents ? p->ents[p->nents - 1].hpos : 8,
                          "the header claims %" PRIu64
                          " bytes in all, more than "
                          "the limit of %" PRIu64 " for streamed input",
                          claimed, (uint64_t)BP_ST_MAX_INFLATED);

    if (p->layout_only) {
        p->layout_meta = meta ? json_incref(meta) : NULL;
        return BP_OK;
    }
    bp_st_file_t *f = p->out;
    f->t = calloc(p->nents ? p->nents : 1, sizeof *f->t);
    if (!f->t)
        return bp_error_set(p->err, BP_ENOMEM, "%s: out of memory", p->label);
    f->cap = p->nents;
    for (i = 0; i < p->nents; i++) {
        bp_st_ent_t *e = &p->ents[i];
        f->t[i].name = e->name;
        e->name = NULL;
        f->n = i + 1;
        /* Streamed input: data buffers come as the bytes do (st.c). */
        if (p->lazy && e->end > e->begin)
            st = bp_buf_shape(&f->t[i].buf, e->dt, e->ndim, e->shape, p->err);
        else
            st = bp_buf_alloc(&f->t[i].buf, e->dt, e->ndim, e->shape, p->err);
        if (st)
            return bp_error_prefix(p->err, "%s: ", p->label);
    }
    f->meta = meta ? json_incref(meta) : NULL;
    return BP_OK;
}

bp_status bp_st_parse_header(bp_st_parser_t *p)
{
    const char *h = p->hdr;
    size_t n = (size_t)p->hlen;
    if (n == 0 || h[0] != '{')
        return bp_st_fail(p, 8, "header does not start with '{'");
    size_t u = utf8_valid((const unsigned char *)h, n);
    if (u < n)
        return bp_st_fail(p, 8 + u, "header is not valid UTF-8");
    bp_json_err_t jr;
    json_t *root = bp_json_load(h, n, JSON_REJECT_DUPLICATES, &jr);
    const json_error_t *je = &jr.je;
    if (!root && jr.over) {
        char what[256];
        bp_json_limit_text(n, &jr, what, sizeof what);
        return bp_st_fail(p, 8, "header: %s", what);
    }
    if (!root) {
        uint64_t at = 8 + (uint64_t)(je->position > 0 ? je->position : 0);
        if (json_error_code(je) == json_error_duplicate_key)
            return bp_st_fail(p, at, "duplicate key in header (%s)", je->text);
        return bp_st_fail(p, at, "header is not valid JSON (%s)", je->text);
    }
    size_t nm = json_object_size(root), np = 0;
    pos_t *ps = calloc(nm ? nm : 1, sizeof *ps);
    bp_status st = ps ? scan_members(h, n, 0, true, ps, &np, nm) : BP_ENOMEM;
    if (st == BP_OK && np != nm)
        st = BP_EINTERNAL;
    if (st)
        st = bp_error_set(p->err, st, "%s: cannot locate the header's keys",
                          p->label);
    else
        st = check_header(p, root, ps);
    free_pos(ps, np);
    json_decref(root);
    return st;
}
