/* The stack's drift-against-depth plot as one self-contained SVG file: no
 * script, no external font, style or image, so that it renders alone in a
 * browser or a bug ticket.  Small multiples: the mismatched fraction, the
 * headline, as a wide panel on a linear 0-100% axis; below it one panel
 * per other metric (max abs, RMS, RMS relative to A, max rel, median ulp,
 * max ulp), each with its own log axis over the decades its values span
 * and its unit.  x: the layer whose output is compared (1..L).  A value
 * with no logarithm is drawn as what it is: 0 as a hollow
 * marker in a strip labelled "0" below the axis, an infinite one (a
 * relative difference where A is 0) in a strip labelled "inf" above it; a
 * panel whose every value is infinite, or 0, says so in words. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rep_stack.h"
#include "xml.h"

#define W 960
#define TOP 92         /* below the title lines */
#define HEAD_H 200     /* the headline panel's plot height */
#define CELL_W 470     /* a small panel, plot and margins */
#define CELL_H 200
#define ML 78          /* left margin inside a panel (tick labels) */
#define MR 16
#define MT 40          /* panel title and the "inf" strip */
#define MB 48          /* the "0" strip, x ticks and label */
#define STRIP 14       /* distance of the 0 / inf strips from the plot */
#define NMET 7

static const char *const met_name[NMET] = {
    "mismatched fraction", "max abs diff", "RMS diff", "RMS diff / RMS of A",
    "max rel diff",        "median ulp",   "max ulp"};
static const char *const met_unit[NMET] = {
    "% of elements", "value units", "value units", "ratio", "ratio",
    "ulp", "ulp"};

static double metric(const bp_stack_layer_t *y, int k)
{
    const bp_cmp_t *c = &y->cmp;
    switch (k) {
    case 0: return c->total ? 100.0 * (double)c->mismatched / (double)c->total : 0.0;
    case 1: return c->max_abs;
    case 2: return y->rms_diff;
    case 3: return y->rms_ref > 0 ? y->rms_diff / y->rms_ref : 0.0;
    case 4: return c->max_rel;
    case 5: return y->median_ulp;
    default: return c->max_ulp == UINT64_MAX ? INFINITY : (double)c->max_ulp;
    }
}

typedef struct {
    double x0, y0, w, h; /* the plot area */
    bool log;
    int lo, hi;          /* log: decades; linear: 0..100 */
    int L;
} panel_t;

static double px(const panel_t *p, int layer)
{
    return p->L > 1 ? p->x0 + (double)(layer - 1) * p->w / (p->L - 1) : p->x0 + p->w / 2;
}

static double py(const panel_t *p, double v)
{
    double t = p->log ? (log10(v) - p->lo) / (p->hi - p->lo) : v / 100.0;
    return p->y0 + p->h - t * p->h;
}

static int tick_step(int L)
{
    static const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (L / steps[i] <= 8)
            return steps[i];
    return 1000;
}

static void text(FILE *f, double x, double y, const char *anchor, int size, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y,
            anchor, size);
    bp_xml_put(f, s, false);
    fputs("</text>\n", f);
}

static void axes(FILE *f, const panel_t *p, bool zeros, bool infs)
{
    char s[32];
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#333\"/>\n", p->x0, p->y0, p->w, p->h);
    if (p->log) {
        int every = (p->hi - p->lo + 5) / 6;
        for (int e = p->lo; e <= p->hi; e++) {
            double y = py(p, pow(10, e));
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                    p->x0, y, p->x0 + p->w, y);
            if ((e - p->lo) % every == 0) {
                snprintf(s, sizeof s, "1e%d", e);
                text(f, p->x0 - 6, y + 4, "end", 11, s);
            }
        }
    } else {
        for (int v = 0; v <= 100; v += 25) {
            double y = py(p, v);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                    p->x0, y, p->x0 + p->w, y);
            snprintf(s, sizeof s, "%d%%", v);
            text(f, p->x0 - 6, y + 4, "end", 11, s);
        }
    }
    if (zeros)
        text(f, p->x0 - 6, p->y0 + p->h + STRIP + 4, "end", 11, "0");
    if (infs)
        text(f, p->x0 - 6, p->y0 - STRIP + 4, "end", 11, "inf");
    int step = tick_step(p->L);
    for (int l = 1; l <= p->L; l++) {
        if (l != 1 && l != p->L && (l % step || p->L - l < (step + 1) / 2))
            continue;
        double x = px(p, l), yb = p->y0 + p->h + (zeros ? 2 * STRIP : 0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                x, yb, x, yb + 4);
        snprintf(s, sizeof s, "%d", l);
        text(f, x, yb + 16, "middle", 11, s);
    }
}

static void marker(FILE *f, double x, double y, bool hollow)
{
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" stroke=\"#1f5fa8\" "
            "stroke-width=\"1.5\"/>\n", x, y, hollow ? "white" : "#1f5fa8");
}

/* One metric's panel; (x, y) its top left corner, w x h its plot area. */
static void panel(FILE *f, const bp_stack_result_t *r, int k, double x, double y, double w,
                  double h)
{
    int L = r->nlayers;
    double vmin = INFINITY, vmax = 0;
    bool zeros = false, infs = false, finite = false;
    for (int l = 0; l < L; l++) {
        double v = metric(&r->layers[l], k);
        if (isinf(v)) {
            infs = true;
        } else if (!(v > 0)) {
            zeros = true;
        } else {
            finite = true;
            vmin = v < vmin ? v : vmin;
            vmax = v > vmax ? v : vmax;
        }
    }
    panel_t p = {.x0 = x + ML, .y0 = y + MT, .w = w, .h = h, .log = k != 0, .L = L};
    if (p.log) {
        p.lo = finite ? (int)floor(log10(vmin)) : 0;
        p.hi = finite ? (int)ceil(log10(vmax)) : 1;
        if (p.hi <= p.lo)
            p.hi = p.lo + 1;
    } else {
        zeros = false; /* 0% is on the linear axis */
    }
    char t[160];
    snprintf(t, sizeof t, "%s (%s%s)", met_name[k], met_unit[k], p.log ? ", log scale" : "");
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">", p.x0,
            y + 16);
    bp_xml_put(f, t, false);
    fputs("</text>\n", f);
    if (!finite && p.log && (infs != zeros)) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f4f4\" "
                "stroke=\"#999\"/>\n", p.x0, p.y0, p.w, p.h);
        text(f, p.x0 + p.w / 2, p.y0 + p.h / 2, "middle", 13,
             infs ? "infinite at every layer (side A has zeros)"
                  : strstr(met_name[k], "median")
                      ? "0 at every layer: at least half the elements bit-identical"
                      : "0 at every layer: bit-identical");
        return;
    }
    axes(f, &p, zeros, infs);
    /* the line through the finite values; it breaks at 0 and inf */
    bool open = false;
    for (int l = 0; l < L; l++) {
        double v = metric(&r->layers[l], k);
        bool on = p.log ? v > 0 && isfinite(v) : isfinite(v);
        if (on) {
            fprintf(f, "%s%.1f,%.1f", open ? " " : "<polyline fill=\"none\" stroke=\"#1f5fa8\" "
                    "stroke-width=\"2\" points=\"", px(&p, l + 1), py(&p, v));
            open = true;
        } else if (open) {
            fputs("\"/>\n", f);
            open = false;
        }
    }
    if (open)
        fputs("\"/>\n", f);
    for (int l = 0; l < L; l++) {
        double v = metric(&r->layers[l], k);
        if (isinf(v))
            marker(f, px(&p, l + 1), p.y0 - STRIP, true);
        else if (p.log && !(v > 0))
            marker(f, px(&p, l + 1), p.y0 + p.h + STRIP, true);
        else if (L <= 40)
            marker(f, px(&p, l + 1), py(&p, v), false);
    }
}

int bp_rep_svg(FILE *f, const bp_stack_result_t *r)
{
    const bp_stack_opts_t *o = &r->opts;
    int rows = NMET / 2; /* the six other panels, two a row */
    int H = TOP + MT + HEAD_H + MB + rows * CELL_H + 46;
    char title[512], sub[512], fin[256], foot[256];
    snprintf(title, sizeof title,
             "Drift against depth: %s (%lld layers, hidden %lld), %s, %s, "
             "positions %lld:%lld", o->cfg.preset, (long long)o->cfg.layers,
             (long long)o->cfg.hidden, bp_dtype_name(o->dtype), o->device,
             (long long)o->pos_begin, (long long)o->pos_end);
    snprintf(sub, sizeof sub, "B = %s against A = %s", r->side_desc[1], r->side_desc[0]);
    snprintf(fin, sizeof fin,
             "final: log-prob max abs diff %.4g, top-1 agreement %.2f%%, mean KL %.3g",
             r->logp.max_abs,
             r->top1_total ? 100.0 * (double)r->top1_agree / (double)r->top1_total : 0.0,
             r->mean_kl);
    snprintf(foot, sizeof foot,
             "x: layer (hidden state after the block). Fraction: of the %lld x %lld elements; "
             "ulp: units in the last place of %s.",
             (long long)(o->pos_end - o->pos_begin), (long long)o->cfg.hidden,
             bp_dtype_name(o->dtype));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            W, H, W, H);
    fputs("<title>", f);
    bp_xml_put(f, title, false);
    fputs("</title>\n<desc>", f);
    bp_xml_put(f, sub, false);
    fputs(". ", f);
    bp_xml_put(f, fin, false);
    fputs(". Made by bitprobe stack.</desc>\n", f);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"20\" y=\"28\" font-size=\"16\" font-weight=\"bold\">");
    bp_xml_put(f, title, false);
    fputs("</text>\n", f);
    text(f, 20, 50, "start", 12, sub);
    text(f, 20, 68, "start", 12, fin);
    /* the headline: the mismatched fraction, wide */
    panel(f, r, 0, 0, TOP, W - ML - MR - 20, HEAD_H);
    double y = TOP + MT + HEAD_H + MB;
    for (int k = 1; k < NMET; k++) {
        int col = (k - 1) % 2, row = (k - 1) / 2;
        panel(f, r, k, col * CELL_W, y + row * CELL_H, CELL_W - ML - MR - 10,
              CELL_H - MT - MB);
    }
    text(f, 20, H - 32, "start", 11, foot); /* two lines: one is wider than the plot */
    text(f, 20, H - 16, "start", 11, "Hollow markers: 0 (bit-identical) below an axis, inf above it.");
    fputs("</svg>\n", f);
    return ferror(f) ? 2 : 0;
}
