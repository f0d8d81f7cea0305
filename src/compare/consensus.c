/* Consensus among results that should agree bit for bit (consensus.h). */
#include "consensus.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bundle.h"
#include "jsonread.h"
#include "st.h"

struct bp_cons {
    bp_cons_member_t *m;
    int nm, mcap;
    bp_cons_item_t *it;
    size_t ni, icap;
    size_t *slot; /* open addressing: item index + 1, 0 empty */
    size_t nslot;
};

bp_cons_t *bp_cons_new(void)
{
    return calloc(1, sizeof(bp_cons_t));
}

void bp_cons_free(bp_cons_t *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nm; i++) {
        free(c->m[i].label);
        free(c->m[i].path);
        json_decref(c->m[i].about);
        json_decref(c->m[i].names);
    }
    for (size_t i = 0; i < c->ni; i++) {
        free(c->it[i].name);
        for (int g = 0; g < c->it[i].ngroups; g++)
            free(c->it[i].groups[g].members);
        free(c->it[i].groups);
    }
    free(c->m);
    free(c->it);
    free(c->slot);
    free(c);
}

/* ---- hashing ---------------------------------------------------------- */

static inline uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

/* Two independent 64-bit hashes of the words of a byte string (the tail
 * zero-padded, the length mixed in): a collision needs both to collide. */
static void hash_bytes(const void *p, size_t n, uint64_t h[2])
{
    const unsigned char *b = p;
    uint64_t a = h[0] ^ (n * 0x9E3779B97F4A7C15ull), c = h[1] ^ rotl(n, 32);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        a = rotl(a ^ (w * 0x87C37B91114253D5ull), 31) * 0x4CF5AD432745937Full;
        c = (c + w) * 0xFF51AFD7ED558CCDull;
        c ^= c >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, b + i, n - i);
    a = rotl(a ^ (w * 0x87C37B91114253D5ull), 31) * 0x4CF5AD432745937Full;
    c = (c + w + 1) * 0xFF51AFD7ED558CCDull;
    a ^= a >> 33;
    a *= 0xC4CEB9FE1A85EC53ull;
    a ^= a >> 33;
    c ^= c >> 31;
    c *= 0x94D049BB133111EBull;
    c ^= c >> 32;
    h[0] = a;
    h[1] = c;
}

static void hash_buf(const bp_buf_t *b, uint64_t h[2])
{
    uint64_t meta[1 + BP_MAXDIM + 1] = {(uint64_t)b->dtype, (uint64_t)b->ndim};
    for (int d = 0; d < b->ndim; d++)
        meta[2 + d] = (uint64_t)b->shape[d];
    h[0] = 0x243F6A8885A308D3ull;
    h[1] = 0x13198A2E03707344ull;
    hash_bytes(meta, (size_t)(2 + b->ndim) * 8, h);
    hash_bytes(b->data, bp_buf_nbytes(b), h);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* ---- members and items ------------------------------------------------ */

int bp_cons_member(bp_cons_t *c, const char *label, const char *path, const char *about)
{
    for (int i = 0; i < c->nm; i++)
        if (strcmp(c->m[i].label, label) == 0)
            return i;
    if (c->nm == c->mcap) {
        int cap = c->mcap ? 2 * c->mcap : 16;
        bp_cons_member_t *m = realloc(c->m, (size_t)cap * sizeof *m);
        if (!m)
            return -1;
        c->m = m;
        c->mcap = cap;
    }
    bp_cons_member_t *m = &c->m[c->nm];
    memset(m, 0, sizeof *m);
    m->label = strdup(label);
    m->path = path ? strdup(path) : NULL;
    m->about = json_object();
    if (!m->label || (path && !m->path) || !m->about) {
        free(m->label);
        free(m->path);
        json_decref(m->about);
        return -1;
    }
    const char *at = strrchr(label, '@');
    if (at)
        snprintf(m->inst, sizeof m->inst, "%s", at + 1);
    if (about)
        json_object_set_new(m->about, "", json_string(about));
    return c->nm++;
}

/* The second component of "<probe>/<key>/<tensor>", or "". */
static void key_of(const char *item, char *out, size_t n)
{
    const char *a = strchr(item, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (!b || (size_t)(b - a - 1) >= n)
        *out = '\0';
    else
        snprintf(out, n, "%.*s", (int)(b - a - 1), a + 1);
}

const char *bp_cons_about(const bp_cons_t *c, int m, const char *item)
{
    if (m < 0 || m >= c->nm)
        return "";
    char key[128];
    key_of(item, key, sizeof key);
    const char *s = json_string_value(json_object_get(c->m[m].about, key));
    if (!s)
        s = json_string_value(json_object_get(c->m[m].about, ""));
    return s ? s : "";
}

static bp_status grow_slots(bp_cons_t *c, bp_error_t *err)
{
    size_t n = c->nslot ? 2 * c->nslot : 1024;
    size_t *s = calloc(n, sizeof *s);
    if (!s)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->ni; i++) {
        size_t k = hash_name(c->it[i].name) & (n - 1);
        while (s[k])
            k = (k + 1) & (n - 1);
        s[k] = i + 1;
    }
    free(c->slot);
    c->slot = s;
    c->nslot = n;
    return BP_OK;
}

static bp_cons_item_t *find_or_add(bp_cons_t *c, const char *name, bool add, bp_error_t *err)
{
    if (add && (c->ni + 1) * 2 > c->nslot && grow_slots(c, err))
        return NULL;
    if (!c->nslot)
        return NULL;
    size_t k = hash_name(name) & (c->nslot - 1);
    for (; c->slot[k]; k = (k + 1) & (c->nslot - 1))
        if (strcmp(c->it[c->slot[k] - 1].name, name) == 0)
            return &c->it[c->slot[k] - 1];
    if (!add)
        return NULL;
    if (c->ni == c->icap) {
        size_t cap = c->icap ? 2 * c->icap : 256;
        bp_cons_item_t *it = realloc(c->it, cap * sizeof *it);
        if (!it) {
            bp_error_set(err, BP_ENOMEM, "out of memory");
            return NULL;
        }
        c->it = it;
        c->icap = cap;
    }
    bp_cons_item_t *it = &c->it[c->ni];
    memset(it, 0, sizeof *it);
    if (!(it->name = strdup(name))) {
        bp_error_set(err, BP_ENOMEM, "out of memory");
        return NULL;
    }
    it->majority = -1;
    c->slot[k] = ++c->ni;
    return it;
}

static bp_status push(int **v, int *n, int *cap, int x, bp_error_t *err)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 4;
        int *p = realloc(*v, (size_t)nc * sizeof *p);
        if (!p)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return BP_OK;
}

bp_status bp_cons_add(bp_cons_t *c, const char *item, int m, const bp_buf_t *b,
                      bp_error_t *err)
{
    if (m < 0 || m >= c->nm)
        return bp_error_set(err, BP_EINTERNAL, "consensus: no member %d", m);
    bp_cons_item_t *it = find_or_add(c, item, true, err);
    if (!it)
        return err->code ? err->code : BP_ENOMEM;
    if (bp_cons_group_of(it, m) >= 0)
        return bp_error_set(err, BP_EINPUT, "%s: '%s' is given twice", c->m[m].label, item);
    if (it->present == 0) {
        it->dtype = b->dtype;
        it->ndim = b->ndim;
        memcpy(it->shape, b->shape, sizeof it->shape);
    } else if (it->dtype != b->dtype || it->ndim != b->ndim ||
               memcmp(it->shape, b->shape, (size_t)b->ndim * sizeof b->shape[0]) != 0) {
        it->mixed = true;
    }
    uint64_t h[2];
    hash_buf(b, h);
    int g = 0;
    while (g < it->ngroups && (it->groups[g].h[0] != h[0] || it->groups[g].h[1] != h[1]))
        g++;
    if (g == it->ngroups) {
        if (it->ngroups == it->cap) {
            int cap = it->cap ? 2 * it->cap : 2;
            bp_cons_group_t *gs = realloc(it->groups, (size_t)cap * sizeof *gs);
            if (!gs)
                return bp_error_set(err, BP_ENOMEM, "out of memory");
            it->groups = gs;
            it->cap = cap;
        }
        it->groups[g] = (bp_cons_group_t){{h[0], h[1]}, NULL, 0, 0};
        it->ngroups++;
    }
    bp_cons_group_t *gr = &it->groups[g];
    bp_status st = push(&gr->members, &gr->n, &gr->cap, m, err);
    /* members arrive in any order: keep each group's list ascending */
    for (int i = gr->n - 1; !st && i > 0 && gr->members[i - 1] > gr->members[i]; i--) {
        int t = gr->members[i];
        gr->members[i] = gr->members[i - 1];
        gr->members[i - 1] = t;
    }
    if (!st)
        it->present++;
    return st;
}

static int group_cmp(const void *pa, const void *pb)
{
    const bp_cons_group_t *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    return a->members[0] < b->members[0] ? -1 : a->members[0] > b->members[0];
}

void bp_cons_settle(bp_cons_t *c)
{
    for (size_t i = 0; i < c->ni; i++) {
        bp_cons_item_t *it = &c->it[i];
        qsort(it->groups, (size_t)it->ngroups, sizeof *it->groups, group_cmp);
        it->majority = it->ngroups && 2 * it->groups[0].n > it->present ? 0 : -1;
    }
}

size_t bp_cons_nitems(const bp_cons_t *c)
{
    return c->ni;
}

const bp_cons_item_t *bp_cons_item_at(const bp_cons_t *c, size_t i)
{
    return i < c->ni ? &c->it[i] : NULL;
}

int bp_cons_nmembers(const bp_cons_t *c)
{
    return c->nm;
}

const bp_cons_member_t *bp_cons_member_at(const bp_cons_t *c, int m)
{
    return m >= 0 && m < c->nm ? &c->m[m] : NULL;
}

const bp_cons_item_t *bp_cons_find(const bp_cons_t *c, const char *item)
{
    return find_or_add((bp_cons_t *)c, item, false, NULL);
}

int bp_cons_group_of(const bp_cons_item_t *it, int m)
{
    for (int g = 0; g < it->ngroups; g++)
        for (int i = 0; i < it->groups[g].n; i++)
            if (it->groups[g].members[i] == m)
                return g;
    return -1;
}

void bp_cons_hash_str(const bp_cons_group_t *g, char *out, size_t n)
{
    snprintf(out, n, "%016llx", (unsigned long long)g->h[0]);
}

void bp_cons_tally(const bp_cons_t *c, bp_cons_tally_t *t)
{
    memset(t, 0, sizeof *t);
    t->items = c->ni;
    for (size_t i = 0; i < c->ni; i++) {
        const bp_cons_item_t *it = &c->it[i];
        if (it->present < c->nm)
            t->partial++;
        if (it->present >= 2)
            t->compared++;
        if (it->mixed)
            t->mixed++;
        if (it->majority < 0)
            t->split++;
        else if (it->ngroups > 1)
            t->outliers++;
        else if (it->present == c->nm)
            t->unanimous++;
    }
}

size_t bp_cons_outlier_count(const bp_cons_t *c, int m)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ni; i++) {
        const bp_cons_item_t *it = &c->it[i];
        int g = bp_cons_group_of(it, m);
        n += it->majority >= 0 && g >= 0 && g != it->majority;
    }
    return n;
}

/* ---- reading saved runs ----------------------------------------------- */

static const char *str_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

void bp_cons_about_of(const char *fp, char *out, size_t n)
{
    *out = '\0';
    bp_json_err_t je;
    json_t *j = fp ? bp_json_load(fp, strlen(fp), 0, &je) : NULL;
    if (!j)
        return;
    const char *gpu = str_at(j, "backend", "gpu");
    if (gpu) {
        const char *drv = str_at(j, "backend", "driver"), *rt = str_at(j, "backend", "runtime"),
                   *bl = str_at(j, "backend", "cublas");
        snprintf(out, n, "%s, CUDA driver %s, runtime %s, cuBLAS %s", gpu, drv ? drv : "?",
                 rt ? rt : "?", bl ? bl : "?");
    } else {
        json_t *host = json_object_get(j, "host");
        const char *cpu = json_string_value(json_object_get(host, "cpu")),
                   *math = str_at(j, "backend", "cpu_math"), *simd = str_at(j, "backend", "simd"),
                   *glibc = str_at(host, "libs", "glibc"), *sleef = str_at(host, "libs", "sleef"),
                   *mpfr = str_at(host, "libs", "mpfr");
        char what[96];
        if (math)
            snprintf(what, sizeof what, "CPU (%s%s%s)", math, simd ? ", " : "", simd ? simd : "");
        else
            snprintf(what, sizeof what, "host");
        snprintf(out, n, "%s on %s, glibc %s, SLEEF %s, MPFR %s", what, cpu ? cpu : "?",
                 glibc ? glibc : "?", sleef ? sleef : "?", mpfr ? mpfr : "?");
    }
    json_decref(j);
}

/* "<probe>/<key>@<i>/<tensor>" without the instance, into out. */
static void strip_instance(const char *name, char *out, size_t n)
{
    const char *a = strchr(name, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    const char *at = a && b ? memchr(a, '@', (size_t)(b - a)) : NULL;
    if (!at)
        snprintf(out, n, "%s", name);
    else
        snprintf(out, n, "%.*s%s", (int)(at - name), name, b);
}

void bp_cons_tensor_name(const bp_cons_member_t *m, const char *item, char *out, size_t n)
{
    const char *own = json_string_value(json_object_get(m->names, item));
    const char *a = strchr(item, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (own)
        snprintf(out, n, "%s", own);
    else if (!m->inst[0] || !b)
        snprintf(out, n, "%s", item);
    else
        snprintf(out, n, "%.*s@%s%s", (int)(b - item), item, m->inst, b);
}

/* The tensors of one container: item "<prefix><tensor>" for prefix
 * "<probe>/<key>/", or the one names maps the tensor to; member label[@i]
 * from the key's instance suffix. */
static bp_status add_container(bp_cons_t *c, const bp_st_file_t *f, const char *probe,
                               const char *key, const char *label, const char *path,
                               const json_t *names, bp_error_t *err)
{
    char base[256], lab[PATH_MAX + 32], about[512], item[1024], own[1024];
    snprintf(base, sizeof base, "%s", key);
    char *at = strchr(base, '@');
    if (at) {
        snprintf(lab, sizeof lab, "%s%s", label, at);
        *at = '\0';
    } else {
        snprintf(lab, sizeof lab, "%s", label);
    }
    int m = bp_cons_member(c, lab, path, NULL);
    if (m < 0)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    bp_cons_about_of(bp_st_get_meta(f, "fingerprint"), about, sizeof about);
    if (about[0])
        json_object_set_new(c->m[m].about, base, json_string(about));
    for (size_t k = 0; k < f->n; k++) {
        if (*probe) {
            snprintf(own, sizeof own, "%s/%s/%s", probe, key, f->t[k].name);
            snprintf(item, sizeof item, "%s/%s/%s", probe, base, f->t[k].name);
        } else {
            snprintf(own, sizeof own, "%s", f->t[k].name);
            snprintf(item, sizeof item, "%s", f->t[k].name);
        }
        const char *mapped = json_string_value(json_object_get(names, own));
        if (mapped && strcmp(mapped, own) != 0) {
            /* the item another run's tensor is: what the member ran it on
             * is said under that item's key too */
            strip_instance(mapped, item, sizeof item);
            char ikey[256];
            key_of(item, ikey, sizeof ikey);
            if (about[0] && ikey[0])
                json_object_set_new(c->m[m].about, ikey, json_string(about));
            if (!c->m[m].names && !(c->m[m].names = json_object()))
                return bp_error_set(err, BP_ENOMEM, "out of memory");
            json_object_set_new(c->m[m].names, item, json_string(own));
        }
        bp_status st = bp_cons_add(c, item, m, &f->t[k].buf, err);
        if (st)
            return bp_error_prefix(err, "%s: ", path);
    }
    return BP_OK;
}

bp_status bp_cons_add_path(bp_cons_t *c, const char *path, const char *label,
                           const json_t *names, bp_error_t *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return bp_error_set(err, BP_EINPUT, "cannot read '%s': %s", path, strerror(errno));
    bp_st_file_t f;
    bp_status st;
    if (!S_ISDIR(sb.st_mode)) {
        if ((st = bp_tset_load(path, false, &f, err)))
            return st;
        st = add_container(c, &f, "", "", label, path, names, err);
        bp_st_free(&f);
        return st;
    }
    json_t *man;
    if ((st = bp_bundle_read_manifest(path, &man, err)))
        return st;
    json_t *files = json_object_get(man, "files");
    for (size_t i = 0; !st && i < json_array_size(files); i++) {
        /* "<probe>/<key>.safetensors.gz" */
        const char *rel = json_string_value(json_array_get(files, i));
        char probe[256], key[256];
        const char *slash = strrchr(rel, '/'), *dot = strstr(rel, ".safetensors");
        if (!slash || !dot || dot < slash || (size_t)(slash - rel) >= sizeof probe ||
            (size_t)(dot - slash - 1) >= sizeof key) {
            st = bp_error_set(err, BP_EINPUT, "%s/manifest.json: '%s' is not "
                              "<probe>/<key>.safetensors[.gz]", path, rel);
            break;
        }
        snprintf(probe, sizeof probe, "%.*s", (int)(slash - rel), rel);
        snprintf(key, sizeof key, "%.*s", (int)(dot - slash - 1), slash + 1);
        if (!(st = bp_st_read_in(path, rel, &f, err))) {
            st = add_container(c, &f, probe, key, label, path, names, err);
            bp_st_free(&f);
        }
    }
    json_decref(man);
    return st;
}

/* ---- JSON ------------------------------------------------------------- */

static json_t *labels(const bp_cons_t *c, const bp_cons_group_t *g)
{
    json_t *a = json_array();
    for (int i = 0; i < g->n; i++)
        json_array_append_new(a, json_string(c->m[g->members[i]].label));
    return a;
}

json_t *bp_cons_json(const bp_cons_t *c, bool all_items)
{
    json_t *ms = json_array(), *its = json_array();
    for (int m = 0; m < c->nm; m++)
        json_array_append_new(ms, json_pack("{s:s, s:o, s:O, s:I}", "label", c->m[m].label,
                                            "path", c->m[m].path ? json_string(c->m[m].path)
                                                                 : json_null(),
                                            "about", c->m[m].about, "outlier_items",
                                            (json_int_t)bp_cons_outlier_count(c, m)));
    for (size_t i = 0; i < c->ni; i++) {
        const bp_cons_item_t *it = &c->it[i];
        if (!all_items && it->ngroups == 1 && it->present == c->nm)
            continue;
        json_t *gs = json_array(), *out = json_array(), *shape = json_array();
        for (int d = 0; d < it->ndim; d++)
            json_array_append_new(shape, json_integer(it->shape[d]));
        for (int g = 0; g < it->ngroups; g++) {
            char h[40];
            snprintf(h, sizeof h, "%016llx%016llx", (unsigned long long)it->groups[g].h[0],
                     (unsigned long long)it->groups[g].h[1]);
            json_array_append_new(gs, json_pack("{s:s, s:i, s:o}", "fingerprint", h, "size",
                                                it->groups[g].n, "members",
                                                labels(c, &it->groups[g])));
            if (it->majority >= 0 && g != it->majority)
                for (int k = 0; k < it->groups[g].n; k++)
                    json_array_append_new(out,
                                          json_string(c->m[it->groups[g].members[k]].label));
        }
        json_array_append_new(
            its, json_pack("{s:s, s:s, s:o, s:i, s:b, s:b, s:o, s:o}", "item", it->name, "dtype",
                           bp_dtype_name(it->dtype), "shape", shape, "present", it->present,
                           "majority", it->majority >= 0, "mixed", it->mixed, "groups", gs,
                           "outliers", out));
    }
    bp_cons_tally_t t;
    bp_cons_tally(c, &t);
    return json_pack("{s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:o, s:o}", "tally", "items",
                     (json_int_t)t.items, "unanimous", (json_int_t)t.unanimous, "outliers",
                     (json_int_t)t.outliers, "split", (json_int_t)t.split, "partial",
                     (json_int_t)t.partial, "mixed", (json_int_t)t.mixed, "members", ms,
                     "items", its);
}
