/* The stack's drift-against-depth plot as one self-contained SVG file: no
 * script, no external font, style or image, so that it renders alone in a
 * browser or a bug ticket.  x: the layer whose output is compared (1..L);
 * y: log10 scale over whole decades covering every nonzero value; one
 * polyline per metric, each with its own colour, dash pattern and marker
 * shape (readable in grey too).  A value of 0 (bit-identical) has no
 * logarithm: it is drawn as a hollow marker on the bottom edge, and an
 * infinite one (a relative difference where side A is 0) as a hollow
 * marker on the top edge; the line breaks at both, and the legend says
 * so. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rep_stack.h"
#include "xml.h"

#define W 960
#define H 600
#define PL 90  /* plot area: left, right, top, bottom edges */
#define PR 700
#define PT 80
#define PB 520
#define NMET 7

static const char *const met_name[NMET] = {
    "mismatched fraction", "max abs diff", "RMS diff", "RMS diff / RMS of A",
    "max rel diff",        "median ulp",   "max ulp"};
static const char *const met_color[NMET] = {
    "#1b9e77", "#d95f02", "#7570b3", "#e6ab02", "#e7298a", "#66a61e",
    "#a6761d"};
static const char *const met_dash[NMET] = {"", "8 4", "2 3", "6 2 1 2",
                                           "10 3 2 3", "4 4", "1 2"};

static double metric(const bp_stack_layer_t *y, int k)
{
    const bp_cmp_t *c = &y->cmp;
    switch (k) {
    case 0: return c->total ? (double)c->mismatched / (double)c->total : 0.0;
    case 1: return c->max_abs;
    case 2: return y->rms_diff;
    case 3: return y->rms_ref > 0 ? y->rms_diff / y->rms_ref : 0.0;
    case 4: return c->max_rel;
    case 5: return y->median_ulp;
    default: return c->max_ulp == UINT64_MAX ? INFINITY : (double)c->max_ulp;
    }
}


static void marker(FILE *f, int k, double x, double y, bool hollow)
{
    const char *c = met_color[k];
    char fill[32];
    snprintf(fill, sizeof fill, "%s", hollow ? "white" : c);
    switch (k % 3) {
    case 0:
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
                "stroke=\"%s\" stroke-width=\"1.5\"/>\n", x, y, fill, c);
        break;
    case 1:
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" "
                "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", x - 3.5,
                y - 3.5, fill, c);
        break;
    default:
        fprintf(f, "<path d=\"M %.1f %.1f L %.1f %.1f L %.1f %.1f Z\" "
                "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", x,
                y - 4.5, x + 4.5, y + 3.5, x - 4.5, y + 3.5, fill, c);
        break;
    }
}

static double px(int layer, int L)
{
    return L > 1 ? PL + (double)(layer - 1) * (PR - PL) / (L - 1)
                 : (PL + PR) / 2.0;
}

static double py(double v, int lo, int hi)
{
    return PB - (log10(v) - lo) * (PB - PT) / (hi - lo);
}

static int tick_step(int L)
{
    static const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (L / steps[i] <= 12)
            return steps[i];
    return 1000;
}

static void axes(FILE *f, int L, int lo, int hi)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
            "fill=\"none\" stroke=\"#333\"/>\n", PL, PT, PR - PL, PB - PT);
    int every = hi - lo > 12 ? 2 : 1;
    for (int e = lo; e <= hi; e++) {
        double y = PB - (double)(e - lo) * (PB - PT) / (hi - lo);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"#ddd\"/>\n", PL, y, PR, y);
        if ((e - lo) % every == 0)
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
                    "font-size=\"12\">1e%d</text>\n", PL - 6, y + 4, e);
    }
    int step = tick_step(L);
    for (int l = 1; l <= L; l++) {
        if (l != 1 && l != L && (l % step || L - l < (step + 1) / 2))
            continue;
        double x = px(l, L);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                "stroke=\"#333\"/>\n<text x=\"%.1f\" y=\"%d\" "
                "text-anchor=\"middle\" font-size=\"12\">%d</text>\n", x, PB,
                x, PB + 5, x, PB + 20, l);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
            "font-size=\"14\">layer (hidden state after the block)</text>\n",
            (PL + PR) / 2, PB + 45);
    fprintf(f, "<text x=\"24\" y=\"%d\" text-anchor=\"middle\" "
            "font-size=\"14\" transform=\"rotate(-90 24 %d)\">difference, "
            "B vs A (log scale)</text>\n", (PT + PB) / 2, (PT + PB) / 2);
}

static void series(FILE *f, const bp_stack_result_t *r, int k, int lo, int hi)
{
    int L = r->nlayers;
    bool open = false;
    for (int l = 0; l < L; l++) {
        double v = metric(&r->layers[l], k);
        if (v > 0 && isfinite(v)) {
            fprintf(f, "%s%.1f,%.1f", open ? " " : "", px(l + 1, L),
                    py(v, lo, hi));
            open = true;
            continue;
        }
        /* a zero ends this polyline; the next nonzero value starts one */
        if (open)
            fputs("\"/>\n<polyline fill=\"none\" points=\"", f);
        open = false;
    }
}

int bp_rep_svg(FILE *f, const bp_stack_result_t *r)
{
    const bp_stack_opts_t *o = &r->opts;
    int L = r->nlayers;
    double vmin = INFINITY, vmax = 0.0;
    for (int l = 0; l < L; l++)
        for (int k = 0; k < NMET; k++) {
            double v = metric(&r->layers[l], k);
            if (v > 0 && isfinite(v)) {
                vmin = v < vmin ? v : vmin;
                vmax = v > vmax ? v : vmax;
            }
        }
    int lo = isfinite(vmin) ? (int)floor(log10(vmin)) : -8;
    int hi = vmax > 0 ? (int)ceil(log10(vmax)) : 0;
    if (hi <= lo)
        hi = lo + 1;
    char title[512], sub[512], fin[256];
    snprintf(title, sizeof title,
             "Drift against depth: %s (%lld layers, hidden %lld), %s, %s, "
             "positions %lld:%lld", o->cfg.preset, (long long)o->cfg.layers,
             (long long)o->cfg.hidden, bp_dtype_name(o->dtype), o->device,
             (long long)o->pos_begin, (long long)o->pos_end);
    snprintf(sub, sizeof sub, "B = %s against A = %s", r->side_desc[1],
             r->side_desc[0]);
    snprintf(fin, sizeof fin,
             "final: log-prob max abs diff %.4g, top-1 agreement %.2f%%, "
             "mean KL %.3g", r->logp.max_abs,
             r->top1_total ? 100.0 * (double)r->top1_agree /
                                 (double)r->top1_total
                           : 0.0,
             r->mean_kl);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" "
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
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\" "
            "font-weight=\"bold\">", PL);
    bp_xml_put(f, title, false);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"48\" font-size=\"12\">", PL);
    bp_xml_put(f, sub, false);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"66\" font-size=\"12\">", PL);
    bp_xml_put(f, fin, false);
    fputs("</text>\n", f);
    axes(f, L, lo, hi);
    for (int k = 0; k < NMET; k++) {
        fprintf(f, "<g stroke=\"%s\" stroke-width=\"2\"%s%s%s>\n",
                met_color[k], met_dash[k][0] ? " stroke-dasharray=\"" : "",
                met_dash[k], met_dash[k][0] ? "\"" : "");
        fputs("<polyline fill=\"none\" points=\"", f);
        series(f, r, k, lo, hi);
        fputs("\"/>\n</g>\n", f);
        for (int l = 0; l < L; l++) {
            double v = metric(&r->layers[l], k);
            bool off = !(v > 0) || isinf(v);
            marker(f, k, px(l + 1, L),
                   isinf(v) ? (double)PT : off ? (double)PB : py(v, lo, hi),
                   off);
        }
    }
    /* legend */
    int lx = PR + 20, ly = PT + 10;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" "
            "font-weight=\"bold\">metric (per layer)</text>\n", lx, ly);
    for (int k = 0; k < NMET; k++) {
        int y = ly + 26 + 24 * k;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                "stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n", lx, y, lx + 36,
                y, met_color[k], met_dash[k][0] ? " stroke-dasharray=\"" : "",
                met_dash[k], met_dash[k][0] ? "\"" : "");
        marker(f, k, lx + 18, y, false);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n",
                lx + 44, y + 4, met_name[k]);
    }
    int y = ly + 26 + 24 * NMET + 10;
    fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"white\" "
            "stroke=\"#333\" stroke-width=\"1.5\"/>\n<text x=\"%d\" y=\"%d\" "
            "font-size=\"12\">hollow, bottom edge: 0</text>\n<text x=\"%d\" "
            "y=\"%d\" font-size=\"12\">(bit-identical: no log)</text>\n"
            "<text x=\"%d\" y=\"%d\" font-size=\"12\">hollow, top edge: "
            "infinite</text>\n<text x=\"%d\" y=\"%d\" font-size=\"12\">(rel "
            "diff where A is 0)</text>\n",
            lx + 18, y, lx + 44, y + 4, lx + 44, y + 20, lx + 44, y + 40,
            lx + 44, y + 56);
    y += 40;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">"
            "ulp: units in the last place of %s</text>\n", lx, y + 50,
            bp_dtype_name(o->dtype));
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">"
            "fraction: of the %lld x %lld elements</text>\n", lx, y + 68,
            (long long)(o->pos_end - o->pos_begin), (long long)o->cfg.hidden);
    fputs("</svg>\n", f);
    return ferror(f) ? 2 : 0;
}
