/* Reading a tensor file's content in windows, without holding the file:
 * what lets diff compare files larger than memory at memory speed.
 *
 * A source is a regular file read in place (BP_TF_MAP: plain safetensors,
 * .npy, a stored zip member), a gzip file (BP_TF_GZIP) or a raw deflate
 * stream inside a file (BP_TF_DEFLATE: a deflated zip member).  A reader
 * hands out [off, off + len) of the source's content (the inflated bytes
 * for the streams), len at most BP_TREAD_WINDOW, through a pointer valid
 * until its next call.
 *
 * Mapped sources are mapped one window at a time (faulted in as read,
 * the kernel reading ahead of the file marked sequential, the previous
 * window unmapped), so a reader's
 * resident memory is one window whatever the file's size, and any offset
 * is as cheap as any other.  Streams are inflated forward into one
 * window-sized buffer: a later offset costs inflating up to it, an
 * earlier one restarts the stream from its start
 * (correct, and rare: readers ask in data order).
 *
 * Errors name the label and, for streams, the compressed byte offset
 * ("corrupt gzip stream (...) at compressed byte N"); content that ends
 * before a requested range is BP_EINPUT with *got short (the caller words
 * it in its format's terms). */
#ifndef BP_TREAD_H
#define BP_TREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The most a reader hands out at once, and a stream's buffer. */
#define BP_TREAD_WINDOW ((size_t)2 << 20)
/* A mapped source's window: 8 MiB reads a cold file fastest (2 MiB windows
 * were up to 1.6x slower there, warm the same); bp_tread_set_map makes it
 * smaller, down to BP_TREAD_WINDOW. */
#define BP_TREAD_MAP_MAX ((size_t)8 << 20)

typedef enum { BP_TF_MAP, BP_TF_GZIP, BP_TF_DEFLATE } bp_tf_kind_t;

typedef struct {
    bp_tf_kind_t kind;
    uint64_t start;  /* where the content (MAP) or compressed data begins */
    uint64_t clen;   /* compressed bytes (DEFLATE; GZIP: to the file's end) */
    uint64_t ulen;   /* content length: MAP and DEFLATE; GZIP: unknown,
                      * UINT64_MAX */
} bp_tsrc_t;

typedef struct bp_tread bp_tread_t;

/* A reader of src in the file open as fd (borrowed: it stays the
 * caller's; readers of one fd may run in parallel, as they only pread and
 * mmap it); label names it in messages. */
bp_status bp_tread_open(int fd, const char *label, const bp_tsrc_t *src,
                        bp_tread_t **out, bp_error_t *err);
/* Points *p at content bytes [off, off + len), len <= BP_TREAD_WINDOW.  At
 * the content's end fewer are there: *got says how many (the others'
 * absence is the caller's to word), and BP_OK. */
bp_status bp_tread_get(bp_tread_t *r, uint64_t off, size_t len, const unsigned char **p,
                       size_t *got, bp_error_t *err);
/* Streams: inflates on to the end, checks the stream's own integrity (its
 * CRC, no garbage after it) and sets *len to the content's length, or to
 * limit + 1 when it runs past limit (inflation stops there: a bomb costs
 * no more).  Mapped sources: *len is their length. */
bp_status bp_tread_finish(bp_tread_t *r, uint64_t limit, uint64_t *len, bp_error_t *err);
void bp_tread_close(bp_tread_t *r);
/* The window of mapped sources opened afterwards: bytes, within
 * [BP_TREAD_WINDOW, BP_TREAD_MAP_MAX].  Process-wide: set it before the
 * threads that read start (diff: 64 MiB over its threads' two readers
 * each, so that the windows' memory stays flat in the thread count). */
void bp_tread_set_map(size_t bytes);
/* Whether offsets can be read in any order at no extra cost. */
bool bp_tread_random(const bp_tsrc_t *src);

#endif
