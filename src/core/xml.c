/* XML text escaping (xml.h). */
#include "xml.h"

#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s and its code point; 0 when
 * the bytes there are not one. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
    int len;
    uint32_t c = s[0], min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2, c &= 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, c &= 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

void bp_xml_put(FILE *f, const char *str, bool attr)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        uint32_t cp;
        int len = utf8_seq(s, &cp);
        if (len == 0) { /* stray byte: drop it and resynchronise */
            s++;
            continue;
        }
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\t':
        case '\n':
            if (attr)
                fprintf(f, "&#%u;", (unsigned)cp);
            else
                fputc((int)cp, f);
            break;
        case '\r': fputs("&#13;", f); break;
        default:
            if (cp < 0x20 || cp == 0xfffe || cp == 0xffff)
                break; /* not an XML 1.0 character: no way to write it */
            if (cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
                fprintf(f, "&#%u;", (unsigned)cp);
            else
                fwrite(s, 1, (size_t)len, f);
        }
        s += len;
    }
}
