/* The directory of a zip file (what np.savez and np.savez_compressed
 * write), read as hostile input.  Only the structure is read here; members
 * are then read through tread.h (stored: in place; deflate: inflated).
 *
 * Rules, each refused with BP_EINPUT and "<label>: <what> at byte <N>":
 *   - the end-of-central-directory record within the last 64 KiB + 22
 *     bytes, on one disk; zip64 records where the 32-bit fields say so,
 *     found where the locator says and inside the file (a count of 0xffff
 *     without a locator is 65,535 members, as Python writes them);
 *   - the central directory inside the file, before the end record, with
 *     as many well-formed entries as the end record counts (at most
 *     BP_ZIP_MAX_MEMBERS), names 1..BP_ZIP_MAX_NAME bytes without NUL,
 *     zip64 extra fields where a 32-bit size or offset is 0xffffffff;
 *   - no encryption; compression stored (0) or deflate (8) only, others
 *     named ("bzip2 (12)");
 *   - each member's local header at its offset, with the same name, its
 *     data inside the file and before the central directory; stored
 *     members as long compressed as not; members never overlapping (no
 *     shared data, the trick of the overlapping-entry zip bombs);
 *   - with a data descriptor (flag 8) the central directory's sizes and
 *     CRC stand (the local header may hold zeros).
 * The content of a deflate member is checked when read: it must inflate
 * to exactly its size (tread.h). */
#ifndef BP_ZIP_H
#define BP_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define BP_ZIP_MAX_MEMBERS 100000
#define BP_ZIP_MAX_NAME 4096

typedef struct {
    char *name;
    bool deflate;        /* else stored */
    uint64_t data_off;   /* of the (compressed) data in the file */
    uint64_t csize, usize;
    uint32_t crc;
} bp_zip_member_t;

typedef struct {
    bp_zip_member_t *m;  /* in central directory order */
    size_t n;
} bp_zip_t;

/* Reads the directory of the zip open as fd (size bytes) with pread. */
bp_status bp_zip_read(int fd, uint64_t size, const char *label, bp_zip_t *out,
                      bp_error_t *err);
/* The same from memory (fuzzing). */
bp_status bp_zip_parse(const unsigned char *data, size_t len, const char *label,
                       bp_zip_t *out, bp_error_t *err);
void bp_zip_free(bp_zip_t *z);

#endif
