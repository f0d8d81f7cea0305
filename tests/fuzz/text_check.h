/* What every line of text output promises whatever the names in it
 * (esc.h): no control character but the lines' ends, no C1 control, no
 * line that GitHub Actions would take for a workflow command ("::" after
 * blanks).  Shared by the fuzz targets that render text. */
#ifndef BP_FUZZ_TEXT_CHECK_H
#define BP_FUZZ_TEXT_CHECK_H

#include <string.h>

#include "fuzz.h"

static inline void fuzz_text_check(const char *what, const char *s, size_t n)
{
    bool line_start = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        FUZZ_CHECK(c != 0x7f && (c >= 0x20 || c == '\n'), "%s: byte 0x%02x at %zu", what, c, i);
        FUZZ_CHECK(!(c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                     (unsigned char)s[i + 1] <= 0x9f),
                   "%s: a C1 control at %zu", what, i);
        if (line_start) {
            size_t j = i;
            while (j < n && s[j] == ' ')
                j++;
            FUZZ_CHECK(!(j + 1 < n && s[j] == ':' && s[j + 1] == ':'),
                       "%s: a line starting '::' at %zu", what, i);
        }
        line_start = c == '\n';
    }
}

#endif
