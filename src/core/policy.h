/* Comparison policy of one output: when do two buffers count as agreeing.
 * An element agrees when its bits are equal (NaNs by class unless payloads
 * count), or when it is within max_ulp (ulp policy), or within
 * abs + rel * |expected| (tolerance policy, as torch.isclose).  +0 against
 * -0 is a difference of its own class that no ulp or tolerance admits:
 * only zero_sign_ignore ("zero_sign: ignore") excuses it.  The output
 * passes when the fraction of elements that do not agree is at most
 * max_mismatch_fraction (0 by default: every element must agree). */
#ifndef BP_POLICY_H
#define BP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct bp_policy {
    bool has_ulp;
    uint64_t max_ulp;
    bool has_tol;
    double abs, rel;
    double max_mismatch_fraction;
    bool zero_sign_ignore; /* +0 against -0 agrees (excused, counted) */
} bp_policy_t;

/* The default: exact, every element. */
void bp_policy_exact(bp_policy_t *p);
/* "exact", "ulp<=2", "abs<=1e-3,rel<=1e-2,fraction<=0.01",
 * "exact,zero_sign=ignore"; numbers are
 * the shortest decimals that read back to the same double, so
 * bp_policy_parse(bp_policy_format(p)) gives p again. */
void bp_policy_format(const bp_policy_t *p, char *out, unsigned n);

/* Parses a policy written for the command line: comma-separated items,
 * each "exact" or KEY=VALUE (also KEY<=VALUE, as bp_policy_format writes,
 * and KEY:VALUE).  Keys: ulp (an integer), abs and rel (finite, >= 0; atol
 * and rtol are accepted too; one without the other leaves it 0), fraction
 * (0..1; also frac, max_mismatch_fraction), zero_sign (ignore, or count:
 * the default).  "exact" alone or with fraction and zero_sign.  Examples:
 * "exact", "ulp=2", "abs=1e-3,rel=1e-2", "ulp=1,fraction=0.01",
 * "zero_sign=ignore".  Unknown or repeated keys, bad numbers and empty
 * items are BP_EINPUT naming the item; p is left unchanged on failure. */
bp_status bp_policy_parse(const char *s, bp_policy_t *p, bp_error_t *err);
/* True when only bit-equal elements (NaNs by class) agree: no ulp or
 * tolerance part, no mismatch allowance, signs of zeros counted. */
bool bp_policy_is_exact(const bp_policy_t *p);

#endif
