/* Doubles and ulp distances as JSON values (jsonval.h). */
#include "jsonval.h"

#include <math.h>

json_t *bp_json_num(double v)
{
    if (isnan(v))
        return json_string("nan");
    if (isinf(v))
        return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

json_t *bp_json_ulp(uint64_t u)
{
    return u == UINT64_MAX ? json_string(BP_JSON_CLASS_CHANGE)
                           : json_integer((json_int_t)u);
}
