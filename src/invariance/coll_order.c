/* Reduction orders from cancellation probes (coll_order.h). */
#include "coll_order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* ---- trees ----------------------------------------------------------- */

void bp_coll_tree_chain(bp_coll_tree_t *t, int n, const int *ranks)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    int acc = ranks[0];
    for (int k = 0; k + 1 < n; k++) {
        t->a[k] = (int8_t)acc;
        t->b[k] = (int8_t)ranks[k + 1];
        acc = n + k;
    }
}

/* Leaves [lo, hi) pairwise into t from internal node *k on; returns the
 * subtree's node id. */
static int pairwise(bp_coll_tree_t *t, int lo, int hi, int *k)
{
    if (hi - lo == 1)
        return lo;
    int mid = lo + (hi - lo + 1) / 2;
    int a = pairwise(t, lo, mid, k), b = pairwise(t, mid, hi, k);
    t->a[*k] = (int8_t)a;
    t->b[*k] = (int8_t)b;
    return t->n + (*k)++;
}

void bp_coll_tree_pairwise(bp_coll_tree_t *t, int n)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    int k = 0;
    pairwise(t, 0, n, &k);
}

typedef struct {
    int size, min;
} shape_t;

static shape_t shape_of(const bp_coll_tree_t *t, int node)
{
    if (node < t->n)
        return (shape_t){1, node};
    shape_t a = shape_of(t, t->a[node - t->n]), b = shape_of(t, t->b[node - t->n]);
    return (shape_t){a.size + b.size, a.min < b.min ? a.min : b.min};
}

/* The child formed from more ranks first; then the lower rank. */
static bool goes_first(const bp_coll_tree_t *t, int x, int y)
{
    shape_t a = shape_of(t, x), b = shape_of(t, y);
    return a.size != b.size ? a.size > b.size : a.min < b.min;
}

static void put_node(const bp_coll_tree_t *t, int node, bool outer, char *out, size_t n,
                     size_t *w)
{
    if (*w >= n)
        return;
    if (node < t->n) {
        *w += (size_t)snprintf(out + *w, n - *w, "r%d", node);
        return;
    }
    int x = t->a[node - t->n], y = t->b[node - t->n];
    if (!goes_first(t, x, y)) {
        int s = x;
        x = y;
        y = s;
    }
    if (!outer && *w < n)
        *w += (size_t)snprintf(out + *w, n - *w, "(");
    put_node(t, x, false, out, n, w);
    if (*w < n)
        *w += (size_t)snprintf(out + *w, n - *w, "+");
    put_node(t, y, false, out, n, w);
    if (!outer && *w < n)
        *w += (size_t)snprintf(out + *w, n - *w, ")");
}

void bp_coll_tree_format(const bp_coll_tree_t *t, char *out, size_t n)
{
    size_t w = 0;
    if (n)
        out[0] = '\0';
    if (t->n <= 0)
        return;
    put_node(t, t->n == 1 ? 0 : 2 * t->n - 2, true, out, n, &w);
    if (w >= n && n)
        out[n - 1] = '\0';
}

/* Significand bits and the lowest exponent of a normal number (frexp's
 * convention) of dt. */
static void format_of(bp_dtype_t dt, int *p, int *emin)
{
    switch (dt) {
    case BP_BF16: *p = 8, *emin = -125; break;
    case BP_F16: *p = 11, *emin = -13; break;
    case BP_F64: *p = 53, *emin = -1021; break;
    default: *p = 24, *emin = -125;
    }
}

/* v rounded once to p bits (nearest even), subnormals below 2^(emin-1). */
static double round_bits(double v, int p, int emin)
{
    if (v == 0 || !isfinite(v) || p >= 53)
        return v;
    int e;
    frexp(v, &e);
    int q = (e < emin ? emin : e) - p;
    return ldexp(nearbyint(ldexp(v, -q)), q);
}

/* s + e (e the error of the double sum s, |e| <= half an ulp of s)
 * rounded once to p bits: s's rounding, unless s lies exactly halfway
 * between two p-bit numbers and e says on which side the sum is. */
static double round_sum(double s, double e, int p, int emin)
{
    double r = round_bits(s, p, emin);
    if (e == 0 || r == s || p >= 53)
        return r;
    int ex;
    frexp(s, &ex);
    double half = ldexp(1.0, (ex < emin ? emin : ex) - p - 1);
    if (fabs(s - r) != half)
        return r; /* not a midpoint: e cannot cross one */
    double other = r < s ? r + 2 * half : r - 2 * half;
    return (e > 0) == (r < s) ? other : r;
}

double bp_coll_round(bp_dtype_t dt, double v)
{
    int p, emin;
    format_of(dt, &p, &emin);
    return round_bits(v, p, emin);
}

float bp_coll_tree_eval(const bp_coll_tree_t *t, const float *v, bp_dtype_t dt)
{
    double val[2 * BP_COLL_ORDER_MAX];
    for (int i = 0; i < t->n; i++)
        val[i] = v[i];
    if (t->n == 1)
        return (float)bp_coll_round(dt, val[0]);
    for (int k = 0; k + 1 < t->n; k++) {
        /* the exact sum of two values (TwoSum: s + e) rounded once, as
         * CUDA's __hadd and fp32 addition do */
        double x = val[t->a[k]], y = val[t->b[k]], s = x + y, bb = s - x;
        double e = (x - (s - bb)) + (y - bb);
        int p, emin;
        format_of(dt, &p, &emin);
        val[t->n + k] = t->prec[k] ? round_sum(s, e, t->prec[k], -125)
                                   : round_sum(s, e, p, emin);
    }
    return (float)bp_coll_round(dt, val[2 * t->n - 2]);
}

/* ---- the probe layout ------------------------------------------------ */

int bp_coll_probe_levels(bp_dtype_t dt, int lv[2])
{
    int p, emin;
    format_of(dt, &p, &emin);
    if (p >= 24) {
        lv[0] = 26;
        return 1;
    }
    lv[0] = p + 2;
    lv[1] = 26;
    return 2;
}

static int triples(int w)
{
    return w < 3 ? 0 : w * (w - 1) * (w - 2) / 6;
}

size_t bp_coll_probe_block(bp_dtype_t dt, int world)
{
    int lv[2];
    if (world < 3 || world > BP_COLL_ORDER_MAX)
        return 0;
    return (size_t)bp_coll_probe_levels(dt, lv) * 3u * (size_t)triples(world);
}

/* Triple number t of W ranks in lexicographic order. */
static void triple(int w, int t, int *x, int *y, int *z)
{
    for (int a = 0; a < w; a++)
        for (int b = a + 1; b < w; b++) {
            int c = w - b - 1; /* triples with this (a, b) */
            if (t < c) {
                *x = a, *y = b, *z = b + 1 + t;
                return;
            }
            t -= c;
        }
    *x = *y = *z = 0;
}

static double base_of(bp_dtype_t dt)
{
    return dt == BP_F16 ? 1024.0 : 1.0;
}

double bp_coll_probe_value(bp_dtype_t dt, int world, int rank, uint64_t i)
{
    size_t q = bp_coll_probe_block(dt, world);
    if (!q)
        return 0.0;
    int lv[2];
    bp_coll_probe_levels(dt, lv);
    size_t j = (size_t)(i % q), per = 3u * (size_t)triples(world);
    int level = lv[j / per];
    size_t rem = j % per;
    int x, y, z;
    triple(world, (int)(rem / 3), &x, &y, &z);
    int h = (int)(rem % 3), s_on = h == 0 ? z : h == 1 ? y : x;
    int plus = h == 2 ? y : x, minus = h == 0 ? y : z;
    double b = base_of(dt);
    if (rank == s_on)
        return ldexp(b, -level);
    if (rank == plus)
        return b;
    if (rank == minus)
        return -b;
    return 0.0;
}

/* ---- inference ------------------------------------------------------- */

enum { A_XY, A_XZ, A_YZ, A_EXACT, A_BAD };

typedef struct {
    int w, nlev, lv[2], nt;
    size_t q, words;
    int (*idx)[BP_COLL_ORDER_MAX][BP_COLL_ORDER_MAX]; /* triple number of x<y<z */
} layout_t;

static bool nonzero(bp_dtype_t dt, uint64_t bits)
{
    uint64_t mag = dt == BP_F32 ? bits & 0x7fffffffu : bits & 0x7fffu;
    return mag != 0;
}

/* The answer of triple t at level l from a block's survival bits. */
static int answer(const layout_t *L, const uint64_t *pat, int l, int t)
{
    size_t base = (size_t)l * 3u * (size_t)L->nt + 3u * (size_t)t;
    bool s[3];
    for (int h = 0; h < 3; h++)
        s[h] = pat[(base + (size_t)h) / 64] >> ((base + (size_t)h) % 64) & 1;
    int k = s[0] + s[1] + s[2];
    if (k == 3)
        return A_EXACT;
    if (k != 1)
        return A_BAD;
    return s[0] ? A_XY : s[1] ? A_XZ : A_YZ;
}

typedef struct {
    const layout_t *L;
    int ans[BP_COLL_ORDER_MAX * BP_COLL_ORDER_MAX * BP_COLL_ORDER_MAX]; /* by triple */
} answers_t;

/* Whether x and y (distinct) form first among x, y, z. */
static bool cherry(const answers_t *A, int x, int y, int z)
{
    int v[3] = {x, y, z};
    /* sort, remembering where x and y went */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (v[j] < v[i]) {
                int s = v[i];
                v[i] = v[j];
                v[j] = s;
            }
    int a = A->ans[A->L->idx[v[0]][v[1]][v[2]]];
    bool hx0 = x == v[0] || y == v[0], hx1 = x == v[1] || y == v[1],
         hx2 = x == v[2] || y == v[2];
    return (a == A_XY && hx0 && hx1) || (a == A_XZ && hx0 && hx2) ||
           (a == A_YZ && hx1 && hx2);
}

/* BUILD over the ranks in mask; -1 when the answers fit no binary tree. */
static int build(const answers_t *A, unsigned mask, bp_coll_tree_t *t, int *k)
{
    int m[BP_COLL_ORDER_MAX], n = 0;
    for (int i = 0; i < t->n; i++)
        if (mask >> i & 1)
            m[n++] = i;
    if (n == 1)
        return m[0];
    int comp[BP_COLL_ORDER_MAX];
    for (int i = 0; i < n; i++)
        comp[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            bool join = n == 2;
            for (int l = 0; l < n && !join; l++)
                join = l != i && l != j && cherry(A, m[i], m[j], m[l]);
            if (join) {
                int from = comp[j], to = comp[i];
                for (int q = 0; q < n; q++)
                    if (comp[q] == from)
                        comp[q] = to;
            }
        }
    unsigned parts[2] = {0, 0};
    int first = comp[0], second = -1;
    for (int i = 0; i < n; i++) {
        if (comp[i] == first)
            parts[0] |= 1u << m[i];
        else if (second < 0 || comp[i] == second) {
            second = comp[i];
            parts[1] |= 1u << m[i];
        } else {
            return -1; /* more than two parts: no binary node */
        }
    }
    if (n == 2) {
        parts[0] = 1u << m[0];
        parts[1] = 1u << m[1];
    } else if (!parts[1]) {
        return -1;
    }
    int a = build(A, parts[0], t, k);
    int b = a < 0 ? -1 : build(A, parts[1], t, k);
    if (b < 0)
        return -1;
    t->a[*k] = (int8_t)a;
    t->b[*k] = (int8_t)b;
    return t->n + (*k)++;
}

/* Leaves under node, as a mask. */
static unsigned leaves(const bp_coll_tree_t *t, int node)
{
    if (node < t->n)
        return 1u << node;
    return leaves(t, t->a[node - t->n]) | leaves(t, t->b[node - t->n]);
}

/* The tree's own answer for the triple x < y < z. */
static int tree_answer(const bp_coll_tree_t *t, int x, int y, int z)
{
    /* the deepest internal node holding two of the three holds the cherry */
    for (int k = 0; k + 1 < t->n; k++) {
        unsigned m = leaves(t, t->n + k);
        int in = (m >> x & 1) + (m >> y & 1) + (m >> z & 1);
        if (in == 2)
            return !(m >> z & 1) ? A_XY : !(m >> y & 1) ? A_XZ : A_YZ;
    }
    return A_BAD;
}

static const char *dt_word(bp_dtype_t dt)
{
    return bp_dtype_name(dt);
}

/* Decodes one block's survival pattern into an order. */
static void decode(const layout_t *L, bp_dtype_t dt, const uint64_t *pat, bp_coll_ord_t *o)
{
    memset(o, 0, sizeof *o);
    answers_t A;
    A.L = L;
    int top = -1;
    bool all_exact = true;
    for (int l = 0; l < L->nlev; l++) {
        bool full = true;
        for (int t = 0; t < L->nt; t++) {
            int a = answer(L, pat, l, t);
            full &= a <= A_YZ;
            all_exact &= a == A_EXACT;
        }
        if (full && top < 0)
            top = l;
    }
    if (top < 0) {
        o->kind = all_exact ? BP_ORD_EXACT : BP_ORD_MIXED;
        snprintf(o->text, sizeof o->text, "%s", all_exact ? "exact sum" : "mixed");
        snprintf(o->width, sizeof o->width, "%s",
                 all_exact ? "every probe survived: partial sums wider than fp32"
                           : "the answers fit no order (an order change inside the block)");
        return;
    }
    for (int t = 0; t < L->nt; t++)
        A.ans[t] = answer(L, pat, top, t);
    bp_coll_tree_t *tr = &o->tree;
    memset(tr, 0, sizeof *tr);
    tr->n = L->w;
    int k = 0;
    bool ok = build(&A, (1u << L->w) - 1, tr, &k) >= 0 && k == L->w - 1;
    for (int t = 0; ok && t < L->nt; t++) {
        int x, y, z;
        triple(L->w, t, &x, &y, &z);
        ok = tree_answer(tr, x, y, z) == A.ans[t];
    }
    /* each node's width: the levels at which its triples absorb */
    bool wide_any = false, wider_fp32 = false;
    for (int n = 0; ok && n + 2 < L->w; n++) {  /* the root is not observable */
        unsigned sa = leaves(tr, tr->a[n]), sb = leaves(tr, tr->b[n]),
                 in = sa | sb;
        int lowest_abs = -1;
        for (int l = 0; l < L->nlev && ok; l++) {
            int seen = -1;
            for (int x = 0; x < L->w; x++)
                for (int y = 0; y < L->w; y++)
                    for (int z = 0; z < L->w; z++) {
                        if (!(sa >> x & 1) || !(sb >> y & 1) || (in >> z & 1))
                            continue;
                        int v[3] = {x, y, z};
                        for (int i = 0; i < 3; i++)
                            for (int j = i + 1; j < 3; j++)
                                if (v[j] < v[i]) {
                                    int s = v[i];
                                    v[i] = v[j];
                                    v[j] = s;
                                }
                        int a = answer(L, pat, l, L->idx[v[0]][v[1]][v[2]]);
                        int absorbed = a == A_EXACT ? 0 : a == tree_answer(tr, v[0], v[1], v[2]) ? 1
                                                                                               : -1;
                        if (absorbed < 0 || (seen >= 0 && absorbed != seen))
                            ok = false;
                        seen = absorbed;
                    }
            if (seen == 1 && lowest_abs < 0)
                lowest_abs = l;
        }
        /* absorbed at the lowest level: the dtype's width; only at fp32's
         * level: fp32; never: wider */
        tr->prec[n] = lowest_abs == 0 ? 0 : lowest_abs > 0 ? 24 : 53;
        wide_any |= lowest_abs != 0;
        wider_fp32 |= lowest_abs < 0;
    }
    if (!ok) {
        o->kind = BP_ORD_MIXED;
        snprintf(o->text, sizeof o->text, "mixed");
        snprintf(o->width, sizeof o->width,
                 "the answers fit no order (an order change inside the block)");
        return;
    }
    o->kind = BP_ORD_TREE;
    bp_coll_tree_format(tr, o->text, sizeof o->text);
    if (!wide_any)
        snprintf(o->width, sizeof o->width, "every partial sum rounded to %s", dt_word(dt));
    else {
        /* name the nodes kept wider */
        size_t w = (size_t)snprintf(o->width, sizeof o->width, "kept wider than %s%s:",
                                    dt_word(dt), wider_fp32 ? " (some wider than fp32)"
                                                            : " (fp32)");
        for (int n = 0; n + 2 < L->w && w < sizeof o->width; n++)
            if (tr->prec[n]) {
                char txt[BP_COLL_TREE_TEXT];
                size_t tw = 0;
                put_node(tr, tr->n + n, false, txt, sizeof txt, &tw);
                w += (size_t)snprintf(o->width + w, sizeof o->width - w, " %s", txt);
            }
    }
}

static int find_ord(bp_coll_order_t *o, const bp_coll_ord_t *d)
{
    for (size_t i = 0; i < o->nords; i++)
        if (o->ords[i].kind == d->kind && !strcmp(o->ords[i].text, d->text) &&
            !strcmp(o->ords[i].width, d->width))
            return (int)i;
    if (o->nords == BP_COLL_MAX_ORDS) {
        o->too_many_ords = true;
        return -1;
    }
    o->ords[o->nords] = *d;
    o->ords[o->nords].elements = 0;
    o->ords[o->nords].runs = 0;
    return (int)o->nords++;
}

/* Survival bit of query q (0 <= q < Q) of a block under order d. */
static bool expect(const layout_t *L, bp_dtype_t dt, const bp_coll_ord_t *d, size_t q)
{
    if (d->kind == BP_ORD_EXACT)
        return true;
    float v[BP_COLL_ORDER_MAX];
    for (int r = 0; r < L->w; r++)
        v[r] = (float)bp_coll_probe_value(dt, L->w, r, q);
    return bp_coll_tree_eval(&d->tree, v, dt) != 0.0f;
}

typedef struct {
    uint64_t first, count;
    int ord;
    uint64_t amb_lo, amb_hi;
} erun_t;

/* The position in [lo, hi] with the most trailing zero bits (NCCL cuts at
 * round offsets), the lowest among equals. */
static uint64_t roundest(uint64_t lo, uint64_t hi)
{
    uint64_t best = lo;
    int bz = lo ? __builtin_ctzll(lo) : 64;
    for (uint64_t j = lo + 1; j <= hi && bz < 64; j++) {
        int z = __builtin_ctzll(j);
        if (z > bz)
            best = j, bz = z;
    }
    return best;
}

/* Where, inside [lo, hi), order a ends and order b begins: the splits j
 * at which the survival bits before j are a's and from j on b's form an
 * interval [*jlo, *jhi]; false when no split fits. */
static bool split(const layout_t *L, bp_dtype_t dt, const void *result, const bp_coll_ord_t *a,
                  const bp_coll_ord_t *b, uint64_t lo, uint64_t hi, uint64_t *jlo,
                  uint64_t *jhi)
{
    uint64_t len = hi - lo;
    bool *ok_a = malloc((size_t)len + 1), *ok_b = malloc((size_t)len + 1);
    bool found = false;
    if (!ok_a || !ok_b) {
        free(ok_a);
        free(ok_b);
        return false;
    }
    /* ok_a[j]: elements [lo, lo + j) agree with a; ok_b[j]: [lo + j, hi) with b */
    ok_a[0] = true;
    for (uint64_t j = 0; j < len; j++) {
        bool got = nonzero(dt, bp_dtype_load_bits(dt, result, (size_t)(lo + j)));
        ok_a[j + 1] = ok_a[j] && got == expect(L, dt, a, (size_t)((lo + j) % L->q));
    }
    ok_b[len] = true;
    for (uint64_t j = len; j-- > 0;) {
        bool got = nonzero(dt, bp_dtype_load_bits(dt, result, (size_t)(lo + j)));
        ok_b[j] = ok_b[j + 1] && got == expect(L, dt, b, (size_t)((lo + j) % L->q));
    }
    for (uint64_t j = 0; j <= len; j++)
        if (ok_a[j] && ok_b[j]) {
            if (!found)
                *jlo = lo + j;
            *jhi = lo + j;
            found = true;
        }
    free(ok_a);
    free(ok_b);
    return found;
}

/* Block orders into element runs, the changes placed inside their blocks
 * (a block that straddles a change answers partly for each side: it is
 * decoded as some third order, as mixed, or as one of the two). */
static bp_status runs_of(bp_coll_order_t *o, const layout_t *L, bp_dtype_t dt,
                         const void *result, const int *bord, uint64_t blocks, bp_error_t *err)
{
    size_t cap = 64, n = 0;
    erun_t *er = malloc(cap * sizeof *er);
    if (!er)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (uint64_t b = 0; b < blocks; b++) {
        if (n && er[n - 1].ord == bord[b]) {
            er[n - 1].count += L->q;
            continue;
        }
        if (n == cap) {
            erun_t *ne = realloc(er, (cap *= 2) * sizeof *er);
            if (!ne) {
                free(er);
                return bp_error_set(err, BP_ENOMEM, "out of memory");
            }
            er = ne;
        }
        er[n++] = (erun_t){b * L->q, L->q, bord[b], 0, 0};
    }
    for (size_t k = 1; k < n; k++) {
        erun_t *p = &er[k - 1], *c = &er[k];
        if (!p->count || p->ord < 0)
            continue;
        /* a one-block run between two other orders: a straddling block */
        bool gap = c->count == L->q && k + 1 < n && er[k + 1].ord >= 0 &&
                   er[k + 1].ord != p->ord;
        erun_t *nx = gap ? &er[k + 1] : c;
        if (nx->ord < 0 || nx->ord == p->ord)
            continue;
        uint64_t lo = p->first + p->count - (p->count < L->q ? p->count : L->q);
        uint64_t hi = nx->first + (nx->count < L->q ? nx->count : L->q);
        uint64_t jlo, jhi;
        if (!split(L, dt, result, &o->ords[p->ord], &o->ords[nx->ord], lo, hi, &jlo, &jhi))
            continue;
        uint64_t end = nx->first + nx->count, j = roundest(jlo, jhi);
        p->count = j - p->first;
        if (gap)
            c->count = 0;
        nx->first = j;
        nx->count = end - j;
        nx->amb_lo = j - jlo;
        nx->amb_hi = jhi - j;
    }
    /* drop emptied runs, merge neighbours, count */
    for (size_t i = 0; i < o->nords; i++)
        o->ords[i].elements = o->ords[i].runs = 0;
    o->mixed = 0;
    size_t ocap = 0;
    bp_status st = BP_OK;
    for (size_t k = 0; k < n && !st; k++) {
        erun_t *r = &er[k];
        if (!r->count)
            continue;
        if (r->ord >= 0)
            o->ords[r->ord].elements += r->count;
        else
            o->mixed += r->count;
        if (o->nruns && o->runs[o->nruns - 1].ord == r->ord) {
            o->runs[o->nruns - 1].count += r->count;
            continue;
        }
        if (r->ord >= 0)
            o->ords[r->ord].runs++;
        if (o->nruns == BP_COLL_MAX_RUNS) {
            o->runs_cut = true;
            continue;
        }
        if (o->nruns == ocap) {
            size_t nc = ocap ? ocap * 2 : 64;
            bp_coll_orun_t *nr = realloc(o->runs, nc * sizeof *nr);
            if (!nr) {
                st = bp_error_set(err, BP_ENOMEM, "out of memory");
                break;
            }
            o->runs = nr;
            ocap = nc;
        }
        o->runs[o->nruns++] = (bp_coll_orun_t){r->first, r->count, r->ord, r->amb_lo, r->amb_hi};
    }
    free(er);
    /* orders seen only in straddling blocks were not orders */
    int map[BP_COLL_MAX_ORDS];
    size_t k = 0;
    for (size_t i = 0; i < o->nords; i++) {
        map[i] = o->ords[i].elements ? (int)k : -1;
        if (o->ords[i].elements)
            o->ords[k++] = o->ords[i];
    }
    o->nords = k;
    for (size_t i = 0; i < o->nruns; i++)
        if (o->runs[i].ord >= 0)
            o->runs[i].ord = map[o->runs[i].ord];
    return st;
}

#define CACHE 256

bp_status bp_coll_order_infer(bp_dtype_t dt, int world, const void *result, uint64_t n,
                              bp_coll_order_t *o, bp_error_t *err)
{
    memset(o, 0, sizeof *o);
    o->world = world;
    o->dtype = dt;
    o->n = n;
    if (world <= 2) {
        o->done = true;
        o->probed = n;
        bp_coll_ord_t *d = &o->ords[o->nords++];
        d->kind = BP_ORD_SINGLE;
        static const int r01[2] = {0, 1};
        bp_coll_tree_chain(&d->tree, world == 2 ? 2 : 1, r01);
        snprintf(d->text, sizeof d->text, "%s", world == 2 ? "r0+r1" : "r0");
        snprintf(d->width, sizeof d->width, "%s", world == 2 ? "one addition: no order to "
                                                               "infer" : "no addition");
        d->elements = n;
        d->runs = 1;
        if (!n)
            return BP_OK;
        if (!(o->runs = malloc(sizeof *o->runs)))
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        o->runs[0] = (bp_coll_orun_t){0, n, 0, 0, 0};
        o->nruns = 1;
        return BP_OK;
    }
    if (world > BP_COLL_ORDER_MAX) {
        snprintf(o->why, sizeof o->why, "orders are inferred up to %d ranks",
                 BP_COLL_ORDER_MAX);
        return BP_OK;
    }
    layout_t L = {.w = world};
    L.nlev = bp_coll_probe_levels(dt, L.lv);
    L.nt = triples(world);
    L.q = bp_coll_probe_block(dt, world);
    L.words = (L.q + 63) / 64;
    o->block = L.q;
    if (n < L.q) {
        snprintf(o->why, sizeof o->why, "the message (%llu elements) is shorter than one "
                 "probe block (%zu elements)", (unsigned long long)n, L.q);
        return BP_OK;
    }
    uint64_t blocks = n / L.q;
    L.idx = calloc(BP_COLL_ORDER_MAX, sizeof *L.idx);
    uint64_t *pat = calloc(L.words, sizeof *pat), *prev = calloc(L.words, sizeof *prev);
    uint64_t *cpat = calloc((size_t)CACHE * L.words, sizeof *cpat);
    int *bord = malloc((size_t)blocks * sizeof *bord);
    int cord[CACHE], ncache = 0;
    bp_status st = BP_OK;
    if (!L.idx || !pat || !prev || !cpat || !bord)
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int t = 0; !st && t < L.nt; t++) {
        int x, y, z;
        triple(world, t, &x, &y, &z);
        L.idx[x][y][z] = t;
    }
    int prev_ord = -2;
    size_t es = bp_dtype_info(dt)->size, bb = L.q * es;
    for (uint64_t b = 0; !st && b < blocks; b++) {
        /* a block with the previous one's bytes has its answers */
        if (b && !memcmp((const char *)result + b * bb, (const char *)result + (b - 1) * bb, bb)) {
            bord[b] = prev_ord;
            continue;
        }
        memset(pat, 0, L.words * sizeof *pat);
        for (size_t j = 0; j < L.q; j++)
            if (nonzero(dt, bp_dtype_load_bits(dt, result, (size_t)(b * L.q + j))))
                pat[j / 64] |= 1ull << (j % 64);
        int ord;
        if (b && !memcmp(pat, prev, L.words * sizeof *pat)) {
            ord = prev_ord;
        } else {
            ord = -2;
            for (int c = 0; c < ncache && ord == -2; c++)
                if (!memcmp(cpat + (size_t)c * L.words, pat, L.words * sizeof *pat))
                    ord = cord[c];
            if (ord == -2) {
                bp_coll_ord_t d;
                decode(&L, dt, pat, &d);
                ord = d.kind == BP_ORD_MIXED ? -1 : find_ord(o, &d);
                if (ncache < CACHE) {
                    memcpy(cpat + (size_t)ncache * L.words, pat, L.words * sizeof *pat);
                    cord[ncache++] = ord;
                }
            }
            memcpy(prev, pat, L.words * sizeof *pat);
            prev_ord = ord;
        }
        bord[b] = ord;
    }
    o->probed = blocks * L.q;
    if (!st)
        st = runs_of(o, &L, dt, result, bord, blocks, err);
    o->done = !st;
    free(L.idx);
    free(pat);
    free(prev);
    free(cpat);
    free(bord);
    return st;
}

void bp_coll_order_free(bp_coll_order_t *o)
{
    free(o->runs);
    o->runs = NULL;
    o->nruns = 0;
}

/* The run holding element i, or -1. */
static long run_at(const bp_coll_order_t *o, uint64_t i)
{
    if (!o->done || i >= o->probed || !o->nruns)
        return -1;
    size_t lo = 0, hi = o->nruns;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (o->runs[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    const bp_coll_orun_t *r = &o->runs[lo];
    return i >= r->first && i - r->first < r->count ? (long)lo : -1;
}

int bp_coll_order_at(const bp_coll_order_t *o, uint64_t i)
{
    long k = run_at(o, i);
    return k < 0 ? -1 : o->runs[k].ord;
}

int bp_coll_order_alt(const bp_coll_order_t *o, uint64_t i)
{
    long k = run_at(o, i);
    if (k < 0)
        return -1;
    const bp_coll_orun_t *r = &o->runs[k];
    if ((size_t)k + 1 < o->nruns && o->runs[k + 1].first - i <= o->runs[k + 1].amb_lo)
        return o->runs[k + 1].ord;
    if (k > 0 && i - r->first < r->amb_hi)
        return o->runs[k - 1].ord;
    return -1;
}

void bp_coll_order_summary(const bp_coll_order_t *o, char *out, size_t n)
{
    if (!o->done) {
        snprintf(out, n, "not inferred: %s", o->why[0] ? o->why : "not probed");
        return;
    }
    size_t w = 0;
    uint64_t common = 0;
    bool same = o->nruns > 2;
    for (size_t i = 1; same && i + 1 < o->nruns; i++) {
        if (!common)
            common = o->runs[i].count;
        same = o->runs[i].count == common;
    }
    if (o->nords == 1 && !o->mixed)
        w = (size_t)snprintf(out, n, "%s everywhere", o->ords[0].text);
    else
        w = (size_t)snprintf(out, n, "%zu order%s in %zu%s run%s%s", o->nords,
                             o->nords == 1 ? "" : "s", o->nruns, o->runs_cut ? "+" : "",
                             o->nruns == 1 ? "" : "s", "");
    if (same && common && w < n)
        w += (size_t)snprintf(out + w, n - w, " of %llu elements", (unsigned long long)common);
    if (o->nords > 1 || o->mixed)
        for (size_t i = 0; i < o->nords && w < n; i++)
            w += (size_t)snprintf(out + w, n - w, "%s %s %.0f%%", i ? "," : ":",
                                  o->ords[i].text,
                                  100.0 * (double)o->ords[i].elements / (double)o->probed);
    if (o->mixed && w < n)
        w += (size_t)snprintf(out + w, n - w, ", mixed blocks %.1f%%",
                              100.0 * (double)o->mixed / (double)o->probed);
    if (o->nords && w < n)
        snprintf(out + w, n - w, "; %s", o->ords[0].width);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void bp_coll_order_set(const bp_coll_order_t *o, char *out, size_t n)
{
    const char *t[BP_COLL_MAX_ORDS];
    for (size_t i = 0; i < o->nords; i++)
        t[i] = o->ords[i].text;
    qsort(t, o->nords, sizeof t[0], cmp_str);
    size_t w = 0;
    if (n)
        out[0] = '\0';
    for (size_t i = 0; i < o->nords && w < n; i++)
        w += (size_t)snprintf(out + w, n - w, "%s%s", i ? "; " : "", t[i]);
}

void bp_coll_order_verify(const bp_coll_order_t *o, bp_coll_redop_t op, const uint64_t *idx,
                          size_t ns, const double *in, const void *result, uint64_t *checked,
                          uint64_t *same)
{
    *checked = *same = 0;
    if (!o->done || !o->probed)
        return;
    bp_dtype_t dt = o->dtype;
    int W = o->world;
    double scale = bp_coll_round(dt, 1.0 / W);
    for (size_t j = 0; j < ns; j++) {
        uint64_t i = idx[j];
        int k = bp_coll_order_at(o, i);
        if (k < 0 || o->ords[k].kind == BP_ORD_MIXED || W > BP_COLL_ORDER_MAX)
            continue;
        float v[BP_COLL_ORDER_MAX];
        double exact = 0;
        for (int r = 0; r < W; r++) {
            double x = in[j * (size_t)W + (size_t)r];
            if (op == BP_COLL_AVG)
                x = bp_coll_round(dt, x * scale);
            v[r] = (float)x;
            exact += x;
        }
        uint64_t got = bp_dtype_load_bits(dt, result, (size_t)i);
        bool match = false;
        /* in a change's window either side's order may hold */
        for (int pass = 0; pass < 2 && !match; pass++) {
            int q = pass ? bp_coll_order_alt(o, i) : k;
            if (q < 0 || o->ords[q].kind == BP_ORD_MIXED)
                continue;
            const bp_coll_ord_t *d = &o->ords[q];
            float y = d->kind == BP_ORD_EXACT ? (float)bp_coll_round(dt, exact)
                                              : bp_coll_tree_eval(&d->tree, v, dt);
            match = bp_dtype_bits_from_double(dt, y) == got;
        }
        (*checked)++;
        *same += match;
    }
}
