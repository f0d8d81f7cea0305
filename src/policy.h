/* Comparison policy of one output: when do two buffers count as agreeing.
 * An element agrees when its bits are equal (NaNs by class unless payloads
 * count), or when it is within max_ulp (ulp policy), or within
 * abs + rel * |expected| (tolerance policy, as torch.isclose).  The output
 * passes when the fraction of elements that do not agree is at most
 * max_mismatch_fraction (0 by default: every element must agree). */
#ifndef BP_POLICY_H
#define BP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bp_policy {
    bool has_ulp;
    uint64_t max_ulp;
    bool has_tol;
    double abs, rel;
    double max_mismatch_fraction;
} bp_policy_t;

/* The default: exact, every element. */
void bp_policy_exact(bp_policy_t *p);
/* "exact", "ulp<=2", "abs<=1e-3,rel<=1e-2,frac<=0.01" */
void bp_policy_format(const bp_policy_t *p, char *out, unsigned n);

#endif
