/* Fingerprints of two saved runs side by side (see diff_fp.h). */
#include "diff_fp.h"

#include <stdio.h>
#include <string.h>

#include "jsondiff.h"
#include "rep.h"

/* Parts of a behaviour item that are prose about the evidence: its verdict
 * says what differs. */
static const char *const skip[] = {"evidence", "summary", "title", NULL};

static const json_t *backend_fp(const bp_tset_t *s, const char *key)
{
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(s->manifest, "backends"), k, x) {
        const char *kx = json_string_value(json_object_get(x, "key"));
        if (kx && key && strcmp(kx, key) == 0)
            return json_object_get(x, "fingerprint");
    }
    return NULL;
}

/* One comparison: its notes, and its entry appended to list. */
static bool side_by_side(bp_report_t *rep, json_t *list, const char *what, const char *la,
                         const char *lb, const json_t *fa, const json_t *fb)
{
    json_t *e = json_pack("{s:s, s:s, s:s}", "what", what, "a", la, "b", lb);
    if (!e || json_array_append_new(list, e))
        return false;
    if (!fa || !fb) {
        json_object_set_new(e, "differ", json_null());
        return bp_report_note(rep, "%s vs %s: %s has no fingerprint", la, lb,
                              !fa && !fb ? "neither" : fa ? lb : la);
    }
    size_t same = 0;
    json_t *d = bp_json_diff(fa, fb, skip, &same);
    if (!d)
        return false;
    json_object_set_new(e, "same", json_integer((json_int_t)same));
    json_object_set_new(e, "differ", d);
    size_t n = json_array_size(d);
    if (n == 0)
        return bp_report_note(rep, "%s vs %s: same %s fingerprint (%zu items)", la, lb, what,
                              same);
    char names[1024];
    size_t len = 0, k;
    json_t *x;
    names[0] = '\0';
    json_array_foreach(d, k, x) {
        if (len + 1 >= sizeof names)
            break;
        int w = snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
                         json_string_value(json_object_get(x, "item")));
        len += w > 0 ? (size_t)w : 0;
    }
    if (len >= sizeof names)
        memcpy(names + sizeof names - 5, " ...", 5);
    if (!bp_report_note(rep, "%s vs %s: %s fingerprints differ in %zu item%s (%zu the same): %s",
                        la, lb, what, n, n == 1 ? "" : "s", same, names))
        return false;
    json_array_foreach(d, k, x) {
        if (k == BP_DIFF_FP_SHOWN)
            return bp_report_note(rep, "  and %zu more (the JSON report has every item)",
                                  n - k);
        char va[4096], vb[4096];
        bp_json_diff_value(json_object_get(x, "a"), va, sizeof va);
        bp_json_diff_value(json_object_get(x, "b"), vb, sizeof vb);
        if (!bp_report_note(rep, "  %s: %s | %s", json_string_value(json_object_get(x, "item")),
                            va, vb))
            return false;
    }
    return true;
}

/* rep->extra's "fingerprints" list, made when new. */
static json_t *fp_list(bp_report_t *rep)
{
    if (!rep->extra && !(rep->extra = json_object()))
        return NULL;
    json_t *list = json_object_get(rep->extra, "fingerprints");
    if (!list) {
        list = json_array();
        if (!list || json_object_set_new(rep->extra, "fingerprints", list))
            return NULL;
    }
    return list;
}

bool bp_diff_fp_add(bp_report_t *rep, const char *what, const char *la, const char *lb,
                    const json_t *fa, const json_t *fb)
{
    json_t *list = fp_list(rep);
    return list && side_by_side(rep, list, what, la, lb, fa, fb);
}

bool bp_diff_fingerprints(bp_report_t *rep, const bp_tset_t *a, const bp_tset_t *b,
                          const bp_pairs_t *P, const char *na, const char *nb)
{
    json_t *list = fp_list(rep);
    if (!list)
        return false;
    bool ok = true;
    for (size_t i = 0; ok && i < P->nkeys; i++) {
        char la[4096], lb[4096];
        snprintf(la, sizeof la, "%s:%s", na, P->keys[i].key_a);
        snprintf(lb, sizeof lb, "%s:%s", nb, P->keys[i].key_b);
        ok = side_by_side(rep, list, "backend", la, lb, backend_fp(a, P->keys[i].key_a),
                          backend_fp(b, P->keys[i].key_b));
    }
    const json_t *ha = json_object_get(a->manifest, "env"), *hb = json_object_get(b->manifest, "env");
    if (ok && (ha || hb))
        ok = side_by_side(rep, list, "host", na, nb, ha, hb);
    return ok;
}

static void md_value(FILE *f, const json_t *v)
{
    if (!v || json_is_null(v)) {
        fputs("*absent*", f);
        return;
    }
    char s[4096];
    bp_json_diff_value(v, s, sizeof s);
    bp_md_code(f, s);
}

void bp_diff_fp_markdown(FILE *f, const json_t *fps)
{
    if (!json_array_size(fps))
        return;
    fputs("## Fingerprints side by side\n\n", f);
    size_t i, k;
    json_t *e, *x;
    json_array_foreach(fps, i, e) {
        const char *what = json_string_value(json_object_get(e, "what"));
        fputs("### ", f);
        bp_md_code(f, json_string_value(json_object_get(e, "a")));
        fputs(" vs ", f);
        bp_md_code(f, json_string_value(json_object_get(e, "b")));
        fprintf(f, " (%s)\n\n", what ? what : "?");
        const json_t *d = json_object_get(e, "differ");
        size_t same = (size_t)json_integer_value(json_object_get(e, "same"));
        if (!json_is_array(d)) {
            fputs("A side has no fingerprint.\n\n", f);
            continue;
        }
        if (!json_array_size(d)) {
            fprintf(f, "The same fingerprint (%zu items).\n\n", same);
            continue;
        }
        fprintf(f, "%zu item%s differ%s, %zu the same.\n\n| item | ", json_array_size(d),
                json_array_size(d) == 1 ? "" : "s", json_array_size(d) == 1 ? "s" : "", same);
        bp_md_code(f, json_string_value(json_object_get(e, "a")));
        fputs(" | ", f);
        bp_md_code(f, json_string_value(json_object_get(e, "b")));
        fputs(" |\n|---|---|---|\n", f);
        json_array_foreach(d, k, x) {
            fputs("| ", f);
            bp_md_text(f, json_string_value(json_object_get(x, "item")));
            fputs(" | ", f);
            md_value(f, json_object_get(x, "a"));
            fputs(" | ", f);
            md_value(f, json_object_get(x, "b"));
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}
