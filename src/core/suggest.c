/* Nearest-name suggestions (see suggest.h). */
#include "suggest.h"

#include <string.h>

#define MAXLEN 64

size_t bp_suggest_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > MAXLEN || m > MAXLEN)
        return MAXLEN;
    /* d[i][j]: distance between a[:i] and b[:j] (Damerau's transposition
     * restricted to neighbours that are not edited again). */
    size_t d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

static int prefix_of(const char *p, const char *s)
{
    size_t n = strlen(p);
    return n >= 2 && strncmp(p, s, n) == 0;
}

const char *bp_suggest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t best_d = MAXLEN + 1;
    size_t wl = strlen(word);
    for (size_t i = 0; i < n; i++) {
        size_t cl = strlen(cands[i]), longer = wl > cl ? wl : cl;
        size_t limit = longer / 3 ? longer / 3 : 1;
        size_t d = bp_suggest_distance(word, cands[i]);
        if (d > limit && (prefix_of(cands[i], word) || prefix_of(word, cands[i])))
            d = limit; /* "divide" for "div", "sin" for "sine" */
        if (d <= limit && d < best_d) {
            best = cands[i];
            best_d = d;
        }
    }
    return best;
}
