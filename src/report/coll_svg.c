/* The collective maps as one self-contained SVG (inv_report.h): a panel
 * per map, message size across (one column per size swept, in order), one
 * row per configuration.  A cell's colour says whose bits it has at that
 * size: grey is group 0 (the reference configuration's bits there), any
 * other colour the first configuration of its group (so that one
 * configuration's results keep their colour from size to size while their
 * group numbers move), the group number inside when there is room; a white
 * cell with a cross could not run (the title says why).  A black line
 * between two columns is a boundary where the configurations regroup; a
 * red dot marks a cell whose bits changed from run to run, a red frame one
 * whose ranks disagree or whose all-gather is not a copy. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inv_report.h"
#include "xml.h"

#define W 1200
#define LABEL_X 12
#define PL 250
#define PR 1000
#define ROW_H 16
#define NPAL 12

static const char *const palette[NPAL] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#393b79", "#ad494a", "#637939"};

/* Grey for group 0, else the colour of the group's first configuration. */
static const char *colour(const bp_coll_map_t *m, size_t s, int g)
{
    return g == 0 ? "#c8c8c8" : palette[(size_t)m->sz[s].g[g].first % NPAL];
}

static double xpos(size_t i, size_t n)
{
    return PL + (double)(PR - PL) * (double)i / (double)(n ? n : 1);
}

static void text(FILE *f, double x, double y, int size, const char *anchor, const char *fill,
                 const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\" fill=\"%s\">",
            x, y, size, anchor, fill);
    bp_xml_put(f, s, false);
    fputs("</text>\n", f);
}

static double panel(FILE *f, const bp_coll_map_t *m, double y)
{
    char t[256], title[128];
    bp_coll_map_title(m, title, sizeof title);
    snprintf(t, sizeof t, "%s (%s%s%s)", title, m->engine, m->lib[0] ? ", " : "", m->lib);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">", LABEL_X, y);
    bp_xml_put(f, t, false);
    fputs("</text>\n", f);
    y += 10;
    size_t n = m->nsizes;
    for (size_t c = 0; c < m->ncfg; c++) {
        double ry = y + (double)c * ROW_H;
        char name[64];
        bp_coll_cfg_name(&m->cfg[c], name, sizeof name);
        text(f, LABEL_X, ry + ROW_H - 4, 11, "start", "#000", name);
        size_t other = 0, breaks = 0, ran = 0;
        for (size_t s = 0; s < n; s++) {
            const bp_coll_cell_t *x = bp_coll_cell(m, s, c);
            double x0 = xpos(s, n), x1 = xpos(s + 1, n);
            char sz[32];
            bp_coll_bytes_format(m->sz[s].bytes, sz, sizeof sz);
            if (x->state != BP_CELL_RAN) {
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                        "fill=\"#ffffff\" stroke=\"#dddddd\"><title>", x0, ry, x1 - x0,
                        ROW_H - 2);
                char w[400];
                snprintf(w, sizeof w, "%s at %s: %s", name, sz,
                         x->state == BP_CELL_NOTRUN ? (x->why[0] ? x->why : "not run")
                                                    : x->why);
                bp_xml_put(f, w, false);
                fputs("</title></rect>\n", f);
                if (x->state != BP_CELL_NOTRUN)
                    fprintf(f, "<path d=\"M%.2f %.1f L%.2f %.1f\" stroke=\"#bbbbbb\"/>\n", x0,
                            ry, x1, ry + ROW_H - 2);
                continue;
            }
            ran++;
            other += x->group != 0;
            bool br = bp_coll_cell_breaks(m, s, c);
            breaks += br;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"%s>"
                    "<title>%s at %s: group %d</title></rect>\n",
                    x0, ry, x1 - x0, ROW_H - 2, colour(m, s, x->group),
                    x->ranks_differ || x->copy_differ ? " stroke=\"#d00000\" stroke-width=\"2\""
                                                      : "",
                    name, sz, x->group);
            if (x->group && x1 - x0 >= 12)
                fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\" "
                        "fill=\"#ffffff\">%d</text>\n", (x0 + x1) / 2, ry + ROW_H - 5, x->group);
            if (x->repeat_differ || x->process_differ)
                fprintf(f, "<circle cx=\"%.2f\" cy=\"%.1f\" r=\"2.5\" fill=\"#d62728\"/>\n",
                        (x0 + x1) / 2, ry + 3);
        }
        char v[64];
        if (!ran)
            snprintf(v, sizeof v, "not available");
        else if (!other && !breaks)
            snprintf(v, sizeof v, "group 0 everywhere");
        else
            snprintf(v, sizeof v, "other bits at %zu of %zu sizes%s", other, ran,
                     breaks > other ? ", unstable" : "");
        text(f, PR + 8, ry + ROW_H - 4, 11, "start", !ran ? "#888" : breaks ? "#b00000" : "#006000",
             v);
    }
    double bottom = y + (double)m->ncfg * ROW_H;
    /* boundaries: where the configurations regroup */
    size_t prev = SIZE_MAX;
    for (size_t s = 0; s < n; s++) {
        bool any = false;
        for (size_t c = 0; c < m->ncfg && !any; c++)
            any = bp_coll_cell(m, s, c)->state == BP_CELL_RAN;
        if (!any)
            continue;
        if (prev != SIZE_MAX && !bp_coll_same_partition(m, prev, s))
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#000\" "
                    "stroke-width=\"1.5\"/>\n", xpos(s, n), y - 4, xpos(s, n), bottom + 2);
        prev = s;
    }
    /* the size axis: about 12 labels */
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/>\n", PL,
            bottom + 2, PR, bottom + 2);
    size_t step = n > 12 ? (n + 11) / 12 : 1;
    for (size_t s = 0; s < n; s += step) {
        char sz[32];
        bp_coll_bytes_format(m->sz[s].bytes, sz, sizeof sz);
        double x = (xpos(s, n) + xpos(s + 1, n)) / 2;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
                x, bottom + 2, x, bottom + 6);
        text(f, x, bottom + 18, 10, "middle", "#000", sz);
    }
    text(f, (PL + PR) / 2.0, bottom + 34, 12, "middle", "#000",
         "message size (bytes), one column per size swept");
    return bottom + 56;
}

int bp_coll_svg(FILE *f, const bp_inv_study_t *s)
{
    double h = 90;
    for (size_t i = 0; i < s->ncmaps; i++)
        h += 10 + (double)s->cmaps[i].ncfg * ROW_H + 56 + 20;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
               "viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            W, h, W, h);
    char t[128];
    snprintf(t, sizeof t, "Collective invariance maps: %zu map%s, seed %" PRIu64, s->ncmaps,
             s->ncmaps == 1 ? "" : "s", s->seed);
    fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">", LABEL_X);
    bp_xml_put(f, t, false);
    fputs("</text>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"44\" font-size=\"12\" fill=\"#444\">colour = whose bits: "
               "grey is group 0's at that size, another colour the first configuration of "
               "the group (its number inside); a black line: the configurations regroup;"
               "</text>\n<text x=\"%d\" y=\"58\" font-size=\"12\" "
               "fill=\"#444\">white with a stroke: not available there; a red dot: the bits "
               "changed from run to run; a red frame: ranks disagree or not a copy</text>\n",
            LABEL_X, LABEL_X);
    double y = 90;
    for (size_t i = 0; i < s->ncmaps; i++)
        y = panel(f, &s->cmaps[i], y) + 20;
    fputs("</svg>\n", f);
    return ferror(f) ? 2 : 0;
}
