/* The comparison engine: one pass over a pair of tensors (a = expected or
 * reference side, b = actual) gives every figure that run, diff, stack and
 * explain report, and the policy verdict.  It stores raw bits, never
 * strings; reports format them (bitfmt.h).
 *
 * Element semantics (floats):
 *  - Equal: identical bits; or both NaN (by class; with nan_payload the
 *    payload bits must match too; counted in nan_payload_diffs so that a
 *    report says how many it excused).  Equal elements land in histogram
 *    bin 0 and are never mismatches.
 *  - Sign of a zero: +0 against -0 is a mismatch of its own class (bits
 *    are bits), counted in zero_sign_diffs and in the histogram's "+0/-0"
 *    bin.  The two are 0 ulp apart on the monotonic line and |a - b| = 0,
 *    so no numeric policy (ulp, abs, rel) can admit them: such an element
 *    is beyond the policy unless the policy (zero_sign_ignore) or the
 *    options (zero_sign_ignore) excuse the sign of a zero; an excused one
 *    is within the policy and also counted in zero_sign_excused.  Its
 *    mismatch record has ulp 0, abs 0 and rel 0.
 *  - Non-finite mismatch: bits differ and either side is inf or NaN: finite
 *    against inf or NaN, +inf against -inf, inf against NaN, and (with
 *    nan_payload only) two NaNs with different payloads.  Infinity is a
 *    class of its own: FLT_MAX against inf is an overflow, not one ulp, so
 *    such an element gets ulp = UINT64_MAX and abs = rel = inf, lands in
 *    the "inf/nan" bin, counts in class_changes and is outside every policy.
 *  - Finite mismatch: ulp = bp_ulp_distance (>= 1), abs = |a - b| in
 *    double (inf only for f64 beyond DBL_MAX, e.g. DBL_MAX vs -DBL_MAX;
 *    still a finite mismatch), rel = abs / |a| (inf when a is 0).
 * Integers (BOOL: its byte values): ulp = |a - b| (exact), abs the same as
 * a double, rel = abs/|a|.
 *
 * Maxima (abs, rel, ulp) run over all mismatched elements, non-finite ones
 * included, so they never understate a drift; the lowest index wins ties.
 * An element is within the policy when it is equal, or finite and within
 * max_ulp (ulp policy) or within abs + rel*|a| (tolerance policy, as
 * torch.isclose; the product rounded on its own, never fused).  The
 * tensor passes when beyond_policy <= allowed, the largest n for which
 * n / total (a correctly rounded double) <= max_mismatch_fraction, so
 * "fraction=0.29" admits 29 of 100 as written. */
#ifndef BP_COMPARE_H
#define BP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dtype.h"
#include "error.h"
#include "policy.h"

/* The largest n with n / total <= frac (beyond_policy may be at most
 * this), the quotient rounded as a double is, so that a decimal fraction
 * admits exactly what it says. */
size_t bp_cmp_allowed(double frac, size_t total);

/* Histogram of ulp distances: bin 0 holds equal elements, bin 1 distance 1,
 * bin k (2 <= k <= 65) distances in (2^(k-2), 2^(k-1)], i.e. 2, 3-4, 5-8,
 * 9-16, ... up to 2^64-1; bin 66 ("inf/nan") the non-finite mismatches and
 * bin 67 ("+0/-0") the elements that differ in the sign of a zero only.
 * Reports list the bins in the order bp_hist_at gives (0, +0/-0, 1, 2,
 * ..., inf/nan). */
#define BP_HIST_BINS 68
#define BP_HIST_CLASS 66
#define BP_HIST_ZERO 67
#define BP_CMP_FIRST_K 10

typedef struct {
    size_t index;     /* flat, row-major */
    uint64_t a, b;    /* raw bits of both sides */
    uint64_t ulp;     /* UINT64_MAX for a non-finite mismatch */
    double abs, rel;  /* inf for a non-finite mismatch */
    bool class_change;  /* non-finite mismatch ("inf/nan" bin) */
    bool beyond_policy;
} bp_mismatch_t;

typedef struct {
    bool nan_payload; /* NaN payload bits must match (default: by class) */
    bool zero_sign_ignore; /* excuse +0 against -0 (default: they count),
                            * whatever the policy says */
    size_t first_k;   /* mismatches kept in first[] (default 10) */
} bp_cmp_opts_t;

typedef struct {
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[BP_MAXDIM];
    size_t total;          /* elements */
    size_t mismatched;     /* not equal (per the rules above) */
    size_t beyond_policy;  /* mismatched and outside the policy */
    size_t allowed;        /* beyond_policy may be at most this */
    bool pass;
    double max_abs;   size_t max_abs_idx;  /* indices valid when */
    double max_rel;   size_t max_rel_idx;  /* mismatched > 0, else 0 */
    uint64_t max_ulp; size_t max_ulp_idx;
    uint64_t hist[BP_HIST_BINS];  /* over all elements; sums to total */
    size_t class_changes;         /* == hist[BP_HIST_CLASS] */
    size_t zero_sign_diffs;       /* +0 vs -0: mismatches, == hist[BP_HIST_ZERO] */
    size_t zero_sign_excused;     /* of those, within the policy (excused) */
    size_t nan_payload_diffs;     /* NaNs with other payloads, counted equal */
    bp_mismatch_t *first;  /* the first nfirst mismatches, by index */
    size_t nfirst;
} bp_cmp_t;

void bp_cmp_opts_init(bp_cmp_opts_t *o);

/* Compares a (expected) with b (actual) under pol (NULL: exact) and opts
 * (NULL: defaults).  Different dtypes or shapes: BP_EINPUT naming both.
 * On success out owns first[]: release it with bp_cmp_free. */
bp_status bp_compare(const bp_buf_t *a, const bp_buf_t *b,
                     const bp_policy_t *pol, const bp_cmp_opts_t *opts,
                     bp_cmp_t *out, bp_error_t *err);
void bp_cmp_free(bp_cmp_t *c);

/* The same comparison in pieces, for tensors that do not sit in memory
 * whole (diff streams files through it): begin with the dtype and the
 * whole tensor's shape, feed the elements of both sides in order, any
 * number at a time and at any alignment, end to get the figures.  base is
 * the flat index of the first element fed, so that a tensor cut into
 * segments can be compared segment by segment (in parallel) and the
 * segments merged in order with bp_cmp_merge.  The figures are exactly
 * bp_compare's, however the elements are cut: its engine is this one.
 * The caller checks dtypes and shapes; the stream is freed by end or
 * abort. */
typedef struct bp_cmp_stream bp_cmp_stream_t;
bp_status bp_cmp_begin(bp_dtype_t dt, int ndim, const int64_t *shape, size_t base,
                       const bp_policy_t *pol, const bp_cmp_opts_t *opts,
                       bp_cmp_stream_t **out, bp_error_t *err);
void bp_cmp_feed(bp_cmp_stream_t *s, const void *a, const void *b, size_t n);
/* out->total is the number of elements fed. */
bp_status bp_cmp_end(bp_cmp_stream_t *s, bp_cmp_t *out, bp_error_t *err);
void bp_cmp_abort(bp_cmp_stream_t *s);
/* Adds seg, the comparison of the elements right after dst's, to dst
 * (first_k: the opts' first_k; pol as given to begin) and frees seg. */
bp_status bp_cmp_merge(bp_cmp_t *dst, bp_cmp_t *seg, const bp_policy_t *pol,
                       size_t first_k, bp_error_t *err);

/* Histogram bin of a finite ulp distance (0 -> 0, 1 -> 1, 3 -> 3, ...). */
int bp_hist_bin(uint64_t ulp);
/* The bin reports show at position i (0 <= i < BP_HIST_BINS): 0, then
 * +0/-0, then the distances in increasing order, then inf/nan. */
int bp_hist_at(int i);
/* Whether every mismatch of c is one of the sign of a zero (and there is
 * one): its maxima are then all 0 and say nothing. */
bool bp_cmp_zero_signs_only(const bp_cmp_t *c);
/* Whether a mismatch record is one of the sign of a zero (ulp 0). */
bool bp_mismatch_zero_sign(const bp_mismatch_t *m);
/* "0", "1", "2", "3-4", ..., "inf/nan", "+0/-0"; "?" out of range. */
const char *bp_hist_label(int bin);
/* Inclusive distance range of a bin (the class bin: UINT64_MAX, both). */
uint64_t bp_hist_lo(int bin);
uint64_t bp_hist_hi(int bin);
/* Upper edge of the bin holding the element of rank ceil(p/100 * total)
 * (at least 1) in distance order (+0/-0 at distance 0), p in 0..100: 50 bounds the median, 100
 * the maximum (exact for bins 0, 1 and 2).  INFINITY when that element is
 * a non-finite mismatch; 0 for an empty tensor. */
double bp_cmp_percentile_ulp(const bp_cmp_t *c, double p);
/* Multi-dimensional index of flat position i in the compared shape. */
void bp_cmp_index_format(const bp_cmp_t *c, size_t i, char *out, size_t n);

/* The inner loop the engine uses for f32/bf16/f16: "avx2" or "scalar".  All give identical results; the
 * choice is made once from the CPU ("auto"; bp_cmp_kernel makes it), and
 * tests and benchmarks may force one.  Not thread-safe: set it, or ask
 * for it, before comparing in threads.  False when the
 * name is unknown or the CPU cannot run it. */
const char *bp_cmp_kernel(void);
bool bp_cmp_set_kernel(const char *name);

#endif
