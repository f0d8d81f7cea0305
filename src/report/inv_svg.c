/* The invariance strip chart as one self-contained SVG (no script, no
 * external font or style).  Bands that share their axis values (usually
 * all of a run's) form one panel with one axis; a panel's axis is ordinal:
 * every configuration swept gets the same width, in the order swept, so a
 * contiguous range reads as a linear axis and a list of powers of two
 * stays legible.  In a band each interval is one rectangle coloured by its
 * result group: grey is the reference's bits (the probed rows alone), the
 * other colours are other results, numbered inside when there is room.
 * A boundary is a black line labelled with the first value after it; a
 * small triangle above the band marks a configuration
 * whose algorithm differs from the one before while its bits do not.  The
 * label says engine, dtype and placement, and the right margin the
 * verdict. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inv_report.h"
#include "xml.h"

#define W 1200
#define LABEL_X 12
#define PL 330 /* plot area, left and right edges */
#define PR 930
#define BAND_H 20
#define BAND_GAP 14
#define NPAL 12

static const char *const palette[NPAL] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#393b79", "#ad494a", "#637939"};

static const char *group_colour(int g)
{
    return g == 0 ? "#c8c8c8" : palette[(g - 1) % NPAL];
}


typedef struct {
    const bp_inv_map_t *m;
    const bp_inv_band_t *b;
} row_t;

static bool same_axis(const row_t *x, const row_t *y)
{
    if (x->m->axis != y->m->axis || x->b->ncfg != y->b->ncfg)
        return false;
    for (size_t i = 0; i < x->b->ncfg; i++)
        if (x->b->cfg[i].value != y->b->cfg[i].value)
            return false;
    return true;
}

static double xpos(size_t i, size_t n)
{
    return PL + (double)(PR - PL) * (double)i / (double)(n ? n : 1);
}

static void band(FILE *f, const row_t *r, double y)
{
    const bp_inv_map_t *m = r->m;
    const bp_inv_band_t *b = r->b;
    char label[200];
    int k = snprintf(label, sizeof label, "%s %s %s %s", m->op, m->dims, m->dtype_name,
                     m->engine);
    if (m->nbands > 1 && k > 0 && (size_t)k < sizeof label)
        snprintf(label + k, sizeof label - (size_t)k, " (%s)", bp_inv_place_name(b->place));
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"13\">", LABEL_X, y + 14);
    bp_xml_put(f, label, false);
    fputs("</text>\n", f);
    size_t n = b->ncfg;
    for (size_t i = 0; i < b->niv; i++) {
        const bp_inv_run_t *iv = &b->iv[i];
        double x0 = xpos(iv->first, n), x1 = xpos(iv->last + 1, n);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                "fill=\"%s\"><title>%s %" PRId64 "-%" PRId64 ": group %d</title></rect>\n",
                x0, y, x1 - x0, BAND_H, group_colour(iv->group),
                bp_inv_axis_letter(m->axis), b->cfg[iv->first].value,
                b->cfg[iv->last].value, iv->group);
        if (x1 - x0 >= 16)
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"11\" "
                    "text-anchor=\"middle\" fill=\"%s\">%d</text>\n",
                    (x0 + x1) / 2, y + 14, iv->group ? "#ffffff" : "#333333",
                    iv->group);
        if (i) {
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                    "stroke=\"#000000\" stroke-width=\"1.2\"/>\n",
                    x0, y - 2, x0, y + BAND_H + 2);
            if (b->niv <= 24)
                fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"9\" "
                        "fill=\"#8b0000\">%" PRId64 "</text>\n",
                        x0 + 2, y - 2, b->cfg[iv->first].value);
        }
    }
    for (size_t i = 1; i < n; i++)
        if (b->cfg[i].group == b->cfg[i - 1].group &&
            !bp_inv_algo_equal(&b->cfg[i].algo, &b->cfg[i - 1].algo)) {
            double x = xpos(i, n);
            fprintf(f, "<path d=\"M%.2f %.1f l-3 -5 h6 z\" fill=\"#555555\"/>\n", x,
                    y - 1);
        }
    for (size_t i = 0; i < n; i++)
        if (b->cfg[i].repeat_differ || b->cfg[i].process_differ) {
            double x = (xpos(i, n) + xpos(i + 1, n)) / 2;
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.1f\" r=\"2.5\" fill=\"#d62728\"/>\n",
                    x, y + BAND_H + 4);
        }
    size_t breaking = bp_inv_band_breaking(m, b);
    size_t groups = 0;
    for (size_t g = 0; g < m->ng; g++)
        for (size_t k = 0; k < b->niv; k++)
            if (b->iv[k].group == (int)g) {
                groups++;
                break;
            }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">", PR + 10,
            y + 14, breaking ? "#b00000" : "#006000");
    if (b->niv == 1 && b->iv[0].group == 0 && !breaking)
        fputs("invariant", f);
    else
        fprintf(f, "%zu group%s%s", groups, groups == 1 ? "" : "s",
                breaking ? ", DRIFT" : "");
    fputs("</text>\n", f);
}

static void tick(FILE *f, const bp_inv_band_t *b, size_t i, double y)
{
    size_t n = b->ncfg;
    double x = (xpos(i, n) + xpos(i + 1, n)) / 2;
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
            "stroke=\"#000\"/><text x=\"%.2f\" y=\"%.1f\" font-size=\"11\" "
            "text-anchor=\"middle\">%" PRId64 "</text>\n",
            x, y, x, y + 4, x, y + 16, b->cfg[i].value);
}

/* Ticks: on a contiguous range, at the multiples of a power of two that
 * gives at most about 10 of them (M reads best in powers of two); on any
 * other list, at about 10 evenly spaced configurations.  The first and the
 * last configuration always get one. */
static void axis(FILE *f, const row_t *r, double y)
{
    const bp_inv_band_t *b = r->b;
    size_t n = b->ncfg;
    if (!n)
        return;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/>\n",
            PL, y, PR, y);
    int64_t lo = b->cfg[0].value, hi = b->cfg[n - 1].value;
    bool contiguous = hi - lo == (int64_t)n - 1;
    double gap = (double)(PR - PL) / 12; /* keep labels apart */
    double last_x = -1e9;
    if (contiguous) {
        int64_t step = 1;
        while ((hi - lo) / step > 10)
            step *= 2;
        for (size_t i = 0; i < n; i++) {
            int64_t v = b->cfg[i].value;
            double x = xpos(i, n);
            if ((i == 0 || v % step == 0 || i == n - 1) &&
                (x - last_x >= gap || i == n - 1)) {
                if (i == n - 1 && x - last_x < gap / 2)
                    continue;
                tick(f, b, i, y);
                last_x = x;
            }
        }
    } else {
        size_t step = n > 10 ? (n + 9) / 10 : 1, last = 0;
        for (size_t i = 0; i < n; i += step)
            if (i + step / 2 < n || i == 0) {
                tick(f, b, i, y);
                last = i;
            }
        if (n > 1 && last != n - 1)
            tick(f, b, n - 1, y);
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">"
            "%s (%s), one cell per configuration swept</text>\n",
            (PL + PR) / 2, y + 32, bp_inv_axis_letter(r->m->axis),
            bp_inv_axis_name(r->m->axis));
}

int bp_inv_svg(FILE *f, const bp_inv_study_t *s)
{
    if (s->ncmaps && !s->nmaps)
        return bp_coll_svg(f, s);
    size_t nrows = 0;
    for (size_t i = 0; i < s->nmaps; i++)
        nrows += (size_t)s->maps[i].nbands;
    row_t *rows = calloc(nrows ? nrows : 1, sizeof *rows);
    bool *done = calloc(nrows ? nrows : 1, sizeof *done);
    if (!rows || !done) {
        free(rows);
        free(done);
        return 2;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->nmaps; i++)
        for (int b = 0; b < s->maps[i].nbands; b++)
            rows[k++] = (row_t){&s->maps[i], &s->maps[i].band[b]};
    /* panels: rows with the same axis values, in order of first appearance */
    size_t npanels = 0;
    for (size_t i = 0; i < nrows; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = !same_axis(&rows[i], &rows[j]);
        npanels += first;
    }
    int h = 80 + (int)nrows * (BAND_H + BAND_GAP) + (int)npanels * 60 + 10;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            W, h, W, h);
    fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">",
            LABEL_X);
    if (s->nmaps) {
        const bp_inv_map_t *m = &s->maps[0];
        bool one = true;
        for (size_t i = 1; i < s->nmaps && one; i++)
            one = !strcmp(s->maps[i].op, m->op) && !strcmp(s->maps[i].shape, m->shape);
        char t[256];
        if (one)
            snprintf(t, sizeof t, "Invariance map: %s %s, seed %" PRIu64, m->op, m->shape,
                     s->seed);
        else
            snprintf(t, sizeof t, "Invariance maps: %zu maps, seed %" PRIu64, s->nmaps,
                     s->seed);
        bp_xml_put(f, t, false);
    } else {
        fputs("Invariance map: nothing swept", f);
    }
    fputs("</text>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"44\" font-size=\"12\" fill=\"#444\">colour = result "
               "group: grey is the reference's bits (the probed rows alone); a black "
               "line is a boundary, labelled with the first value after it;</text>\n"
               "<text x=\"%d\" y=\"58\" font-size=\"12\" fill=\"#444\">a small "
               "triangle: the algorithm changes, the bits do not; a red dot: the bits "
               "differ from run to run</text>\n", LABEL_X, LABEL_X);
    double y = 80;
    for (size_t i = 0; i < nrows; i++) {
        if (done[i])
            continue;
        for (size_t j = i; j < nrows; j++) {
            if (done[j] || !same_axis(&rows[i], &rows[j]))
                continue;
            y += 8;
            band(f, &rows[j], y);
            y += BAND_H + BAND_GAP - 8;
            done[j] = true;
        }
        axis(f, &rows[i], y + 4);
        y += 60;
    }
    fputs("</svg>\n", f);
    free(rows);
    free(done);
    return ferror(f) ? 2 : 0;
}
