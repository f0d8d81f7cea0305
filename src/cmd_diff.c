/* bitprobe diff A B: compare two bundles, safetensors files or .npy files
 * tensor by tensor.  Exit 0 identical (or within --policy), 1 different,
 * 2 trouble, as diff(1) and cmp(1). */
#include <getopt.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "envinfo.h"
#include "rep.h"

#define MAX_MAPS 64

typedef struct {
    char *from, *to;
} map_t;

static const char *mapped(const map_t *maps, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(maps[i].from, name) == 0)
            return maps[i].to;
    return name;
}

static int compare_sets(const bp_st_file_t *a, const bp_st_file_t *b, const map_t *maps,
                        int nmaps, const bp_policy_t *pol, const bp_cmp_opts_t *co,
                        const char *la, const char *lb, bp_report_t *rep, size_t *only)
{
    bool single = a->n == 1 && b->n == 1;
    bool *used = calloc(b->n ? b->n : 1, sizeof *used);
    if (!used)
        return BP_EXIT_TROUBLE;
    int rc = BP_EXIT_OK;
    for (size_t i = 0; i < a->n && !rc; i++) {
        const bp_st_tensor_t *ta = &a->t[i], *tb;
        tb = single ? &b->t[0] : bp_st_find(b, mapped(maps, nmaps, ta->name));
        if (!tb) {
            bp_report_note(rep, "only in %s: %s", la, ta->name);
            (*only)++;
            continue;
        }
        used[tb - b->t] = true;
        bp_result_t r = {
            .probe = ta->name, .output = strcmp(ta->name, tb->name) ? tb->name : "",
            .dtype = ta->buf.dtype, .kind = BP_RES_DIFF, .a = (char *)la, .b = (char *)lb,
            .policy = *pol, .compared = true, .counts = true,
        };
        bp_error_t err = {0};
        if (bp_compare(&ta->buf, &tb->buf, pol, co, &r.cmp, &err)) {
            bp_error_prefix(&err, "tensor '%s': ", ta->name);
            rc = bp_cli_fail(&err);
        } else if (!bp_report_add(rep, &r)) {
            bp_cmp_free(&r.cmp);
            rc = BP_EXIT_TROUBLE;
        }
    }
    for (size_t k = 0; k < b->n && !rc; k++)
        if (!used[k]) {
            bp_report_note(rep, "only in %s: %s", lb, b->t[k].name);
            (*only)++;
        }
    free(used);
    return rc;
}

/* Keys of a side's environment laid out as the host's ("cpu", "libs.mpfr")
 * so that the Markdown table puts equal things on one row, with each
 * backend's fingerprint under "backend.<key>". */
static void put_backend(json_t *env, const char *key, json_t *fingerprint)
{
    json_t *b = json_object_get(env, "backend");
    if (!json_is_object(b)) {
        b = json_object();
        json_object_set_new(env, "backend", b);
    }
    if (key && fingerprint)
        json_object_set(b, key, fingerprint);
}

/* What a side says about where it was made: a bundle's manifest
 * environment and backends, or a file's metadata (its fingerprint decoded,
 * CRCs left out); {} when it has none. */
static json_t *side_env(const char *path, const bp_st_file_t *f)
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
                put_backend(env, json_string_value(json_object_get(b, "key")),
                            json_object_get(b, "fingerprint"));
            json_decref(m);
        }
    } else if (f->meta) {
        const char *k;
        json_t *v;
        json_object_foreach(f->meta, k, v) {
            if (strncmp(k, BP_ST_CRC_PREFIX, strlen(BP_ST_CRC_PREFIX)) == 0)
                continue;
            const char *s = json_string_value(v);
            json_t *fp = s && s[0] == '{' ? json_loads(s, 0, NULL) : NULL;
            if (strcmp(k, "fingerprint") == 0 && json_is_object(fp)) {
                json_t *host = json_object_get(fp, "host");
                if (json_is_object(host))
                    json_object_update_missing(env, host);
                put_backend(env, json_string_value(json_object_get(f->meta, "backend_key")),
                            json_object_get(fp, "backend"));
                json_decref(fp);
            } else {
                json_object_set_new(env, k, fp ? fp : json_incref(v));
            }
        }
    }
    return json_pack("{s:s, s:o}", "label", path, "env", env);
}

int cmd_diff(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--consensus") == 0)
            return cmd_diff_consensus(argc, argv);
    enum { O_MAP = 256, O_POLICY, O_AS, O_FIRST, O_NANP };
    static const struct option opts[] = {
        {"map", required_argument, 0, O_MAP},    {"policy", required_argument, 0, O_POLICY},
        {"as", required_argument, 0, O_AS},      {"first", required_argument, 0, O_FIRST},
        {"nan-payload", no_argument, 0, O_NANP}, BP_REP_LONG_OPTIONS,
        {0, 0, 0, 0}};
    map_t maps[MAX_MAPS];
    int nmaps = 0, c;
    bool as_bf16 = false;
    bp_rep_targets_t t;
    bp_rep_targets_init(&t);
    bp_policy_t pol;
    bp_policy_exact(&pol);
    bp_cmp_opts_t co;
    bp_cmp_opts_init(&co);
    bp_error_t err = {0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        switch (c) {
        case O_MAP: {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1] || nmaps == MAX_MAPS)
                return bp_cli_usage_error("diff", "--map takes NAME_IN_A=NAME_IN_B, not '%s'",
                                          optarg);
            *eq = '\0';
            maps[nmaps++] = (map_t){optarg, eq + 1};
            break;
        }
        case O_POLICY:
            if (bp_policy_parse(optarg, &pol, &err))
                return bp_cli_usage_error("diff", "%s", err.msg);
            break;
        case O_AS:
            if (strcmp(optarg, "bf16") != 0)
                return bp_cli_usage_error("diff", "--as takes bf16, not '%s'", optarg);
            as_bf16 = true;
            break;
        case O_FIRST:
            if (!bp_cli_count(optarg, 1000000, &co.first_k))
                return bp_cli_usage_error("diff", "--first needs a count, not '%s'", optarg);
            break;
        case O_NANP: co.nan_payload = true; break;
        default:
            if (!bp_rep_targets_option(&t, c, optarg))
                return bp_cli_usage_error("diff", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return bp_cli_usage_error("diff", "needs two paths (A and B), got %d", argc - optind);
    int urc = bp_rep_targets_check("diff", &t);
    if (urc >= 0)
        return urc;
    const char *pa = argv[optind], *pb = argv[optind + 1];
    bp_st_file_t a, b;
    if (bp_tset_load(pa, as_bf16, &a, &err))
        return bp_cli_fail(&err);
    if (bp_tset_load(pb, as_bf16, &b, &err)) {
        bp_st_free(&a);
        return bp_cli_fail(&err);
    }
    bp_report_t rep;
    bp_report_init(&rep, argc, argv);
    rep.env = bp_envinfo_host();
    size_t only = 0;
    int rc = compare_sets(&a, &b, maps, nmaps, &pol, &co, pa, pb, &rep, &only);
    if (!rc) {
        t.text = (bp_rep_opts_t){.quiet = bp_cli_quiet, .color = bp_cli_color(),
                                 .first = co.first_k};
        json_t *sides = json_array();
        json_array_append_new(sides, side_env(pa, &a));
        json_array_append_new(sides, side_env(pb, &b));
        json_object_set_new(rep.env, "sides", sides);
        rc = bp_rep_emit(&t, &rep);
        if (!rc)
            rc = bp_report_failures(&rep) || only ? BP_EXIT_DRIFT : BP_EXIT_OK;
    }
    bp_report_free(&rep);
    bp_st_free(&a);
    bp_st_free(&b);
    return rc;
}
