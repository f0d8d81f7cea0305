/* Tests of rep_junit.c.  Reports are built by hand (comparisons from
 * bp_compare on small buffers), rendered into memory, and read back by a
 * small XML 1.0 parser written here: it enforces well-formedness (one root,
 * matched tags, quoted unique attributes, only the five predefined entities
 * and character references, no '<' or stray '&' in text, every character an
 * XML Char in well-formed UTF-8) and applies attribute-value normalisation,
 * so a tab or newline that was not escaped in an attribute comes back as a
 * space and fails the comparison.  Expected strings and bit patterns are
 * written out by hand.  The parser is itself tested on malformed input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "rep.h"
#include "report.h"

/* ---- a minimal XML reader ---- */

#define MAX_ATTR 16
#define MAX_KIDS 64

typedef struct node {
    char name[64];
    char *an[MAX_ATTR], *av[MAX_ATTR];
    int nattr;
    char text[8192]; /* character data of this element, decoded */
    size_t tlen;
    struct node *kid[MAX_KIDS];
    int nkids;
} node_t;

typedef struct {
    const char *s;
    size_t i, len;
    char err[256];
} xp_t;

static bool xfail(xp_t *p, const char *what)
{
    if (!p->err[0])
        snprintf(p->err, sizeof p->err, "%s at byte %zu", what, p->i);
    return false;
}

static bool is_xml_char(unsigned long c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
           (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* Decodes one strict UTF-8 character at p->i. */
static bool next_char(xp_t *p, unsigned long *cp, size_t *len)
{
    const unsigned char *s = (const unsigned char *)p->s + p->i;
    size_t left = p->len - p->i;
    unsigned long c = s[0], min;
    size_t n;
    if (c < 0x80)
        n = 1, min = 0;
    else if ((c & 0xe0) == 0xc0)
        n = 2, c &= 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, c &= 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        n = 4, c &= 0x07, min = 0x10000;
    else
        return xfail(p, "invalid UTF-8 lead byte");
    if (n > left)
        return xfail(p, "truncated UTF-8");
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return xfail(p, "invalid UTF-8 continuation");
        c = c << 6 | (s[k] & 0x3f);
    }
    if (c < min || (c >= 0xd800 && c <= 0xdfff))
        return xfail(p, "overlong or surrogate UTF-8");
    if (!is_xml_char(c))
        return xfail(p, "not an XML character");
    *cp = c;
    *len = n;
    return true;
}

static void put_utf8(char *out, size_t *o, size_t cap, unsigned long c)
{
    char b[4];
    size_t n;
    if (c < 0x80)
        b[0] = (char)c, n = 1;
    else if (c < 0x800)
        b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    else if (c < 0x10000)
        b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
        b[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    else
        b[0] = (char)(0xf0 | c >> 18), b[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
        b[2] = (char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (char)(0x80 | (c & 0x3f)), n = 4;
    if (*o + n < cap) {
        memcpy(out + *o, b, n);
        *o += n;
        out[*o] = '\0';
    }
}

/* After '&': a predefined entity or a character reference. */
static bool reference(xp_t *p, unsigned long *cp)
{
    static const struct { const char *name; char c; } ents[] = {
        {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    const char *s = p->s + p->i;
    for (size_t k = 0; k < 5; k++)
        if (strncmp(s, ents[k].name, strlen(ents[k].name)) == 0) {
            p->i += strlen(ents[k].name);
            *cp = (unsigned char)ents[k].c;
            return true;
        }
    if (*s != '#')
        return xfail(p, "unknown entity");
    bool hex = s[1] == 'x';
    char *end;
    unsigned long c = strtoul(s + 1 + hex, &end, hex ? 16 : 10);
    if (end == s + 1 + hex || *end != ';')
        return xfail(p, "bad character reference");
    if (!is_xml_char(c))
        return xfail(p, "character reference to a non-character");
    p->i = (size_t)(end + 1 - p->s);
    *cp = c;
    return true;
}

static void skip_ws(xp_t *p)
{
    while (p->i < p->len && strchr(" \t\r\n", p->s[p->i]))
        p->i++;
}

static bool name(xp_t *p, char *out, size_t cap)
{
    size_t n = 0;
    while (p->i < p->len && (strchr("_:-.", p->s[p->i]) ||
                             (p->s[p->i] >= 'a' && p->s[p->i] <= 'z') ||
                             (p->s[p->i] >= 'A' && p->s[p->i] <= 'Z') ||
                             (n && p->s[p->i] >= '0' && p->s[p->i] <= '9'))) {
        if (n + 1 < cap)
            out[n++] = p->s[p->i];
        p->i++;
    }
    out[n] = '\0';
    return n ? true : xfail(p, "expected a name");
}

static bool attr_value(xp_t *p, char **out)
{
    char q = p->s[p->i];
    if (q != '"' && q != '\'')
        return xfail(p, "attribute value not quoted");
    p->i++;
    size_t cap = p->len + 1, o = 0;
    char *v = malloc(cap);
    v[0] = '\0';
    while (p->i < p->len && p->s[p->i] != q) {
        unsigned long c;
        size_t n;
        if (p->s[p->i] == '<') {
            free(v);
            return xfail(p, "'<' in an attribute value");
        }
        if (p->s[p->i] == '&') {
            p->i++;
            if (!reference(p, &c)) {
                free(v);
                return false;
            }
        } else {
            if (!next_char(p, &c, &n)) {
                free(v);
                return false;
            }
            p->i += n;
            if (c == '\t' || c == '\n' || c == '\r') /* attribute normalisation */
                c = ' ';
        }
        put_utf8(v, &o, cap, c);
    }
    if (p->i >= p->len) {
        free(v);
        return xfail(p, "unterminated attribute value");
    }
    p->i++;
    *out = v;
    return true;
}

static void node_free(node_t *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->nattr; i++) {
        free(n->an[i]);
        free(n->av[i]);
    }
    for (int i = 0; i < n->nkids; i++)
        node_free(n->kid[i]);
    free(n);
}

static node_t *element(xp_t *p)
{
    if (p->s[p->i] != '<') {
        xfail(p, "expected '<'");
        return NULL;
    }
    p->i++;
    node_t *n = calloc(1, sizeof *n);
    if (!name(p, n->name, sizeof n->name))
        goto bad;
    for (;;) {
        size_t before = p->i;
        skip_ws(p);
        if (p->i >= p->len) {
            xfail(p, "unterminated start tag");
            goto bad;
        }
        if (p->s[p->i] == '/' || p->s[p->i] == '>')
            break;
        if (p->i == before) {
            xfail(p, "no space before an attribute");
            goto bad;
        }
        char an[64];
        if (!name(p, an, sizeof an))
            goto bad;
        skip_ws(p);
        if (p->s[p->i] != '=') {
            xfail(p, "expected '='");
            goto bad;
        }
        p->i++;
        skip_ws(p);
        char *v;
        if (!attr_value(p, &v))
            goto bad;
        for (int k = 0; k < n->nattr; k++)
            if (strcmp(n->an[k], an) == 0) {
                free(v);
                xfail(p, "duplicate attribute");
                goto bad;
            }
        if (n->nattr == MAX_ATTR) {
            free(v);
            xfail(p, "too many attributes");
            goto bad;
        }
        n->an[n->nattr] = strdup(an);
        n->av[n->nattr++] = v;
    }
    if (p->s[p->i] == '/') {
        if (p->s[p->i + 1] != '>') {
            xfail(p, "expected '/>'");
            goto bad;
        }
        p->i += 2;
        return n;
    }
    p->i++;
    for (;;) {
        if (p->i >= p->len) {
            xfail(p, "unclosed element");
            goto bad;
        }
        const char *s = p->s + p->i;
        if (s[0] == '<' && s[1] == '/') {
            char close[64];
            p->i += 2;
            if (!name(p, close, sizeof close))
                goto bad;
            if (strcmp(close, n->name) != 0) {
                xfail(p, "mismatched end tag");
                goto bad;
            }
            skip_ws(p);
            if (p->s[p->i] != '>') {
                xfail(p, "expected '>'");
                goto bad;
            }
            p->i++;
            return n;
        }
        if (s[0] == '<') {
            if (s[1] == '!' || s[1] == '?') {
                xfail(p, "comment, CDATA or PI (not expected here)");
                goto bad;
            }
            node_t *k = element(p);
            if (!k)
                goto bad;
            if (n->nkids == MAX_KIDS) {
                node_free(k);
                xfail(p, "too many children");
                goto bad;
            }
            n->kid[n->nkids++] = k;
            continue;
        }
        if (strncmp(s, "]]>", 3) == 0) {
            xfail(p, "']]>' in text");
            goto bad;
        }
        unsigned long c;
        size_t len;
        if (s[0] == '&') {
            p->i++;
            if (!reference(p, &c))
                goto bad;
        } else {
            if (!next_char(p, &c, &len))
                goto bad;
            p->i += len;
        }
        put_utf8(n->text, &n->tlen, sizeof n->text, c);
    }
bad:
    node_free(n);
    return NULL;
}

/* Parses a whole document (XML declaration, one root); NULL with err set. */
static node_t *parse_doc(const char *s, size_t len, char *err, size_t errn)
{
    xp_t p = {.s = s, .len = len};
    static const char decl[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    node_t *root = NULL;
    if (strlen(s) != len)
        xfail(&p, "NUL byte in the document");
    else if (strncmp(s, decl, strlen(decl)) != 0)
        xfail(&p, "no XML declaration");
    else {
        p.i = strlen(decl);
        skip_ws(&p);
        root = element(&p);
        if (root) {
            skip_ws(&p);
            if (p.i != p.len) {
                xfail(&p, "content after the root element");
                node_free(root);
                root = NULL;
            }
        }
    }
    snprintf(err, errn, "%s", p.err);
    return root;
}

static const char *attr(const node_t *n, const char *name)
{
    for (int i = 0; i < n->nattr; i++)
        if (strcmp(n->an[i], name) == 0)
            return n->av[i];
    return NULL;
}

static const node_t *child(const node_t *n, const char *name)
{
    for (int i = 0; i < n->nkids; i++)
        if (strcmp(n->kid[i]->name, name) == 0)
            return n->kid[i];
    return NULL;
}

static int count_kids(const node_t *n, const char *name)
{
    int c = 0;
    for (int i = 0; i < n->nkids; i++)
        c += strcmp(n->kid[i]->name, name) == 0;
    return c;
}

/* ---- building reports ---- */

static bp_buf_t f32s(const uint32_t *bits, size_t n)
{
    bp_buf_t b;
    bp_error_t err = {0};
    int64_t shape[1] = {(int64_t)n};
    ck_assert_int_eq(bp_buf_alloc(&b, BP_F32, 1, shape, &err), BP_OK);
    memcpy(b.data, bits, n * 4);
    return b;
}

/* Adds a comparison of a against b (4 f32 elements each). */
static void add_cmp(bp_report_t *rep, const char *probe, const char *output, const char *la,
                    const char *lb, const uint32_t *a, const uint32_t *b, bool counts,
                    bp_res_kind_t kind)
{
    bp_buf_t ba = f32s(a, 4), bb = f32s(b, 4);
    bp_error_t err = {0};
    bp_result_t r = {.probe = (char *)probe, .file = "probes/x.yaml", .line = 7,
                     .output = (char *)output, .dtype = BP_F32, .kind = kind,
                     .a = (char *)la, .b = (char *)lb, .compared = true, .counts = counts};
    bp_policy_exact(&r.policy);
    ck_assert_int_eq(bp_compare(&ba, &bb, &r.policy, NULL, &r.cmp, &err), BP_OK);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
    bp_buf_free(&ba);
    bp_buf_free(&bb);
}

/* A result that was not compared, with status st (counts: whether it can
 * fail the verdict). */
static void add_not_compared(bp_report_t *rep, const char *probe, const char *note,
                             bp_res_status_t st, bool counts)
{
    bp_result_t r = {.probe = (char *)probe, .output = "y", .dtype = BP_BF16,
                     .kind = BP_RES_GOLDEN, .a = "golden cpu-sleef", .b = "cpu",
                     .counts = counts, .status = st, .note = (char *)note};
    bp_policy_exact(&r.policy);
    ck_assert_ptr_nonnull(bp_report_add(rep, &r));
}

static void add_skipped(bp_report_t *rep, const char *probe, const char *note)
{
    add_not_compared(rep, probe, note, BP_RS_MISSING_GOLDEN, false);
}

static node_t *render(const bp_report_t *rep)
{
    char *buf = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(bp_rep_junit(f, rep), 0);
    fclose(f);
    node_t *root = parse_doc(buf, len, err, sizeof err);
    ck_assert_msg(root != NULL, "not well-formed: %s\n%s", err, buf);
    free(buf);
    return root;
}

static const uint32_t A[4] = {0x3f800000, 0x3f666666, 0x40fe2f5e, 0x00000000};
/* 9*(1/10) at [1]: one ulp above 0.9f. */
static const uint32_t B[4] = {0x3f800000, 0x3f666667, 0x40fe2f5e, 0x00000000};

START_TEST(t_structure)
{
    char *argv[] = {"run", "--junit", "x.xml"};
    bp_report_t rep;
    bp_report_init(&rep, 3, argv);
    add_cmp(&rep, "seed-div", "y", "golden cuda-sm90", "cuda", A, B, true, BP_RES_GOLDEN);
    add_cmp(&rep, "seed-div", "y", "golden cpu-sleef", "cpu", A, A, true, BP_RES_GOLDEN);
    add_cmp(&rep, "seed-div", "y", "cpu", "cuda", A, B, false, BP_RES_CROSS);
    add_skipped(&rep, "other", "no golden for probe 'other'");
    add_cmp(&rep, "other", "z", "golden oracle", "oracle", A, A, true, BP_RES_GOLDEN);
    node_t *root = render(&rep);

    ck_assert_str_eq(root->name, "testsuites");
    ck_assert_str_eq(attr(root, "tests"), "5");
    ck_assert_str_eq(attr(root, "failures"), "1");
    ck_assert_str_eq(attr(root, "skipped"), "1");
    ck_assert_str_eq(attr(root, "errors"), "0");
    ck_assert_int_eq(count_kids(root, "testsuite"), 2);
    const node_t *s1 = root->kid[0], *s2 = root->kid[1];
    ck_assert_str_eq(attr(s1, "name"), "bitprobe.seed-div");
    ck_assert_str_eq(attr(s1, "tests"), "3");
    ck_assert_str_eq(attr(s1, "failures"), "1");
    ck_assert_str_eq(attr(s2, "name"), "bitprobe.other");
    ck_assert_str_eq(attr(s2, "tests"), "2");
    ck_assert_str_eq(attr(s2, "skipped"), "1");
    const node_t *props = child(s1, "properties");
    ck_assert_ptr_nonnull(props);
    ck_assert_str_eq(attr(child(props, "property"), "value"),
                     "bitprobe run --junit x.xml");

    ck_assert_int_eq(count_kids(s1, "testcase"), 3);
    const node_t *fail = s1->kid[1], *ok = s1->kid[2], *info = s1->kid[3];
    ck_assert_str_eq(attr(fail, "classname"), "bitprobe.seed-div");
    ck_assert_str_eq(attr(fail, "name"), "y.fp32.cuda vs golden cuda-sm90");
    ck_assert_str_eq(attr(fail, "file"), "probes/x.yaml");
    ck_assert_str_eq(attr(fail, "line"), "7");
    const node_t *fl = child(fail, "failure");
    ck_assert_ptr_nonnull(fl);
    ck_assert_str_eq(attr(fl, "type"), "drift");
    const char *msg = attr(fl, "message");
    ck_assert_ptr_nonnull(strstr(msg, "1 of 4 elements differ (25%)"));
    ck_assert_ptr_nonnull(strstr(msg, "max 1 ulp at [1]"));
    /* The body starts with the message, then the mismatches with bits. */
    size_t ml = strlen(msg);
    ck_assert_msg(strncmp(fl->text, msg, ml) == 0 && fl->text[ml] == '\n',
                  "body does not start with the message line:\n%s", fl->text);
    ck_assert_ptr_nonnull(strstr(fl->text, "[1] 1 ulp"));
    ck_assert_ptr_nonnull(strstr(fl->text, "golden cuda-sm90: 0.89999997615814208984375 "
                                           "0x3f666666 0 01111110 11001100110011001100110"));
    ck_assert_ptr_nonnull(strstr(fl->text, "cuda: 0.900000035762786865234375 0x3f666667 "
                                           "0 01111110 11001100110011001100111"));

    ck_assert_str_eq(attr(ok, "name"), "y.fp32.cpu vs golden cpu-sleef");
    ck_assert_int_eq(ok->nkids, 0);

    /* Differs but does not count: passes, with the summary on system-out. */
    ck_assert_int_eq(info->nkids, 1);
    const node_t *out = child(info, "system-out");
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(strstr(out->text, "1 of 4 elements differ"));
    ck_assert_ptr_null(child(info, "failure"));

    const node_t *sk = child(s2->kid[1], "skipped");
    ck_assert_ptr_nonnull(sk);
    ck_assert_str_eq(attr(sk, "message"), "no golden for probe 'other'");
    ck_assert_str_eq(attr(s2->kid[1], "name"), "y.bf16.cpu vs golden cpu-sleef");
    ck_assert_ptr_null(attr(s2->kid[1], "file"));
    node_free(root);
    bp_report_free(&rep);
}
END_TEST

START_TEST(t_escaping)
{
    /* Markup characters, both quotes, tab/newline/CR, C0 controls, DEL,
     * a C1 control, invalid UTF-8 (stray byte, overlong, surrogate,
     * truncated) and the non-characters U+FFFE and U+FFFF. */
    static const char nasty[] =
        "a&b<c>d\"e'f\tg\nh\ri\x01j\x1fk\x7fl\xc2\x85m\xffn\xc0\x80o\xed\xa0\x80p"
        "\xef\xbf\xbeq\xef\xbf\xbfr\xc3\xa9s\xf0\x9f\x98\x80t\xe2\x82";
    /* What must come back: invalid characters dropped, the rest intact. */
    static const char want[] =
        "a&b<c>d\"e'f\tg\nh\rijk\x7fl\xc2\x85mnopqr\xc3\xa9s\xf0\x9f\x98\x80t";
    char *argv[] = {"run", "x&<y>\x01\xff"};
    bp_report_t rep;
    bp_report_init(&rep, 2, argv);
    add_skipped(&rep, nasty, nasty);
    add_cmp(&rep, nasty, nasty, nasty, "b]]>", A, B, true, BP_RES_GOLDEN);
    node_t *root = render(&rep);
    const node_t *s = root->kid[0];
    char want_cls[256], want_name[512];
    snprintf(want_cls, sizeof want_cls, "bitprobe.%s", want);
    ck_assert_str_eq(attr(s, "name"), want_cls);
    const node_t *sk = child(s->kid[1], "skipped");
    ck_assert_ptr_nonnull(sk);
    ck_assert_str_eq(attr(sk, "message"), want);
    ck_assert_str_eq(attr(s->kid[1], "classname"), want_cls);
    const node_t *tc = s->kid[2];
    snprintf(want_name, sizeof want_name, "%s.fp32.b]]> vs %s", want, want);
    ck_assert_str_eq(attr(tc, "name"), want_name);
    const node_t *fl = child(tc, "failure");
    ck_assert_ptr_nonnull(strstr(fl->text, "\n  b]]>: "));
    ck_assert_str_eq(attr(child(child(s, "properties"), "property"), "value"),
                     "bitprobe run 'x&<y>'");
    node_free(root);
    bp_report_free(&rep);
}
END_TEST

/* Nothing compared is an error: the counts say what the exit status says. */
START_TEST(t_empty)
{
    char *argv[] = {"diff"};
    bp_report_t rep;
    bp_report_init(&rep, 1, argv);
    ck_assert(bp_report_why_empty(&rep, "no probes matched", false));
    node_t *root = render(&rep);
    ck_assert_str_eq(root->name, "testsuites");
    ck_assert_str_eq(attr(root, "tests"), "1");
    ck_assert_str_eq(attr(root, "errors"), "1");
    ck_assert_int_eq(root->nkids, 1);
    const node_t *tc = child(root->kid[0], "testcase");
    ck_assert_str_eq(attr(tc, "name"), "verdict");
    const node_t *e = child(tc, "error");
    ck_assert_str_eq(attr(e, "message"), "error: nothing compared (no probes matched)");
    ck_assert_str_eq(attr(e, "type"), "nothing compared");
    node_free(root);
    bp_report_free(&rep);
}
END_TEST

/* Every status that fails the verdict is a failure (exit 1) or an error
 * (exit 2) with its status as the type; informational ones are skipped. */
START_TEST(t_statuses)
{
    char *argv[] = {"diff"};
    bp_report_t rep;
    bp_report_init(&rep, 1, argv);
    add_not_compared(&rep, "t", "only in A.safetensors", BP_RS_ONLY_A, true);
    add_not_compared(&rep, "t", "shapes [2] and [3]", BP_RS_NOT_COMPARABLE, true);
    add_not_compared(&rep, "t", "no golden", BP_RS_MISSING_GOLDEN, true);
    add_not_compared(&rep, "t", "cannot load", BP_RS_ERROR, false);
    add_not_compared(&rep, "t", "no CUDA driver", BP_RS_SKIPPED_BACKEND, false);
    add_cmp(&rep, "t", "y", "golden oracle", "oracle", A, A, true, BP_RES_GOLDEN);
    node_t *root = render(&rep);
    ck_assert_str_eq(attr(root, "tests"), "6");
    ck_assert_str_eq(attr(root, "failures"), "2");
    ck_assert_str_eq(attr(root, "errors"), "2");
    ck_assert_str_eq(attr(root, "skipped"), "1");
    const node_t *s = root->kid[0];
    static const char *const kind[5] = {"failure", "failure", "error", "error", "skipped"};
    static const char *const type[5] = {"only in a", "not comparable", "missing golden",
                                        "error", NULL};
    for (int i = 0; i < 5; i++) {
        const node_t *k = child(s->kid[i + 1], kind[i]);
        ck_assert_msg(k != NULL, "testcase %d has no <%s>", i, kind[i]);
        if (type[i])
            ck_assert_str_eq(attr(k, "type"), type[i]);
    }
    ck_assert_str_eq(attr(child(s->kid[1], "failure"), "message"), "only in A.safetensors");
    node_free(root);
    bp_report_free(&rep);
}
END_TEST

/* The reader must reject what is not well-formed, or the tests above
 * would prove nothing. */
START_TEST(t_reader_rejects)
{
    static const char *bad[] = {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>&</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>&foo;</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a x=\"1\" x=\"2\"/>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a x=1/>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a x=\"<\"/>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>\x01</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>&#1;</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>\xff</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>\xed\xa0\x80</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>\xef\xbf\xbe</a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a></b>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a/><b/>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>]]></a>",
        "<a/>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256];
        node_t *n = parse_doc(bad[i], strlen(bad[i]), err, sizeof err);
        ck_assert_msg(n == NULL, "accepted: %s", bad[i]);
    }
    static const char good[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<a x=\"1&#10;2\" y='&lt;&amp;'>t&#x41;<b/>\xc3\xa9</a>\n";
    char err[256];
    node_t *n = parse_doc(good, strlen(good), err, sizeof err);
    ck_assert_msg(n != NULL, "rejected the good document: %s", err);
    ck_assert_str_eq(attr(n, "x"), "1\n2");
    ck_assert_str_eq(attr(n, "y"), "<&");
    ck_assert_str_eq(n->text, "tA\xc3\xa9");
    node_free(n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rep_junit");
    TCase *tc = tcase_create("junit");
    tcase_add_test(tc, t_structure);
    tcase_add_test(tc, t_escaping);
    tcase_add_test(tc, t_empty);
    tcase_add_test(tc, t_statuses);
    tcase_add_test(tc, t_reader_rejects);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
