/* bitprobe diff A B: compare two saved runs, tensor files, checkpoints or
 * directories of them (as diff -r), tensor by tensor, paired by meaning
 * (tpair.h) and streamed (diffrun.h).  Exit 0 identical (or within
 * --policy), 1 different (a tensor that differs, is on one side only or
 * cannot be compared), 2 trouble, as diff(1) and cmp(1). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bundle.h"
#include "cli.h"
#include "diff_fp.h"
#include "diffrun.h"
#include "dwalk.h"
#include "envinfo.h"
#include "opt.h"
#include "jsonread.h"
#include "rep.h"
#include "cmd_ledger.h"
#include "rep_ledger.h"
#include "tpair.h"
#include "tset.h"

const char cmd_diff_usage[] =
    "bitprobe diff A B [--a KEY] [--b KEY] [--map A=B] [--cast] [--policy P] [--as bf16] [--first K] [--threads N] [--label A=NAME,B=NAME] [--json FILE] [--junit FILE] [--markdown FILE] [--github] [--quiet] [-v]";

#define MAX_MAPS 64

typedef struct {
    bp_pair_opts_t po;
    bp_drun_opts_t ro;
    bp_tset_opts_t so;
    bp_policy_t pol;
    bp_cmp_opts_t co;
    const char *name[2]; /* the sides' names: --label's, else their paths */
} dopts_t;

/* Keys of a side's environment laid out as the host's ("cpu", "libs.mpfr")
 * so that the Markdown table puts equal things on one row, with each
 * backend's fingerprint and key under "backend.<name>" (cpu, oracle,
 * cuda): the two sides' CPU backends share rows whatever their keys
 * (cpu-sleef, cpu-libm), as diff pairs them; a second backend of one
 * name keeps its key. */
static void put_backend(json_t *env, const char *name, const char *key, json_t *fingerprint)
{
    json_t *b = json_object_get(env, "backend");
    if (!json_is_object(b)) {
        b = json_object();
        json_object_set_new(env, "backend", b);
    }
    if (!key || !fingerprint)
        return;
    char nm[128];
    if (!name || !*name)
        snprintf(nm, sizeof nm, "%.*s", (int)strcspn(key, "-"), key);
    else
        snprintf(nm, sizeof nm, "%s", name);
    json_t *fp = json_deep_copy(fingerprint);
    if (!fp)
        return;
    json_object_set_new(fp, "key", json_string(key));
    json_object_set_new(b, json_object_get(b, nm) ? key : nm, fp);
}

/* What a side says about where it was made: a bundle's manifest
 * environment and backends, or a file's metadata (its fingerprint decoded,
 * CRCs left out); {} when it has none. */
static json_t *side_env(const char *path, const bp_tset_t *set)
{
    json_t *env = json_object();
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        json_t *m, *b;
        bp_error_t err = {0};
        size_t i;
        if (bp_bundle_read_manifest(path, &m, &err) == BP_OK) {
            json_t *host = json_object_get(m, "env");
            if (json_is_object(host))
                json_object_update(env, host);
            json_object_del(env, "backends");
            json_array_foreach(json_object_get(m, "backends"), i, b)
                put_backend(env, json_string_value(json_object_get(b, "name")),
                            json_string_value(json_object_get(b, "key")),
                            json_object_get(b, "fingerprint"));
            json_decref(m);
        }
    } else if (set && set->nf && set->f[0].meta) {
        const json_t *meta = set->f[0].meta;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)meta, k, v) {
            if (strncmp(k, BP_ST_CRC_PREFIX, strlen(BP_ST_CRC_PREFIX)) == 0)
                continue;
            const char *s = json_string_value(v);
            bp_json_err_t je;
            json_t *fp = s && s[0] == '{' ? bp_json_load(s, strlen(s), 0, &je) : NULL;
            if (strcmp(k, "fingerprint") == 0 && json_is_object(fp)) {
                json_t *host = json_object_get(fp, "host");
                if (json_is_object(host))
                    json_object_update_missing(env, host);
                put_backend(env, NULL, json_string_value(json_object_get(meta, "backend_key")),
                            json_object_get(fp, "backend"));
                json_decref(fp);
            } else {
                json_object_set_new(env, k, fp ? fp : json_incref(v));
            }
        }
    }
    return json_pack("{s:s, s:o}", "label", path, "env", env);
}

/* What the report says of two sides: "<label>:<key>" for saved runs. */
static void side_label(const char *path, const char *key, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", path, key ? ":" : "", key ? key : "");
}

/* Results not compared, and counting (exit 1): one-sided and incomparable
 * tensors. */
static bool add_uncompared(bp_report_t *rep, const bp_pair_t *p, const char *title,
                           const char *la, const char *lb, const bp_policy_t *pol)
{
    const bp_tent_t *t = p->a ? p->a : p->b;
    bp_result_t r = {
        .probe = (char *)title, .output = t->output ? t->output : "", .dtype = p->dt,
        .dtype_as = t->known ? NULL : (char *)t->dtype, .in_run = t->in_run,
        .run_dtype = t->run_dtype,
        .kind = BP_RES_DIFF, .a = (char *)la, .b = (char *)lb, .policy = *pol,
        .compared = false, .counts = true,
        .status = p->kind == BP_PAIR_NOT_COMPARABLE ? BP_RS_NOT_COMPARABLE
                  : p->kind == BP_PAIR_ONLY_A        ? BP_RS_ONLY_A
                                                     : BP_RS_ONLY_B,
        .note = p->kind == BP_PAIR_NOT_COMPARABLE ? (char *)p->why
                : (char *)(p->kind == BP_PAIR_ONLY_A ? la : lb),
    };
    return bp_report_add(rep, &r) != NULL;
}

/* One pair of sets (rel: their relative path in a directory walk, or
 * NULL), shown as na and nb (the paths, or --label's names): paired,
 * compared, added to the report.  0, or an exit status. */
static int diff_sets(const char *pa, const char *pb, const char *na, const char *nb,
                     const char *rel, const dopts_t *o, bp_report_t *rep, json_t *sides)
{
    bp_tset_t a, b;
    bp_error_t err = {0};
    if (bp_tset_open(pa, &o->so, &a, &err))
        return bp_cli_fail(&err);
    if (bp_tset_open(pb, &o->so, &b, &err)) {
        bp_tset_free(&a);
        return bp_cli_fail(&err);
    }
    bp_pairs_t P;
    bp_cmp_t *cmp = NULL;
    int rc = BP_EXIT_OK;
    /* a plain directory read as the one tensor file it holds */
    for (int s = 0; s < 2; s++) {
        const char *named = s ? pb : pa, *read = s ? b.path : a.path;
        if (strcmp(named, read) != 0 && !bp_report_note(rep, "%s: its one tensor file, %s, read",
                                                        named, read))
            rc = BP_EXIT_TROUBLE;
    }
    if (bp_pair_sets(&a, &b, &o->po, &P, &err)) {
        rc = bp_cli_fail(&err);
        goto done;
    }
    if (!(cmp = calloc(P.n ? P.n : 1, sizeof *cmp)) ||
        bp_diff_run(&a, &b, &P, &o->ro, cmp, &err)) {
        rc = cmp ? bp_cli_fail(&err) : BP_EXIT_TROUBLE;
        goto pairs;
    }
    if (a.kind == BP_TSET_BUNDLE && b.kind == BP_TSET_BUNDLE)
        if (!bp_diff_fingerprints(rep, &a, &b, &P, na, nb))
            rc = BP_EXIT_TROUBLE;
    for (size_t i = 0; i < P.n && !rc; i++) {
        const bp_pair_t *p = &P.p[i];
        const bp_tent_t *t = p->a ? p->a : p->b;
        char la[PATH_MAX + 300], lb[PATH_MAX + 300], title[2 * PATH_MAX];
        side_label(na, p->a ? p->a->key : NULL, la, sizeof la);
        side_label(nb, p->b ? p->b->key : NULL, lb, sizeof lb);
        snprintf(title, sizeof title, "%s%s%s", rel ? rel : "", rel ? ": " : "",
                 t->probe ? t->probe : t->name);
        if (p->kind != BP_PAIR_COMPARE) {
            if (!add_uncompared(rep, p, title, la, lb, &o->pol))
                rc = BP_EXIT_TROUBLE;
            continue;
        }
        const char *out = p->a->output ? p->a->output
                          : strcmp(p->a->name, p->b->name) ? p->b->name : "";
        bp_result_t r = {
            .probe = title, .output = (char *)out, .dtype = p->dt, .in_run = p->a->in_run,
            .run_dtype = p->a->run_dtype, .kind = BP_RES_DIFF,
            .a = la, .b = lb, .policy = o->pol, .compared = true, .counts = true,
            .note = p->why[0] ? (char *)p->why : NULL, .cmp = cmp[i],
        };
        memset(&cmp[i], 0, sizeof cmp[i]);
        if (!bp_report_add(rep, &r)) {
            bp_cmp_free(&r.cmp);
            rc = BP_EXIT_TROUBLE;
        }
    }
    if (sides && !rel) {
        json_array_append_new(sides, side_env(pa, &a));
        json_array_append_new(sides, side_env(pb, &b));
    }
    for (size_t i = 0; i < P.n; i++)
        bp_cmp_free(&cmp[i]);
pairs:
    free(cmp);
    bp_pairs_free(&P);
done:
    bp_tset_free(&a);
    bp_tset_free(&b);
    return rc;
}

static bool is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Two plain directories, as diff -r: sets paired by relative path. */
static int diff_dirs(const char *pa, const char *pb, const dopts_t *o, bp_report_t *rep)
{
    const char *ra = o->name[0], *rb = o->name[1];
    bp_walk_t wa, wb;
    bp_error_t err = {0};
    if (bp_walk(pa, &wa, &err))
        return bp_cli_fail(&err);
    if (bp_walk(pb, &wb, &err)) {
        bp_walk_free(&wa);
        return bp_cli_fail(&err);
    }
    int rc = BP_EXIT_OK;
    size_t i = 0, j = 0;
    while (!rc && (i < wa.n || j < wb.n)) {
        int c = i == wa.n ? 1 : j == wb.n ? -1 : strcmp(wa.rel[i], wb.rel[j]);
        if (c != 0) {
            /* a set on one side only: one result for it, as diff -r's "Only in" */
            const char *rel = c < 0 ? wa.rel[i++] : wb.rel[j++];
            bp_pair_t p = {.kind = c < 0 ? BP_PAIR_ONLY_A : BP_PAIR_ONLY_B, .dt = BP_U8};
            bp_tent_t t = {.name = (char *)rel};
            p.a = c < 0 ? &t : NULL;
            p.b = c < 0 ? NULL : &t;
            char la[PATH_MAX], lb[PATH_MAX];
            snprintf(la, sizeof la, "%s/%s", ra, rel);
            snprintf(lb, sizeof lb, "%s/%s", rb, rel);
            if (!add_uncompared(rep, &p, rel, c < 0 ? la : ra, c < 0 ? rb : lb, &o->pol))
                rc = BP_EXIT_TROUBLE;
            continue;
        }
        char fa[PATH_MAX], fb[PATH_MAX], na[PATH_MAX], nb[PATH_MAX];
        snprintf(fa, sizeof fa, "%s/%s", pa, wa.rel[i]);
        snprintf(fb, sizeof fb, "%s/%s", pb, wb.rel[j]);
        snprintf(na, sizeof na, "%s/%s", ra, wa.rel[i]);
        snprintf(nb, sizeof nb, "%s/%s", rb, wb.rel[j]);
        rc = diff_sets(fa, fb, na, nb, wa.rel[i], o, rep, NULL);
        i++;
        j++;
    }
    for (size_t k = 0; k < wa.nskipped; k++)
        bp_report_note(rep, "skipped %s/%s", pa, wa.skipped[k]);
    for (size_t k = 0; k < wb.nskipped; k++)
        bp_report_note(rep, "skipped %s/%s", pb, wb.skipped[k]);
    bp_walk_free(&wa);
    bp_walk_free(&wb);
    return rc;
}

/* --label A=NAME,B=NAME: names for the sides in the reports. */
static bool parse_labels(const char *arg, char names[2][128])
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    char *items[2];
    int n = bp_cli_split(buf, items, 2);
    if (n == 0 || strlen(arg) >= sizeof buf)
        return false;
    for (int i = 0; i < n; i++) {
        char *s = items[i];
        if ((s[0] != 'A' && s[0] != 'a' && s[0] != 'B' && s[0] != 'b') || s[1] != '=' || !s[2])
            return false;
        snprintf(names[s[0] == 'A' || s[0] == 'a' ? 0 : 1], 128, "%s", s + 2);
    }
    return true;
}

enum { O_MAP, O_POLICY, O_AS, O_LABEL, O_ZSIGN };

typedef struct {
    dopts_t *o;
    bp_map_t *maps;
    char (*names)[128];
} diff_cli_t;

static int diff_option(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    diff_cli_t *cl = ctx;
    dopts_t *o = cl->o;
    bp_error_t err = {0};
    int zrc;
    switch (e->id) {
    case O_MAP:
        if (o->po.nmaps == MAX_MAPS || !bp_map_parse((char *)arg /* argv's, writable */, &cl->maps[o->po.nmaps]))
            return bp_cli_usage_error(cmd, "--map takes NAME_A=NAME_B or PREFIX_A*=PREFIX_B*"
                                      " (at most %d), not '%s'", MAX_MAPS, arg);
        o->po.nmaps++;
        return 0;
    case O_POLICY:
        if (bp_policy_parse(arg, &o->pol, &err))
            return bp_cli_usage_error(cmd, "%s", err.msg);
        return 0;
    case O_AS:
        if (strcmp(arg, "bf16") != 0)
            return bp_cli_usage_error(cmd, "--as takes bf16, not '%s'", arg);
        o->so.as_bf16 = true;
        return 0;
    case O_ZSIGN:
        zrc = bp_cli_zero_sign(cmd, arg, &o->co.zero_sign_ignore);
        return zrc >= 0 ? zrc : 0;
    case O_LABEL:
        if (!parse_labels(arg, cl->names))
            return bp_cli_usage_error(cmd, "--label takes A=NAME,B=NAME (either or "
                                      "both), not '%s'", arg);
        return 0;
    }
    return BP_EXIT_TROUBLE;
}

int cmd_diff(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0 && !bp_cli_wants_help(argc, argv);
         i++)
        if (strcmp(argv[i], "--consensus") == 0)
            return cmd_diff_consensus(argc, argv);
    bp_map_t maps[MAX_MAPS];
    char names[2][128] = {"", ""};
    diff_cli_t cl = {.maps = maps, .names = names};
    dopts_t o;
    memset(&o, 0, sizeof o);
    cl.o = &o;
    bp_rep_targets_t t;
    bp_rep_targets_init(&t);
    bp_policy_exact(&o.pol);
    bp_cmp_opts_init(&o.co);
#define D_(name, id, h) BP_OPT_CALL_(name, 0, true, diff_option, id, h)
    const bp_opt_t opts[] = {
        BP_OPT_TEXT_("  A, B              saved runs (run --save), tensor files (.safetensors[.gz], .npy,\n"
                     "                    .npz), Hugging Face checkpoints (a directory with its\n"
                     "                    *.safetensors.index.json, or the index), directories of them\n"
                     "                    (paired by relative path, as diff -r), or op ledgers (python\n"
                     "                    -m bitprobe_torch record): the ops are aligned and the one that\n"
                     "                    introduced a difference named\n"),
        BP_OPT_STRING_("a", 0, &o.po.pick_a,
           "  --a KEY, --b KEY  the backend of each saved run to compare, by key or name\n"
           "                    (default: by key, then name, then the only one of each side)\n"),
        BP_OPT_STRING_("b", 0, &o.po.pick_b, NULL),
        D_("map", O_MAP,
           "  --map A=B         tensor A of the first side is tensor B of the second; A*=B*\n"
           "                    renames a prefix\n"),
        BP_OPT_FLAG_("cast", 0, &o.po.cast,
           "  --cast            compare a dtype with one it widens to exactly (fp16, bf16 or\n"
           "                    fp8 with fp32, fp8 with fp16 ...) in the wider dtype\n"),
        D_("policy", O_POLICY,
           "  --policy P        exact (default), ulp=N, abs=X, rel=X, fraction=F,\n"
           "                    zero_sign=ignore, comma-separated\n"),
        D_("as", O_AS,
           "  --as bf16         read 16-bit integer .npy arrays as bf16\n"),
        BP_OPT_SIZE_("first", &o.co.first_k, 1000000,
           "  --first K         show the first K mismatches per tensor (default 10)\n"),
        BP_OPT_FLAG_("nan-payload", 0, &o.co.nan_payload,
           "  --nan-payload     NaN payload bits count (default: NaNs equal by class)\n"),
        D_("zero-sign", O_ZSIGN, BP_CLI_ZERO_SIGN_USAGE),
        BP_OPT_INT_("threads", &o.ro.threads, 1, 64,
           "  --threads N       threads comparing (default: one per core, at most 16)\n"),
        D_("label", O_LABEL,
           "  --label A=NAME,B=NAME  names for the sides (e.g. the machines) in the reports;\n"
           "                    the Markdown report shows each side's environment apart\n"
           "                    from this host's\n"),
        BP_OPT_REPORT_(&t,
           "  --json FILE       the full report as JSON ('-': stdout instead of the text)\n",
           "  --junit FILE      JUnit XML, one testcase per tensor\n",
           "  --markdown FILE   a self-contained bug-ticket report in Markdown\n",
           "  -v, --verbose     the detail of every difference (without it: one line per\n"
           "                    tensor that differs); -vv: every result\n"),
        BP_OPT_TEXT_("  --consensus RUN...  saved runs of several hosts or GPUs, paired with the first\n"
                     "                    as diff pairs two: groups of bit-identical results per\n"
                     "                    tensor, the majority, the odd ones out and what they ran on\n"
                     "                    (with --json, --first, --quiet; also 'bitprobe diff\n"
                     "                    consensus RUN...')\n"
                     "  Exit status: 0 identical or within policy (--consensus: every run agrees),\n"
                     "  1 different (a tensor that differs, is on one side only or cannot be compared;\n"
                     "  --consensus: an outlier, or no majority), 2 trouble or nothing compared (no\n"
                     "  tensor in common, one-sided, not comparable).\n"),
        BP_OPT_END_};
#undef D_
    bp_error_t err = {0};
    int pos, prc;
    if ((prc = bp_opt_parse("diff", opts, &cl, argc, argv, &pos)))
        return prc < 0 ? BP_EXIT_OK : prc;
    if (argc - pos != 2)
        return bp_cli_usage_error("diff", "needs two paths (A and B), got %d", argc - pos);
    /* the sides as the reports name them: --label's names, else their
     * paths, relative to the project where they lie in it */
    char rel[2][PATH_MAX];
    for (int s = 0; s < 2; s++)
        o.name[s] = names[s][0] ? names[s]
                                : bp_report_rel_path(argv[pos + s], rel[s], sizeof rel[s]);
    int urc = bp_rep_targets_check("diff", &t);
    if (urc >= 0)
        return urc;
    o.po.maps = maps;
    o.ro.pol = &o.pol;
    o.ro.co = &o.co;
    /* the engine's old path, whole tensors in memory: kept for the test
     * that the streamed path gives the same report */
    const char *mem = getenv("BP_DIFF_IN_MEMORY"), *seg = getenv("BP_DIFF_SEGMENT");
    o.ro.in_memory = mem && strcmp(mem, "1") == 0;
    /* segments this many bytes long (tests: small files cut in many) */
    o.ro.segment = seg ? strtoull(seg, NULL, 10) : 0;
    const char *pa = argv[pos], *pb = argv[pos + 1];
    if (bp_ledger_sniff(pa) || bp_ledger_sniff(pb))
        return cmd_diff_ledger(pa, pb, &t, o.co.first_k, argc, argv);
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    rep.env = bp_envinfo_host();
    json_t *sides = json_array();
    int rc;
    bp_dir_kind_t ka = BP_DIR_BUNDLE, kb = BP_DIR_BUNDLE;
    if (is_dir(pa) && is_dir(pb) && !bp_tset_dir_kind(pa, &ka, &err) &&
        !bp_tset_dir_kind(pb, &kb, &err) && ka == BP_DIR_PLAIN && kb == BP_DIR_PLAIN)
        rc = diff_dirs(pa, pb, &o, &rep);
    else if (err.msg[0])
        rc = bp_cli_fail(&err);
    else
        rc = diff_sets(pa, pb, o.name[0], o.name[1], NULL, &o, &rep, sides);
    if (!rc) {
        t.text.quiet = bp_cli_quiet;
        t.text.color = bp_cli_color();
        t.text.first = o.co.first_k;
        for (int s = 0; s < 2; s++)
            if (names[s][0] && json_array_get(sides, (size_t)s))
                json_object_set_new(json_array_get(sides, (size_t)s), "name",
                                    json_string(names[s]));
        json_object_set_new(rep.env, "sides", sides);
        sides = NULL;
        bp_tally_t tally;
        bp_report_tally(&rep, &tally);
        rc = bp_rep_emit(&t, &rep) ? BP_EXIT_TROUBLE : tally.exit;
    }
    json_decref(sides);
    bp_report_free(&rep);
    return rc;
}
