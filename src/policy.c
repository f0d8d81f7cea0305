/* Comparison policies (see policy.h). */
#include "policy.h"

#include <stdio.h>
#include <string.h>

void bp_policy_exact(bp_policy_t *p)
{
    memset(p, 0, sizeof *p);
}

void bp_policy_format(const bp_policy_t *p, char *out, unsigned n)
{
    int len = 0;
    out[0] = '\0';
    if (p->has_ulp)
        len += snprintf(out + len, n - (unsigned)len, "ulp<=%llu",
                        (unsigned long long)p->max_ulp);
    if (p->has_tol && len < (int)n)
        len += snprintf(out + len, n - (unsigned)len, "%sabs<=%g,rel<=%g",
                        len ? "," : "", p->abs, p->rel);
    if (p->max_mismatch_fraction > 0 && len < (int)n)
        len += snprintf(out + len, n - (unsigned)len, "%sfraction<=%g",
                        len ? "," : "", p->max_mismatch_fraction);
    if (len == 0)
        snprintf(out, n, "exact");
}
