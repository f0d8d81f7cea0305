/* The one rule for data inside a line of text output (the text report,
 * every command's own lines, messages on stderr): names of tensors,
 * probes, ops and modules, paths and notes come from files bitprobe does
 * not control, and must neither break a line nor steer what reads it.
 *
 *   - control characters (0x00-0x1f, 0x7f) and the C1 controls U+0080 to
 *     U+009F are shown escaped: \n, \r, \t, else \xHH per byte (so ESC is
 *     \x1b: no terminal sequence passes through);
 *   - a string that begins, after blanks, with ':' shows that ':' as \x3a:
 *     GitHub Actions executes a line starting "::" as a workflow command,
 *     and a string may be the first thing on a line, the writer's own ':'
 *     right after it (a name ":" then ": ").
 * Everything else, invalid UTF-8 and backslashes included, is written as
 * it is: the escapes are for display, never parsed back.  Formats that
 * escape by their own rules (JSON, JUnit XML, Markdown, GitHub's
 * annotation properties) do not use this. */
#ifndef BP_ESC_H
#define BP_ESC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Room for any string of up to BP_ESC_MAX / 4 bytes escaped. */
#define BP_ESC_MAX 16384

/* Whether s (NULL: no) needs escaping at all. */
bool bp_esc_needed(const char *s);
/* s escaped into out (n bytes, cut with "..." when short); returns out.
 * NULL is "". */
char *bp_esc_str(const char *s, char *out, size_t n);
/* s escaped, malloc'd (NULL when out of memory). */
char *bp_esc_dup(const char *s);
/* Writes s escaped to f. */
void bp_esc_put(FILE *f, const char *s);
/* printf to f with the whole formatted text escaped as one string: for
 * a message that is one line by design (an error, a note) and holds data
 * anywhere in it.  A newline at the very end of the text ends the line. */
void bp_esc_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bp_esc_vprintf(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* s escaped in a buffer that lives until the end of the enclosing block:
 * fprintf(f, "%s vs %s", BP_ESC(a), BP_ESC(b)). */
#define BP_ESC(s) bp_esc_str((s), (char[BP_ESC_MAX]){0}, BP_ESC_MAX)

#endif
