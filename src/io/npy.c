/* NumPy .npy reader (see npy.h).
 *
 * The header is a Python literal; only the subset np.save writes is
 * parsed (strings in either quote, True/False, tuples of integers with an
 * optional trailing comma and Python 2's 'L' suffix), by hand, so that
 * every error can name its byte.  Files are read in two steps, prelude and
 * header first, so that the data size is checked against the file size
 * before the data buffer is allocated. */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeopen.h"

typedef struct {
    const char *label;
    bp_error_t *err;
    const char *s; /* header text */
    size_t n, i;   /* its length, the cursor */
    size_t base;   /* file offset of s[0] */
} lex_t;

typedef struct {
    bp_dtype_t dt;
    int ndim;
    int64_t shape[BP_MAXDIM];
    size_t data_off; /* file offset of the data */
    char descr[32];
} npy_info_t;

static bp_status fail(const char *label, bp_error_t *err, uint64_t off,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bp_status fail(const char *label, bp_error_t *err, uint64_t off,
                      const char *fmt, ...)
{
    char rule[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return bp_error_set(err, BP_EINPUT, "%s: %s at byte %" PRIu64, label,
                        rule, off);
}

#define LFAIL(lx, ...) fail((lx)->label, (lx)->err, (lx)->base + (lx)->i, \
                            __VA_ARGS__)

static void ws(lex_t *lx)
{
    while (lx->i < lx->n && (lx->s[lx->i] == ' ' || lx->s[lx->i] == '\t' ||
                             lx->s[lx->i] == '\n' || lx->s[lx->i] == '\r'))
        lx->i++;
}

static bool eat(lex_t *lx, char c)
{
    ws(lx);
    if (lx->i < lx->n && lx->s[lx->i] == c) {
        lx->i++;
        return true;
    }
    return false;
}

/* A quoted string without escapes (np.save never writes any). */
static bp_status str(lex_t *lx, char *out, size_t cap)
{
    ws(lx);
    if (lx->i >= lx->n || (lx->s[lx->i] != '\'' && lx->s[lx->i] != '"'))
        return LFAIL(lx, "header: expected a quoted string");
    char q = lx->s[lx->i];
    size_t j = lx->i + 1, k = 0;
    while (j < lx->n && lx->s[j] != q && (unsigned char)lx->s[j] >= 0x20)
        j++;
    if (j >= lx->n || lx->s[j] != q)
        return LFAIL(lx, "header: unterminated string");
    if (j - lx->i - 1 >= cap)
        return LFAIL(lx, "header: string too long");
    for (j = lx->i + 1; lx->s[j] != q; j++) {
        if (lx->s[j] == '\\')
            return LFAIL(lx, "header: escapes in strings are not supported");
        out[k++] = lx->s[j];
    }
    out[k] = '\0';
    lx->i = j + 1;
    return BP_OK;
}

static bp_status parse_descr(lex_t *lx, bool as_bf16, npy_info_t *info)
{
    char d[32];
    ws(lx);
    if (lx->i < lx->n && (lx->s[lx->i] == '[' || lx->s[lx->i] == '{'))
        return LFAIL(lx, "structured dtypes are not supported");
    size_t at = lx->i;
    bp_status st = str(lx, d, sizeof d);
    if (st)
        return st;
    static const struct { const char *descr; bp_dtype_t dt; } ok[] = {
        {"<f4", BP_F32}, {"<f2", BP_F16}, {"<f8", BP_F64},
        {"<i4", BP_I32}, {"<i8", BP_I64}, {"<i2", BP_I16},
        {"|i1", BP_I8},  {"<i1", BP_I8},  {"|u1", BP_U8},
        {"<u1", BP_U8},  {"<u2", BP_U16}, {"<u4", BP_U32},
        {"<u8", BP_U64}, {"|b1", BP_BOOL}, {"<b1", BP_BOOL},
    };
    snprintf(info->descr, sizeof info->descr, "%s", d);
    /* NumPy has no bfloat16: its bits are saved as 16-bit integers. */
    if (as_bf16 && (strcmp(d, "<u2") == 0 || strcmp(d, "<i2") == 0)) {
        info->dt = BP_BF16;
        return BP_OK;
    }
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
        if (strcmp(d, ok[k].descr) == 0) {
            info->dt = ok[k].dt;
            return BP_OK;
        }
    lx->i = at;
    if (d[0] == '>')
        return LFAIL(lx, "big-endian dtype '%s' is not supported", d);
    return LFAIL(lx, "unsupported dtype '%s' (supported: <f8 <f4 <f2 <i8 "
                 "<i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1, and <u2/<i2 as bf16 "
                 "with --as bf16)", d);
}

static bp_status parse_shape(lex_t *lx, npy_info_t *info)
{
    if (!eat(lx, '('))
        return LFAIL(lx, "shape is not a tuple");
    info->ndim = 0;
    for (;;) {
        if (eat(lx, ')'))
            return BP_OK;
        ws(lx);
        size_t at = lx->i;
        uint64_t v = 0;
        bool any = false;
        while (lx->i < lx->n && lx->s[lx->i] >= '0' && lx->s[lx->i] <= '9') {
            unsigned dg = (unsigned)(lx->s[lx->i] - '0');
            if (v > (UINT64_C(1) << 62))
                return LFAIL(lx, "dimension too large");
            v = v * 10 + dg;
            any = true;
            lx->i++;
        }
        if (!any) {
            lx->i = at;
            return LFAIL(lx, "shape has a dimension that is not a "
                         "non-negative integer");
        }
        if (lx->i < lx->n && lx->s[lx->i] == 'L')
            lx->i++;
        if (info->ndim == BP_MAXDIM) {
            lx->i = at;
            return LFAIL(lx, "shape has more than %d dimensions", BP_MAXDIM);
        }
        info->shape[info->ndim++] = (int64_t)v;
        if (eat(lx, ')'))
            return BP_OK;
        if (!eat(lx, ','))
            return LFAIL(lx, "shape: expected ',' or ')'");
    }
}

static bp_status parse_header(lex_t *lx, bool as_bf16, npy_info_t *info)
{
    bool seen[3] = {false, false, false}, fortran = false;
    size_t fpos = 0;
    if (!eat(lx, '{'))
        return LFAIL(lx, "header is not a Python dict");
    while (!eat(lx, '}')) {
        char key[32];
        ws(lx);
        size_t kat = lx->i;
        bp_status st = str(lx, key, sizeof key);
        if (st)
            return st;
        int which = strcmp(key, "descr") == 0 ? 0
                  : strcmp(key, "fortran_order") == 0 ? 1
                  : strcmp(key, "shape") == 0 ? 2 : -1;
        if (which < 0 || seen[which]) {
            lx->i = kat;
            return LFAIL(lx, which < 0 ? "unknown key '%s' in header"
                                       : "duplicate key '%s' in header", key);
        }
        seen[which] = true;
        if (!eat(lx, ':'))
            return LFAIL(lx, "header: expected ':'");
        ws(lx);
        if (which == 0) {
            st = parse_descr(lx, as_bf16, info);
        } else if (which == 2) {
            st = parse_shape(lx, info);
        } else {
            fpos = lx->i;
            if (lx->n - lx->i >= 4 && memcmp(lx->s + lx->i, "True", 4) == 0)
                fortran = true, lx->i += 4;
            else if (lx->n - lx->i >= 5 &&
                     memcmp(lx->s + lx->i, "False", 5) == 0)
                lx->i += 5;
            else
                st = LFAIL(lx, "fortran_order is not True or False");
        }
        if (st)
            return st;
        if (!eat(lx, ',')) {
            if (eat(lx, '}'))
                break;
            return LFAIL(lx, "header: expected ',' or '}'");
        }
    }
    ws(lx);
    if (lx->i != lx->n)
        return LFAIL(lx, "unexpected text after the header dict");
    static const char *names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fail(lx->label, lx->err, lx->base, "header has no '%s'",
                        names[k]);
    int big = 0;
    for (int d = 0; d < info->ndim; d++)
        big += info->shape[d] > 1;
    if (fortran && big > 1)
        return fail(lx->label, lx->err, lx->base + fpos,
                    "Fortran-order arrays are not supported (save "
                    "np.ascontiguousarray(a) instead)");
    return BP_OK;
}

/* Magic, version and header length from the first bytes (avail of them):
 * sets *hstart and *hlen, or fails. */
static bp_status prelude(const unsigned char *d, size_t avail,
                         const char *label, bp_error_t *err, size_t *hstart,
                         size_t *hlen)
{
    if (avail < 8 || memcmp(d, "\x93NUMPY", 6) != 0)
        return fail(label, err, 0, "not a .npy file (no \\x93NUMPY magic)");
    unsigned major = d[6], minor = d[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return fail(label, err, 6, "unsupported .npy version %u.%u "
                    "(1.0, 2.0 and 3.0 are read)", major, minor);
    size_t lw = major == 1 ? 2 : 4;
    if (avail < 8 + lw)
        return fail(label, err, avail, "file ends inside the header length");
    size_t n = 0;
    for (size_t k = lw; k-- > 0;)
        n = n << 8 | d[8 + k];
    if (n > BP_NPY_MAX_HEADER)
        return fail(label, err, 8, "header length %zu exceeds %u bytes", n,
                    BP_NPY_MAX_HEADER);
    *hstart = 8 + lw;
    *hlen = n;
    return BP_OK;
}

static bp_status header_info(const unsigned char *d, size_t len,
                             const char *label, bool as_bf16,
                             npy_info_t *info, bp_error_t *err)
{
    size_t hs, hl;
    bp_status st = prelude(d, len, label, err, &hs, &hl);
    if (st)
        return st;
    if (len - hs < hl)
        return fail(label, err, len, "file ends inside the %zu-byte header",
                    hl);
    lex_t lx = {label, err, (const char *)d + hs, hl, 0, hs};
    if ((st = parse_header(&lx, as_bf16, info)))
        return st;
    info->data_off = hs + hl;
    return BP_OK;
}

/* Checks that exactly the data's bytes follow the header (have of them). */
static bp_status data_size(const npy_info_t *info, uint64_t have, const char *label,
                           bp_buf_t *out, bp_error_t *err)
{
    bp_status st = bp_buf_shape(out, info->dt, info->ndim, info->shape, err);
    if (st)
        return bp_error_prefix(err, "%s: ", label);
    uint64_t need = bp_buf_nbytes(out);
    if (have < need)
        return fail(label, err, info->data_off + have, "file ends inside the "
                    "data: %" PRIu64 " bytes present, %" PRIu64 " needed",
                    have, need);
    if (have > need)
        return fail(label, err, info->data_off + need, "%" PRIu64 " trailing "
                    "bytes after the data", have - need);
    return BP_OK;
}

/* Shapes the buffer, checks the data's size and allocates it. */
static bp_status shape_data(const npy_info_t *info, uint64_t have,
                            const char *label, bp_buf_t *out, bp_error_t *err)
{
    bp_status st = data_size(info, have, label, out, err);
    if (st)
        return st;
    uint64_t need = bp_buf_nbytes(out);
    out->data = malloc(need ? need : 1);
    if (!out->data)
        return bp_error_set(err, BP_ENOMEM, "%s: out of memory for %" PRIu64
                            " bytes", label, need);
    return BP_OK;
}

bp_status bp_npy_parse(const void *data, size_t len, const char *label,
                       bool as_bf16, bp_buf_t *out, bp_error_t *err)
{
    npy_info_t info;
    memset(out, 0, sizeof *out);
    bp_status st = header_info(data, len, label, as_bf16, &info, err);
    if (!st)
        st = shape_data(&info, len - info.data_off, label, out, err);
    if (st)
        return st;
    memcpy(out->data, (const unsigned char *)data + info.data_off,
           bp_buf_nbytes(out));
    return BP_OK;
}

bp_status bp_npy_layout(const void *head, size_t avail, uint64_t total,
                        const char *label, bool as_bf16, bp_npy_layout_t *out,
                        bp_error_t *err)
{
    npy_info_t info;
    memset(out, 0, sizeof *out);
    size_t hs, hl;
    bp_status st = prelude(head, avail, label, err, &hs, &hl);
    if (st)
        return st;
    if (total < hs + hl)
        return fail(label, err, total, "file ends inside the %zu-byte header", hl);
    if (avail < hs + hl)
        return bp_error_set(err, BP_EINTERNAL, "%s: %zu header bytes given, %zu needed",
                            label, avail, hs + hl);
    if ((st = header_info(head, hs + hl, label, as_bf16, &info, err)))
        return st;
    bp_buf_t shape;
    if ((st = data_size(&info, total - info.data_off, label, &shape, err)))
        return st;
    out->dt = info.dt;
    out->ndim = info.ndim;
    memcpy(out->shape, info.shape, sizeof out->shape);
    out->data_off = info.data_off;
    out->nbytes = bp_buf_nbytes(&shape);
    memcpy(out->descr, info.descr, sizeof out->descr);
    return BP_OK;
}

/* Reads up to n bytes; returns how many (fewer only at end of file). */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

bp_status bp_npy_read(const char *path, bool as_bf16, bp_buf_t *out,
                      bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    const char *why;
    int fd = bp_safe_path(path, &why);
    if (fd < 0)
        return bp_error_set(err, BP_EIO, "cannot open '%s': %s", path, why);
    struct stat sb;
    unsigned char pre[12], *hd = NULL;
    char *label = malloc(strlen(path) + 16);
    size_t hs, hl;
    npy_info_t info;
    bp_status st;
    if (!label) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    sprintf(label, "cannot read '%s'", path);
    ssize_t r = read_full(fd, pre, sizeof pre);
    if (r < 0 || fstat(fd, &sb) < 0) {
        st = bp_error_set(err, BP_EIO, "%s: %s", label,
                          strerror(errno));
        goto done;
    }
    if ((st = prelude(pre, (size_t)r, label, err, &hs, &hl)))
        goto done;
    if (!(hd = malloc(hs + hl + 1))) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(hd, pre, (size_t)r);
    ssize_t r2 = (size_t)r < hs + hl
               ? read_full(fd, hd + r, hs + hl - (size_t)r) : 0;
    if (r2 < 0) {
        st = bp_error_set(err, BP_EIO, "%s: %s", label,
                          strerror(errno));
        goto done;
    }
    size_t got = (size_t)r + (size_t)r2; /* may exceed hs + hl by a few */
    if ((st = header_info(hd, got < hs + hl ? got : hs + hl, label, as_bf16,
                          &info, err)))
        goto done;
    size_t extra = got - (hs + hl); /* data bytes already in hd */
    uint64_t have = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size - hs - hl
                                        : UINT64_MAX;
    if (have == UINT64_MAX) { /* a pipe: trust the header, check below */
        bp_buf_t tmp;
        if ((st = bp_buf_shape(&tmp, info.dt, info.ndim, info.shape, err)))
            goto done;
        have = bp_buf_nbytes(&tmp);
    }
    if ((st = shape_data(&info, have, label, out, err)))
        goto done;
    size_t need = bp_buf_nbytes(out);
    memcpy(out->data, hd + hs + hl, extra < need ? extra : need);
    if (extra < need) {
        r = read_full(fd, (char *)out->data + extra, need - extra);
        if (r < 0) {
            st = bp_error_set(err, BP_EIO, "%s: %s", label,
                              strerror(errno));
            goto done;
        }
        if ((size_t)r < need - extra) {
            st = fail(label, err, hs + hl + extra + (size_t)r, "file ends "
                      "inside the data");
            goto done;
        }
    }
    unsigned char one;
    if (extra > need || read_full(fd, &one, 1) == 1)
        st = fail(label, err, hs + hl + need, "trailing bytes after the data");
done:
    if (st)
        bp_buf_free(out);
    free(hd);
    free(label);
    close(fd);
    return st;
}
