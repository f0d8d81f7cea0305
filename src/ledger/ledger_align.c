/* Aligning two op streams (contract in ledger_diff.h).
 *
 * Each op becomes a token: its name, module path, tensor counts and
 * shapes (not dtypes or hashes: those are what the diff looks at).  Equal
 * token streams pair one to one.  Otherwise Myers' O((N+M)D) difference
 * algorithm in linear space (the middle-snake recursion GNU diff uses)
 * finds a longest common subsequence; past a cost limit a subproblem is
 * split at the furthest diagonal reached, as GNU diff's heuristic does.
 * Before it, as GNU diff does too, the ops whose token the other stream
 * never holds are set aside as unpaired (no common subsequence can hold
 * them), so that two streams that share little cost time linear in their
 * length, not in its product with the cost limit.
 * Runs of unpaired ops between two pairs (a "replaced block": another
 * decomposition, a cast one side added) are then paired by base op name
 * and module where they can be (fuzzy pairs), so that aten::pow.Scalar
 * can meet aten::pow.Tensor_Tensor: each op takes the first op of B after
 * the last pair with its base name and module, found through a table of
 * B's ops by that key (linear in the block, not quadratic). */
#include "ledger_diff.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static uint64_t token(const bp_ledger_op_t *op)
{
    /* Names are interned per ledger, not across two: hash the text. */
    uint64_t h = bp_ledger_mix(bp_ledger_str_hash(op->op), bp_ledger_str_hash(op->module));
    h = bp_ledger_mix(h, ((uint64_t)op->nin << 32) | op->nout);
    for (uint32_t k = 0; k < op->nin + op->nout; k++) {
        const bp_ledger_tensor_t *t = k < op->nin ? &op->in[k] : &op->out[k - op->nin];
        h = bp_ledger_mix(h, (uint64_t)t->ndim);
        for (int d = 0; d < t->ndim; d++)
            h = bp_ledger_mix(h, (uint64_t)t->shape[d]);
    }
    return h;
}

typedef struct {
    const uint64_t *x, *y;
    long *fd, *bd;   /* diagonal vectors, offset so that index -1-(m) is valid */
    bool *xchg, *ychg;
    long too_expensive;
} ctx_t;

/* The middle of an optimal (or, past the cost limit, a good) path from
 * (xoff, yoff) to (xlim, ylim). */
static void diag(ctx_t *c, long xoff, long xlim, long yoff, long ylim, long *xmid, long *ymid)
{
    long *fd = c->fd, *bd = c->bd;
    const uint64_t *x = c->x, *y = c->y;
    long dmin = xoff - ylim, dmax = xlim - yoff;
    long fmid = xoff - yoff, bmid = xlim - ylim;
    long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
    bool odd = (fmid - bmid) & 1;
    fd[fmid] = xoff;
    bd[bmid] = xlim;
    for (long cost = 1;; cost++) {
        if (fmin > dmin)
            fd[--fmin - 1] = -1;
        else
            ++fmin;
        if (fmax < dmax)
            fd[++fmax + 1] = -1;
        else
            --fmax;
        for (long d = fmax; d >= fmin; d -= 2) {
            long tlo = fd[d - 1], thi = fd[d + 1];
            long xx = tlo >= thi ? tlo + 1 : thi, yy = xx - d;
            while (xx < xlim && yy < ylim && x[xx] == y[yy])
                xx++, yy++;
            fd[d] = xx;
            if (odd && bmin <= d && d <= bmax && bd[d] <= xx) {
                *xmid = xx;
                *ymid = yy;
                return;
            }
        }
        if (bmin > dmin)
            bd[--bmin - 1] = LONG_MAX;
        else
            ++bmin;
        if (bmax < dmax)
            bd[++bmax + 1] = LONG_MAX;
        else
            --bmax;
        for (long d = bmax; d >= bmin; d -= 2) {
            long tlo = bd[d - 1], thi = bd[d + 1];
            long xx = tlo < thi ? tlo : thi - 1, yy = xx - d;
            while (xx > xoff && yy > yoff && x[xx - 1] == y[yy - 1])
                xx--, yy--;
            bd[d] = xx;
            if (!odd && fmin <= d && d <= fmax && xx <= fd[d]) {
                *xmid = xx;
                *ymid = yy;
                return;
            }
        }
        if (cost >= c->too_expensive) {
            /* The forward diagonal that got furthest (x + y largest). */
            long best = -1, bx = xoff, by = yoff;
            for (long d = fmax; d >= fmin; d -= 2) {
                long xx = fd[d] < xlim ? fd[d] : xlim, yy = xx - d;
                if (yy > ylim)
                    xx = ylim + d, yy = ylim;
                if (xx + yy > best && xx >= xoff && yy >= yoff) {
                    best = xx + yy;
                    bx = xx;
                    by = yy;
                }
            }
            if (bx == xoff && by == yoff) { /* no progress: split evenly */
                bx = xoff + (xlim - xoff) / 2;
                by = yoff + (ylim - yoff) / 2;
            }
            *xmid = bx;
            *ymid = by;
            return;
        }
    }
}

static void compareseq(ctx_t *c, long xoff, long xlim, long yoff, long ylim)
{
    for (;;) {
        while (xoff < xlim && yoff < ylim && c->x[xoff] == c->y[yoff])
            xoff++, yoff++;
        while (xlim > xoff && ylim > yoff && c->x[xlim - 1] == c->y[ylim - 1])
            xlim--, ylim--;
        if (xoff == xlim) {
            while (yoff < ylim)
                c->ychg[yoff++] = true;
            return;
        }
        if (yoff == ylim) {
            while (xoff < xlim)
                c->xchg[xoff++] = true;
            return;
        }
        long xm, ym;
        diag(c, xoff, xlim, yoff, ylim, &xm, &ym);
        if ((xm == xoff && ym == yoff) || (xm == xlim && ym == ylim)) {
            /* A degenerate split (heuristic): treat the rest as changed. */
            while (xoff < xlim)
                c->xchg[xoff++] = true;
            while (yoff < ylim)
                c->ychg[yoff++] = true;
            return;
        }
        /* Recurse on the smaller half, loop on the larger: bounded depth. */
        if ((xm - xoff) + (ym - yoff) < (xlim - xm) + (ylim - ym)) {
            compareseq(c, xoff, xm, yoff, ym);
            xoff = xm;
            yoff = ym;
        } else {
            compareseq(c, xm, xlim, ym, ylim);
            xlim = xm;
            ylim = ym;
        }
    }
}

static size_t base_len(const char *op)
{
    const char *dot = strchr(op, '.');
    return dot ? (size_t)(dot - op) : strlen(op);
}

static bool same_base(const bp_ledger_op_t *a, const bp_ledger_op_t *b)
{
    size_t la = base_len(a->op), lb = base_len(b->op);
    return la == lb && memcmp(a->op, b->op, la) == 0 && strcmp(a->module, b->module) == 0;
}

static bp_status push(bp_ledger_pair_t **v, size_t *n, size_t *cap, long a, long b, bool fuzzy,
                      bp_error_t *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        bp_ledger_pair_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (bp_ledger_pair_t){.a = a, .b = b, .fuzzy = fuzzy};
    return BP_OK;
}

static uint64_t base_hash(const bp_ledger_op_t *op)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a over the base name, then the module */
    for (size_t k = 0, n = base_len(op->op); k < n; k++)
        h = (h ^ (unsigned char)op->op[k]) * 1099511628211u;
    h = (h ^ 0xff) * 1099511628211u;
    for (const char *s = op->module; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* B's ops of a block by (base name, module): slot s holds the first op of
 * its key still free (head[s], -1 once used up), the next of a key in
 * next[]. */
typedef struct {
    long *head, *next;
    size_t mask;
} bykey_t;

static size_t bykey_slot(const bykey_t *t, const bp_ledger_t *B, const bp_ledger_op_t *op,
                         long *rep_of_slot)
{
    size_t s = (size_t)base_hash(op) & t->mask;
    while (rep_of_slot[s] >= 0 && !same_base(&B->ops[rep_of_slot[s]], op))
        s = (s + 1) & t->mask;
    return s;
}

/* A replaced block: a[a0..a1) deleted, b[b0..b1) inserted.  Pairs ops of
 * one base name and module in order; the others stay one-sided, each in
 * its own stream's order. */
static bp_status block(const bp_ledger_t *A, const bp_ledger_t *B, long a0, long a1, long b0,
                       long b1, bp_ledger_pair_t **v, size_t *n, size_t *cap, bp_error_t *err)
{
    bp_status st = BP_OK;
    size_t nb = (size_t)(b1 - b0), size = 2;
    while (size < 2 * nb)
        size *= 2;
    bykey_t t = {malloc(size * sizeof *t.head), malloc((nb ? nb : 1) * sizeof *t.next),
                 size - 1};
    long *rep_of_slot = malloc(size * sizeof *rep_of_slot), *tail = malloc(size * sizeof *tail);
    if (!t.head || !t.next || !rep_of_slot || !tail) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < size; s++)
        t.head[s] = rep_of_slot[s] = tail[s] = -1;
    for (long k = b0; k < b1; k++) { /* each key's ops in B's order */
        size_t s = bykey_slot(&t, B, &B->ops[k], rep_of_slot);
        rep_of_slot[s] = k;
        t.next[k - b0] = -1;
        if (tail[s] < 0)
            t.head[s] = k;
        else
            t.next[tail[s] - b0] = k;
        tail[s] = k;
    }
    long j = b0;
    for (long i = a0; !st && i < a1; i++) {
        /* the first of i's key at or after j: a key's earlier ops are
         * behind j for good once passed */
        long k = b1;
        if (nb) {
            size_t s = bykey_slot(&t, B, &A->ops[i], rep_of_slot);
            while (t.head[s] >= 0 && t.head[s] < j)
                t.head[s] = t.next[t.head[s] - b0];
            if (rep_of_slot[s] >= 0 && t.head[s] >= 0)
                k = t.head[s];
        }
        if (k == b1) {
            st = push(v, n, cap, i, -1, false, err);
            continue;
        }
        while (!st && j < k)
            st = push(v, n, cap, -1, j++, false, err);
        if (!st)
            st = push(v, n, cap, i, k, true, err);
        j = k + 1;
    }
    while (!st && j < b1)
        st = push(v, n, cap, -1, j++, false, err);
done:
    free(t.head);
    free(t.next);
    free(rep_of_slot);
    free(tail);
    return st;
}

/* The tokens of a stream as an open-addressed set (a power of two of
 * slots, at most half full). */
typedef struct {
    uint64_t *key;
    bool *used;
    size_t mask;
} tokset_t;

static size_t tok_at(const tokset_t *t, uint64_t k)
{
    size_t i = (size_t)(k * 0x9e3779b97f4a7c15u >> 17) & t->mask;
    while (t->used[i] && t->key[i] != k)
        i = (i + 1) & t->mask;
    return i;
}

static bool tokset_make(tokset_t *t, const uint64_t *v, long n)
{
    size_t size = 2;
    while (size < 2 * (size_t)n)
        size *= 2;
    t->key = malloc(size * sizeof *t->key);
    t->used = calloc(size, 1);
    t->mask = size - 1;
    if (!t->key || !t->used)
        return false;
    for (long i = 0; i < n; i++) {
        size_t s = tok_at(t, v[i]);
        t->used[s] = true;
        t->key[s] = v[i];
    }
    return true;
}

static void tokset_free(tokset_t *t)
{
    free(t->key);
    free(t->used);
}

/* Keeps in v[0..*n) the tokens the other stream holds (idx: where each
 * kept one was), marking the others changed. */
static void keep_shared(uint64_t *v, long *n, long *idx, const tokset_t *other, bool *chg)
{
    long m = 0;
    for (long i = 0; i < *n; i++) {
        if (!other->used[tok_at(other, v[i])]) {
            chg[i] = true;
            continue;
        }
        v[m] = v[i];
        idx[m++] = i;
    }
    *n = m;
}

bp_status bp_ledger_align(const bp_ledger_t *A, const bp_ledger_t *B, bp_ledger_pair_t **pairs,
                          size_t *npairs, bp_error_t *err)
{
    long na = (long)A->n, nb = (long)B->n;
    *pairs = NULL;
    *npairs = 0;
    uint64_t *x = malloc((na + 1) * sizeof *x), *y = malloc((nb + 1) * sizeof *y);
    long *fd = malloc((na + nb + 3) * sizeof *fd), *bd = malloc((na + nb + 3) * sizeof *bd);
    bool *xchg = calloc(na + 1, 1), *ychg = calloc(nb + 1, 1);
    bp_status st = BP_OK;
    if (!x || !y || !fd || !bd || !xchg || !ychg) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
        goto out;
    }
    for (long i = 0; i < na; i++)
        x[i] = token(&A->ops[i]);
    for (long j = 0; j < nb; j++)
        y[j] = token(&B->ops[j]);
    /* the ops the other stream has no token for: unpaired, and out of the
     * search (x, y then hold the others, xi, yi their places) */
    tokset_t tx = {0}, ty = {0};
    long nx = na, ny = nb, *xi = malloc((na + 1) * sizeof *xi), *yi = malloc((nb + 1) * sizeof *yi);
    bool *cx = calloc(na + 1, 1), *cy = calloc(nb + 1, 1);
    if (!xi || !yi || !cx || !cy || !tokset_make(&tx, x, na) || !tokset_make(&ty, y, nb)) {
        st = bp_error_set(err, BP_ENOMEM, "out of memory");
    } else {
        keep_shared(x, &nx, xi, &ty, xchg);
        keep_shared(y, &ny, yi, &tx, ychg);
        ctx_t c = {.x = x, .y = y, .fd = fd + ny + 1, .bd = bd + ny + 1, .xchg = cx,
                   .ychg = cy, .too_expensive = 4096};
        compareseq(&c, 0, nx, 0, ny);
        for (long k = 0; k < nx; k++)
            xchg[xi[k]] = cx[k];
        for (long k = 0; k < ny; k++)
            ychg[yi[k]] = cy[k];
    }
    tokset_free(&tx);
    tokset_free(&ty);
    free(xi);
    free(yi);
    free(cx);
    free(cy);
    if (st)
        goto out;
    size_t cap = 0;
    long i = 0, j = 0;
    while (!st && (i < na || j < nb)) {
        if (i < na && j < nb && !xchg[i] && !ychg[j]) {
            st = push(pairs, npairs, &cap, i++, j++, false, err);
            continue;
        }
        long a0 = i, b0 = j;
        while (i < na && xchg[i])
            i++;
        while (j < nb && ychg[j])
            j++;
        if (i == a0 && j == b0) { /* cannot happen; never loop forever */
            while (!st && i < na)
                st = push(pairs, npairs, &cap, i++, -1, false, err);
            while (!st && j < nb)
                st = push(pairs, npairs, &cap, -1, j++, false, err);
            break;
        }
        st = block(A, B, a0, i, b0, j, pairs, npairs, &cap, err);
    }
out:
    free(x);
    free(y);
    free(fd);
    free(bd);
    free(xchg);
    free(ychg);
    if (st) {
        free(*pairs);
        *pairs = NULL;
        *npairs = 0;
    }
    return st;
}
