/* A ledger diff as text, JUnit and Markdown.  Text: the verdict first, the
 * first introduced op in full, the ops that introduced, inherited or
 * absorbed a difference (at most --first of each), the modules in the
 * order the program ran them, then the two sides. */
#include "rep_ledger.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "esc.h"
#include "xml.h"

static const char *modname(const char *m)
{
    return *m ? m : "(no module)";
}

static void entry_id(const bp_ledger_entry_t *e, char *out, size_t n)
{
    if (e->a >= 0 && e->b >= 0)
        snprintf(out, n, "A#%ld B#%ld", e->a, e->b);
    else if (e->a >= 0)
        snprintf(out, n, "A#%ld", e->a);
    else
        snprintf(out, n, "B#%ld", e->b);
}

static void tensor_desc(const bp_ledger_tensor_t *t, char *out, size_t n)
{
    char sh[160];
    bp_shape_format(t->ndim < BP_MAXDIM ? t->ndim : BP_MAXDIM, t->shape, sh, sizeof sh);
    snprintf(out, n, "%s %s%s", t->dtype, sh, t->ndim > BP_MAXDIM ? "..." : "");
}

/* What makes the entry not identical, in a few words. */
static void why(const bp_ledger_diff_t *d, const bp_ledger_entry_t *e, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    if (e->a < 0 || e->b < 0)
        used += (size_t)snprintf(out + used, n - used, "only in %s", e->a < 0 ? "B" : "A");
    else if (e->fuzzy)
        used += (size_t)snprintf(out + used, n - used, "paired with A's %s",
                                 d->A->ops[e->a].op);
    for (int s = 0; s < 2 && used < n; s++) {
        long i = s ? e->b : e->a;
        if (i < 0 || (s == 1 && e->a >= 0 && !e->by_presence))
            continue; /* a positional pair: say it once */
        const bp_ledger_op_t *op = s ? &d->B->ops[i] : &d->A->ops[i];
        for (uint32_t k = 0; k < op->nin + op->nout && used < n; k++)
            if (bp_ledger_entry_differs(d, e, s, k)) {
                bool in = k < op->nin;
                used += (size_t)snprintf(out + used, n - used, "%s%s[%u] differs", used ? ", " : "",
                                         in ? "in" : "out", in ? k : k - op->nin);
                break; /* the first is enough on a line */
            }
    }
    if (used < n && e->args_differ && e->status == BP_LOP_INTRODUCED)
        used += (size_t)snprintf(out + used, n - used, "%sarguments differ", used ? ", " : "");
    if (used < n && (e->from_a >= 0 || e->from_b >= 0)) {
        if (e->from_b >= 0)
            used += (size_t)snprintf(out + used, n - used, " (from B#%ld)", e->from_b);
        else
            used += (size_t)snprintf(out + used, n - used, " (from A#%ld)", e->from_a);
    }
    if (used < n && e->external)
        snprintf(out + used, n - used, "%sno recorded op made that input", used ? "; " : "");
}

static void entry_line(FILE *f, const bp_ledger_diff_t *d, const bp_ledger_entry_t *e)
{
    char id[64], w[256];
    entry_id(e, id, sizeof id);
    why(d, e, w, sizeof w);
    const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
    bp_esc_printf(f, "  %-13s %-28s %-24s %s\n", id, op->op, modname(op->module), w);
}

static void tensors(FILE *f, const bp_ledger_diff_t *d, const bp_ledger_entry_t *e);
static void tensors(FILE *f, const bp_ledger_diff_t *d, const bp_ledger_entry_t *e)
{
    const bp_ledger_op_t *oa = e->a >= 0 ? &d->A->ops[e->a] : NULL;
    const bp_ledger_op_t *ob = e->b >= 0 ? &d->B->ops[e->b] : NULL;
    for (int s = 0; s < 2; s++) {
        const bp_ledger_op_t *op = s ? ob : oa;
        if (!op || (s == 1 && oa && !e->by_presence))
            continue;
        bool pos = oa && ob && !e->by_presence;
        for (uint32_t k = 0; k < op->nin + op->nout; k++) {
            bool in = k < op->nin;
            const bp_ledger_tensor_t *t = in ? &op->in[k] : &op->out[k - op->nin];
            char name[32], desc[200];
            snprintf(name, sizeof name, "%s%s[%u]", pos ? "" : s ? "B " : "A ", in ? "in" : "out",
                     in ? k : k - op->nin);
            tensor_desc(t, desc, sizeof desc);
            bp_esc_printf(f, "    %-10s %-24s ", name, desc);
            if (!t->has_hash) {
                bp_esc_printf(f, "not hashed (%s)\n", t->why ? t->why : "no hash");
                continue;
            }
            bool differs = bp_ledger_entry_differs(d, e, s, k);
            if (pos) {
                const bp_ledger_tensor_t *u = in ? &ob->in[k] : &ob->out[k - ob->nin];
                if (!differs)
                    fprintf(f, "%016" PRIx64 "  identical\n", t->hash);
                else {
                    char du[200];
                    tensor_desc(u, du, sizeof du);
                    fprintf(f, "A %016" PRIx64 "  B %016" PRIx64 "%s%s  differ\n", t->hash,
                            u->hash, strcmp(t->dtype, u->dtype) ? "  B is " : "",
                            strcmp(t->dtype, u->dtype) ? du : "");
                }
            } else {
                fprintf(f, "%016" PRIx64 "  %s %s\n", t->hash, differs ? "not in" : "also in",
                        s ? "A" : "B");
            }
        }
    }
    const bp_ledger_op_t *op = ob ? ob : oa;
    bp_esc_printf(f, "    call       %.300s%s\n", op->call, strlen(op->call) > 300 ? "..." : "");
}

static void list(FILE *f, const bp_ledger_diff_t *d, bp_lop_status_t st, size_t first)
{
    size_t n = d->count[st], shown = 0;
    if (!n)
        return;
    if (n <= first)
        bp_esc_printf(f, "%s (%zu):\n", bp_lop_status_name(st), n);
    else
        bp_esc_printf(f, "%s, the first %zu of %zu:\n", bp_lop_status_name(st), first, n);
    for (size_t x = 0; x < d->n && shown < first; x++)
        if (d->e[x].status == st) {
            entry_line(f, d, &d->e[x]);
            shown++;
        }
}

/* The modules with a difference, in the order the difference reached
 * them (the entry where each first differs); n receives their count. */
static const bp_ledger_module_t *g_mods;
static int by_first(const void *x, const void *y)
{
    size_t a = g_mods[*(const size_t *)x].first, b = g_mods[*(const size_t *)y].first;
    return a < b ? -1 : a > b;
}

static size_t *mods_by_first(const bp_ledger_diff_t *d, size_t *n)
{
    size_t *v = malloc((d->nmods ? d->nmods : 1) * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (size_t m = 0; m < d->nmods; m++)
        if (d->mods[m].first != SIZE_MAX)
            v[(*n)++] = m;
    g_mods = d->mods;
    qsort(v, *n, sizeof *v, by_first);
    return v;
}

static void modules(FILE *f, const bp_ledger_diff_t *d)
{
    size_t nm;
    size_t *order = mods_by_first(d, &nm);
    if (!order)
        return;
    fprintf(f, "modules, in the order the difference reached them:\n");
    bp_esc_printf(f, "  %-24s %6s %9s %10s %9s %8s %6s  %-16s %s\n", "module", "ops", "identical",
            "introduced", "inherited", "absorbed", "n/c", "outputs differ", "first");
    for (size_t k = 0; k < nm; k++) {
        const bp_ledger_module_t *md = &d->mods[order[k]];
        char outs[48], first[64] = "";
        snprintf(outs, sizeof outs, "%zu/%zu (%.0f%%)", md->outs_differ, md->outs,
                 md->outs ? 100.0 * (double)md->outs_differ / (double)md->outs : 0.0);
        if (md->first != SIZE_MAX)
            entry_id(&d->e[md->first], first, sizeof first);
        bp_esc_printf(f, "  %-24s %6zu %9zu %10zu %9zu %8zu %6zu  %-16s %s\n", modname(md->module),
                md->ops, md->count[BP_LOP_IDENTICAL], md->count[BP_LOP_INTRODUCED],
                md->count[BP_LOP_INHERITED], md->count[BP_LOP_ABSORBED],
                md->count[BP_LOP_NOT_COMPARABLE], outs, first);
    }
    free(order);
}

static void side(FILE *f, const char *tag, const bp_ledger_t *L)
{
    const char *torch = bp_ledger_header_str(L, "torch");
    const char *st = json_string_value(json_object_get(L->end, "status"));
    json_t *devs = json_object_get(json_object_get(L->header, "cuda"), "devices");
    bp_esc_printf(f, "%s = %s: %zu op%s, torch %s%s%s%s%s\n", tag, L->path, L->n, L->n == 1 ? "" : "s",
            torch ? torch : "?",
            json_array_size(devs) ? ", " : "",
            json_array_size(devs) ? json_string_value(json_array_get(devs, 0)) : "",
            st && strcmp(st, "ok") ? ", recording ended with " : "",
            st && strcmp(st, "ok") ? st : "");
}

int bp_rep_ledger_text(FILE *f, const bp_ledger_diff_t *d, const bp_rep_opts_t *o)
{
    size_t differing = d->count[BP_LOP_INTRODUCED] + d->count[BP_LOP_INHERITED] +
                       d->count[BP_LOP_ABSORBED];
    char align[128];
    if (d->exact)
        snprintf(align, sizeof align, "%zu op%s paired one to one", d->paired,
                 d->paired == 1 ? "" : "s");
    else if (d->fuzzy)
        snprintf(align, sizeof align, "%zu ops paired, %zu of them by name only; %zu only in "
                 "A, %zu only in B", d->paired, d->fuzzy, d->only_a, d->only_b);
    else
        snprintf(align, sizeof align, "%zu ops paired, %zu only in A, %zu only in B", d->paired,
                 d->only_a, d->only_b);
    if (!differing && d->count[BP_LOP_IDENTICAL]) {
        if (o->quiet)
            return 0;
        bp_esc_printf(f, "identical: ledgers A and B agree bit for bit (%s%s)\n", align,
                d->count[BP_LOP_NOT_COMPARABLE] ? "; ops only on one side make no tensor "
                                                  "the other lacks that any op used" : "");
        if (d->count[BP_LOP_NOT_COMPARABLE]) {
            list(f, d, BP_LOP_NOT_COMPARABLE, o->first);
        }
        side(f, "A", d->A);
        side(f, "B", d->B);
        return 0;
    }
    if (!differing) {
        bp_esc_printf(f, "error: nothing compared: no op of A and B could be compared (%s)\n",
                align);
        side(f, "A", d->A);
        side(f, "B", d->B);
        return 0;
    }
    bp_esc_printf(f, "DIFFERENT: %zu introduced, %zu inherited, %zu absorbed, %zu identical, %zu not "
            "comparable (%s)\n", d->count[BP_LOP_INTRODUCED], d->count[BP_LOP_INHERITED],
            d->count[BP_LOP_ABSORBED], d->count[BP_LOP_IDENTICAL],
            d->count[BP_LOP_NOT_COMPARABLE], align);
    size_t x = d->first_introduced != SIZE_MAX ? d->first_introduced : d->first_differing;
    const bp_ledger_entry_t *e = &d->e[x];
    const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
    char id[64], w[256];
    entry_id(e, id, sizeof id);
    why(d, e, w, sizeof w);
    bp_esc_printf(f, "first %s: %s %s in module '%s'%s%s%s\n",
            d->first_introduced != SIZE_MAX ? "introduced" : "difference", id, op->op,
            modname(op->module), *w ? " (" : "", w, *w ? ")" : "");
    if (d->first_introduced == SIZE_MAX && e->external)
        fprintf(f, "  no recorded op introduced it: an input of this op differs and was made "
                   "outside the recording (a parameter or an input of the program)\n");
    tensors(f, d, e);
    if (d->first_introduced != SIZE_MAX)
        bp_esc_printf(f, "  its inputs and outputs as a probe, with the oracle's verdict: bitprobe "
                   "explain %s %s --op %c%ld\n", d->A->path, d->B->path, e->b >= 0 ? 'b' : 'a',
                e->b >= 0 ? e->b : e->a);
    if (!o->quiet) {
        list(f, d, BP_LOP_INTRODUCED, o->first);
        list(f, d, BP_LOP_INHERITED, o->first);
        list(f, d, BP_LOP_ABSORBED, o->first);
        modules(f, d);
    }
    side(f, "A", d->A);
    side(f, "B", d->B);
    return 0;
}

/* ---- JUnit: one testcase per module ---------------------------------- */

static size_t mod_differing(const bp_ledger_module_t *md)
{
    return md->count[BP_LOP_INTRODUCED] + md->count[BP_LOP_INHERITED] +
           md->count[BP_LOP_ABSORBED];
}

/* "1 introduced (B#46 aten::_to_copy), 5 inherited" for a module. */
void bp_rep_ledger_module_summary(const bp_ledger_diff_t *d, const bp_ledger_module_t *md,
                                  char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int s = BP_LOP_INTRODUCED; s <= BP_LOP_ABSORBED && used < n; s++)
        if (md->count[s])
            used += (size_t)snprintf(out + used, n - used, "%s%zu %s", used ? ", " : "",
                                     md->count[s], bp_lop_status_name((bp_lop_status_t)s));
    if (md->first != SIZE_MAX && used < n) {
        char id[64];
        entry_id(&d->e[md->first], id, sizeof id);
        used += (size_t)snprintf(out + used, n - used, "; first at %s %s", id,
                                 bp_ledger_entry_op(d, &d->e[md->first])->op);
    }
    if (used < n)
        snprintf(out + used, n - used, "%s%zu of %zu outputs differ", used ? "; " : "",
                 md->outs_differ, md->outs);
}

int bp_rep_ledger_junit(FILE *f, const bp_ledger_diff_t *d)
{
    size_t failures = 0;
    for (size_t m = 0; m < d->nmods; m++)
        failures += mod_differing(&d->mods[m]) > 0;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"bitprobe diff\" "
               "tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n  <testsuite name=\"",
            d->nmods, failures);
    bp_xml_put(f, d->A->path, true);
    fputs(" vs ", f);
    bp_xml_put(f, d->B->path, true);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", d->nmods, failures);
    for (size_t m = 0; m < d->nmods; m++) {
        const bp_ledger_module_t *md = &d->mods[m];
        char sum[512];
        bp_rep_ledger_module_summary(d, md, sum, sizeof sum);
        fputs("    <testcase classname=\"ledger\" name=\"", f);
        bp_xml_put(f, modname(md->module), true);
        fputs("\">", f);
        if (mod_differing(md)) {
            fputs("<failure message=\"", f);
            bp_xml_put(f, sum, true);
            fputs("\">", f);
            for (size_t x = 0, k = 0; x < d->n && k < 20; x++) {
                const bp_ledger_entry_t *e = &d->e[x];
                const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
                if (op->module != md->module && strcmp(op->module, md->module))
                    continue;
                if (e->status == BP_LOP_IDENTICAL || e->status == BP_LOP_NOT_COMPARABLE)
                    continue;
                char id[64], w[256], line[512];
                entry_id(e, id, sizeof id);
                why(d, e, w, sizeof w);
                snprintf(line, sizeof line, "%s %s %s: %s\n", id, op->op,
                         bp_lop_status_name(e->status), w);
                bp_xml_put(f, line, false);
                k++;
            }
            fputs("</failure>", f);
        }
        fputs("</testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? 2 : 0;
}

/* ---- Markdown: a ticket ------------------------------------------------ */

static void md_side(FILE *f, const char *tag, const bp_ledger_t *L)
{
    const char *keys[] = {"torch", "python", "platform", "created", "recorder"};
    fprintf(f, "| %s | ", tag);
    bp_md_code(f, L->path);
    fprintf(f, " | %zu |", L->n);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = bp_ledger_header_str(L, keys[i]);
        fputs(" ", f);
        bp_md_text(f, v ? v : "");
        fputs(" |", f);
    }
    json_t *devs = json_object_get(json_object_get(L->header, "cuda"), "devices");
    fputs(" ", f);
    bp_md_text(f, json_array_size(devs) ? json_string_value(json_array_get(devs, 0)) : "");
    fputs(" |\n", f);
}

static void md_entries(FILE *f, const bp_ledger_diff_t *d, bp_lop_status_t st, size_t first)
{
    size_t n = d->count[st], shown = 0;
    if (!n)
        return;
    fprintf(f, "\n### %s (%zu%s)\n\n| op | aten | module | why |\n|---|---|---|---|\n",
            bp_lop_status_name(st), n, n > first ? ", the first shown" : "");
    for (size_t x = 0; x < d->n && shown < first; x++) {
        const bp_ledger_entry_t *e = &d->e[x];
        if (e->status != st)
            continue;
        char id[64], w[256];
        entry_id(e, id, sizeof id);
        why(d, e, w, sizeof w);
        const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
        fprintf(f, "| %s | ", id);
        bp_md_code(f, op->op);
        fputs(" | ", f);
        bp_md_code(f, modname(op->module));
        fputs(" | ", f);
        bp_md_text(f, w);
        fputs(" |\n", f);
        shown++;
    }
}

int bp_rep_ledger_markdown(FILE *f, const bp_ledger_diff_t *d, size_t first)
{
    size_t differing = d->count[BP_LOP_INTRODUCED] + d->count[BP_LOP_INHERITED] +
                       d->count[BP_LOP_ABSORBED];
    if (!first)
        first = 10;
    if (differing)
        fprintf(f, "# bitprobe: op ledgers differ: %zu introduced, %zu inherited, %zu "
                   "absorbed\n\n", d->count[BP_LOP_INTRODUCED], d->count[BP_LOP_INHERITED],
                d->count[BP_LOP_ABSORBED]);
    else
        fprintf(f, "# bitprobe: op ledgers %s\n\n", d->count[BP_LOP_IDENTICAL]
                                                      ? "bit-identical" : "not compared");
    fputs("| side | ledger | ops | torch | python | platform | recorded | recorder | GPU |\n"
          "|---|---|---:|---|---|---|---|---|---|\n", f);
    md_side(f, "A", d->A);
    md_side(f, "B", d->B);
    fprintf(f, "\nAlignment: %zu ops paired%s, %zu only in A, %zu only in B.\n", d->paired,
            d->exact ? " one to one" : "", d->only_a, d->only_b);
    size_t x = d->first_introduced != SIZE_MAX ? d->first_introduced : d->first_differing;
    if (x != SIZE_MAX) {
        const bp_ledger_entry_t *e = &d->e[x];
        const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
        char id[64], w[256];
        entry_id(e, id, sizeof id);
        why(d, e, w, sizeof w);
        fprintf(f, "\n## First %s: %s ", d->first_introduced != SIZE_MAX ? "introduced" :
                "difference", id);
        bp_md_code(f, op->op);
        fputs(" in module ", f);
        bp_md_code(f, modname(op->module));
        fputs("\n\n", f);
        bp_md_text(f, w);
        fputs("\n\n```\n", f);
        tensors(f, d, e);
        fputs("```\n", f);
        if (d->first_introduced != SIZE_MAX)
            fprintf(f, "\nAs a probe with the oracle's verdict: `bitprobe explain A B --op "
                       "%c%ld`.\n", e->b >= 0 ? 'b' : 'a', e->b >= 0 ? e->b : e->a);
    }
    md_entries(f, d, BP_LOP_INTRODUCED, first);
    md_entries(f, d, BP_LOP_INHERITED, first);
    md_entries(f, d, BP_LOP_ABSORBED, first);
    if (differing) {
        fputs("\n### Modules, in the order the difference reached them\n\n"
              "| module | ops | introduced | inherited | absorbed | outputs differing | first |\n"
              "|---|---:|---:|---:|---:|---:|---|\n", f);
        size_t rows = 0, left = 0, nm;
        size_t *order = mods_by_first(d, &nm);
        for (size_t k = 0; order && k < nm; k++) {
            const bp_ledger_module_t *md = &d->mods[order[k]];
            if (rows == 200) { /* a ticket stays under GitHub's 65536 characters */
                left++;
                continue;
            }
            char id[64];
            entry_id(&d->e[md->first], id, sizeof id);
            fputs("| ", f);
            bp_md_code(f, modname(md->module));
            fprintf(f, " | %zu | %zu | %zu | %zu | %zu/%zu | %s |\n", md->ops,
                    md->count[BP_LOP_INTRODUCED], md->count[BP_LOP_INHERITED],
                    md->count[BP_LOP_ABSORBED], md->outs_differ, md->outs, id);
            rows++;
        }
        free(order);
        if (left)
            fprintf(f, "\n%zu more modules with differences: see the JSON report.\n", left);
    }
    return ferror(f) ? 2 : 0;
}
