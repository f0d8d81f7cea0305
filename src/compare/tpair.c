/* Pairing tensor sets (see tpair.h). */
#include "tpair.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bp_map_parse(char *arg, bp_map_t *out)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return false;
    *eq = '\0';
    out->from = arg;
    out->to = eq + 1;
    size_t lf = strlen(out->from), lt = strlen(out->to);
    bool sf = out->from[lf - 1] == '*', st = out->to[lt - 1] == '*';
    if (sf != st) {
        *eq = '=';
        return false;
    }
    out->prefix = sf;
    if (sf) {
        out->from[lf - 1] = '\0';
        out->to[lt - 1] = '\0';
    }
    return true;
}

/* name as --map renames it (into buf), or NULL when no map applies. */
static const char *mapped(const bp_pair_opts_t *o, const char *name, char *buf, size_t n)
{
    for (size_t i = 0; i < o->nmaps; i++) {
        const bp_map_t *m = &o->maps[i];
        size_t lf = strlen(m->from);
        if (m->prefix ? strncmp(name, m->from, lf) == 0 : strcmp(name, m->from) == 0) {
            snprintf(buf, n, "%s%s", m->to, m->prefix ? name + lf : "");
            return buf;
        }
    }
    return NULL;
}

static bp_pair_t *push(bp_pairs_t *out, bp_pair_kind_t k, const bp_tent_t *a,
                       const bp_tent_t *b, bp_error_t *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 64;
        bp_pair_t *p = realloc(out->p, cap * sizeof *p);
        if (!p) {
            bp_error_set(err, BP_ENOMEM, "pairing tensors: out of memory");
            return NULL;
        }
        out->p = p;
        out->cap = cap;
    }
    bp_pair_t *p = &out->p[out->n++];
    memset(p, 0, sizeof *p);
    p->kind = k;
    p->a = a;
    p->b = b;
    p->dt = a && a->known ? a->dt : b && b->known ? b->dt : BP_U8;
    return p;
}

/* Compared, or why not. */
static void judge(bp_pair_t *p, const bp_pair_opts_t *o)
{
    const bp_tent_t *a = p->a, *b = p->b;
    char sa[160], sb[160];
    bp_shape_format(a->ndim, a->shape, sa, sizeof sa);
    bp_shape_format(b->ndim, b->shape, sb, sizeof sb);
    /* a dtype bitprobe does not read, as the file spells it */
    const char *da = a->known ? bp_dtype_name(a->dt) : a->dtype,
               *db = b->known ? bp_dtype_name(b->dt) : b->dtype;
    if (!a->known || !b->known) {
        p->kind = BP_PAIR_NOT_COMPARABLE;
        if (!a->known && !b->known && strcmp(a->dtype, b->dtype) != 0)
            snprintf(p->why, sizeof p->why, "unknown dtypes %s and %s: %s %s in A, %s %s in B",
                     da, db, da, sa, db, sb);
        else
            snprintf(p->why, sizeof p->why, "unknown dtype %s: %s %s in A, %s %s in B",
                     a->known ? db : da, da, sa, db, sb);
        return;
    }
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    if (!same) {
        p->kind = BP_PAIR_NOT_COMPARABLE;
        snprintf(p->why, sizeof p->why, "shapes differ: %s %s in A, %s %s in B", da, sa, db,
                 sb);
        return;
    }
    p->dt = a->dt;
    if (a->dt == b->dt)
        return;
    bool ab = bp_dtype_widens(a->dt, b->dt), ba = bp_dtype_widens(b->dt, a->dt);
    if (o->cast && (ab || ba)) {
        p->widen_a = ab;
        p->widen_b = ba;
        p->dt = ab ? b->dt : a->dt;
        snprintf(p->why, sizeof p->why, "%s in %s widened to %s (--cast)",
                 bp_dtype_name(ab ? a->dt : b->dt), ab ? "A" : "B", bp_dtype_name(p->dt));
        return;
    }
    p->kind = BP_PAIR_NOT_COMPARABLE;
    snprintf(p->why, sizeof p->why, "dtypes differ: %s in A, %s in B%s", bp_dtype_name(a->dt),
             bp_dtype_name(b->dt),
             ab || ba ? " (--cast compares them after exact widening)"
                      : o->cast ? " (neither widens exactly to the other)" : "");
}

static bp_status pair_two(bp_pairs_t *out, const bp_tent_t *a, const bp_tent_t *b,
                          const bp_pair_opts_t *o, bp_error_t *err)
{
    bp_pair_t *p = push(out, BP_PAIR_COMPARE, a, b, err);
    if (!p)
        return BP_ENOMEM;
    p->key_a = a->key;
    p->key_b = b->key;
    judge(p, o);
    return BP_OK;
}

/* ---- saved runs -------------------------------------------------------- */

typedef struct {
    const char *key, *backend;
    bool picked;      /* left in by --a / --b */
    const char *mate; /* the other side's key it pairs with */
} key_t_;

/* The distinct keys of a saved run, in order. */
static size_t keys_of(const bp_tset_t *s, key_t_ *k, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const bp_tent_t *t = &s->t[i];
        if (!t->key)
            continue;
        size_t j = 0;
        while (j < n && strcmp(k[j].key, t->key) != 0)
            j++;
        if (j == n && n < cap)
            k[n++] = (key_t_){t->key, t->backend, true, NULL};
    }
    return n;
}

static bp_status pick(key_t_ *k, size_t n, const char *want, const char *side,
                      const bp_tset_t *s, bp_error_t *err)
{
    if (!want)
        return BP_OK;
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        k[i].picked = strcmp(k[i].key, want) == 0 || strcmp(k[i].backend, want) == 0;
        hits += k[i].picked;
    }
    if (hits)
        return BP_OK;
    char have[512] = "";
    size_t l = 0;
    for (size_t i = 0; i < n && l < sizeof have; i++)
        l += (size_t)snprintf(have + l, sizeof have - l, "%s%s", i ? ", " : "", k[i].key);
    return bp_error_set(err, BP_EINPUT, "--%s %s: saved run '%s' has no such backend (it has "
                        "%s)", side, want, s->path, n ? have : "none");
}

/* Backends pair by key, then by name, then (one each) whatever they are. */
static void mate_keys(key_t_ *ka, size_t na, key_t_ *kb, size_t nb)
{
    size_t pa = 0, pb = 0, ia = 0, ib = 0;
    for (size_t i = 0; i < na; i++)
        if (ka[i].picked)
            pa++, ia = i;
    for (size_t j = 0; j < nb; j++)
        if (kb[j].picked)
            pb++, ib = j;
    if (pa == 1 && pb == 1) {
        ka[ia].mate = kb[ib].key;
        kb[ib].mate = ka[ia].key;
        return;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < na; i++) {
            if (!ka[i].picked || ka[i].mate)
                continue;
            size_t hit = nb, hits = 0, others = 0;
            for (size_t j = 0; j < nb; j++) {
                if (!kb[j].picked || kb[j].mate)
                    continue;
                bool m = pass == 0 ? strcmp(ka[i].key, kb[j].key) == 0
                                   : strcmp(ka[i].backend, kb[j].backend) == 0;
                if (m)
                    hit = j, hits++;
            }
            /* by name only when the name is unambiguous on both sides */
            for (size_t k = 0; pass == 1 && k < na; k++)
                others += k != i && ka[k].picked && !ka[k].mate &&
                          strcmp(ka[k].backend, ka[i].backend) == 0;
            if (hits == 1 && others == 0) {
                ka[i].mate = kb[hit].key;
                kb[hit].mate = ka[i].key;
            }
        }
}

static const key_t_ *key_find(const key_t_ *k, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k[i].key, key) == 0)
            return &k[i];
    return NULL;
}

#define MAX_KEYS 256

static bp_status pair_runs(const bp_tset_t *a, const bp_tset_t *b, const bp_pair_opts_t *o,
                           bp_pairs_t *out, bool *used, bp_error_t *err)
{
    key_t_ ka[MAX_KEYS], kb[MAX_KEYS];
    size_t na = keys_of(a, ka, MAX_KEYS), nb = keys_of(b, kb, MAX_KEYS);
    bp_status st = pick(ka, na, o->pick_a, "a", a, err);
    if (!st)
        st = pick(kb, nb, o->pick_b, "b", b, err);
    if (st)
        return st;
    mate_keys(ka, na, kb, nb);
    if (!(out->keys = calloc(na ? na : 1, sizeof *out->keys)))
        return bp_error_set(err, BP_ENOMEM, "pairing tensors: out of memory");
    for (size_t i = 0; i < na; i++)
        if (ka[i].picked && ka[i].mate)
            out->keys[out->nkeys++] = (bp_keypair_t){ka[i].key, ka[i].mate};
    for (size_t i = 0; !st && i < a->n; i++) {
        const bp_tent_t *t = &a->t[i], *tb = NULL;
        char buf[PATH_MAX + 512];
        const char *m = mapped(o, t->name, buf, sizeof buf);
        const key_t_ *k = t->key ? key_find(ka, na, t->key) : NULL;
        if (k && !k->picked)
            continue; /* not the backend --a asked for */
        if (m)
            tb = bp_tset_find(b, m);
        else if (k && k->mate) {
            snprintf(buf, sizeof buf, "%s/%s/%s", t->probe, k->mate,
                     t->name + strlen(t->probe) + strlen(t->key) + 2);
            tb = bp_tset_find(b, buf);
        } else if (!k) {
            tb = bp_tset_find(b, t->name);
        }
        if (tb && used[tb - b->t])
            tb = NULL;
        if (tb) {
            used[tb - b->t] = true;
            st = pair_two(out, t, tb, o, err);
        } else if (!push(out, BP_PAIR_ONLY_A, t, NULL, err)) {
            st = BP_ENOMEM;
        }
    }
    for (size_t j = 0; !st && j < b->n; j++) {
        const bp_tent_t *t = &b->t[j];
        const key_t_ *k = t->key ? key_find(kb, nb, t->key) : NULL;
        if (!used[j] && !(k && !k->picked) && !push(out, BP_PAIR_ONLY_B, NULL, t, err))
            st = BP_ENOMEM;
    }
    return st;
}

/* ---- by name ------------------------------------------------------------ */

static bp_status pair_names(const bp_tset_t *a, const bp_tset_t *b, const bp_pair_opts_t *o,
                            bp_pairs_t *out, bool *used, bp_error_t *err)
{
    if (a->n == 1 && b->n == 1 && !o->nmaps)
        return pair_two(out, &a->t[0], &b->t[0], o, err);
    bp_status st = BP_OK;
    for (size_t i = 0; !st && i < a->n; i++) {
        const bp_tent_t *t = &a->t[i];
        char buf[PATH_MAX + 512];
        const char *m = mapped(o, t->name, buf, sizeof buf);
        const bp_tent_t *tb = bp_tset_find(b, m ? m : t->name);
        if (tb && !used[tb - b->t]) {
            used[tb - b->t] = true;
            st = pair_two(out, t, tb, o, err);
        } else if (!push(out, BP_PAIR_ONLY_A, t, NULL, err)) {
            st = BP_ENOMEM;
        }
    }
    for (size_t j = 0; !st && j < b->n; j++)
        if (!used[j] && !push(out, BP_PAIR_ONLY_B, NULL, &b->t[j], err))
            st = BP_ENOMEM;
    return st;
}

bp_status bp_pair_sets(const bp_tset_t *a, const bp_tset_t *b, const bp_pair_opts_t *o,
                       bp_pairs_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    bool *used = calloc(b->n ? b->n : 1, sizeof *used);
    if (!used)
        return bp_error_set(err, BP_ENOMEM, "pairing tensors: out of memory");
    bool runs = a->kind == BP_TSET_BUNDLE && b->kind == BP_TSET_BUNDLE;
    bp_status st = BP_OK;
    if (!runs && (o->pick_a || o->pick_b))
        st = bp_error_set(err, BP_EINPUT, "--a and --b pick backends of saved runs; '%s' is "
                          "not one", a->kind == BP_TSET_BUNDLE ? b->path : a->path);
    else
        st = runs ? pair_runs(a, b, o, out, used, err) : pair_names(a, b, o, out, used, err);
    free(used);
    if (st)
        bp_pairs_free(out);
    return st;
}

void bp_pairs_free(bp_pairs_t *p)
{
    free(p->p);
    free(p->keys);
    memset(p, 0, sizeof *p);
}
