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

/* ---- sizes ----------------------------------------------------------- */

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
