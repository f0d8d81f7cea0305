/* The emulated collectives (coll_emu.h). */
#include "coll_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bp_status bp_coll_emu_for(const bp_coll_cfg_t *c, bp_dtype_t dt, bp_coll_emu_t *m,
                          char *desc, size_t n, bp_error_t *err)
{
    memset(m, 0, sizeof *m);
    const char *a = c->algo;
    if (!a[0] || !strcmp(a, "Ring"))
        m->algo = BP_EMU_RING;
    else if (!strcmp(a, "Tree"))
        m->algo = BP_EMU_CHAIN;
    else if (!strcmp(a, "Pairwise"))
        m->algo = BP_EMU_PAIRWISE;
    else if (!strcmp(a, "Rank"))
        m->algo = BP_EMU_RANK;
    else
        return bp_error_set(err, BP_EUNAVAIL, "the emulation models Ring, Tree, Pairwise and "
                            "Rank, not %s", a);
    uint64_t bytes = !strcmp(c->proto, "LL") ? 4096 : !strcmp(c->proto, "LL128") ? 32768
                                                                                 : 131072;
    m->chunk = bytes / bp_dtype_info(dt)->size;
    m->nch = c->nch ? c->nch : 1;
    static const char *const what[] = {"ring", "chain to rank 0", "pairwise tree",
                                       "rank order"};
    if (m->algo == BP_EMU_RING)
        snprintf(desc, n, "emulated ring: %d channel%s, pieces of %llu bytes", m->nch,
                 m->nch == 1 ? "" : "s", (unsigned long long)bytes);
    else
        snprintf(desc, n, "emulated %s", what[m->algo]);
    return BP_OK;
}

int bp_coll_emu_piece(const bp_coll_emu_t *m, bp_coll_kind_t kind, int world, uint64_t i,
                      uint64_t n)
{
    if (m->algo != BP_EMU_RING || world < 1 || !n)
        return 0;
    uint64_t W = (uint64_t)world;
    if (kind == BP_COLL_REDUCE_SCATTER) /* rank c's output */
        return (int)(i / (n / W));
    if (!m->chunk) /* W equal parts */
        return (int)((unsigned __int128)i * W / n);
    uint64_t per_ch = W * m->chunk, loop = (uint64_t)m->nch * per_ch;
    return (int)(i % loop % per_ch / m->chunk);
}

void bp_coll_emu_tree(const bp_coll_emu_t *m, int world, int piece, bp_coll_tree_t *t)
{
    int r[BP_COLL_ORDER_MAX] = {0};
    int W = world < BP_COLL_ORDER_MAX ? world : BP_COLL_ORDER_MAX;
    switch (m->algo) {
    case BP_EMU_RING:
        for (int k = 0; k < W; k++)
            r[k] = (piece + 1 + k) % W;
        bp_coll_tree_chain(t, W, r);
        break;
    case BP_EMU_CHAIN:
        for (int k = 0; k < W; k++)
            r[k] = W - 1 - k;
        bp_coll_tree_chain(t, W, r);
        break;
    case BP_EMU_PAIRWISE:
        bp_coll_tree_pairwise(t, W);
        break;
    default:
        for (int k = 0; k < W; k++)
            r[k] = k;
        bp_coll_tree_chain(t, W, r);
    }
    if (m->wide) /* the root's sum is the result, rounded once */
        for (int k = 0; k + 2 < W; k++)
            t->prec[k] = 24;
}

bp_status bp_coll_emu_run(const bp_coll_emu_t *m, bp_coll_kind_t kind, bp_coll_redop_t op,
                          bp_dtype_t dt, int world, const void *const *in, uint64_t n,
                          void *out, bp_error_t *err)
{
    size_t es = bp_dtype_info(dt)->size;
    if (world < 1 || world > BP_COLL_ORDER_MAX)
        return bp_error_set(err, BP_EUNAVAIL, "the emulation runs 1 to %d ranks, not %d",
                            BP_COLL_ORDER_MAX, world);
    if (kind == BP_COLL_ALL_GATHER) {
        uint64_t per = n / (uint64_t)world;
        for (int r = 0; r < world; r++)
            memcpy((char *)out + (size_t)(r * per) * es, in[r], (size_t)per * es);
        return BP_OK;
    }
    bp_coll_tree_t trees[BP_COLL_ORDER_MAX];
    for (int p = 0; p < world; p++)
        bp_coll_emu_tree(m, world, p, &trees[p]);
    /* 1/W in the dtype: NCCL's PreMulSum scalar */
    double scale = bp_coll_round(dt, 1.0 / world);
    for (uint64_t i = 0; i < n; i++) {
        float v[BP_COLL_ORDER_MAX];
        for (int r = 0; r < world; r++) {
            double xv = bp_dtype_bits_to_double(dt, bp_dtype_load_bits(dt, in[r], (size_t)i));
            /* the product of two dtype values is exact in a double */
            v[r] = (float)(op == BP_COLL_AVG ? bp_coll_round(dt, xv * scale) : xv);
        }
        float y = bp_coll_tree_eval(&trees[bp_coll_emu_piece(m, kind, world, i, n)], v, dt);
        bp_dtype_store_bits(dt, out, (size_t)i, bp_dtype_bits_from_double(dt, y));
    }
    return BP_OK;
}
