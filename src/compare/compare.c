/* The comparison engine (see compare.h for the element semantics).
 *
 * Speed matters: CI compares every golden on every run, and the stack
 * compares whole activations.  Equal data is skipped a block at a time with
 * memcmp (bin 0 is total - mismatched, so equal elements are never
 * touched).  A block that differs goes, 1024 elements at a time, through a
 * vector kernel (compare_vec.c: f32, bf16, f16 with AVX2) that computes
 * distances, differences and counts for all lanes at once; compare.c then
 * fills the histogram and locates a new maximum.  Chunks the kernel does
 * not take (an inf or NaN inside, a short tail, the first K mismatches
 * still being recorded, f64, fp8, integers, CPUs without AVX2) go through a
 * scalar loop specialised per dtype (the dtype is a constant in each
 * always-inline instance), with the rare cases off the hot path.  Both
 * paths perform the same IEEE operations, so they agree bit for bit (the
 * tests run each). */
#include "compare.h"
#include "compare_vec.h"

/* abs + rel*|a| rounds the product first, in every build (-march=native
 * would otherwise fuse it here but not in the kernels). */
#pragma GCC optimize("fp-contract=off")

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per memcmp block: a block that differs is scanned whole, so a lone
 * difference costs about one kernel chunk (1024 f32); memcmp still runs at
 * full speed on 4 KiB.  (64 KiB blocks made two files with a one-ulp flip
 * every 256 KiB scan a quarter of their data: 20% more CPU time.) */
#define BLOCK_BYTES ((size_t)4 * 1024)

#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define INLINE static inline __attribute__((always_inline))

static const char *const labels[BP_HIST_BINS] = {
    "0", "1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65-128",
    "129-256", "257-512", "513-1024", "1025-2048", "2049-4096", "4097-8192",
    "8193-16384", "16385-32768", "32769-65536", "65537-131072",
    "131073-262144", "262145-524288", "524289-1048576", "1048577-2097152",
    "2097153-4194304", "4194305-8388608", "8388609-16777216",
    "16777217-33554432", "33554433-67108864", "67108865-134217728",
    "134217729-268435456", "268435457-536870912", "536870913-1073741824",
    "1073741825-2147483648", "2147483649-4294967296", "4294967297-8589934592",
    "8589934593-17179869184", "17179869185-34359738368",
    "34359738369-68719476736", "68719476737-137438953472",
    "137438953473-274877906944", "274877906945-549755813888",
    "549755813889-1099511627776", "1099511627777-2199023255552",
    "2199023255553-4398046511104", "4398046511105-8796093022208",
    "8796093022209-17592186044416", "17592186044417-35184372088832",
    "35184372088833-70368744177664", "70368744177665-140737488355328",
    "140737488355329-281474976710656", "281474976710657-562949953421312",
    "562949953421313-1125899906842624", "1125899906842625-2251799813685248",
    "2251799813685249-4503599627370496", "4503599627370497-9007199254740992",
    "9007199254740993-18014398509481984",
    "18014398509481985-36028797018963968",
    "36028797018963969-72057594037927936",
    "72057594037927937-144115188075855872",
    "144115188075855873-288230376151711744",
    "288230376151711745-576460752303423488",
    "576460752303423489-1152921504606846976",
    "1152921504606846977-2305843009213693952",
    "2305843009213693953-4611686018427387904",
    "4611686018427387905-9223372036854775808",
    "9223372036854775809-18446744073709551615", "inf/nan", "+0/-0",
};

int bp_hist_bin(uint64_t ulp)
{
    return ulp <= 1 ? (int)ulp : 65 - __builtin_clzll(ulp - 1);
}

const char *bp_hist_label(int bin)
{
    return bin >= 0 && bin < BP_HIST_BINS ? labels[bin] : "?";
}

int bp_hist_at(int i)
{
    if (i <= 0 || i >= BP_HIST_BINS)
        return 0;
    if (i == 1)
        return BP_HIST_ZERO;
    return i - 1;
}

bool bp_cmp_zero_signs_only(const bp_cmp_t *c)
{
    return c->mismatched && c->mismatched == c->zero_sign_diffs;
}

bool bp_mismatch_zero_sign(const bp_mismatch_t *m)
{
    return m->ulp == 0 && m->a != m->b;
}

uint64_t bp_hist_lo(int bin)
{
    if (bin <= 0 || bin >= BP_HIST_BINS || bin == BP_HIST_ZERO)
        return bin == 0 || bin == BP_HIST_ZERO ? 0 : UINT64_MAX;
    if (bin == BP_HIST_CLASS)
        return UINT64_MAX;
    return bin == 1 ? 1 : (1ull << (bin - 2)) + 1;
}

uint64_t bp_hist_hi(int bin)
{
    if (bin <= 0 || bin >= BP_HIST_BINS || bin == BP_HIST_ZERO)
        return bin == 0 || bin == BP_HIST_ZERO ? 0 : UINT64_MAX;
    if (bin >= 65)
        return UINT64_MAX;
    return 1ull << (bin - 1);
}

void bp_cmp_opts_init(bp_cmp_opts_t *o)
{
    o->nan_payload = false;
    o->zero_sign_ignore = false;
    o->first_k = BP_CMP_FIRST_K;
}

void bp_cmp_free(bp_cmp_t *c)
{
    if (!c)
        return;
    free(c->first);
    c->first = NULL;
    c->nfirst = 0;
}

/* Per-comparison state shared by the scan loops.  The policy is folded
 * into limits that reject everything when a part is absent, so the hot
 * loop tests it without branching on has_ulp/has_tol. */
struct bp_cmp_stream {
    bp_cmp_t *c;     /* &own below */
    bp_cmp_t own;
    bp_dtype_t dt;
    size_t base;     /* flat index of the next element fed */
    size_t fed;      /* elements fed so far */
    double fraction; /* the policy's max_mismatch_fraction */
    bool nan_payload;
    bool zero_sign_ignore; /* the policy's or the options' */
    size_t first_k, first_cap;
    bool nomem;
    uint64_t ulp_lim; /* 0 when no ulp policy: every mismatch is >= 1 */
    double tol_abs, tol_rel; /* -1, 0 when no tolerance policy */
    uint64_t hist[BP_HIST_BINS];
    bp_vkern_fn vk;
    /* Histogram of the vector path, four copies so that runs of one bin do
     * not serialise on one counter; bin 64 collects the equal elements
     * (distances there are below 2^32, so it is never a real bin). */
    uint64_t vh[4][65];
    bp_vchunk_t ch;
};
typedef struct bp_cmp_stream scan_t;

static void __attribute__((noinline))
record(scan_t *s, size_t i, uint64_t a, uint64_t b, uint64_t ulp, double ab,
       double rel, bool cls, bool beyond)
{
    bp_cmp_t *c = s->c;
    if (c->nfirst == s->first_cap) {
        size_t cap = s->first_cap ? s->first_cap * 2 : 16;
        if (cap > s->first_k)
            cap = s->first_k;
        bp_mismatch_t *p = realloc(c->first, cap * sizeof *p);
        if (!p) {
            s->nomem = true;
            s->first_k = c->nfirst; /* stop recording */
            return;
        }
        c->first = p;
        s->first_cap = cap;
    }
    c->first[c->nfirst++] = (bp_mismatch_t){
        .index = i, .a = a, .b = b, .ulp = ulp, .abs = ab, .rel = rel,
        .class_change = cls, .beyond_policy = beyond};
}

INLINE uint64_t load(size_t size, const unsigned char *p, size_t i)
{
    /* memcpy: tensors read from a container need not be aligned. */
    if (size == 1)
        return p[i];
    if (size == 2) {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    if (size == 4) {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* Finite values only: inf and NaN never reach the conversions.  Unions,
 * not memcpy through a stack slot, keep the bits in registers. */
INLINE double to_double(bp_dtype_t dt, uint64_t x)
{
    union {
        uint32_t u;
        float f;
    } f;
    union {
        uint64_t u;
        double d;
    } d;
    switch (dt) {
    case BP_F32:
        f.u = (uint32_t)x;
        return f.f;
    case BP_BF16:
        f.u = (uint32_t)x << 16;
        return f.f;
    case BP_F16:
        /* Rebias the exponent by scaling: exact for normals; subnormals
         * (exponent field 0) are m * 2^-24. */
        if (UNLIKELY((x & 0x7c00u) == 0))
            d.d = (double)(x & 0x3ffu) * 0x1p-24;
        else {
            f.u = (uint32_t)(x & 0x7fffu) << 13;
            d.d = (double)(f.f * 0x1p112f);
        }
        return (x & 0x8000u) ? -d.d : d.d;
    case BP_F8_E4M3:
        return bp_f8e4m3_to_f32((uint8_t)x);
    case BP_F8_E5M2:
        return bp_f8e5m2_to_f32((uint8_t)x);
    default:
        d.u = x;
        return d.d;
    }
}

/* Scans elements [i0, i1) of a block known to differ somewhere. */
INLINE void scan_float(scan_t *s, bp_dtype_t dt, const unsigned char *pa,
                       const unsigned char *pb, size_t i0, size_t i1)
{
    const bp_dtype_info_t *inf = bp_dtype_info(dt);
    const size_t size = inf->size;
    const uint64_t sign = 1ull << (size * 8 - 1), absm = sign - 1;
    /* Magnitudes from which on values are inf or NaN, and NaN (dtype.h). */
    const uint64_t specb = inf->special_mag, nanb = inf->nan_mag;
    bp_cmp_t *c = s->c;
    size_t mism = 0, beyond = 0, cls = 0, zsd = 0, zse = 0, npd = 0;
    double max_abs = c->max_abs, max_rel = c->max_rel;
    uint64_t max_ulp = c->max_ulp;
    size_t iabs = c->max_abs_idx, irel = c->max_rel_idx, iulp = c->max_ulp_idx;
    const uint64_t ulp_lim = s->ulp_lim;
    const double tol_abs = s->tol_abs, tol_rel = s->tol_rel;
    uint64_t *h = s->hist;

    for (size_t i = i0; i < i1; i++) {
        uint64_t x = load(size, pa, i), y = load(size, pb, i);
        if (x == y)
            continue;
        uint64_t ax = x & absm, ay = y & absm, d;
        double ab, ref;
        bool within;
        int bin;
        if (UNLIKELY(ax >= specb || ay >= specb)) {
            if (ax >= nanb && ay >= nanb && !s->nan_payload) {
                npd++;
                continue;
            }
            d = UINT64_MAX;
            ab = INFINITY;
            ref = 0; /* makes rel inf below */
            within = false;
            bin = BP_HIST_CLASS;
            cls++;
        } else if (UNLIKELY((ax | ay) == 0)) {
            /* +0 against -0: numerically equal, so no ulp or tolerance can
             * admit them; only an explicit excuse does. */
            d = 0;
            ab = 0;
            ref = 1; /* rel 0 */
            within = s->zero_sign_ignore;
            bin = BP_HIST_ZERO;
            zsd++;
            zse += within;
        } else {
            if (size < 8) {
                /* Positions on the signed line fit in 33 bits; negate by
                 * mask, as the signs of random data defeat prediction. */
                const unsigned w1 = (unsigned)size * 8 - 1;
                int64_t mx = -(int64_t)(x >> w1), my = -(int64_t)(y >> w1);
                int64_t sx = ((int64_t)ax ^ mx) - mx;
                int64_t sy = ((int64_t)ay ^ my) - my;
                int64_t df = sx - sy, mz = df >> 63;
                d = (uint64_t)((df ^ mz) - mz);
            } else if ((x ^ y) & sign) {
                d = ax + ay; /* each below 2^63: no overflow */
            } else {
                d = ax > ay ? ax - ay : ay - ax;
            }
            double da = to_double(dt, x), db = to_double(dt, y);
            ref = fabs(da);
            ab = fabs(da - db);
            within = d <= ulp_lim || ab <= tol_abs + tol_rel * ref;
            bin = bp_hist_bin(d);
        }
        h[bin]++;
        mism++;
        beyond += !within;
        if (ab > max_abs) {
            max_abs = ab;
            iabs = s->base + i;
        }
        double rel = ab / ref; /* ref 0: ab > 0, so inf */
        if (rel > max_rel) {
            max_rel = rel;
            irel = s->base + i;
        }
        if (d > max_ulp) {
            max_ulp = d;
            iulp = s->base + i;
        }
        if (UNLIKELY(c->nfirst < s->first_k))
            record(s, s->base + i, x, y, d, ab, rel, bin == BP_HIST_CLASS, !within);
    }
    c->mismatched += mism;
    c->beyond_policy += beyond;
    c->class_changes += cls;
    c->zero_sign_diffs += zsd;
    c->zero_sign_excused += zse;
    c->nan_payload_diffs += npd;
    c->max_abs = max_abs;
    c->max_abs_idx = iabs;
    c->max_rel = max_rel;
    c->max_rel_idx = irel;
    c->max_ulp = max_ulp;
    c->max_ulp_idx = iulp;
}

/* Integers: the distance is |a - b| on the dtype's own line (BOOL: its
 * byte values).  Signed values are sign-extended to 64 bits, so that the
 * difference of two's complement representations is exact modulo 2^64. */
INLINE void scan_int_w(scan_t *s, size_t size, bool sgn,
                       const unsigned char *pa, const unsigned char *pb,
                       size_t i0, size_t i1)
{
    bp_cmp_t *c = s->c;
    const unsigned w = (unsigned)size * 8u;
    const uint64_t top = w == 64 ? 1ull << 63 : 1ull << (w - 1);
    for (size_t i = i0; i < i1; i++) {
        uint64_t x = load(size, pa, i), y = load(size, pb, i);
        if (x == y)
            continue;
        uint64_t ex = x, ey = y, d;
        double ref;
        if (sgn) {
            ex = (x ^ top) - top;
            ey = (y ^ top) - top;
            d = (int64_t)ex > (int64_t)ey ? ex - ey : ey - ex;
            ref = fabs((double)(int64_t)ex);
        } else {
            d = x > y ? x - y : y - x;
            ref = (double)x;
        }
        double ab = (double)d, rel = ab / ref;
        bool within = d <= s->ulp_lim || ab <= s->tol_abs + s->tol_rel * ref;
        s->hist[bp_hist_bin(d)]++;
        c->mismatched++;
        c->beyond_policy += !within;
        if (ab > c->max_abs) {
            c->max_abs = ab;
            c->max_abs_idx = s->base + i;
        }
        if (rel > c->max_rel) {
            c->max_rel = rel;
            c->max_rel_idx = s->base + i;
        }
        if (d > c->max_ulp) {
            c->max_ulp = d;
            c->max_ulp_idx = s->base + i;
        }
        if (c->nfirst < s->first_k)
            record(s, s->base + i, x, y, d, ab, rel, false, !within);
    }
}

static void scan_int(scan_t *s, bp_dtype_t dt, const unsigned char *pa,
                     const unsigned char *pb, size_t i0, size_t i1)
{
    const bp_dtype_info_t *in = bp_dtype_info(dt);
    switch (in->size * 2 + in->is_signed) {
    case 2: scan_int_w(s, 1, false, pa, pb, i0, i1); break;
    case 3: scan_int_w(s, 1, true, pa, pb, i0, i1); break;
    case 4: scan_int_w(s, 2, false, pa, pb, i0, i1); break;
    case 5: scan_int_w(s, 2, true, pa, pb, i0, i1); break;
    case 8: scan_int_w(s, 4, false, pa, pb, i0, i1); break;
    case 9: scan_int_w(s, 4, true, pa, pb, i0, i1); break;
    case 16: scan_int_w(s, 8, false, pa, pb, i0, i1); break;
    default: scan_int_w(s, 8, true, pa, pb, i0, i1); break;
    }
}

/* Index of the first element of chunk [base, base + BP_VEC_CHUNK) whose
 * figure (0 abs, 1 rel, 2 ulp) equals the kernel's maximum m: the same
 * operations as the kernel, so the same doubles. */
static size_t find_max(bp_dtype_t dt, const unsigned char *pa,
                       const unsigned char *pb, size_t base, int what,
                       double m)
{
    const size_t size = bp_dtype_info(dt)->size;
    for (size_t i = base; i < base + BP_VEC_CHUNK; i++) {
        uint64_t x = load(size, pa, i), y = load(size, pb, i);
        double v;
        if (what == 2) {
            v = (double)bp_ulp_distance(dt, x, y);
        } else {
            double da = to_double(dt, x), db = to_double(dt, y);
            v = fabs(da - db);
            if (what == 1)
                v /= fabs(da);
        }
        if (v == m)
            return i;
    }
    return base; /* unreachable: the kernel saw m in this chunk */
}

/* Takes a chunk the vector kernel computed: totals, maxima and the
 * histogram. */
static void absorb(scan_t *s, bp_dtype_t dt, const unsigned char *pa,
                   const unsigned char *pb, size_t base)
{
    bp_cmp_t *c = s->c;
    const bp_vchunk_t *ch = &s->ch;
    if (UNLIKELY(ch->zsd)) {
        /* the kernel's lanes at distance 0 whose bits differ: +0 against
         * -0, a mismatch of its own class (scan_float's rule) */
        c->mismatched += ch->zsd;
        c->zero_sign_diffs += ch->zsd;
        s->hist[BP_HIST_ZERO] += ch->zsd;
        if (s->zero_sign_ignore)
            c->zero_sign_excused += ch->zsd;
        else
            c->beyond_policy += ch->zsd;
    }
    if (ch->mism == 0)
        return;
    c->mismatched += ch->mism;
    c->beyond_policy += ch->beyond;
    if (UNLIKELY(ch->max_ab > c->max_abs)) {
        c->max_abs = ch->max_ab;
        c->max_abs_idx = s->base + find_max(dt, pa, pb, base, 0, ch->max_ab);
    }
    if (UNLIKELY(ch->max_rel > c->max_rel)) {
        c->max_rel = ch->max_rel;
        c->max_rel_idx = s->base + find_max(dt, pa, pb, base, 1, ch->max_rel);
    }
    if (UNLIKELY(ch->max_d > c->max_ulp)) {
        size_t j = 0;
        while (ch->d[j] != ch->max_d)
            j++;
        c->max_ulp = ch->max_d;
        c->max_ulp_idx = s->base + base + j;
    }
    if (ch->max_d <= 8) { /* the common case: drift of a few ulp */
        s->vh[0][1] += ch->mism - ch->gt[0];
        s->vh[0][2] += ch->gt[0] - ch->gt[1];
        s->vh[0][3] += ch->gt[1] - ch->gt[2];
        s->vh[0][4] += ch->gt[2];
        return;
    }
    /* bin(d) = 1 + floor(log2(2(d-1) | 1)) for d >= 1; d = 0 wraps to 64. */
#define HBIN(d) (64 - __builtin_clzll((((uint64_t)(d) - 1) << 1) | 1))
    uint64_t(*vh)[65] = s->vh;
    for (size_t j = 0; j < BP_VEC_CHUNK; j += 4) {
        int b0 = HBIN(ch->d[j]), b1 = HBIN(ch->d[j + 1]);
        int b2 = HBIN(ch->d[j + 2]), b3 = HBIN(ch->d[j + 3]);
        vh[0][b0]++;
        vh[1][b1]++;
        vh[2][b2]++;
        vh[3][b3]++;
    }
#undef HBIN
}

static void scan(scan_t *s, bp_dtype_t dt, const unsigned char *pa,
                 const unsigned char *pb, size_t i0, size_t i1)
{
    switch (dt) {
    case BP_F32:
    case BP_BF16:
    case BP_F16:
        break;
    case BP_F64:
        scan_float(s, BP_F64, pa, pb, i0, i1);
        return;
    case BP_F8_E4M3:
        scan_float(s, BP_F8_E4M3, pa, pb, i0, i1);
        return;
    case BP_F8_E5M2:
        scan_float(s, BP_F8_E5M2, pa, pb, i0, i1);
        return;
    default:
        scan_int(s, dt, pa, pb, i0, i1);
        return;
    }
    const size_t size = bp_dtype_info(dt)->size;
    for (size_t i = i0; i < i1; i += BP_VEC_CHUNK) {
        size_t e = i1 - i < BP_VEC_CHUNK ? i1 : i + BP_VEC_CHUNK;
        s->ch.max_rel = s->c->max_rel;
        if (s->vk && e - i == BP_VEC_CHUNK && s->c->nfirst >= s->first_k &&
            s->vk(&s->ch, pa + i * size, pb + i * size)) {
            absorb(s, dt, pa, pb, i);
            continue;
        }
        switch (dt) {
        case BP_F32: scan_float(s, BP_F32, pa, pb, i, e); break;
        case BP_BF16: scan_float(s, BP_BF16, pa, pb, i, e); break;
        default: scan_float(s, BP_F16, pa, pb, i, e); break;
        }
    }
}

/* Kernel level: -1 not chosen yet, 0 scalar only, 1 AVX2.  Chosen once;
 * the tests switch it. */
static int kernel_level = -1;

static int kernel_auto(void)
{
    return bp_vkern(BP_F32) ? 1 : 0;
}

const char *bp_cmp_kernel(void)
{
    if (kernel_level < 0)
        kernel_level = kernel_auto();
    return kernel_level ? "avx2" : "scalar";
}

bool bp_cmp_set_kernel(const char *name)
{
    if (strcmp(name, "auto") == 0)
        kernel_level = kernel_auto();
    else if (strcmp(name, "scalar") == 0)
        kernel_level = 0;
    else if (strcmp(name, "avx2") == 0 && bp_vkern(BP_F32))
        kernel_level = 1;
    else
        return false;
    return true;
}

size_t bp_cmp_allowed(double frac, size_t total)
{
    if (!(frac > 0) || total == 0)
        return 0;
    if (frac >= 1)
        return total;
    double t = (double)total;
    size_t n = (size_t)floor(frac * t);
    while (n < total && (double)(n + 1) / t <= frac)
        n++;
    while (n > 0 && (double)n / t > frac)
        n--;
    return n;
}

bp_status bp_cmp_begin(bp_dtype_t dt, int ndim, const int64_t *shape, size_t base,
                       const bp_policy_t *pol, const bp_cmp_opts_t *opts,
                       bp_cmp_stream_t **out, bp_error_t *err)
{
    *out = NULL;
    if (!bp_dtype_info(dt) || ndim < 0 || ndim > BP_MAXDIM)
        return bp_error_set(err, BP_EINTERNAL,
                            "cannot compare: malformed tensor descriptor");
    bp_policy_t exact;
    if (!pol) {
        bp_policy_exact(&exact);
        pol = &exact;
    }
    bp_cmp_opts_t defo;
    if (!opts) {
        bp_cmp_opts_init(&defo);
        opts = &defo;
    }
    /* Some 6 KiB with the chunk buffer: on the heap. */
    scan_t *s = malloc(sizeof *s);
    if (!s)
        return bp_error_set(err, BP_ENOMEM, "cannot compare: out of memory");
    memset(s, 0, offsetof(scan_t, ch));
    s->c = &s->own;
    s->own.dtype = dt;
    s->own.ndim = ndim;
    if (ndim)
        memcpy(s->own.shape, shape, (size_t)ndim * sizeof *shape);
    s->dt = dt;
    s->base = base;
    s->fraction = pol->max_mismatch_fraction;
    s->nan_payload = opts->nan_payload;
    s->zero_sign_ignore = opts->zero_sign_ignore || pol->zero_sign_ignore;
    s->first_k = opts->first_k;
    s->ulp_lim = pol->has_ulp ? pol->max_ulp : 0;
    s->tol_abs = pol->has_tol ? pol->abs : -1.0;
    s->tol_rel = pol->has_tol ? pol->rel : 0.0;
    s->ch.ulp_lim = s->ulp_lim > UINT32_MAX ? UINT32_MAX
                                            : (uint32_t)s->ulp_lim;
    s->ch.tol_abs = s->tol_abs;
    s->ch.tol_rel = s->tol_rel;
    if (kernel_level < 0)
        kernel_level = kernel_auto();
    s->vk = kernel_level ? bp_vkern(dt) : NULL;
    *out = s;
    return BP_OK;
}

void bp_cmp_feed(bp_cmp_stream_t *s, const void *a, const void *b, size_t n)
{
    const size_t size = bp_dtype_info(s->dt)->size, per = BLOCK_BYTES / size;
    const unsigned char *pa = a, *pb = b;
    for (size_t i0 = 0; i0 < n; i0 += per) {
        size_t k = n - i0 < per ? n - i0 : per;
        if (memcmp(pa + i0 * size, pb + i0 * size, k * size) != 0)
            scan(s, s->dt, pa, pb, i0, i0 + k);
    }
    s->base += n;
    s->fed += n;
}

/* Allowance and verdict of a comparison whose counts are complete. */
static void settle(bp_cmp_t *c, double fraction)
{
    c->hist[0] = c->total - c->mismatched;
    c->allowed = bp_cmp_allowed(fraction, c->total);
    c->pass = c->beyond_policy <= c->allowed;
}

bp_status bp_cmp_end(bp_cmp_stream_t *s, bp_cmp_t *out, bp_error_t *err)
{
    bool nomem = s->nomem;
    size_t k = s->first_k;
    *out = s->own;
    memcpy(out->hist, s->hist, sizeof out->hist);
    for (int l = 0; l < 4; l++)
        for (int j = 1; j < 64; j++)
            out->hist[j] += s->vh[l][j];
    out->total = s->fed;
    settle(out, s->fraction);
    free(s);
    if (nomem) {
        bp_cmp_free(out);
        return bp_error_set(err, BP_ENOMEM,
                            "cannot compare: out of memory keeping the "
                            "first %zu mismatches", k);
    }
    return BP_OK;
}

void bp_cmp_abort(bp_cmp_stream_t *s)
{
    if (!s)
        return;
    free(s->own.first);
    free(s);
}

bp_status bp_cmp_merge(bp_cmp_t *dst, bp_cmp_t *seg, const bp_policy_t *pol,
                       size_t first_k, bp_error_t *err)
{
    /* seg's elements come after dst's: a maximum moves only when seg's is
     * strictly greater (the lowest index wins ties, as in one pass). */
    if (seg->mismatched) {
        bool none = dst->mismatched == 0;
        if (none || seg->max_abs > dst->max_abs) {
            dst->max_abs = seg->max_abs;
            dst->max_abs_idx = seg->max_abs_idx;
        }
        if (none || seg->max_rel > dst->max_rel) {
            dst->max_rel = seg->max_rel;
            dst->max_rel_idx = seg->max_rel_idx;
        }
        if (none || seg->max_ulp > dst->max_ulp) {
            dst->max_ulp = seg->max_ulp;
            dst->max_ulp_idx = seg->max_ulp_idx;
        }
    }
    dst->total += seg->total;
    dst->mismatched += seg->mismatched;
    dst->beyond_policy += seg->beyond_policy;
    dst->class_changes += seg->class_changes;
    dst->zero_sign_diffs += seg->zero_sign_diffs;
    dst->zero_sign_excused += seg->zero_sign_excused;
    dst->nan_payload_diffs += seg->nan_payload_diffs;
    for (int j = 1; j < BP_HIST_BINS; j++)
        dst->hist[j] += seg->hist[j];
    size_t take = first_k > dst->nfirst ? first_k - dst->nfirst : 0;
    if (take > seg->nfirst)
        take = seg->nfirst;
    if (take) {
        bp_mismatch_t *p = realloc(dst->first, (dst->nfirst + take) * sizeof *p);
        if (!p) {
            bp_cmp_free(seg);
            return bp_error_set(err, BP_ENOMEM,
                                "cannot compare: out of memory keeping the "
                                "first %zu mismatches", first_k);
        }
        memcpy(p + dst->nfirst, seg->first, take * sizeof *p);
        dst->first = p;
        dst->nfirst += take;
    }
    bp_cmp_free(seg);
    bp_policy_t exact;
    if (!pol) {
        bp_policy_exact(&exact);
        pol = &exact;
    }
    settle(dst, pol->max_mismatch_fraction);
    return BP_OK;
}

bp_status bp_compare(const bp_buf_t *a, const bp_buf_t *b,
                     const bp_policy_t *pol, const bp_cmp_opts_t *opts,
                     bp_cmp_t *out, bp_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (!bp_dtype_info(a->dtype) || !bp_dtype_info(b->dtype) || a->ndim < 0 ||
        a->ndim > BP_MAXDIM || b->ndim < 0 || b->ndim > BP_MAXDIM)
        return bp_error_set(err, BP_EINTERNAL,
                            "cannot compare: malformed tensor descriptor");
    if (a->dtype != b->dtype || !bp_buf_same_shape(a, b)) {
        char sa[160], sb[160];
        bp_shape_format(a->ndim, a->shape, sa, sizeof sa);
        bp_shape_format(b->ndim, b->shape, sb, sizeof sb);
        return bp_error_set(err, BP_EINPUT,
                            "cannot compare: %s differ: expected %s %s, "
                            "actual %s %s",
                            a->dtype != b->dtype ? "dtypes" : "shapes",
                            bp_dtype_name(a->dtype), sa,
                            bp_dtype_name(b->dtype), sb);
    }
    if (a->numel != b->numel)
        return bp_error_set(err, BP_EINTERNAL,
                            "cannot compare: element counts %zu and %zu "
                            "for the same shape", a->numel, b->numel);
    if (a->numel && (!a->data || !b->data))
        return bp_error_set(err, BP_EINTERNAL,
                            "cannot compare: %s side has no host data",
                            a->data ? "actual" : "expected");
    bp_cmp_stream_t *s;
    bp_status st = bp_cmp_begin(a->dtype, a->ndim, a->shape, 0, pol, opts, &s, err);
    if (st)
        return st;
    if (a->numel)
        bp_cmp_feed(s, a->data, b->data, a->numel);
    return bp_cmp_end(s, out, err);
}

double bp_cmp_percentile_ulp(const bp_cmp_t *c, double p)
{
    if (c->total == 0)
        return 0;
    double r = ceil(p / 100.0 * (double)c->total);
    uint64_t rank = r < 1 ? 1 : r >= (double)c->total ? c->total
                                                        : (uint64_t)r;
    uint64_t cum = 0;
    for (int i = 0; i < BP_HIST_BINS; i++) {
        int k = bp_hist_at(i);
        cum += c->hist[k];
        if (cum >= rank)
            return k == BP_HIST_CLASS ? INFINITY : (double)bp_hist_hi(k);
    }
    return INFINITY;
}

void bp_cmp_index_format(const bp_cmp_t *c, size_t i, char *out, size_t n)
{
    bp_buf_t shape = {.dtype = c->dtype, .ndim = c->ndim};
    memcpy(shape.shape, c->shape, sizeof shape.shape);
    bp_index_format(&shape, i, out, n);
}
