/* Report files written whole or not at all.  bp_out_open gives a stream
 * for PATH: standard output for "-"; the file itself where PATH exists and
 * is not a regular file (/dev/null, a FIFO, a terminal); otherwise a
 * temporary file beside PATH, registered with the interrupt watcher, that
 * bp_out_close renames over PATH only when everything was written.  So an
 * interrupted or failed report leaves the previous file as it was. */
#ifndef BP_OUTFILE_H
#define BP_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    FILE *f;
    char path[4096];
    char tmp[4096]; /* empty when writing PATH (or stdout) directly */
} bp_out_t;

/* false (errno set) when PATH cannot be opened or its temporary made. */
bool bp_out_open(bp_out_t *o, const char *path);
/* Ends the stream; with ok, the content becomes PATH.  false when ok was
 * false or the content could not be flushed or renamed (errno set). */
bool bp_out_close(bp_out_t *o, bool ok);

#endif
