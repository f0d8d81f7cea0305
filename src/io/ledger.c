/* The ledger reader (contract in ledger.h, format in docs/ledger-format.md).
 *
 * Lines are read one at a time with a bounded buffer, each parsed by
 * jansson (duplicate keys rejected) and turned into compact records: op
 * names, module paths, dtypes and devices are interned, shapes and
 * tensors live in a few large blocks, so that a ledger of a million ops
 * costs tens of bytes per tensor, not jansson's trees. */
#include "ledger.h"

#include "buf.h"
#include "dtype.h"
#include "jsonread.h"
#include "safeopen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory: blocks and interned strings ---------------------------- */

typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} block_t;

struct bp_ledger_mem {
    block_t *blocks;
    char **strs;   /* interned strings, open addressing */
    size_t nstrs, capstrs;
};

static void *mem_alloc(struct bp_ledger_mem *m, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!m->blocks || m->blocks->cap - m->blocks->used < n) {
        size_t cap = n > ((size_t)1 << 20) ? n : (size_t)1 << 20;
        block_t *b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = m->blocks;
        b->used = 0;
        b->cap = cap;
        m->blocks = b;
    }
    void *p = m->blocks->data + m->blocks->used;
    m->blocks->used += n;
    return p;
}

static char *mem_strdup(struct bp_ledger_mem *m, const char *s, size_t len)
{
    char *p = mem_alloc(m, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

uint64_t bp_ledger_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint64_t bp_ledger_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static const char *intern(struct bp_ledger_mem *m, const char *s)
{
    if (m->nstrs * 2 >= m->capstrs) {
        size_t nc = m->capstrs ? m->capstrs * 2 : 256;
        char **ns = calloc(nc, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < m->capstrs; i++)
            if (m->strs[i]) {
                size_t j = bp_ledger_str_hash(m->strs[i]) & (nc - 1);
                while (ns[j])
                    j = (j + 1) & (nc - 1);
                ns[j] = m->strs[i];
            }
        free(m->strs);
        m->strs = ns;
        m->capstrs = nc;
    }
    size_t j = bp_ledger_str_hash(s) & (m->capstrs - 1);
    while (m->strs[j]) {
        if (strcmp(m->strs[j], s) == 0)
            return m->strs[j];
        j = (j + 1) & (m->capstrs - 1);
    }
    m->strs[j] = mem_strdup(m, s, strlen(s));
    if (m->strs[j])
        m->nstrs++;
    return m->strs[j];
}

static void mem_free(struct bp_ledger_mem *m)
{
    if (!m)
        return;
    for (block_t *b = m->blocks, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    free(m->strs);
    free(m);
}

/* ---- dtypes ------------------------------------------------------------ */

bool bp_ledger_dtype_size(const char *name, size_t *size)
{
    bp_dtype_t dt;
    if (bp_dtype_from_st(name, &dt)) {
        *size = bp_dtype_info(dt)->size;
        return true;
    }
    /* Complex tensors: hashed as their (re, im) pairs; bitprobe computes
     * nothing in them, so they are names of the ledger only. */
    if (strcmp(name, "C64") == 0 || strcmp(name, "C128") == 0) {
        *size = name[1] == '6' ? 8 : 16;
        return true;
    }
    return false;
}

/* ---- parsing one line ------------------------------------------------------ */

typedef struct {
    const char *name; /* the file, for messages */
    uint64_t line, offset;
    long long rec;    /* record number, -1 for the header and end lines */
    bp_error_t *err;
    struct bp_ledger_mem *mem;
} where_t;

static bp_status fail(const where_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static bp_status fail(const where_t *w, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (w->rec >= 0)
        return bp_error_set(w->err, BP_EINPUT, "cannot read ledger '%s': record %lld (line "
                            "%" PRIu64 ", byte %" PRIu64 "): %s", w->name, w->rec, w->line,
                            w->offset, what);
    return bp_error_set(w->err, BP_EINPUT, "cannot read ledger '%s': line %" PRIu64 " (byte %"
                        PRIu64 "): %s", w->name, w->line, w->offset, what);
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Member key of obj, required (or not) and of the given type. */
static bp_status member(const where_t *w, json_t *obj, const char *ctx, const char *key,
                        json_type type, bool required, json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return required ? fail(w, "%s has no '%s'", ctx, key) : BP_OK;
    if (json_typeof(*out) != type && !(type == JSON_TRUE && json_is_boolean(*out))) {
        static const char *names[] = {"an object", "an array", "a string", "an integer",
                                      "a number", "a boolean", "a boolean", "null"};
        return fail(w, "%s: '%s' must be %s, not %s", ctx, key, names[type], json_kind(*out));
    }
    return BP_OK;
}

static bool parse_hex64(const char *s, uint64_t *v)
{
    if (strlen(s) != 16)
        return false;
    *v = 0;
    for (int i = 0; i < 16; i++) {
        int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    return true;
}

static bp_status short_string(const where_t *w, const char *ctx, const char *key, json_t *v,
                              bool empty_ok)
{
    size_t len = json_string_length(v);
    if ((!empty_ok && len == 0) || len > BP_LEDGER_MAX_NAME)
        return fail(w, "%s: '%s' must be 1 to %d bytes long, it is %zu", ctx, key,
                    BP_LEDGER_MAX_NAME, len);
    if (memchr(json_string_value(v), '\0', len))
        return fail(w, "%s: '%s' holds a NUL character", ctx, key);
    return BP_OK;
}

/* The distinct capture names (interned in mem: pointers compare), as an
 * open-addressed set: a count in constant time per capture, whatever their
 * number. */
typedef struct {
    const char **slot; /* cap slots (a power of two), NULL empty */
    size_t n, cap;
} capset_t;

static size_t capset_at(const capset_t *c, const char *name)
{
    size_t i = (size_t)(((uintptr_t)name >> 4) * 0x9e3779b97f4a7c15u) & (c->cap - 1);
    while (c->slot[i] && c->slot[i] != name)
        i = (i + 1) & (c->cap - 1);
    return i;
}

static bp_status capset_add(capset_t *c, const where_t *w, const char *name)
{
    if (2 * (c->n + 1) > c->cap) { /* at most half full */
        capset_t g = {calloc(c->cap ? 2 * c->cap : 64, sizeof *g.slot), c->n,
                      c->cap ? 2 * c->cap : 64};
        if (!g.slot)
            return bp_error_set(w->err, BP_ENOMEM, "out of memory");
        for (size_t j = 0; j < c->cap; j++)
            if (c->slot[j])
                g.slot[capset_at(&g, c->slot[j])] = c->slot[j];
        free(c->slot);
        *c = g;
    }
    size_t i = capset_at(c, name);
    if (!c->slot[i]) {
        c->slot[i] = name;
        c->n++;
    }
    return BP_OK;
}

static bp_status tensor(const where_t *w, json_t *o, const char *ctx, bp_ledger_tensor_t *t,
                        capset_t *caps)
{
    json_t *dt, *shape, *stride, *dev, *nb, *h, *why, *cap;
    bp_status st;
    if (!json_is_object(o))
        return fail(w, "%s must be an object, not %s", ctx, json_kind(o));
    const char *known[] = {"dtype", "shape", "stride", "device", "nbytes", "hash", "why",
                           "capture"};
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        size_t i = 0;
        while (i < sizeof known / sizeof *known && strcmp(known[i], k) != 0)
            i++;
        if (i == sizeof known / sizeof *known)
            return fail(w, "%s: unknown member '%.64s'", ctx, k);
    }
    if ((st = member(w, o, ctx, "dtype", JSON_STRING, true, &dt)) ||
        (st = member(w, o, ctx, "shape", JSON_ARRAY, true, &shape)) ||
        (st = member(w, o, ctx, "device", JSON_STRING, true, &dev)) ||
        (st = member(w, o, ctx, "nbytes", JSON_INTEGER, true, &nb)) ||
        (st = member(w, o, ctx, "why", JSON_STRING, false, &why)) ||
        (st = member(w, o, ctx, "capture", JSON_STRING, false, &cap)))
        return st;
    stride = json_object_get(o, "stride");
    if (!stride)
        return fail(w, "%s has no 'stride'", ctx);
    if (!json_is_null(stride) && !json_is_array(stride))
        return fail(w, "%s: 'stride' must be an array or null, not %s", ctx, json_kind(stride));
    h = json_object_get(o, "hash");
    if (!h)
        return fail(w, "%s has no 'hash'", ctx);
    size_t esize;
    if (!bp_ledger_dtype_size(json_string_value(dt), &esize))
        return fail(w, "%s: unknown dtype '%.32s'", ctx, json_string_value(dt));
    if ((st = short_string(w, ctx, "device", dev, false)))
        return st;
    size_t nd = json_array_size(shape);
    if (nd > BP_LEDGER_MAXDIM)
        return fail(w, "%s: shape has %zu dimensions, at most %d are allowed", ctx, nd,
                    BP_LEDGER_MAXDIM);
    if (json_is_array(stride) && json_array_size(stride) != nd)
        return fail(w, "%s: stride has %zu entries for %zu dimensions", ctx,
                    json_array_size(stride), nd);
    int64_t *sh = mem_alloc(w->mem, (nd ? nd : 1) * sizeof *sh);
    if (!sh)
        return bp_error_set(w->err, BP_ENOMEM, "out of memory");
    /* numel * esize with overflow checks: a claim, never an allocation. */
    uint64_t bytes = esize;
    bool over = false;
    for (size_t d = 0; d < nd; d++) {
        json_t *x = json_array_get(shape, d);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return fail(w, "%s: shape[%zu] must be an integer of at least 0, not %s", ctx, d,
                        json_is_integer(x) ? "negative" : json_kind(x));
        sh[d] = json_integer_value(x);
        if (json_is_array(stride) && !json_is_integer(json_array_get(stride, d)))
            return fail(w, "%s: stride[%zu] must be an integer, not %s", ctx, d,
                        json_kind(json_array_get(stride, d)));
        if (sh[d] != 0 && bytes > UINT64_MAX / (uint64_t)sh[d])
            over = true;
        else
            bytes *= (uint64_t)sh[d];
    }
    for (size_t d = 0; over && d < nd; d++)
        if (sh[d] == 0)
            over = false, bytes = 0;
    int64_t claimed = json_integer_value(nb);
    if (over)
        return fail(w, "%s: shape makes more than 2^64 bytes of %s", ctx, json_string_value(dt));
    if (bytes > BP_BUF_MAX_BYTES)
        return fail(w, "%s: claims %" PRIu64 " bytes, more than the %zu a tensor may have", ctx,
                    bytes, (size_t)BP_BUF_MAX_BYTES);
    if (claimed < 0 || (uint64_t)claimed != bytes)
        return fail(w, "%s: nbytes is %" PRId64 ", the shape and %s make %" PRIu64, ctx,
                    (int64_t)claimed, json_string_value(dt), bytes);
    t->dtype = intern(w->mem, json_string_value(dt));
    t->device = intern(w->mem, json_string_value(dev));
    t->shape = sh;
    t->ndim = (int)nd;
    t->nbytes = bytes;
    t->why = NULL;
    t->capture = NULL;
    t->has_hash = false;
    if (json_is_string(h)) {
        if (!parse_hex64(json_string_value(h), &t->hash))
            return fail(w, "%s: hash must be 16 lower-case hex digits, not \"%.40s\"", ctx,
                        json_string_value(h));
        t->has_hash = true;
        if (why)
            return fail(w, "%s: 'why' is for a tensor without a hash", ctx);
    } else if (!json_is_null(h)) {
        return fail(w, "%s: 'hash' must be a string or null, not %s", ctx, json_kind(h));
    } else if (why) {
        if ((st = short_string(w, ctx, "why", why, true)))
            return st;
        t->why = intern(w->mem, json_string_value(why));
    }
    if (cap) {
        if (!t->has_hash)
            return fail(w, "%s: a captured tensor needs its hash", ctx);
        if ((st = short_string(w, ctx, "capture", cap, false)))
            return st;
        t->capture = intern(w->mem, json_string_value(cap));
        if (t->capture && (st = capset_add(caps, w, t->capture)))
            return st;
    }
    if (!t->dtype || !t->device || (why && !t->why) || (cap && !t->capture))
        return bp_error_set(w->err, BP_ENOMEM, "out of memory");
    return BP_OK;
}

/* Checks an argument value; counts the {"t": K} references in refs. */
static bp_status arg_value(const where_t *w, json_t *v, uint32_t nin, uint32_t *refs,
                           const char *ctx)
{
    size_t i;
    json_t *x;
    const char *k;
    switch (json_typeof(v)) {
    case JSON_ARRAY:
        json_array_foreach(v, i, x) {
            bp_status st = arg_value(w, x, nin, refs, ctx);
            if (st)
                return st;
        }
        return BP_OK;
    case JSON_OBJECT:
        if (json_object_size(v) != 1)
            return fail(w, "%s: an argument object has one member, this one %zu", ctx,
                        json_object_size(v));
        json_object_foreach(v, k, x) {
            if (strcmp(k, "t") == 0) {
                if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                    json_integer_value(x) >= (json_int_t)nin)
                    return fail(w, "%s: tensor reference {\"t\": %s} is not one of the %u "
                                "inputs", ctx, json_is_integer(x) ? "out of range" :
                                json_kind(x), nin);
                refs[json_integer_value(x)]++;
            } else if (strcmp(k, "complex") == 0) {
                if (!json_is_array(x) || json_array_size(x) != 2)
                    return fail(w, "%s: 'complex' takes [re, im]", ctx);
            } else if (strcmp(k, "float") == 0 || strcmp(k, "int") == 0 ||
                       strcmp(k, "dtype") == 0 || strcmp(k, "device") == 0 ||
                       strcmp(k, "repr") == 0) {
                if (!json_is_string(x))
                    return fail(w, "%s: '%s' takes a string, not %s", ctx, k, json_kind(x));
            } else {
                return fail(w, "%s: unknown argument form {\"%.32s\": ...}", ctx, k);
            }
        }
        return BP_OK;
    default:
        return BP_OK;
    }
}

static bp_status tensors(const where_t *w, json_t *arr, const char *key, bp_ledger_tensor_t **out,
                         uint32_t *n, capset_t *caps)
{
    size_t cnt = json_array_size(arr);
    if (cnt > 1u << 20)
        return fail(w, "'%s' lists %zu tensors, at most 2^20 are allowed", key, cnt);
    *n = (uint32_t)cnt;
    *out = mem_alloc(w->mem, (cnt ? cnt : 1) * sizeof **out);
    if (!*out)
        return bp_error_set(w->err, BP_ENOMEM, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        char ctx[48];
        snprintf(ctx, sizeof ctx, "%s[%zu]", key, i);
        bp_status st = tensor(w, json_array_get(arr, i), ctx, &(*out)[i], caps);
        if (st)
            return st;
    }
    return BP_OK;
}

static bp_status record(const where_t *w, json_t *o, bp_ledger_op_t *op, capset_t *caps)
{
    json_t *seq, *name, *mod, *args, *kwargs, *in, *out;
    bp_status st;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        if (strcmp(k, "seq") && strcmp(k, "op") && strcmp(k, "module") && strcmp(k, "args") &&
            strcmp(k, "kwargs") && strcmp(k, "ret") && strcmp(k, "in") && strcmp(k, "out"))
            return fail(w, "unknown member '%.64s'%s", k,
                        strcmp(k, "end") == 0 ? " (an end line has only 'end')" : "");
    }
    if ((st = member(w, o, "the record", "seq", JSON_INTEGER, true, &seq)) ||
        (st = member(w, o, "the record", "op", JSON_STRING, true, &name)) ||
        (st = member(w, o, "the record", "module", JSON_STRING, true, &mod)) ||
        (st = member(w, o, "the record", "args", JSON_ARRAY, true, &args)) ||
        (st = member(w, o, "the record", "kwargs", JSON_OBJECT, false, &kwargs)) ||
        (st = member(w, o, "the record", "in", JSON_ARRAY, true, &in)) ||
        (st = member(w, o, "the record", "out", JSON_ARRAY, true, &out)))
        return st;
    if (json_integer_value(seq) != w->rec)
        return fail(w, "seq is %" JSON_INTEGER_FORMAT ", expected %lld (records are numbered "
                    "from 0, one per line)", json_integer_value(seq), w->rec);
    if ((st = short_string(w, "the record", "op", name, false)) ||
        (st = short_string(w, "the record", "module", mod, true)))
        return st;
    if ((st = tensors(w, in, "in", &op->in, &op->nin, caps)) ||
        (st = tensors(w, out, "out", &op->out, &op->nout, caps)))
        return st;
    uint32_t *refs = calloc(op->nin ? op->nin : 1, sizeof *refs);
    if (!refs)
        return bp_error_set(w->err, BP_ENOMEM, "out of memory");
    st = arg_value(w, args, op->nin, refs, "args");
    const char *kk;
    json_t *kv;
    if (!st && kwargs)
        json_object_foreach(kwargs, kk, kv) {
            if ((st = arg_value(w, kv, op->nin, refs, "kwargs")))
                break;
        }
    for (uint32_t i = 0; !st && i < op->nin; i++)
        if (refs[i] != 1)
            st = fail(w, "in[%u] is referenced %u times by args and kwargs, it must be once",
                      i, refs[i]);
    free(refs);
    if (st)
        return st;
    json_t *call = json_pack("{s:O}", "args", args);
    if (call && kwargs)
        json_object_set(call, "kwargs", kwargs);
    char *text = call ? json_dumps(call, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(call);
    op->call = text ? mem_strdup(w->mem, text, strlen(text)) : NULL;
    free(text);
    op->op = intern(w->mem, json_string_value(name));
    op->module = intern(w->mem, json_string_value(mod));
    op->line = w->line;
    op->offset = w->offset;
    if (!op->call || !op->op || !op->module)
        return bp_error_set(w->err, BP_ENOMEM, "out of memory");
    return BP_OK;
}

static bp_status header(const where_t *w, json_t *o)
{
    json_t *fmt = json_object_get(o, "format"), *ver, *hash, *cap;
    bp_status st;
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), BP_LEDGER_FORMAT) != 0)
        return fail(w, "not a bitprobe ledger (the first line must have \"format\": \"%s\")",
                    BP_LEDGER_FORMAT);
    if ((st = member(w, o, "the header", "version", JSON_INTEGER, true, &ver)) ||
        (st = member(w, o, "the header", "hash", JSON_STRING, true, &hash)))
        return st;
    if (json_integer_value(ver) != BP_LEDGER_VERSION)
        return fail(w, "ledger version %" JSON_INTEGER_FORMAT " (this bitprobe reads version "
                    "%d)", json_integer_value(ver), BP_LEDGER_VERSION);
    if (strcmp(json_string_value(hash), BP_LEDGER_HASH) != 0)
        return fail(w, "unknown hash \"%.64s\" (this bitprobe knows \"%s\")",
                    json_string_value(hash), BP_LEDGER_HASH);
    cap = json_object_get(o, "captures");
    if (cap && !json_is_null(cap)) {
        const char *c = json_string_value(cap);
        if (!c || !*c || strchr(c, '/') || strcmp(c, ".") == 0 || strcmp(c, "..") == 0 ||
            strlen(c) > BP_LEDGER_MAX_NAME)
            return fail(w, "'captures' must be a plain file name next to the ledger, or null");
    }
    return BP_OK;
}

static bp_status end_line(const where_t *w, json_t *hdr, json_t *o, size_t nrec, size_t ncap)
{
    json_t *e = json_object_get(o, "end"), *r, *c;
    bp_status st;
    if (json_object_size(o) != 1)
        return fail(w, "the end line has members besides 'end'");
    if (!json_is_object(e))
        return fail(w, "'end' must be an object, not %s", json_kind(e));
    if ((st = member(w, e, "the end line", "records", JSON_INTEGER, true, &r)) ||
        (st = member(w, e, "the end line", "captures", JSON_INTEGER, true, &c)))
        return st;
    if (json_integer_value(r) < 0 || (uint64_t)json_integer_value(r) != nrec)
        return fail(w, "the end line counts %" JSON_INTEGER_FORMAT " records, the ledger holds "
                    "%zu", json_integer_value(r), nrec);
    if (json_integer_value(c) < 0 || (uint64_t)json_integer_value(c) != ncap)
        return fail(w, "the end line counts %" JSON_INTEGER_FORMAT " captured tensors, the "
                    "records name %zu", json_integer_value(c), ncap);
    if (ncap && !json_is_string(json_object_get(hdr, "captures")))
        return fail(w, "the records name %zu captured tensors but the header names no "
                    "captures file", ncap);
    return BP_OK;
}

/* ---- lines ------------------------------------------------------------------- */

/* Reads one line (without its '\n') into *buf; 0 at end of file, 1 a
 * line, -1 error (too long, no final newline, read error).  A character at
 * a time without the stream's lock (one thread reads a ledger): getc's
 * locking took a fifth of reading a million records. */
static int read_line(FILE *f, char **buf, size_t *cap, size_t *len, bool *no_newline)
{
    size_t n = 0;
    int c;
    *no_newline = false;
    while ((c = getc_unlocked(f)) != EOF) {
        if (c == '\n') {
            *len = n;
            return 1;
        }
        if (n + 1 >= *cap) {
            if (*cap >= BP_LEDGER_MAX_LINE) {
                *len = n;
                return -1;
            }
            size_t nc = *cap ? *cap * 2 : 4096;
            if (nc > BP_LEDGER_MAX_LINE)
                nc = BP_LEDGER_MAX_LINE;
            char *nb = realloc(*buf, nc);
            if (!nb)
                return -2;
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    *len = n;
    if (n) {
        *no_newline = true;
        return -1;
    }
    return ferror(f) ? -1 : 0;
}

bp_status bp_ledger_read_stream(FILE *f, const char *name, bp_ledger_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    out->mem = calloc(1, sizeof *out->mem);
    out->path = strdup(name);
    if (!out->mem || !out->path) {
        bp_ledger_free(out);
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    where_t w = {.name = name, .rec = -1, .err = err, .mem = out->mem};
    char *buf = NULL;
    size_t cap = 0, len, capops = 0;
    capset_t caps = {0};
    bp_status st = BP_OK;
    bool no_nl;
    uint64_t pos = 0;
    for (;;) {
        int r = read_line(f, &buf, &cap, &len, &no_nl);
        w.line++;
        w.offset = pos;
        w.rec = out->header && !out->end ? (long long)out->n : -1;
        if (r == 0)
            break;
        if (r == -2) {
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
            break;
        }
        if (r < 0) {
            st = no_nl ? fail(&w, "the file ends without a newline: cut short?")
                 : len >= BP_LEDGER_MAX_LINE - 1
                     ? fail(&w, "line longer than %zu bytes", BP_LEDGER_MAX_LINE)
                     : fail(&w, "read error: %s", strerror(errno));
            break;
        }
        pos += len + 1;
        if (pos > BP_LEDGER_MAX_FILE) {
            st = fail(&w, "the ledger is larger than %" PRIu64 " bytes", BP_LEDGER_MAX_FILE);
            break;
        }
        if (out->end) {
            w.rec = -1;
            st = fail(&w, "a line after the end line");
            break;
        }
        if (!out->header && len > BP_LEDGER_MAX_HEADER) {
            st = fail(&w, "the header line is longer than %zu bytes", BP_LEDGER_MAX_HEADER);
            break;
        }
        bp_json_err_t je;
        json_t *o = bp_json_load(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!o && je.over) {
            char what[256];
            bp_json_limit_text(len, &je, what, sizeof what);
            st = fail(&w, "%s", what);
            break;
        }
        if (!o) {
            st = fail(&w, "invalid JSON at column %d: %s", je.je.column, je.je.text);
            break;
        }
        if (!json_is_object(o)) {
            st = fail(&w, "a line must hold a JSON object, not %s", json_kind(o));
        } else if (!out->header) {
            st = header(&w, o);
            if (!st) {
                out->header = o;
                o = NULL;
            }
        } else if (json_object_get(o, "end")) {
            w.rec = -1;
            st = end_line(&w, out->header, o, out->n, caps.n);
            if (!st) {
                out->end = json_incref(json_object_get(o, "end"));
                out->ncaptures = caps.n;
            }
        } else {
            if (out->n == capops) {
                size_t nc = capops ? capops * 2 : 1024;
                bp_ledger_op_t *no = realloc(out->ops, nc * sizeof *no);
                if (!no) {
                    json_decref(o);
                    st = bp_error_set(err, BP_ENOMEM, "out of memory");
                    break;
                }
                out->ops = no;
                capops = nc;
            }
            memset(&out->ops[out->n], 0, sizeof *out->ops);
            st = record(&w, o, &out->ops[out->n], &caps);
            if (!st)
                out->n++;
        }
        json_decref(o);
        if (st)
            break;
    }
    free(buf);
    if (!st && !out->header) {
        w.line = 1;
        w.offset = 0;
        st = fail(&w, "the file is empty");
    }
    if (!st && !out->end) {
        w.rec = -1;
        st = fail(&w, "no end line after record %zu: the recording was cut short (a ledger "
                      "ends with {\"end\": ...})", out->n ? out->n - 1 : 0);
    }
    free(caps.slot);
    if (st)
        bp_ledger_free(out);
    return st;
}

bp_status bp_ledger_read(const char *path, bp_ledger_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    const char *why;
    FILE *f = bp_safe_fopen(path, &why);
    if (!f)
        return bp_error_set(err, BP_EIO, "cannot open ledger '%s': %s", path, why);
    bp_status st = bp_ledger_read_stream(f, path, out, err);
    fclose(f);
    return st;
}

void bp_ledger_free(bp_ledger_t *l)
{
    if (!l)
        return;
    free(l->path);
    json_decref(l->header);
    json_decref(l->end);
    free(l->ops);
    mem_free(l->mem);
    memset(l, 0, sizeof *l);
}

const char *bp_ledger_header_str(const bp_ledger_t *l, const char *key)
{
    return json_string_value(json_object_get(l->header, key));
}

bool bp_ledger_sniff(const char *path)
{
    size_t len = strlen(path);
    if (len >= 7 && strcmp(path + len - 7, ".ledger") == 0)
        return true;
    char head[256];
    const char *why;
    FILE *f = bp_safe_fopen(path, &why);
    if (!f)
        return false;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    char *nl = strchr(head, '\n');
    if (nl)
        *nl = '\0';
    return head[0] == '{' && strstr(head, "\"" BP_LEDGER_FORMAT "\"") != NULL;
}
