/* Comparison engine, the fast paths: differences at the edges of the
 * memcmp blocks, specials and small distances inside vector chunks, under
 * every kernel; then a randomised cross-check against a plain
 * element-by-element reimplementation written here (its own
 * classification, bins and maxima, through dtype.h's generic helpers) on
 * lengths that span many blocks.  Set BP_SEED to replay a random run. */
#include <time.h>

#include "compare_fixtures.h"

/* One difference at the last element of a block, the first of the next,
 * and the very end, for 4-byte and 2-byte elements. */
START_TEST(t_block_edges)
{
    static const struct {
        bp_dtype_t dt;
        size_t blk;
        uint64_t one, next;
    } v[] = {{BP_F32, BLK_F32, 0x3f800000, 0x3f800001},
             {BP_BF16, BLK_B16, 0x3f80, 0x3f81},
             {BP_F16, BLK_B16, 0x3c00, 0x3c01},
             {BP_F64, BLK_F32 / 2, 0x3ff0000000000000ull,
              0x3ff0000000000001ull},
             {BP_I32, BLK_F32, 7, 8}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        const size_t blk = v[k].blk, n = 3 * blk + 17;
        const size_t where[][3] = {{blk - 1, SIZE_MAX, SIZE_MAX},
                                   {blk, SIZE_MAX, SIZE_MAX},
                                   {n - 1, SIZE_MAX, SIZE_MAX},
                                   {0, 2 * blk - 1, n - 1},
                                   {SIZE_MAX, SIZE_MAX, SIZE_MAX}};
        for (size_t w = 0; w < 5 * NKERNELS; w++) {
            if (!bp_cmp_set_kernel(kernels[w / 5]))
                continue;
            bp_buf_t a = mk(v[k].dt, n), b = mk(v[k].dt, n);
            fill(&a, v[k].one);
            fill(&b, v[k].one);
            size_t nd = 0;
            for (int j = 0; j < 3; j++)
                if (where[w % 5][j] != SIZE_MAX) {
                    put(&b, where[w % 5][j], v[k].next);
                    nd++;
                }
            /* first_k 0: the vector kernels take every chunk at once. */
            bp_cmp_opts_t o;
            bp_cmp_opts_init(&o);
            o.first_k = 0;
            bp_cmp_t c = cmp_pol(&a, &b, "exact", &o);
            ck_assert_msg(c.mismatched == nd && c.hist[0] == n - nd &&
                          c.hist[1] == nd && c.nfirst == 0 &&
                          (nd == 0 || c.max_ulp_idx == where[w % 5][0]),
                          "%s case %zu, %s kernel, first_k 0",
                          bp_dtype_name(v[k].dt), w % 5, kernels[w / 5]);
            bp_cmp_free(&c);
            c = cmp_pol(&a, &b, "exact", NULL);
            ck_assert_msg(c.mismatched == nd && c.hist[0] == n - nd &&
                          c.hist[1] == nd,
                          "%s case %zu, %s kernel: %zu mismatched, want %zu",
                          bp_dtype_name(v[k].dt), w % 5, kernels[w / 5],
                          c.mismatched, nd);
            ck_assert_uint_eq(c.nfirst, nd);
            for (size_t j = 0; j < nd; j++)
                ck_assert_uint_eq(c.first[j].index, where[w % 5][j]);
            if (nd)
                ck_assert_uint_eq(c.max_ulp_idx, where[w % 5][0]);
            ck_assert(c.pass == (nd == 0));
            bp_cmp_free(&c);
            bp_buf_free(&a);
            bp_buf_free(&b);
        }
    }
    ck_assert(bp_cmp_set_kernel("auto"));
}
END_TEST

/* Chunks of 1024 finite elements but one special each, with nothing to
 * record (first_k 0), so that every special meets every kernel's refusal
 * rule; expectations as in t_nonfinite and t_signed_zero. */
START_TEST(t_kernel_specials)
{
    static const struct {
        bp_dtype_t dt;
        uint64_t one, one1, maxf, inf, ninf, qnan, qnan2, nzero;
    } v[] = {
        {BP_F32, 0x3f800000, 0x3f800001, 0x7f7fffff, 0x7f800000, 0xff800000,
         0x7fc00000, 0xffc00001, 0x80000000},
        {BP_BF16, 0x3f80, 0x3f81, 0x7f7f, 0x7f80, 0xff80, 0x7fff, 0xffff,
         0x8000},
        {BP_F16, 0x3c00, 0x3c01, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0xfe01,
         0x8000},
    };
    const size_t ch = 1024, n = 8 * ch;
    for (size_t k = 0; k < 3; k++)
        for (int kn = 0; kn < NKERNELS; kn++) {
            if (!bp_cmp_set_kernel(kernels[kn]))
                continue;
            bp_buf_t a = mk(v[k].dt, n), b = mk(v[k].dt, n);
            fill(&a, v[k].one);
            fill(&b, v[k].one);
            put(&b, 1 * ch + 5, v[k].one1);                  /* 1 ulp */
            put(&a, 2 * ch + 7, v[k].maxf);                  /* overflow */
            put(&b, 2 * ch + 7, v[k].inf);
            put(&a, 3 * ch, v[k].inf);                       /* +inf/-inf */
            put(&b, 3 * ch, v[k].ninf);
            put(&a, 4 * ch + 9, v[k].qnan);                  /* NaN payloads */
            put(&b, 4 * ch + 9, v[k].qnan2);
            put(&a, 5 * ch + 1, v[k].inf);                   /* inf == inf */
            put(&b, 5 * ch + 1, v[k].inf);
            put(&a, 6 * ch + 2, 0);                          /* +0/-0 */
            put(&b, 6 * ch + 2, v[k].nzero);
            put(&a, 7 * ch + 1023, v[k].one);                /* 1 -> NaN */
            put(&b, 7 * ch + 1023, v[k].qnan);
            bp_cmp_opts_t o;
            bp_cmp_opts_init(&o);
            o.first_k = 0;
            for (int payload = 0; payload < 4; payload++) {
                /* 0, 1: NaN payloads by class or counted; 2, 3: the same
                 * with the sign of a zero excused */
                o.nan_payload = payload & 1;
                o.zero_sign_ignore = payload >= 2;
                bp_cmp_t c = cmp_pol(&a, &b, "ulp=1", &o);
                size_t cls = 3 + (size_t)(payload & 1), zex = payload >= 2;
                ck_assert_msg(c.mismatched == 2 + cls &&
                              c.class_changes == cls &&
                              c.hist[BP_HIST_CLASS] == cls &&
                              c.hist[BP_HIST_ZERO] == 1 &&
                              c.hist[1] == 1 && c.beyond_policy == cls + 1 - zex &&
                              c.zero_sign_diffs == 1 && c.zero_sign_excused == zex &&
                              c.nan_payload_diffs == (size_t)!(payload & 1) &&
                              c.max_ulp == UINT64_MAX &&
                              c.max_ulp_idx == 2 * ch + 7 &&
                              isinf(c.max_abs) && c.max_abs_idx == 2 * ch + 7,
                              "%s, %s kernel, nan_payload %d: %zu mismatched, "
                              "%zu class, %zu zero, max ulp at %zu",
                              bp_dtype_name(v[k].dt), kernels[kn], payload,
                              c.mismatched, c.class_changes,
                              c.zero_sign_diffs, c.max_ulp_idx);
                bp_cmp_free(&c);
            }
            bp_buf_free(&a);
            bp_buf_free(&b);
        }
    ck_assert(bp_cmp_set_kernel("auto"));
}
END_TEST

/* Chunks whose distances are all small (0-8 ulp, the common drift) and
 * chunks with one larger one, every kernel: bins against the distances
 * the test put there. */
START_TEST(t_small_distances)
{
    static const struct {
        bp_dtype_t dt;
        uint64_t base; /* a normal value with room above and below */
    } v[] = {{BP_F32, 0x3f800000 + 1000}, {BP_BF16, 0x3f80 + 40},
             {BP_F16, 0x3c00 + 100}};
    static const int bin_of[] = {0, 1, 2, 3, 3, 4, 4, 4, 4, 5, 5};
    const size_t n = 6 * 1024 + 37;
    sm_state = 99;
    for (size_t k = 0; k < 3; k++) {
        bp_buf_t a = mk(v[k].dt, n), b = mk(v[k].dt, n);
        uint64_t want[BP_HIST_BINS] = {0};
        for (size_t i = 0; i < n; i++) {
            uint64_t x = v[k].base + rnd() % 16, dist = rnd() % 9;
            /* chunk 3 also holds one distance of 10 */
            if (i == 3 * 1024 + 500)
                dist = 10;
            if (i / 1024 == 1) /* chunk 1: equal */
                dist = 0;
            put(&a, i, x);
            put(&b, i, rnd() % 2 ? x + dist : x - dist);
            want[bin_of[dist]]++;
        }
        for (int kn = 0; kn < NKERNELS; kn++) {
            if (!bp_cmp_set_kernel(kernels[kn]))
                continue;
            bp_cmp_opts_t o;
            bp_cmp_opts_init(&o);
            o.first_k = 0;
            bp_cmp_t c = cmp_pol(&a, &b, "exact", &o);
            for (int j = 0; j < BP_HIST_BINS; j++)
                ck_assert_msg(c.hist[j] == want[j],
                              "%s, %s kernel: bin %s holds %" PRIu64
                              ", want %" PRIu64, bp_dtype_name(v[k].dt),
                              kernels[kn], bp_hist_label(j), c.hist[j],
                              want[j]);
            ck_assert_uint_eq(c.max_ulp, 10);
            ck_assert_uint_eq(c.max_ulp_idx, 3 * 1024 + 500);
            bp_cmp_free(&c);
        }
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
    ck_assert(bp_cmp_set_kernel("auto"));
}
END_TEST

/* ---- The plain reimplementation for the randomised cross-check. ---- */

typedef struct {
    size_t mism, beyond, cls, zsd, zse, npd;
    size_t nz; /* mismatches other than a zero's sign: they carry the maxima */
    double max_abs, max_rel;
    uint64_t max_ulp;
    size_t iabs, irel, iulp;
    uint64_t hist[BP_HIST_BINS];
} naive_t;

static int naive_bin(uint64_t d)
{
    if (d <= 2)
        return (int)d;
    int k = 2;
    uint64_t hi = 2;
    while (d > hi) {
        k++;
        if (hi >= (1ull << 63))
            break;
        hi *= 2;
    }
    return k;
}

static void naive(const bp_buf_t *a, const bp_buf_t *b,
                  const bp_policy_t *p, bool payload, bool zero_ok, naive_t *r,
                  bp_mismatch_t *first, size_t k, size_t *nfirst)
{
    memset(r, 0, sizeof *r);
    *nfirst = 0;
    const bp_dtype_t dt = a->dtype;
    const bool isf = bp_dtype_info(dt)->is_float;
    for (size_t i = 0; i < a->numel; i++) {
        uint64_t x = bp_buf_bits(a, i), y = bp_buf_bits(b, i);
        double va = bp_dtype_bits_to_double(dt, x);
        double vb = bp_dtype_bits_to_double(dt, y);
        bool nx = bp_dtype_bits_isnan(dt, x), ny = bp_dtype_bits_isnan(dt, y);
        bool fx = isf ? isfinite(va) : true, fy = isf ? isfinite(vb) : true;
        if (x == y) {
            r->hist[0]++;
            continue;
        }
        if (nx && ny && !payload) {
            r->npd++;
            r->hist[0]++;
            continue;
        }
        if (isf && va == 0 && vb == 0) {
            /* +0 against -0: its own class, no distance, excused or not */
            bool ok = zero_ok || p->zero_sign_ignore;
            r->zsd++;
            r->zse += ok;
            r->hist[BP_HIST_ZERO]++;
            r->mism++;
            r->beyond += !ok;
            if (*nfirst < k)
                first[(*nfirst)++] = (bp_mismatch_t){.index = i, .a = x, .b = y,
                                                     .beyond_policy = !ok};
            continue;
        }
        uint64_t d;
        double ab, rel;
        bool within, cls = !(fx && fy);
        if (cls) {
            d = UINT64_MAX;
            ab = rel = INFINITY;
            within = false;
            r->cls++;
            r->hist[BP_HIST_CLASS]++;
        } else {
            d = bp_ulp_distance(dt, x, y);
            ab = isf ? fabs(va - vb) : (double)d;
            rel = ab / fabs(va);
            within = (p->has_ulp && d <= p->max_ulp) ||
                     (p->has_tol && ab <= p->abs + p->rel * fabs(va));
            r->hist[naive_bin(d)]++;
        }
        r->mism++;
        r->nz++;
        if (!within)
            r->beyond++;
        if (r->nz == 1 || ab > r->max_abs) {
            r->max_abs = ab;
            r->iabs = i;
        }
        if (r->nz == 1 || rel > r->max_rel) {
            r->max_rel = rel;
            r->irel = i;
        }
        if (r->nz == 1 || d > r->max_ulp) {
            r->max_ulp = d;
            r->iulp = i;
        }
        if (*nfirst < k)
            first[(*nfirst)++] = (bp_mismatch_t){
                .index = i, .a = x, .b = y, .ulp = d, .abs = ab, .rel = rel,
                .class_change = cls, .beyond_policy = !within};
    }
}


static bool is_special(bp_dtype_t dt, uint64_t x)
{
    return bp_dtype_bits_isnan(dt, x) || bp_dtype_bits_isinf(dt, x);
}

/* A value near x on the line, or a special, or random bits. */
static uint64_t perturb1(bp_dtype_t dt, uint64_t x)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    unsigned w = (unsigned)in->size * 8;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    uint64_t sign = 1ull << (w - 1);
    uint64_t infb = in->is_float ? ((1ull << in->exp_bits) - 1)
                                       << in->man_bits
                                 : 0;
    switch (rnd() % 10) {
    case 0: return rnd() & mask;                          /* anything */
    case 1: return in->is_float ? (x ^ sign) & mask : (x + 1) & mask;
    case 2: return in->is_float ? (infb | (rnd() & (sign - 1))) & mask
                                : rnd() & mask;           /* inf/NaN */
    case 3: return in->is_float ? (rnd() & 1 ? sign : 0) : 0; /* zeros */
    default: {
        uint64_t k = rnd() % (rnd() % 4 ? 5 : 100000);
        return (rnd() & 1 ? x + k : x - k) & mask;        /* nearby */
    }
    }
}

/* Without specials, chunks reach the vector kernels. */
static uint64_t perturb(bp_dtype_t dt, uint64_t x, bool finite)
{
    uint64_t y;
    do
        y = perturb1(dt, x);
    while (finite && is_special(dt, y));
    return y;
}

START_TEST(t_random_vs_naive)
{
    const char *env = getenv("BP_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    printf("check_compare: random cross-check seed %" PRIu64
           " (BP_SEED=%" PRIu64 " to replay)\n", seed, seed);
    fflush(stdout);
    sm_state = seed;
    static const char *pols[] = {"exact", "ulp=2", "abs=1e-3,rel=1e-2",
                                 "ulp=4,fraction=0.3", "rel=0.5",
                                 "ulp=5000000000", "exact,zero_sign=ignore"};
    for (int round = 0; round < 90; round++) {
        bp_dtype_t dt = (bp_dtype_t)(rnd() % BP_NDTYPES);
        size_t n = 1 + rnd() % 70000;
        unsigned density = (unsigned)(rnd() % 4); /* of mismatches */
        bool finite = rnd() % 2;
        bp_buf_t a = mk(dt, n), b = mk(dt, n);
        unsigned w = (unsigned)bp_dtype_info(dt)->size * 8;
        uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t x;
            do
                x = rnd() & mask;
            while (finite && is_special(dt, x));
            if (rnd() % 3 == 0) /* moderate magnitudes too */
                x = bp_dtype_bits_from_double(dt, (double)(rnd() % 2000) /
                                                      64.0 - 15.0);
            put(&a, i, x);
            bool diff = density == 0   ? rnd() % 20000 == 0
                        : density == 1 ? rnd() % 50 == 0
                        : density == 2 ? rnd() % 2 == 0
                                       : true;
            put(&b, i, diff ? perturb(dt, x, finite) : x);
        }
        bp_policy_t p;
        bp_error_t e;
        const char *ps = pols[rnd() % 7];
        ck_assert_int_eq(bp_policy_parse(ps, &p, &e), BP_OK);
        bp_cmp_opts_t o;
        bp_cmp_opts_init(&o);
        o.nan_payload = rnd() % 2;
        o.zero_sign_ignore = rnd() % 4 == 0;
        o.first_k = rnd() % 3 == 0 ? 0 : rnd() % 40;
        naive_t r;
        bp_mismatch_t *first = calloc(o.first_k + 1, sizeof *first);
        size_t nfirst;
        naive(&a, &b, &p, o.nan_payload, o.zero_sign_ignore, &r, first, o.first_k, &nfirst);
        for (int kn = 0; kn < NKERNELS; kn++) {
            if (!bp_cmp_set_kernel(kernels[kn]))
                continue;
            bp_cmp_t c;
            ck_assert_int_eq(bp_compare(&a, &b, &p, &o, &c, &e), BP_OK);
            char dn[64];
            snprintf(dn, sizeof dn, "%s n=%zu %s %s kernel", bp_dtype_name(dt),
                     n, ps, kernels[kn]);
            ck_assert_msg(c.mismatched == r.mism &&
                          c.beyond_policy == r.beyond &&
                          c.class_changes == r.cls &&
                          c.zero_sign_diffs == r.zsd &&
                          c.zero_sign_excused == r.zse &&
                          c.nan_payload_diffs == r.npd,
                          "seed %" PRIu64 " round %d %s: counts %zu/%zu/%zu/"
                          "%zu/%zu/%zu, naive %zu/%zu/%zu/%zu/%zu/%zu", seed, round,
                          dn, c.mismatched, c.beyond_policy, c.class_changes,
                          c.zero_sign_diffs, c.zero_sign_excused, c.nan_payload_diffs,
                          r.mism, r.beyond, r.cls, r.zsd, r.zse, r.npd);
            for (int k = 0; k < BP_HIST_BINS; k++)
                ck_assert_msg(c.hist[k] == r.hist[k],
                              "seed %" PRIu64 " round %d %s: bin %s %" PRIu64
                              ", naive %" PRIu64, seed, round, dn,
                              bp_hist_label(k), c.hist[k], r.hist[k]);
            if (r.mism)
                ck_assert_msg(c.max_abs == r.max_abs &&
                              c.max_abs_idx == r.iabs &&
                              c.max_rel == r.max_rel &&
                              c.max_rel_idx == r.irel &&
                              c.max_ulp == r.max_ulp &&
                              c.max_ulp_idx == r.iulp,
                              "seed %" PRIu64 " round %d %s: maxima abs %a@%zu"
                              " rel %a@%zu ulp %" PRIu64 "@%zu, naive %a@%zu "
                              "%a@%zu %" PRIu64 "@%zu", seed, round, dn,
                              c.max_abs, c.max_abs_idx, c.max_rel,
                              c.max_rel_idx, c.max_ulp, c.max_ulp_idx,
                              r.max_abs, r.iabs, r.max_rel, r.irel, r.max_ulp,
                              r.iulp);
            size_t allowed = 0;
            while (allowed < n && (double)(allowed + 1) / (double)n <=
                                      p.max_mismatch_fraction)
                allowed++;
            ck_assert_uint_eq(c.allowed, allowed);
            ck_assert(c.pass == (r.beyond <= allowed));
            ck_assert_uint_eq(c.nfirst, nfirst);
            for (size_t k = 0; k < nfirst; k++) {
                const bp_mismatch_t *m = &c.first[k], *q = &first[k];
                ck_assert_msg(m->index == q->index && m->a == q->a &&
                              m->b == q->b && m->ulp == q->ulp &&
                              m->abs == q->abs && m->rel == q->rel &&
                              m->class_change == q->class_change &&
                              m->beyond_policy == q->beyond_policy,
                              "seed %" PRIu64 " round %d %s: first[%zu] at "
                              "%zu 0x%" PRIx64 " vs 0x%" PRIx64 " ulp %" PRIu64
                              " abs %a; naive at %zu ulp %" PRIu64 " abs %a",
                              seed, round, dn, k, m->index, m->a, m->b, m->ulp,
                              m->abs, q->index, q->ulp, q->abs);
            }
            bp_cmp_free(&c);
        }
        ck_assert(bp_cmp_set_kernel("auto"));
        free(first);
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
}
END_TEST

/* Two comparisons agree in every figure. */
static void same_cmp(const bp_cmp_t *x, const bp_cmp_t *y, const char *what)
{
    ck_assert_msg(x->total == y->total && x->mismatched == y->mismatched &&
                  x->beyond_policy == y->beyond_policy && x->allowed == y->allowed &&
                  x->pass == y->pass && x->class_changes == y->class_changes &&
                  x->zero_sign_diffs == y->zero_sign_diffs &&
                  x->zero_sign_excused == y->zero_sign_excused &&
                  x->nan_payload_diffs == y->nan_payload_diffs, "%s: counts", what);
    ck_assert_msg(memcmp(x->hist, y->hist, sizeof x->hist) == 0, "%s: histogram", what);
    if (x->mismatched)
        ck_assert_msg(x->max_abs == y->max_abs && x->max_abs_idx == y->max_abs_idx &&
                      x->max_rel == y->max_rel && x->max_rel_idx == y->max_rel_idx &&
                      x->max_ulp == y->max_ulp && x->max_ulp_idx == y->max_ulp_idx,
                      "%s: maxima %a@%zu %a@%zu %" PRIu64 "@%zu vs %a@%zu %a@%zu %" PRIu64
                      "@%zu", what, x->max_abs, x->max_abs_idx, x->max_rel, x->max_rel_idx,
                      x->max_ulp, x->max_ulp_idx, y->max_abs, y->max_abs_idx, y->max_rel,
                      y->max_rel_idx, y->max_ulp, y->max_ulp_idx);
    ck_assert_msg(x->nfirst == y->nfirst, "%s: %zu first mismatches, %zu", what, x->nfirst,
                  y->nfirst);
    for (size_t k = 0; k < x->nfirst; k++) {
        const bp_mismatch_t *m = &x->first[k], *q = &y->first[k];
        ck_assert_msg(m->index == q->index && m->a == q->a && m->b == q->b &&
                      m->ulp == q->ulp && !memcmp(&m->abs, &q->abs, sizeof m->abs) &&
                      !memcmp(&m->rel, &q->rel, sizeof m->rel) &&
                      m->class_change == q->class_change &&
                      m->beyond_policy == q->beyond_policy, "%s: first[%zu]", what, k);
    }
}

/* The streaming API cut every way (pieces of any length, segments
 * compared apart and merged) gives bp_compare's figures exactly. */
START_TEST(t_stream_pieces)
{
    const char *env = getenv("BP_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ 0x5eedu;
    printf("check_compare: stream cross-check seed %" PRIu64 "\n", seed);
    fflush(stdout);
    sm_state = seed;
    static const char *pols[] = {"exact", "ulp=2", "abs=1e-3,rel=1e-2", "ulp=4,fraction=0.3"};
    for (int round = 0; round < 40; round++) {
        bp_dtype_t dt = (bp_dtype_t)(rnd() % BP_NDTYPES);
        size_t n = 1 + rnd() % 90000;
        bp_buf_t a = mk(dt, n), b = mk(dt, n);
        unsigned w = (unsigned)bp_dtype_info(dt)->size * 8;
        uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
        bool finite = rnd() % 2;
        for (size_t i = 0; i < n; i++) {
            uint64_t x;
            do
                x = rnd() & mask;
            while (finite && is_special(dt, x));
            put(&a, i, x);
            put(&b, i, rnd() % 7 == 0 ? perturb(dt, x, finite) : x);
        }
        bp_policy_t p;
        bp_error_t e;
        const char *ps = pols[rnd() % 4];
        ck_assert_int_eq(bp_policy_parse(ps, &p, &e), BP_OK);
        bp_cmp_opts_t o;
        bp_cmp_opts_init(&o);
        o.first_k = rnd() % 30;
        for (int kn = 0; kn < NKERNELS; kn++) {
            if (!bp_cmp_set_kernel(kernels[kn]))
                continue;
            char what[128];
            snprintf(what, sizeof what, "seed %" PRIu64 " round %d %s n=%zu %s %s", seed,
                     round, bp_dtype_name(dt), n, ps, kernels[kn]);
            bp_cmp_t whole, pieces, segs;
            ck_assert_int_eq(bp_compare(&a, &b, &p, &o, &whole, &e), BP_OK);
            const size_t sz = bp_dtype_info(dt)->size;
            const unsigned char *pa = a.data, *pb = b.data;
            bp_cmp_stream_t *st;
            ck_assert_int_eq(bp_cmp_begin(dt, a.ndim, a.shape, 0, &p, &o, &st, &e), BP_OK);
            for (size_t i = 0; i < n;) {
                size_t k = 1 + rnd() % (rnd() % 2 ? 37 : 20000);
                if (k > n - i)
                    k = n - i;
                bp_cmp_feed(st, pa + i * sz, pb + i * sz, k);
                i += k;
            }
            ck_assert_int_eq(bp_cmp_end(st, &pieces, &e), BP_OK);
            same_cmp(&whole, &pieces, what);
            /* segments: cut points in order, each compared on its own */
            size_t cut = 0;
            memset(&segs, 0, sizeof segs);
            int nseg = 1 + (int)(rnd() % 5);
            for (int g = 0; g < nseg; g++) {
                size_t end = g == nseg - 1 ? n : cut + rnd() % (n - cut + 1);
                bp_cmp_t one;
                ck_assert_int_eq(bp_cmp_begin(dt, a.ndim, a.shape, cut, &p, &o, &st, &e),
                                 BP_OK);
                bp_cmp_feed(st, pa + cut * sz, pb + cut * sz, end - cut);
                ck_assert_int_eq(bp_cmp_end(st, &one, &e), BP_OK);
                if (g == 0)
                    segs = one;
                else
                    ck_assert_int_eq(bp_cmp_merge(&segs, &one, &p, o.first_k, &e), BP_OK);
                cut = end;
            }
            same_cmp(&whole, &segs, what);
            bp_cmp_free(&whole);
            bp_cmp_free(&pieces);
            bp_cmp_free(&segs);
        }
        ck_assert(bp_cmp_set_kernel("auto"));
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
}
END_TEST

START_TEST(t_kernel_names)
{
    ck_assert(bp_cmp_set_kernel("auto"));
    const char *k = bp_cmp_kernel();
    ck_assert(strcmp(k, "avx2") == 0 || strcmp(k, "scalar") == 0);
    ck_assert(bp_cmp_set_kernel("scalar"));
    ck_assert_str_eq(bp_cmp_kernel(), "scalar");
    ck_assert(!bp_cmp_set_kernel("sse9"));
    ck_assert_str_eq(bp_cmp_kernel(), "scalar");
    ck_assert(!bp_cmp_set_kernel("generic"));
    ck_assert(bp_cmp_set_kernel("auto"));
}
END_TEST

void bp_test_add_kernel_tests(TCase *tc)
{
    tcase_add_test(tc, t_block_edges);
    tcase_add_test(tc, t_kernel_specials);
    tcase_add_test(tc, t_small_distances);
    tcase_add_test(tc, t_random_vs_naive);
    tcase_add_test(tc, t_stream_pieces);
    tcase_add_test(tc, t_kernel_names);
}
