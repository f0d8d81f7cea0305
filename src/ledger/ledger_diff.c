/* Two ledgers' ops classified (contract in ledger_diff.h). */
#include "ledger_diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- tensor keys and a small hash map ------------------------------------ */

static uint64_t tkey(const bp_ledger_tensor_t *t)
{
    uint64_t h = bp_ledger_mix(t->hash, bp_ledger_str_hash(t->dtype));
    h = bp_ledger_mix(h, (uint64_t)t->ndim);
    for (int d = 0; d < t->ndim; d++)
        h = bp_ledger_mix(h, (uint64_t)t->shape[d]);
    return h ? h : 1; /* 0 marks an empty slot */
}

typedef struct {
    uint64_t *k;
    long *v;
    size_t cap, n;
} kmap_t;

static bool kmap_put(kmap_t *m, uint64_t k, long v)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 1024;
        uint64_t *nk = calloc(nc, sizeof *nk);
        long *nv = malloc(nc * sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->k[i]) {
                size_t j = m->k[i] & (nc - 1);
                while (nk[j])
                    j = (j + 1) & (nc - 1);
                nk[j] = m->k[i];
                nv[j] = m->v[i];
            }
        free(m->k);
        free(m->v);
        m->k = nk;
        m->v = nv;
        m->cap = nc;
    }
    size_t j = k & (m->cap - 1);
    while (m->k[j] && m->k[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->k[j])
        m->n++;
    m->k[j] = k;
    m->v[j] = v;
    return true;
}

static long kmap_get(const kmap_t *m, uint64_t k)
{
    if (!m->cap)
        return -1;
    size_t j = k & (m->cap - 1);
    while (m->k[j]) {
        if (m->k[j] == k)
            return m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

static void kmap_free(kmap_t *m)
{
    free(m->k);
    free(m->v);
}

/* ---- per side: presence, producers, consumers ------------------------------ */

typedef struct {
    const bp_ledger_t *L;
    kmap_t present;  /* every hashed tensor of the side */
    kmap_t consumed; /* every hashed input */
    size_t *off;     /* prod[off[i] + k]: producer of input k of op i */
    long *prod;
    size_t *entry;   /* entry of op i */
} side_t;

struct bp_ledger_sets {
    side_t s[2];
};

static bp_status side_init(side_t *s, const bp_ledger_t *L, bp_error_t *err)
{
    s->L = L;
    s->off = malloc((L->n + 1) * sizeof *s->off);
    s->entry = malloc((L->n + 1) * sizeof *s->entry);
    if (!s->off || !s->entry)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    size_t total = 0;
    for (size_t i = 0; i < L->n; i++) {
        s->off[i] = total;
        total += L->ops[i].nin;
    }
    s->off[L->n] = total;
    s->prod = malloc((total + 1) * sizeof *s->prod);
    if (!s->prod)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    kmap_t last = {0}; /* key -> latest producer so far */
    bool ok = true;
    for (size_t i = 0; ok && i < L->n; i++) {
        const bp_ledger_op_t *op = &L->ops[i];
        for (uint32_t k = 0; ok && k < op->nin; k++) {
            const bp_ledger_tensor_t *t = &op->in[k];
            s->prod[s->off[i] + k] = -1;
            if (!t->has_hash)
                continue;
            uint64_t key = tkey(t);
            s->prod[s->off[i] + k] = kmap_get(&last, key);
            ok = kmap_put(&s->present, key, 0) && kmap_put(&s->consumed, key, 0);
        }
        for (uint32_t k = 0; ok && k < op->nout; k++)
            if (op->out[k].has_hash) {
                uint64_t key = tkey(&op->out[k]);
                ok = kmap_put(&s->present, key, 0) && kmap_put(&last, key, (long)i);
            }
    }
    kmap_free(&last);
    return ok ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
}

static void side_free(side_t *s)
{
    kmap_free(&s->present);
    kmap_free(&s->consumed);
    free(s->off);
    free(s->prod);
    free(s->entry);
}

/* ---- comparing ------------------------------------------------------------- */

static const bp_ledger_tensor_t *tens(const bp_ledger_op_t *op, uint32_t k)
{
    return k < op->nin ? &op->in[k] : &op->out[k - op->nin];
}

static bool same_shape(const bp_ledger_tensor_t *a, const bp_ledger_tensor_t *b)
{
    return bp_shape_equal(a->ndim, a->shape, b->ndim, b->shape);
}

static bool teq(const bp_ledger_tensor_t *a, const bp_ledger_tensor_t *b)
{
    return a->hash == b->hash && strcmp(a->dtype, b->dtype) == 0 && same_shape(a, b);
}

/* Same tensor counts and shapes: compared position by position. */
static bool positional(const bp_ledger_op_t *a, const bp_ledger_op_t *b)
{
    if (a->nin != b->nin || a->nout != b->nout)
        return false;
    for (uint32_t k = 0; k < a->nin + a->nout; k++)
        if (!same_shape(tens(a, k), tens(b, k)))
            return false;
    return true;
}

static const bp_ledger_op_t *side_op(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e,
                                     int side)
{
    long i = side ? e->b : e->a;
    return i < 0 ? NULL : side ? &d->B->ops[i] : &d->A->ops[i];
}

bool bp_ledger_entry_differs(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e, int side,
                             uint32_t k)
{
    const bp_ledger_op_t *op = side_op(d, e, side), *other = side_op(d, e, !side);
    if (!op || k >= op->nin + op->nout)
        return false;
    const bp_ledger_tensor_t *t = tens(op, k);
    if (!t->has_hash)
        return false;
    if (!e->by_presence && other) {
        const bp_ledger_tensor_t *u = tens(other, k);
        return u->has_hash && !teq(t, u);
    }
    if (kmap_get(&d->sets->s[!side].present, tkey(t)) >= 0)
        return false;
    /* A 0-d input the other side lacks: a number wrapped as a tensor
     * (PyTorch 1.13 runs base ** x as lift_fresh(base) then
     * pow.Tensor_Tensor; 2.x passes base to pow.Scalar as a number). */
    return !(k < op->nin && t->ndim == 0);
}

const bp_ledger_op_t *bp_ledger_entry_op(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e)
{
    return e->b >= 0 ? &d->B->ops[e->b] : &d->A->ops[e->a];
}

size_t bp_ledger_diff_find(const bp_ledger_diff_t *d, int side, long i)
{
    const bp_ledger_t *L = side ? d->B : d->A;
    if (i < 0 || (size_t)i >= L->n)
        return SIZE_MAX;
    return d->sets->s[side].entry[i];
}

/* Pass 1: what each entry shows by itself.  One-sided ops with new
 * results stay pending (NOT_COMPARABLE) until pass 2 finds what they fed. */
static void classify(bp_ledger_diff_t *d, bp_ledger_entry_t *e, bool *pending)
{
    const bp_ledger_op_t *oa = side_op(d, e, 0), *ob = side_op(d, e, 1);
    e->by_presence = !(oa && ob && positional(oa, ob));
    e->from_a = e->from_b = -1;
    size_t known = 0;
    for (int s = 0; s < 2; s++) {
        const bp_ledger_op_t *op = s ? ob : oa;
        if (!op || (!e->by_presence && s == 1))
            continue; /* positional: counted once, from A's side */
        for (uint32_t k = 0; k < op->nin + op->nout; k++) {
            bool out = k >= op->nin;
            const bp_ledger_tensor_t *t = tens(op, k);
            bool comparable = t->has_hash && (e->by_presence || tens(ob, k)->has_hash);
            if (!comparable)
                continue;
            known += out;
            if (bp_ledger_entry_differs(d, e, s, k)) {
                if (out)
                    e->out_differ++;
                else
                    e->in_differ++;
            }
        }
    }
    *pending = false;
    e->args_differ = oa && ob && strcmp(oa->call, ob->call) != 0;
    if (!known) /* aten::empty and kin: their arguments are all there is */
        e->status = oa && ob && !e->by_presence && !e->in_differ && !e->args_differ
                        ? BP_LOP_IDENTICAL
                        : BP_LOP_NOT_COMPARABLE;
    else if (!oa || !ob) { /* one-sided: judged by its results */
        e->status = e->out_differ ? BP_LOP_NOT_COMPARABLE : BP_LOP_IDENTICAL;
        *pending = e->out_differ;
    } else if (e->in_differ)
        e->status = e->out_differ ? BP_LOP_INHERITED : BP_LOP_ABSORBED;
    else
        e->status = e->out_differ ? BP_LOP_INTRODUCED : BP_LOP_IDENTICAL;
}

typedef struct {
    size_t *v;
    size_t n, cap;
} stack_t;

static bool stack_push(stack_t *s, size_t x)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        size_t *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return false;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = x;
    return true;
}

/* Follows the producers of entry x's differing inputs: one-sided pending
 * producers are queued; x's external flag and from_* are set. */
static bool trace_inputs(bp_ledger_diff_t *d, size_t x, bool *pending, stack_t *work)
{
    bp_ledger_entry_t *e = &d->e[x];
    for (int s = 0; s < 2; s++) {
        const bp_ledger_op_t *op = side_op(d, e, s);
        side_t *sd = &d->sets->s[s];
        long i = s ? e->b : e->a;
        for (uint32_t k = 0; op && k < op->nin; k++) {
            if (!bp_ledger_entry_differs(d, e, s, k))
                continue;
            long p = sd->prod[sd->off[i] + k];
            if (p < 0) {
                e->external = true;
                continue;
            }
            long *from = s ? &e->from_b : &e->from_a;
            if (*from < 0)
                *from = p;
            size_t pe = sd->entry[p];
            if (pending[pe]) {
                pending[pe] = false;
                if (!stack_push(work, pe))
                    return false;
            }
        }
    }
    return true;
}

static bp_status provenance(bp_ledger_diff_t *d, bool *pending, bp_error_t *err)
{
    stack_t work = {0};
    bool ok = true;
    for (size_t x = 0; ok && x < d->n; x++) {
        bp_ledger_entry_t *e = &d->e[x];
        if (e->status == BP_LOP_INHERITED || e->status == BP_LOP_ABSORBED) {
            ok = trace_inputs(d, x, pending, &work);
        } else if (pending[x]) {
            /* A new result no later op reads: observed here. */
            const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
            int s = e->b >= 0;
            for (uint32_t k = 0; k < op->nout; k++) {
                const bp_ledger_tensor_t *t = &op->out[k];
                if (t->has_hash && kmap_get(&d->sets->s[s].consumed, tkey(t)) < 0 &&
                    kmap_get(&d->sets->s[!s].present, tkey(t)) < 0) {
                    pending[x] = false;
                    ok = stack_push(&work, x);
                    break;
                }
            }
        }
    }
    while (ok && work.n) {
        size_t x = work.v[--work.n];
        bp_ledger_entry_t *e = &d->e[x];
        e->via_provenance = true;
        e->status = e->in_differ ? BP_LOP_INHERITED : BP_LOP_INTRODUCED;
        if (e->in_differ)
            ok = trace_inputs(d, x, pending, &work);
    }
    free(work.v);
    return ok ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
}

static bp_status modules(bp_ledger_diff_t *d, bp_error_t *err)
{
    size_t cap = 0;
    kmap_t idx = {0}; /* module string pointer -> index (pointers of B, then A) */
    for (size_t x = 0; x < d->n; x++) {
        const bp_ledger_entry_t *e = &d->e[x];
        const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
        uint64_t key = bp_ledger_str_hash(op->module); /* interned per ledger: by text */
        key = key ? key : 1;
        long m = kmap_get(&idx, key);
        if (m < 0) {
            if (d->nmods == cap) {
                size_t nc = cap ? cap * 2 : 64;
                bp_ledger_module_t *nm = realloc(d->mods, nc * sizeof *nm);
                if (!nm) {
                    kmap_free(&idx);
                    return bp_error_set(err, BP_ENOMEM, "out of memory");
                }
                d->mods = nm;
                cap = nc;
            }
            m = (long)d->nmods++;
            memset(&d->mods[m], 0, sizeof *d->mods);
            d->mods[m].module = op->module;
            d->mods[m].first = SIZE_MAX;
            if (!kmap_put(&idx, key, m)) {
                kmap_free(&idx);
                return bp_error_set(err, BP_ENOMEM, "out of memory");
            }
        }
        bp_ledger_module_t *md = &d->mods[m];
        md->ops++;
        md->count[e->status]++;
        if (md->first == SIZE_MAX && e->status != BP_LOP_IDENTICAL &&
            e->status != BP_LOP_NOT_COMPARABLE)
            md->first = x;
        const bp_ledger_op_t *oa = side_op(d, e, 0), *ob = side_op(d, e, 1);
        int s = ob ? 1 : 0;
        const bp_ledger_op_t *o = ob ? ob : oa;
        for (uint32_t k = 0; k < o->nout; k++) {
            md->outs++;
            md->outs_differ += bp_ledger_entry_differs(d, e, s, o->nin + k);
        }
    }
    kmap_free(&idx);
    return BP_OK;
}

bp_status bp_ledger_diff(const bp_ledger_t *A, const bp_ledger_t *B, bp_ledger_diff_t *d,
                         bp_error_t *err)
{
    memset(d, 0, sizeof *d);
    d->A = A;
    d->B = B;
    d->first_introduced = d->first_differing = SIZE_MAX;
    const char *ha = bp_ledger_header_str(A, "hash"), *hb = bp_ledger_header_str(B, "hash");
    if (!ha || !hb || strcmp(ha, hb) != 0)
        return bp_error_set(err, BP_EINPUT, "ledgers '%s' and '%s' use different hashes (%s, "
                            "%s): they cannot be compared", A->path, B->path, ha ? ha : "?",
                            hb ? hb : "?");
    d->sets = calloc(1, sizeof *d->sets);
    if (!d->sets)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_ledger_pair_t *pairs = NULL;
    size_t np = 0;
    bool *pending = NULL;
    bp_status st = side_init(&d->sets->s[0], A, err);
    if (!st)
        st = side_init(&d->sets->s[1], B, err);
    if (!st)
        st = bp_ledger_align(A, B, &pairs, &np, err);
    if (!st) {
        d->e = calloc(np ? np : 1, sizeof *d->e);
        pending = calloc(np ? np : 1, sizeof *pending);
        if (!d->e || !pending)
            st = bp_error_set(err, BP_ENOMEM, "out of memory");
    }
    if (st) {
        free(pairs);
        free(pending);
        bp_ledger_diff_free(d);
        return st;
    }
    d->n = np;
    d->exact = A->n == B->n;
    for (size_t x = 0; x < np; x++) {
        bp_ledger_entry_t *e = &d->e[x];
        e->a = pairs[x].a;
        e->b = pairs[x].b;
        e->fuzzy = pairs[x].fuzzy;
        if (e->a >= 0)
            d->sets->s[0].entry[e->a] = x;
        if (e->b >= 0)
            d->sets->s[1].entry[e->b] = x;
        d->exact = d->exact && e->a == e->b && !e->fuzzy;
        d->paired += e->a >= 0 && e->b >= 0;
        d->fuzzy += e->fuzzy;
        d->only_a += e->b < 0;
        d->only_b += e->a < 0;
    }
    free(pairs);
    for (size_t x = 0; x < np; x++)
        classify(d, &d->e[x], &pending[x]);
    st = provenance(d, pending, err);
    free(pending);
    for (size_t x = 0; !st && x < np; x++) {
        bp_lop_status_t s = d->e[x].status;
        d->count[s]++;
        if (s == BP_LOP_INTRODUCED && d->first_introduced == SIZE_MAX)
            d->first_introduced = x;
        if (s != BP_LOP_IDENTICAL && s != BP_LOP_NOT_COMPARABLE &&
            d->first_differing == SIZE_MAX)
            d->first_differing = x;
    }
    if (!st)
        st = modules(d, err);
    if (st)
        bp_ledger_diff_free(d);
    return st;
}

bp_status bp_ledger_diff_files(const char *pa, const char *pb, bp_ledger_t *A, bp_ledger_t *B,
                               bp_ledger_diff_t *d, bp_error_t *err)
{
    bp_status st = bp_ledger_read(pa, A, err);
    if (st)
        return st;
    if ((st = bp_ledger_read(pb, B, err))) {
        bp_ledger_free(A);
        return st;
    }
    if ((st = bp_ledger_diff(A, B, d, err))) {
        bp_ledger_free(A);
        bp_ledger_free(B);
    }
    return st;
}

void bp_ledger_diff_free(bp_ledger_diff_t *d)
{
    if (d->sets) {
        side_free(&d->sets->s[0]);
        side_free(&d->sets->s[1]);
        free(d->sets);
    }
    free(d->e);
    free(d->mods);
    memset(d, 0, sizeof *d);
}

const char *bp_lop_status_name(bp_lop_status_t s)
{
    static const char *names[] = {"identical", "introduced", "inherited", "absorbed",
                                  "not comparable"};
    return s < BP_LOP_NSTATUS ? names[s] : "?";
}
