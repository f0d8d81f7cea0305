/* Distinct values of a tensor (see oracle_unique.h). */
#include "oracle_unique.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void bp_oracle_unique_free(bp_oracle_unique_t *u)
{
    bp_buf_free(&u->vals);
    free(u->slot);
    u->slot = NULL;
}

static uint32_t load32(const void *data, size_t esize, size_t i)
{
    if (esize == 4)
        return ((const uint32_t *)data)[i];
    if (esize == 2)
        return ((const uint16_t *)data)[i];
    return ((const uint8_t *)data)[i];
}

static void store32(void *data, size_t esize, size_t i, uint32_t v)
{
    if (esize == 4)
        ((uint32_t *)data)[i] = v;
    else if (esize == 2)
        ((uint16_t *)data)[i] = (uint16_t)v;
    else
        ((uint8_t *)data)[i] = (uint8_t)v;
}

/* Dtypes of one or two bytes: a direct table over every bit pattern,
 * 1 + the index of the distinct value, 0 for none yet. */
static size_t build_direct(const bp_buf_t *a, size_t esize, uint32_t *table,
                           bp_oracle_unique_t *u)
{
    size_t nv = 0;
    for (size_t i = 0; i < a->numel; i++) {
        uint32_t key = load32(a->data, esize, i);
        if (!table[key]) {
            store32(u->vals.data, esize, nv, key);
            table[key] = (uint32_t)++nv;
        }
        u->slot[i] = table[key] - 1;
    }
    return nv;
}

/* Four-byte dtypes: open addressing, a place holding the pattern in its
 * high half and 1 + the index of the distinct value in its low half (0:
 * empty). */
static size_t build_hash32(const bp_buf_t *a, uint64_t *table, int bits,
                           bp_oracle_unique_t *u)
{
    size_t nv = 0, mask = ((size_t)1 << bits) - 1;
    const uint32_t *x = a->data;
    uint32_t *vals = u->vals.data;
    for (size_t i = 0; i < a->numel; i++) {
        uint32_t key = x[i];
        size_t h = (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
        for (;;) {
            uint64_t t = table[h];
            if (t == 0) {
                vals[nv] = key;
                table[h] = ((uint64_t)key << 32) | (uint32_t)++nv;
                u->slot[i] = (uint32_t)(nv - 1);
                break;
            }
            if ((uint32_t)(t >> 32) == key) {
                u->slot[i] = (uint32_t)t - 1;
                break;
            }
            h = (h + 1) & mask;
        }
    }
    return nv;
}

/* Eight-byte dtypes: open addressing on 1 + the index of the distinct
 * value, compared through the values. */
static size_t build_hash64(const bp_buf_t *a, uint32_t *table, int bits,
                           bp_oracle_unique_t *u)
{
    size_t nv = 0, mask = ((size_t)1 << bits) - 1;
    const uint64_t *x = a->data;
    uint64_t *vals = u->vals.data;
    for (size_t i = 0; i < a->numel; i++) {
        uint64_t key = x[i];
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
        for (;;) {
            uint32_t t = table[h];
            if (t == 0) {
                vals[nv] = key;
                table[h] = (uint32_t)++nv;
                u->slot[i] = (uint32_t)(nv - 1);
                break;
            }
            if (vals[t - 1] == key) {
                u->slot[i] = t - 1;
                break;
            }
            h = (h + 1) & mask;
        }
    }
    return nv;
}

bp_status bp_oracle_unique_build(const bp_buf_t *a, bp_oracle_unique_t *u,
                                 bp_error_t *err)
{
    memset(u, 0, sizeof *u);
    size_t n = a->numel;
    if (n >= UINT32_MAX)
        return bp_error_set(err, BP_EINPUT,
                            "%zu elements: too many to deduplicate", n);
    size_t esize = bp_dtype_info(a->dtype)->size;
    int bits = 1;
    while (((size_t)1 << bits) < 2 * n)
        bits++;
    /* Places: every pattern (direct), or twice the elements at least. */
    size_t cap = esize <= 2 ? (size_t)1 << (8 * esize) : (size_t)1 << bits;
    size_t place = esize == 4 ? sizeof(uint64_t) : sizeof(uint32_t);
    void *table = calloc(cap, place);
    u->slot = malloc((n ? n : 1) * sizeof *u->slot);
    int64_t one = (int64_t)n;
    bp_status st = table && u->slot ? bp_buf_alloc(&u->vals, a->dtype, 1, &one, err)
                                    : bp_error_set(err, BP_ENOMEM, "out of memory");
    if (!st && esize != 1 && esize != 2 && esize != 4 && esize != 8)
        st = bp_error_set(err, BP_EINTERNAL, "no distinct-value table for %zu-byte elements",
                          esize);
    if (st) {
        free(table);
        bp_oracle_unique_free(u);
        return st;
    }
    size_t nv = esize <= 2   ? build_direct(a, esize, table, u)
                : esize == 4 ? build_hash32(a, table, bits, u)
                             : build_hash64(a, table, bits, u);
    free(table);
    u->vals.numel = nv;
    u->vals.shape[0] = (int64_t)nv;
    return BP_OK;
}

void bp_oracle_unique_scatter(const bp_oracle_unique_t *u, const bp_buf_t *res,
                              bp_buf_t *out)
{
    size_t n = out->numel;
    switch (bp_dtype_info(out->dtype)->size) {
    case 2: {
        const uint16_t *r = res->data;
        uint16_t *o = out->data;
        for (size_t i = 0; i < n; i++)
            o[i] = r[u->slot[i]];
        break;
    }
    case 4: {
        const uint32_t *r = res->data;
        uint32_t *o = out->data;
        for (size_t i = 0; i < n; i++)
            o[i] = r[u->slot[i]];
        break;
    }
    default:
        for (size_t i = 0; i < n; i++)
            bp_dtype_store_bits(out->dtype, out->data, i,
                                bp_dtype_load_bits(res->dtype, res->data, u->slot[i]));
    }
}

/* ---- results kept across ops ---- */

/* Open addressing on a 64-bit key: operand bits (32), kind (16: the op and
 * its formulation), operand and output dtypes (8 each); all-ones marks an
 * empty place (no key has it: kinds and dtypes are small).  Readers share
 * the lock, a writer holds it alone (the static functions below run under
 * it). */
#define EMPTY UINT64_MAX

struct bp_oracle_cache {
    pthread_rwlock_t lock;
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n; /* cap: a power of two, or 0 */
};

bp_oracle_cache_t *bp_oracle_cache_new(void)
{
    bp_oracle_cache_t *c = calloc(1, sizeof *c);
    if (c && pthread_rwlock_init(&c->lock, NULL) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

void bp_oracle_cache_free(bp_oracle_cache_t *c)
{
    if (!c)
        return;
    pthread_rwlock_destroy(&c->lock);
    free(c->keys);
    free(c->vals);
    free(c);
}

size_t bp_oracle_cache_size(bp_oracle_cache_t *c)
{
    if (!c)
        return 0;
    pthread_rwlock_rdlock(&c->lock);
    size_t n = c->n;
    pthread_rwlock_unlock(&c->lock);
    return n;
}

bool bp_oracle_cache_fits(bp_dtype_t in_dt, bp_dtype_t out_dt)
{
    return bp_dtype_info(in_dt)->size <= 4 && bp_dtype_info(out_dt)->size <= 4;
}

static uint64_t cache_key(int kind, bp_dtype_t in_dt, uint64_t in, bp_dtype_t out_dt)
{
    return (in & 0xffffffffull) | ((uint64_t)(kind & 0xffff) << 32) |
           ((uint64_t)(in_dt & 0xff) << 48) | ((uint64_t)(out_dt & 0x7f) << 56);
}

static size_t cache_place(const bp_oracle_cache_t *c, uint64_t key)
{
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (c->cap - 1);
    while (c->keys[h] != EMPTY && c->keys[h] != key)
        h = (h + 1) & (c->cap - 1);
    return h;
}

bool bp_oracle_cache_get(bp_oracle_cache_t *c, int kind, bp_dtype_t in_dt, uint64_t in,
                         bp_dtype_t out_dt, uint64_t *out)
{
    if (!c || !bp_oracle_cache_fits(in_dt, out_dt))
        return false;
    uint64_t key = cache_key(kind, in_dt, in, out_dt);
    pthread_rwlock_rdlock(&c->lock);
    bool hit = false;
    if (c->cap) {
        size_t h = cache_place(c, key);
        if ((hit = c->keys[h] == key))
            *out = c->vals[h];
    }
    pthread_rwlock_unlock(&c->lock);
    return hit;
}

/* Rehashes into cap places (a power of two, more than twice c->n). */
static bool cache_rehash(bp_oracle_cache_t *c, size_t cap)
{
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    memset(keys, 0xff, cap * sizeof *keys);
    bp_oracle_cache_t g = {.keys = keys, .vals = vals, .cap = cap};
    for (size_t i = 0; i < c->cap; i++)
        if (c->keys[i] != EMPTY) {
            size_t h = cache_place(&g, c->keys[i]);
            g.keys[h] = c->keys[i];
            g.vals[h] = c->vals[i];
        }
    free(c->keys);
    free(c->vals);
    c->keys = keys;
    c->vals = vals;
    c->cap = cap;
    return true;
}

static void cache_put_key(bp_oracle_cache_t *c, uint64_t key, uint32_t val)
{
    if (c->n >= BP_ORACLE_CACHE_MAX)
        return;
    /* At most half full: probes stay short. */
    if (2 * (c->n + 1) > c->cap && !cache_rehash(c, c->cap ? c->cap * 2 : 4096))
        return;
    size_t h = cache_place(c, key);
    if (c->keys[h] != key) {
        c->keys[h] = key;
        c->n++;
    }
    c->vals[h] = val;
}

void bp_oracle_cache_put(bp_oracle_cache_t *c, int kind, bp_dtype_t in_dt, uint64_t in,
                         bp_dtype_t out_dt, uint64_t out)
{
    if (!c || !bp_oracle_cache_fits(in_dt, out_dt))
        return;
    pthread_rwlock_wrlock(&c->lock);
    cache_put_key(c, cache_key(kind, in_dt, in, out_dt), (uint32_t)out);
    pthread_rwlock_unlock(&c->lock);
}

static void cache_reserve(bp_oracle_cache_t *c, size_t n)
{
    size_t want = c->n + n;
    if (want > BP_ORACLE_CACHE_MAX)
        want = BP_ORACLE_CACHE_MAX;
    size_t cap = c->cap ? c->cap : 4096;
    while (2 * want > cap)
        cap *= 2;
    if (cap > c->cap)
        cache_rehash(c, cap);
}

void bp_oracle_cache_reserve(bp_oracle_cache_t *c, size_t n)
{
    if (!c)
        return;
    pthread_rwlock_wrlock(&c->lock);
    cache_reserve(c, n);
    pthread_rwlock_unlock(&c->lock);
}

size_t bp_oracle_cache_lookup(bp_oracle_cache_t *c, int kind, bp_buf_t *vals, bp_buf_t *res,
                              uint32_t *miss)
{
    size_t n = vals->numel, nt = 0;
    size_t ie = bp_dtype_info(vals->dtype)->size, oe = bp_dtype_info(res->dtype)->size;
    if (c)
        pthread_rwlock_rdlock(&c->lock);
    bool use = c && c->cap && bp_oracle_cache_fits(vals->dtype, res->dtype);
    for (size_t k = 0; k < n; k++) {
        uint32_t in = load32(vals->data, ie, k);
        if (use) {
            uint64_t key = cache_key(kind, vals->dtype, in, res->dtype);
            size_t h = cache_place(c, key);
            if (c->keys[h] == key) {
                store32(res->data, oe, k, c->vals[h]);
                continue;
            }
        }
        store32(vals->data, ie, nt, in);
        miss[nt++] = (uint32_t)k;
    }
    if (c)
        pthread_rwlock_unlock(&c->lock);
    return nt;
}

void bp_oracle_cache_insert(bp_oracle_cache_t *c, int kind, const bp_buf_t *in,
                            const bp_buf_t *got, const uint32_t *miss, size_t nt,
                            bp_buf_t *res)
{
    size_t ie = bp_dtype_info(in->dtype)->size, oe = bp_dtype_info(got->dtype)->size;
    bool use = c && bp_oracle_cache_fits(in->dtype, got->dtype);
    for (size_t m = 0; res && m < nt; m++)
        store32(res->data, oe, miss[m], load32(got->data, oe, m));
    if (!use)
        return;
    pthread_rwlock_wrlock(&c->lock);
    cache_reserve(c, nt);
    for (size_t m = 0; m < nt; m++)
        cache_put_key(c, cache_key(kind, in->dtype, load32(in->data, ie, m), got->dtype),
                      load32(got->data, oe, m));
    pthread_rwlock_unlock(&c->lock);
}
