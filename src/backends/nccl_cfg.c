/* Collective configurations (nccl_cfg.h). */
#include "nccl_cfg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const bp_coll_algos[] = {"Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect",
                                     "CollNetChain", "PAT", NULL};
const char *const bp_coll_emu_algos[] = {"Pairwise", "Rank", NULL};
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
            if (!(k = known(bp_coll_algos, f)) && !(k = known(bp_coll_emu_algos, f)))
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
    if ((st = names("--algo", algos, bp_coll_algos, bp_coll_emu_algos, a, 16, &na, err)) ||
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


bool bp_coll_cfg_is_nccl(const bp_coll_cfg_t *c)
{
    return !known(bp_coll_emu_algos, c->algo);
}

static bool env_is(const char *name, const char *v)
{
    const char *e = getenv(name);
    return e && !strcmp(e, v);
}

/* name set to v (when v names something), the old value kept in *saved. */
static void set_or_keep(const char *name, const char *v, char **saved)
{
    const char *e = getenv(name);
    *saved = e ? strdup(e) : NULL;
    if (v[0])
        setenv(name, v, 1);
}

static void restore(const char *name, char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

bp_status bp_nccl_cfg_open(const bp_coll_cfg_t *c, int world, const bp_nccl_id_t *id, int rank,
                           bp_nccl_comm_t *out, bp_error_t *err)
{
    *out = NULL;
    if (!bp_coll_cfg_is_nccl(c))
        return bp_error_set(err, BP_EUNAVAIL, "%s is an order of the emulation, not an NCCL "
                            "algorithm", c->algo);
    if (!strncmp(c->algo, "NVLS", 4) && env_is("NCCL_NVLS_ENABLE", "0"))
        return bp_error_set(err, BP_EUNAVAIL, "NVLink multicast is off here "
                            "(NCCL_NVLS_ENABLE=0): not tried");
    if (!strncmp(c->algo, "CollNet", 7) && !env_is("NCCL_COLLNET_ENABLE", "1"))
        return bp_error_set(err, BP_EUNAVAIL, "NCCL_COLLNET_ENABLE is not 1 (no CollNet "
                            "network configured): not tried");
    if (c->nch && bp_nccl_version_code() < 21700)
        return bp_error_set(err, BP_EUNAVAIL, "a channel count per communicator needs NCCL "
                            "2.17 (ncclConfig_t minCTAs, maxCTAs)");
    char *sa, *sp;
    set_or_keep("NCCL_ALGO", c->algo, &sa);
    set_or_keep("NCCL_PROTO", c->proto, &sp);
    bp_nccl_result_t r;
    if (c->nch) {
        bp_nccl_config_t cf;
        bp_nccl_config_init(&cf);
        cf.minCTAs = cf.maxCTAs = c->nch;
        r = BP_NCCL(ncclCommInitRankConfig)(out, world, *id, rank, &cf);
    } else {
        r = BP_NCCL(ncclCommInitRank)(out, world, *id, rank);
    }
    restore("NCCL_ALGO", sa);
    restore("NCCL_PROTO", sp);
    if (r) {
        *out = NULL;
        bp_nccl_fail(err, c->nch ? "ncclCommInitRankConfig" : "ncclCommInitRank", r, NULL);
        err->code = BP_EUNAVAIL;
        return BP_EUNAVAIL;
    }
    return BP_OK;
}
