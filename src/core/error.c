/* Error records: formatting helpers for bp_error_t (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bp_status bp_error_set(bp_error_t *err, bp_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

bp_status bp_error_prefix(bp_error_t *err, const char *fmt, ...)
{
    if (!err)
        return BP_EINTERNAL;
    char head[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t hl = strlen(head), room = sizeof err->msg - 1;
    if (hl > room)
        hl = room;
    memcpy(err->msg, head, hl);
    size_t ol = strnlen(old, sizeof old - 1);
    if (ol > room - hl)
        ol = room - hl;
    memcpy(err->msg + hl, old, ol);
    err->msg[hl + ol] = '\0';
    return err->code;
}

void bp_error_clear(bp_error_t *err)
{
    if (err) {
        err->code = BP_OK;
        err->msg[0] = '\0';
    }
}
