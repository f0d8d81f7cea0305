/* Collectives: names, configurations, message sizes and inputs (coll.h). */
#include "coll.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll_order.h"
#include "rng.h"

static const char *const kind_names[BP_COLL_NKINDS] = {"all_reduce", "reduce_scatter",
                                                      "all_gather"};
static const char *const op_names[BP_COLL_NOPS] = {"sum", "avg"};

const char *bp_coll_kind_name(bp_coll_kind_t k)
{
    return (unsigned)k < BP_COLL_NKINDS ? kind_names[k] : "?";
}

bool bp_coll_kind_parse(const char *s, bp_coll_kind_t *out)
{
    char t[32];
    size_t w = 0;
    for (; *s && w + 1 < sizeof t; s++)
        if (*s != '_' && *s != '-')
            t[w++] = (char)tolower((unsigned char)*s);
    t[w] = '\0';
    if (*s)
        return false;
    static const char *const bare[BP_COLL_NKINDS] = {"allreduce", "reducescatter",
                                                    "allgather"};
    for (int k = 0; k < BP_COLL_NKINDS; k++)
        if (!strcmp(t, bare[k])) {
            *out = (bp_coll_kind_t)k;
            return true;
        }
    return false;
}

const char *bp_coll_redop_name(bp_coll_redop_t op)
{
    return (unsigned)op < BP_COLL_NOPS ? op_names[op] : "?";
}

bool bp_coll_redop_parse(const char *s, bp_coll_redop_t *out)
{
    for (int k = 0; k < BP_COLL_NOPS; k++)
        if (!strcasecmp(s, op_names[k])) {
            *out = (bp_coll_redop_t)k;
            return true;
        }
    return false;
}

bool bp_coll_kind_reduces(bp_coll_kind_t k)
{
    return k != BP_COLL_ALL_GATHER;
}

/* ---- configurations -------------------------------------------------- */

/* NCCL's names (src/graph/tuning.cc, ncclAlgoStr and ncclProtoStr), then
 * the emulation's own orders. */
const char *const bp_coll_algos[] = {"Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect",
                                     "CollNetChain", "PAT", NULL};
static const char *const emu_algos[] = {"Pairwise", "Rank", NULL};
const char *const bp_coll_protos[] = {"LL", "LL128", "Simple", NULL};

static const char *known(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (!strcasecmp(names[i], s))
            return names[i];
    return NULL;
}

void bp_coll_cfg_name(const bp_coll_cfg_t *c, char *out, size_t n)
{
    size_t w = (size_t)snprintf(out, n, "%s", c->algo[0] ? c->algo : "default");
    if (c->proto[0] && w < n)
        w += (size_t)snprintf(out + w, n - w, "/%s", c->proto);
    if (c->nch && w < n)
        w += (size_t)snprintf(out + w, n - w, "/%dch", c->nch);
    if (c->bucket && w < n) {
        char b[32];
        bp_coll_bytes_format(c->bucket, b, sizeof b);
        snprintf(out + w, n - w, "/bucket=%s", b);
    }
}

bp_status bp_coll_cfg_parse(const char *s, bp_coll_cfg_t *c, bp_error_t *err)
{
    memset(c, 0, sizeof *c);
    char buf[128], *save = NULL;
    if (strlen(s) >= sizeof buf)
        return bp_error_set(err, BP_EINPUT, "collective configuration '%.40s...' is too long",
                            s);
    snprintf(buf, sizeof buf, "%s", s);
    int field = 0;
    bool have_proto = false, have_ch = false, have_bucket = false;
    for (char *f = strtok_r(buf, "/", &save); f; f = strtok_r(NULL, "/", &save), field++) {
        const char *k;
        if (field == 0) {
            if (!strcasecmp(f, "default"))
                continue;
            if (!(k = known(bp_coll_algos, f)) && !(k = known(emu_algos, f)))
                return bp_error_set(err, BP_EINPUT, "'%s': unknown algorithm '%s' (default, "
                                    "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, "
                                    "PAT)", s, f);
            snprintf(c->algo, sizeof c->algo, "%s", k);
        } else if ((k = known(bp_coll_protos, f))) {
            if (have_proto)
                return bp_error_set(err, BP_EINPUT, "'%s': two protocols", s);
            have_proto = true;
            snprintf(c->proto, sizeof c->proto, "%s", k);
        } else if (!strncasecmp(f, "bucket=", 7)) {
            if (have_bucket || !bp_coll_bytes_parse(f + 7, &c->bucket))
                return bp_error_set(err, BP_EINPUT, "'%s': bucket= needs a size such as 25M, "
                                    "once", s);
            have_bucket = true;
        } else {
            char *end;
            errno = 0;
            long v = strtol(f, &end, 10);
            if (have_ch || errno || end == f || strcasecmp(end, "ch") || v < 1 || v > 64)
                return bp_error_set(err, BP_EINPUT, "'%s': '%s' is not a protocol (LL, LL128, "
                                    "Simple), a channel count (1ch to 64ch) or bucket=SIZE",
                                    s, f);
            have_ch = true;
            c->nch = (int)v;
        }
    }
    if (!field)
        return bp_error_set(err, BP_EINPUT, "an empty collective configuration");
    return BP_OK;
}

bool bp_coll_cfg_equal(const bp_coll_cfg_t *a, const bp_coll_cfg_t *b)
{
    return !strcmp(a->algo, b->algo) && !strcmp(a->proto, b->proto) && a->nch == b->nch &&
           a->bucket == b->bucket;
}

/* Splits a comma list into the names of table (or "default": ""), "all"
 * taking the whole table. */
static bp_status names(const char *what, const char *list, const char *const *table,
                       const char *const *extra, char out[][16], int max, int *n,
                       bp_error_t *err)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        const char *k = NULL;
        if (!strcasecmp(f, "all")) {
            for (int i = 0; table[i] && *n < max; i++)
                snprintf(out[(*n)++], 16, "%s", table[i]);
            continue;
        }
        if (strcasecmp(f, "default") && !(k = known(table, f)) &&
            !(extra && (k = known(extra, f))))
            return bp_error_set(err, BP_EINPUT, "%s: unknown name '%s'", what, f);
        if (*n == max)
            return bp_error_set(err, BP_EINPUT, "%s: more than %d names", what, max);
        snprintf(out[(*n)++], 16, "%s", k ? k : "");
    }
    if (!*n)
        return bp_error_set(err, BP_EINPUT, "%s: no name in '%s'", what, list);
    return BP_OK;
}

bp_status bp_coll_cfg_expand(const char *algos, const char *protos, const char *channels,
                             bp_coll_cfg_t *out, size_t max, size_t *n, bp_error_t *err)
{
    char a[16][16], p[8][16], ch[16][16];
    int na, np, nc = 0;
    bp_status st;
    if ((st = names("--algo", algos, bp_coll_algos, emu_algos, a, 16, &na, err)) ||
        (st = names("--proto", protos, bp_coll_protos, NULL, p, 8, &np, err)))
        return st;
    int chv[16];
    char buf[128], *save = NULL;
    snprintf(buf, sizeof buf, "%s", channels);
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(f, &end, 10);
        if (!strcasecmp(f, "default"))
            v = 0;
        else if (end == f || *end || v < 1 || v > 64)
            return bp_error_set(err, BP_EINPUT, "--channels: '%s' is not default or 1 to 64",
                                f);
        if (nc == 16)
            return bp_error_set(err, BP_EINPUT, "--channels: more than 16 counts");
        chv[nc] = (int)v;
        snprintf(ch[nc++], 16, "%s", f);
    }
    if (!nc)
        return bp_error_set(err, BP_EINPUT, "--channels: no count in '%s'", channels);
    *n = 0;
    out[(*n)++] = (bp_coll_cfg_t){{0}, {0}, 0, 0};
    for (int i = 0; i < na; i++)
        for (int j = 0; j < np; j++)
            for (int k = 0; k < nc; k++) {
                bp_coll_cfg_t c = {{0}, {0}, chv[k], 0};
                snprintf(c.algo, sizeof c.algo, "%.15s", a[i]);
                snprintf(c.proto, sizeof c.proto, "%.7s", p[j]);
                bool dup = false;
                for (size_t q = 0; q < *n && !dup; q++)
                    dup = bp_coll_cfg_equal(&out[q], &c);
                if (dup)
                    continue;
                if (*n == max)
                    return bp_error_set(err, BP_EINPUT, "more than %zu collective "
                                        "configurations", max);
                out[(*n)++] = c;
            }
    return BP_OK;
}

/* ---- sizes ----------------------------------------------------------- */

bool bp_coll_bytes_parse(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
        return false;
    double v = strtod(s, &end);
    if (errno || end == s)
        return false;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1024.0, end++; break;
    case 'M': mul = 1048576.0, end++; break;
    case 'G': mul = 1073741824.0, end++; break;
    case 'T': mul = 1099511627776.0, end++; break;
    default: break;
    }
    if (mul > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return false;
    double b = v * mul;
    if (!(b >= 1) || b > 1099511627776.0 || b != floor(b))
        return false;
    *out = (uint64_t)b;
    return true;
}

void bp_coll_bytes_format(uint64_t b, char *out, size_t n)
{
    static const char suf[] = "KMGT";
    int k = -1;
    double v = (double)b;
    while (k < 3 && v >= 1024 && fmod(v, 1024) == 0) {
        v /= 1024;
        k++;
    }
    /* a non-round size: one decimal when that is exact, else bytes */
    if (k < 3 && v >= 1024 && fmod(v * 10, 1024) == 0) {
        v /= 1024;
        k++;
        snprintf(out, n, "%.1f%c", v, suf[k]);
        return;
    }
    if (k < 0)
        snprintf(out, n, "%llu", (unsigned long long)b);
    else
        snprintf(out, n, "%.0f%c", v, suf[k]);
}

/* The sizes training frameworks send (each line says where it comes from). */
static const bp_coll_model_size_t models[] = {
    {16ull * 4096, 0, "Llama-2 7B o_proj partials of 16 tokens (stack --ranks)"},
    {0, 1ull << 20, "PyTorch DDP's first bucket (1 MiB)"},
    {0, 25ull << 20, "PyTorch DDP bucket (bucket_cap_mb=25)"},
    {1664ull * 5120, 0, "1664 x 5120 (ROCm/rocm-systems#11661)"},
    {2048ull * 5120, 0, "2048 x 5120 (ROCm/rocm-systems#11661)"},
    {4096ull * 2048, 0, "hidden 4096 x 2048 tokens (Llama-2 7B)"},
    {5120ull * 4096, 0, "hidden 5120 x 4096 tokens (Llama-2 13B)"},
    {8192ull * 4096, 0, "hidden 8192 x 4096 tokens (Llama-2 70B)"},
    {4096ull * 4096, 0, "hidden^2 = 4096^2: DeepSpeed's reduce_bucket_size 'auto'"},
    {4096ull * 11008, 0, "one Llama-2 7B MLP weight, 4096 x 11008 (ZeRO/FSDP gradient)"},
    {14336ull * 4096, 0, "MLP 14336 x 4096 tokens (Llama-3 8B)"},
    {40000000ull, 0, "Megatron-LM DDP bucket (40M elements)"},
    {50000000ull, 0, "DeepSpeed ZeRO-3 stage3_prefetch_bucket_size (5e7)"},
    {202383360ull, 0, "FSDP flat parameter of one Llama-2 7B decoder layer"},
    {0, 0, NULL}};

const bp_coll_model_size_t *bp_coll_model_sizes(void)
{
    return models;
}

static int cmp_size(const void *a, const void *b)
{
    uint64_t x = ((const bp_coll_size_t *)a)->bytes, y = ((const bp_coll_size_t *)b)->bytes;
    return x < y ? -1 : x > y;
}

static bp_status push(bp_coll_size_t **v, size_t *n, size_t *cap, uint64_t b,
                      const char *what, bp_error_t *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        bp_coll_size_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return bp_error_set(err, BP_ENOMEM, "out of memory");
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (bp_coll_size_t){b, what};
    return BP_OK;
}

bp_status bp_coll_sizes_parse(const char *s, size_t esize, bp_coll_size_t **out, size_t *n,
                              bp_error_t *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    char buf[512], *save = NULL;
    if (strlen(s) >= sizeof buf)
        return bp_error_set(err, BP_EINPUT, "--bytes: the list is too long");
    snprintf(buf, sizeof buf, "%s", s);
    bp_status st = BP_OK;
    for (char *f = strtok_r(buf, ",", &save); f && !st; f = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(f, ':');
        uint64_t a, b;
        if (!c1) {
            if (!bp_coll_bytes_parse(f, &a)) {
                st = bp_error_set(err, BP_EINPUT, "--bytes: '%s' is not a size (1 to 1T: "
                                  "4096, 64K, 1.5M, 1G)", f);
                break;
            }
            st = push(out, n, &cap, a, NULL, err);
            continue;
        }
        *c1 = '\0';
        char *c2 = strchr(c1 + 1, ':');
        if (c2)
            *c2 = '\0';
        bool pow2 = c2 && !strcasecmp(c2 + 1, "pow2");
        if (!bp_coll_bytes_parse(f, &a) || !bp_coll_bytes_parse(c1 + 1, &b) || b < a ||
            (c2 && !pow2)) {
            st = bp_error_set(err, BP_EINPUT, "--bytes: '%s:%s%s%s' is not A:B or A:B:pow2 "
                              "with sizes A <= B", f, c1 + 1, c2 ? ":" : "", c2 ? c2 + 1 : "");
            break;
        }
        uint64_t p = 1;
        while (p < a)
            p <<= 1;
        for (; !st && p <= b; p <<= 1)
            st = push(out, n, &cap, p, NULL, err);
        for (const bp_coll_model_size_t *m = models; !pow2 && !st && m->what; m++) {
            uint64_t mb = m->elements ? m->elements * esize : m->bytes;
            if (mb >= a && mb <= b)
                st = push(out, n, &cap, mb, m->what, err);
        }
    }
    if (!st && !*n)
        st = bp_error_set(err, BP_EINPUT, "--bytes: no size in '%s'", s);
    if (!st && *n > 4096)
        st = bp_error_set(err, BP_EINPUT, "--bytes: more than 4096 sizes");
    if (st) {
        free(*out);
        *out = NULL;
        *n = 0;
        return st;
    }
    qsort(*out, *n, sizeof **out, cmp_size);
    /* one entry per size, the description kept */
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (k && (*out)[k - 1].bytes == (*out)[i].bytes) {
            if (!(*out)[k - 1].what)
                (*out)[k - 1].what = (*out)[i].what;
            continue;
        }
        (*out)[k++] = (*out)[i];
    }
    *n = k;
    return BP_OK;
}

uint64_t bp_coll_elements(bp_coll_kind_t k, uint64_t bytes, size_t esize, int world)
{
    uint64_t n = esize ? bytes / esize : 0;
    if (k != BP_COLL_ALL_REDUCE && world > 0)
        n -= n % (uint64_t)world;
    return n;
}

/* ---- inputs ---------------------------------------------------------- */

static uint64_t raw_bits(uint64_t seed, uint64_t stream, uint64_t i, size_t esize)
{
    /* one Philox block per 4 elements of 32 bits (8 of 16) */
    size_t per = 16 / esize;
    uint64_t blk = i / per;
    uint32_t ctr[4] = {(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)stream,
                       (uint32_t)(stream >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, o[4];
    bp_philox4x32_10(ctr, key, o);
    size_t j = (size_t)(i % per);
    if (esize == 4)
        return o[j];
    return (o[j / 2] >> (16 * (j % 2))) & 0xffffu;
}

void bp_coll_input(bp_coll_input_t in, bp_dtype_t dt, int world, int rank, uint64_t seed,
                   uint64_t i0, uint64_t n, void *out)
{
    size_t es = bp_dtype_info(dt)->size;
    switch (in) {
    case BP_COLL_VALUES:
        /* the stream's double rounded once to dt, as randn on every backend */
        for (uint64_t i = 0; i < n; i++) {
            double v = bp_rng_normal(seed, BP_COLL_STREAM + (uint64_t)rank, i0 + i, 0.0, 1.0);
            bp_dtype_store_bits(dt, out, (size_t)i,
                                bp_dtype_bits_from_double(dt, bp_coll_round(dt, v)));
        }
        return;
    case BP_COLL_BITS:
        for (uint64_t i = 0; i < n; i++)
            bp_dtype_store_bits(dt, out, (size_t)i,
                                raw_bits(seed, BP_COLL_BITS_STREAM + (uint64_t)rank, i0 + i, es));
        return;
    case BP_COLL_PROBES: {
        size_t q = bp_coll_probe_block(dt, world);
        if (!q) {
            memset(out, 0, (size_t)n * es);
            return;
        }
        /* one block, then tiled */
        uint64_t first = i0 % q, done = 0;
        char *blk = malloc(q * es);
        if (!blk) { /* slow path: element by element */
            for (uint64_t i = 0; i < n; i++)
                bp_dtype_store_bits(dt, out, (size_t)i,
                                    bp_dtype_bits_from_double(
                                        dt, bp_coll_probe_value(dt, world, rank, i0 + i)));
            return;
        }
        for (size_t j = 0; j < q; j++)
            bp_dtype_store_bits(dt, blk, j,
                                bp_dtype_bits_from_double(dt, bp_coll_probe_value(dt, world,
                                                                                  rank, j)));
        while (done < n) {
            uint64_t take = q - first < n - done ? q - first : n - done;
            memcpy((char *)out + done * es, blk + first * es, (size_t)take * es);
            done += take;
            first = 0;
        }
        free(blk);
        return;
    }
    }
}
